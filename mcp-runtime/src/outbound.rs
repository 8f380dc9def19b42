//! Where a request's outgoing messages go: the stdio writer's queue, shared
//! by every request of the stream, or the one HTTP response stream of that
//! request. Each message is one compact JSON-RPC message.
//!
//! A per-request stream is a small queue with one waker, not a channel: an
//! HTTP request that never sends a notification pays one small allocation,
//! and an idle `subscriptions/listen` stream holds a few dozen bytes.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use tokio::sync::mpsc;

/// The sending side: cheap to clone, shared by everything that writes for
/// one request (progress, logs, server-to-client requests).
#[derive(Debug, Clone)]
pub struct Outbound(Kind);

#[derive(Debug, Clone)]
enum Kind {
    Channel(mpsc::UnboundedSender<Vec<u8>>),
    Stream(Arc<Shared>),
}

#[derive(Debug, Default)]
struct Shared {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    queue: VecDeque<Vec<u8>>,
    waker: Option<Waker>,
    closed: bool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Outbound {
    /// Sends one message; gives it back when nothing receives any more
    /// (the stream was closed or the writer has stopped).
    pub fn send(&self, message: Vec<u8>) -> Result<(), Vec<u8>> {
        match &self.0 {
            Kind::Channel(tx) => tx.send(message).map_err(|e| e.0),
            Kind::Stream(shared) => {
                let waker = {
                    let mut inner = shared.lock();
                    if inner.closed {
                        return Err(message);
                    }
                    inner.queue.push_back(message);
                    inner.waker.take()
                };
                if let Some(w) = waker {
                    w.wake();
                }
                Ok(())
            }
        }
    }
}

/// Messages go to this channel (the stdio writer, or any consumer of your own).
impl From<mpsc::UnboundedSender<Vec<u8>>> for Outbound {
    fn from(tx: mpsc::UnboundedSender<Vec<u8>>) -> Self {
        Outbound(Kind::Channel(tx))
    }
}

/// The receiving side of one request's stream. Dropping it closes the
/// stream: later sends fail.
#[derive(Debug)]
pub struct StreamReceiver(Arc<Shared>);

/// A new per-request stream.
pub fn stream() -> (Outbound, StreamReceiver) {
    let shared = Arc::new(Shared::default());
    (Outbound(Kind::Stream(shared.clone())), StreamReceiver(shared))
}

impl StreamReceiver {
    /// The next message, or `Pending` (registering the waker) if none is queued.
    /// The stream never ends by itself: its owner decides when it is done.
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Vec<u8>> {
        let mut inner = self.0.lock();
        match inner.queue.pop_front() {
            Some(m) => Poll::Ready(m),
            None => {
                if !inner.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                    inner.waker = Some(cx.waker().clone());
                }
                Poll::Pending
            }
        }
    }

    /// The next message, when one comes.
    pub async fn recv(&mut self) -> Vec<u8> {
        std::future::poll_fn(|cx| self.poll_recv(cx)).await
    }

    /// Takes every message queued so far.
    pub fn drain(&mut self) -> Vec<Vec<u8>> {
        self.0.lock().queue.drain(..).collect()
    }
}

impl Drop for StreamReceiver {
    fn drop(&mut self) {
        let mut inner = self.0.lock();
        inner.closed = true;
        inner.queue.clear();
        inner.waker = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_stream_delivers_in_order_and_closes_with_its_receiver() {
        let (tx, mut rx) = stream();
        tx.send(b"1".to_vec()).unwrap();
        tx.clone().send(b"2".to_vec()).unwrap();
        assert_eq!(rx.recv().await, b"1");
        assert_eq!(rx.drain(), vec![b"2".to_vec()]);
        let waiter = tokio::spawn(async move {
            let m = rx.recv().await;
            (m, rx)
        });
        tokio::task::yield_now().await;
        tx.send(b"3".to_vec()).unwrap();
        let (m, rx) = waiter.await.unwrap();
        assert_eq!(m, b"3");
        drop(rx);
        assert_eq!(tx.send(b"4".to_vec()), Err(b"4".to_vec()));
    }
}

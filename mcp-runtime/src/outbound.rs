//! Where a request's outgoing messages go: the stdio writer's queue, shared
//! by every request of the stream, or the one HTTP response stream of that
//! request. Each message is one compact JSON-RPC message.
//!
//! A per-request stream is a small queue with one waker, not a channel: an
//! HTTP request that never sends a notification pays one small allocation,
//! and an idle `subscriptions/listen` stream holds a few dozen bytes.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use tokio::sync::{mpsc, Notify};

/// The sending side: cheap to clone, shared by everything that writes for
/// one request (progress, logs, server-to-client requests).
#[derive(Debug, Clone)]
pub struct Outbound(Kind);

#[derive(Debug, Clone)]
enum Kind {
    Channel(mpsc::UnboundedSender<Vec<u8>>),
    /// A channel whose writer counts what it has not written yet.
    Counted(mpsc::UnboundedSender<Vec<u8>>, Arc<Backlog>),
    Stream(Arc<Shared>),
}

/// The bytes sent to a writer's channel and not yet written out: what
/// the stdio reader waits on before it reads more from a client that does
/// not read its answers.
#[derive(Debug)]
pub(crate) struct Backlog {
    bytes: AtomicUsize,
    /// The reader waits for the backlog to shrink.
    waiting: AtomicBool,
    /// The output failed (the client closed it): nothing more is written.
    broken: AtomicBool,
    broke: Notify,
    shrunk: Notify,
    /// Past this many bytes unwritten, notifications are refused
    /// ([`MAX_UNREAD`]).
    cap: usize,
}

/// The most bytes a stdio client may leave unread (64 MiB) before the
/// server's notifications to it are refused: a listen stream then ends with
/// its final result, and progress and logs are dropped, rather than queue
/// for as long as the server runs. Answers still go: the requests running
/// bound them, and the reader reads no new request meanwhile.
pub(crate) const MAX_UNREAD: usize = 64 << 20;

impl Default for Backlog {
    fn default() -> Self {
        Backlog::with_cap(MAX_UNREAD)
    }
}

/// How every notification this crate sends begins (`encode_notification`).
const NOTIFICATION: &[u8] = br#"{"jsonrpc":"2.0","method""#;

impl Backlog {
    fn with_cap(cap: usize) -> Self {
        Backlog {
            bytes: AtomicUsize::new(0),
            waiting: AtomicBool::new(false),
            broken: AtomicBool::new(false),
            broke: Notify::new(),
            shrunk: Notify::new(),
            cap,
        }
    }

    /// `n` bytes were written out.
    pub(crate) fn written(&self, n: usize, limit: usize) {
        let before = self.bytes.fetch_sub(n, Ordering::SeqCst);
        if before.saturating_sub(n) < limit && self.waiting.load(Ordering::SeqCst) {
            self.shrunk.notify_one();
        }
    }

    /// Whether `limit` bytes or more wait to be written.
    #[inline]
    pub(crate) fn over(&self, limit: usize) -> bool {
        self.bytes.load(Ordering::Relaxed) >= limit
    }

    /// Waits until fewer than `limit` bytes wait to be written, or the
    /// output failed.
    pub(crate) async fn below(&self, limit: usize) {
        if self.bytes.load(Ordering::SeqCst) < limit {
            return;
        }
        self.waiting.store(true, Ordering::SeqCst);
        while self.bytes.load(Ordering::SeqCst) >= limit && !self.is_broken() {
            self.shrunk.notified().await;
        }
        self.waiting.store(false, Ordering::SeqCst);
    }

    /// The output failed: nothing queued will be written, and a reader
    /// waiting for the backlog to shrink, or for input, is woken.
    pub(crate) fn break_off(&self) {
        self.broken.store(true, Ordering::SeqCst);
        self.shrunk.notify_one();
        self.broke.notify_waiters();
    }

    /// Resolves once the output failed.
    pub(crate) async fn broken(&self) {
        loop {
            let broke = self.broke.notified();
            tokio::pin!(broke);
            // Listening before looking: a failure in between is not missed.
            broke.as_mut().enable();
            if self.is_broken() {
                return;
            }
            broke.await;
        }
    }

    /// Whether the output failed.
    pub(crate) fn is_broken(&self) -> bool {
        self.broken.load(Ordering::SeqCst)
    }
}

#[derive(Debug, Default)]
struct Shared {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    queue: VecDeque<Vec<u8>>,
    /// The bytes in `queue`.
    queued: usize,
    waker: Option<Waker>,
    closed: bool,
}

/// The most a request's stream holds unsent (1 MiB): its client reads no
/// more (a listen stream whose client stopped reading, its socket full).
/// The message that would pass it is refused, and so is every later one: the
/// stream's owner ends it (a listen stream with its final result, after
/// what is queued), rather than let the queue grow for as long as the server runs.
pub(crate) const MAX_QUEUED: usize = 1024 * 1024;

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Outbound {
    /// Whether nothing receives any more: the stream was closed (or gave
    /// up on a client that does not read), or the writer has stopped. A
    /// message refused while it is open was refused for the backlog alone.
    pub(crate) fn is_closed(&self) -> bool {
        match &self.0 {
            Kind::Channel(tx) => tx.is_closed(),
            Kind::Counted(tx, _) => tx.is_closed(),
            Kind::Stream(shared) => shared.lock().closed,
        }
    }

    /// Sends one message; gives it back when nothing receives any more
    /// (the stream was closed or the writer has stopped).
    pub fn send(&self, message: Vec<u8>) -> Result<(), Vec<u8>> {
        match &self.0 {
            Kind::Channel(tx) => tx.send(message).map_err(|e| e.0),
            Kind::Counted(tx, backlog) => {
                if backlog.over(backlog.cap) && message.starts_with(NOTIFICATION) {
                    return Err(message);
                }
                let n = message.len();
                // Counted before the writer can take it off.
                backlog.bytes.fetch_add(n, Ordering::SeqCst);
                tx.send(message).map_err(|e| {
                    backlog.bytes.fetch_sub(n, Ordering::SeqCst);
                    e.0
                })
            }
            Kind::Stream(shared) => {
                let waker = {
                    let mut inner = shared.lock();
                    if inner.closed || inner.queued.saturating_add(message.len()) > MAX_QUEUED {
                        inner.closed = true;
                        return Err(message);
                    }
                    inner.queued += message.len();
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

impl Outbound {
    /// Messages go to this channel, their bytes counted in `backlog` until
    /// the writer says it wrote them ([`Backlog::written`]).
    pub(crate) fn counted(tx: mpsc::UnboundedSender<Vec<u8>>, backlog: Arc<Backlog>) -> Self {
        Outbound(Kind::Counted(tx, backlog))
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
            Some(m) => {
                inner.queued = inner.queued.saturating_sub(m.len());
                Poll::Ready(m)
            }
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
        let mut inner = self.0.lock();
        inner.queued = 0;
        inner.queue.drain(..).collect()
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

    #[test]
    fn notifications_to_a_writer_that_writes_nothing_are_refused_past_the_cap() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let backlog = Arc::new(Backlog::with_cap(1000));
        let out = Outbound::counted(tx, backlog.clone());
        let note = crate::jsonrpc::encode_notification("notifications/progress", &serde_json::json!({"p": 1}));
        let answer = br#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_vec();
        let mut taken = 0;
        while out.send(note.clone()).is_ok() {
            taken += 1;
            assert!(taken * note.len() < 2000, "still taken past the cap");
        }
        assert!(backlog.over(1000));
        out.send(answer.clone()).expect("answers still go");
        // Written out, the backlog takes notifications again.
        while rx.try_recv().is_ok() {}
        backlog.written(taken * note.len() + answer.len(), 1000);
        out.send(note).expect("taken again");
    }

    #[tokio::test]
    async fn a_stream_nobody_reads_refuses_past_its_bound_and_keeps_what_it_took() {
        let (tx, mut rx) = stream();
        let message = vec![b'x'; 64 * 1024];
        let taken = MAX_QUEUED / message.len();
        for _ in 0..taken {
            tx.send(message.clone()).unwrap();
        }
        assert!(tx.send(b"one more".to_vec()).is_err());
        // Refused from then on, even once there is room: the stream is ending.
        assert_eq!(rx.recv().await.len(), message.len());
        assert!(tx.send(b"later".to_vec()).is_err());
        assert_eq!(rx.drain().len(), taken - 1);
    }

    #[tokio::test]
    async fn the_backlog_lets_the_reader_on_once_it_is_below_its_limit() {
        let backlog = Arc::new(Backlog::default());
        let (tx, mut rx) = mpsc::unbounded_channel();
        let out = Outbound::counted(tx, backlog.clone());
        out.send(vec![0; 10]).unwrap();
        out.send(vec![0; 10]).unwrap();
        // Under the limit: no wait.
        backlog.below(21).await;
        let waiting = tokio::spawn({
            let backlog = backlog.clone();
            async move { backlog.below(11).await }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        let first = rx.recv().await.unwrap();
        backlog.written(first.len(), 11);
        tokio::time::timeout(std::time::Duration::from_secs(5), waiting)
            .await
            .expect("the reader goes on")
            .unwrap();
    }
}

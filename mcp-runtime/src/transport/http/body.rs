//! The response body: one JSON message, nothing, or an SSE stream that owns
//! the request's handler, so that the client closing the stream drops (and
//! cancels) the handler.

use crate::cancel::Cancellation;
use crate::dispatch::Reply;
use crate::outbound::StreamReceiver;
use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use std::collections::VecDeque;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

/// The future of one request's reply.
pub(crate) type ReplyFuture = Pin<Box<dyn Future<Output = Reply> + Send>>;

/// The body of every response the MCP endpoint sends.
pub struct McpBody {
    inner: Inner,
}

enum Inner {
    Full(Option<Bytes>),
    Sse(Box<SseStream>),
}

impl McpBody {
    /// An empty body.
    pub fn empty() -> Self {
        McpBody {
            inner: Inner::Full(None),
        }
    }

    /// A body of these bytes.
    pub fn full(bytes: impl Into<Bytes>) -> Self {
        McpBody {
            inner: Inner::Full(Some(bytes.into())),
        }
    }

    pub(crate) fn sse(
        first: Vec<Vec<u8>>,
        rx: StreamReceiver,
        reply: Option<ReplyFuture>,
        done_reply: Option<Reply>,
        cancel: Cancellation,
        keep_alive: Duration,
    ) -> Self {
        let mut queue: VecDeque<Bytes> = first.iter().map(|m| event(m)).collect();
        if let Some(r) = done_reply {
            queue.push_back(event(&r.body));
        }
        let mut interval = tokio::time::interval_at(tokio::time::Instant::now() + keep_alive, keep_alive);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let finished = reply.is_none();
        McpBody {
            inner: Inner::Sse(Box::new(SseStream {
                queue,
                rx,
                reply,
                finished,
                cancel,
                keep_alive: interval,
            })),
        }
    }
}

/// One SSE event carrying one JSON-RPC message.
fn event(message: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(message.len() + 24);
    out.extend_from_slice(b"event: message\ndata: ");
    out.extend_from_slice(message);
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

struct SseStream {
    queue: VecDeque<Bytes>,
    rx: StreamReceiver,
    reply: Option<ReplyFuture>,
    finished: bool,
    cancel: Cancellation,
    keep_alive: tokio::time::Interval,
}

impl Drop for SseStream {
    fn drop(&mut self) {
        if self.reply.is_some() {
            // The client went away before the handler finished.
            self.cancel.cancel();
        }
    }
}

impl SseStream {
    fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        if let Some(b) = self.queue.pop_front() {
            return Poll::Ready(Some(b));
        }
        if self.finished {
            return Poll::Ready(None);
        }
        if let Poll::Ready(m) = self.rx.poll_recv(cx) {
            return Poll::Ready(Some(event(&m)));
        }
        if let Some(fut) = self.reply.as_mut() {
            if let Poll::Ready(reply) = fut.as_mut().poll(cx) {
                self.reply = None;
                self.finished = true;
                // Notifications sent before the result go out before it.
                for m in self.rx.drain() {
                    self.queue.push_back(event(&m));
                }
                // A stream with no reply of its own (a legacy GET stream) just ends.
                if !reply.body.is_empty() {
                    self.queue.push_back(event(&reply.body));
                }
                return Poll::Ready(self.queue.pop_front());
            }
        }
        if self.keep_alive.poll_tick(cx).is_ready() {
            return Poll::Ready(Some(Bytes::from_static(b": keep-alive\n\n")));
        }
        Poll::Pending
    }
}

impl Body for McpBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match &mut self.inner {
            Inner::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            Inner::Sse(stream) => stream.poll_next(cx).map(|o| o.map(|b| Ok(Frame::data(b)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.inner {
            Inner::Full(bytes) => bytes.is_none(),
            Inner::Sse(s) => s.finished && s.queue.is_empty(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.inner {
            Inner::Full(Some(b)) => SizeHint::with_exact(b.len() as u64),
            Inner::Full(None) => SizeHint::with_exact(0),
            Inner::Sse(_) => SizeHint::default(),
        }
    }
}

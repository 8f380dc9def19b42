//! The response body: one JSON message, nothing, or an SSE stream that owns
//! the request's handler, so that the client closing the stream drops (and
//! cancels) the handler. And the request body, read within its size limit
//! and its deadline.

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

/// Why a request body was not read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BodyError {
    /// Larger than [`HttpConfig::max_body`](super::HttpConfig::max_body).
    #[error("Request body too large")]
    TooLarge,
    /// Not all there within [`HttpConfig::body_read_timeout`](super::HttpConfig::body_read_timeout).
    #[error("Request body not received within {0:?}")]
    TimedOut(Duration),
    /// The connection failed while it was read.
    #[error("Could not read the request body")]
    Failed,
}

impl BodyError {
    /// The answer: 413, 408 (closing the connection, whose rest of the body
    /// will not be read), or 400.
    #[cold]
    #[inline(never)]
    pub(crate) fn response(&self) -> http::Response<McpBody> {
        let code = match self {
            BodyError::TooLarge => http::StatusCode::PAYLOAD_TOO_LARGE,
            BodyError::TimedOut(_) => http::StatusCode::REQUEST_TIMEOUT,
            BodyError::Failed => http::StatusCode::BAD_REQUEST,
        };
        let mut r = super::error_response(code, &crate::error::McpError::invalid_request(self.to_string()));
        if let BodyError::TimedOut(_) = self {
            r.headers_mut()
                .insert(http::header::CONNECTION, http::HeaderValue::from_static("close"));
        }
        r
    }
}

/// Reads a whole request body of at most `max` bytes within `deadline` (zero:
/// none) of the first poll. A body that came with its head is read without
/// arming a timer.
pub(crate) async fn read<B>(body: B, max: usize, deadline: Duration) -> Result<Bytes, BodyError>
where
    B: Body<Data = Bytes>,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    use http_body_util::BodyExt;
    let mut collect = std::pin::pin!(http_body_util::Limited::new(body, max).collect());
    let first = std::future::poll_fn(|cx| Poll::Ready(collect.as_mut().poll(cx))).await;
    let collected = match first {
        Poll::Ready(collected) => collected,
        Poll::Pending if deadline.is_zero() => collect.await,
        Poll::Pending => match tokio::time::timeout(deadline, collect).await {
            Ok(collected) => collected,
            Err(_) => return Err(BodyError::TimedOut(deadline)),
        },
    };
    match collected {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.downcast_ref::<http_body_util::LengthLimitError>().is_some() => Err(BodyError::TooLarge),
        Err(_) => Err(BodyError::Failed),
    }
}

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
        let finished = reply.is_none();
        McpBody {
            inner: Inner::Sse(Box::new(SseStream {
                queue,
                rx,
                reply,
                finished,
                cancel,
                keep_alive: keep_alive_ticks(keep_alive),
                until: None,
            })),
        }
    }

    /// Ends an SSE body, its handler dropped (and cancelled), when `until`
    /// completes: a stream whose access token is refused now. A whole
    /// body is left as it is.
    pub(crate) fn end_when(&mut self, until: Pin<Box<dyn Future<Output = ()> + Send>>) {
        if let Inner::Sse(stream) = &mut self.inner {
            stream.until = Some(until);
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

/// The ticks of a stream's keep-alive comments, every `period`; none for
/// a period of zero, or one so long that it never comes.
fn keep_alive_ticks(period: Duration) -> Option<tokio::time::Interval> {
    let now = tokio::time::Instant::now();
    // Twice: the tick after the first must be reachable too.
    now.checked_add(period.checked_mul(2)?)?;
    let first = now.checked_add(period).filter(|_| !period.is_zero())?;
    let mut ticks = tokio::time::interval_at(first, period);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    Some(ticks)
}

struct SseStream {
    queue: VecDeque<Bytes>,
    rx: StreamReceiver,
    reply: Option<ReplyFuture>,
    finished: bool,
    cancel: Cancellation,
    keep_alive: Option<tokio::time::Interval>,
    /// Ends the stream when it completes (see [`McpBody::end_when`]).
    until: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
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
        if let Some(until) = self.until.as_mut() {
            if until.as_mut().poll(cx).is_ready() {
                // Nothing more goes out: what is queued neither.
                self.until = None;
                self.queue.clear();
                self.finished = true;
                if self.reply.take().is_some() {
                    self.cancel.cancel();
                }
                return Poll::Ready(None);
            }
        }
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
        if self
            .keep_alive
            .as_mut()
            .is_some_and(|ticks| ticks.poll_tick(cx).is_ready())
        {
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

//! What one client may hold of the stand-alone server: how many connections
//! are open (per peer address and in all), and how long a connection may take
//! to send a request head or stay idle between requests.
//!
//! Nothing here runs on the request path but a few counter updates: one
//! sweeper task per server looks at every connection a few times per timeout
//! (a quarter of the shortest, at most once a second) and tells the ones past
//! their deadline to close, so a request arms no timer of its own.
//!
//! A connection is in one of three phases:
//! - *head*: it was just accepted, or bytes of a request head came after its
//!   previous response: the head must be complete within
//!   [`HttpConfig::header_read_timeout`](super::HttpConfig::header_read_timeout);
//! - *idle*: kept alive after a response, nothing received since: it closes
//!   after [`HttpConfig::idle_timeout`](super::HttpConfig::idle_timeout);
//! - *busy*: a request is being served (its body read, its response or SSE
//!   stream written): no deadline here; the body's own deadline is the
//!   service's (`HttpConfig::body_read_timeout`, answered 408).
//!
//! A connection past a cap is accepted and answered `503 Service Unavailable`
//! with `Retry-After` and `Connection: close`, without reading its request;
//! its socket lingers [`REFUSAL_LINGER`] at most so that closing it does not
//! reset the answer away, and at most [`MAX_REFUSING`] refusals linger at once
//! (past that a refused connection is closed at once). Refusals are logged at
//! most once a minute.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::Instant;

/// How long a refused connection's socket is kept, at most, to send the 503
/// and read what the client had already sent (closing a socket with unread
/// bytes resets the connection, and the client may lose the answer).
pub(super) const REFUSAL_LINGER: Duration = Duration::from_secs(1);

/// At most this many refused connections linger at once; past that a refused
/// connection is closed at once, unanswered.
pub(super) const MAX_REFUSING: usize = 64;

/// How often refusals are logged, at most.
const LOG_EVERY: Duration = Duration::from_secs(60);

/// The caps and timeouts of [`HttpConfig`](super::HttpConfig) the listener applies (0: none).
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    pub max_connections: usize,
    pub max_per_peer: usize,
    pub header_read: Duration,
    pub idle: Duration,
}

/// Why a connection was refused.
#[derive(Debug, thiserror::Error)]
pub(super) enum Refused {
    #[error("{open} connections are open, the most allowed (HttpConfig::max_connections, MCP_MAX_CONNECTIONS)")]
    Total { open: usize },
    #[error(
        "{peer} has {open} connections open, the most allowed per address \
         (HttpConfig::max_connections_per_peer, MCP_MAX_CONNECTIONS_PER_PEER)"
    )]
    Peer { peer: IpAddr, open: usize },
}

/// Why the server closed a connection.
#[derive(Debug, thiserror::Error)]
pub(super) enum Closed {
    #[error(transparent)]
    Http(#[from] hyper::Error),
    #[error("no complete request head within {0:?} (HttpConfig::header_read_timeout)")]
    HeaderTimeout(Duration),
    #[error("idle for {0:?} (HttpConfig::idle_timeout)")]
    Idle(Duration),
}

/// What one connection's request path records (a few relaxed counters),
/// read by the sweeper.
#[derive(Default)]
pub(super) struct Activity {
    /// Bytes read from the socket.
    read: AtomicU64,
    /// Request heads received.
    heads: AtomicU64,
    /// Responses ended (their body written or dropped).
    ended: AtomicU64,
    /// `read` when the latest response ended.
    read_at_end: AtomicU64,
    /// Set by the sweeper: 1 the head took too long, 2 idle too long.
    expired: AtomicU64,
    waker: Mutex<Option<Waker>>,
}

impl Activity {
    /// A request head was received.
    pub(super) fn head(&self) {
        self.heads.fetch_add(1, Ordering::Relaxed);
    }

    /// How many request heads were received.
    pub(super) fn heads(&self) -> u64 {
        self.heads.load(Ordering::Relaxed)
    }

    /// A response ended.
    pub(super) fn ended(&self) {
        self.read_at_end
            .store(self.read.load(Ordering::Relaxed), Ordering::Relaxed);
        self.ended.fetch_add(1, Ordering::Release);
    }

    /// Registers the connection task's waker, for the sweeper to wake it
    /// (once: a spawned task's waker wakes that task whatever poll gave it).
    pub(super) fn register(&self, waker: &Waker) {
        *lock(&self.waker) = Some(waker.clone());
    }

    /// Whether the sweeper wants this connection closed (one load per poll).
    #[inline]
    pub(super) fn expired(&self) -> bool {
        self.expired.load(Ordering::Acquire) != 0
    }

    /// Why the sweeper wants this connection closed, once [`Activity::expired`].
    #[cold]
    pub(super) fn why(&self, limits: &Limits) -> Closed {
        match self.expired.load(Ordering::Acquire) {
            1 => Closed::HeaderTimeout(limits.header_read),
            _ => Closed::Idle(limits.idle),
        }
    }

    fn expire(&self, why: u64) {
        self.expired.store(why, Ordering::Release);
        let waker = lock(&self.waker).take();
        if let Some(w) = waker {
            w.wake();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Head,
    Idle,
    Busy,
}

/// The sweeper's view of one connection.
struct Tracked {
    activity: Arc<Activity>,
    phase: Phase,
    /// When the phase began (as first seen: a sweep later at most).
    since: Instant,
    /// `heads` when last swept.
    heads: u64,
}

#[derive(Default)]
struct Table {
    open: usize,
    per_peer: HashMap<IpAddr, usize>,
    conns: HashMap<u64, Tracked>,
    next: u64,
}

/// The open connections of one server: admission against the caps, and the
/// deadlines.
pub(super) struct Connections {
    limits: Limits,
    table: Mutex<Table>,
}

impl Connections {
    pub(super) fn new(limits: Limits) -> Arc<Self> {
        Arc::new(Connections {
            limits,
            table: Mutex::new(Table::default()),
        })
    }

    pub(super) fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Counts a new connection from `peer`, or says why it is refused.
    pub(super) fn admit(self: &Arc<Self>, peer: SocketAddr) -> Result<Slot, Refused> {
        let key = crate::peer::key(peer.ip());
        let mut table = lock(&self.table);
        if self.limits.max_connections > 0 && table.open >= self.limits.max_connections {
            return Err(Refused::Total { open: table.open });
        }
        let from_peer = table.per_peer.get(&key).copied().unwrap_or(0);
        if self.limits.max_per_peer > 0 && from_peer >= self.limits.max_per_peer {
            return Err(Refused::Peer {
                peer: key,
                open: from_peer,
            });
        }
        table.open += 1;
        table.per_peer.insert(key, from_peer + 1);
        let id = table.next;
        table.next += 1;
        let activity = Arc::new(Activity::default());
        table.conns.insert(
            id,
            Tracked {
                activity: activity.clone(),
                phase: Phase::Head,
                since: Instant::now(),
                heads: 0,
            },
        );
        Ok(Slot {
            conns: self.clone(),
            id,
            peer: key,
            activity,
        })
    }

    /// How often the sweeper looks: a quarter of the shortest timeout,
    /// between 10 ms and 1 s; `None` without timeouts.
    fn sweep_period(&self) -> Option<Duration> {
        let shortest = [self.limits.header_read, self.limits.idle]
            .into_iter()
            .filter(|d| !d.is_zero())
            .min()?;
        Some((shortest / 4).clamp(Duration::from_millis(10), Duration::from_secs(1)))
    }

    /// Tells the connections past a deadline to close, until dropped (the
    /// returned future; nothing to run without timeouts).
    pub(super) async fn sweep(self: Arc<Self>) {
        let Some(period) = self.sweep_period() else {
            return std::future::pending().await;
        };
        let mut tick = tokio::time::interval(period);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            self.sweep_once(Instant::now());
        }
    }

    fn sweep_once(&self, now: Instant) {
        let Limits { header_read, idle, .. } = self.limits;
        let mut expired = Vec::new();
        {
            let mut table = lock(&self.table);
            for t in table.conns.values_mut() {
                let a = &t.activity;
                if a.expired.load(Ordering::Relaxed) != 0 {
                    continue;
                }
                let ended = a.ended.load(Ordering::Acquire);
                let heads = a.heads.load(Ordering::Relaxed);
                let phase = if heads > ended {
                    Phase::Busy
                } else if heads == 0 || a.read.load(Ordering::Relaxed) > a.read_at_end.load(Ordering::Relaxed) {
                    Phase::Head
                } else {
                    Phase::Idle
                };
                if phase != t.phase || heads != t.heads {
                    t.phase = phase;
                    t.since = now;
                    t.heads = heads;
                }
                let waited = now.saturating_duration_since(t.since);
                let why = match phase {
                    Phase::Head if !header_read.is_zero() && waited >= header_read => 1,
                    Phase::Idle if !idle.is_zero() && waited >= idle => 2,
                    _ => continue,
                };
                expired.push((a.clone(), why));
            }
        }
        for (activity, why) in expired {
            activity.expire(why);
        }
    }
}

/// One admitted connection: counted until dropped.
pub(super) struct Slot {
    conns: Arc<Connections>,
    id: u64,
    peer: IpAddr,
    pub(super) activity: Arc<Activity>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut table = lock(&self.conns.table);
        table.open = table.open.saturating_sub(1);
        table.conns.remove(&self.id);
        if let Some(n) = table.per_peer.get_mut(&self.peer) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                table.per_peer.remove(&self.peer);
            }
        }
    }
}

/// The socket of an admitted connection, counting the bytes read.
pub(super) struct Metered {
    pub(super) stream: TcpStream,
    pub(super) activity: Arc<Activity>,
}

impl AsyncRead for Metered {
    #[inline]
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.stream).poll_read(cx, buf);
        let n = buf.filled().len().saturating_sub(before);
        if n > 0 {
            self.activity.read.fetch_add(n as u64, Ordering::Relaxed);
        }
        polled
    }
}

impl AsyncWrite for Metered {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// The refused connections lingering now.
#[derive(Clone, Default)]
pub(super) struct Refusing(Arc<AtomicUsize>);

impl Refusing {
    /// Answers a refused connection 503 and closes it, on a task of `open`;
    /// closes it at once when [`MAX_REFUSING`] are lingering already.
    pub(super) fn refuse(&self, open: &mut tokio::task::JoinSet<()>, stream: TcpStream, why: &Refused) {
        if self.0.fetch_add(1, Ordering::Relaxed) >= MAX_REFUSING {
            self.0.fetch_sub(1, Ordering::Relaxed);
            drop(stream);
            return;
        }
        let answer = answer(why);
        let count = self.0.clone();
        open.spawn(async move {
            let _ = tokio::time::timeout(REFUSAL_LINGER, linger(stream, answer)).await;
            count.fetch_sub(1, Ordering::Relaxed);
        });
    }
}

/// The whole 503 answer of a refused connection.
fn answer(why: &Refused) -> Vec<u8> {
    let message = match why {
        Refused::Total { .. } => "Service Unavailable: too many open connections",
        Refused::Peer { .. } => "Service Unavailable: too many open connections from this address",
    };
    let body = serde_json::json!({"jsonrpc": "2.0", "error": {"code": -32603, "message": message}}).to_string();
    format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\n\
         connection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Sends the answer, says no more will come, and reads what the client sent
/// (64 KiB at most) until it closes its side.
async fn linger(mut stream: TcpStream, answer: Vec<u8>) -> std::io::Result<()> {
    let _ = stream.set_nodelay(true);
    stream.write_all(&answer).await?;
    stream.shutdown().await?;
    let mut buf = [0u8; 4096];
    let mut read = 0;
    while read < 64 * 1024 {
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            break;
        }
        read += n;
    }
    Ok(())
}

/// Says refusals on stderr, at most once a minute.
#[derive(Default)]
pub(super) struct RefusalLog(Sparse);

impl RefusalLog {
    pub(super) fn note(&mut self, why: &Refused) {
        let Some((unsaid, since)) = self.0.due() else { return };
        if unsaid > 0 {
            tracing::warn!("refused {unsaid} more connection(s) in the last {since:?}");
        }
        tracing::warn!("refusing connections with 503: {why} (said at most once a minute)");
    }
}

/// A warning said at most once a minute ([`LOG_EVERY`]): the others are
/// counted, and the next one said can tell how many were not.
#[derive(Debug, Default)]
pub(super) struct Sparse {
    last: Option<Instant>,
    unsaid: u64,
}

impl Sparse {
    pub(super) const fn new() -> Self {
        Sparse { last: None, unsaid: 0 }
    }

    /// `Some((unsaid, since))`: say it now; `unsaid` went unsaid in the
    /// `since` since the last one said. `None`: counted, not said.
    pub(super) fn due(&mut self) -> Option<(u64, Duration)> {
        let now = Instant::now();
        let since = self.last.map(|t| now.saturating_duration_since(t));
        if since.is_some_and(|d| d < LOG_EVERY) {
            self.unsaid = self.unsaid.saturating_add(1);
            return None;
        }
        self.last = Some(now);
        Some((std::mem::take(&mut self.unsaid), since.unwrap_or_default()))
    }
}

/// The process's limit of open files (its soft limit), where there is one
/// to read: on every unix (`getrlimit`; macOS starts processes at 256),
/// none elsewhere or when unlimited.
pub(super) fn open_file_limit() -> Option<u64> {
    #[cfg(unix)]
    return super::rlimit::open_files();
    #[cfg(not(unix))]
    return None;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_warning_is_said_once_a_minute() {
        let mut sparse = Sparse::new();
        assert_eq!(sparse.due().map(|(unsaid, _)| unsaid), Some(0));
        assert_eq!(sparse.due(), None);
        assert_eq!(sparse.due(), None);
        assert_eq!(sparse.unsaid, 2);
    }

    fn limits() -> Limits {
        Limits {
            max_connections: 3,
            max_per_peer: 2,
            header_read: Duration::from_secs(10),
            idle: Duration::from_secs(60),
        }
    }

    #[test]
    fn caps_per_peer_and_in_all() {
        let conns = Connections::new(limits());
        let a: SocketAddr = "10.0.0.1:1000".parse().unwrap();
        let b: SocketAddr = "10.0.0.2:1000".parse().unwrap();
        let a1 = conns.admit(a).ok();
        let a2 = conns.admit(a).ok();
        assert!(a1.is_some() && a2.is_some());
        assert!(matches!(conns.admit(a), Err(Refused::Peer { open: 2, .. })));
        let b1 = conns.admit(b).ok();
        assert!(b1.is_some());
        assert!(matches!(conns.admit(b), Err(Refused::Total { open: 3 })));
        drop(a1);
        assert!(conns.admit(a).is_ok(), "a closed connection frees its place");
    }

    #[test]
    fn an_ipv6_peer_counts_by_its_64() {
        let x: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let y: IpAddr = "2001:db8:1:2:bbbb::9".parse().unwrap();
        assert_eq!(crate::peer::key(x), crate::peer::key(y));
        let m: IpAddr = "::ffff:10.0.0.1".parse().unwrap();
        assert_eq!(crate::peer::key(m), "10.0.0.1".parse::<IpAddr>().unwrap());
    }

    #[test]
    fn phases_and_deadlines() {
        let conns = Connections::new(limits());
        let peer: SocketAddr = "10.0.0.1:1000".parse().unwrap();
        let slot = conns.admit(peer).unwrap();
        let t0 = Instant::now();
        let a = &slot.activity;
        conns.sweep_once(t0 + Duration::from_secs(9));
        assert_eq!(a.expired.load(Ordering::Relaxed), 0);
        // A request served: idle from the next sweep on.
        a.read.store(100, Ordering::Relaxed);
        a.head();
        a.ended();
        conns.sweep_once(t0 + Duration::from_secs(11));
        assert_eq!(a.expired.load(Ordering::Relaxed), 0, "idle, not a slow head");
        conns.sweep_once(t0 + Duration::from_secs(70));
        assert_eq!(a.expired.load(Ordering::Relaxed), 0);
        // A byte of the next head: it must be complete within the header timeout.
        a.read.store(101, Ordering::Relaxed);
        conns.sweep_once(t0 + Duration::from_secs(71));
        conns.sweep_once(t0 + Duration::from_secs(80));
        assert_eq!(a.expired.load(Ordering::Relaxed), 0);
        conns.sweep_once(t0 + Duration::from_secs(81));
        assert_eq!(a.expired.load(Ordering::Relaxed), 1);
    }
}

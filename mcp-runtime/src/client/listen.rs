//! `subscriptions/listen` streams a client opens (2026-07-28): the one that
//! carries the server's list changes, kept open for the client's life, and
//! those a gateway opens for a caller (closed with their handle).

use super::{Client, ClientError, Era, Inner, Live};
use serde_json::{json, Value};
use std::future::Future;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;

/// The first wait before a stream that ended is opened again; it doubles
/// to [`MOST_WAIT`] while the stream keeps ending within [`STEADY`].
const FIRST_WAIT: Duration = Duration::from_millis(500);
const MOST_WAIT: Duration = Duration::from_secs(30);
const STEADY: Duration = Duration::from_secs(60);

/// The waits before what ended (or could not be opened) is opened again,
/// for everything kept open to a server: the list-change stream, a
/// 2025-11-25 session's event stream, a gateway's streams following tasks
/// and resources upstream, its first connection to an upstream, and a
/// stdio server's process. Half a second, doubling to 30 s while it keeps
/// ending within a minute.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Backoff {
    next: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff { next: FIRST_WAIT }
    }
}

impl Backoff {
    /// A stream that stayed open `lasted` ended: one that stayed a minute
    /// ended by chance, and the waits start over.
    pub(crate) fn ended_after(&mut self, lasted: Duration) {
        if lasted > STEADY {
            self.reset();
        }
    }

    /// The wait [`next`](Self::next) will give.
    pub(crate) fn upcoming(&self) -> Duration {
        self.next
    }

    /// The next wait; the one after it is twice as long, 30 s at most.
    pub(crate) fn next(&mut self) -> Duration {
        let wait = self.next;
        self.next = (wait * 2).min(MOST_WAIT);
        wait
    }

    /// All went well: the next wait is the first.
    pub(crate) fn reset(&mut self) {
        self.next = FIRST_WAIT;
    }
}

impl Client {
    /// Asks for the server's list-change notifications, which then arrive
    /// among the [`notifications`](Self::notifications). At 2026-07-28 the
    /// client keeps one `subscriptions/listen` stream open for as long as it
    /// lives: opened again on each reconnection, and when the stream ends
    /// (the server restarted, a proxy cut it), after half a second, doubling
    /// to 30 s while it keeps ending within a minute; each time it is opened
    /// again on the same connection, [`connections`](Self::connections)
    /// changes too, since the lists may have changed meanwhile. At 2025-11-25
    /// the session sends them unasked. Calling it again does nothing more.
    pub async fn listen(&self) -> Result<(), ClientError> {
        self.live()?;
        if !self.inner.listening.swap(true, Ordering::AcqRel) {
            tokio::spawn(keep_listening(Arc::downgrade(&self.inner)));
        }
        Ok(())
    }

    /// Opens a `subscriptions/listen` stream for `notifications` (its
    /// filter) with the capabilities `caps`; what it carries arrives among
    /// the [`notifications`](Self::notifications). Closed (cancelled at the
    /// server) when the returned [`Listening`] is dropped;
    /// [`Listening::ended`] says when it ended otherwise. 2026-07-28 only.
    pub(crate) fn listen_to(&self, notifications: Value, caps: Value) -> Result<Listening, ClientError> {
        let live = self.live()?;
        let inner = self.inner.clone();
        let id = inner.next_id.fetch_add(1, Ordering::Relaxed);
        live.inbox.background(id);
        let params = json!({
            "notifications": notifications,
            "_meta": { crate::protocol::META_CLIENT_CAPABILITIES: caps },
        });
        let (open_inner, open_live) = (inner.clone(), live.clone());
        let (ended_tx, ended) = tokio::sync::oneshot::channel();
        tokio::spawn(async move {
            if let Err(e) = open_inner
                .exchange_as(&open_live, id, "subscriptions/listen", params, None, None)
                .await
            {
                tracing::debug!(upstream = %open_inner.name, "subscriptions/listen ended: {e}");
            }
            let _ = ended_tx.send(());
        });
        Ok(Listening { inner, live, id, ended })
    }
}

/// Keeps the list-change stream of [`Client::listen`] open while the
/// client lives. Holds the client only while it opens the stream: waiting
/// on it, a reconnection (which drops the connection) or the client's end
/// (which drops it too) ends the wait.
async fn keep_listening(inner: Weak<Inner>) {
    let filter = json!({"notifications": {
        "toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true}});
    let mut backoff = Backoff::default();
    // The connection the last stream was opened on, and whether the server
    // served it (rather than refusing it with an error).
    let mut last: Option<(Weak<Live>, bool)> = None;
    loop {
        let Some(strong) = inner.upgrade() else {
            return;
        };
        let Some(live) = strong.current() else {
            return;
        };
        if live.era == Era::Legacy {
            // The session sends them unasked; a reconnection may reach a newer server.
            let mut connections = strong.generation.subscribe();
            drop((strong, live));
            if connections.changed().await.is_err() {
                return;
            }
            continue;
        }
        // Opened again on the connection a served one ended on: the lists
        // may have changed meanwhile.
        let again = last
            .as_ref()
            .is_some_and(|(l, served)| *served && l.upgrade().is_some_and(|l| Arc::ptr_eq(&l, &live)));
        if again {
            strong.generation.send_modify(|g| *g = g.wrapping_add(1));
        }
        let id = strong.next_id.fetch_add(1, Ordering::Relaxed);
        live.inbox.background(id);
        let opened = tokio::time::Instant::now();
        let answer = strong
            .send_request(&live, id, "subscriptions/listen", filter.clone(), None)
            .await;
        let name = strong.name.clone();
        let on = Arc::downgrade(&live);
        drop((strong, live));
        // The stream's response comes only when it ends.
        let ended = match answer {
            Ok(answer) => answer.await.unwrap_or_else(|_| Err(closed(&name))),
            Err(e) => Err(e),
        };
        let served = !matches!(ended, Err(ClientError::Rpc(_)));
        let reconnected = on.upgrade().is_none();
        last = Some((on, served));
        if reconnected {
            // A new connection (or none: the client ended): no wait.
            continue;
        }
        backoff.ended_after(opened.elapsed());
        let wait = backoff.next();
        let why = ended
            .err()
            .map_or_else(|| "the server ended it".to_owned(), |e| e.to_string());
        tracing::debug!(upstream = %name, "the list-change stream ended ({why}); opening it again in {} ms", wait.as_millis());
        tokio::time::sleep(wait).await;
    }
}

fn closed(upstream: &str) -> ClientError {
    ClientError::Closed {
        upstream: upstream.to_owned(),
        why: "the connection ended".into(),
    }
}

/// A listen stream [`Client::listen_to`] opened: cancelled at the server
/// when dropped.
pub(crate) struct Listening {
    inner: Arc<Inner>,
    live: Arc<Live>,
    id: i64,
    ended: tokio::sync::oneshot::Receiver<()>,
}

impl Listening {
    /// Resolves when the stream ended (the server ended it, the connection
    /// was cut or lost).
    pub(crate) async fn ended(&mut self) {
        let _ = (&mut self.ended).await;
    }

    /// The id of its `subscriptions/listen` request (the
    /// `subscriptionId` of what it carries).
    pub(crate) fn id(&self) -> i64 {
        self.id
    }

    /// [`ended`](Self::ended), polled.
    pub(crate) fn poll_ended(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        std::pin::Pin::new(&mut self.ended).poll(cx).map(drop)
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        let (inner, live, id) = (self.inner.clone(), self.live.clone(), self.id);
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move { inner.cancel(&live, id, "the listener went away").await });
        } else {
            live.inbox.forget(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_double_to_thirty_seconds_and_start_over_after_a_steady_stream() {
        let mut backoff = Backoff::default();
        let waits: Vec<u64> = (0..9).map(|_| backoff.next().as_millis() as u64).collect();
        assert_eq!(waits, [500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
        backoff.ended_after(Duration::from_secs(59));
        assert_eq!(
            backoff.upcoming(),
            Duration::from_secs(30),
            "a short-lived stream keeps the wait"
        );
        backoff.ended_after(Duration::from_secs(61));
        assert_eq!(backoff.next(), Duration::from_millis(500));
        backoff.reset();
        assert_eq!(backoff.next(), Duration::from_millis(500));
    }
}

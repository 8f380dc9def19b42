//! Callers' resource subscriptions passed upstream: the URIs this server's
//! callers follow (see [`Followed`](crate::session::followed::Followed)) that
//! an upstream serves are followed at the upstream too, and its
//! `notifications/resources/updated` for them are announced here as this
//! server's own (resources are served under their own URIs). At 2026-07-28
//! `subscriptions/listen` streams name them (at most [`PER_STREAM`] each),
//! opened again when the set changes or a stream ends; at 2025-11-25 the
//! session subscribes and unsubscribes one URI at a time. What failed is
//! tried again after a wait (half a second, doubling to 30 s).

use crate::client::{Backoff, Client, Era, Listening};
use crate::server::{EntryNames, Server};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use tokio::time::Instant;

/// The most URIs one upstream stream names: a server of this runtime takes
/// 1,000 by default (`SubscriptionLimits::max_resource_subscriptions`).
const PER_STREAM: usize = 500;

/// What one upstream follows for this server's callers.
#[derive(Default)]
pub(super) struct Upstream {
    /// The URIs followed there now.
    following: BTreeSet<String>,
    /// The 2026-07-28 streams that name them, while open, each with its URIs.
    streams: Vec<(Listening, Vec<String>)>,
    /// When the streams were opened.
    opened: Option<Instant>,
    /// The waits before what failed (a stream that ended, a subscription
    /// refused) is tried again.
    backoff: Backoff,
    /// When to try again what failed, if anything did.
    retry_at: Option<Instant>,
    /// The URIs a 2025-11-25 upstream refused to subscribe to, tried again
    /// at `retry_at`.
    refused: BTreeSet<String>,
    /// The URIs whose updates may have gone unheard (the stream naming one
    /// ended, the connection was lost): once followed again (a 2026-07-28
    /// stream acknowledged, a 2025-11-25 subscription answered), their
    /// callers are told to read them again.
    unheard: BTreeSet<String>,
}

impl Upstream {
    /// The URIs the callers follow now that `served` (the upstream's items)
    /// serves, if the upstream offers subscriptions.
    pub(super) fn wanted(server: &Server, client: &Client, served: &EntryNames) -> BTreeSet<String> {
        let subscribes = client
            .server_capabilities()
            .and_then(|c| c.resources)
            .is_some_and(|r| r.subscribe == Some(true));
        if !subscribes {
            return BTreeSet::new();
        }
        let catalog = server.catalog();
        server
            .inner
            .streams
            .followed
            .uris()
            .into_iter()
            .filter(|uri| {
                catalog
                    .find_resource(uri)
                    .is_some_and(|(entry, _)| served.resources.iter().any(|r| r == entry.uri()))
            })
            .collect()
    }

    /// Follows `wanted` at `client`, and no other URI. The URIs whose
    /// updates may have gone unheard that a 2025-11-25 upstream now follows
    /// again, for their callers to be told (at 2026-07-28, see
    /// [`acknowledged`](Self::acknowledged)).
    pub(super) async fn reconcile(&mut self, client: &Client, wanted: BTreeSet<String>) -> Vec<String> {
        // What no caller follows any more is nobody's to be told of (known
        // only while connected: `wanted` is the upstream's then).
        if client.era().is_some() {
            self.unheard.retain(|uri| wanted.contains(uri));
        }
        self.follow(client, wanted).await
    }

    async fn follow(&mut self, client: &Client, wanted: BTreeSet<String>) -> Vec<String> {
        let name = client.name().to_owned();
        let mut again = Vec::new();
        match client.era() {
            // Not connected: the reconnection starts afresh.
            None => self.retry_at = None,
            Some(Era::Latest) => {
                let waiting = self.retry_at.is_some_and(|at| at > Instant::now());
                // The same URIs: nothing to do while the streams are open,
                // nor before the wait after one ended is over.
                let open = self.retry_at.is_none() && self.streams.is_empty() == wanted.is_empty();
                if wanted == self.following && (open || waiting) {
                    return again;
                }
                self.following = wanted;
                self.retry_at = None;
                // The new streams first: an update between the two is heard
                // twice rather than not at all.
                let uris: Vec<&String> = self.following.iter().collect();
                let mut streams = Vec::new();
                let mut refused = false;
                for chunk in uris.chunks(PER_STREAM) {
                    match client.listen_to(json!({ "resourceSubscriptions": chunk }), json!({})) {
                        Ok(stream) => streams.push((stream, chunk.iter().map(|u| (*u).clone()).collect())),
                        Err(e) => {
                            tracing::debug!(upstream = %name, "cannot follow resources upstream: {e}");
                            // Not followed now: what comes meanwhile goes unheard.
                            self.unheard.extend(chunk.iter().map(|u| (*u).clone()));
                            refused = true;
                        }
                    }
                }
                if refused {
                    self.failed();
                }
                self.opened = Some(Instant::now());
                self.streams = streams;
            }
            Some(Era::Legacy) => {
                // A URI refused before is asked again once the wait is over;
                // a new one at once.
                let due = self.retry_at.is_none_or(|at| at <= Instant::now());
                if due {
                    self.retry_at = None;
                }
                for uri in self.following.difference(&wanted) {
                    if let Err(e) = client.request("resources/unsubscribe", json!({ "uri": uri })).await {
                        tracing::debug!(upstream = %name, %uri, "resources/unsubscribe upstream failed: {e}");
                    }
                }
                let mut following = BTreeSet::new();
                let mut refused = BTreeSet::new();
                for uri in wanted {
                    if self.following.contains(&uri) {
                        following.insert(uri);
                    } else if !due && self.refused.contains(&uri) {
                        refused.insert(uri);
                    } else if let Err(e) = client.request("resources/subscribe", json!({ "uri": uri })).await {
                        tracing::debug!(upstream = %name, %uri, "resources/subscribe upstream failed: {e}");
                        refused.insert(uri);
                    } else {
                        // Followed again after its updates may have gone unheard.
                        if self.unheard.remove(&uri) {
                            again.push(uri.clone());
                        }
                        following.insert(uri);
                    }
                }
                if refused.is_empty() {
                    self.retry_at = None;
                    self.backoff.reset();
                } else {
                    self.failed();
                }
                self.following = following;
                self.refused = refused;
            }
        }
        again
    }

    /// Something failed: tried again after the next wait.
    fn failed(&mut self) {
        if self.retry_at.is_some() {
            return;
        }
        self.retry_at = Some(Instant::now() + self.backoff.next());
    }

    /// A new connection to the upstream: nothing is followed there yet,
    /// and what it said of the URIs followed before went unheard meanwhile.
    pub(super) fn reconnected(&mut self) {
        let mut unheard = std::mem::take(&mut self.unheard);
        unheard.append(&mut self.following);
        *self = Upstream {
            unheard,
            ..Upstream::default()
        };
    }

    /// Notifications of the upstream were dropped here (more came at once
    /// than the client keeps): the URIs followed now, for their callers to
    /// be told to read them again.
    pub(super) fn missed(&self) -> Vec<String> {
        self.following.iter().cloned().collect()
    }

    /// The 2026-07-28 stream `id` was acknowledged: the URIs it names whose
    /// updates may have gone unheard, for their callers to be told.
    pub(super) fn acknowledged(&mut self, id: i64) -> Vec<String> {
        let Some((_, uris)) = self.streams.iter().find(|(stream, _)| stream.id() == id) else {
            return Vec::new();
        };
        let again: Vec<String> = uris.iter().filter(|u| self.unheard.contains(*u)).cloned().collect();
        for uri in &again {
            self.unheard.remove(uri);
        }
        again
    }

    /// Resolves when it is time to follow again: a 2026-07-28 stream ended
    /// and the wait after it passed, or the wait after a failure did. Never
    /// while all is well. Cancel-safe: what it learned is kept.
    pub(super) async fn due(&mut self) {
        if self.retry_at.is_none() && !self.streams.is_empty() {
            let ended = std::future::poll_fn(|cx| {
                match self.streams.iter_mut().position(|(s, _)| s.poll_ended(cx).is_ready()) {
                    Some(at) => std::task::Poll::Ready(at),
                    None => std::task::Poll::Pending,
                }
            })
            .await;
            // Only the stream that ended goes (never polled again); the
            // others carry on until all are opened again.
            let (_, uris) = self.streams.swap_remove(ended);
            self.unheard.extend(uris);
            if let Some(at) = self.opened {
                self.backoff.ended_after(at.elapsed());
            }
            self.failed();
        }
        match self.retry_at {
            Some(at) => tokio::time::sleep_until(at).await,
            None => std::future::pending().await,
        }
    }

    /// Announces an upstream's `notifications/resources/updated` to this
    /// server's callers, if it is of a URI followed there for them.
    pub(super) fn updated(&self, server: &Server, client: &Client, params: &Value) {
        let Some(uri) = params.get("uri").and_then(Value::as_str) else {
            return;
        };
        if self.following.contains(uri) {
            announce(server, client, uri.to_owned());
        }
    }
}

/// Announces that the upstream's resource `uri` changed. An upstream
/// reached over HTTP is the same server for every replica, and each
/// replica with a caller following the URI follows it there itself (a
/// legacy session lives on one replica): announced to this process's
/// callers only, or through a shared bus each would hear it once per
/// replica. A stdio upstream is a process of each replica: announced to
/// all, as this server's own.
pub(super) fn announce(server: &Server, client: &Client, uri: String) {
    match client.is_stdio() {
        true => server.notify_resource_updated(uri),
        false => server.announce_here(crate::server::ServerEvent::ResourceUpdated(uri)),
    }
}

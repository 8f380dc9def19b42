//! Callers' resource subscriptions passed upstream: the URIs this server's
//! callers follow (see [`Followed`](crate::session::followed::Followed)) that
//! an upstream serves are followed at the upstream too, and its
//! `notifications/resources/updated` for them are announced here as this
//! server's own (resources are served under their own URIs). At 2026-07-28
//! one `subscriptions/listen` stream names them all, opened again when the
//! set changes or the stream ends; at 2025-11-25 the session subscribes and
//! unsubscribes one URI at a time.

use crate::client::{Client, Era, Listening};
use crate::server::{EntryNames, Server};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

/// The first wait before a stream that ended is opened again; it doubles
/// to [`MOST_WAIT`] while the streams keep ending.
const FIRST_WAIT: Duration = Duration::from_millis(500);
const MOST_WAIT: Duration = Duration::from_secs(30);
/// A stream that lived this long ended by chance: the next wait is the first.
const STEADY: Duration = Duration::from_secs(60);

/// What one upstream follows for this server's callers.
#[derive(Default)]
pub(super) struct Upstream {
    /// The URIs followed there now.
    following: BTreeSet<String>,
    /// The 2026-07-28 stream that names them, while open.
    stream: Option<Listening>,
    /// When the stream was opened.
    opened: Option<Instant>,
    /// The last wait before the stream was opened again after it ended.
    wait: Option<Duration>,
}

impl Upstream {
    /// Follows at `client` the URIs the callers follow now that the
    /// upstream serves (`served`), and no others.
    pub(super) async fn reconcile(&mut self, server: &Server, client: &Client, served: &EntryNames) {
        let subscribes = client
            .server_capabilities()
            .and_then(|c| c.resources)
            .is_some_and(|r| r.subscribe == Some(true));
        let wanted: BTreeSet<String> = match subscribes {
            false => BTreeSet::new(),
            true => {
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
        };
        let name = client.name().to_owned();
        match client.era() {
            Some(Era::Latest) => {
                if wanted == self.following && self.stream.is_some() {
                    return;
                }
                self.following = wanted;
                // The new stream first: an update between the two is heard twice
                // rather than not at all.
                let stream = match self.following.is_empty() {
                    true => None,
                    false => {
                        let filter = json!({"resourceSubscriptions": self.following.iter().collect::<Vec<_>>()});
                        match client.listen_to(filter, json!({})) {
                            Ok(stream) => Some(stream),
                            Err(e) => {
                                tracing::debug!(upstream = %name, "cannot follow resources upstream: {e}");
                                None
                            }
                        }
                    }
                };
                self.opened = stream.as_ref().map(|_| Instant::now());
                self.stream = stream;
            }
            _ => {
                for uri in self.following.difference(&wanted) {
                    if let Err(e) = client.request("resources/unsubscribe", json!({ "uri": uri })).await {
                        tracing::debug!(upstream = %name, %uri, "resources/unsubscribe upstream failed: {e}");
                    }
                }
                let mut following = BTreeSet::new();
                for uri in wanted {
                    let new = !self.following.contains(&uri);
                    if new {
                        if let Err(e) = client.request("resources/subscribe", json!({ "uri": uri })).await {
                            tracing::debug!(upstream = %name, %uri, "resources/subscribe upstream failed: {e}");
                            continue;
                        }
                    }
                    following.insert(uri);
                }
                self.following = following;
            }
        }
    }

    /// A new connection to the upstream: nothing is followed there yet.
    pub(super) fn reconnected(&mut self) {
        *self = Upstream::default();
    }

    /// Resolves when the 2026-07-28 stream ended, after the wait before it
    /// is opened again (never, while none is open).
    pub(super) async fn ended(&mut self) {
        match &mut self.stream {
            Some(stream) => stream.ended().await,
            None => std::future::pending().await,
        }
        self.stream = None;
        if self.opened.take().is_some_and(|at| at.elapsed() > STEADY) {
            self.wait = None;
        }
        let wait = self.wait.map_or(FIRST_WAIT, |w| (w * 2).min(MOST_WAIT));
        self.wait = Some(wait);
        tokio::time::sleep(wait).await;
    }

    /// Announces an upstream's `notifications/resources/updated` to this
    /// server's callers, if it is of a URI followed there for them.
    pub(super) fn updated(&mut self, server: &Server, params: &Value) {
        let Some(uri) = params.get("uri").and_then(Value::as_str) else {
            return;
        };
        if self.following.contains(uri) {
            server.notify_resource_updated(uri);
        }
    }
}

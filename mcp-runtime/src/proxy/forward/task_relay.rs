//! The tasks a 2026-07-28 upstream runs for callers of this server: their
//! `tasks/*` sent back to it, and followed on one listen stream to it.

use super::Upstream;
use crate::error::McpError;
use crate::tasks::relay::{FollowFuture, RelayFuture, TaskRelay};
use serde_json::{json, Value};
use std::time::Duration;

impl TaskRelay for Upstream {
    fn relay(&self, method: &str, mut params: Value, caps: Value) -> RelayFuture {
        let client = self.client.clone();
        let method = method.to_owned();
        // The caller's capabilities: the upstream asks them of every request.
        params["_meta"] = json!({ crate::protocol::META_CLIENT_CAPABILITIES: caps });
        Box::pin(async move {
            match client.request(&method, params).await.map_err(McpError::from) {
                // A stdio upstream is a process of each replica: this one's
                // does not know a task another replica's started.
                Err(e) if e.code() == crate::error::ErrorCode::INVALID_PARAMS && client.is_stdio() => {
                    let upstream = client.name();
                    Err(McpError::invalid_params(format!(
                        "{} (upstream `{upstream}` runs as a process of each replica of this server: \
                         its task is known only to the replica that started it)",
                        e.message()
                    ))
                    .with_data(json!({"upstream": upstream})))
                }
                other => other,
            }
        })
    }

    /// Follows `tasks` on one listen stream to the upstream, for as long as
    /// the caller's stream is open (this future is dropped with it). A
    /// stream that ends (a proxy cut it, the upstream restarted, the
    /// connection was lost) is opened again, after half a second doubling
    /// to 30 s while it keeps ending within a minute; one whose
    /// notifications were missed here (more than the client keeps came at
    /// once) is opened again after a tenth of a second. Each opening sends
    /// every followed task as it is then: a change is never lost, at worst
    /// said twice.
    fn follow(&self, tasks: Vec<String>, caps: Value, out: Box<dyn Fn(Value) + Send + Sync>) -> FollowFuture {
        const MISSED_WAIT: Duration = Duration::from_millis(100);
        let client = self.client.clone();
        Box::pin(async move {
            let mut backoff = crate::client::Backoff::default();
            loop {
                // Heard before the stream opens, so that nothing it carries is missed.
                let mut notes = client.notifications();
                let opened = tokio::time::Instant::now();
                let mut listening = match client.listen_to(json!({ "taskIds": tasks }), caps.clone()) {
                    Ok(listening) => Some(listening),
                    Err(e) => {
                        tracing::debug!(upstream = %client.name(), "cannot follow its tasks: {e}; trying again in {} ms", backoff.upcoming().as_millis());
                        None
                    }
                };
                let missed = loop {
                    let Some(open) = listening.as_mut() else { break false };
                    tokio::select! {
                        note = notes.recv() => match note {
                            Ok(note) => {
                                let params = &note.message["params"];
                                let about = params["taskId"]
                                    .as_str()
                                    .is_some_and(|id| tasks.iter().any(|t| t == id));
                                if note.message["method"] == "notifications/tasks" && about {
                                    out(params.clone());
                                }
                            }
                            Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => break true,
                            Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                        },
                        () = open.ended() => break false,
                    }
                };
                // Cancelled at the upstream before another opens.
                drop(listening);
                backoff.ended_after(opened.elapsed());
                // Missed notifications: opened again soon, but at most ten
                // times a second (each opening sends every followed task
                // again, which may make other followers miss some too).
                let pause = match missed {
                    true => MISSED_WAIT,
                    false => backoff.next(),
                };
                tracing::debug!(upstream = %client.name(), missed, "the stream following its tasks ended; opening it again in {} ms", pause.as_millis());
                tokio::time::sleep(pause).await;
            }
        })
    }
}

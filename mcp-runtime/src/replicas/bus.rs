//! Change events between replicas: one ordered writer and one subscriber
//! per replica, on the `mcp:events` channel; the subscriber also hears the
//! task changes on `mcp:tasks` and wakes the local waiters.

use super::{Inner, RedisShared, EVENTS, TASKS};
use crate::protocol::DetailedTask;
use crate::server::{EventBus, ServerEvent};
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Weak};
use std::time::Duration;
use tokio::sync::{broadcast, mpsc};

/// An event as it travels on the channel.
#[derive(Serialize, Deserialize)]
#[serde(tag = "e", rename_all = "snake_case")]
enum Wire {
    Tools,
    Prompts,
    Resources,
    Updated { uri: String },
    Task { task: Box<DetailedTask> },
}

fn encode(event: &ServerEvent) -> Option<String> {
    let wire = match event {
        ServerEvent::ToolsListChanged => Wire::Tools,
        ServerEvent::PromptsListChanged => Wire::Prompts,
        ServerEvent::ResourcesListChanged => Wire::Resources,
        ServerEvent::ResourceUpdated(uri) => Wire::Updated { uri: uri.clone() },
        ServerEvent::Task(task) => Wire::Task {
            task: Box::new((**task).clone()),
        },
    };
    serde_json::to_string(&wire).ok()
}

fn decode(text: &str) -> Option<ServerEvent> {
    Some(match serde_json::from_str(text).ok()? {
        Wire::Tools => ServerEvent::ToolsListChanged,
        Wire::Prompts => ServerEvent::PromptsListChanged,
        Wire::Resources => ServerEvent::ResourcesListChanged,
        Wire::Updated { uri } => ServerEvent::ResourceUpdated(uri),
        Wire::Task { task } => ServerEvent::Task(Arc::new(*task)),
    })
}

impl EventBus for RedisShared {
    fn publish(&self, event: &ServerEvent) {
        if let Some(text) = encode(event) {
            if self.inner.outbox.try_send(text).is_err() {
                tracing::warn!(
                    "redis: {} events wait to be published; this one is dropped",
                    super::OUTBOX
                );
            }
        }
    }

    fn start(&self, local: broadcast::Sender<ServerEvent>) {
        if self.inner.local.set(local).is_err() {
            tracing::warn!("redis: the event bus was started twice; keeping the first server's listeners");
        }
    }
}

/// Publishes the queued events, in order. An event Redis cannot take is
/// dropped with a warning (there is no replay).
pub(super) async fn write(mut conn: redis::aio::ConnectionManager, mut outbox: mpsc::Receiver<String>) {
    while let Some(text) = outbox.recv().await {
        let sent: Result<i64, _> = redis::cmd("PUBLISH")
            .arg(EVENTS)
            .arg(&text)
            .query_async(&mut conn)
            .await;
        if let Err(e) = sent {
            tracing::warn!("redis: an event was lost: {e}");
        }
    }
}

/// Receives every replica's events and task changes until the last handle
/// of the connection is dropped, reconnecting with backoff (100 ms doubling
/// to 5 s) whenever the connection is lost.
pub(super) async fn subscribe(client: redis::Client, inner: Weak<Inner>) {
    let mut backoff = Duration::from_millis(100);
    let mut connected_once = false;
    loop {
        if inner.strong_count() == 0 {
            return;
        }
        let pubsub = match client.get_async_pubsub().await {
            Ok(mut pubsub) => match pubsub.subscribe(&[EVENTS, TASKS]).await {
                Ok(()) => Some(pubsub),
                Err(e) => {
                    tracing::warn!("redis: cannot subscribe: {e}");
                    None
                }
            },
            Err(e) => {
                tracing::warn!("redis: cannot connect the subscriber: {e}; retrying in {backoff:?}");
                None
            }
        };
        let Some(pubsub) = pubsub else {
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(Duration::from_secs(5));
            continue;
        };
        if connected_once {
            tracing::info!("redis: subscriber reconnected");
        }
        connected_once = true;
        backoff = Duration::from_millis(100);
        let mut messages = pubsub.into_on_message();
        while let Some(message) = messages.next().await {
            let Some(inner) = inner.upgrade() else { return };
            let Ok(payload) = message.get_payload::<String>() else {
                continue;
            };
            if message.get_channel_name() == TASKS {
                task_changed(&inner, &payload);
            } else if let (Some(event), Some(local)) = (decode(&payload), inner.local.get()) {
                // No listener is not an error.
                let _ = local.send(event);
            }
        }
        tracing::warn!("redis: subscriber connection lost; reconnecting");
        if let Some(inner) = inner.upgrade() {
            // Waiters re-read their records: a change may have been missed.
            for tx in inner.lock_waiters().values() {
                tx.send_modify(|_| {});
            }
        }
    }
}

/// `{id} {version}`: wakes whoever waits on that task here.
fn task_changed(inner: &Inner, payload: &str) {
    let Some((id, version)) = payload.split_once(' ') else {
        return;
    };
    let Ok(version) = version.parse::<u64>() else {
        return;
    };
    let mut waiters = inner.lock_waiters();
    waiters.retain(|_, tx| tx.receiver_count() > 0);
    if let Some(tx) = waiters.get(id) {
        tx.send_modify(|v| *v = (*v).max(version));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::TaskStatus;

    #[test]
    fn every_event_crosses_the_bus_unchanged() {
        let task = DetailedTask {
            task_id: "t1".into(),
            status: TaskStatus::Working,
            status_message: Some("half way".into()),
            created_at: "2026-12-03T12:00:00.000Z".into(),
            last_updated_at: "2026-12-03T12:00:01.000Z".into(),
            ttl_ms: Some(60_000),
            poll_interval_ms: Some(500),
            input_requests: None,
            result: None,
            error: None,
        };
        for event in [
            ServerEvent::ToolsListChanged,
            ServerEvent::PromptsListChanged,
            ServerEvent::ResourcesListChanged,
            ServerEvent::ResourceUpdated("file:///a b".into()),
            ServerEvent::Task(Arc::new(task)),
        ] {
            let text = encode(&event).expect("encodes");
            assert_eq!(decode(&text), Some(event));
        }
        assert_eq!(decode("{\"e\":\"unknown\"}"), None);
        assert_eq!(decode("not json"), None);
    }
}

//! Change events between replicas: one ordered writer and one subscriber
//! per replica, on the `{ns}:events` channel; the subscriber also hears the
//! task changes on `{ns}:tasks` and wakes the local waiters. Every message
//! names its namespace; one of another namespace, or one that does not
//! parse, is ignored with a warning at most once a minute.

use super::names::Names;
use super::{Inner, Local, RedisShared, Waiters};
use crate::server::{EventBus, ServerEvent};
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};
use tokio::sync::{broadcast, mpsc, watch};

/// How often, at most, ignored messages are reported.
const WARN_EVERY: Duration = Duration::from_secs(60);

/// An event as it travels on the channel.
#[derive(Serialize, Deserialize)]
#[serde(tag = "e", rename_all = "snake_case")]
enum Wire {
    Tools,
    Prompts,
    Resources,
    Updated {
        uri: String,
    },
    /// Only which task and how far: a listener reads the record itself.
    Task {
        id: String,
        version: u64,
    },
}

/// A message on `{ns}:events`: `{"ns":…,"event":{"e":…}}`.
#[derive(Serialize, Deserialize)]
struct EventMessage<'a> {
    #[serde(borrow)]
    ns: Cow<'a, str>,
    event: Wire,
}

/// A message on `{ns}:tasks`: the task `id` is now at `version`.
#[derive(Serialize, Deserialize)]
struct TaskMessage<'a> {
    #[serde(borrow)]
    ns: Cow<'a, str>,
    #[serde(borrow)]
    id: Cow<'a, str>,
    version: u64,
}

/// Only the namespace of a message, to tell a foreign one from garbage.
#[derive(Deserialize)]
struct Head<'a> {
    #[serde(borrow)]
    ns: Cow<'a, str>,
}

/// An event to publish, and where.
pub(super) struct Outgoing {
    channel: Arc<str>,
    text: String,
}

/// None for an event that stays in the process ([`ServerEvent::Missed`]).
fn encode(ns: &str, event: &ServerEvent) -> Option<String> {
    let event = match event {
        ServerEvent::ToolsListChanged => Wire::Tools,
        ServerEvent::PromptsListChanged => Wire::Prompts,
        ServerEvent::ResourcesListChanged => Wire::Resources,
        ServerEvent::ResourceUpdated(uri) => Wire::Updated { uri: uri.clone() },
        ServerEvent::Task { id, version } => Wire::Task {
            id: id.clone(),
            version: *version,
        },
        ServerEvent::Missed => return None,
    };
    serde_json::to_string(&EventMessage {
        ns: Cow::Borrowed(ns),
        event,
    })
    .ok()
}

/// What the store's scripts publish on `{ns}:tasks` after a change.
pub(super) fn task_message(ns: &str, id: &str, version: u64) -> String {
    serde_json::to_string(&TaskMessage {
        ns: Cow::Borrowed(ns),
        id: Cow::Borrowed(id),
        version,
    })
    // A struct of two strings and a number always serializes.
    .unwrap_or_default()
}

/// Why a message was not taken.
#[derive(Debug, PartialEq, Eq)]
enum Refused {
    /// It belongs to another deployment.
    Foreign(String),
    /// It is not a message of ours.
    Malformed(String),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::Foreign(ns) => write!(f, "a message of namespace {ns:?}"),
            Refused::Malformed(e) => write!(f, "a malformed message ({e})"),
        }
    }
}

/// Parses `text` as a `T` of namespace `ns`.
fn open<'a, T: Deserialize<'a>>(ns: &str, text: &'a str, namespace: impl Fn(&T) -> &str) -> Result<T, Refused> {
    match serde_json::from_str::<T>(text) {
        Ok(message) if namespace(&message) == ns => Ok(message),
        Ok(message) => Err(Refused::Foreign(namespace(&message).to_owned())),
        Err(e) => match serde_json::from_str::<Head<'_>>(text) {
            Ok(head) if head.ns != ns => Err(Refused::Foreign(head.ns.into_owned())),
            _ => Err(Refused::Malformed(e.to_string())),
        },
    }
}

fn decode_event(ns: &str, text: &str) -> Result<ServerEvent, Refused> {
    let message: EventMessage<'_> = open(ns, text, |m: &EventMessage<'_>| &m.ns)?;
    Ok(match message.event {
        Wire::Tools => ServerEvent::ToolsListChanged,
        Wire::Prompts => ServerEvent::PromptsListChanged,
        Wire::Resources => ServerEvent::ResourcesListChanged,
        Wire::Updated { uri } => ServerEvent::ResourceUpdated(uri),
        Wire::Task { id, version } => ServerEvent::Task { id, version },
    })
}

/// Messages ignored since the last warning.
#[derive(Default)]
struct Ignored {
    warned: Option<Instant>,
    count: u64,
}

/// What the subscriber hands messages to: this process's listeners and task
/// waiters, and the namespace that messages must carry.
pub(super) struct Hub {
    /// Fixed once (see `Inner::fix`).
    pub(super) names: OnceLock<Names>,
    /// This process's listeners (set by `start`).
    pub(super) local: Local,
    waiters: Waiters,
    ignored: Mutex<Ignored>,
}

/// What became of one received message.
#[derive(Debug, PartialEq, Eq)]
enum Received {
    Event,
    Task,
    /// Dropped; `warned` says whether this one was reported.
    Ignored {
        warned: bool,
    },
}

impl Hub {
    pub(super) fn new() -> Self {
        Hub {
            names: OnceLock::new(),
            local: OnceLock::new(),
            waiters: Mutex::new(Default::default()),
            ignored: Mutex::new(Ignored::default()),
        }
    }

    pub(super) fn lock_waiters(
        &self,
    ) -> std::sync::MutexGuard<'_, std::collections::HashMap<String, watch::Sender<u64>>> {
        self.waiters.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Hands a message received on `channel` to the listeners or waiters it
    /// is for; anything else is ignored.
    fn receive(&self, names: &Names, channel: &str, payload: Result<String, String>) -> Received {
        let outcome = payload.map_err(Refused::Malformed).and_then(|text| {
            if channel == names.tasks() {
                let message: TaskMessage<'_> = open(names.namespace(), &text, |m: &TaskMessage<'_>| &m.ns)?;
                self.task_changed(&message.id, message.version);
                Ok(Received::Task)
            } else {
                let event = decode_event(names.namespace(), &text)?;
                if let Some(local) = self.local.get() {
                    // No listener is not an error.
                    let _ = local.send(event);
                }
                Ok(Received::Event)
            }
        });
        outcome.unwrap_or_else(|refused| Received::Ignored {
            warned: self.ignore(channel, &refused),
        })
    }

    /// Counts an ignored message; warns at most once every [`WARN_EVERY`].
    fn ignore(&self, channel: &str, refused: &Refused) -> bool {
        let mut ignored = self.ignored.lock().unwrap_or_else(|p| p.into_inner());
        ignored.count = ignored.count.saturating_add(1);
        let now = Instant::now();
        if ignored.warned.is_some_and(|at| now.duration_since(at) < WARN_EVERY) {
            return false;
        }
        tracing::warn!(
            "redis: ignored {} message(s) on the bus since the last warning; the latest, on {channel}: {refused}",
            ignored.count
        );
        ignored.count = 0;
        ignored.warned = Some(now);
        true
    }

    /// Wakes every waiter here: each re-reads its record.
    fn wake_waiters(&self) {
        for tx in self.lock_waiters().values() {
            tx.send_modify(|_| {});
        }
    }

    /// Once the subscriber is back after losing its connection: other
    /// replicas' changes made meanwhile were not heard, so waiters re-read
    /// their records and listeners are told again of what they follow.
    fn missed(&self) {
        self.wake_waiters();
        if let Some(local) = self.local.get() {
            // No listener is not an error.
            let _ = local.send(ServerEvent::Missed);
        }
    }

    /// Wakes whoever waits on task `id` here.
    fn task_changed(&self, id: &str, version: u64) {
        let mut waiters = self.lock_waiters();
        waiters.retain(|_, tx| tx.receiver_count() > 0);
        if let Some(tx) = waiters.get(id) {
            tx.send_modify(|v| *v = (*v).max(version));
        }
    }
}

impl EventBus for RedisShared {
    fn publish(&self, event: &ServerEvent) {
        let names = self.inner.names();
        if let Some(text) = encode(names.namespace(), event) {
            let outgoing = Outgoing {
                channel: names.events().clone(),
                text,
            };
            if self.inner.outbox.try_send(outgoing).is_err() {
                tracing::warn!(
                    "redis: {} events wait to be published; this one is dropped",
                    super::OUTBOX
                );
            }
        }
    }

    fn named(&self, server: &str) {
        self.inner.fix(Names::of_server(server), "the server's name");
    }

    fn start(&self, local: broadcast::Sender<ServerEvent>) {
        if self.inner.hub.local.set(local).is_err() {
            tracing::warn!("redis: the event bus was started twice; keeping the first server's listeners");
        }
    }
}

/// Publishes the queued events, in order. An event Redis cannot take is
/// dropped with a warning (there is no replay).
pub(super) async fn write(mut conn: redis::aio::ConnectionManager, mut outbox: mpsc::Receiver<Outgoing>) {
    while let Some(Outgoing { channel, text }) = outbox.recv().await {
        let publish = redis::cmd("PUBLISH").arg(&*channel).arg(&text).clone();
        let mut sent: Result<i64, _> = publish.query_async(&mut conn).await;
        if sent.is_err() {
            // A connection Redis dropped (it restarted) fails the first
            // command after it, however long ago; the manager reconnects
            // then, and a second try delivers the event.
            sent = publish.query_async(&mut conn).await;
        }
        if let Err(e) = sent {
            tracing::warn!("redis: an event was lost: {e}");
        }
    }
}

/// Once the namespace is fixed, receives every replica's events and task
/// changes until the last handle of the connection is dropped, reconnecting
/// with backoff (100 ms doubling to 5 s) whenever the connection is lost.
pub(super) async fn subscribe(client: redis::Client, inner: Weak<Inner>, mut named: watch::Receiver<bool>) {
    // An error: the handles were dropped before any server was built.
    if named.wait_for(|named| *named).await.is_err() {
        return;
    }
    let Some((hub, names)) = inner
        .upgrade()
        .and_then(|inner| Some((inner.hub.clone(), inner.hub.names.get()?.clone())))
    else {
        return;
    };
    let mut backoff = Duration::from_millis(100);
    let mut connected_once = false;
    loop {
        if inner.strong_count() == 0 {
            return;
        }
        let pubsub = match client.get_async_pubsub().await {
            Ok(mut pubsub) => match pubsub.subscribe(&[&**names.events(), names.tasks()]).await {
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
            hub.missed();
        }
        connected_once = true;
        backoff = Duration::from_millis(100);
        let mut messages = pubsub.into_on_message();
        while let Some(message) = messages.next().await {
            if inner.strong_count() == 0 {
                return;
            }
            let payload = message.get_payload::<String>().map_err(|e| e.to_string());
            hub.receive(&names, message.get_channel_name(), payload);
        }
        tracing::warn!("redis: subscriber connection lost; reconnecting");
        // Waiters re-read their records: a change may have been missed.
        hub.wake_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn every_event_crosses_the_bus_unchanged() {
        for event in [
            ServerEvent::ToolsListChanged,
            ServerEvent::PromptsListChanged,
            ServerEvent::ResourcesListChanged,
            ServerEvent::ResourceUpdated("file:///a b".into()),
            ServerEvent::Task {
                id: "t1".into(),
                version: 7,
            },
        ] {
            let text = encode("billing", &event).expect("encodes");
            assert_eq!(decode_event("billing", &text), Ok(event));
        }
    }

    #[test]
    fn missed_events_stay_in_the_process_and_reach_listeners_and_waiters() {
        assert_eq!(encode("desk", &ServerEvent::Missed), None, "never published");
        let hub = Hub::new();
        let (local, mut heard) = broadcast::channel(16);
        assert!(hub.local.set(local).is_ok());
        let (waiter, mut seen) = watch::channel(3);
        hub.lock_waiters().insert("t1".into(), waiter);
        seen.mark_unchanged();
        hub.missed();
        assert_eq!(heard.try_recv().ok(), Some(ServerEvent::Missed));
        assert!(seen.has_changed().unwrap_or(false), "the waiter was not woken");
        assert_eq!(*seen.borrow(), 3, "woken without a newer version");
    }

    #[test]
    fn a_message_of_another_namespace_or_none_is_refused() {
        let text = encode("billing", &ServerEvent::ToolsListChanged).expect("encodes");
        assert_eq!(decode_event("desk", &text), Err(Refused::Foreign("billing".into())));
        // A foreign event this version does not know is foreign, not garbage.
        let newer = r#"{"ns":"billing","event":{"e":"unknown"}}"#;
        assert_eq!(decode_event("desk", newer), Err(Refused::Foreign("billing".into())));
        // Without a namespace, or of ours but unreadable: garbage.
        for garbage in ["not json", r#"{"e":"tools"}"#, r#"{"ns":"desk"}"#, r#"{"ns":7}"#, ""] {
            assert!(
                matches!(decode_event("desk", garbage), Err(Refused::Malformed(_))),
                "{garbage:?}"
            );
        }
        assert!(matches!(decode_event("billing", newer), Err(Refused::Malformed(_))));
    }

    #[test]
    fn foreign_and_malformed_messages_reach_no_listener_and_warn_once_a_minute() {
        let names = Names::of_server("desk");
        let hub = Hub::new();
        let (local, mut heard) = broadcast::channel(16);
        assert!(hub.local.set(local).is_ok());
        let (waiter, seen) = watch::channel(0);
        hub.lock_waiters().insert("t1".into(), waiter);

        let foreign_event = encode("billing", &ServerEvent::ToolsListChanged).expect("encodes");
        let foreign_task = task_message("billing", "t1", 7);
        let events = &**names.events();
        assert_eq!(
            hub.receive(&names, events, Ok(foreign_event)),
            Received::Ignored { warned: true }
        );
        assert_eq!(
            hub.receive(&names, names.tasks(), Ok(foreign_task)),
            Received::Ignored { warned: false }
        );
        assert_eq!(
            hub.receive(&names, events, Ok("{\"e\":\"tools\"}".into())),
            Received::Ignored { warned: false }
        );
        assert_eq!(
            hub.receive(&names, names.tasks(), Ok("t1 8".into())),
            Received::Ignored { warned: false }
        );
        assert_eq!(
            hub.receive(&names, events, Err("not UTF-8".into())),
            Received::Ignored { warned: false }
        );
        assert!(heard.try_recv().is_err(), "a refused event reached a listener");
        assert_eq!(*seen.borrow(), 0, "a refused task change woke a waiter");
        {
            let ignored = hub.ignored.lock().expect("not poisoned");
            assert_eq!(ignored.count, 4, "counted since the warning");
        }

        // The deployment's own messages still pass.
        let own = encode("desk", &ServerEvent::ResourceUpdated("desk://a".into())).expect("encodes");
        assert_eq!(hub.receive(&names, events, Ok(own)), Received::Event);
        assert_eq!(
            heard.try_recv().ok(),
            Some(ServerEvent::ResourceUpdated("desk://a".into()))
        );
        assert_eq!(
            hub.receive(&names, names.tasks(), Ok(task_message("desk", "t1", 9))),
            Received::Task
        );
        assert_eq!(*seen.borrow(), 9);

        // A minute later, the next ignored message is reported again.
        hub.ignored.lock().expect("not poisoned").warned = Instant::now().checked_sub(WARN_EVERY);
        assert_eq!(
            hub.receive(&names, events, Ok("garbage".into())),
            Received::Ignored { warned: true }
        );
    }
}

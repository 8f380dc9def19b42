//! The change events a server announces on its broadcast bus: the
//! builder's run-time changes (tools, prompts, resources added or removed)
//! announce list changes, and [`Server::notify_resource_updated`] announces
//! that a resource's contents changed. `subscriptions/listen` streams and
//! legacy sessions forward them; [`Server::shutdown`] ends them.

use super::Server;
use crate::jsonrpc;
use crate::protocol::RequestId;
use serde::Serialize;

/// A change the server announces to its listeners.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerEvent {
    /// The tool list changed.
    ToolsListChanged,
    /// The prompt list changed.
    PromptsListChanged,
    /// The resource (or template) list changed.
    ResourcesListChanged,
    /// The contents of the resource with this URI changed.
    ResourceUpdated(String),
    /// A task changed (tasks extension). Only its id and the version its
    /// record reached travel: a stream that follows the task reads the
    /// record again, with the same owner check as `tasks/get`, and sends
    /// what it read, so an event cannot carry a task's contents to anyone.
    Task {
        /// The task's id.
        id: String,
        /// The version of its record after the change.
        version: u64,
    },
    /// Events may have been lost on their way to this process: an
    /// [`EventBus`] sends it to its local sender after its connection came
    /// back. Each listener is then told again of everything it follows (a
    /// list changed, a followed resource updated, a followed task as it is
    /// now), as when it falls behind. It is never sent to other replicas.
    Missed,
}

/// Carries change events between the replicas of one server: every event
/// announced on any replica reaches the listeners of all of them, in the
/// order the bus delivers it. Without one, events stay in the process.
/// The `redis` feature provides one (`RedisShared`).
pub trait EventBus: Send + Sync + 'static {
    /// Sends `event` to every replica, this one included (its listeners get
    /// it back through [`start`](EventBus::start)'s sender, not directly).
    fn publish(&self, event: &ServerEvent);

    /// Called once when the server is built, before [`start`](EventBus::start),
    /// with its name (`serverInfo.name`, what `server/discover` reports): a
    /// bus that several servers share may keep their events apart by it.
    /// Does nothing by default.
    fn named(&self, server: &str) {
        let _ = server;
    }

    /// Called once when the server is built: from now on, deliver every
    /// replica's events to `local`, this process's listeners.
    fn start(&self, local: tokio::sync::broadcast::Sender<ServerEvent>);
}

#[derive(Serialize)]
pub(crate) struct TagMeta<'a> {
    #[serde(rename = "io.modelcontextprotocol/subscriptionId")]
    pub(crate) id: &'a RequestId,
}

impl ServerEvent {
    /// The notification method that announces this event; none for
    /// [`ServerEvent::Missed`], which listeners answer with the
    /// notifications of what they follow.
    pub fn method(&self) -> Option<&'static str> {
        Some(match self {
            ServerEvent::ToolsListChanged => "notifications/tools/list_changed",
            ServerEvent::PromptsListChanged => "notifications/prompts/list_changed",
            ServerEvent::ResourcesListChanged => "notifications/resources/list_changed",
            ServerEvent::ResourceUpdated(_) => "notifications/resources/updated",
            ServerEvent::Task { .. } => "notifications/tasks",
            ServerEvent::Missed => return None,
        })
    }
}

#[derive(Serialize)]
struct EventParams<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    uri: Option<&'a str>,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<TagMeta<'a>>,
}

/// The notification announcing `event`, tagged with the subscription id of
/// a listen stream (`Some`), or untagged for a legacy session (`None`).
/// A task's notification is [`encode_task`]'s: it needs the record.
/// None for [`ServerEvent::Missed`], which is no notification.
pub(crate) fn encode_event(event: &ServerEvent, id: Option<&RequestId>) -> Option<Vec<u8>> {
    let uri = match event {
        ServerEvent::ResourceUpdated(uri) => Some(uri.as_str()),
        _ => None,
    };
    Some(jsonrpc::encode_notification(
        event.method()?,
        &EventParams {
            uri,
            meta: id.map(|id| TagMeta { id }),
        },
    ))
}

/// `notifications/tasks` with the task as `tasks/get` shows it, tagged
/// with the subscription id of the listen stream.
pub(crate) fn encode_task(task: &crate::protocol::DetailedTask, id: &RequestId) -> Vec<u8> {
    #[derive(Serialize)]
    struct TaskParams<'a> {
        #[serde(flatten)]
        task: &'a crate::protocol::DetailedTask,
        #[serde(rename = "_meta")]
        meta: TagMeta<'a>,
    }
    let params = TaskParams {
        task,
        meta: TagMeta { id },
    };
    jsonrpc::encode_notification("notifications/tasks", &params)
}

impl Server {
    /// Announces that the contents of the resource `uri` changed: every
    /// listener subscribed to it receives `notifications/resources/updated`.
    pub fn notify_resource_updated(&self, uri: impl Into<String>) {
        self.announce(ServerEvent::ResourceUpdated(uri.into()));
    }

    /// Announces a change to this process's listeners alone, whatever bus
    /// the server has: for what each replica hears for itself (a resource
    /// a gateway follows upstream for its own listeners, as each replica
    /// does), which the bus would repeat on every replica once per replica.
    #[cfg(feature = "client")]
    pub(crate) fn announce_here(&self, event: ServerEvent) {
        drop(self.inner.events.send(event));
    }

    /// Announces a change to every listener that opted in to its kind (on
    /// every replica, when the server has an [`EventBus`]).
    /// [`ServerEvent::Missed`] reaches this process's listeners alone.
    pub fn announce(&self, event: ServerEvent) {
        match &self.inner.bus {
            Some(bus) if !matches!(event, ServerEvent::Missed) => bus.publish(&event),
            // No listener is not an error.
            _ => drop(self.inner.events.send(event)),
        }
    }

    /// Starts stopping the server: every open `subscriptions/listen` stream
    /// ends with its final result and every legacy GET stream ends, so that
    /// a graceful HTTP shutdown is not held up by streams that never finish
    /// by themselves. Requests in flight go on. [`HttpServer`] calls this
    /// when it stops; an embedder serving [`McpService`] inside its own HTTP
    /// server calls it when that server begins its graceful shutdown.
    ///
    /// [`HttpServer`]: crate::transport::http::HttpServer
    /// [`McpService`]: crate::transport::http::McpService
    pub fn shutdown(&self) {
        self.inner.stopping.cancel();
    }

    /// After [`Server::shutdown`]: waits (at most `grace`) for the tasks
    /// running in this process to end, then records the rest `failed` so
    /// that no client waits for a task nobody runs. How many were stopped.
    pub(crate) async fn stop_tasks(&self, grace: std::time::Duration) -> usize {
        self.inner.tasks.stop(grace).await
    }

    /// Runs the builder's [`on_start`](crate::ServerBuilder::on_start) hooks
    /// (once: a later call runs nothing). A [`main!`](crate::main!) binary
    /// calls it inside its runtime right after the server is built; an
    /// embedder calls it inside its own, before serving. A panicking hook is
    /// logged and the others still run.
    pub fn start(&self) {
        for hook in self.inner.readiness.take_hooks() {
            if let Err(message) = crate::panic::call_caught(|| hook(self)) {
                tracing::error!("an on_start hook panicked: {message}");
            }
        }
    }

    /// Whether [`Server::shutdown`] was called.
    pub fn is_shutting_down(&self) -> bool {
        self.inner.stopping.is_cancelled()
    }

    /// How many `subscriptions/listen` streams are open.
    pub fn listener_count(&self) -> usize {
        self.inner.events.receiver_count()
    }
}

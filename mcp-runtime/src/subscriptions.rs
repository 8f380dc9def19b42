//! `subscriptions/listen`: a long-lived request whose response stream
//! carries the server's change notifications, filtered by what the client
//! opted in to and tagged with the subscription id.
//!
//! The server announces changes on a broadcast bus: the builder's run-time
//! changes (tools, prompts, resources added or removed) announce list
//! changes, and [`Server::notify_resource_updated`] announces that a
//! resource's contents changed.

use crate::context::Context;
use crate::error::McpError;
use crate::jsonrpc;
use crate::protocol::{RequestId, META_SUBSCRIPTION_ID};
use crate::server::Server;
use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;

/// A change the server announces to its listeners.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerEvent {
    /// The tool list changed.
    ToolsListChanged,
    /// The prompt list changed.
    PromptsListChanged,
    /// The resource (or template) list changed.
    ResourcesListChanged,
    /// The contents of the resource with this URI changed.
    ResourceUpdated(String),
}

/// What a listener opted in to (`$defs/SubscriptionFilter`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Filter {
    /// `notifications/tools/list_changed`
    #[serde(default, skip_serializing_if = "is_false")]
    pub tools_list_changed: bool,
    /// `notifications/prompts/list_changed`
    #[serde(default, skip_serializing_if = "is_false")]
    pub prompts_list_changed: bool,
    /// `notifications/resources/list_changed`
    #[serde(default, skip_serializing_if = "is_false")]
    pub resources_list_changed: bool,
    /// `notifications/resources/updated` for these URIs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_subscriptions: Vec<String>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl Filter {
    fn wants(&self, event: &ServerEvent) -> bool {
        match event {
            ServerEvent::ToolsListChanged => self.tools_list_changed,
            ServerEvent::PromptsListChanged => self.prompts_list_changed,
            ServerEvent::ResourcesListChanged => self.resources_list_changed,
            ServerEvent::ResourceUpdated(uri) => self.resource_subscriptions.iter().any(|u| u == uri),
        }
    }
}

/// The params of `subscriptions/listen`.
#[derive(Deserialize)]
pub(crate) struct ListenParams {
    notifications: Filter,
}

#[derive(Serialize)]
struct TagMeta<'a> {
    #[serde(rename = "io.modelcontextprotocol/subscriptionId")]
    id: &'a RequestId,
}

#[derive(Serialize)]
struct Tagged<'a, T: Serialize> {
    #[serde(flatten)]
    body: T,
    #[serde(rename = "_meta")]
    meta: TagMeta<'a>,
}

#[derive(Serialize)]
struct AckBody<'a> {
    notifications: &'a Filter,
}

impl ServerEvent {
    /// The notification method that announces this event.
    pub fn method(&self) -> &'static str {
        match self {
            ServerEvent::ToolsListChanged => "notifications/tools/list_changed",
            ServerEvent::PromptsListChanged => "notifications/prompts/list_changed",
            ServerEvent::ResourcesListChanged => "notifications/resources/list_changed",
            ServerEvent::ResourceUpdated(_) => "notifications/resources/updated",
        }
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
pub(crate) fn encode_event(event: &ServerEvent, id: Option<&RequestId>) -> Vec<u8> {
    let uri = match event {
        ServerEvent::ResourceUpdated(uri) => Some(uri.as_str()),
        _ => None,
    };
    jsonrpc::encode_notification(
        event.method(),
        &EventParams {
            uri,
            meta: id.map(|id| TagMeta { id }),
        },
    )
}

/// Serves one `subscriptions/listen`: acknowledges at once with the honored
/// filter, then forwards matching events until the request is cancelled
/// (the client closes the stream or sends `notifications/cancelled`).
pub(crate) async fn listen(server: &Server, params: ListenParams, ctx: Context) -> Result<Vec<u8>, McpError> {
    let Some(outbound) = ctx.scope.outbound.clone() else {
        return Err(McpError::invalid_request(
            "subscriptions/listen needs a response stream",
        ));
    };
    let mut rx = server.inner.events.subscribe();
    let id = ctx.request_id().clone();
    let filter = params.notifications;
    let ack = Tagged {
        body: AckBody { notifications: &filter },
        meta: TagMeta { id: &id },
    };
    if outbound
        .send(jsonrpc::encode_notification(
            "notifications/subscriptions/acknowledged",
            &ack,
        ))
        .is_err()
    {
        return Err(McpError::internal("the response stream closed"));
    }
    let cancel = ctx.cancellation().clone();
    let stopping = server.inner.stopping.clone();
    // An idle stream keeps only what it forwards with.
    drop(ctx);
    loop {
        tokio::select! {
            _ = cancel.cancelled() => break,
            // The server stops: the stream ends with its final result.
            _ = stopping.cancelled() => break,
            event = rx.recv() => match event {
                Ok(event) if filter.wants(&event) => {
                    if outbound.send(encode_event(&event, Some(&id))).is_err() {
                        break;
                    }
                }
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => break,
            },
        }
    }
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Done<'a> {
        result_type: &'static str,
        #[serde(rename = "_meta")]
        meta: DoneMeta<'a>,
    }
    #[derive(Serialize)]
    struct DoneMeta<'a> {
        #[serde(rename = "io.modelcontextprotocol/serverInfo")]
        server_info: &'a crate::protocol::Implementation,
        #[serde(rename = "io.modelcontextprotocol/subscriptionId")]
        id: &'a RequestId,
    }
    let done = Done {
        result_type: "complete",
        meta: DoneMeta {
            server_info: &server.config().info,
            id: &id,
        },
    };
    Ok(serde_json::to_vec(&done).unwrap_or_default())
}

impl Server {
    /// Announces that the contents of the resource `uri` changed: every
    /// listener subscribed to it receives `notifications/resources/updated`.
    pub fn notify_resource_updated(&self, uri: impl Into<String>) {
        self.announce(ServerEvent::ResourceUpdated(uri.into()));
    }

    /// Announces a change to every listener that opted in to its kind.
    pub fn announce(&self, event: ServerEvent) {
        // No listener is not an error.
        let _ = self.inner.events.send(event);
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

    /// Whether [`Server::shutdown`] was called.
    pub fn is_shutting_down(&self) -> bool {
        self.inner.stopping.is_cancelled()
    }

    /// How many `subscriptions/listen` streams are open.
    pub fn listener_count(&self) -> usize {
        self.inner.events.receiver_count()
    }
}

/// The constant used in `_meta` tags (re-exported for tests).
pub const SUBSCRIPTION_ID_KEY: &str = META_SUBSCRIPTION_ID;

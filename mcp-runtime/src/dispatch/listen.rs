//! `subscriptions/listen`: a long-lived request whose response stream
//! carries the server's change notifications, filtered by what the client
//! opted in to and tagged with the subscription id. It ends when the client
//! cancels it or the server stops, with its final result. Streams are
//! bounded in all and per principal, and the resources one names, by the
//! server's `SubscriptionLimits`.

use crate::error::McpError;
use crate::jsonrpc;
use crate::protocol::RequestId;
use crate::server::{encode_event, encode_task, Context, Listing, Server, ServerEvent, TagMeta};
use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;

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
    /// `notifications/tasks` for these tasks (tasks extension).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub task_ids: Vec<String>,
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
            ServerEvent::Task { id, .. } => self.task_ids.iter().any(|t| t == id),
            ServerEvent::Missed => false,
        }
    }
}

/// The most tasks one stream follows.
const MAX_TASK_IDS: usize = 256;

/// The params of `subscriptions/listen`.
#[derive(Deserialize)]
pub(crate) struct ListenParams {
    notifications: Filter,
}

impl ListenParams {
    /// The URIs whose updates the client asks for.
    pub(crate) fn resource_subscriptions(&self) -> &[String] {
        &self.notifications.resource_subscriptions
    }
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

/// Serves one `subscriptions/listen`: acknowledges at once with the honored
/// filter, then forwards matching events until the request is cancelled
/// (the client closes the stream or sends `notifications/cancelled`).
/// `hidden`: the subscribed URIs only resources hidden from the caller
/// serve, agreed to like URIs nothing serves, and never sent an update;
/// `unreadable`: those whose resource (as the caller is shown it) needs
/// scopes the caller's token lacks, left out of the acknowledgement;
/// `views`: when the caller is shown lists of its own (predicates, apps,
/// scopes; `Some(hide)`, whether what its token does not reach is left
/// out), a list change is told to it only when what it is shown changed.
///
/// Not an `async fn`: one keeps its by-value arguments twice in its future
/// (as captured, and as moved into the body), and an open stream holds this
/// future for as long as it lasts.
#[allow(clippy::manual_async_fn)]
pub(crate) fn listen(
    server: &Server,
    params: ListenParams,
    hidden: Vec<String>,
    unreadable: Vec<String>,
    views: Option<bool>,
    ctx: Context,
) -> impl std::future::Future<Output = Result<Vec<u8>, McpError>> + Send + '_ {
    async move {
        let Some(outbound) = ctx.scope.outbound.clone() else {
            return Err(McpError::invalid_request(
                "subscriptions/listen needs a response stream",
            ));
        };
        // Every kind of list is agreed to, whether or not the server has
        // items of it now: its lists can gain them while the stream is open
        // (`Server::add_tool` and friends, a gateway's upstreams read after
        // start, a skills folder), and the stream must hear of it.
        let mut filter = params.notifications;
        {
            let limits = server.inner.streams.limits();
            if filter.resource_subscriptions.len() > limits.max_resource_subscriptions {
                return Err(McpError::invalid_params(format!(
                    "Invalid params: resourceSubscriptions names {} resources, more than {} \
                 (SubscriptionLimits::max_resource_subscriptions)",
                    filter.resource_subscriptions.len(),
                    limits.max_resource_subscriptions
                )));
            }
            for uri in &filter.resource_subscriptions {
                limits.check_uri(uri)?;
            }
        }
        // Counted per principal and in all while it is open, and so are the
        // bytes of the URIs it follows.
        let _slot = server.inner.streams.open(ctx.principal())?;
        let followed = filter.resource_subscriptions.iter().fold(0usize, |sum, uri| {
            sum.saturating_add(crate::session::subscription_cost(uri))
        });
        let _bytes = server.inner.streams.hold(followed)?;
        let _open = crate::telemetry::Held::new(crate::telemetry::Gauge::ListenStreams);
        // What the caller is shown of each kind of list it follows, now:
        // before listening, so that a change in between is told, not taken
        // as what was shown.
        let mut shown = views.map(|hide| Shown::new(server, &filter, &ctx, hide));
        let mut rx = server.inner.events.subscribe();
        let id = ctx.request_id().clone();
        // The version of each followed task's record last sent (or seen at the start).
        let mut sent: Vec<u64> = Vec::new();
        // What an upstream says of the tasks it runs for this server (relayed
        // ids), followed on one stream to each upstream while this one is open.
        // Made only when the stream follows one: an idle stream holds neither
        // the channel nor the tasks.
        #[cfg_attr(not(feature = "client"), allow(unused_mut))]
        let mut relayed_rx: Option<tokio::sync::mpsc::UnboundedReceiver<serde_json::Value>> = None;
        #[cfg(feature = "client")]
        let mut following: Option<tokio::task::JoinSet<()>> = None;
        #[cfg(feature = "client")]
        let mut relayed = Relayed::default();
        // The followed tasks to send as they are now, after the acknowledgement.
        let mut current = Vec::new();
        if !filter.task_ids.is_empty() {
            if !crate::tasks::declared(ctx.client_capabilities()) {
                return Err(crate::tasks::extension_required());
            }
            // Agreed to only for tasks the caller may see. Each is sent once
            // as it is now, after the acknowledgement: a client that
            // subscribes after its task ended (or asked for input) would
            // otherwise hear nothing, ever.
            let mut agreed = Vec::new();
            for task_id in std::mem::take(&mut filter.task_ids).into_iter().take(MAX_TASK_IDS) {
                if agreed.contains(&task_id) {
                    continue;
                }
                #[cfg(feature = "client")]
                if let Some((relay, upstream_id)) =
                    server
                        .inner
                        .tasks
                        .relays
                        .open(&server.inner.sealer, &task_id, ctx.principal())
                {
                    relayed.follow(relay, upstream_id, task_id.clone());
                    agreed.push(task_id);
                    sent.push(0);
                    continue;
                }
                if let Ok(record) = super::tasks::find(server, &task_id, ctx.principal()).await {
                    current.push((agreed.len(), record));
                    agreed.push(task_id);
                    sent.push(0);
                }
            }
            filter.task_ids = agreed;
            #[cfg(feature = "client")]
            if !relayed.0.is_empty() {
                let caps = serde_json::to_value(ctx.client_capabilities()).unwrap_or_default();
                let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
                relayed.start(following.get_or_insert_with(tokio::task::JoinSet::new), &caps, &tx);
                relayed_rx = Some(rx);
            }
        }
        // Agreed to only for resources the caller's token may read (as the
        // caller is shown them).
        filter.resource_subscriptions.retain(|uri| !unreadable.contains(uri));
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
        for (at, record) in current {
            if let Some(last) = sent.get_mut(at) {
                *last = record.version;
            }
            if outbound.send(encode_task(&record.detailed(), &id)).is_err() {
                return Err(McpError::internal("the response stream closed"));
            }
        }
        filter.resource_subscriptions.retain(|uri| !hidden.contains(uri));
        // Followed while the stream is open (a gateway follows them upstream).
        let _following: Vec<_> = filter
            .resource_subscriptions
            .iter()
            .map(|uri| server.inner.streams.followed.follow(uri))
            .collect();
        let cancel = ctx.cancellation().clone();
        let stopping = server.inner.stopping.clone();
        // A stream opened with an access token ends when the token expires.
        let identity = ctx.identity().cloned();
        let expired = crate::auth::expired(identity.as_deref());
        tokio::pin!(expired);
        // A followed task is read again with the owner check of `tasks/get`.
        let principal = ctx.principal().map(str::to_owned);
        // An idle stream keeps only what it forwards with.
        drop(ctx);
        loop {
            tokio::select! {
                _ = cancel.cancelled() => break,
                Some(body) = next_relayed(&mut relayed_rx) => {
                    match serde_json::from_value::<crate::protocol::DetailedTask>(body) {
                        Ok(task) => {
                            if outbound.send(encode_task(&task, &id)).is_err() {
                                break;
                            }
                        }
                        Err(e) => tracing::debug!("an upstream's task notification does not read: {e}"),
                    }
                }
                // The server stops: the stream ends with its final result.
                _ = stopping.cancelled() => break,
                _ = &mut expired => break,
                event = rx.recv() => match event {
                    Ok(ServerEvent::Task { id: task_id, version }) => {
                        let Some(at) = filter.task_ids.iter().position(|t| *t == task_id) else { continue };
                        // Seen already, or a message that claims less than that.
                        if version <= sent.get(at).copied().unwrap_or(0) {
                            continue;
                        }
                        if !send_newer(server, &task_id, principal.as_deref(), sent.get_mut(at..).unwrap_or_default(), &outbound, &id).await {
                            break;
                        }
                    }
                    // Events were missed (the stream fell behind the
                    // server's, or the event bus reconnected).
                    missed @ (Ok(ServerEvent::Missed) | Err(broadcast::error::RecvError::Lagged(_))) => {
                        tracing::debug!(?missed, "a listen stream is told again of what it follows");
                        if !make_up(server, &filter, shown.as_ref(), principal.as_deref(), &mut sent, &outbound, &id).await {
                            break;
                        }
                        if let Some(shown) = &mut shown {
                            shown.refresh(server, &filter);
                        }
                    }
                    // A change to a list that leaves what the caller is shown
                    // as it was, or an update of a resource it is no longer
                    // shown or may no longer read (the catalog changed).
                    Ok(event)
                        if filter.wants(&event) && shown.as_mut().is_some_and(|shown| !shown.changed(server, &event)) => {}
                    Ok(event) if filter.wants(&event) => {
                        let sent = encode_event(&event, Some(&id)).is_none_or(|note| outbound.send(note).is_ok());
                        if !sent {
                            break;
                        }
                    }
                    Ok(_) => {}
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
}

/// What a caller shown lists of its own is shown of each kind it follows
/// (tools, prompts, and resources with templates and skills), as digests
/// of the items.
struct Shown {
    /// The stream's request: the caller's token, headers and metadata.
    ctx: Context,
    hide: bool,
    digests: [Option<u64>; 3],
}

const LISTS: [ServerEvent; 3] = [
    ServerEvent::ToolsListChanged,
    ServerEvent::PromptsListChanged,
    ServerEvent::ResourcesListChanged,
];

impl Shown {
    fn new(server: &Server, filter: &Filter, ctx: &Context, hide: bool) -> Self {
        let mut shown = Shown {
            ctx: ctx.clone(),
            hide,
            digests: [None; 3],
        };
        shown.refresh(server, filter);
        shown
    }

    /// Takes the digest of each kind of list `filter` follows, as the
    /// caller is shown it now.
    fn refresh(&mut self, server: &Server, filter: &Filter) {
        for (at, kind) in LISTS.iter().enumerate() {
            if filter.wants(kind) {
                self.digests[at] = self.digest(server, kind);
            }
        }
    }

    /// The digest of the list `event` says changed, as the caller is shown
    /// it now; `None` for an event of no list.
    fn digest(&self, server: &Server, event: &ServerEvent) -> Option<u64> {
        use std::hash::Hasher;
        let catalog = server.catalog();
        let request = &self.ctx.scope;
        let sight = super::visible::Sight::of_request(server, &catalog, request);
        let lists = super::visible::Lister::new(&sight, &catalog, request.identity.as_deref(), self.hide);
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        let hashes = |listing| catalog.hashes(listing);
        match event {
            ServerEvent::ToolsListChanged => lists.digest(&mut hasher, hashes(sight.tools_listing()), &catalog.tools),
            ServerEvent::PromptsListChanged => lists.digest(&mut hasher, hashes(Listing::Prompts), &catalog.prompts),
            // The resources', templates' and skills' lists.
            ServerEvent::ResourcesListChanged => {
                lists.digest(&mut hasher, hashes(Listing::Resources), &catalog.resources);
                lists.digest(&mut hasher, hashes(Listing::Templates), &catalog.templates);
                lists.digest(&mut hasher, hashes(Listing::Skills), &catalog.skills);
            }
            _ => return None,
        }
        Some(hasher.finish())
    }

    /// Whether the list `event` says changed is shown to the caller
    /// otherwise than when it was last told (or at the start; one whose
    /// digest was never taken counts as changed); for a resource's update,
    /// whether the caller is still shown a resource that serves its URI and
    /// may read it; `true` for any other event.
    fn changed(&mut self, server: &Server, event: &ServerEvent) -> bool {
        if let ServerEvent::ResourceUpdated(uri) = event {
            return self.reads(server, uri);
        }
        let Some(at) = LISTS.iter().position(|kind| kind == event) else {
            return true;
        };
        let now = self.digest(server, event);
        std::mem::replace(&mut self.digests[at], now) != now
    }

    /// Whether the caller may hear of `uri`'s updates as the catalog is
    /// now: no resource hidden from it alone serves the URI, and its token
    /// may read the one it is shown.
    fn reads(&self, server: &Server, uri: &str) -> bool {
        let catalog = server.catalog();
        let request = &self.ctx.scope;
        let sight = super::visible::Sight::of_request(server, &catalog, request);
        // One lookup of the resource it is shown: readable with its token,
        // or, none shown, nothing serves the URI at all.
        match sight.find_resource(&catalog, uri) {
            Some((entry, _)) => super::access::entry(request.identity.as_deref(), &entry.scopes).is_ok(),
            None => catalog.find_resource(uri).is_none(),
        }
    }
}

/// After events were missed, whatever they were: tells the stream of every
/// kind it follows (a list changed, a resource updated: read again, it
/// finds nothing new at worst; not one `shown` says the caller may no
/// longer read), and of each followed task that changed. `false` when the
/// stream closed.
async fn make_up(
    server: &Server,
    filter: &Filter,
    shown: Option<&Shown>,
    principal: Option<&str>,
    sent: &mut [u64],
    outbound: &crate::outbound::Outbound,
    id: &RequestId,
) -> bool {
    let kinds = [
        ServerEvent::ToolsListChanged,
        ServerEvent::PromptsListChanged,
        ServerEvent::ResourcesListChanged,
    ];
    let updates = filter
        .resource_subscriptions
        .iter()
        .filter(|uri| shown.is_none_or(|shown| shown.reads(server, uri)))
        .map(|uri| ServerEvent::ResourceUpdated(uri.clone()));
    let open = kinds
        .into_iter()
        .chain(updates)
        .filter(|event| filter.wants(event))
        .filter_map(|event| encode_event(&event, Some(id)))
        .all(|note| outbound.send(note).is_ok());
    if !open {
        return false;
    }
    for (at, task_id) in filter.task_ids.iter().enumerate() {
        if !send_newer(
            server,
            task_id,
            principal,
            sent.get_mut(at..).unwrap_or_default(),
            outbound,
            id,
        )
        .await
        {
            return false;
        }
    }
    true
}

/// Sends task `task_id`'s record, read with the owner check of
/// `tasks/get`, when it is newer than the version the stream sent of it
/// (`sent[0]`, updated); `false` when the stream closed.
async fn send_newer(
    server: &Server,
    task_id: &str,
    principal: Option<&str>,
    sent: &mut [u64],
    outbound: &crate::outbound::Outbound,
    id: &RequestId,
) -> bool {
    let Some(last) = sent.first_mut() else {
        return true;
    };
    let Some(record) = super::tasks::read_own(server, task_id, principal).await else {
        return true;
    };
    if record.version <= *last {
        return true;
    }
    *last = record.version;
    outbound.send(encode_task(&record.detailed(), id)).is_ok()
}

/// What an upstream next says of a relayed task the stream follows; never,
/// when it follows none.
async fn next_relayed(
    rx: &mut Option<tokio::sync::mpsc::UnboundedReceiver<serde_json::Value>>,
) -> Option<serde_json::Value> {
    match rx {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

/// The relayed tasks a stream follows, by the upstream that runs them: one
/// listen stream to each upstream for all of its tasks.
#[cfg(feature = "client")]
#[derive(Default)]
struct Relayed(Vec<Following>);

/// One upstream's tasks a stream follows: (the upstream's id, the caller's).
#[cfg(feature = "client")]
struct Following {
    relay: std::sync::Arc<dyn crate::tasks::relay::TaskRelay>,
    tasks: Vec<(String, String)>,
}

#[cfg(feature = "client")]
impl Relayed {
    fn follow(&mut self, relay: std::sync::Arc<dyn crate::tasks::relay::TaskRelay>, upstream_id: String, id: String) {
        match self.0.iter_mut().find(|f| std::sync::Arc::ptr_eq(&f.relay, &relay)) {
            Some(following) => following.tasks.push((upstream_id, id)),
            None => self.0.push(Following {
                relay,
                tasks: vec![(upstream_id, id)],
            }),
        }
    }

    /// Starts following, each notification renamed to the caller's id and sent to `out`.
    fn start(
        self,
        set: &mut tokio::task::JoinSet<()>,
        caps: &serde_json::Value,
        out: &tokio::sync::mpsc::UnboundedSender<serde_json::Value>,
    ) {
        for Following { relay, tasks } in self.0 {
            let upstream_ids = tasks.iter().map(|(up, _)| up.clone()).collect();
            let tx = out.clone();
            let rename = Box::new(move |mut body: serde_json::Value| {
                let caller = body["taskId"]
                    .as_str()
                    .and_then(|up| tasks.iter().find(|(u, _)| u == up))
                    .map(|(_, id)| id.clone());
                if let Some(id) = caller {
                    body["taskId"] = serde_json::Value::String(id);
                    let _ = tx.send(body);
                }
            });
            set.spawn(relay.follow(upstream_ids, caps.clone(), rename));
        }
    }
}

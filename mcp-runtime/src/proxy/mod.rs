//! Proxying (the `client` feature): another MCP server's tools, prompts,
//! resources and templates served as this server's own, named under a
//! prefix like a [`mount`](crate::ServerBuilder::mount) (`prefix_name`; an
//! empty prefix serves them under their own names). The upstream is reached
//! when the server starts, in the background, and again with backoff while
//! it cannot be: an upstream that is down serves nothing and says why in
//! the log, and the rest of the server serves meanwhile. Its lists are read
//! then, and again on its list-change notifications and after a stdio
//! upstream is restarted. Calls go through [`forward`]; the callers'
//! resource subscriptions are followed upstream by [`follow`].

mod follow;
mod forward;

use crate::calls::Calls;
use crate::client::{ClientBuilder, Era};
use crate::error::McpError;
use crate::mrtr::{Flow, Halt};
use crate::protocol::{CallToolResult, GetPromptResult, ReadResourceResult, ResourceContents};
use crate::server::entry::{CompleteRelay, Completer};
use crate::server::{BuildError, Entries, EntryNames, PromptEntry, ResourceEntry, Server, ServerBuilder, ToolEntry};
use forward::{Routes, Upstream};
use serde_json::{json, Map, Value};
use std::sync::Arc;
use std::time::Duration;

impl ServerBuilder {
    /// Serves `upstream`'s tools, prompts, resources and resource templates
    /// as this server's own: tools and prompts named `prefix_name` (as
    /// [`mount`](Self::mount) names them; `""` keeps their names), resources
    /// under their own URIs. Arguments, results (`structuredContent`,
    /// `_meta`, `isError`), progress, cancellation and the updates of the
    /// resources callers subscribe to pass through; an
    /// upstream's error keeps its code and message, a transport failure is
    /// -32603 naming the upstream. The upstream's asks reach the caller as
    /// `input_required` rounds, whichever era it speaks. The caller's token
    /// is never sent upstream: give the upstream its own credentials on
    /// `upstream` ([`ClientBuilder::bearer`], [`ClientBuilder::header`]).
    ///
    /// ```no_run
    /// use mcp_runtime::client::Client;
    /// use mcp_runtime::Server;
    ///
    /// let server = Server::builder()
    ///     .proxy("files", Client::stdio("npx", ["-y", "@modelcontextprotocol/server-filesystem", "/srv"]))
    ///     .proxy("", Client::http("https://mcp.example.com/mcp").bearer("upstream-token"))
    ///     .build()?;
    /// # Ok::<(), mcp_runtime::BuildError>(())
    /// ```
    pub fn proxy(self, prefix: impl Into<String>, upstream: ClientBuilder) -> Self {
        self.proxy_scoped(prefix, upstream, Vec::<String>::new())
    }

    /// [`proxy`](Self::proxy), with every proxied item asking its callers
    /// for `scopes` (as [`ToolEntry::scopes`] does).
    pub fn proxy_scoped(
        self,
        prefix: impl Into<String>,
        upstream: ClientBuilder,
        scopes: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        self.proxy_with(prefix, upstream, ProxyOptions::default().scopes(scopes))
    }

    /// [`proxy`](Self::proxy), as `options` say.
    ///
    /// ```no_run
    /// use mcp_runtime::client::Client;
    /// use mcp_runtime::{ProxyOptions, Server};
    ///
    /// let server = Server::builder()
    ///     .proxy_with(
    ///         "notes",
    ///         Client::stdio("notes-server", ["--db", "/srv/notes.db"]),
    ///         ProxyOptions::default().scopes(["notes"]).session_per_capabilities(true),
    ///     )
    ///     .build()?;
    /// # Ok::<(), mcp_runtime::BuildError>(())
    /// ```
    pub fn proxy_with(self, prefix: impl Into<String>, upstream: ClientBuilder, options: ProxyOptions) -> Self {
        let prefix = prefix.into();
        if !prefix.is_empty() && !crate::server::mount::valid_prefix(&prefix) {
            return self.refuse(BuildError::InvalidMountPrefix(prefix));
        }
        self.on_start(move |server| {
            tokio::spawn(serve(server.clone(), prefix, upstream, options));
        })
    }
}

/// How [`ServerBuilder::proxy_with`] serves an upstream.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ProxyOptions {
    /// OAuth scopes every proxied item asks of its callers (as
    /// [`ToolEntry::scopes`] does).
    pub scopes: Vec<String>,
    /// For a 2025-11-25 upstream, which hears a session's capabilities once:
    /// whether a caller that declared fewer capabilities (elicitation form
    /// or URL, sampling, roots) than the gateway's first session is served
    /// by a session opened with just those, so that the upstream's tools
    /// see what the caller can answer. `None` (the default): yes for an
    /// HTTP upstream (another session of the same server), no for a stdio
    /// one, where each session is another process with a state of its own
    /// (and list changes are heard from the first only).
    pub session_per_capabilities: Option<bool>,
}

impl ProxyOptions {
    /// Sets [`scopes`](Self::scopes).
    pub fn scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Sets [`session_per_capabilities`](Self::session_per_capabilities).
    pub fn session_per_capabilities(mut self, yes: bool) -> Self {
        self.session_per_capabilities = Some(yes);
        self
    }
}

/// How long a call to a 2025-11-25 upstream may take before it becomes a
/// task, for a caller that declared the tasks extension: a quicker one is
/// answered directly. (The call stays open on this replica, as a plain call
/// or, for a task-only tool, as the upstream's 2025-11-25 task followed with
/// `tasks/result`; its asks are the task's input requests.)
const LEGACY_TASK_AFTER: Duration = Duration::from_millis(100);

/// Connects (with backoff), serves the upstream's lists and keeps them
/// current until the server is dropped.
async fn serve(server: Server, prefix: String, upstream: ClientBuilder, options: ProxyOptions) {
    let ProxyOptions {
        scopes,
        session_per_capabilities,
    } = options;
    let narrowing = session_per_capabilities.unwrap_or(!upstream.is_stdio());
    let weak = server.downgrade();
    drop(server);
    let routes = Routes::default();
    let name: Arc<str> = Arc::from(upstream.upstream_name());
    // Every message: each caller gets those at its own level.
    let base = upstream.log_level(crate::protocol::LoggingLevel::Debug);
    let upstream = base
        .clone()
        .capabilities(forward::capabilities_of(forward::ALL_ASKS))
        .on_ask(routes.answerer(name.clone()));
    let mut backoff = crate::client::Backoff::default();
    let client = loop {
        match upstream.clone().connect().await {
            Ok(client) => break client,
            Err(_) if weak.upgrade().is_none() => return,
            Err(e) => {
                let wait = backoff.next();
                tracing::warn!(upstream = %name, "cannot reach the upstream: {e}; its items are not served; next try in {} ms", wait.as_millis());
                tokio::time::sleep(wait).await;
            }
        }
    };
    // A 2026-07-28 upstream's lists are asked as a host that renders apps
    // asks them, so that it lists its views and the tools only apps may
    // call: this server shows each caller what it renders. (Its calls carry
    // each caller's own capabilities. A 2025-11-25 session declares its
    // capabilities once, for every call made in it: not there.)
    if client.era() == Some(Era::Latest) {
        client.set_capabilities(renders_apps(forward::capabilities_of(forward::ALL_ASKS)));
    }
    let era = match client.era() {
        Some(Era::Latest) => crate::protocol::LATEST_PROTOCOL_VERSION.to_owned(),
        _ => client.protocol_version().unwrap_or_default(),
    };
    let server_name = client.server_info().map(|i| i.name).unwrap_or_default();
    tracing::info!(upstream = %name, "proxying {server_name} ({era}) under {:?}", prefix);
    // Upstreams' names may repeat (two `npx` programs); their prefixes do not.
    let relay_key: Arc<str> = if prefix.is_empty() {
        name.clone()
    } else {
        Arc::from(prefix.as_str())
    };
    let upstream = Arc::new(Upstream::new(
        client.clone(),
        relay_key.clone(),
        routes,
        narrowing.then_some(base),
    ));
    if runs_tasks(&client) {
        // Its tasks are the callers' to follow: `tasks/*` with their ids go there.
        if let Some(server) = weak.upgrade() {
            server.inner.tasks.relays.add(&relay_key, upstream.clone());
            // Ids a replica of an earlier version sealed name the upstream itself.
            server.inner.tasks.relays.add_name(&name, upstream.clone());
        }
    }
    let mut served = EntryNames::default();
    let mut connections = client.connections();
    // The connection the URIs are followed on.
    let mut link = client.link();
    let mut notes = client.notifications();
    // The callers' resource subscriptions, followed upstream.
    let Some(mut followed) = weak.upgrade().map(|s| s.inner.streams.followed.changes()) else {
        return;
    };
    let mut follow = follow::Upstream::default();
    // One stream, kept open by the client (again after a reconnection, or
    // after it ends: `connections` then changes).
    if let Err(e) = client.listen().await {
        tracing::debug!(upstream = %name, "no list-change stream: {e}");
    }
    loop {
        let Some(server) = weak.upgrade() else {
            return;
        };
        sync(&server, &upstream, &prefix, &scopes, &mut served).await;
        drop(server);
        if !follow_again(&weak, &client, &served, &mut follow).await {
            return;
        }
        loop {
            tokio::select! {
                // A resource followed by a first caller, or by none any more.
                changed = followed.changed() => {
                    if changed.is_err() || !follow_again(&weak, &client, &served, &mut follow).await {
                        return;
                    }
                }
                // A stream following them upstream ended, or following one
                // failed: after a wait, followed again.
                () = follow.due() => {
                    if !follow_again(&weak, &client, &served, &mut follow).await {
                        return;
                    }
                }
                // The server gone, the upstream goes with it.
                _ = tokio::time::sleep(Duration::from_secs(5)) => {
                    if weak.upgrade().is_none() {
                        return;
                    }
                }
                // A session of fewer capabilities heard of a change.
                _ = upstream.lists_changed.notified() => break,
                changed = connections.changed() => {
                    if changed.is_err() {
                        return;
                    }
                    let now = client.link();
                    if now != link {
                        // A new connection: nothing is followed there yet.
                        link = now;
                        follow.reconnected();
                    } else if client.era() == Some(Era::Legacy) {
                        // The session's event stream, which carries its
                        // updates too, was opened again without resuming;
                        // its subscriptions hold.
                        if !tell_again(&weak, &client, follow.missed()) {
                            return;
                        }
                    }
                    break;
                }
                note = notes.recv() => match note {
                    Ok(note) if note.message["method"].as_str().is_some_and(|m| m.ends_with("/list_changed")) => break,
                    Ok(note) if note.message["method"] == "notifications/resources/updated" => {
                        if let Some(server) = weak.upgrade() {
                            follow.updated(&server, &client, &note.message["params"]);
                        }
                    }
                    // A stream following resources is open upstream.
                    Ok(note) if note.message["method"] == "notifications/subscriptions/acknowledged" => {
                        let id = note.message["params"]["_meta"][crate::protocol::META_SUBSCRIPTION_ID]
                            .as_i64()
                            .or(note.related);
                        if let Some(id) = id {
                            if !tell_again(&weak, &client, follow.acknowledged(id)) {
                                return;
                            }
                        }
                    }
                    Ok(_) => {}
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                        // Updates among what was dropped: read again.
                        if !tell_again(&weak, &client, follow.missed()) {
                            return;
                        }
                        break;
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                },
            }
        }
    }
}

/// Follows at the upstream what the callers follow now of what it serves
/// (`served`); false when the server is gone. The server is not held while
/// the upstream is asked.
async fn follow_again(
    weak: &crate::server::WeakServer,
    client: &crate::client::Client,
    served: &EntryNames,
    follow: &mut follow::Upstream,
) -> bool {
    let Some(server) = weak.upgrade() else {
        return false;
    };
    let wanted = follow::Upstream::wanted(&server, client, served);
    drop(server);
    let again = follow.reconcile(client, wanted).await;
    tell_again(weak, client, again)
}

/// Tells the callers following `uris` to read them again: followed again
/// upstream after their updates may have gone unheard. False when the
/// server is gone.
fn tell_again(weak: &crate::server::WeakServer, client: &crate::client::Client, uris: Vec<String>) -> bool {
    if uris.is_empty() {
        return true;
    }
    let Some(server) = weak.upgrade() else {
        return false;
    };
    tracing::debug!(upstream = %client.name(), "{} resources followed again: their callers read them again", uris.len());
    for uri in uris {
        follow::announce(&server, client, uri);
    }
    true
}

/// Whether the upstream declares the tasks extension: a call may become a task there.
fn runs_tasks(client: &crate::client::Client) -> bool {
    client
        .server_capabilities()
        .and_then(|c| c.extensions)
        .is_some_and(|e| e.contains_key(crate::protocol::TASKS_EXTENSION))
}

/// Reads the upstream's lists and serves them in place of what it served.
async fn sync(server: &Server, upstream: &Arc<Upstream>, prefix: &str, scopes: &[String], served: &mut EntryNames) {
    let name = upstream.client.name().to_owned();
    let mut entries = match read_lists(upstream, prefix, scopes).await {
        Ok(entries) => entries,
        Err(e) => {
            tracing::warn!(upstream = %name, "cannot read the upstream's lists: {e}; serving what was read before");
            return;
        }
    };
    // A view another upstream serves already (two instances of one app
    // server share their views' URIs) is served from there.
    {
        let catalog = server.catalog();
        entries.resources.retain(|r| {
            let elsewhere = r.app && !served.resources.contains(&r.uri) && catalog.find_resource(&r.uri).is_some();
            if elsewhere {
                tracing::debug!(upstream = %name, uri = %r.uri, "a view another upstream serves is served from there");
            }
            !elsewhere
        });
    }
    let names = entries.names();
    let counts = (names.tools.len(), names.prompts.len(), names.resources.len());
    match server.swap_entries(served, entries) {
        Ok(()) => {
            *served = names;
            tracing::info!(upstream = %name, "serving {} tools, {} prompts, {} resources and templates", counts.0, counts.1, counts.2);
        }
        Err(e) => tracing::warn!(upstream = %name, "cannot serve the upstream's items: {e}"),
    }
}

/// `caps` and the MCP Apps extension (`io.modelcontextprotocol/ui`).
fn renders_apps(mut caps: crate::protocol::ClientCapabilities) -> crate::protocol::ClientCapabilities {
    use crate::protocol::{APP_MIME_TYPE, UI_EXTENSION};
    caps.extensions
        .get_or_insert_with(Map::new)
        .insert(UI_EXTENSION.into(), json!({ "mimeTypes": [APP_MIME_TYPE] }));
    caps
}

/// An upstream's resource as an entry of this server: a view (a `ui://`
/// URI) stays one, with the `_meta.ui` it listed.
fn resource_entry(resource: crate::protocol::Resource, upstream: &Arc<Upstream>) -> ResourceEntry {
    let view = resource.uri.starts_with("ui://");
    let ui = resource
        .meta
        .as_ref()
        .and_then(|meta| meta.get("ui"))
        .and_then(|ui| serde_json::from_value::<crate::protocol::UiResourceMeta>(ui.clone()).ok())
        .unwrap_or_default();
    let entry = ResourceEntry::dynamic(resource, read_through(upstream));
    if view {
        entry.app(ui)
    } else {
        entry
    }
}

/// `prefix_name`, or `name` under the empty prefix.
fn prefixed(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_owned()
    } else {
        format!("{prefix}_{name}")
    }
}

/// The upstream's items as entries of this server.
async fn read_lists(upstream: &Arc<Upstream>, prefix: &str, scopes: &[String]) -> Result<Entries, McpError> {
    let client = &upstream.client;
    let offers = client.server_capabilities().unwrap_or_default();
    let mut entries = Entries::default();
    if offers.tools.is_some() {
        let legacy = client.era() == Some(Era::Legacy);
        let listed: Vec<Value> = crate::calls::list(client, "tools/list", "tools").await?;
        for listed in listed {
            // A 2025-11-25 tool that runs only as a task is called as one
            // (`params.task`), and offered only as one.
            let as_task = legacy
                && offers.accepts_tool_tasks()
                && listed["execution"]["taskSupport"].as_str() == Some("required");
            let mut tool: crate::protocol::Tool = crate::calls::parse(listed)?;
            let own = std::mem::take(&mut tool.name);
            tool.name = prefixed(prefix, &own);
            let through = call_through::<CallToolResult>(upstream, "tools/call", own, as_task);
            let mut entry = ToolEntry::dynamic(tool, through);
            entry.relays_tasks = runs_tasks(client);
            if legacy {
                // A long call is offered as a task to callers that follow tasks.
                let mode = if as_task {
                    crate::tasks::TaskMode::Required
                } else {
                    crate::tasks::TaskMode::Optional
                };
                entry = entry.task(crate::tasks::TaskSupport {
                    mode,
                    ..crate::tasks::TaskSupport::NEVER
                });
                entry.task_after = Some(LEGACY_TASK_AFTER);
            }
            entries.tools.push(entry.scopes(scopes.iter().cloned()));
        }
    }
    if offers.prompts.is_some() {
        for mut prompt in client.list_prompts().await? {
            let own = std::mem::take(&mut prompt.name);
            prompt.name = prefixed(prefix, &own);
            let own_name = own.clone();
            let entry = PromptEntry::dynamic(
                prompt,
                call_through::<GetPromptResult>(upstream, "prompts/get", own, false),
            );
            let mut entry = entry.scopes(scopes.iter().cloned());
            if offers.completions.is_some() {
                entry
                    .completers
                    .push(Completer::relayed(relay(upstream, Some(own_name))));
            }
            entries.prompts.push(entry);
        }
    }
    if offers.resources.is_some() {
        for resource in client.list_resources().await? {
            let entry = resource_entry(resource, upstream);
            entries.resources.push(entry.scopes(scopes.iter().cloned()));
        }
        for template in client.list_resource_templates().await? {
            match ResourceEntry::dynamic_template(template.clone(), read_through(upstream)) {
                Ok(entry) => {
                    let mut entry = entry.scopes(scopes.iter().cloned());
                    if offers.completions.is_some() {
                        entry.completers.push(Completer::relayed(relay(upstream, None)));
                    }
                    entries.resources.push(entry)
                }
                Err(e) => {
                    tracing::warn!(upstream = %client.name(), "template {:?} not served: {e}", template.uri_template)
                }
            }
        }
    }
    // A view a tool names that the upstream left out of its list (MCP Apps
    // lets it): read through from the upstream all the same, as a view.
    let views: Vec<String> = entries
        .tools
        .iter()
        .filter_map(|tool| tool.ui.as_ref()?.resource_uri.clone())
        .filter(|uri| uri.starts_with("ui://"))
        .collect();
    for uri in views {
        if entries.resources.iter().any(|r| r.uri == uri) {
            continue;
        }
        let resource = crate::protocol::Resource {
            name: uri.clone(),
            uri,
            mime_type: Some(crate::protocol::APP_MIME_TYPE.into()),
            ..Default::default()
        };
        entries
            .resources
            .push(resource_entry(resource, upstream).scopes(scopes.iter().cloned()));
    }
    Ok(entries)
}

/// Completions from the upstream: the request as the caller sent it, the
/// prompt named as the upstream names it (`prompt`), without our `_meta`.
fn relay(upstream: &Arc<Upstream>, prompt: Option<String>) -> CompleteRelay {
    let up = upstream.clone();
    Arc::new(move |mut params: Value| {
        let up = up.clone();
        if let Some(object) = params.as_object_mut() {
            object.remove("_meta");
        }
        if let (Some(name), Some(reference)) = (&prompt, params.get_mut("ref").and_then(Value::as_object_mut)) {
            reference.insert("name".into(), Value::String(name.clone()));
        }
        Box::pin(async move {
            let mut result = up.client.request("completion/complete", params).await?;
            Ok(result.get_mut("completion").map(Value::take).unwrap_or_default())
        })
    })
}

/// What a forwarded call returns.
type CallFuture<T> = std::pin::Pin<Box<dyn std::future::Future<Output = Flow<T>> + Send>>;

/// A handler that forwards `method` (`tools/call`, `prompts/get`) of the
/// item the upstream names `own`, with the caller's arguments; `as_task`: a
/// 2025-11-25 task-augmented call (`"task": {}`, the upstream's time to live).
fn call_through<T: serde::de::DeserializeOwned + 'static>(
    upstream: &Arc<Upstream>,
    method: &'static str,
    own: String,
    as_task: bool,
) -> impl Fn(Map<String, Value>, crate::server::Context) -> CallFuture<T> + Send + Sync + 'static {
    let up = upstream.clone();
    move |args, ctx| {
        let up = up.clone();
        let own = own.clone();
        Box::pin(async move {
            let mut params = Map::new();
            params.insert("name".into(), Value::String(own));
            params.insert("arguments".into(), Value::Object(args));
            if as_task {
                params.insert("task".into(), Value::Object(Map::new()));
            }
            let result = up.forward(method, params, &ctx).await?;
            read::<T>(result, up.client.name())
        })
    }
}

/// What a forwarded read returns.
type ReadFuture = std::pin::Pin<Box<dyn std::future::Future<Output = Flow<Vec<ResourceContents>>> + Send>>;

/// A read handler that forwards `resources/read`.
fn read_through(
    upstream: &Arc<Upstream>,
) -> impl Fn(String, crate::server::Context) -> ReadFuture + Send + Sync + 'static {
    let up = upstream.clone();
    move |uri, ctx| {
        let up = up.clone();
        Box::pin(async move {
            let mut params = Map::new();
            params.insert("uri".into(), Value::String(uri));
            let result = up.forward("resources/read", params, &ctx).await?;
            read::<ReadResourceResult>(result, up.client.name()).map(|r| r.contents)
        })
    }
}

/// Reads an upstream's result as `T`: one that does not read is -32603
/// naming the upstream.
fn read<T: serde::de::DeserializeOwned>(mut result: Value, upstream: &str) -> Flow<T> {
    // A 2025-11-25 result has no cache hints: this server's are "not cached".
    if let Some(object) = result.as_object_mut() {
        object.entry("ttlMs").or_insert(json!(0));
        object.entry("cacheScope").or_insert(json!("private"));
    }
    serde_json::from_value(result).map_err(|e| {
        Halt::Protocol(
            McpError::internal(format!("upstream `{upstream}` sent a result that does not read: {e}"))
                .with_data(json!({"upstream": upstream})),
        )
    })
}

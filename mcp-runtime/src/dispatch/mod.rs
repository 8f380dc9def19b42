//! The dispatcher: the one place a request is routed.
//!
//! It takes one classified request plus what the transport read outside the
//! body, validates `_meta`, picks the handler from the method table, runs it
//! (a panic becomes -32603), and encodes the one response, with `resultType`
//! and `_meta.serverInfo` on every result. Transports never look inside.

use crate::cancel::Cancellation;
use crate::error::McpError;
use crate::headers::HeaderFacts;
use crate::jsonrpc::{self, parse_params, Request};
use crate::meta::{self, RequestMeta};
use crate::method::Method;
use crate::mrtr::{InputRequired, MrtrScope, Outcome};
use crate::outbound::Outbound;
use crate::server::{Context, RequestScope, Server};
use crate::telemetry::Target;
use serde::Serialize;
use serde_json::value::RawValue;
use std::sync::Arc;

mod access;
mod completion;
mod discover;
mod guard;
mod head;
mod list;
mod listen;
mod prompts;
mod resources;
mod rounds;
mod session_tasks;
mod skills;
mod tasks;
mod tools;
mod visible;

pub(crate) use head::Head;

/// The encoded response to one request, and the HTTP status that goes with it.
#[derive(Debug, Clone)]
pub struct Reply {
    /// One compact JSON-RPC response message.
    pub body: Vec<u8>,
    /// 200 for a result; the error's status for an error.
    pub status: u16,
    /// For a 429: the seconds a client waits before retrying (`Retry-After`).
    pub retry_after: Option<u64>,
}

impl Reply {
    /// An error reply.
    pub fn error(id: Option<&crate::protocol::RequestId>, error: &McpError) -> Self {
        Reply {
            body: jsonrpc::encode_error(id, error),
            status: error.http_status(),
            retry_after: error
                .retry_after()
                .map(|d| d.as_secs().saturating_add(u64::from(d.subsec_nanos() > 0))),
        }
    }
}

/// Everything a handler's run needs besides the request itself.
#[derive(Default, Clone)]
pub struct Scope {
    /// Header facts to compare with the body (none on stdio).
    pub headers: HeaderFacts,
    /// Where notifications for this request go, if anywhere.
    pub outbound: Option<Outbound>,
    /// The request's cancellation token.
    pub cancel: Cancellation,
    /// The authenticated principal, if the transport knows one.
    pub principal: Option<String>,
    /// The legacy session the request belongs to, if any.
    pub session: Option<Arc<crate::session::Session>>,
    /// The verified access token, when the endpoint is authorized.
    pub identity: Option<Arc<crate::auth::AccessToken>>,
    /// Whether lists leave out what `identity`'s scopes do not reach.
    pub hide_unreachable: bool,
    /// The transport the request came over.
    pub transport: Transport,
    /// The client's address, when the transport knows it (the stand-alone
    /// HTTP server): anonymous callers' tasks are counted per address.
    pub peer: Option<std::net::IpAddr>,
}

/// The transport a request came over, as telemetry names it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Transport {
    /// In process (the test client, a binary's `call`): no network.
    #[default]
    InProcess,
    /// stdio (`network.transport` `pipe`).
    Stdio,
    /// Streamable HTTP (`network.transport` `tcp`) over this version of
    /// HTTP (`network.protocol.version`: `1.1`, or `2` where a server of
    /// one's own mounts the endpoint in an HTTP/2 server).
    Http(&'static str),
}

impl Transport {
    fn network(self) -> Option<&'static str> {
        match self {
            Transport::InProcess => None,
            Transport::Stdio => Some("pipe"),
            Transport::Http(_) => Some("tcp"),
        }
    }

    fn http_version(self) -> Option<&'static str> {
        match self {
            Transport::Http(version) => Some(version),
            _ => None,
        }
    }
}

/// What the telemetry of one request learns while it is routed. When
/// nothing observes the request (`observe` false) it records nothing.
#[derive(Default)]
pub(crate) struct Seen {
    observe: bool,
    version: Option<&'static str>,
    target: Option<Target>,
    tool_error: bool,
}

impl Seen {
    /// The request named a tool or prompt the catalog serves (`target`
    /// gives it, `None` for a name it does not serve, which would let a
    /// caller grow the spans' names and the metric's series with made-up
    /// names): the span is named after it and the metric carries it.
    fn found(&mut self, method: Method, target: impl FnOnce() -> Option<Target>) {
        if !self.observe {
            return;
        }
        let Some(target) = target() else {
            return;
        };
        let span = tracing::Span::current();
        if !span.is_disabled() {
            let name = match &target {
                Target::Tool(name) | Target::Prompt(name) => name,
            };
            let full = format!("{} {name}", method.as_str());
            span.record("otel.name", full.as_str());
            // The exported span started with the method's name alone.
            crate::telemetry::rename(&span, full);
        }
        self.target = Some(target);
    }
}

/// Handles one request end to end and returns its encoded response.
///
/// Each request runs in a `tracing` span `mcp.request` at DEBUG level (so
/// that it costs a callsite check when DEBUG is off) with the attributes of
/// the OpenTelemetry MCP conventions (see [`crate::otel`] with the `otel`
/// feature): exported, it is the request's SERVER span, named
/// `{mcp.method.name} {target}`, continuing the caller's W3C
/// `traceparent`/`tracestate` from `_meta` (SEP-414), else from the HTTP
/// request's headers of those names. With metrics on, the
/// request's duration is recorded too.
// Not an `async fn` (see `route`).
#[allow(clippy::manual_async_fn)]
pub fn handle_request<'a>(
    server: &'a Server,
    request: &'a Request,
    mut scope: Scope,
) -> impl std::future::Future<Output = Reply> + Send + 'a {
    async move { handle_in(server, request, &mut scope).await }
}

/// [`handle_request`] with the request's scope lent: a caller whose future
/// already owns the scope (the HTTP transport's, which is boxed per request)
/// keeps it once instead of twice. The scope is lent down the dispatcher, and
/// its contents moved out into the handler's context only where one is made
/// (see `route`).
#[allow(clippy::manual_async_fn)]
pub(crate) fn handle_in<'a>(
    server: &'a Server,
    request: &'a Request,
    scope: &'a mut Scope,
) -> impl std::future::Future<Output = Reply> + Send + 'a {
    async move {
        let span = crate::telemetry::request_span(&request.method, &request.id, scope.principal.as_deref());
        let metrics = crate::telemetry::metrics_on();
        if span.is_disabled() && !metrics {
            return reply(request, route(server, request, scope, None, &mut Seen::default()).await);
        }
        // Boxed: the unobserved path keeps a small future.
        crate::boxed::boxed!(observed(server, request, scope, span, metrics)).await
    }
}

/// [`handle_request`] with its span recorded and its metric taken.
async fn observed(server: &Server, request: &Request, scope: &mut Scope, span: tracing::Span, metrics: bool) -> Reply {
    let session_id = scope.session.as_ref().and_then(|s| s.id.as_deref());
    let observed = crate::telemetry::Observed::begin(
        span,
        metrics,
        request.params.as_deref(),
        scope.headers.map(),
        scope.transport.network(),
        scope.transport.http_version(),
        session_id,
    );
    let span = observed.span().clone();
    // The request's own token: fired when its client cancels it or goes away.
    let cancel = scope.cancel.clone();
    let mut watch = Watch {
        observed: Some(observed),
        method: Method::parse(&request.method).map_or("_OTHER", Method::as_str),
        seen: Seen {
            observe: true,
            ..Seen::default()
        },
    };
    let outcome = tracing::Instrument::instrument(
        route(server, request, scope, Some(&span), &mut watch.seen),
        span.clone(),
    )
    .await;
    if let Some(observed) = watch.observed.take() {
        // A handler that returns when it sees its cancellation ends with
        // an outcome no one is answered with.
        let ended = if cancel.is_cancelled() {
            watch.unanswered()
        } else {
            Some(match &outcome {
                Ok(_) => Ok(watch.seen.tool_error),
                Err(e) => Err((e.code().0, e.message())),
            })
        };
        observed.end(watch.method, ended, watch.seen.target.take(), watch.seen.version);
    }
    reply(request, outcome)
}

/// The message a request is answered with when serving it panicked outside
/// its handler (a handler's own panic names the tool, prompt or resource).
pub(crate) const PANICKED: &str = "Internal error: serving the request panicked";

/// An observed request until it is answered. Dropped before (its future
/// dropped: the client cancelled it or went away, or the server stopped),
/// it ends the observation as `cancelled`, so that the metric counts every
/// request and the span says why it has no answer. A `subscriptions/listen`
/// stream ends that way when its client is done with it: without an error.
struct Watch {
    observed: Option<crate::telemetry::Observed>,
    method: &'static str,
    seen: Seen,
}

impl Watch {
    /// How a request that ends unanswered ended: cancelled, or for a
    /// listen stream, as it should.
    fn unanswered(&self) -> Option<Result<bool, (i32, &'static str)>> {
        (self.method == Method::SubscriptionsListen.as_str()).then_some(Ok(false))
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        if let Some(observed) = self.observed.take() {
            let ended = if std::thread::panicking() {
                // Unwinding: the request is answered -32603 where the
                // panic is caught.
                Some(Err((crate::error::ErrorCode::INTERNAL_ERROR.0, PANICKED)))
            } else {
                self.unanswered()
            };
            observed.end(self.method, ended, self.seen.target.take(), self.seen.version);
        }
    }
}

fn reply(request: &Request, outcome: Result<Vec<u8>, McpError>) -> Reply {
    match outcome {
        Ok(result) => Reply {
            body: jsonrpc::encode_result_raw(&request.id, &result),
            status: 200,
            retry_after: None,
        },
        Err(e) => Reply::error(Some(&request.id), &e),
    }
}

/// Records what the span of a request learns once its params are read.
fn record_span(span: Option<&tracing::Span>, head: &Head<'_>, method: &str, version: &'static str, legacy: bool) {
    let Some(span) = span else { return };
    span.record("mcp_runtime.era", if legacy { "legacy" } else { "modern" });
    span.record("mcp.protocol.version", version);
    fn text(raw: Option<&RawValue>) -> Option<std::borrow::Cow<'_, str>> {
        raw.and_then(crate::jsonrpc::raw_str)
    }
    match method {
        "tools/call" => {
            span.record("gen_ai.operation.name", crate::telemetry::keys::EXECUTE_TOOL);
            if let Some(name) = text(head.name) {
                span.record("gen_ai.tool.name", crate::telemetry::cap(&name));
            }
        }
        "prompts/get" => {
            if let Some(name) = text(head.name) {
                span.record("gen_ai.prompt.name", crate::telemetry::cap(&name));
            }
        }
        _ => {}
    }
    if let Some(uri) = text(head.uri) {
        span.record("mcp.resource.uri", crate::telemetry::cap(&uri));
    }
    if let Some(task) = text(head.task_id) {
        span.record("mcp_runtime.task.id", crate::telemetry::cap(&task));
    }
}

/// Routes one request. The request's future is copied whole as it is
/// built and boxed, so it is kept small: `scope` is lent (`&mut`) down to
/// where a handler's context is made, which moves its contents out; and
/// `handle_request`, `route`, [`serve`] and `rounds` return `async move`
/// blocks, not `async fn`s, which keep their arguments twice (as captured,
/// and as moved into the body): 780 instructions per echo request over
/// HTTP, 350 over stdio.
#[allow(clippy::manual_async_fn)]
fn route<'a>(
    server: &'a Server,
    request: &'a Request,
    scope: &'a mut Scope,
    span: Option<&'a tracing::Span>,
    seen: &'a mut Seen,
) -> impl std::future::Future<Output = Result<Vec<u8>, McpError>> + Send + 'a {
    async move {
        let head = Head::parse(request.params.as_deref())?;
        if let Some(session) = scope.session.clone() {
            if !meta::meta_has_version(head.meta) {
                seen.version = Some(session.version);
                record_span(span, &head, &request.method, session.version, true);
                // A legacy session's request: answered by the session's own
                // bookkeeping, or served below with metadata the session implies.
                let progress_token = head.meta.and_then(|m| m.progress_token());
                // A subscription is to a resource the caller is shown and its token may read.
                // Errors are told as the session's revision has them.
                if request.method == "resources/subscribe" {
                    if let Some(uri) = head.uri.and_then(crate::jsonrpc::raw_str) {
                        visible::subscribe(server, scope, &session, &uri).map_err(McpError::for_legacy)?;
                    }
                }
                let route = crate::legacy::route(server, request, progress_token, &session);
                return match route.map_err(McpError::for_legacy)? {
                    crate::legacy::Route::Answered(body) => Ok(body),
                    crate::legacy::Route::Serve(method, meta) => {
                        // Legacy requests carry no header facts to check.
                        let result =
                            crate::boxed::boxed!(serve(server, method, request, &head, false, meta, scope, seen))
                                .await
                                .map_err(McpError::for_legacy)?;
                        Ok(crate::legacy::strip(&request.method, &result, &server.catalog()))
                    }
                    crate::legacy::Route::Tasks(method) => crate::boxed::boxed!({
                        session_tasks::serve(server, method, request.params.as_deref(), scope, &session)
                    })
                    .await
                    .map_err(McpError::for_legacy),
                };
            }
        }
        seen.version = Some(crate::meta::LATEST);
        record_span(span, &head, &request.method, crate::meta::LATEST, false);
        let method_name: &str = &request.method;
        let method = Method::parse(method_name).filter(|m| m.is_modern_request());
        let headers = &scope.headers;
        let meta = meta::validate(head.meta, headers, || {
            headers.check_routing(method_name, head.routing_name(method).as_deref())
        })?;
        let method = method.ok_or_else(|| McpError::method_not_found(method_name))?;
        serve(server, method, request, &head, true, meta, scope, seen).await
    }
}

/// Serves a routed method with validated (or, for a legacy session,
/// synthesized) metadata; `check_headers`: whether the header facts are
/// compared with the body (not for a legacy session's requests). Results
/// carry every 2026 field; the legacy path strips them afterwards. Each arm that awaits a handler is boxed,
/// so that the request's future stays small while it is parked.
#[allow(clippy::too_many_arguments, clippy::manual_async_fn)]
pub(crate) fn serve<'a>(
    server: &'a Server,
    method: Method,
    request: &'a Request,
    head: &'a Head<'a>,
    check_headers: bool,
    meta: RequestMeta,
    scope: &'a mut Scope,
    seen: &'a mut Seen,
) -> impl std::future::Future<Output = Result<Vec<u8>, McpError>> + Send + 'a {
    async move {
        let params = request.params.as_deref();
        let method_name: &str = &request.method;
        let catalog = server.catalog();
        let offered = match method {
            Method::Discover | Method::SubscriptionsListen => true,
            Method::ToolsList | Method::ToolsCall => !catalog.tools.is_empty(),
            Method::ResourcesList | Method::ResourceTemplatesList | Method::ResourcesRead => {
                !catalog.resources.is_empty() || !catalog.templates.is_empty()
            }
            Method::PromptsList | Method::PromptsGet => !catalog.prompts.is_empty(),
            Method::Complete => catalog.anything_completes(),
            Method::TasksGet | Method::TasksUpdate | Method::TasksCancel => catalog.has_tasks,
            Method::SkillsList | Method::SkillsGet | Method::DirectoryRead => !catalog.skills.is_empty(),
            _ => false,
        };
        if !offered {
            return Err(McpError::method_not_found(method_name));
        }
        let token = scope.identity.as_deref();
        let hide = scope.hide_unreachable;
        let sight = visible::Sight::new(server, &catalog, scope, &meta);
        let lists = visible::Lister::new(&sight, &catalog, token, hide);
        match method {
            Method::Discover => Ok(finish(server, &discover::result(server, &catalog))),
            Method::ToolsList => lists.page(server, "tools", sight.tools_json(&catalog), &catalog.tools, params),
            Method::ResourcesList => lists.page(
                server,
                "resources",
                catalog.resources_json(),
                &catalog.resources,
                params,
            ),
            Method::ResourceTemplatesList => lists.page(
                server,
                "resourceTemplates",
                catalog.templates_json(),
                &catalog.templates,
                params,
            ),
            Method::PromptsList => lists.page(server, "prompts", catalog.prompts_json(), &catalog.prompts, params),
            Method::SkillsList => skills::list(server, &catalog, &lists, params),
            Method::SkillsGet => skills::get(server, &catalog, head, &sight, &lists, token),
            Method::DirectoryRead => skills::directory(server, &catalog, params, &sight, &lists, token),
            Method::Complete => match completion::complete(&catalog, parse_params(params)?, token, &sight)? {
                completion::Completed::Here(result) => Ok(finish(server, &result)),
                completion::Completed::Relayed(relay) => {
                    let asked: serde_json::Value = match params {
                        Some(raw) => {
                            serde_json::from_str(raw.get()).map_err(|e| McpError::invalid_params(e.to_string()))?
                        }
                        None => serde_json::Value::Null,
                    };
                    let result = completion::relayed(relay(asked).await?)?;
                    Ok(finish(server, &result))
                }
            },
            Method::ToolsCall => {
                let call = tools::CallParams::from_head(head, params, scope.session.is_some() && !check_headers)?;
                // A hidden tool is an unknown one: its call says so, where an unknown one's does.
                let shown = sight.tool_named(&catalog, call.name());
                if shown {
                    access::tool(&catalog, call.name(), token)?;
                }
                seen.found(method, || {
                    let served = catalog.tool_at(call.name()).is_some();
                    served.then(|| Target::Tool(call.name().into()))
                });
                let principal = scope.principal.clone();
                // A hidden tool's own rate is not applied: its 429 would say it exists.
                let own_rate = tools::own_rate(server, &catalog, call.name()).filter(|_| shown);
                let caller = guard::caller(server, scope, Some((call.name(), own_rate)));
                let (catalog, call) = (&catalog, &call);
                // Made where it is boxed or guarded: built in place, not
                // built and then moved (a copy of the whole future).
                let rounds = || {
                    rounds::rounds(server, request, head, meta, scope, call.name(), |ctx| {
                        tools::call(catalog, call, check_headers, shown, ctx)
                    })
                };
                let outcome = if !guard::needed(server) {
                    crate::boxed::boxed!(rounds()).await?
                } else {
                    let view = crate::server::Call {
                        kind: crate::server::CallKind::Tool,
                        name: call.name(),
                        principal: principal.as_deref(),
                        arguments: head.arguments,
                    };
                    let classify = |reply: &tools::ToolReply| match reply {
                        tools::ToolReply::Result(r) => crate::server::CallOutcome::Answered {
                            is_error: r.is_error == Some(true),
                        },
                        tools::ToolReply::Task(t) => crate::server::CallOutcome::Task {
                            task_id: t.task_id.clone(),
                        },
                    };
                    match crate::boxed::boxed!(guard::guard(server, view, caller, rounds(), classify)).await {
                        guard::Guarded::Ran(outcome) => outcome?,
                        // Over a limit: an error with the delay (HTTP 429), not a tool error.
                        guard::Guarded::Refused(e) if e.retry_after().is_some() => return Err(e),
                        // A refused tool call is a tool error the model can read.
                        guard::Guarded::Refused(e) => {
                            seen.tool_error = true;
                            return Ok(finish_with_meta(
                                server,
                                &mut crate::tools::error_result(e.message().to_owned()),
                            ));
                        }
                    }
                };
                Ok(finish_outcome(server, outcome, |reply| match reply {
                    tools::ToolReply::Result(mut result) => {
                        seen.tool_error = result.is_error == Some(true);
                        finish_with_meta(server, &mut result)
                    }
                    tools::ToolReply::Task(task) => tasks::created(server, &task),
                }))
            }
            Method::ResourcesRead => {
                let read = resources::ReadParams::from_head(head)?;
                let found = sight.find_resource(&catalog, &read.uri);
                if let Some((entry, _)) = &found {
                    access::entry(token, &entry.scopes)?;
                }
                let found = found.as_ref().map(|(entry, vars)| (*entry, vars.as_slice()));
                let read = &read;
                let principal = scope.principal.clone();
                let caller = guard::caller(server, scope, None);
                let view = crate::server::Call {
                    kind: crate::server::CallKind::Resource,
                    name: &read.uri,
                    principal: principal.as_deref(),
                    arguments: None,
                };
                // The rounds are made inside the box they run in, not held here.
                let outcome = crate::boxed::boxed!({
                    guarded(server, view, caller, || {
                        rounds::rounds(server, request, head, meta, scope, &read.uri, |ctx| {
                            resources::read(found, read, ctx)
                        })
                    })
                })
                .await?;
                Ok(finish_outcome(server, outcome, |result| finish(server, &result)))
            }
            Method::PromptsGet => {
                let get = prompts::GetParams::from_head(head)?;
                let shown = sight.prompt_named(&catalog, &get.name);
                if shown {
                    access::prompt(&catalog, &get.name, token)?;
                }
                seen.found(method, || {
                    let served = catalog.prompt_at(&get.name).is_some();
                    served.then(|| Target::Prompt(get.name.as_str().into()))
                });
                let (catalog, get) = (&catalog, &get);
                let principal = scope.principal.clone();
                let caller = guard::caller(server, scope, None);
                let view = crate::server::Call {
                    kind: crate::server::CallKind::Prompt,
                    name: &get.name,
                    principal: principal.as_deref(),
                    arguments: head.arguments,
                };
                // The rounds are made inside the box they run in, not held here.
                let outcome = crate::boxed::boxed!({
                    guarded(server, view, caller, || {
                        rounds::rounds(server, request, head, meta, scope, &get.name, |ctx| {
                            prompts::get(catalog, get, shown, ctx)
                        })
                    })
                })
                .await?;
                Ok(finish_outcome(server, outcome, |result| finish_prompt(server, result)))
            }
            Method::TasksGet | Method::TasksUpdate | Method::TasksCancel => {
                let ctx = context(server, request, meta, scope);
                crate::boxed::boxed!(tasks::serve(server, method, params, &ctx)).await
            }
            Method::SubscriptionsListen => {
                let listen: listen::ListenParams = parse_params(params)?;
                let hidden = sight.hidden_uris(&catalog, listen.resource_subscriptions());
                let unreadable = sight.unreadable_uris(&catalog, listen.resource_subscriptions(), token);
                // Lists that differ by caller: the stream is told of a change
                // to one only when what its caller is shown changed. Not with
                // a shared bus: another replica's catalog may differ from
                // this one's, and its changes are told as they come.
                let views = lists.private().then_some(hide).filter(|_| server.inner.bus.is_none());
                // A stream may stay open for hours: keep nothing it does not
                // need (the headers only for the predicates that may read
                // them, those added later among them).
                drop(catalog);
                if views.is_none() {
                    scope.headers = HeaderFacts::default();
                }
                let ctx = context(server, request, meta, scope);
                crate::boxed::boxed!(listen::listen(server, listen, hidden, unreadable, views, ctx)).await
            }
            _ => Err(McpError::method_not_found(method_name)),
        }
    }
}

/// A read or a get inside the server's middleware (a refusal is its error).
/// `rounds` makes the request's rounds, in the box they run in (as a tool
/// call's are made).
async fn guarded<T, F>(
    server: &Server,
    view: crate::server::Call<'_>,
    caller: Option<guard::Caller<'_>>,
    rounds: impl FnOnce() -> F,
) -> Result<Outcome<T>, McpError>
where
    F: std::future::Future<Output = Result<Outcome<T>, McpError>>,
{
    if !guard::needed(server) {
        return crate::boxed::boxed!(rounds()).await;
    }
    let answered = |_: &T| crate::server::CallOutcome::Answered { is_error: false };
    match crate::boxed::boxed!(guard::guard(server, view, caller, rounds(), answered)).await {
        guard::Guarded::Ran(outcome) => outcome,
        guard::Guarded::Refused(e) => Err(e),
    }
}

pub(crate) fn context(server: &Server, request: &Request, meta: RequestMeta, scope: &mut Scope) -> Context {
    context_with(server, request, meta, scope, None)
}

/// The handler's context, made of the request's scope: what the scope held
/// is moved out (its cancellation token is shared), so make it once.
pub(crate) fn context_with(
    server: &Server,
    request: &Request,
    meta: RequestMeta,
    scope: &mut Scope,
    mrtr: Option<Arc<MrtrScope>>,
) -> Context {
    Context::new(RequestScope {
        id: request.id.clone(),
        meta,
        cancel: scope.cancel.clone(),
        outbound: scope.outbound.take(),
        state: server.inner.state.clone(),
        server: server.clone(),
        mrtr,
        principal: scope.principal.take(),
        session: scope.session.take(),
        identity: scope.identity.take(),
        headers: std::mem::take(&mut scope.headers),
        task: std::sync::OnceLock::new(),
        #[cfg(feature = "client")]
        relayed: std::sync::OnceLock::new(),
        peer: scope.peer,
    })
}

/// Serializes a result whose `_meta` is absent and appends `_meta.serverInfo`.
pub(crate) fn finish<T: Serialize>(server: &Server, result: &T) -> Vec<u8> {
    let mut out = Vec::with_capacity(256 + server.inner.meta_fragment.len());
    if serde_json::to_writer(&mut out, result).is_err() {
        out.clear();
        out.extend_from_slice(b"{}");
    }
    append_meta(server, &mut out);
    out
}

/// Appends the pre-serialized `_meta` to a serialized result object.
pub(crate) fn append_meta(server: &Server, out: &mut Vec<u8>) {
    if out.last() == Some(&b'}') {
        out.pop();
        if out.len() > 1 {
            out.push(b',');
        }
        out.extend_from_slice(server.inner.meta_fragment.as_bytes());
        out.push(b'}');
    }
}

/// A prompt's result, whose `_meta` its handler (or, through a gateway, an
/// upstream) may have set: `serverInfo` goes into that one, this server's,
/// so the result has a single `_meta`.
fn finish_prompt(server: &Server, mut result: crate::protocol::GetPromptResult) -> Vec<u8> {
    let Some(meta) = result.meta.as_mut() else {
        return finish(server, &result);
    };
    meta.server_info = Some(server.inner.config.info.clone());
    serde_json::to_vec(&result).unwrap_or_else(|_| b"{}".to_vec())
}

fn finish_with_meta(server: &Server, result: &mut crate::protocol::CallToolResult) -> Vec<u8> {
    let mut out = Vec::with_capacity(256 + server.inner.meta_fragment.len());
    let appended = match result.meta.as_mut() {
        None => false,
        Some(meta) => {
            meta.server_info = Some(server.inner.config.info.clone());
            true
        }
    };
    if crate::tools::write_call_result(result, &mut out).is_err() {
        out.clear();
        out.extend_from_slice(b"{}");
    }
    if !appended {
        append_meta(server, &mut out);
    }
    out
}

/// Serializes an outcome: `complete` writes a finished result, an
/// `input_required` one leaves with its asks and sealed state.
fn finish_outcome<T>(server: &Server, outcome: Outcome<T>, complete: impl FnOnce(T) -> Vec<u8>) -> Vec<u8> {
    match outcome {
        Outcome::Complete(result) => complete(result),
        Outcome::InputRequired(ir) => finish_input_required(server, &ir),
    }
}

fn finish_input_required(server: &Server, ir: &InputRequired) -> Vec<u8> {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Wire<'a> {
        result_type: &'static str,
        #[serde(skip_serializing_if = "serde_json::Map::is_empty")]
        input_requests: &'a serde_json::Map<String, serde_json::Value>,
        #[serde(skip_serializing_if = "Option::is_none")]
        request_state: Option<&'a str>,
    }
    finish(
        server,
        &Wire {
            result_type: "input_required",
            input_requests: &ir.input_requests,
            request_state: ir.request_state.as_deref(),
        },
    )
}

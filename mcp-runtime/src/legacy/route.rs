//! The `initialize` handshake, and what each request of a legacy session
//! comes to: an answer from the session's bookkeeping, or a method for the
//! dispatcher to serve with the metadata the session implies.

use super::negotiate;
use crate::error::McpError;
use crate::jsonrpc::parse_params;
use crate::jsonrpc::Request;
use crate::meta::RequestMeta;
use crate::method::Method;
use crate::protocol::{ClientCapabilities, Implementation, LoggingLevel, ProgressToken};
use crate::server::Server;
use crate::session::Session;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::sync::Arc;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct InitializeParams {
    protocol_version: String,
    #[serde(default)]
    capabilities: ClientCapabilities,
    #[serde(default)]
    client_info: Option<Implementation>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct InitializeResult<'a> {
    protocol_version: &'a str,
    capabilities: crate::protocol::ServerCapabilities,
    server_info: &'a Implementation,
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions: Option<&'a str>,
}

#[derive(Deserialize)]
struct SetLevel {
    level: LoggingLevel,
}

#[derive(Deserialize)]
struct UriParams {
    uri: String,
}

/// Answers an `initialize` request: negotiates the revision and opens a
/// session (`id` names it on HTTP, whose version `http` is, `None` on
/// stdio). In modern-only mode, or for malformed params, an error naming
/// the supported versions.
pub(crate) fn initialize(
    server: &Server,
    request: &Request,
    id: Option<String>,
    http: Option<(&'static str, &http::HeaderMap)>,
) -> Result<(Arc<Session>, Vec<u8>), McpError> {
    // Answered by the transport, not the dispatcher: observed here, like
    // every request (`network.transport` `tcp` over HTTP).
    let span = crate::telemetry::request_span(&request.method, &request.id, None);
    let metrics = crate::telemetry::metrics_on();
    if span.is_disabled() && !metrics {
        return open(server, request, id);
    }
    let network = if http.is_some() { "tcp" } else { "pipe" };
    let observed = crate::telemetry::Observed::begin(
        span,
        metrics,
        request.params.as_deref(),
        http.map(|(_, headers)| headers),
        Some(network),
        http.map(|(version, _)| version),
        id.as_deref(),
    );
    let opened = observed.span().in_scope(|| open(server, request, id));
    let version = opened.as_ref().ok().map(|(session, _)| session.version);
    if let Some(version) = version {
        observed.span().record("mcp.protocol.version", version);
    }
    observed.span().record("mcp_runtime.era", "legacy");
    let outcome = match &opened {
        Ok(_) => Ok(false),
        Err(e) => Err((e.code().0, e.message())),
    };
    observed.end("initialize", Some(outcome), None, version);
    opened
}

fn open(server: &Server, request: &Request, id: Option<String>) -> Result<(Arc<Session>, Vec<u8>), McpError> {
    let params: InitializeParams = parse_params(request.params.as_deref())?;
    if !server.config().legacy {
        return Err(McpError::unsupported_version(
            &params.protocol_version,
            crate::meta::SUPPORTED_VERSIONS,
        ));
    }
    let version = negotiate(&params.protocol_version);
    let session = Arc::new(Session::new(id, version, params.capabilities, params.client_info));
    let catalog = server.catalog();
    let mut capabilities = catalog.capabilities();
    // The tasks extension is a 2026-07-28 one: a session is served the
    // tasks of its own revision instead. Skills are served to sessions too
    // (`skills/*` are plain requests).
    if catalog.has_tasks {
        capabilities.tasks = Some(crate::tasks::legacy::capability());
    }
    if let Some(extensions) = capabilities.extensions.as_mut() {
        extensions.remove(crate::protocol::TASKS_EXTENSION);
        if extensions.is_empty() {
            capabilities.extensions = None;
        }
    }
    let result = InitializeResult {
        protocol_version: version,
        capabilities,
        server_info: &server.config().info,
        instructions: server.config().instructions.as_deref(),
    };
    let body = serde_json::to_vec(&result).map_err(|e| McpError::internal(e.to_string()))?;
    tracing::debug!(version, client = ?session.client_info.as_ref().map(|c| &c.name), "legacy session opened");
    Ok((session, body))
}

/// `resources/subscribe`: a URI of reasonable length that the catalog
/// serves (a static resource, or one a template matches), within the
/// session's bound and the server's.
fn subscribe(server: &Server, session: &Session, uri: String) -> Result<(), McpError> {
    server.inner.streams.limits().check_uri(&uri)?;
    if server.catalog().find_resource(&uri).is_none() {
        return Err(McpError::resource_not_found(&uri));
    }
    session.subscribe(uri, &server.inner.streams)
}

/// What a legacy session's request comes to.
pub(crate) enum Route {
    /// Answered by the session's own bookkeeping (`ping`, `logging/setLevel`,
    /// `resources/subscribe`...): the result.
    Answered(Vec<u8>),
    /// A method the dispatcher serves, with the metadata the session
    /// implies; its result then leaves through [`strip`](super::strip).
    Serve(Method, RequestMeta),
    /// `tasks/get`, `tasks/result` or `tasks/cancel` of 2025-11-25, which the
    /// dispatcher serves from the task store.
    Tasks(Method),
}

/// Routes one request of a legacy session. `progress_token` is the raw
/// `_meta.progressToken` of its params, if any.
pub(crate) fn route(
    server: &Server,
    request: &Request,
    progress_token: Option<&RawValue>,
    session: &Arc<Session>,
) -> Result<Route, McpError> {
    session.touch();
    let params = request.params.as_deref();
    let method_name: &str = &request.method;
    let method = Method::parse(method_name).ok_or_else(|| McpError::method_not_found(method_name))?;
    // The session's own methods are answered with an empty result.
    match method {
        Method::Ping => return Ok(Route::Answered(b"{}".to_vec())),
        Method::SetLogLevel => {
            let p: SetLevel = parse_params(params)?;
            session.set_log_level(p.level);
            return Ok(Route::Answered(b"{}".to_vec()));
        }
        Method::ResourcesSubscribe | Method::ResourcesUnsubscribe => {
            let p: UriParams = parse_params(params)?;
            if method == Method::ResourcesSubscribe {
                subscribe(server, session, p.uri)?;
            } else {
                session.unsubscribe(&p.uri);
            }
            return Ok(Route::Answered(b"{}".to_vec()));
        }
        Method::Initialize => {
            return Err(McpError::invalid_request(
                "Invalid request: the session is already initialized",
            ))
        }
        // The session's tasks, when the server has task tools.
        Method::TasksGet | Method::TasksResult | Method::TasksCancel if server.catalog().has_tasks => {
            return Ok(Route::Tasks(method));
        }
        // 2026-07-28 only.
        Method::Discover
        | Method::SubscriptionsListen
        | Method::TasksGet
        | Method::TasksResult
        | Method::TasksUpdate
        | Method::TasksCancel => return Err(McpError::method_not_found(method_name)),
        m if !m.is_modern_request() => return Err(McpError::method_not_found(method_name)),
        _ => {}
    }
    let progress_token: Option<ProgressToken> = progress_token.and_then(|raw| serde_json::from_str(raw.get()).ok());
    let meta = RequestMeta {
        protocol_version: session.version.into(),
        client_capabilities: session.capabilities.clone(),
        client_info: session.client_info.clone(),
        log_level: session.log_level(),
        progress_token,
    };
    Ok(Route::Serve(method, meta))
}

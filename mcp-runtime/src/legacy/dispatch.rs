//! Routing of legacy-session requests, and the `initialize` handshake.

use super::{negotiate, strip, Session};
use crate::dispatch::{parse_params, Head, Method, Scope};
use crate::error::McpError;
use crate::jsonrpc::Request;
use crate::meta::RequestMeta;
use crate::protocol::{ClientCapabilities, Implementation, LoggingLevel, ProgressToken};
use crate::server::Server;
use serde::{Deserialize, Serialize};
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

impl Server {
    /// Answers an `initialize` request: negotiates the revision and opens a
    /// session (`id` names it on HTTP). In modern-only mode, or for
    /// malformed params, an error naming the supported versions.
    pub fn initialize(&self, request: &Request, id: Option<String>) -> Result<(Arc<Session>, Vec<u8>), McpError> {
        let params: InitializeParams = parse_params(request.params.as_deref())?;
        if !self.config().legacy {
            return Err(McpError::unsupported_version(
                &params.protocol_version,
                crate::meta::SUPPORTED_VERSIONS,
            ));
        }
        let version = negotiate(&params.protocol_version);
        let session = Arc::new(Session::new(id, version, params.capabilities, params.client_info));
        let router = self.router();
        let mut capabilities = crate::discover::capabilities(self, &router);
        capabilities.logging = Some(Default::default());
        let result = InitializeResult {
            protocol_version: version,
            capabilities,
            server_info: &self.config().info,
            instructions: self.config().instructions.as_deref(),
        };
        let body = serde_json::to_vec(&result).map_err(|e| McpError::internal(e.to_string()))?;
        tracing::debug!(version, client = ?session.client_info.as_ref().map(|c| &c.name), "legacy session opened");
        Ok((session, body))
    }
}

/// Serves one request of a legacy session.
pub(crate) async fn route(
    server: &Server,
    request: &Request,
    head: &Head<'_>,
    session: &Arc<Session>,
    scope: Scope,
) -> Result<Vec<u8>, McpError> {
    session.touch();
    let params = request.params.as_deref();
    let method_name: &str = &request.method;
    match method_name {
        "ping" => return Ok(b"{}".to_vec()),
        "logging/setLevel" => {
            let p: SetLevel = parse_params(params)?;
            session.set_log_level(p.level);
            return Ok(b"{}".to_vec());
        }
        "resources/subscribe" | "resources/unsubscribe" => {
            let p: UriParams = parse_params(params)?;
            if method_name == "resources/subscribe" {
                session.subscribe(p.uri);
            } else {
                session.unsubscribe(&p.uri);
            }
            return Ok(b"{}".to_vec());
        }
        "initialize" => {
            return Err(McpError::invalid_request(
                "Invalid request: the session is already initialized",
            ))
        }
        _ => {}
    }
    let method = match Method::parse(method_name) {
        Some(Method::Discover | Method::SubscriptionsListen) | None => {
            return Err(McpError::method_not_found(method_name))
        }
        Some(m) => m,
    };
    let progress_token: Option<ProgressToken> = head
        .meta
        .and_then(|m| m.progress_token())
        .and_then(|raw| serde_json::from_str(raw.get()).ok());
    let meta = RequestMeta {
        protocol_version: session.version.into(),
        client_capabilities: session.capabilities.clone(),
        client_info: session.client_info.clone(),
        log_level: session.log_level(),
        progress_token,
    };
    let result = server
        .serve(method, request, head, Default::default(), meta, scope)
        .await?;
    Ok(strip(method_name, &result))
}

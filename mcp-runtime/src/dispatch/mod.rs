//! The dispatcher: the one place a request is routed.
//!
//! It takes one classified request plus what the transport read outside the
//! body, validates `_meta`, picks the handler from the method table, runs it
//! (a panic becomes -32603), and encodes the one response, with `resultType`
//! and `_meta.serverInfo` on every result. Transports never look inside.

use crate::context::{Cancellation, Context, Outbound, RequestScope};
use crate::error::McpError;
use crate::headers::HeaderFacts;
use crate::jsonrpc::{self, Request};
use crate::meta::{self, RequestMeta};
use crate::mrtr::{InputRequired, MrtrScope, Outcome};
use crate::server::Server;
use crate::{completion, discover, prompts, resources, subscriptions, tools};
use serde::Serialize;
use serde_json::value::RawValue;
use std::sync::Arc;

mod head;
mod rounds;

pub(crate) use head::Head;

/// The encoded response to one request, and the HTTP status that goes with it.
#[derive(Debug, Clone)]
pub struct Reply {
    /// One compact JSON-RPC response message.
    pub body: Vec<u8>,
    /// 200 for a result; the error's status for an error.
    pub status: u16,
}

impl Reply {
    /// An error reply.
    pub fn error(id: Option<&crate::protocol::RequestId>, error: &McpError) -> Self {
        Reply {
            body: jsonrpc::encode_error(id, error),
            status: error.http_status(),
        }
    }
}

/// The methods of 2026-07-28 this server routes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// `server/discover`
    Discover,
    /// `tools/list`
    ToolsList,
    /// `tools/call`
    ToolsCall,
    /// `resources/list`
    ResourcesList,
    /// `resources/templates/list`
    ResourceTemplatesList,
    /// `resources/read`
    ResourcesRead,
    /// `prompts/list`
    PromptsList,
    /// `prompts/get`
    PromptsGet,
    /// `completion/complete`
    Complete,
    /// `subscriptions/listen`
    SubscriptionsListen,
}

impl Method {
    /// Looks a method name up; `None` for unknown and removed methods.
    pub fn parse(name: &str) -> Option<Method> {
        Some(match name {
            "server/discover" => Method::Discover,
            "tools/list" => Method::ToolsList,
            "tools/call" => Method::ToolsCall,
            "resources/list" => Method::ResourcesList,
            "resources/templates/list" => Method::ResourceTemplatesList,
            "resources/read" => Method::ResourcesRead,
            "prompts/list" => Method::PromptsList,
            "prompts/get" => Method::PromptsGet,
            "completion/complete" => Method::Complete,
            "subscriptions/listen" => Method::SubscriptionsListen,
            _ => return None,
        })
    }

    /// Whether the request stays open to stream notifications.
    pub fn is_long_lived(self) -> bool {
        self == Method::SubscriptionsListen
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
    pub session: Option<Arc<crate::legacy::Session>>,
}

impl Server {
    /// Handles one request end to end and returns its encoded response.
    pub async fn handle_request(&self, request: &Request, scope: Scope) -> Reply {
        match self.route(request, scope).await {
            Ok(result) => Reply {
                body: jsonrpc::encode_result_raw(&request.id, &result),
                status: 200,
            },
            Err(e) => Reply::error(Some(&request.id), &e),
        }
    }

    async fn route(&self, request: &Request, mut scope: Scope) -> Result<Vec<u8>, McpError> {
        let head = Head::parse(request.params.as_deref())?;
        let headers = std::mem::take(&mut scope.headers);
        if let Some(session) = scope.session.clone() {
            if !meta::meta_has_version(head.meta) {
                return Box::pin(crate::legacy::dispatch::route(self, request, &head, &session, scope)).await;
            }
        }
        let method_name: &str = &request.method;
        let meta = meta::validate(head.meta, &headers, || {
            headers.check_routing(method_name, head.routing_name(method_name).as_deref())
        })?;
        let method = Method::parse(method_name).ok_or_else(|| McpError::method_not_found(method_name))?;
        self.serve(method, request, &head, headers, meta, scope).await
    }

    /// Serves a routed method with validated (or, for a legacy session,
    /// synthesized) metadata. Results carry every 2026 field; the legacy
    /// path strips them afterwards. Each arm that awaits a handler is boxed,
    /// so that the request's future stays small while it is parked.
    pub(crate) async fn serve(
        &self,
        method: Method,
        request: &Request,
        head: &Head<'_>,
        headers: HeaderFacts,
        meta: RequestMeta,
        scope: Scope,
    ) -> Result<Vec<u8>, McpError> {
        let params = request.params.as_deref();
        let method_name: &str = &request.method;
        let router = self.router();
        let offered = match method {
            Method::Discover | Method::SubscriptionsListen => true,
            Method::ToolsList | Method::ToolsCall => !router.tools.is_empty(),
            Method::ResourcesList | Method::ResourceTemplatesList | Method::ResourcesRead => {
                !router.resources.is_empty() || !router.templates.is_empty()
            }
            Method::PromptsList | Method::PromptsGet => !router.prompts.is_empty(),
            Method::Complete => completion::anything_completes(&router),
        };
        if !offered {
            return Err(McpError::method_not_found(method_name));
        }
        match method {
            Method::Discover => Ok(self.finish(&discover::result(self, &router))),
            Method::ToolsList => tools::serve::list(self, &router, params),
            Method::ResourcesList => resources::serve::list(self, &router, params),
            Method::ResourceTemplatesList => resources::serve::list_templates(self, &router, params),
            Method::PromptsList => prompts::serve::list(self, &router, params),
            Method::Complete => Ok(self.finish(&completion::complete(&router, parse_params(params)?)?)),
            Method::ToolsCall => {
                let call = tools::serve::CallParams::from_head(head)?;
                let (router, call, headers) = (&router, &call, &headers);
                let rounds = self.rounds(request, head, meta, scope, call.name(), |ctx| {
                    tools::serve::call(router, call, headers, ctx)
                });
                let outcome = Box::pin(rounds).await?;
                Ok(self.finish_outcome(outcome, |result| self.finish_with_meta(result)))
            }
            Method::ResourcesRead => {
                let read = resources::serve::ReadParams::from_head(head)?;
                let (router, read) = (&router, &read);
                let rounds = self.rounds(request, head, meta, scope, &read.uri, |ctx| {
                    resources::serve::read(router, read, ctx)
                });
                let outcome = Box::pin(rounds).await?;
                Ok(self.finish_outcome(outcome, |result| self.finish(&result)))
            }
            Method::PromptsGet => {
                let get = prompts::serve::GetParams::from_head(head)?;
                let (router, get) = (&router, &get);
                let rounds = self.rounds(request, head, meta, scope, &get.name, |ctx| {
                    prompts::serve::get(router, get, ctx)
                });
                let outcome = Box::pin(rounds).await?;
                Ok(self.finish_outcome(outcome, |result| self.finish(&result)))
            }
            Method::SubscriptionsListen => {
                let listen = parse_params(params)?;
                // A stream may stay open for hours: keep nothing it does not need.
                drop((router, headers));
                let ctx = self.context(request, meta, scope);
                Box::pin(subscriptions::listen(self, listen, ctx)).await
            }
        }
    }

    pub(crate) fn context(&self, request: &Request, meta: RequestMeta, scope: Scope) -> Context {
        self.context_with(request, meta, scope, None)
    }

    pub(crate) fn context_with(
        &self,
        request: &Request,
        meta: RequestMeta,
        scope: Scope,
        mrtr: Option<Arc<MrtrScope>>,
    ) -> Context {
        Context::new(RequestScope {
            id: request.id.clone(),
            meta,
            cancel: scope.cancel,
            outbound: scope.outbound,
            state: self.inner.state.clone(),
            server: self.clone(),
            mrtr,
            principal: scope.principal,
        })
    }

    /// Serializes a result whose `_meta` is absent and appends `_meta.serverInfo`.
    pub(crate) fn finish<T: Serialize>(&self, result: &T) -> Vec<u8> {
        let mut out = Vec::with_capacity(256 + self.inner.meta_fragment.len());
        if serde_json::to_writer(&mut out, result).is_err() {
            out.clear();
            out.extend_from_slice(b"{}");
        }
        self.append_meta(&mut out);
        out
    }

    /// Appends the pre-serialized `_meta` to a serialized result object.
    pub(crate) fn append_meta(&self, out: &mut Vec<u8>) {
        if out.last() == Some(&b'}') {
            out.pop();
            if out.len() > 1 {
                out.push(b',');
            }
            out.extend_from_slice(self.inner.meta_fragment.as_bytes());
            out.push(b'}');
        }
    }

    fn finish_with_meta(&self, mut result: crate::protocol::CallToolResult) -> Vec<u8> {
        let mut out = Vec::with_capacity(256 + self.inner.meta_fragment.len());
        let appended = match result.meta.as_mut() {
            None => false,
            Some(meta) => {
                meta.server_info = Some(self.inner.config.info.clone());
                true
            }
        };
        if tools::write_call_result(&result, &mut out).is_err() {
            out.clear();
            out.extend_from_slice(b"{}");
        }
        if !appended {
            self.append_meta(&mut out);
        }
        out
    }

    /// Serializes an outcome: `complete` writes a finished result, an
    /// `input_required` one leaves with its asks and sealed state.
    fn finish_outcome<T>(&self, outcome: Outcome<T>, complete: impl FnOnce(T) -> Vec<u8>) -> Vec<u8> {
        match outcome {
            Outcome::Complete(result) => complete(result),
            Outcome::InputRequired(ir) => self.finish_input_required(&ir),
        }
    }

    fn finish_input_required(&self, ir: &InputRequired) -> Vec<u8> {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Wire<'a> {
            result_type: &'static str,
            #[serde(skip_serializing_if = "serde_json::Map::is_empty")]
            input_requests: &'a serde_json::Map<String, serde_json::Value>,
            #[serde(skip_serializing_if = "Option::is_none")]
            request_state: Option<&'a str>,
        }
        self.finish(&Wire {
            result_type: "input_required",
            input_requests: &ir.input_requests,
            request_state: ir.request_state.as_deref(),
        })
    }
}

/// Parses a method's params (the `_meta` inside is ignored here: already validated).
pub(crate) fn parse_params<'a, T: serde::Deserialize<'a>>(params: Option<&'a RawValue>) -> Result<T, McpError> {
    let text = params.map(RawValue::get).unwrap_or("{}");
    serde_json::from_str(text).map_err(|e| McpError::invalid_params(format!("Invalid params: {e}")))
}

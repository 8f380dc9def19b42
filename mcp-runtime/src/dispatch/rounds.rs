//! Running a handler that may ask for input (MRTR), on either era.
//!
//! Modern: one round per request; an `input_required` outcome leaves with a
//! sealed `requestState`, and the retry opens it. Legacy session: the asks
//! become real requests to the client on the call's stream, and the handler
//! runs again with the answers until it completes.

use super::{Head, Scope};
use crate::error::McpError;
use crate::jsonrpc::Request;
use crate::meta::RequestMeta;
use crate::mrtr::seal::Binding;
use crate::mrtr::{MrtrScope, Outcome};
use crate::server::Context;
use crate::server::Server;
use serde_json::value::RawValue;
use std::future::Future;
use std::sync::Arc;

/// Runs `run` for one request of `name` (a tool, prompt or resource).
/// Not an `async fn` (see `route`).
#[allow(clippy::manual_async_fn)]
pub(crate) fn rounds<'a, T, F, Fut>(
    server: &'a Server,
    request: &'a Request,
    head: &'a Head<'a>,
    meta: RequestMeta,
    scope: &'a mut Scope,
    name: &'a str,
    run: F,
) -> impl Future<Output = Result<Outcome<T>, McpError>> + 'a
where
    F: Fn(Context) -> Fut + 'a,
    Fut: Future<Output = Result<Outcome<T>, McpError>>,
    T: 'a,
{
    async move {
        let request_state = Head::string(head.request_state, "requestState")?;
        let principal = scope.principal.clone();
        let round = Round {
            method: &request.method,
            name,
            raw_arguments: head.arguments,
            arguments: std::cell::OnceCell::new(),
            principal: principal.as_deref(),
        };
        let opened = crate::mrtr::open_round(
            &server.inner.sealer,
            || round.binding(),
            head.input_responses,
            request_state.as_deref(),
        )?;
        if opened.round > 0 {
            // A retried round: one trace of the dialogue, round by round.
            let span = tracing::Span::current();
            if !span.is_disabled() {
                span.record("mcp_runtime.mrtr.round", opened.round);
                crate::telemetry::link_current(opened.link.as_deref());
            }
        }
        let opened = Arc::new(opened);
        if let Some(session) = scope.session.clone() {
            return crate::boxed::boxed!(legacy_rounds(server, request, meta, scope, session, opened, run)).await;
        }
        let ctx = super::context_with(server, request, meta, scope, Some(opened.clone()));
        match run(ctx).await? {
            Outcome::InputRequired(ir) => Ok(Outcome::InputRequired(crate::mrtr::close_round(
                &server.inner.sealer,
                &round.binding(),
                &opened,
                ir,
            )?)),
            complete => Ok(complete),
        }
    }
}

/// The legacy loop: ask the client, merge its answers, run again.
pub(crate) async fn legacy_rounds<T, F, Fut>(
    server: &Server,
    request: &Request,
    meta: RequestMeta,
    scope: &mut Scope,
    session: Arc<crate::session::Session>,
    mut current: Arc<MrtrScope>,
    run: F,
) -> Result<Outcome<T>, McpError>
where
    F: Fn(Context) -> Fut,
    Fut: Future<Output = Result<Outcome<T>, McpError>>,
{
    // A client that takes only JSON answers gets no stream: its calls run,
    // and one that asks fails then.
    let outbound = scope.outbound.clone();
    loop {
        let ctx = super::context_with(server, request, meta.clone(), &mut scope.clone(), Some(current.clone()));
        let ir = match run(ctx).await? {
            Outcome::InputRequired(ir) => ir,
            complete => return Ok(complete),
        };
        if ir.input_requests.is_empty() || current.round.saturating_add(1) > crate::mrtr::MAX_ROUNDS {
            return Err(McpError::internal("the handler asked for input it cannot get"));
        }
        let Some(outbound) = &outbound else {
            return Err(McpError::internal(
                "Internal error: the handler asked for input, and a client that takes only JSON answers \
                 (Accept without text/event-stream) cannot be asked during a call",
            ));
        };
        let answers = session.ask(&ir.input_requests, outbound).await?;
        let mut merged = current.answers.clone();
        merged.extend(answers);
        let state = current.state.lock().unwrap_or_else(|p| p.into_inner()).clone();
        current = Arc::new(MrtrScope {
            answers: merged,
            state: std::sync::Mutex::new(state),
            round: current.round.saturating_add(1),
            link: None,
        });
    }
}

/// What binds one round's sealed state to its request. The arguments are
/// parsed only if a state is opened or sealed.
struct Round<'a> {
    method: &'a str,
    name: &'a str,
    raw_arguments: Option<&'a RawValue>,
    arguments: std::cell::OnceCell<Option<serde_json::Value>>,
    principal: Option<&'a str>,
}

impl Round<'_> {
    fn binding(&self) -> Binding<'_> {
        let arguments = self
            .arguments
            .get_or_init(|| self.raw_arguments.and_then(|raw| serde_json::from_str(raw.get()).ok()))
            .as_ref();
        // Arguments that do not read as a value (a number out of range) are
        // bound as their text: a state never binds two requests' arguments
        // alike because neither reads.
        let unread = self.raw_arguments.filter(|_| arguments.is_none()).map(RawValue::get);
        Binding {
            method: self.method,
            name: self.name,
            arguments,
            unread,
            principal: self.principal,
        }
    }
}

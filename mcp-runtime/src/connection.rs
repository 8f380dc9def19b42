//! A message stream with one peer (a stdio process): requests run
//! concurrently and are answered out of order; `notifications/cancelled`
//! stops the matching handler and suppresses its response.
//!
//! Transports feed it raw messages and forward what it puts on the outbound
//! channel; it is where stream-level bookkeeping lives, not routing.

use crate::cancel::Cancellation;
use crate::dispatch::{Reply, Scope};
use crate::jsonrpc::{self, Message};
use crate::outbound::Outbound;
use crate::protocol::RequestId;
use crate::server::Server;
use serde::Deserialize;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::task::{AbortHandle, JoinSet};

type InFlight = Arc<Mutex<HashMap<RequestId, (Cancellation, AbortHandle, bool)>>>;

/// One peer's message stream.
pub struct Connection {
    server: Server,
    session: Option<Arc<crate::session::Session>>,
    forwarder: Option<AbortHandle>,
    outbound: Outbound,
    in_flight: InFlight,
    tasks: JoinSet<()>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CancelledParams {
    request_id: RequestId,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Connection {
    /// A connection that writes every outgoing message to `outbound`.
    pub fn new(server: Server, outbound: Outbound) -> Self {
        Connection {
            server,
            session: None,
            forwarder: None,
            outbound,
            in_flight: Arc::default(),
            tasks: JoinSet::new(),
        }
    }

    /// Takes one incoming message (one line, without its newline).
    pub fn receive(&mut self, bytes: &[u8]) {
        while self.tasks.try_join_next().is_some() {}
        match jsonrpc::parse(bytes) {
            Err(rejected) => {
                let _ = self
                    .outbound
                    .send(Reply::error(rejected.id.as_ref(), &rejected.error).body);
            }
            // The first `initialize` opens the process's session; a later one
            // is a request of that session (and answered as an error there).
            Ok(Message::Request(request))
                if request.method == "initialize"
                    && self.session.is_none()
                    && !crate::meta::has_protocol_version(request.params.as_deref()) =>
            {
                let reply = match crate::legacy::initialize(&self.server, &request, None) {
                    Ok((session, body)) => {
                        let forward =
                            crate::legacy::events::forward(self.server.clone(), session.clone(), self.outbound.clone());
                        self.forwarder = Some(tokio::spawn(forward).abort_handle());
                        self.session = Some(session);
                        crate::jsonrpc::encode_result_raw(&request.id, &body)
                    }
                    Err(e) => Reply::error(Some(&request.id), &e).body,
                };
                let _ = self.outbound.send(reply);
            }
            Ok(Message::Request(request)) => self.spawn(request),
            Ok(Message::Notification(n)) => {
                if n.method == "notifications/cancelled" {
                    let params = crate::jsonrpc::parse_params::<CancelledParams>(n.params.as_deref());
                    if let Ok(p) = params {
                        if let Some((cancel, abort, _)) = lock(&self.in_flight).remove(&p.request_id) {
                            cancel.cancel();
                            abort.abort();
                            tracing::debug!(id = %p.request_id, "request cancelled by the client");
                        }
                    }
                } else {
                    tracing::debug!(method = %n.method, "notification ignored");
                }
            }
            Ok(Message::Response(r)) => {
                let id = r.id.clone();
                if !self.session.as_ref().is_some_and(|s| s.deliver(r)) {
                    tracing::debug!(%id, "response with no matching request ignored");
                }
            }
        }
    }

    fn spawn(&mut self, request: jsonrpc::Request) {
        let server = self.server.clone();
        let outbound = self.outbound.clone();
        let in_flight = self.in_flight.clone();
        let cancel = Cancellation::new();
        let id = request.id.clone();
        let task_cancel = cancel.clone();
        let long_lived = crate::method::Method::parse(&request.method).is_some_and(|m| m.is_long_lived());
        // The lock is held across the spawn so that the task's own removal
        // cannot run before its entry is inserted.
        let mut table = lock(&self.in_flight);
        // Ids are unique among requests in flight (JSON-RPC; MCP forbids
        // reuse): a second one would take the first one's place here, and
        // the first could then never be cancelled or ended.
        if table.contains_key(&id) {
            let error = crate::error::McpError::invalid_request(format!(
                "Invalid request: a request with id {id} is still in flight"
            ));
            let _ = self.outbound.send(Reply::error(Some(&id), &error).body);
            return;
        }
        let session = self.session.clone();
        let abort = self.tasks.spawn(async move {
            let scope = Scope {
                headers: Default::default(),
                outbound: Some(outbound.clone()),
                cancel: task_cancel.clone(),
                principal: None,
                session,
                identity: None,
                hide_unreachable: false,
                transport: crate::dispatch::Transport::Stdio,
                peer: None,
            };
            let reply = crate::dispatch::handle_request(&server, &request, scope).await;
            lock(&in_flight).remove(&request.id);
            if !task_cancel.is_cancelled() {
                let _ = outbound.send(reply.body);
            }
        });
        table.insert(id, (cancel, abort, long_lived));
    }

    /// Ends the stream: closes subscription streams, then waits for every
    /// other request still running to finish (and be answered).
    pub async fn finish(mut self) {
        if let Some(f) = self.forwarder.take() {
            f.abort();
        }
        for (cancel, abort, long_lived) in lock(&self.in_flight).values() {
            if *long_lived {
                cancel.cancel();
                abort.abort();
            }
        }
        while self.tasks.join_next().await.is_some() {}
    }
}

impl Connection {
    /// Answers a message the transport itself had to reject (for example an
    /// over-long line) with an error without an id.
    pub fn receive_rejected(&mut self, error: &crate::error::McpError) {
        let _ = self.outbound.send(Reply::error(None, error).body);
    }
}

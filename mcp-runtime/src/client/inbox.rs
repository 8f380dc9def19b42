//! Where a connection's incoming messages go: a response to the waiting
//! request, a server-to-client request to the asks' answerer, a
//! notification to every subscriber. Both transports feed one of these.

use super::{Ask, ClientError};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::{broadcast, mpsc, oneshot};

/// A notification from the server.
#[derive(Debug, Clone)]
pub struct Note {
    /// The notification as sent (`method`, `params`).
    pub message: Value,
    /// The id of this client's request it is about, where that is known:
    /// the HTTP request whose response stream carried it, or on stdio the
    /// only request in flight.
    pub related: Option<i64>,
}

/// A server-to-client request and the connection's way to answer it.
pub(crate) struct Incoming {
    pub ask: Ask,
    /// The JSON-RPC id to answer with.
    pub id: Value,
}

/// The pending requests of one connection, and where the rest goes.
pub(crate) struct Inbox {
    upstream: Arc<str>,
    pending: Mutex<Pending>,
    notes: broadcast::Sender<Note>,
    asks: mpsc::UnboundedSender<Incoming>,
}

#[derive(Default)]
struct Pending {
    waiting: HashMap<i64, oneshot::Sender<Result<Value, ClientError>>>,
    /// Requests that stay open for the connection's life (a listen
    /// stream): nothing the server sends is taken to be about them.
    background: std::collections::HashSet<i64>,
    /// Why the connection ended, once it has: later requests fail at once.
    closed: Option<String>,
}

impl Inbox {
    pub(crate) fn new(
        upstream: Arc<str>,
        notes: broadcast::Sender<Note>,
        asks: mpsc::UnboundedSender<Incoming>,
    ) -> Self {
        Inbox {
            upstream,
            pending: Mutex::new(Pending::default()),
            notes,
            asks,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers request `id`: its response arrives on the receiver.
    pub(crate) fn expect(&self, id: i64) -> Result<oneshot::Receiver<Result<Value, ClientError>>, ClientError> {
        let mut pending = self.lock();
        if let Some(why) = &pending.closed {
            return Err(ClientError::Closed {
                upstream: self.upstream.to_string(),
                why: why.clone(),
            });
        }
        let (tx, rx) = oneshot::channel();
        pending.waiting.insert(id, tx);
        Ok(rx)
    }

    /// Forgets request `id` (its caller gave up).
    pub(crate) fn forget(&self, id: i64) {
        let mut pending = self.lock();
        pending.waiting.remove(&id);
        pending.background.remove(&id);
    }

    /// Marks request `id` as one that stays open (see `background`).
    pub(crate) fn background(&self, id: i64) {
        self.lock().background.insert(id);
    }

    /// Whether request `id` stays open (see `background`).
    pub(crate) fn is_background(&self, id: i64) -> bool {
        self.lock().background.contains(&id)
    }

    /// Fails request `id` (its transport could not deliver it, or its
    /// answer's stream ended without it); nothing once it was answered.
    pub(crate) fn fail(&self, id: i64, error: ClientError) {
        let tx = {
            let mut pending = self.lock();
            pending.background.remove(&id);
            pending.waiting.remove(&id)
        };
        if let Some(tx) = tx {
            let _ = tx.send(Err(error));
        }
    }

    /// The request a message is about when the transport cannot say: the
    /// only one in flight (a listen stream aside); with several, none.
    fn only_one(&self) -> Option<i64> {
        let pending = self.lock();
        let mut open = pending.waiting.keys().filter(|id| !pending.background.contains(id));
        match (open.next(), open.next()) {
            (Some(id), None) => Some(*id),
            _ => None,
        }
    }

    /// Ends the connection: every waiting request fails with `why`.
    pub(crate) fn close(&self, why: &str) {
        let waiting: Vec<_> = {
            let mut pending = self.lock();
            if pending.closed.is_none() {
                pending.closed = Some(why.to_owned());
            }
            pending.waiting.drain().map(|(_, tx)| tx).collect()
        };
        for tx in waiting {
            let _ = tx.send(Err(ClientError::Closed {
                upstream: self.upstream.to_string(),
                why: why.to_owned(),
            }));
        }
    }

    /// Ends the connection for later requests (they fail at once with
    /// `why`), while those waiting keep waiting for their answers.
    pub(crate) fn retire(&self, why: &str) {
        let mut pending = self.lock();
        if pending.closed.is_none() {
            pending.closed = Some(why.to_owned());
        }
    }

    /// Whether the connection ended, and why.
    pub(crate) fn closed(&self) -> Option<String> {
        self.lock().closed.clone()
    }

    /// Whether the connection ended for the reason `why`.
    pub(crate) fn closed_for(&self, why: &str) -> bool {
        self.lock().closed.as_deref() == Some(why)
    }

    /// One message from the server. `related` is the request whose response
    /// stream carried it, where the transport knows (an HTTP POST's stream).
    pub(crate) fn deliver(&self, mut message: Value, related: Option<i64>) {
        let method = message.get("method").and_then(Value::as_str).map(str::to_owned);
        let id = message.get("id").cloned();
        match (method, id) {
            (None, Some(id)) => {
                let Some(id) = id.as_i64() else {
                    tracing::debug!(upstream = %self.upstream, "a response to a request never sent: {message}");
                    return;
                };
                let tx = {
                    let mut pending = self.lock();
                    pending.background.remove(&id);
                    pending.waiting.remove(&id)
                };
                let Some(tx) = tx else {
                    return;
                };
                let outcome = match message.get("error") {
                    Some(error) => Err(ClientError::Rpc(crate::calls::refusal_of(error))),
                    None => Ok(message.get_mut("result").map(Value::take).unwrap_or(Value::Null)),
                };
                let _ = tx.send(outcome);
            }
            (Some(method), Some(id)) => {
                // Attributed to the one request in flight when the transport
                // cannot say (stdio): with several, nobody can tell.
                let related = related.or_else(|| self.only_one());
                let params = message.get_mut("params").map(Value::take).unwrap_or(Value::Null);
                let ask = Ask {
                    method,
                    params,
                    related,
                };
                if self.asks.send(Incoming { ask, id }).is_err() {
                    tracing::debug!(upstream = %self.upstream, "an ask after the client ended");
                }
            }
            (Some(_), None) => {
                let related = related.or_else(|| self.only_one());
                let _ = self.notes.send(Note { message, related });
            }
            (None, None) => tracing::debug!(upstream = %self.upstream, "not a JSON-RPC message: {message}"),
        }
    }
}

//! Server-initiated notifications of a legacy session: list changes, and
//! updates of the resources it subscribed to.

use crate::outbound::Outbound;
use crate::server::Server;
use crate::server::ServerEvent;
use crate::session::Session;
use std::sync::Arc;
use tokio::sync::broadcast::error::RecvError;

/// The notification a session receives for `event`, if any.
pub(crate) fn encode(event: &ServerEvent, session: &Session) -> Option<Vec<u8>> {
    match event {
        ServerEvent::ResourceUpdated(uri) if !session.is_subscribed(uri) => None,
        // Tasks are a 2026-07-28 extension: a legacy session has none.
        ServerEvent::Task { .. } => None,
        _ => Some(crate::server::encode_event(event, None)),
    }
}

/// Counts a GET stream of `session` among the server's streams (under the
/// principal that opened the session), or says which bound of
/// `SubscriptionLimits` it would pass. The transport calls it before it
/// answers the GET and keeps the slot for as long as the stream is open.
pub(crate) fn admit(server: &Server, session: &Session) -> Result<crate::session::StreamSlot, crate::error::McpError> {
    server.inner.streams.open(session.owner())
}

/// Forwards the session's notifications to `outbound` until it closes or
/// the server stops.
pub(crate) async fn forward(server: Server, session: Arc<Session>, outbound: Outbound) {
    let mut events = server.inner.events.subscribe();
    let stopping = server.inner.stopping.clone();
    loop {
        let event = tokio::select! {
            _ = stopping.cancelled() => return,
            event = events.recv() => event,
        };
        match event {
            Ok(event) => {
                if let Some(message) = encode(&event, &session) {
                    if outbound.send(message).is_err() {
                        return;
                    }
                }
            }
            Err(RecvError::Lagged(_)) => {}
            Err(RecvError::Closed) => return,
        }
    }
}

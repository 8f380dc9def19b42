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
        _ => crate::server::encode_event(event, None),
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
/// the server stops. Events missed (the forwarder fell behind the
/// server's) are made up for as a listen stream does: every list changed,
/// and every subscribed resource updated. A notification the outbound
/// refuses while it is still open (stdio's backlog of unread output is
/// full) is dropped, and the next ones go as room comes back.
pub(crate) async fn forward(server: Server, session: Arc<Session>, outbound: Outbound) {
    let mut events = server.inner.events.subscribe();
    let stopping = server.inner.stopping.clone();
    loop {
        let event = tokio::select! {
            _ = stopping.cancelled() => return,
            event = events.recv() => event,
        };
        let missed = match event {
            // Events were missed (the forwarder fell behind the server's,
            // or the event bus reconnected).
            why @ (Ok(ServerEvent::Missed) | Err(RecvError::Lagged(_))) => {
                tracing::debug!(?why, "a legacy session is told again of what it follows");
                make_up(&server, &session)
            }
            Ok(event) => vec![event],
            Err(RecvError::Closed) => return,
        };
        for message in missed.iter().filter_map(|event| encode(event, &session)) {
            if outbound.send(message).is_err() && outbound.is_closed() {
                return;
            }
        }
    }
}

/// What a session that missed events is told: every kind of list the
/// server declares (initialize told the session) changed, and every
/// resource it subscribed to updated.
fn make_up(server: &Server, session: &Session) -> Vec<ServerEvent> {
    let declared = server.catalog().capabilities();
    let lists = [
        (declared.tools.is_some(), ServerEvent::ToolsListChanged),
        (declared.prompts.is_some(), ServerEvent::PromptsListChanged),
        (declared.resources.is_some(), ServerEvent::ResourcesListChanged),
    ];
    let updates = session.subscribed().into_iter().map(ServerEvent::ResourceUpdated);
    lists
        .into_iter()
        .filter_map(|(declared, event)| declared.then_some(event))
        .chain(updates)
        .collect()
}

//! The legacy era: serving 2025-11-25 clients (initialize handshake,
//! sessions) from the same handlers.
//!
//! An `initialize` request opens a [`Session`](crate::session::Session) (for the stdio process, or
//! for the HTTP session it names with `Mcp-Session-Id`). Requests of that
//! session carry no per-request `_meta`: the dispatcher builds it from the
//! session (negotiated version, declared capabilities, log level). Results
//! leave through [`strip`], which removes every 2026-only field. Where a
//! modern client would get `input_required`, a session gets real
//! server-to-client requests on the call's stream ([`Session::ask`](crate::session::Session::ask)), and
//! the handler resumes with the answers. Accepted revisions:
//! 2025-11-25, 2025-06-18 and 2025-03-26.

pub(crate) mod events;
mod route;
mod wire;

pub(crate) use route::{initialize, route, Route};
pub(crate) use wire::strip;

/// The legacy revisions accepted, newest first; an `initialize` asking for
/// another one is answered with the newest.
pub(crate) const LEGACY_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26"];

/// The revision answered to an `initialize` asking for `requested`.
pub(crate) fn negotiate(requested: &str) -> &'static str {
    LEGACY_VERSIONS
        .iter()
        .find(|v| **v == requested)
        .copied()
        .unwrap_or(LEGACY_VERSIONS[0])
}

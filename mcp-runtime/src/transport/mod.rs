//! Transports move bytes and nothing else: they know no method or tool names.

pub mod http;
pub mod stdio;

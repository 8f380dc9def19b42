//! Tools: what a tool function may return, how its arguments are decoded
//! and checked, and the tool-name rule.

mod args;
mod output;

pub use args::{decode_arguments, probe, ArgSpec};
pub use output::IntoToolResult;
pub(crate) use output::{error_result, write_call_result};

/// Whether `name` is a valid tool name: 1 to 128 characters of `A-Za-z0-9_.-`
/// (the rule `#[tool]` checks at compile time, from the same source).
pub(crate) use mcp_grammar::is_valid_tool_name as is_valid_name;

/// What a caller is told of a tool call stopped at its timeout
/// (`#[tool(timeout = "..")]` or the server's default).
pub(crate) fn timed_out(tool: &str, limit: std::time::Duration) -> String {
    format!("Tool `{tool}` timed out after {limit:?} and was stopped")
}

/// The same for a `#[tool(blocking)]` function, which cannot be stopped:
/// it runs on until it returns, and its result is dropped.
pub(crate) fn timed_out_blocking(tool: &str, limit: std::time::Duration) -> String {
    format!("Tool `{tool}` timed out after {limit:?}; its work runs on until it returns, and its result is dropped")
}

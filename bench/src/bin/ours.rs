//! Peer A: the one-tool `echo` server written with this framework, exactly as
//! a user would (`#[tool]` + `main!`). `ours` serves stdio; `ours --http ADDR`
//! serves Streamable HTTP at `http://ADDR/mcp`.

use mcp_runtime::prelude::*;

/// Echoes its text back.
#[tool(read_only, idempotent)]
fn echo(
    /// The text to echo.
    text: String,
) -> String {
    text
}

mcp_runtime::main!();

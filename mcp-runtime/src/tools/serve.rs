//! Serving `tools/list` (paginated, pre-serialized) and `tools/call`.

use crate::context::Context;
use crate::dispatch::Head;
use crate::error::McpError;
use crate::mrtr::Outcome;
use crate::protocol::CallToolResult;
use crate::server::{Router, Server};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;

#[derive(Deserialize)]
struct ListParams {
    #[serde(default)]
    cursor: Option<String>,
}

/// Answers a list request: the page its cursor names, of pre-serialized items.
pub(crate) fn list_page(
    server: &Server,
    key: &str,
    items: &[String],
    params: Option<&RawValue>,
) -> Result<Vec<u8>, McpError> {
    let p: ListParams = crate::dispatch::parse_params(params)?;
    write_page(server, key, items, p.cursor.as_deref())
}

/// Decodes an opaque list cursor into an offset.
pub(crate) fn decode_cursor(cursor: Option<&str>, len: usize) -> Result<usize, McpError> {
    match cursor {
        None => Ok(0),
        Some(c) => c
            .strip_prefix("o")
            // Digits only: `parse` would also take a sign.
            .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|n| *n <= len)
            .ok_or_else(|| McpError::invalid_params(format!("Invalid params: unknown cursor {c:?}"))),
    }
}

/// Encodes an offset as an opaque cursor.
pub(crate) fn encode_cursor(offset: usize) -> String {
    format!("o{offset}")
}

/// Writes one page of a pre-serialized list result.
pub(crate) fn write_page(
    server: &Server,
    key: &str,
    items: &[String],
    cursor: Option<&str>,
) -> Result<Vec<u8>, McpError> {
    let config = server.config();
    let start = decode_cursor(cursor, items.len())?;
    let end = start.saturating_add(config.page_size).min(items.len());
    let page = &items[start..end];
    let mut out = Vec::with_capacity(64 + page.iter().map(|s| s.len() + 1).sum::<usize>());
    out.extend_from_slice(b"{\"resultType\":\"complete\",\"");
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(b"\":[");
    for (i, item) in page.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(item.as_bytes());
    }
    out.push(b']');
    if end < items.len() {
        out.extend_from_slice(b",\"nextCursor\":\"");
        out.extend_from_slice(encode_cursor(end).as_bytes());
        out.push(b'"');
    }
    let scope = match config.list_cache.scope {
        crate::protocol::CacheScope::Public => "public",
        crate::protocol::CacheScope::Private => "private",
    };
    out.extend_from_slice(format!(",\"ttlMs\":{},\"cacheScope\":\"{scope}\"}}", config.list_cache.ttl_ms).as_bytes());
    server.append_meta(&mut out);
    Ok(out)
}

/// `tools/list`.
pub(crate) fn list(server: &Server, router: &Router, params: Option<&RawValue>) -> Result<Vec<u8>, McpError> {
    list_page(server, "tools", &router.tools_json, params)
}

/// The params of `tools/call` this module reads.
pub(crate) struct CallParams<'a> {
    name: Cow<'a, str>,
    arguments: Option<&'a RawValue>,
}

impl<'a> CallParams<'a> {
    /// The name and arguments, from the request's one parse.
    pub(crate) fn from_head(head: &Head<'a>) -> Result<Self, McpError> {
        Ok(CallParams {
            name: Head::required(head.name, "name")?,
            arguments: head.arguments,
        })
    }

    /// The tool's name.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }
}

/// `tools/call`: finds the tool, runs it, catches a panic.
pub(crate) async fn call(
    router: &Router,
    params: &CallParams<'_>,
    headers: &crate::headers::HeaderFacts,
    ctx: Context,
) -> Result<Outcome<CallToolResult>, McpError> {
    let Some(&index) = router.tool_index.get(params.name()) else {
        return Err(McpError::invalid_params(format!("Unknown tool: {}", params.name)));
    };
    let entry = &router.tools[index];
    let args = match params.arguments {
        Some(raw) if raw.get() == "null" => None,
        Some(raw) if !raw.get().starts_with('{') => {
            return Err(McpError::invalid_params("Invalid params: arguments must be an object"));
        }
        other => other,
    };
    headers.check_params(&entry.header_params, args.map(RawValue::get))?;
    check_required(&entry.requires, ctx.client_capabilities())?;
    if entry.constrained {
        let given: serde_json::Value = match args {
            Some(raw) => serde_json::from_str(raw.get()).unwrap_or_default(),
            None => serde_json::Value::Object(Default::default()),
        };
        if let Err(why) = super::validate::check(&entry.tool.input_schema, &given, "arguments") {
            let text = format!("Invalid arguments for tool `{}`: {why}", params.name);
            return Ok(Outcome::Complete(super::output::error_result(text)));
        }
    }
    let result = crate::panic::run_caught(|| (entry.handler)(args, ctx)).await;
    match result {
        Ok(outcome) => outcome,
        Err(message) => {
            tracing::error!(tool = %params.name, "tool handler panicked: {message}");
            Err(McpError::internal(format!(
                "Internal error: tool `{}` panicked",
                params.name
            )))
        }
    }
}

/// -32021 unless the client declared every capability in `required`.
pub(crate) fn check_required(required: &[String], caps: &crate::protocol::ClientCapabilities) -> Result<(), McpError> {
    let mut missing = serde_json::Map::new();
    for name in required {
        let has = match name.as_str() {
            "sampling" => caps.sampling.is_some(),
            "elicitation" => caps.elicitation.is_some(),
            "roots" => caps.roots.is_some(),
            _ => true,
        };
        if !has {
            missing.insert(name.clone(), serde_json::Value::Object(Default::default()));
        }
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(McpError::missing_capability(serde_json::Value::Object(missing)))
    }
}

//! The list methods' pages: an opaque cursor names an offset into the
//! catalog's pre-serialized items, and a page is written by concatenation.

use crate::error::McpError;
use crate::server::Server;
use serde::Deserialize;
use serde_json::value::RawValue;

#[derive(Deserialize)]
struct ListParams {
    #[serde(default)]
    cursor: Option<String>,
}

/// Answers a list request: the page its cursor names, of pre-serialized
/// items; `private`: the items differ by caller, so the page says
/// `cacheScope: "private"` whatever the server's list caching hints say.
pub(crate) fn list_page<S: AsRef<str>>(
    server: &Server,
    key: &str,
    items: &[S],
    params: Option<&RawValue>,
    private: bool,
) -> Result<Vec<u8>, McpError> {
    let p: ListParams = crate::jsonrpc::parse_params(params)?;
    write_page(server, key, items, p.cursor.as_deref(), private)
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
pub(crate) fn write_page<S: AsRef<str>>(
    server: &Server,
    key: &str,
    items: &[S],
    cursor: Option<&str>,
    private: bool,
) -> Result<Vec<u8>, McpError> {
    let config = server.config();
    let start = decode_cursor(cursor, items.len())?;
    let end = start.saturating_add(config.page_size).min(items.len());
    let page = &items[start..end];
    let mut out = Vec::with_capacity(64 + page.iter().map(|s| s.as_ref().len() + 1).sum::<usize>());
    out.extend_from_slice(b"{\"resultType\":\"complete\",\"");
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(b"\":[");
    for (i, item) in page.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(item.as_ref().as_bytes());
    }
    out.push(b']');
    if end < items.len() {
        out.extend_from_slice(b",\"nextCursor\":\"");
        out.extend_from_slice(encode_cursor(end).as_bytes());
        out.push(b'"');
    }
    let scope = match config.list_cache.scope {
        _ if private => "private",
        crate::protocol::CacheScope::Public => "public",
        crate::protocol::CacheScope::Private => "private",
    };
    out.extend_from_slice(format!(",\"ttlMs\":{},\"cacheScope\":\"{scope}\"}}", config.list_cache.ttl_ms).as_bytes());
    super::append_meta(server, &mut out);
    Ok(out)
}

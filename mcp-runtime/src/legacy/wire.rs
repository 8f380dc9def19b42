//! The legacy wire: results without 2026-only fields.

use serde_json::Value;

/// Removes the fields 2025-11-25 does not know from a serialized result
/// object of `method`: `resultType`, `ttlMs`, `cacheScope`,
/// `_meta.io.modelcontextprotocol/serverInfo`; and, for tools, a
/// `structuredContent` or `outputSchema` that is not an object (2025-11-25
/// requires objects there).
pub fn strip(method: &str, result: &[u8]) -> Vec<u8> {
    let Ok(Value::Object(mut obj)) = serde_json::from_slice::<Value>(result) else {
        return result.to_vec();
    };
    obj.remove("resultType");
    obj.remove("ttlMs");
    obj.remove("cacheScope");
    if let Some(Value::Object(meta)) = obj.get_mut("_meta") {
        meta.remove(crate::protocol::META_SERVER_INFO);
        if meta.is_empty() {
            obj.remove("_meta");
        }
    }
    match method {
        "tools/call" if obj.get("structuredContent").is_some_and(|v| !v.is_object()) => {
            obj.remove("structuredContent");
        }
        "tools/list" => {
            if let Some(Value::Array(tools)) = obj.get_mut("tools") {
                for tool in tools.iter_mut().filter_map(Value::as_object_mut) {
                    let object_schema = tool
                        .get("outputSchema")
                        .is_some_and(|s| s.get("type") == Some(&Value::from("object")));
                    if !object_schema {
                        tool.remove("outputSchema");
                    }
                }
            }
        }
        _ => {}
    }
    serde_json::to_vec(&Value::Object(obj)).unwrap_or_else(|_| result.to_vec())
}

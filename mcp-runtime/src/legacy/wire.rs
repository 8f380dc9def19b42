//! The legacy wire: results without 2026-only fields.

use serde_json::Value;

/// Removes the fields 2025-11-25 does not know from a serialized result
/// object of `method`, and adds what it has instead: a task is
/// `{"task": {..}}`, a task tool is listed with its `execution`. Removed:
/// `resultType`, `ttlMs`, `cacheScope`,
/// `_meta.io.modelcontextprotocol/serverInfo`; and, for tools, a
/// `structuredContent` or `outputSchema` that is not an object (2025-11-25
/// requires objects there).
pub(crate) fn strip(method: &str, result: &[u8], catalog: &crate::server::Catalog) -> Vec<u8> {
    let Ok(Value::Object(mut obj)) = serde_json::from_slice::<Value>(result) else {
        return result.to_vec();
    };
    // A call that became a task: 2025-11-25's `CreateTaskResult`.
    if method == "tools/call" && obj.get("resultType") == Some(&Value::from("task")) {
        obj.remove("resultType");
        obj.remove("_meta");
        let created = crate::tasks::legacy::created(obj);
        return serde_json::to_vec(&created).unwrap_or_else(|_| result.to_vec());
    }
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
                    if catalog.has_tasks {
                        execution(tool, catalog);
                    }
                }
            }
        }
        _ => {}
    }
    serde_json::to_vec(&Value::Object(obj)).unwrap_or_else(|_| result.to_vec())
}

/// A task tool's `execution.taskSupport`, as 2025-11-25 lists it.
fn execution(tool: &mut serde_json::Map<String, Value>, catalog: &crate::server::Catalog) {
    let Some(name) = tool.get("name").and_then(Value::as_str) else {
        return;
    };
    let Some(i) = catalog.tool_at(name) else {
        return;
    };
    let support = match catalog.tools[i].task.mode {
        crate::tasks::TaskMode::Never => return,
        crate::tasks::TaskMode::Optional => "optional",
        crate::tasks::TaskMode::Required => "required",
    };
    tool.insert("execution".into(), serde_json::json!({ "taskSupport": support }));
}

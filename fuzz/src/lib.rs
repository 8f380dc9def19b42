//! Oracles shared by the fuzz targets: what every message the runtime
//! emits must look like. A failed check panics, which libFuzzer reports as
//! a crash.

use mcp_runtime::protocol::RequestId;
use serde_json::Value;

/// Checks that `bytes` are exactly one JSON-RPC 2.0 message on one line
/// (compact JSON object, no newline inside, `"jsonrpc": "2.0"`, and the
/// shape of a request, a notification, a result or an error), and returns it.
pub fn check_message(bytes: &[u8]) -> Value {
    let shown = String::from_utf8_lossy(bytes);
    assert!(
        !bytes.contains(&b'\n') && !bytes.contains(&b'\r'),
        "a message spans lines: {shown}"
    );
    let value: Value =
        serde_json::from_slice(bytes).unwrap_or_else(|e| panic!("an emitted message is not JSON ({e}): {shown}"));
    let obj = value
        .as_object()
        .unwrap_or_else(|| panic!("an emitted message is not an object: {shown}"));
    assert_eq!(
        obj.get("jsonrpc"),
        Some(&Value::from("2.0")),
        "jsonrpc is not \"2.0\": {shown}"
    );
    let has = |k: &str| obj.contains_key(k);
    if has("method") {
        assert!(obj["method"].is_string(), "method is not a string: {shown}");
        assert!(
            !has("result") && !has("error"),
            "a request with a result or error: {shown}"
        );
        if let Some(p) = obj.get("params") {
            assert!(p.is_object(), "params is not an object: {shown}");
        }
        if let Some(id) = obj.get("id") {
            check_id(id, &shown);
        }
    } else {
        match (obj.get("result"), obj.get("error")) {
            (Some(result), None) => {
                assert!(result.is_object(), "a result that is not an object: {shown}");
                check_id(obj.get("id").unwrap_or(&Value::Null), &shown);
            }
            (None, Some(error)) => {
                let code = error["code"].as_i64();
                assert!(code.is_some(), "an error without an integer code: {shown}");
                assert!(error["message"].is_string(), "an error without a message: {shown}");
                if let Some(id) = obj.get("id") {
                    check_id(id, &shown);
                }
            }
            _ => panic!("neither a request, a result nor an error: {shown}"),
        }
    }
    let keys: &[&str] = &["jsonrpc", "id", "method", "params", "result", "error"];
    assert!(
        obj.keys().all(|k| keys.contains(&k.as_str())),
        "an unexpected top-level member: {shown}"
    );
    value
}

fn check_id(id: &Value, shown: &str) {
    assert!(
        id.is_string() || id.as_i64().is_some(),
        "id is not a string or an integer: {shown}"
    );
}

/// The JSON value a request id is written as.
pub fn id_value(id: &RequestId) -> Value {
    serde_json::to_value(id).expect("an id serializes")
}

/// Checks an encoded error response and returns its code.
pub fn check_error(bytes: &[u8], id: Option<&RequestId>) -> i64 {
    let v = check_message(bytes);
    let code = v["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error: {v}"));
    assert_eq!(v.get("id"), id.map(id_value).as_ref(), "the error's id: {v}");
    code
}

/// The error codes the runtime may answer with.
pub const CODES: &[i64] = &[-32700, -32600, -32601, -32602, -32603, -32020, -32021, -32022];

/// A current-thread tokio runtime with its clock paused: timers fire as soon
/// as nothing else can run, so a target's runs are fast and deterministic.
pub fn paused_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .expect("a tokio runtime")
}

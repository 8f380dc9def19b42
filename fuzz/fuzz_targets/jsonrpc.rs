//! JSON-RPC framing: `jsonrpc::parse` on arbitrary bytes, then, for a
//! request, the dispatcher's one pass over its params (`dispatch::Head`,
//! through `__private::engine`) and `meta::validate` of its `_meta`, over
//! stdio and over HTTP with headers that mirror the body.
//!
//! Invariants: no panic; every error encodes as one line of valid JSON-RPC;
//! the documented classification (not JSON: -32700 without an id; JSON but
//! not a message: -32600) agrees with serde_json's own reading of the bytes;
//! what `parse` accepts says what the JSON says; headers that repeat the
//! body never turn an accepted request into a header mismatch.
#![no_main]

use base64::Engine;
use libfuzzer_sys::fuzz_target;
use mcp_runtime::ErrorCode;
use mcp_runtime::__private::engine::head::{head_required, head_string, read_head};
use mcp_runtime::__private::engine::headers::HeaderFacts;
use mcp_runtime::__private::engine::jsonrpc::{self, Message};
use mcp_runtime::__private::engine::meta;
use mcp_runtime::McpError;
use mcp_runtime_fuzz::{check_error, check_message, id_value};
use serde_json::value::RawValue;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    // serde_json's own reading of the bytes (`None`: not JSON, or beyond
    // serde_json's limits such as its nesting depth of 128).
    let json: Option<Value> = serde_json::from_slice(data).ok();
    match jsonrpc::parse(data) {
        Err(rejected) => {
            let out = jsonrpc::encode_error(rejected.id.as_ref(), &rejected.error);
            let code = check_error(&out, rejected.id.as_ref());
            assert!(code == -32700 || code == -32600, "parse rejected with {code}");
            if code == -32700 {
                assert!(rejected.id.is_none(), "a parse error with an id");
                assert!(
                    json.is_none(),
                    "valid JSON rejected as a parse error: {:?}",
                    rejected.error
                );
            }
        }
        Ok(Message::Request(request)) => {
            if let Some(v) = &json {
                assert_eq!(v["jsonrpc"], "2.0");
                assert_eq!(v["id"], id_value(&request.id), "the id read");
                assert_eq!(v["method"].as_str(), Some(&*request.method), "the method read");
                check_params(v, request.params.as_deref());
            }
            let ok = jsonrpc::encode_result_raw(&request.id, br#"{"x":[1,"\n"]}"#);
            let v = check_message(&ok);
            assert_eq!(v["id"], id_value(&request.id));
            assert_eq!(v["result"]["x"][1], "\n");
            let not_found = jsonrpc::encode_error(Some(&request.id), &McpError::method_not_found(&request.method));
            assert_eq!(check_error(&not_found, Some(&request.id)), -32601);
            let echo = jsonrpc::encode_request(&request.id, &request.method, &serde_json::json!({}));
            assert_eq!(check_message(&echo)["method"].as_str(), Some(&*request.method));
            one_pass(&request.method, request.params.as_deref());
        }
        Ok(Message::Notification(n)) => {
            if let Some(v) = &json {
                assert!(v.get("id").is_none(), "a notification with an id: {v}");
                assert_eq!(v["method"].as_str(), Some(&*n.method));
                check_params(v, n.params.as_deref());
            }
            let out = jsonrpc::encode_notification(&n.method, &serde_json::json!({}));
            check_message(&out);
            one_pass(&n.method, n.params.as_deref());
        }
        Ok(Message::Response(r)) => {
            if let Some(v) = &json {
                assert!(v.get("method").is_none(), "a response with a method: {v}");
                // One without a usable id (missing, null, neither a string nor
                // an integer in range) answers no request: its id is "".
                let usable = v
                    .get("id")
                    .is_some_and(|id| id.is_string() || id.is_i64());
                if usable {
                    assert_eq!(v["id"], id_value(&r.id));
                } else {
                    assert_eq!(id_value(&r.id), Value::String(String::new()), "{v}");
                }
                let (key, raw) = match &r.outcome {
                    Ok(raw) => ("result", raw),
                    Err(raw) => ("error", raw),
                };
                let read: Value = serde_json::from_str(raw.get()).expect("a raw value is JSON");
                assert_eq!(v[key], read, "the {key} read");
            }
        }
    }
});

/// `params` is absent or the object the JSON holds.
fn check_params(v: &Value, params: Option<&RawValue>) {
    match params {
        None => assert!(v.get("params").is_none(), "params dropped: {v}"),
        Some(raw) => {
            let read: Value = serde_json::from_str(raw.get()).expect("a raw value is JSON");
            assert!(read.is_object());
            assert_eq!(v["params"], read, "the params read");
        }
    }
}

/// The dispatcher's one pass over the params, and `_meta` validation.
fn one_pass(method: &str, params: Option<&RawValue>) {
    let head = match read_head(params) {
        Ok(head) => head,
        Err(e) => {
            assert_eq!(e.code(), ErrorCode::INVALID_PARAMS);
            check_error(&jsonrpc::encode_error(None, &e), None);
            return;
        }
    };
    assert_eq!(
        meta::has_protocol_version(params),
        meta::meta_has_version(head.meta),
        "has_protocol_version disagrees with the one pass"
    );
    for (raw, field) in [(head.name, "name"), (head.uri, "uri")] {
        let optional = head_string(raw, field);
        let required = head_required(raw, field);
        match (&optional, &required) {
            (Ok(Some(a)), Ok(b)) => {
                assert_eq!(a, b);
                let decoded: String = serde_json::from_str(raw.unwrap().get()).expect("a JSON string");
                assert_eq!(*a, decoded, "the {field} read");
            }
            (Ok(None), Err(e)) => assert!(raw.is_none() && e.code() == ErrorCode::INVALID_PARAMS),
            (Err(a), Err(b)) => assert_eq!(
                (a.code(), b.code()),
                (ErrorCode::INVALID_PARAMS, ErrorCode::INVALID_PARAMS)
            ),
            _ => panic!("Head::string and Head::required disagree: {optional:?} / {required:?}"),
        }
    }
    let routing = head.routing_name(method);

    // Over stdio: no header facts.
    let plain = meta::validate(head.meta, &HeaderFacts::default(), || {
        panic!("routing checked on stdio")
    });
    match &plain {
        Ok(m) => assert!(meta::SUPPORTED_VERSIONS.contains(&&*m.protocol_version)),
        Err(e) => {
            check_error(&jsonrpc::encode_error(None, e), None);
            assert!(
                [ErrorCode::INVALID_PARAMS, ErrorCode::UNSUPPORTED_PROTOCOL_VERSION].contains(&e.code()),
                "{e:?}"
            );
        }
    }

    // Over HTTP, with headers that say what the body says: never a mismatch.
    // The body is read here with serde_json's `Value`, which refuses what the
    // one pass rightly skips (a number like 70E814 in an unknown field): then
    // there is nothing to mirror.
    let parsed = match head.meta.and_then(|_| params) {
        None => None,
        Some(p) => match serde_json::from_str::<Value>(p.get()) {
            Ok(v) => Some(v),
            Err(_) => return,
        },
    };
    let version = parsed.and_then(|p| {
        p["_meta"][mcp_runtime::protocol::META_PROTOCOL_VERSION]
            .as_str()
            .map(str::to_owned)
    });
    let mut map = http::HeaderMap::new();
    if let Some(v) = &version {
        let Ok(value) = http::HeaderValue::from_str(v) else {
            return;
        };
        // A value a header cannot carry as visible text is not mirrored.
        if v.trim() != v || value.to_str().is_err() {
            return;
        }
        map.insert("mcp-protocol-version", value);
    }
    if method.trim() != method {
        return;
    }
    let Ok(m) = http::HeaderValue::from_str(method) else {
        return;
    };
    if m.to_str().is_err() {
        return;
    }
    map.insert("mcp-method", m);
    if let Some(name) = &routing {
        let sentinel = format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode(name.as_bytes())
        );
        map.insert(
            "mcp-name",
            http::HeaderValue::from_str(&sentinel).expect("base64 is a header value"),
        );
    }
    let facts = HeaderFacts::http(map);
    facts
        .check_routing(method, routing.as_deref())
        .expect("headers mirroring the body are routed");
    let over_http = meta::validate(head.meta, &facts, || facts.check_routing(method, routing.as_deref()));
    match (&plain, &over_http) {
        (Ok(a), Ok(b)) => assert_eq!(a.protocol_version, b.protocol_version),
        (Err(a), Err(b)) => assert_eq!(a.code(), b.code(), "{a:?} / {b:?}"),
        _ => panic!("stdio and mirrored HTTP headers disagree: {plain:?} / {over_http:?}"),
    }
}

//! HTTP header facts against the body: `HeaderFacts::http` over arbitrary
//! header names and values, then `check_repeated`, `check_routing`,
//! `check_params`, `decode_value`, and `meta::validate` with those headers.
//!
//! Input, one field a line (`\n`; missing lines are empty):
//!
//! ```text
//! tools/call                      the body's method
//! get_weather                     the body's name (none if empty)
//! {"region":"eu","n":3}           the call's arguments (any text)
//! {"io.modelcontextprotocol/...}  the request's _meta (any text)
//! region=Region,n=N               x-mcp-header parameters (property=header)
//! Mcp-Method: tools/call          then headers, `name: value` (any bytes)
//! ```
//!
//! Invariants: no panic; every error is -32020 (header mismatch; -32602 or
//! -32022 from `_meta` validation) and encodes as one line of valid
//! JSON-RPC; an accepted routing or `_meta` means the headers say what the
//! body says; `decode_value` keeps literals (trimmed) and decodes exactly
//! the base64 sentinel.
#![no_main]

use base64::Engine;
use libfuzzer_sys::fuzz_target;
use mcp_runtime::ErrorCode;
use mcp_runtime::__private::engine::headers::{decode_value, HeaderFacts};
use mcp_runtime::__private::engine::jsonrpc;
use mcp_runtime::__private::engine::meta::{self, MetaSlot};
use mcp_runtime_fuzz::check_error;

fn mismatch(e: &mcp_runtime::McpError) {
    assert_eq!(e.code(), ErrorCode::HEADER_MISMATCH, "{e:?}");
    check_error(&jsonrpc::encode_error(None, e), None);
}

fuzz_target!(|data: &[u8]| {
    let mut lines = data.split(|&b| b == b'\n');
    let mut field = || String::from_utf8_lossy(lines.next().unwrap_or_default()).into_owned();
    let method = field();
    let name = Some(field()).filter(|n| !n.is_empty());
    let arguments = Some(field()).filter(|a| !a.is_empty());
    let meta_text = field();
    // `a.b=H`: the parameter at the properties path a, b.
    let declared: Vec<(Vec<String>, String)> = field()
        .split(',')
        .filter_map(|pair| pair.split_once('='))
        .map(|(p, h)| (p.split('.').map(str::to_owned).collect(), h.to_owned()))
        .collect();
    let mut map = http::HeaderMap::new();
    for line in lines {
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            continue;
        };
        let (Ok(name), Ok(value)) = (
            http::HeaderName::from_bytes(&line[..colon]),
            http::HeaderValue::from_bytes(&line[colon + 1..]),
        ) else {
            continue;
        };
        map.append(name, value);
    }
    let facts = HeaderFacts::http(map.clone());
    let stdio = HeaderFacts::default();
    assert!(facts.is_http() && !stdio.is_http());

    // decode_value on every header value and on the fields.
    for value in map.values() {
        check_decode(&mcp_runtime::__private::engine::headers::text(value));
    }
    check_decode(&method);
    check_decode(name.as_deref().unwrap_or_default());

    // Repeats.
    if let Err(e) = facts.check_repeated() {
        mismatch(&e);
        assert!(map.len() > map.keys_len(), "a repeat reported where none is");
    }
    assert!(stdio.check_repeated().is_ok());

    // Routing.
    let name = name.as_deref();
    assert!(stdio.check_routing(&method, name).is_ok());
    match facts.check_routing(&method, name) {
        Ok(()) => {
            let m = facts.get("mcp-method").expect("routing accepted without Mcp-Method");
            assert_eq!(m.trim(), method, "routing accepted another method");
            if let Some(expected) = name {
                let raw = facts.get("mcp-name").expect("routing accepted without Mcp-Name");
                assert_eq!(decode_value(&raw).expect("accepted, so decodable"), expected);
            }
        }
        Err(e) => mismatch(&e),
    }

    // Mcp-Param-* against the arguments.
    let arguments = arguments.as_deref();
    assert!(stdio.check_params(&declared, arguments).is_ok());
    assert!(facts.check_params(&[], arguments).is_ok());
    match facts.check_params(&declared, arguments) {
        Ok(()) => check_params_agree(&facts, &declared, arguments),
        Err(e) => mismatch(&e),
    }

    // `_meta` validation with these headers.
    #[derive(serde::Deserialize)]
    struct Params<'a> {
        #[serde(rename = "_meta", borrow, default)]
        meta: Option<MetaSlot<'a>>,
    }
    let params = format!(r#"{{"_meta":{meta_text}}}"#);
    if let Ok(p) = serde_json::from_str::<Params<'_>>(&params) {
        let routing = || facts.check_routing(&method, name);
        match meta::validate(p.meta, &facts, routing) {
            Ok(m) => {
                assert!(meta::SUPPORTED_VERSIONS.contains(&&*m.protocol_version));
                let header = facts
                    .get("mcp-protocol-version")
                    .expect("validated without the version header");
                assert_eq!(header.trim(), m.protocol_version);
                assert!(facts.check_routing(&method, name).is_ok());
                assert!(facts.check_repeated().is_ok());
            }
            Err(e) => {
                check_error(&jsonrpc::encode_error(None, &e), None);
                let codes = [
                    ErrorCode::INVALID_PARAMS,
                    ErrorCode::HEADER_MISMATCH,
                    ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
                ];
                assert!(codes.contains(&e.code()), "{e:?}");
            }
        }
        // Without headers (stdio) the same `_meta` never fails on headers.
        if let Err(e) = meta::validate(p.meta, &stdio, || panic!("routing checked on stdio")) {
            assert_ne!(e.code(), ErrorCode::HEADER_MISMATCH, "{e:?}");
        }
    }
});

/// An accepted `Mcp-Param-*` check: each declared argument that is a
/// string, number or boolean has its header, with the same value.
fn check_params_agree(facts: &HeaderFacts, declared: &[(Vec<String>, String)], arguments: Option<&str>) {
    let args: serde_json::Value = arguments
        .and_then(|a| serde_json::from_str(a).ok())
        .unwrap_or_default();
    for (path, header) in declared {
        let sent = facts.get(format!("mcp-param-{header}").as_str());
        let at = path.iter().try_fold(&args, |v, key| v.get(key));
        let body = match at {
            Some(serde_json::Value::String(s)) => Some(s.clone()),
            Some(serde_json::Value::Bool(b)) => Some(b.to_string()),
            Some(serde_json::Value::Number(n)) => Some(n.to_string()),
            _ => None,
        };
        match (body, sent) {
            (None, None) => {}
            (Some(body), Some(raw)) => {
                let sent = decode_value(&raw).expect("accepted, so decodable");
                let numeric = at
                    .and_then(serde_json::Value::as_f64)
                    .is_some_and(|n| sent.trim().parse::<f64>().is_ok_and(|h| h == n));
                assert!(
                    sent == body || numeric,
                    "Mcp-Param-{header} {sent:?} accepted for {body:?}"
                );
            }
            (body, sent) => panic!("Mcp-Param-{header} accepted: body {body:?}, header {sent:?}"),
        }
    }
}

fn check_decode(raw: &str) {
    let trimmed = raw.trim();
    let inner = trimmed.strip_prefix("=?base64?").and_then(|v| v.strip_suffix("?="));
    match (decode_value(raw), inner) {
        (Ok(v), None) => assert_eq!(v, trimmed, "a literal is kept as it is, trimmed"),
        (Ok(v), Some(inner)) => {
            let again = base64::engine::general_purpose::STANDARD.encode(v.as_bytes());
            assert_eq!(again, inner, "the sentinel decodes to exactly what encodes back to it");
        }
        (Err(e), Some(_)) => mismatch(&e),
        (Err(e), None) => panic!("a literal failed to decode: {e:?}"),
    }
}

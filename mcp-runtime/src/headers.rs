//! Header facts (Streamable HTTP, SEP-2243): what the transport read from
//! the HTTP headers, checked against the body by the dispatcher.
//!
//! The transport only collects the headers; every comparison is here, so
//! that the error order the spec implies is decided in one place. Values
//! are compared case-sensitively after trimming surrounding whitespace and
//! decoding the base64 sentinel `=?base64?<standard base64, padded>?=`;
//! a value that does not have the sentinel's exact shape is a literal.

use crate::error::McpError;
use base64::Engine;
use http::{HeaderMap, HeaderName};
use serde_json::Value;
use std::borrow::Cow;

/// The headers of one HTTP request, kept as the transport received them
/// (moved, not copied: the request's context owns them, and the handler's
/// [`RequestHeaders`](crate::RequestHeaders) extractor reads them there;
/// the `Authorization` header already taken out), and read by the checks
/// below. On stdio there are none.
#[derive(Debug, Clone, Default)]
pub struct HeaderFacts {
    map: Option<HeaderMap>,
}

/// `MCP-Protocol-Version`.
pub(crate) static PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
static METHOD: HeaderName = HeaderName::from_static("mcp-method");
static NAME: HeaderName = HeaderName::from_static("mcp-name");

impl HeaderFacts {
    /// The facts of a request that came with these HTTP headers.
    pub fn http(headers: HeaderMap) -> Self {
        HeaderFacts { map: Some(headers) }
    }

    /// The headers, if the request came over HTTP.
    pub(crate) fn map(&self) -> Option<&HeaderMap> {
        self.map.as_ref()
    }

    /// Whether the request came with HTTP headers at all.
    pub fn is_http(&self) -> bool {
        self.map.is_some()
    }

    /// Checks that no standard MCP header (`MCP-Protocol-Version`,
    /// `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`) came more than once with
    /// different values: a gateway may have read the other copy, so taking
    /// the first one would not be safe.
    pub fn check_repeated(&self) -> Result<(), McpError> {
        let Some(map) = self.map.as_ref() else { return Ok(()) };
        // The usual case: no header name repeats at all.
        if map.len() == map.keys_len() {
            return Ok(());
        }
        for name in map.keys() {
            let n = name.as_str();
            let standard = n == PROTOCOL_VERSION.as_str()
                || n == METHOD.as_str()
                || n == NAME.as_str()
                || n.starts_with("mcp-param-");
            if !standard {
                continue;
            }
            let mut values = map.get_all(name).iter().map(|v| v.as_bytes().trim_ascii());
            if let Some(first) = values.next() {
                if values.any(|v| v != first) {
                    return Err(mismatch(&format!(
                        "the {n} header was sent more than once with different values"
                    )));
                }
            }
        }
        Ok(())
    }

    /// A header's value as text (invalid UTF-8 replaced), if it was sent.
    pub fn get(&self, name: impl http::header::AsHeaderName) -> Option<Cow<'_, str>> {
        self.map.as_ref()?.get(name).map(text)
    }

    /// A routing header's value (`Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`),
    /// if it was sent: visible ASCII only, since other text travels
    /// base64-encoded (`=?base64?...?=`); a value with other bytes is
    /// malformed.
    fn routing<K: http::header::AsHeaderName + std::fmt::Display + Copy>(
        &self,
        name: K,
    ) -> Result<Option<&str>, McpError> {
        let Some(value) = self.map.as_ref().and_then(|map| map.get(name)) else {
            return Ok(None);
        };
        value.to_str().map(Some).map_err(|_| {
            mismatch(&format!(
                "the {name} header has characters other than visible ASCII (send such text as =?base64?...?=)"
            ))
        })
    }
}

/// A header value as text: borrowed when it is visible ASCII (the usual
/// case, checked fast), else with invalid UTF-8 replaced.
pub fn text(value: &http::HeaderValue) -> Cow<'_, str> {
    match value.to_str() {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(value.as_bytes()),
    }
}

/// Decodes a header value: trims it, then decodes the base64 sentinel.
pub fn decode_value(raw: &str) -> Result<Cow<'_, str>, McpError> {
    let value = raw.trim();
    let Some(inner) = value.strip_prefix("=?base64?").and_then(|v| v.strip_suffix("?=")) else {
        return Ok(Cow::Borrowed(value));
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(inner)
        .map_err(|_| McpError::header_mismatch("Header mismatch: malformed base64 header value"))?;
    String::from_utf8(bytes)
        .map(Cow::Owned)
        .map_err(|_| McpError::header_mismatch("Header mismatch: base64 header value is not UTF-8"))
}

#[cold]
fn mismatch(what: &str) -> McpError {
    McpError::header_mismatch(format!("Header mismatch: {what}"))
}

impl HeaderFacts {
    /// Checks `Mcp-Method` against the body's method, and `Mcp-Name`
    /// against `name` (tools/call, prompts/get) or `uri` (resources/read).
    pub fn check_routing(&self, method: &str, name: Option<&str>) -> Result<(), McpError> {
        if !self.is_http() {
            return Ok(());
        }
        match self.routing(&METHOD)? {
            None => return Err(mismatch("the Mcp-Method header is required")),
            Some(m) if m.trim() != method => {
                return Err(mismatch(&format!(
                    "Mcp-Method {:?} does not match the body's method {method:?}",
                    m.trim()
                )))
            }
            Some(_) => {}
        }
        if let Some(expected) = name {
            match self.routing(&NAME)? {
                None => return Err(mismatch("the Mcp-Name header is required for this method")),
                Some(raw) => {
                    let got = decode_value(raw)?;
                    if got != expected {
                        return Err(mismatch(&format!(
                            "Mcp-Name {got:?} does not match the body's {expected:?}"
                        )));
                    }
                }
            }
        }
        Ok(())
    }

    /// Checks the `Mcp-Param-*` headers of the `x-mcp-header` parameters
    /// `(property, header name)` against the call's arguments.
    pub fn check_params(&self, declared: &[HeaderParam], arguments: Option<&str>) -> Result<(), McpError> {
        if !self.is_http() || declared.is_empty() {
            return Ok(());
        }
        let args: Value = arguments
            .and_then(|a| serde_json::from_str(a).ok())
            .unwrap_or(Value::Null);
        for (path, header) in declared {
            let property = path.join(".");
            // Header-name lookups are case-insensitive.
            let sent = self.routing(format!("mcp-param-{header}").as_str())?;
            let at = argument(&args, path);
            let body = match at {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(s.clone()),
                Some(Value::Number(n)) => Some(n.to_string()),
                Some(Value::Bool(b)) => Some(b.to_string()),
                Some(_) => None,
            };
            match (body, sent) {
                (None, None) => {}
                (Some(_), None) => return Err(mismatch(&format!("the Mcp-Param-{header} header is required"))),
                (None, Some(_)) => {
                    return Err(mismatch(&format!(
                        "Mcp-Param-{header} is set but argument `{property}` is not"
                    )))
                }
                (Some(body), Some(raw)) => {
                    let sent = decode_value(raw)?;
                    let numeric_match = match at {
                        Some(Value::Number(n)) => same_number(n, sent.trim()),
                        _ => false,
                    };
                    if sent != body && !numeric_match {
                        return Err(mismatch(&format!(
                            "Mcp-Param-{header} does not match argument `{property}`"
                        )));
                    }
                }
            }
        }
        Ok(())
    }
}

/// Whether a header's text is the number `n`: an integer exactly (a 64-bit
/// id must not match its neighbour, as it would once both were doubles), or
/// `42.0` for 42 where a double holds the integer exactly; a fraction as a
/// double.
fn same_number(n: &serde_json::Number, sent: &str) -> bool {
    let integer = n.as_i64().map(i128::from).or_else(|| n.as_u64().map(i128::from));
    match integer {
        Some(i) => match sent.parse::<i128>() {
            Ok(h) => h == i && !sent.starts_with('+'),
            Err(_) => {
                const EXACT: i128 = crate::protocol::EXACT_INTEGER as i128;
                (-EXACT..=EXACT).contains(&i) && sent.parse::<f64>().is_ok_and(|h| h == i as f64)
            }
        },
        None => n.as_f64().is_some_and(|f| sent.parse::<f64>().is_ok_and(|h| h == f)),
    }
}

/// An `x-mcp-header` parameter of a tool: the property's path from the
/// arguments' root (a chain of `properties` keys), and its header's name.
pub(crate) type HeaderParam = (Vec<String>, String);

/// How deep a `properties` chain is followed for `x-mcp-header`.
const MAX_PARAM_DEPTH: usize = 32;

/// The keywords under which a schema is not reached by a chain of
/// `properties` keys: an `x-mcp-header` below one of them has no single
/// place in the arguments.
const NOT_STATIC: &[&str] = &[
    "items",
    "prefixItems",
    "additionalProperties",
    "patternProperties",
    "oneOf",
    "anyOf",
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "$ref",
    "$defs",
    "definitions",
    "dependentSchemas",
    "contains",
];

/// Checks the `x-mcp-header` annotations of an input schema: only on
/// properties reached from the root by a chain of `properties` keys (at any
/// depth, not through `items`, `oneOf`, `$ref`...), of type `string`,
/// `integer` or `boolean`, header names of RFC 9110 token characters,
/// unique regardless of case. The parameters they declare, when they are
/// sound: (the property's path, the header name after `Mcp-Param-`).
pub fn check_declared(input_schema: &Value) -> Result<Vec<HeaderParam>, String> {
    let mut declared: Vec<HeaderParam> = Vec::new();
    for (path, prop) in properties(input_schema) {
        let Some(header) = prop.get("x-mcp-header") else {
            continue;
        };
        let name = path.join(".");
        let header = header.as_str().unwrap_or_default();
        let token = !header.is_empty()
            && header
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
        if !token {
            return Err(format!(
                "x-mcp-header {header:?} of `{name}` is not a header name token"
            ));
        }
        let ty = prop.get("type").and_then(Value::as_str).unwrap_or_default();
        if !matches!(ty, "string" | "integer" | "boolean") {
            return Err(format!(
                "x-mcp-header on `{name}`: only string, integer and boolean parameters can be headers"
            ));
        }
        if declared.iter().any(|(_, h)| h.eq_ignore_ascii_case(header)) {
            return Err(format!("x-mcp-header {header:?} is used twice"));
        }
        declared.push((path, header.to_owned()));
    }
    if let Some(place) = unreachable_header(input_schema, false, 0) {
        return Err(format!(
            "x-mcp-header under `{place}`: only properties reached by a chain of `properties` can be headers"
        ));
    }
    Ok(declared)
}

/// The properties of a schema reached from its root by a chain of
/// `properties` keys (up to [`MAX_PARAM_DEPTH`]), each with its path.
fn properties(schema: &Value) -> Vec<(Vec<String>, &Value)> {
    fn walk<'a>(schema: &'a Value, path: &mut Vec<String>, out: &mut Vec<(Vec<String>, &'a Value)>) {
        let Some(props) = schema.get("properties").and_then(Value::as_object) else {
            return;
        };
        for (name, prop) in props {
            path.push(name.clone());
            out.push((path.clone(), prop));
            if path.len() < MAX_PARAM_DEPTH {
                walk(prop, path, out);
            }
            path.pop();
        }
    }
    let mut out = Vec::new();
    walk(schema, &mut Vec::new(), &mut out);
    out
}

/// The keyword under which an `x-mcp-header` sits off the `properties`
/// chains of `schema` (`reached`: whether `schema` is a property on one).
fn unreachable_header(schema: &Value, reached: bool, depth: usize) -> Option<String> {
    let object = schema.as_object()?;
    if !reached && object.contains_key("x-mcp-header") {
        return Some("the schema's root".into());
    }
    if depth >= MAX_PARAM_DEPTH {
        return None;
    }
    for (key, value) in object {
        if key == "properties" {
            for prop in value.as_object().into_iter().flat_map(|m| m.values()) {
                if let Some(place) = unreachable_header(prop, reached || depth == 0, depth + 1) {
                    return Some(place);
                }
            }
        } else if NOT_STATIC.contains(&key.as_str()) && mentions_header(value, depth) {
            return Some(key.clone());
        }
    }
    None
}

/// Whether `x-mcp-header` appears anywhere in `value`.
fn mentions_header(value: &Value, depth: usize) -> bool {
    if depth >= MAX_PARAM_DEPTH * 4 {
        return false;
    }
    match value {
        Value::Object(map) => map.contains_key("x-mcp-header") || map.values().any(|v| mentions_header(v, depth + 1)),
        Value::Array(items) => items.iter().any(|v| mentions_header(v, depth + 1)),
        _ => false,
    }
}

/// The `x-mcp-header` parameters of an input schema, at any depth of its
/// `properties` chains.
pub(crate) fn declared_params(input_schema: &Value) -> Vec<HeaderParam> {
    properties(input_schema)
        .into_iter()
        .filter_map(|(path, prop)| {
            let header = prop.get("x-mcp-header")?.as_str()?;
            Some((path, header.to_owned()))
        })
        .collect()
}

/// The argument at `path` of `arguments`.
pub(crate) fn argument<'a>(arguments: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter().try_fold(arguments, |at, key| at.get(key))
}

/// The W3C trace context an HTTP request's headers carry, for a request's
/// span when its `_meta` carries none (read by the `otel` feature's spans).
#[cfg(feature = "otel")]
pub(crate) struct TraceContext<'a> {
    pub parent: &'a str,
    pub state: Option<Cow<'a, str>>,
}

/// The trace context of `map`: its `traceparent` (none when that header
/// came more than once with different values: W3C then starts a new trace),
/// and its `tracestate` headers joined with commas, as W3C joins them.
#[cfg(feature = "otel")]
pub(crate) fn trace_context(map: &HeaderMap) -> Option<TraceContext<'_>> {
    static PARENT: HeaderName = HeaderName::from_static("traceparent");
    static STATE: HeaderName = HeaderName::from_static("tracestate");
    let mut parents = map.get_all(&PARENT).iter();
    let parent = parents.next()?;
    if parents.any(|other| other != parent) {
        return None;
    }
    let mut states = map.get_all(&STATE).iter().filter_map(|v| v.to_str().ok());
    let state = states.next().map(|first| match states.next() {
        None => Cow::Borrowed(first),
        Some(second) => {
            let mut joined = format!("{first},{second}");
            for more in states {
                joined.push(',');
                joined.push_str(more);
            }
            Cow::Owned(joined)
        }
    });
    Some(TraceContext {
        parent: parent.to_str().ok()?,
        state,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(pairs: &[(&'static str, &'static str)]) -> HeaderFacts {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.append(*k, http::HeaderValue::from_static(v));
        }
        HeaderFacts::http(map)
    }

    #[test]
    fn a_repeated_standard_header_must_repeat_its_value() {
        assert!(facts(&[("mcp-method", "tools/call"), ("accept", "a"), ("accept", "b")])
            .check_repeated()
            .is_ok());
        assert!(facts(&[("mcp-name", "echo"), ("mcp-name", " echo ")])
            .check_repeated()
            .is_ok());
        for name in ["mcp-protocol-version", "mcp-method", "mcp-name", "mcp-param-region"] {
            let e = facts(&[(name, "a"), (name, "b")]).check_repeated().unwrap_err();
            assert_eq!(e.code(), crate::error::ErrorCode::HEADER_MISMATCH, "{name}");
            assert!(e.message().contains(name), "{}", e.message());
        }
    }

    #[test]
    fn a_number_header_is_the_argument_exactly() {
        let check = |header: &'static str, body: &str| {
            facts(&[("mcp-param-id", header)]).check_params(&[(vec!["id".into()], "Id".into())], Some(body))
        };
        assert!(check("42", r#"{"id":42}"#).is_ok());
        assert!(check("42.0", r#"{"id":42}"#).is_ok());
        assert!(check("9007199254740993", r#"{"id":9007199254740993}"#).is_ok());
        assert!(check("9007199254740992", r#"{"id":9007199254740993}"#).is_err());
        assert!(check("18446744073709551615", r#"{"id":18446744073709551615}"#).is_ok());
        assert!(check("+42", r#"{"id":42}"#).is_err());
        assert!(
            check("4.2e1", r#"{"id":42}"#).is_ok(),
            "the same double, in the safe range"
        );
        assert!(check("0.5", r#"{"id":0.5}"#).is_ok());
        assert!(check("0.25", r#"{"id":0.5}"#).is_err());
    }

    #[test]
    fn a_nested_parameter_is_found_by_its_properties_chain_and_checked() {
        let schema = serde_json::json!({"type": "object", "properties": {
            "name": {"type": "string"},
            "target": {"type": "object", "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "zone": {"type": "object", "properties": {"id": {"type": "integer", "x-mcp-header": "Zone"}}},
            }},
        }});
        let declared = check_declared(&schema).unwrap();
        assert_eq!(declared, declared_params(&schema));
        assert_eq!(
            declared,
            [
                (vec!["target".to_owned(), "region".to_owned()], "Region".to_owned()),
                (vec!["target".into(), "zone".into(), "id".into()], "Zone".into()),
            ]
        );
        let body = r#"{"target":{"region":"eu-west","zone":{"id":7}}}"#;
        let both = facts(&[("mcp-param-region", "eu-west"), ("mcp-param-zone", "7")]);
        assert!(both.check_params(&declared, Some(body)).is_ok());
        let wrong = facts(&[("mcp-param-region", "us-east"), ("mcp-param-zone", "7")]);
        let e = wrong.check_params(&declared, Some(body)).unwrap_err();
        assert!(e.message().contains("target.region"), "{}", e.message());
        let missing = facts(&[("mcp-param-region", "eu-west")]);
        assert!(missing.check_params(&declared, Some(body)).is_err(), "Zone is required");
        // Absent in the body: no header, and none may be sent.
        assert!(facts(&[]).check_params(&declared, Some(r#"{"target":{}}"#)).is_ok());
        assert!(facts(&[("mcp-param-region", "x")])
            .check_params(&declared, Some("{}"))
            .is_err());
    }

    #[test]
    fn a_header_off_the_properties_chains_is_refused() {
        let header = serde_json::json!({"type": "string", "x-mcp-header": "H"});
        for (keyword, schema) in [
            (
                "items",
                serde_json::json!({"type": "object", "properties": {"list": {"type": "array", "items": header}}}),
            ),
            (
                "oneOf",
                serde_json::json!({"type": "object", "oneOf": [{"properties": {"a": header}}]}),
            ),
            (
                "$defs",
                serde_json::json!({"type": "object", "$defs": {"T": header}, "properties": {"a": {"$ref": "#/$defs/T"}}}),
            ),
            (
                "then",
                serde_json::json!({"type": "object", "properties": {"a": {"if": {}, "then": {"properties": {"b": header}}}}}),
            ),
            (
                "the schema's root",
                serde_json::json!({"type": "object", "x-mcp-header": "H"}),
            ),
        ] {
            let e = check_declared(&schema).unwrap_err();
            assert!(e.contains(keyword), "{keyword}: {e}");
        }
        // Unique across depths, regardless of case; typed as a primitive.
        let twice = serde_json::json!({"type": "object", "properties": {
            "a": {"type": "string", "x-mcp-header": "Id"},
            "b": {"type": "object", "properties": {"c": {"type": "string", "x-mcp-header": "ID"}}},
        }});
        assert!(check_declared(&twice).unwrap_err().contains("twice"));
        let object = serde_json::json!({"type": "object", "properties": {"b": {"type": "object", "properties": {"c": {"type": "number", "x-mcp-header": "C"}}}}});
        assert!(check_declared(&object).unwrap_err().contains("b.c"));
    }

    #[test]
    fn decodes_the_base64_sentinel_and_keeps_literals() {
        assert_eq!(decode_value("  =?base64?SGVsbG8=?= ").unwrap(), "Hello");
        assert_eq!(decode_value("SGVsbG8=").unwrap(), "SGVsbG8=");
        assert_eq!(decode_value("=?base64?SGVsbG8=").unwrap(), "=?base64?SGVsbG8=");
        assert!(decode_value("=?base64?SGVsbG8?=").is_err());
        assert!(decode_value("=?base64?SGVs!!!bG8=?=").is_err());
    }

    #[cfg(feature = "otel")]
    #[test]
    fn the_trace_context_of_headers_is_one_parent_and_every_state() {
        let mut map = HeaderMap::new();
        assert!(trace_context(&map).is_none());
        map.append("tracestate", "a=1".parse().unwrap());
        assert!(trace_context(&map).is_none(), "a state without a parent");
        map.append(
            "traceparent",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
                .parse()
                .unwrap(),
        );
        map.append("tracestate", "b=2".parse().unwrap());
        let context = trace_context(&map).unwrap();
        assert_eq!(
            context.parent,
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        );
        assert_eq!(context.state.as_deref(), Some("a=1,b=2"));
        map.append(
            "traceparent",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
                .parse()
                .unwrap(),
        );
        assert!(trace_context(&map).is_some(), "the same parent twice");
        map.append(
            "traceparent",
            "00-11111111111111111111111111111111-2222222222222222-01"
                .parse()
                .unwrap(),
        );
        assert!(trace_context(&map).is_none(), "two parents: a new trace");
    }
}

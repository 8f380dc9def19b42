//! JSON-RPC 2.0 framing: classify incoming bytes, encode outgoing messages.
//!
//! Parsing never panics and never gives up silently: bytes that are not JSON
//! become a -32700 error without an id; JSON that is not a valid message
//! becomes -32600, echoing the id whenever it could be read.

use crate::error::{McpError, WireError};
use crate::protocol::RequestId;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;
use std::borrow::Cow;

/// A request: a method call that expects a response.
#[derive(Debug)]
pub struct Request {
    /// The id to answer with.
    pub id: RequestId,
    /// The method name (borrowed from a static table for the methods this
    /// crate knows, so the common case does not allocate).
    pub method: Cow<'static, str>,
    /// The params object, unparsed.
    pub params: Option<Box<RawValue>>,
}

/// A notification: a method call with no response.
#[derive(Debug)]
pub struct Notification {
    /// The method name.
    pub method: Cow<'static, str>,
    /// The params object, unparsed.
    pub params: Option<Box<RawValue>>,
}

/// A response from the peer to a request this side sent.
#[derive(Debug)]
pub struct Response {
    /// The id of the request it answers.
    pub id: RequestId,
    /// The result, or the error object.
    pub outcome: Result<Box<RawValue>, Box<RawValue>>,
}

/// One classified incoming message.
#[derive(Debug)]
pub enum Message {
    /// A request.
    Request(Request),
    /// A notification.
    Notification(Notification),
    /// A response.
    Response(Response),
}

/// Why incoming bytes are not a usable message: the error to answer with,
/// and the id to echo (`None` when it could not be read).
#[derive(Debug)]
pub struct Rejected {
    /// The id, when it could be read.
    pub id: Option<RequestId>,
    /// The error.
    pub error: McpError,
}

#[derive(Deserialize)]
struct Envelope<'a> {
    /// Whether `jsonrpc` is present and the string "2.0".
    #[serde(default, deserialize_with = "version")]
    jsonrpc: bool,
    /// `id` when present: read in the same pass, or `Err` when it is
    /// neither a string nor an integer in range.
    #[serde(default, deserialize_with = "id_field")]
    id: Option<Result<RequestId, ()>>,
    /// `method` when present: the name, or `Err` when it is not a string.
    #[serde(default, deserialize_with = "method_field")]
    method: Option<Result<Cow<'static, str>, ()>>,
    #[serde(default, borrow, deserialize_with = "present")]
    params: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

/// Keeps a field that is present with the value `null` as `Some("null")`.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// Any JSON value, read to its end, then classified by the function it
/// holds: what a field that must be of one shape is read with, so that a
/// value of another shape (-32600) is told apart from bytes that are not
/// JSON (-32700).
struct Shape<T>(fn(Scalar<'_>) -> T);

/// A scalar as [`Shape`] passes it on; arrays and objects are `Other`.
enum Scalar<'a> {
    Int(i64),
    Str(&'a str),
    Other,
}

impl<'de, T> serde::de::Visitor<'de> for Shape<T> {
    type Value = T;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<T, E> {
        Ok((self.0)(Scalar::Int(n)))
    }

    fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<T, E> {
        Ok((self.0)(i64::try_from(n).map_or(Scalar::Other, Scalar::Int)))
    }

    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<T, E> {
        Ok((self.0)(Scalar::Other))
    }

    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<T, E> {
        Ok((self.0)(Scalar::Other))
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<T, E> {
        Ok((self.0)(Scalar::Other))
    }

    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<T, E> {
        Ok((self.0)(Scalar::Str(s)))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<T, A::Error> {
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok((self.0)(Scalar::Other))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
        while map
            .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
            .is_some()
        {}
        Ok((self.0)(Scalar::Other))
    }
}

/// `jsonrpc`: whether it is the string "2.0".
fn version<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    d.deserialize_any(Shape(|v| matches!(v, Scalar::Str("2.0"))))
}

/// `method`: a string, interned (see [`intern`]).
fn method_field<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Result<Cow<'static, str>, ()>>, D::Error> {
    d.deserialize_any(Shape(|v| match v {
        Scalar::Str(s) => Some(Ok(intern(Cow::Borrowed(s)))),
        _ => Some(Err(())),
    }))
}

/// `id`: a string or an integer, read where it stands.
fn id_field<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Result<RequestId, ()>>, D::Error> {
    d.deserialize_any(Shape(|v| match v {
        Scalar::Int(n) => Some(Ok(RequestId::Number(n))),
        Scalar::Str(s) => Some(Ok(RequestId::String(s.to_owned()))),
        Scalar::Other => Some(Err(())),
    }))
}

fn first_byte(raw: &RawValue) -> u8 {
    raw.get().as_bytes().first().copied().unwrap_or(b' ')
}

/// The deepest nesting of arrays and objects accepted in a message.
pub const MAX_DEPTH: usize = 64;

/// How many `{` and `[` `bytes` holds. Counted in byte-wide lanes, 255
/// bytes at a time (so that a lane cannot overflow), which the compiler
/// turns into vector compares: a few instructions per 16 bytes, where a
/// `usize` count takes a few per byte.
fn openers(bytes: &[u8]) -> usize {
    bytes
        .chunks(255)
        .map(|chunk| {
            let n = chunk
                .iter()
                .fold(0u8, |n, &b| n.wrapping_add(u8::from(b == b'{' || b == b'[')));
            usize::from(n)
        })
        .sum()
}

/// Whether `bytes` nest arrays/objects deeper than `max` (strings skipped).
fn too_deep(bytes: &[u8], max: usize) -> bool {
    // No deeper than the number of openers: a cheap count settles almost
    // every message without the byte-by-byte walk.
    if openers(bytes) <= max {
        return false;
    }
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &b in bytes {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// The string a raw JSON value holds, borrowed when it has no escapes;
/// `None` when the value is not a string.
pub(crate) fn raw_str(raw: &RawValue) -> Option<std::borrow::Cow<'_, str>> {
    let text = raw.get();
    match text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
        Some(inner) if !inner.contains('\\') => Some(std::borrow::Cow::Borrowed(inner)),
        Some(_) => serde_json::from_str::<String>(text).ok().map(std::borrow::Cow::Owned),
        None => None,
    }
}

fn intern(method: Cow<'_, str>) -> Cow<'static, str> {
    // Known names are static: no allocation on the usual path.
    match crate::method::Method::parse(&method) {
        Some(m) => Cow::Borrowed(m.as_str()),
        None => Cow::Owned(method.into_owned()),
    }
}

/// Classifies one incoming message (a stdio line or an HTTP body).
pub fn parse(bytes: &[u8]) -> Result<Message, Rejected> {
    let reject = |id, error| Err(Rejected { id, error });
    // A byte order mark (Windows tools write one) is ignored, as RFC 8259
    // lets a parser do.
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let is_object = bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
    if !is_object {
        // Valid JSON that is not an object (an array, a string...), or not JSON at all.
        return match serde_json::from_slice::<serde::de::IgnoredAny>(bytes) {
            Ok(_) => reject(
                None,
                McpError::invalid_request("Invalid request: expected a JSON object"),
            ),
            Err(e) => reject(None, McpError::parse_error(e)),
        };
    }
    // One UTF-8 check up front; the parser then reads from a `str` and does
    // not check each string and raw value again.
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => return reject(None, McpError::parse_error(e)),
    };
    let env: Envelope<'_> = match serde_json::from_str(text) {
        Ok(env) => env,
        Err(e) if e.is_data() => {
            return reject(None, McpError::invalid_request(format!("Invalid request: {e}")));
        }
        Err(e) => return reject(None, McpError::parse_error(e)),
    };
    // A response whose id is missing or null (the peer could not read the
    // request it answers): it answers none of ours, and a response is never
    // answered, so it is taken as one to no request.
    if env.method.is_none() && (env.result.is_some() || env.error.is_some()) && !matches!(env.id, Some(Ok(_))) {
        let outcome = match (env.result, env.error) {
            (Some(r), None) => Ok(r.to_owned()),
            (_, Some(e)) => Err(e.to_owned()),
            (None, None) => Err(RawValue::NULL.to_owned()),
        };
        return Ok(Message::Response(Response {
            id: RequestId::String(String::new()),
            outcome,
        }));
    }
    let id = match env.id {
        None => None,
        Some(Ok(id)) => Some(id),
        Some(Err(())) => {
            return reject(
                None,
                McpError::invalid_request("Invalid request: id must be a string or an integer"),
            )
        }
    };
    if too_deep(bytes, MAX_DEPTH) {
        let error = McpError::invalid_request(format!("Invalid request: nested deeper than {MAX_DEPTH} levels"));
        return reject(id, error);
    }
    if !env.jsonrpc {
        return reject(
            id,
            McpError::invalid_request("Invalid request: jsonrpc must be \"2.0\""),
        );
    }
    let params = match env.params {
        None => None,
        Some(p) if first_byte(p) == b'{' => Some(p.to_owned()),
        Some(_) => {
            return reject(
                id,
                McpError::invalid_request("Invalid request: params must be an object"),
            )
        }
    };
    match (env.method, id) {
        (Some(Err(())), id) => reject(
            id,
            McpError::invalid_request("Invalid request: method must be a string"),
        ),
        (Some(Ok(method)), id) => Ok(match id {
            Some(id) => Message::Request(Request { id, method, params }),
            None => Message::Notification(Notification { method, params }),
        }),
        (None, Some(id)) => match (env.result, env.error) {
            (Some(r), None) => Ok(Message::Response(Response {
                id,
                outcome: Ok(r.to_owned()),
            })),
            (None, Some(e)) => Ok(Message::Response(Response {
                id,
                outcome: Err(e.to_owned()),
            })),
            _ => reject(Some(id), McpError::invalid_request("Invalid request: missing method")),
        },
        (None, None) => reject(None, McpError::invalid_request("Invalid request: missing method")),
    }
}

#[derive(Serialize)]
struct ErrorOut<'a> {
    jsonrpc: &'static str,
    // An unreadable id is left out: the MCP schema types `id` as a string or
    // an integer and makes it optional on error responses for this case.
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a RequestId>,
    error: WireError<'a>,
}

/// Encodes an error response (compact, one line, no trailing newline).
pub fn encode_error(id: Option<&RequestId>, error: &McpError) -> Vec<u8> {
    let out = ErrorOut {
        jsonrpc: "2.0",
        id,
        error: error.into(),
    };
    serde_json::to_vec(&out)
        .unwrap_or_else(|_| br#"{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error"}}"#.to_vec())
}

/// Encodes a result response around an already-serialized result object.
pub fn encode_result_raw(id: &RequestId, result: &[u8]) -> Vec<u8> {
    // Exact for integer ids and plain string ids, so that the HTTP body
    // takes the buffer over without another allocation.
    let id_len = match id {
        RequestId::Number(n) => {
            n.checked_abs()
                .map_or(20, |a| a.checked_ilog10().unwrap_or(0) as usize + 1)
                + usize::from(*n < 0)
        }
        RequestId::String(s) => s.len() + 2,
    };
    let mut out = Vec::with_capacity(33 + id_len + result.len());
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    write_id(&mut out, id);
    out.extend_from_slice(br#","result":"#);
    out.extend_from_slice(result);
    out.push(b'}');
    out
}

fn write_id(out: &mut Vec<u8>, id: &RequestId) {
    // serde_json writes an integer's digits itself (no `fmt` machinery,
    // which every answer would otherwise run), and escapes a string.
    // Serializing either into a Vec cannot fail.
    let _ = match id {
        RequestId::Number(n) => serde_json::to_writer(&mut *out, n),
        RequestId::String(s) => serde_json::to_writer(&mut *out, s),
    };
}

#[derive(Serialize)]
struct NotificationOut<'a, P: Serialize> {
    jsonrpc: &'static str,
    method: &'a str,
    params: &'a P,
}

/// Encodes a notification (compact, one line).
pub fn encode_notification<P: Serialize>(method: &str, params: &P) -> Vec<u8> {
    let out = NotificationOut {
        jsonrpc: "2.0",
        method,
        params,
    };
    serde_json::to_vec(&out).unwrap_or_default()
}

#[derive(Serialize)]
struct RequestOut<'a, P: Serialize> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    method: &'a str,
    params: &'a P,
}

/// Encodes a request this side sends to its peer (compact, one line).
pub fn encode_request<P: Serialize>(id: &RequestId, method: &str, params: &P) -> Vec<u8> {
    let out = RequestOut {
        jsonrpc: "2.0",
        id,
        method,
        params,
    };
    serde_json::to_vec(&out).unwrap_or_default()
}

/// Parses a method's params (`_meta` inside is ignored here: it is read by
/// [`crate::meta`]); absent params read as `{}`, a mismatch is -32602.
/// The request a `notifications/cancelled` names, when `n` is one that reads.
pub(crate) fn cancelled_request(n: &Notification) -> Option<RequestId> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct CancelledParams {
        request_id: RequestId,
    }
    if n.method != "notifications/cancelled" {
        return None;
    }
    parse_params::<CancelledParams>(n.params.as_deref())
        .ok()
        .map(|p| p.request_id)
}

pub(crate) fn parse_params<'a, T: serde::Deserialize<'a>>(params: Option<&'a RawValue>) -> Result<T, McpError> {
    let text = params.map(RawValue::get).unwrap_or("{}");
    serde_json::from_str(text).map_err(|e| McpError::invalid_params(format!("Invalid params: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    fn rejected(bytes: &[u8]) -> Rejected {
        match parse(bytes) {
            Err(r) => r,
            Ok(m) => panic!("accepted: {m:?}"),
        }
    }

    #[test]
    fn a_response_without_a_usable_id_is_taken_not_answered() {
        for bytes in [
            &br#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}"#[..],
            br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"x"}}"#,
            br#"{"jsonrpc":"2.0","id":[1],"result":{}}"#,
        ] {
            match parse(bytes) {
                Ok(Message::Response(r)) => assert_eq!(r.id, RequestId::String(String::new())),
                other => panic!("{}: {other:?}", String::from_utf8_lossy(bytes)),
            }
        }
        // Without a result or an error it is still a request without a method.
        assert!(parse(br#"{"jsonrpc":"2.0","id":null}"#).is_err());
    }

    #[test]
    fn a_byte_order_mark_is_ignored() {
        let bytes = b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";
        assert!(matches!(parse(bytes), Ok(Message::Request(r)) if r.method == "ping"));
    }

    #[test]
    fn invalid_utf8_is_a_parse_error() {
        let r = rejected(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\xff\"}");
        assert_eq!(r.error.code(), ErrorCode::PARSE_ERROR);
        assert!(r.id.is_none());
    }

    #[test]
    fn openers_are_counted_across_lanes_and_chunks() {
        for n in [0, 1, 254, 255, 256, 600] {
            let text = format!("{}\"{{\"{}", "{[x".repeat(n), "]".repeat(n));
            assert_eq!(openers(text.as_bytes()), 2 * n + 1, "{n}");
        }
    }

    #[test]
    fn nesting_is_limited_but_many_siblings_are_not() {
        let deep = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{{\"a\":{}1{}}}}}",
            "[".repeat(MAX_DEPTH),
            "]".repeat(MAX_DEPTH)
        );
        let r = rejected(deep.as_bytes());
        assert_eq!(r.error.code(), ErrorCode::INVALID_REQUEST);
        assert_eq!(r.id, Some(RequestId::Number(1)));
        let wide = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{{\"a\":[{}]}}}}",
            vec!["{}"; 200].join(",")
        );
        assert!(matches!(parse(wide.as_bytes()), Ok(Message::Request(_))));
    }

    #[test]
    fn envelope_fields_of_the_wrong_shape_are_invalid_requests() {
        let cases: [(&str, Option<RequestId>); 8] = [
            (r#"{"jsonrpc":"2.0","id":{"a":[1,{"b":2}]},"method":"m"}"#, None),
            (r#"{"jsonrpc":"2.0","id":[1,[2]],"method":"m"}"#, None),
            (r#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"m"}"#, None),
            (r#"{"jsonrpc":"2.0","id":true,"method":"m"}"#, None),
            (r#"{"jsonrpc":["2.0"],"id":3,"method":"m"}"#, Some(RequestId::Number(3))),
            (r#"{"id":4,"method":"m"}"#, Some(RequestId::Number(4))),
            (
                r#"{"jsonrpc":"2.0","id":"x","method":{"m":1}}"#,
                Some(RequestId::String("x".into())),
            ),
            (r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}"#, None),
        ];
        for (text, id) in cases {
            let r = rejected(text.as_bytes());
            assert_eq!(r.error.code(), ErrorCode::INVALID_REQUEST, "{text}");
            assert_eq!(r.id, id, "{text}");
        }
        // Not JSON inside a field that is read in place: a parse error.
        let r = rejected(br#"{"jsonrpc":"2.0","id":{"a":tru},"method":"m"}"#);
        assert_eq!(r.error.code(), ErrorCode::PARSE_ERROR);
    }

    #[test]
    fn jsonrpc_and_ids_are_compared_as_json_strings() {
        let Ok(Message::Request(r)) = parse(br#"{"jsonrpc":"2\u002e0","id":-9223372036854775808,"method":"m"}"#) else {
            panic!("not a request");
        };
        assert_eq!(r.id, RequestId::Number(i64::MIN));
        assert_eq!(r.method, "m");
        let Ok(Message::Notification(n)) = parse(br#"{"method":"notifications/cancelled","jsonrpc":"2.0"}"#) else {
            panic!("not a notification");
        };
        assert_eq!(n.method, "notifications/cancelled");
    }

    #[test]
    fn method_strings_with_escapes_are_decoded() {
        let Ok(Message::Request(r)) = parse(br#"{"jsonrpc":"2.0","id":"x","method":"tools\/list"}"#) else {
            panic!("not a request");
        };
        assert_eq!(r.method, "tools/list");
        assert_eq!(r.id, RequestId::String("x".into()));
    }
}

#[cfg(test)]
mod encode_tests {
    use super::*;

    #[test]
    fn result_envelopes_are_sized_exactly_for_integer_and_plain_string_ids() {
        for id in [
            RequestId::Number(0),
            RequestId::Number(7),
            RequestId::Number(-12),
            RequestId::Number(1_000_000),
            RequestId::Number(i64::MAX),
            RequestId::String("abc".into()),
        ] {
            let out = encode_result_raw(&id, br#"{"a":1}"#);
            assert_eq!(out.len(), out.capacity(), "for {id:?}");
            let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
            assert_eq!(v["result"]["a"], 1);
            assert_eq!(serde_json::to_value(&id).unwrap(), v["id"]);
        }
        let escaped = encode_result_raw(&RequestId::String("a\"b".into()), b"{}");
        let v: serde_json::Value = serde_json::from_slice(&escaped).unwrap();
        assert_eq!(v["id"], "a\"b");
    }
    #[test]
    fn integer_ids_are_written_as_format_writes_them() {
        let mut cases = vec![i64::MIN, i64::MIN + 1, -1, 0, 1, 9, 10, 99, 100, i64::MAX - 1, i64::MAX];
        cases.extend((0..19).map(|p| 10i64.pow(p)));
        cases.extend((1..19).map(|p| -(10i64.pow(p)) + 1));
        for n in cases {
            let mut out = b"x".to_vec();
            write_id(&mut out, &RequestId::Number(n));
            assert_eq!(out, format!("x{n}").into_bytes(), "{n}");
        }
    }
}

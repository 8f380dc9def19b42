//! Per-request metadata and protocol versions (`basic/versioning`).
//!
//! A 2026-07-28 request carries everything the server needs in its own
//! `params._meta`: there is no handshake. This module reads and validates
//! that object, in the order the spec implies: missing fields (-32602) first,
//! then a transport's header facts disagreeing with it (-32020), then an
//! unsupported version (-32022).

use crate::error::McpError;
use crate::headers::HeaderFacts;
use crate::protocol::{
    ClientCapabilities, Implementation, LoggingLevel, ProgressToken, META_CLIENT_CAPABILITIES, META_CLIENT_INFO,
    META_LOG_LEVEL, META_PROTOCOL_VERSION,
};
use serde::de::{IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

/// The protocol revisions served statelessly, newest first.
pub const SUPPORTED_VERSIONS: &[&str] = &["2026-07-28"];

/// The newest revision served.
pub(crate) const LATEST: &str = SUPPORTED_VERSIONS[0];

/// The validated metadata of one request.
#[derive(Debug, Clone, Default)]
pub struct RequestMeta {
    /// The protocol revision the request speaks.
    pub protocol_version: Cow<'static, str>,
    /// The capabilities the client declared for this request (shared: the
    /// empty declaration is one value for every request, and a client that
    /// repeats its declaration gets the value parsed for its last request).
    pub client_capabilities: Arc<ClientCapabilities>,
    /// The client's self-description, if given (shared as its capabilities
    /// are; a legacy session's requests all get the one its `initialize` gave).
    pub client_info: Option<Arc<Implementation>>,
    /// The log level the client opted in to, if any.
    pub log_level: Option<LoggingLevel>,
    /// The progress token, if the client wants progress notifications.
    pub progress_token: Option<ProgressToken>,
}

#[derive(Deserialize)]
struct ParamsHead<'a> {
    #[serde(rename = "_meta", borrow, default)]
    meta: Option<MetaSlot<'a>>,
}

/// A request's `_meta`, read in the same pass as the params around it:
/// the fields this module validates, unparsed. `Default` is "not an object".
#[derive(Debug, Default, Clone, Copy)]
pub struct MetaSlot<'a> {
    head: Option<MetaHead<'a>>,
}

#[derive(Debug, Default, Clone, Copy)]
struct MetaHead<'a> {
    protocol_version: Option<&'a RawValue>,
    client_capabilities: Option<&'a RawValue>,
    client_info: Option<&'a RawValue>,
    log_level: Option<&'a RawValue>,
    progress_token: Option<&'a RawValue>,
    traceparent: Option<&'a RawValue>,
    tracestate: Option<&'a RawValue>,
}

#[derive(Deserialize)]
#[serde(field_identifier)]
enum MetaKey {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion")]
    ProtocolVersion,
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities")]
    ClientCapabilities,
    #[serde(rename = "io.modelcontextprotocol/clientInfo")]
    ClientInfo,
    #[serde(rename = "io.modelcontextprotocol/logLevel")]
    LogLevel,
    #[serde(rename = "progressToken")]
    ProgressToken,
    /// W3C Trace Context (SEP-414).
    #[serde(rename = "traceparent")]
    Traceparent,
    #[serde(rename = "tracestate")]
    Tracestate,
    #[serde(other)]
    Other,
}

impl<'a> MetaSlot<'a> {
    /// The raw `progressToken`, if `_meta` is an object that has one.
    pub fn progress_token(&self) -> Option<&'a RawValue> {
        self.head.and_then(|h| h.progress_token)
    }

    /// The caller's W3C `traceparent` (SEP-414), raw.
    pub fn traceparent(&self) -> Option<&'a RawValue> {
        self.head.and_then(|h| h.traceparent)
    }

    /// The caller's W3C `tracestate` (SEP-414), raw.
    pub fn tracestate(&self) -> Option<&'a RawValue> {
        self.head.and_then(|h| h.tracestate)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for MetaSlot<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(SlotVisitor(std::marker::PhantomData))
    }
}

struct SlotVisitor<'a>(std::marker::PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for SlotVisitor<'a> {
    type Value = MetaSlot<'a>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<MetaSlot<'a>, A::Error> {
        let mut h = MetaHead::default();
        while let Some(key) = map.next_key::<MetaKey>()? {
            let field = match key {
                MetaKey::ProtocolVersion => &mut h.protocol_version,
                MetaKey::ClientCapabilities => &mut h.client_capabilities,
                MetaKey::ClientInfo => &mut h.client_info,
                MetaKey::LogLevel => &mut h.log_level,
                MetaKey::ProgressToken => &mut h.progress_token,
                MetaKey::Traceparent => &mut h.traceparent,
                MetaKey::Tracestate => &mut h.tracestate,
                MetaKey::Other => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            *field = Some(map.next_value::<&'a RawValue>()?);
        }
        Ok(MetaSlot { head: Some(h) })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<MetaSlot<'a>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(MetaSlot::default())
    }

    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<MetaSlot<'a>, E> {
        Ok(MetaSlot::default())
    }

    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<MetaSlot<'a>, E> {
        Ok(MetaSlot::default())
    }

    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<MetaSlot<'a>, E> {
        Ok(MetaSlot::default())
    }

    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<MetaSlot<'a>, E> {
        Ok(MetaSlot::default())
    }

    fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<MetaSlot<'a>, E> {
        Ok(MetaSlot::default())
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<MetaSlot<'a>, E> {
        Ok(MetaSlot::default())
    }
}

/// The empty capability declaration `{}`, shared.
pub(crate) fn no_capabilities() -> Arc<ClientCapabilities> {
    static EMPTY: OnceLock<Arc<ClientCapabilities>> = OnceLock::new();
    EMPTY.get_or_init(Default::default).clone()
}

fn field_error(key: &str, what: &str) -> McpError {
    McpError::invalid_params(format!("Invalid params: _meta[\"{key}\"] {what}"))
}

/// Reads and validates the `_meta` object of a request's params (`None`
/// when absent). `check_routing` compares the transport's header facts with
/// the body; it runs after the missing-field checks and before the version
/// check, as the spec orders them.
pub fn validate(
    meta: Option<MetaSlot<'_>>,
    headers: &HeaderFacts,
    check_routing: impl FnOnce() -> Result<(), McpError>,
) -> Result<RequestMeta, McpError> {
    let meta = meta.ok_or_else(|| {
        McpError::invalid_params(
            "Invalid params: missing _meta (protocol version and client capabilities are required on every request)",
        )
    })?;
    let meta = meta
        .head
        .ok_or_else(|| McpError::invalid_params("Invalid params: _meta must be an object"))?;

    let version = match meta.protocol_version {
        None => return Err(field_error(META_PROTOCOL_VERSION, "is required")),
        Some(raw) => {
            crate::jsonrpc::raw_str(raw).ok_or_else(|| field_error(META_PROTOCOL_VERSION, "must be a string"))?
        }
    };
    let client_capabilities = match meta.client_capabilities {
        None => return Err(field_error(META_CLIENT_CAPABILITIES, "is required")),
        Some(raw) if raw.get() == "{}" => no_capabilities(),
        Some(raw) if raw.get().starts_with('{') => kept(&LAST_CAPABILITIES, raw.get(), META_CLIENT_CAPABILITIES)?,
        Some(_) => return Err(field_error(META_CLIENT_CAPABILITIES, "must be an object")),
    };
    if headers.is_http() {
        headers.check_repeated()?;
        let header = headers.get(&crate::headers::PROTOCOL_VERSION);
        let header = header.as_deref().map(str::trim);
        if header != Some(version.as_ref()) {
            let header = header.unwrap_or("(missing)");
            return Err(McpError::header_mismatch(format!(
                "Header mismatch: MCP-Protocol-Version header {header:?} does not match _meta protocol version {version:?}"
            )));
        }
        check_routing()?;
    }
    let Some(&version) = SUPPORTED_VERSIONS.iter().find(|v| **v == version) else {
        return Err(McpError::unsupported_version(&version, SUPPORTED_VERSIONS));
    };
    let client_info = client_info(meta.client_info)?;
    let log_level = parse_opt(meta.log_level, META_LOG_LEVEL)?;
    let progress_token = parse_opt(meta.progress_token, "progressToken")?;
    Ok(RequestMeta {
        protocol_version: Cow::Borrowed(version),
        client_capabilities,
        client_info,
        log_level,
        progress_token,
    })
}

/// The longest `clientInfo` or `clientCapabilities` (as sent) kept for the
/// next request: a client's are a few hundred bytes at most; one with large
/// icons or extension settings is parsed each time rather than held.
const KEPT_TEXT: usize = 1024;

/// The last value of one `_meta` field a thread parsed, by its text.
type Last<T> = std::cell::RefCell<Option<(Box<str>, Arc<T>)>>;

thread_local! {
    static LAST_INFO: Last<Implementation> = const { std::cell::RefCell::new(None) };
    static LAST_CAPABILITIES: Last<ClientCapabilities> = const { std::cell::RefCell::new(None) };
}

/// Parses a `_meta` field a client sends the same with every request (its
/// `clientInfo` and `clientCapabilities`; the spec asks for both each
/// time): each thread keeps the last one it parsed, by its text, and hands
/// out the same `Arc` while it repeats, with no parse and no allocation.
fn kept<T: serde::de::DeserializeOwned + 'static>(
    last: &'static std::thread::LocalKey<Last<T>>,
    text: &str,
    key: &str,
) -> Result<Arc<T>, McpError> {
    let seen = |last: &Last<T>| {
        let last = last.try_borrow().ok()?;
        let (seen, value) = last.as_ref()?;
        (**seen == *text).then(|| value.clone())
    };
    if let Some(value) = last.try_with(seen).ok().flatten() {
        return Ok(value);
    }
    let value: Arc<T> =
        Arc::new(serde_json::from_str(text).map_err(|e| field_error(key, &format!("is malformed: {e}")))?);
    if text.len() <= KEPT_TEXT {
        let _ = last.try_with(|last| {
            if let Ok(mut last) = last.try_borrow_mut() {
                *last = Some((text.into(), value.clone()));
            }
        });
    }
    Ok(value)
}

/// `clientInfo`, parsed (or the one this thread parsed last, if the same).
fn client_info(raw: Option<&RawValue>) -> Result<Option<Arc<Implementation>>, McpError> {
    match raw {
        None => Ok(None),
        Some(raw) if raw.get() == "null" => Ok(None),
        Some(raw) => kept(&LAST_INFO, raw.get(), META_CLIENT_INFO).map(Some),
    }
}

fn parse_opt<T: serde::de::DeserializeOwned>(raw: Option<&RawValue>, key: &str) -> Result<Option<T>, McpError> {
    match raw {
        None => Ok(None),
        Some(raw) if raw.get() == "null" => Ok(None),
        Some(raw) => serde_json::from_str(raw.get())
            .map(Some)
            .map_err(|e| field_error(key, &format!("is malformed: {e}"))),
    }
}

/// Whether a request's params carry a modern `_meta` protocol version (so
/// that it is served statelessly even inside a legacy session).
pub fn has_protocol_version(params: Option<&RawValue>) -> bool {
    let Some(params) = params else { return false };
    let Ok(head) = serde_json::from_str::<ParamsHead<'_>>(params.get()) else {
        return false;
    };
    meta_has_version(head.meta)
}

/// Whether a `_meta` object (as [`validate`] takes it) carries a protocol version.
pub fn meta_has_version(meta: Option<MetaSlot<'_>>) -> bool {
    meta.and_then(|m| m.head).is_some_and(|h| h.protocol_version.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).unwrap()
    }

    #[test]
    fn a_repeated_client_info_is_parsed_once_and_shared() {
        let host = r#"{"name":"host","title":"Host","version":"1.0"}"#;
        let first = client_info(Some(&raw(host))).unwrap().unwrap();
        let again = client_info(Some(&raw(host))).unwrap().unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        assert_eq!((first.name.as_str(), first.title.as_deref()), ("host", Some("Host")));

        let other = client_info(Some(&raw(r#"{"name":"other","version":"1.0"}"#)))
            .unwrap()
            .unwrap();
        assert_eq!(other.name, "other");
        assert!(!Arc::ptr_eq(&first, &other));

        // A malformed one is refused, naming the field, and what was kept stays.
        let e = client_info(Some(&raw(r#"{"name":1,"version":"1.0"}"#))).unwrap_err();
        assert!(e.message().contains(META_CLIENT_INFO), "{}", e.message());
        let kept = client_info(Some(&raw(r#"{"name":"other","version":"1.0"}"#)))
            .unwrap()
            .unwrap();
        assert!(Arc::ptr_eq(&other, &kept));

        assert!(client_info(Some(&raw("null"))).unwrap().is_none());
        assert!(client_info(None).unwrap().is_none());

        // A large one is parsed each time, not held.
        let large = format!(r#"{{"name":"{}","version":"1"}}"#, "x".repeat(KEPT_TEXT));
        let one = client_info(Some(&raw(&large))).unwrap().unwrap();
        let two = client_info(Some(&raw(&large))).unwrap().unwrap();
        assert_eq!(one.name.len(), KEPT_TEXT);
        assert!(!Arc::ptr_eq(&one, &two));
    }

    #[test]
    fn repeated_capabilities_are_shared_and_a_new_declaration_is_read_anew() {
        let both = r#"{"elicitation":{"form":{}},"sampling":{}}"#;
        let first = kept(&LAST_CAPABILITIES, both, META_CLIENT_CAPABILITIES).unwrap();
        let again = kept(&LAST_CAPABILITIES, both, META_CLIENT_CAPABILITIES).unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        assert!(first.elicitation.is_some() && first.sampling.is_some());
        // Nothing is inferred from an earlier request: a new text is a new declaration.
        let fewer = kept(&LAST_CAPABILITIES, r#"{"sampling":{}}"#, META_CLIENT_CAPABILITIES).unwrap();
        assert!(fewer.elicitation.is_none() && fewer.sampling.is_some());
        let e = kept(&LAST_CAPABILITIES, r#"{"sampling":1}"#, META_CLIENT_CAPABILITIES).unwrap_err();
        assert!(e.message().contains(META_CLIENT_CAPABILITIES), "{}", e.message());
    }
}

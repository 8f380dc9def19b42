//! Sealed `requestState`: XChaCha20-Poly1305 (RustCrypto's audited AEAD).
//!
//! The plaintext carries the answers gathered so far, the handler's own
//! continuation state, the round number and an expiry. The associated data
//! binds it to the server and the request it belongs to: the server's name
//! (`serverInfo.name`), the method, the tool/prompt/resource name, a
//! canonical form of the arguments, and the principal, if any. A flipped
//! byte, a truncation, another server's, another tool's or another
//! principal's state, other arguments, an expired state, a key that is no
//! longer configured, or an oversize state all fail the same way, with one
//! fixed message.
//!
//! A state is not single-use: presented again within its lifetime (a client
//! retrying a round whose answer it lost does exactly that) it opens again,
//! on any replica, and the handler runs again with the same answers. Nothing
//! short of state shared by every replica could refuse a second
//! presentation, and MRTR keeps none; handlers make the side effects after
//! their last ask idempotent instead (the README says how).
//!
//! Wire form: `base64url(version 0x01 ‖ nonce[24] ‖ ciphertext‖tag)`.

use base64::Engine;
use chacha20poly1305::aead::{Aead, AeadCore, KeyInit, OsRng, Payload};
use chacha20poly1305::{Key, XChaCha20Poly1305, XNonce};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The one message every rejected `requestState` gets.
pub const REJECTED: &str = "Invalid params: requestState is invalid or expired";

/// The largest `requestState` accepted or produced (64 KiB).
pub const MAX_STATE_LEN: usize = 64 * 1024;

const VERSION: u8 = 1;
const NONCE_LEN: usize = 24;

/// The environment variable that configures the keys: comma-separated
/// base64 (standard or URL-safe) 32-byte keys, newest first.
pub const KEYS_ENV: &str = "MCP_REQUEST_STATE_KEYS";

/// Why keys could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// A key is not base64.
    #[error("requestState key {0} is not base64")]
    NotBase64(usize),
    /// A key is not 32 bytes.
    #[error("requestState key {0} is {1} bytes; keys are 32 bytes")]
    WrongLength(usize, usize),
}

/// What a sealed state is bound to.
#[derive(Debug, Clone, Copy)]
pub struct Binding<'a> {
    /// `tools/call`, `prompts/get` or `resources/read`.
    pub method: &'a str,
    /// The tool or prompt name, or the resource URI.
    pub name: &'a str,
    /// The arguments (tools and prompts), canonicalized before binding.
    pub arguments: Option<&'a Value>,
    /// The text of arguments that do not read as a value (a number out of
    /// range), bound as it is.
    pub unread: Option<&'a str>,
    /// The authenticated principal, when there is one.
    pub principal: Option<&'a str>,
}

/// The sealed contents.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Sealed {
    /// Answers gathered in earlier rounds, by key.
    #[serde(default)]
    pub answers: Map<String, Value>,
    /// The handler's own continuation state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<Value>,
    /// How many `input_required` rounds came before.
    pub round: u32,
    /// Expiry, in milliseconds since the Unix epoch.
    pub exp: u64,
    /// The W3C `traceparent` of the span that sealed it, when spans are
    /// exported: the next round's span links to it, so one trace shows the
    /// whole dialogue (on whichever replica each round lands).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
    /// The keys the round that sealed it asked for: the retry's
    /// `inputResponses` are taken for these alone (others are ignored, as a
    /// task's are). `None` in states sealed before it was kept: any key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asked: Option<Vec<String>>,
}

/// Seals and opens `requestState` with a list of keys (newest first: it
/// seals with the first and opens with any, so keys rotate without breaking
/// rounds in flight).
#[derive(Clone)]
pub struct Sealer {
    keys: Keys,
    ttl: Duration,
    /// The name of the server whose states these are (bound in the
    /// associated data), so that two servers sharing keys do not open each
    /// other's.
    server: String,
}

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sealer")
            .field("keys", &self.keys)
            .field("ttl", &self.ttl)
            .field("server", &self.server)
            .finish()
    }
}

/// The keys a [`Sealer`] seals and opens with.
#[derive(Clone)]
enum Keys {
    /// Configured, newest first (never empty).
    Given(Vec<XChaCha20Poly1305>),
    /// None configured: one is made at the first seal, not at start-up (a
    /// server that never asks pays nothing for it), and the sealer's clones
    /// share it. Until then nothing was sealed, so nothing opens.
    Ephemeral(Arc<OnceLock<XChaCha20Poly1305>>),
}

impl std::fmt::Debug for Keys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Keys::Given(keys) => write!(f, "{} given", keys.len()),
            Keys::Ephemeral(key) => match key.get() {
                Some(_) => f.write_str("generated"),
                None => f.write_str("generated at the first seal"),
            },
        }
    }
}

impl Keys {
    /// The key new states are sealed with.
    fn sealing(&self) -> Option<&XChaCha20Poly1305> {
        match self {
            Keys::Given(keys) => keys.first(),
            Keys::Ephemeral(key) => {
                Some(key.get_or_init(|| XChaCha20Poly1305::new(&XChaCha20Poly1305::generate_key(&mut OsRng))))
            }
        }
    }

    /// The keys a state may have been sealed with.
    fn opening(&self) -> &[XChaCha20Poly1305] {
        match self {
            Keys::Given(keys) => keys,
            Keys::Ephemeral(key) => key.get().map(std::slice::from_ref).unwrap_or_default(),
        }
    }
}

pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// JSON with object keys sorted at every level, so that equal arguments bind
/// equally whatever order the client wrote them in.
fn canonical(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push(b'{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                let _ = serde_json::to_writer(&mut *out, k);
                out.push(b':');
                canonical(&map[k.as_str()], out);
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                canonical(v, out);
            }
            out.push(b']');
        }
        other => {
            let _ = serde_json::to_writer(&mut *out, other);
        }
    }
}

fn associated_data(server: &str, b: &Binding<'_>) -> Vec<u8> {
    let mut ad = Vec::with_capacity(128);
    ad.extend_from_slice(b"mcp-request-state/v2\0");
    // Length-prefixed: a name cannot run into the method.
    ad.extend_from_slice(&(server.len() as u64).to_be_bytes());
    ad.extend_from_slice(server.as_bytes());
    ad.extend_from_slice(b.method.as_bytes());
    ad.push(0);
    ad.extend_from_slice(b.name.as_bytes());
    ad.push(0);
    // No arguments, `null` and `{}` are one request (`tools/call` and
    // `prompts/get` read them alike): a client may send either form on its
    // retry. Bound as `null`, as states without arguments always were.
    let arguments = b.arguments.filter(|a| a.as_object().is_none_or(|o| !o.is_empty()));
    canonical(arguments.unwrap_or(&Value::Null), &mut ad);
    ad.push(0);
    // Tagged 2, where the principal's tag is 0 or 1; JSON text holds no NUL.
    if let Some(text) = b.unread {
        ad.push(2);
        ad.extend_from_slice(text.as_bytes());
        ad.push(0);
    }
    match b.principal {
        Some(p) => {
            ad.push(1);
            ad.extend_from_slice(p.as_bytes());
        }
        None => ad.push(0),
    }
    ad
}

/// Reads keys: comma-separated base64 32-byte keys, newest first.
pub fn parse_keys(text: &str) -> Result<Vec<[u8; 32]>, KeyError> {
    let mut keys = Vec::new();
    for (i, part) in text.split(',').map(str::trim).filter(|p| !p.is_empty()).enumerate() {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(part)
            .or_else(|_| base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(part))
            .or_else(|_| base64::engine::general_purpose::URL_SAFE.decode(part))
            .map_err(|_| KeyError::NotBase64(i + 1))?;
        let key: [u8; 32] = bytes
            .as_slice()
            .try_into()
            .map_err(|_| KeyError::WrongLength(i + 1, bytes.len()))?;
        keys.push(key);
    }
    Ok(keys)
}

impl Sealer {
    /// A sealer with these keys (newest first) and state lifetime.
    /// With no keys, one is generated when the first state is sealed: rounds
    /// then work on this process only.
    pub fn new(keys: &[[u8; 32]], ttl: Duration) -> Self {
        let keys = match keys {
            [] => Keys::Ephemeral(Arc::default()),
            keys => Keys::Given(
                keys.iter()
                    .map(|k| XChaCha20Poly1305::new(Key::from_slice(k)))
                    .collect(),
            ),
        };
        Sealer {
            keys,
            ttl,
            server: String::new(),
        }
    }

    /// Binds the states to the server named `name` (its `serverInfo.name`):
    /// another server opens none of them, even with the same keys.
    pub fn for_server(mut self, name: &str) -> Self {
        self.server = name.to_owned();
        self
    }

    /// A fresh random key, base64-encoded (for `MCP_REQUEST_STATE_KEYS`).
    pub fn generate_key() -> String {
        base64::engine::general_purpose::STANDARD.encode(XChaCha20Poly1305::generate_key(&mut OsRng))
    }

    /// How long a sealed state stays valid.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// Seals `contents` (its `exp` is set from the TTL) for `binding`.
    pub fn seal(&self, contents: Sealed, binding: &Binding<'_>) -> Option<String> {
        let exp = now_ms().saturating_add(u64::try_from(self.ttl.as_millis()).unwrap_or(u64::MAX));
        self.seal_until(contents, binding, exp)
    }

    /// Seals `contents` for `binding`, valid until `exp` (milliseconds since
    /// the Unix epoch) whatever the TTL.
    pub(crate) fn seal_until(&self, mut contents: Sealed, binding: &Binding<'_>, exp: u64) -> Option<String> {
        contents.exp = exp;
        let plaintext = serde_json::to_vec(&contents).ok()?;
        let nonce = XChaCha20Poly1305::generate_nonce(&mut OsRng);
        let aad = associated_data(&self.server, binding);
        let ciphertext = self
            .keys
            .sealing()?
            .encrypt(
                &nonce,
                Payload {
                    msg: &plaintext,
                    aad: &aad,
                },
            )
            .ok()?;
        let mut raw = Vec::with_capacity(1 + NONCE_LEN + ciphertext.len());
        raw.push(VERSION);
        raw.extend_from_slice(&nonce);
        raw.extend_from_slice(&ciphertext);
        let text = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw);
        (text.len() <= MAX_STATE_LEN).then_some(text)
    }

    /// Opens a state presented with `binding`, or `None` for any failure.
    pub fn open(&self, text: &str, binding: &Binding<'_>) -> Option<Sealed> {
        if text.len() > MAX_STATE_LEN {
            return None;
        }
        let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(text).ok()?;
        if raw.len() < 1 + NONCE_LEN + 16 || raw[0] != VERSION {
            return None;
        }
        let nonce = XNonce::from_slice(&raw[1..1 + NONCE_LEN]);
        let aad = associated_data(&self.server, binding);
        let plaintext = self.keys.opening().iter().find_map(|k| {
            k.decrypt(
                nonce,
                Payload {
                    msg: &raw[1 + NONCE_LEN..],
                    aad: &aad,
                },
            )
            .ok()
        })?;
        let sealed: Sealed = serde_json::from_slice(&plaintext).ok()?;
        (sealed.exp >= now_ms()).then_some(sealed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binding<'a>(args: &'a Value, principal: Option<&'a str>) -> Binding<'a> {
        Binding {
            method: "tools/call",
            name: "t",
            arguments: Some(args),
            unread: None,
            principal,
        }
    }

    fn contents() -> Sealed {
        let mut answers = Map::new();
        answers.insert("k".into(), serde_json::json!({"action": "accept"}));
        Sealed {
            answers,
            state: Some(serde_json::json!({"step": 2})),
            round: 1,
            exp: 0,
            link: Some("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".into()),
            asked: Some(vec!["k".into()]),
        }
    }

    #[test]
    fn round_trips_and_binds() {
        let s = Sealer::new(&[[7; 32]], Duration::from_secs(60));
        let args = serde_json::json!({"b": 1, "a": [1, {"y": 2, "x": 1}]});
        let sealed = s.seal(contents(), &binding(&args, Some("alice"))).unwrap();
        let reordered = serde_json::json!({"a": [1, {"x": 1, "y": 2}], "b": 1});
        let opened = s.open(&sealed, &binding(&reordered, Some("alice"))).unwrap();
        assert_eq!(opened.answers, contents().answers);
        assert_eq!(opened.round, 1);
        // Every mismatch fails.
        assert!(s
            .open(&sealed, &binding(&serde_json::json!({"b": 2}), Some("alice")))
            .is_none());
        assert!(s.open(&sealed, &binding(&args, Some("bob"))).is_none());
        assert!(s.open(&sealed, &binding(&args, None)).is_none());
        let other_tool = Binding {
            name: "u",
            ..binding(&args, Some("alice"))
        };
        assert!(s.open(&sealed, &other_tool).is_none());
        let other_method = Binding {
            method: "prompts/get",
            ..binding(&args, Some("alice"))
        };
        assert!(s.open(&sealed, &other_method).is_none());
    }

    #[test]
    fn arguments_that_do_not_read_bind_their_text_and_nothing_else() {
        let s = Sealer::new(&[[7; 32]], Duration::from_secs(60));
        let text = r#"{"id":"mine","x":1e400}"#;
        let unread = |text| Binding {
            method: "tools/call",
            name: "t",
            arguments: None,
            unread: Some(text),
            principal: None,
        };
        let sealed = s.seal(contents(), &unread(text)).unwrap();
        assert!(s.open(&sealed, &unread(text)).is_some());
        assert!(s.open(&sealed, &unread(r#"{"id":"other","x":1e400}"#)).is_none());
        // Not the arguments given as that text, nor none.
        let as_string = Value::String(text.into());
        assert!(s.open(&sealed, &binding(&as_string, None)).is_none());
        assert!(s.open(&sealed, &binding(&Value::Null, None)).is_none());
    }

    #[test]
    fn no_arguments_null_and_an_empty_object_are_one_request() {
        let s = Sealer::new(&[[7; 32]], Duration::from_secs(60));
        let (null, empty) = (Value::Null, serde_json::json!({}));
        let forms = [None, Some(&null), Some(&empty)];
        for sealed_with in forms {
            let sealed = s
                .seal(
                    contents(),
                    &Binding {
                        arguments: sealed_with,
                        unread: None,
                        ..binding(&null, None)
                    },
                )
                .unwrap();
            for opened_with in forms {
                let binding = Binding {
                    arguments: opened_with,
                    unread: None,
                    ..binding(&null, None)
                };
                assert!(
                    s.open(&sealed, &binding).is_some(),
                    "{sealed_with:?} -> {opened_with:?}"
                );
            }
            let some = serde_json::json!({"a": 1});
            assert!(s.open(&sealed, &binding(&some, None)).is_none());
        }
    }

    #[test]
    fn rejects_tampering_truncation_expiry_and_unknown_keys() {
        let s = Sealer::new(&[[1; 32]], Duration::from_secs(60));
        let args = serde_json::json!({});
        let b = binding(&args, None);
        let sealed = s.seal(contents(), &b).unwrap();
        let mut bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(&sealed)
            .unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        let flipped = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&bytes);
        assert!(s.open(&flipped, &b).is_none());
        assert!(s.open(&sealed[..sealed.len() - 4], &b).is_none());
        assert!(s.open(&format!("{sealed}-TAMPERED"), &b).is_none());
        assert!(s.open("", &b).is_none());
        assert!(s.open(&"A".repeat(MAX_STATE_LEN + 1), &b).is_none());
        let expired = Sealer::new(&[[1; 32]], Duration::ZERO).seal(contents(), &b).unwrap();
        std::thread::sleep(Duration::from_millis(5));
        assert!(s.open(&expired, &b).is_none());
        assert!(Sealer::new(&[[2; 32]], Duration::from_secs(60))
            .open(&sealed, &b)
            .is_none());
    }

    #[test]
    fn a_generated_key_is_made_at_the_first_seal_and_shared_by_clones() {
        let s = Sealer::new(&[], Duration::from_secs(60));
        assert!(s.keys.opening().is_empty(), "no key before the first seal");
        let args = serde_json::json!({});
        let b = binding(&args, None);
        let clone = s.clone();
        let sealed = s.seal(contents(), &b).unwrap();
        assert_eq!(s.keys.opening().len(), 1);
        assert!(
            clone.open(&sealed, &b).is_some(),
            "a clone opens what the sealer sealed"
        );
        let from_clone = clone.seal(contents(), &b).unwrap();
        assert!(s.open(&from_clone, &b).is_some(), "and the other way round");
        // Another sealer without keys makes a key of its own.
        let other = Sealer::new(&[], Duration::from_secs(60));
        assert!(other.open(&sealed, &b).is_none());
        assert!(other.seal(contents(), &b).is_some());
        assert!(other.open(&sealed, &b).is_none());
    }

    #[test]
    fn another_servers_state_does_not_open() {
        let a = Sealer::new(&[[3; 32]], Duration::from_secs(60)).for_server("billing");
        let b = Sealer::new(&[[3; 32]], Duration::from_secs(60)).for_server("after-sales");
        let args = serde_json::json!({});
        let sealed = a.seal(contents(), &binding(&args, None)).unwrap();
        assert!(a.open(&sealed, &binding(&args, None)).is_some());
        assert!(
            b.open(&sealed, &binding(&args, None)).is_none(),
            "same keys, another server"
        );
    }

    #[test]
    fn rotation_opens_with_old_keys_and_seals_with_the_newest() {
        let old = Sealer::new(&[[1; 32]], Duration::from_secs(60));
        let args = serde_json::json!({});
        let b = binding(&args, None);
        let from_old = old.seal(contents(), &b).unwrap();
        let rotated = Sealer::new(&[[2; 32], [1; 32]], Duration::from_secs(60));
        assert!(rotated.open(&from_old, &b).is_some());
        let from_new = rotated.seal(contents(), &b).unwrap();
        assert!(old.open(&from_new, &b).is_none());
        let retired = Sealer::new(&[[2; 32]], Duration::from_secs(60));
        assert!(
            retired.open(&from_old, &b).is_none(),
            "a key rotated out no longer opens"
        );
    }

    #[test]
    fn parses_keys() {
        let k = Sealer::generate_key();
        assert_eq!(parse_keys(&format!("{k}, {k}")).unwrap().len(), 2);
        assert_eq!(parse_keys("!!"), Err(KeyError::NotBase64(1)));
        assert_eq!(parse_keys("AAAA"), Err(KeyError::WrongLength(1, 3)));
    }
}

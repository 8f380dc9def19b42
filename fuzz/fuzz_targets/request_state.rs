//! Opening `requestState` (`mrtr::seal::Sealer::open`): arbitrary text, and
//! genuine states (sealed once with a fixed key) that the input alters:
//! bits flipped in the decoded bytes, characters replaced in the text,
//! truncated or extended, or presented with another binding.
//!
//! Input: the first byte picks the case (modulo 3).
//! - 0: the rest is text (UTF-8, lossy) to open with each genuine binding.
//! - 1: the next byte picks a genuine state; then changes of 4 bytes each,
//!   `op at_hi at_lo value`: op 0 XORs decoded byte `at` with `value`, 1
//!   sets character `at` to `value`, 2 truncates to `at` characters, 3
//!   appends `value` as a character.
//! - 2: the next byte picks a genuine state; the rest is its binding, one
//!   field a line (method, name, arguments JSON, principal): a line `=` or
//!   a missing line keeps the genuine field; a principal `-` is none.
//!
//! Invariants: no panic; anything altered does not open (`None`); the
//! genuine state opens with its own binding and gives back what was sealed.
#![no_main]

use base64::Engine;
use libfuzzer_sys::fuzz_target;
use mcp_runtime::__private::engine::seal::{Binding, Sealed, Sealer};
use serde_json::{json, Map, Value};
use std::sync::OnceLock;
use std::time::Duration;

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::URL_SAFE_NO_PAD;

#[derive(Debug)]
enum Change {
    /// XOR a decoded byte (index taken modulo the length) with a mask.
    FlipByte(u16, u8),
    /// Replace a character of the text (index modulo the length).
    SetChar(u16, u8),
    /// Keep this many characters.
    Truncate(u16),
    /// Append an ASCII character (the value modulo 128).
    Append(u8),
}

#[derive(Debug)]
enum Case {
    /// Arbitrary text, presented with the genuine binding.
    Text(String),
    /// A genuine state (index modulo their number), altered.
    Altered(u8, Vec<Change>),
    /// A genuine state presented with another binding.
    Rebound {
        which: u8,
        method: Option<String>,
        name: Option<String>,
        arguments: Option<String>,
        principal: Option<Option<String>>,
    },
}

fn case(data: &[u8]) -> Option<Case> {
    let (&mode, rest) = data.split_first()?;
    Some(match mode % 3 {
        0 => Case::Text(String::from_utf8_lossy(rest).into_owned()),
        1 => {
            let (&which, rest) = rest.split_first()?;
            let changes = rest
                .chunks_exact(4)
                .map(|c| {
                    let at = u16::from_be_bytes([c[1], c[2]]);
                    match c[0] % 4 {
                        0 => Change::FlipByte(at, c[3]),
                        1 => Change::SetChar(at, c[3]),
                        2 => Change::Truncate(at),
                        _ => Change::Append(c[3]),
                    }
                })
                .collect();
            Case::Altered(which, changes)
        }
        _ => {
            let (&which, rest) = rest.split_first()?;
            let text = String::from_utf8_lossy(rest);
            let mut lines = text.split('\n').map(|l| Some(l.to_owned()).filter(|l| l != "="));
            let mut next = || lines.next().flatten();
            let (method, name, arguments) = (next(), next(), next());
            let principal = next().map(|p| Some(p).filter(|p| p != "-"));
            Case::Rebound {
                which,
                method,
                name,
                arguments,
                principal,
            }
        }
    })
}

struct Genuine {
    text: String,
    contents: Sealed,
    method: &'static str,
    name: &'static str,
    arguments: Option<Value>,
    principal: Option<&'static str>,
}

impl Genuine {
    fn binding(&self) -> Binding<'_> {
        Binding {
            method: self.method,
            name: self.name,
            arguments: self.arguments.as_ref(),
            unread: None,
            principal: self.principal,
        }
    }
}

fn setup() -> &'static (Sealer, Vec<Genuine>) {
    static SETUP: OnceLock<(Sealer, Vec<Genuine>)> = OnceLock::new();
    SETUP.get_or_init(|| {
        let sealer = Sealer::new(&[[7; 32], [9; 32]], Duration::from_secs(24 * 3600));
        let old = Sealer::new(&[[9; 32]], Duration::from_secs(24 * 3600));
        let mut answers = Map::new();
        answers.insert("confirm".into(), json!({"action": "accept", "content": {"ok": true}}));
        let full = Sealed {
            answers,
            state: Some(json!({"step": 2, "note": "é\u{0}"})),
            round: 3,
            exp: 0,
            link: None,
            asked: Some(vec!["confirm".into()]),
        };
        let cases: [(&Sealer, Sealed, &str, &str, Option<Value>, Option<&str>); 4] = [
            (
                &sealer,
                full.clone(),
                "tools/call",
                "sign_up",
                Some(json!({"b": [1, {"y": 2, "x": 1}], "a": "z"})),
                None,
            ),
            (
                &sealer,
                Sealed::default(),
                "prompts/get",
                "review",
                Some(json!({})),
                Some("alice"),
            ),
            (&sealer, full, "resources/read", "fuzz://items/1", None, None),
            // Sealed with a key that is now the second one: rotation.
            (
                &old,
                Sealed {
                    round: 1,
                    ..Sealed::default()
                },
                "tools/call",
                "",
                None,
                Some(""),
            ),
        ];
        let genuine = cases
            .into_iter()
            .map(|(s, contents, method, name, arguments, principal)| {
                let binding = Binding {
                    method,
                    name,
                    arguments: arguments.as_ref(),
                    unread: None,
                    principal,
                };
                let text = s.seal(contents.clone(), &binding).expect("a small state seals");
                Genuine {
                    text,
                    contents,
                    method,
                    name,
                    arguments,
                    principal,
                }
            })
            .collect();
        (sealer, genuine)
    })
}

fn opens_as_sealed(sealer: &Sealer, g: &Genuine) {
    let opened = sealer.open(&g.text, &g.binding()).expect("a genuine state opens");
    assert_eq!(opened.answers, g.contents.answers);
    assert_eq!(opened.state, g.contents.state);
    assert_eq!(opened.round, g.contents.round);
}

fuzz_target!(|data: &[u8]| {
    let Some(case) = case(data) else { return };
    let (sealer, genuine) = setup();
    match case {
        Case::Text(text) => {
            for g in genuine {
                if text != g.text {
                    assert!(sealer.open(&text, &g.binding()).is_none(), "forged: {text:?}");
                }
            }
        }
        Case::Altered(which, changes) => {
            let g = &genuine[usize::from(which) % genuine.len()];
            let mut text = g.text.clone();
            for change in changes.iter().take(16) {
                match *change {
                    Change::FlipByte(at, mask) => {
                        let Ok(mut raw) = B64.decode(&text) else { continue };
                        if raw.is_empty() {
                            continue;
                        }
                        let at = usize::from(at) % raw.len();
                        raw[at] ^= mask;
                        text = B64.encode(&raw);
                    }
                    Change::SetChar(at, c) => {
                        if text.is_empty() || !c.is_ascii() {
                            continue;
                        }
                        let at = usize::from(at) % text.len();
                        text.replace_range(at..at + 1, &char::from(c).to_string());
                    }
                    Change::Truncate(keep) => text.truncate(usize::from(keep).min(text.len())),
                    // ASCII only, so that every index is a character boundary.
                    Change::Append(c) => text.push(char::from(c & 0x7f)),
                }
            }
            let opened = sealer.open(&text, &g.binding());
            if text == g.text {
                assert!(opened.is_some(), "the unaltered state does not open");
            } else {
                assert!(opened.is_none(), "an altered state opened: {text:?}");
            }
        }
        Case::Rebound {
            which,
            method,
            name,
            arguments,
            principal,
        } => {
            let g = &genuine[usize::from(which) % genuine.len()];
            opens_as_sealed(sealer, g);
            let arguments: Option<Value> = match &arguments {
                None => g.arguments.clone(),
                Some(text) => serde_json::from_str(text).ok(),
            };
            let method = method.as_deref().unwrap_or(g.method);
            let name = name.as_deref().unwrap_or(g.name);
            let principal = match &principal {
                None => g.principal,
                Some(p) => p.as_deref(),
            };
            let binding = Binding {
                method,
                name,
                arguments: arguments.as_ref(),
                unread: None,
                principal,
            };
            let same = method == g.method
                && name == g.name
                && principal == g.principal
                && canonical(arguments.as_ref()) == canonical(g.arguments.as_ref());
            let opened = sealer.open(&g.text, &binding);
            assert_eq!(opened.is_some(), same, "binding {binding:?} vs {:?}", g.binding());
        }
    }
});

/// The arguments as the binding compares them: object keys sorted at every
/// level, `null` for none and for an empty object (one request either way).
fn canonical(v: Option<&Value>) -> String {
    fn sort(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                Value::Object(keys.into_iter().map(|k| (k.clone(), sort(&m[k]))).collect())
            }
            Value::Array(items) => Value::Array(items.iter().map(sort).collect()),
            other => other.clone(),
        }
    }
    let v = v.filter(|a| a.as_object().is_none_or(|o| !o.is_empty()));
    serde_json::to_string(&sort(v.unwrap_or(&Value::Null))).expect("a value serializes")
}

//! Elicitation answers into `#[mcp_runtime::form]` types, through the public
//! path: a 2026-07-28 `tools/call` whose `inputResponses` carries arbitrary
//! JSON as the answer to a form elicitation (`Input::elicit::<Form>`), which
//! the runtime parses as an `ElicitResult` and then into the form.
//!
//! The input is UTF-8 text: when it is JSON, it is the whole answer
//! (`{"action": ..., "content": ...}`, or anything else); otherwise its
//! first byte picks an action (`accept`, `decline`, `cancel`, `Accept` or
//! empty, modulo 5) and the text after the first character is the `content`.
//!
//! Invariants: no panic; one valid single-line response with the request's
//! id; the outcome agrees with a model of the documented rules: `accept`
//! with content that deserializes into the form (absent or `null` content
//! read as `{}`) completes with that form, `decline` and `cancel` complete
//! as such, anything else is -32602 (invalid params) naming the key.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_runtime::__private::engine::dispatch::Scope;
use mcp_runtime::__private::engine::jsonrpc::{self, Message};
use mcp_runtime::prelude::*;
use mcp_runtime_fuzz::check_message;
use serde_json::{json, Value};
use std::sync::OnceLock;

/// A priority.
#[mcp_runtime::form]
#[derive(Debug, PartialEq)]
#[serde(rename_all = "lowercase")]
enum Level {
    Low,
    High,
}

/// A form with every kind of field the elicitation subset allows.
#[mcp_runtime::form]
#[derive(Debug, PartialEq)]
struct Ticket {
    /// A title.
    title: String,
    /// Whether it is urgent.
    urgent: bool,
    /// How many.
    count: u8,
    /// A signed number.
    delta: Option<i64>,
    /// A ratio.
    ratio: Option<f64>,
    /// A priority (single select).
    level: Level,
    /// Labels (multi-select).
    labels: Vec<Level>,
    /// A note.
    note: Option<String>,
}

/// Files a ticket, asking for its fields with a form.
#[tool]
fn file_ticket(input: Input) -> Flow<String> {
    Ok(match input.elicit::<Ticket>("ticket", "Describe the ticket.")? {
        Elicited::Accepted(t) => format!("accepted {}", serde_json::to_string(&t)?),
        Elicited::Declined => "declined".into(),
        Elicited::Cancelled => "cancelled".into(),
    })
}

struct Env {
    runtime: tokio::runtime::Runtime,
    server: Server,
}

fn env() -> &'static Env {
    static ENV: OnceLock<Env> = OnceLock::new();
    ENV.get_or_init(|| Env {
        runtime: mcp_runtime_fuzz::paused_runtime(),
        server: Server::builder()
            .name("fuzz")
            .version("0.0.0")
            .request_state_keys(vec![[7; 32]])
            .build()
            .expect("the fuzz server builds"),
    })
}

const ACTIONS: &[&str] = &["accept", "decline", "cancel", "Accept", ""];

/// What the documented rules say the tool answers: `Ok(text)` or `Err(())`
/// for -32602. An answer is an object (`ElicitResult`): `action` one of
/// `accept`, `decline`, `cancel`; `content`, if present, an object whose
/// values are strings, numbers, booleans or lists of strings (a `null`
/// value is an optional field left empty); on `accept` the content is the
/// form.
fn model(answer: &Value) -> Result<String, ()> {
    let answer = answer.as_object().ok_or(())?;
    let content = match answer.get("content") {
        None | Some(Value::Null) => None,
        Some(Value::Object(fields)) => {
            let mut kept = serde_json::Map::new();
            for (k, v) in fields {
                let ok = match v {
                    Value::Null => continue,
                    Value::String(_) | Value::Number(_) | Value::Bool(_) => true,
                    Value::Array(items) => items.iter().all(Value::is_string),
                    Value::Object(_) => false,
                };
                if !ok {
                    return Err(());
                }
                kept.insert(k.clone(), v.clone());
            }
            Some(Value::Object(kept))
        }
        Some(_) => return Err(()),
    };
    match answer.get("action").and_then(Value::as_str) {
        Some("accept") => {
            let t: Ticket = serde_json::from_value(content.unwrap_or_else(|| json!({}))).map_err(|_| ())?;
            Ok(format!(
                "accepted {}",
                serde_json::to_string(&t).expect("a form serializes")
            ))
        }
        Some("decline") => Ok("declined".into()),
        Some("cancel") => Ok("cancelled".into()),
        _ => Err(()),
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let answer_text = if serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok() {
        text.to_owned()
    } else {
        let (pick, content) = match text.char_indices().nth(1) {
            Some((i, _)) => (text.as_bytes()[0], &text[i..]),
            None => return,
        };
        let action = ACTIONS[usize::from(pick) % ACTIONS.len()];
        format!(r#"{{"action":"{action}","content":{content}}}"#)
    };
    // Only JSON text goes in (the request must stay one valid message).
    let Ok(answer) = serde_json::from_str::<Value>(&answer_text) else {
        return;
    };
    let line = format!(
        concat!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"file_ticket","arguments":{{}},"#,
            r#""inputResponses":{{"ticket":{}}},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","#,
            r#""io.modelcontextprotocol/clientCapabilities":{{"elicitation":{{"form":{{}}}}}}}}}}}}"#
        ),
        answer_text
    );
    let request = match jsonrpc::parse(line.as_bytes()) {
        Ok(Message::Request(r)) => r,
        // Nested too deep for the framing: rejected before any answer is read.
        Err(rejected) => {
            assert_eq!(
                rejected.error.code(),
                mcp_runtime::ErrorCode::INVALID_REQUEST,
                "{rejected:?}"
            );
            return;
        }
        Ok(other) => panic!("not a request: {other:?}"),
    };
    let env = env();
    let reply = env.runtime.block_on(mcp_runtime::__private::engine::handle_request(
        &env.server,
        &request,
        Scope::default(),
    ));
    let v = check_message(&reply.body);
    assert_eq!(v["id"], 7);
    let expected = if answer.is_null() {
        // `null` means "not answered yet": the form is asked for.
        assert_eq!(v["result"]["resultType"], "input_required", "{v}");
        return;
    } else {
        model(&answer)
    };
    match expected {
        Ok(text) => {
            assert_eq!(reply.status, 200, "{v}");
            assert_eq!(v["result"]["content"][0]["text"], text.as_str(), "{v}");
        }
        Err(()) => {
            assert_eq!(v["error"]["code"], -32602, "{v}");
            let message = v["error"]["message"].as_str().unwrap_or_default();
            assert!(message.contains("inputResponses[\"ticket\"]"), "{v}");
        }
    }
});

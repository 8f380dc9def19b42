//! The whole dispatch, bytes in and bytes out, through the stdio transport
//! (`transport::stdio::serve_io`: line framing and trimming, `Connection`,
//! the dispatcher, the writer) of a server with real tools, resources and a
//! prompt defined below, on one current-thread tokio runtime with a paused
//! clock: a timer fires as soon as nothing else can run, so no input waits in
//! real time (a legacy server-to-client request times out after its 120
//! virtual seconds).
//!
//! Up to 8 lines per input, so that a legacy `initialize` and the requests
//! of its session (answers to the server's own requests included), or a
//! request and its cancellation, can be tried; stdin hands over one line at
//! a time and waits for the server to be idle after each, then closes.
//!
//! Invariants: no panic (a handler panic is also a crash: libFuzzer's panic
//! hook aborts); the server finishes once its stdin is closed (within a
//! virtual hour); every line written is exactly one valid JSON-RPC 2.0
//! message with a standard error code, if any; every response answers an id
//! the input sent; for a one-line input, exactly the responses
//! `jsonrpc::parse` implies (one for a rejected message or a request, none
//! for a notification or a response; a `subscriptions/listen` stream that is
//! still open when stdin closes ends without one).
//!
//! `MCP_FUZZ_DEBUG=1` prints every line in and out on stderr (to replay a
//! crash, or to make seeds: see `gen_seeds.py`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_runtime::__private::engine::jsonrpc::{self, Message};
use mcp_runtime::prelude::*;
use mcp_runtime::protocol::RequestId;
use mcp_runtime_fuzz::{check_message, id_value, CODES};
use serde_json::{json, Value};
use std::future::Future;
use std::pin::Pin;
use std::sync::OnceLock;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, ReadBuf};

/// A shape.
#[mcp_runtime::schema]
#[serde(rename_all = "lowercase")]
enum Shape {
    Circle,
    Square,
    Triangle,
}

/// An item.
#[mcp_runtime::schema]
struct Item {
    /// Its name.
    name: String,
    /// How many.
    count: u32,
    /// Its shape.
    shape: Shape,
    /// Labels.
    tags: Option<Vec<String>>,
    /// Its weight in grams.
    weight: Option<f64>,
}

/// Echoes its text.
#[tool(read_only)]
fn echo(text: String) -> String {
    text
}

/// Describes an item (structured output).
#[tool]
fn describe(item: Item, note: Option<String>) -> Json<Item> {
    let _ = note;
    Json(item)
}

/// Echoes a region also sent as the `Mcp-Param-Region` header.
#[tool(read_only)]
fn region_echo(
    /// A region.
    #[header = "Region"]
    region: String,
) -> String {
    format!("region: {region}")
}

/// Fails as a tool, with the reason given.
#[tool]
fn refuse(reason: String) -> Result<String, String> {
    Err(reason)
}

/// Reports progress and logs (no sleeping).
#[tool]
async fn work(steps: u8, ctx: Context) -> String {
    for i in 0..steps.min(4) {
        ctx.progress(f64::from(i), Some(f64::from(steps)), Some("working"));
        tokio::task::yield_now().await;
    }
    ctx.log(LoggingLevel::Info, Some("fuzz"), &json!({ "steps": steps }));
    format!("did {steps} steps")
}

/// A colour.
#[mcp_runtime::form]
#[serde(rename_all = "lowercase")]
enum Colour {
    Red,
    Green,
    Blue,
}

/// Preferences.
#[mcp_runtime::form]
struct Prefs {
    /// Your name.
    name: String,
    /// Your age.
    age: Option<u8>,
    /// Send news.
    newsletter: bool,
    /// Favourite colour.
    colour: Colour,
    /// Other colours.
    extras: Vec<Colour>,
}

/// A confirmation.
#[mcp_runtime::form]
struct Confirm {
    /// Go ahead.
    ok: bool,
}

/// Signs up: asks for preferences, then for a confirmation, carrying state.
#[tool]
fn sign_up(plan: String, input: Input) -> Flow<String> {
    if input.round() == 0 {
        input.save(&plan)?;
    }
    let prefs = match input.elicit::<Prefs>("prefs", "Your preferences?")? {
        Elicited::Accepted(p) => p,
        Elicited::Declined => return Ok("declined".into()),
        Elicited::Cancelled => return Ok("cancelled".into()),
    };
    let ok = input
        .elicit::<Confirm>("confirm", &format!("Sign {} up?", prefs.name))?
        .accepted()
        .is_some_and(|c| c.ok);
    let saved: Option<String> = input.state();
    Ok(format!("{} {ok} {saved:?} round {}", prefs.name, input.round()))
}

/// Asks for roots, a sample and a URL visit at once.
#[tool]
fn gather(input: Input) -> Flow<String> {
    let (roots, sampled, visit) = input.ask((
        Ask::roots("roots"),
        Ask::sample("sample", Sampling::user("Say hi.").max_tokens(10)),
        Ask::elicit_url("visit", "Please log in.", "https://example.com/login"),
    ))?;
    Ok(format!("{} roots, {:?}, {visit:?}", roots.len(), sampled.text()))
}

/// A static note.
#[resource(uri = "fuzz://note", mime_type = "text/plain")]
fn note() -> &'static str {
    "a note"
}

/// An item by number (1 to 9).
#[resource(uri_template = "fuzz://items/{id}", mime_type = "application/json")]
fn item(#[complete(with = complete_id)] id: u64) -> Option<Json<Value>> {
    (1..10).contains(&id).then(|| Json(json!({ "id": id })))
}

/// A file below the root.
#[resource(uri_template = "fuzz://files/{+path}")]
fn file(path: String) -> String {
    format!("file {path}")
}

fn complete_id(prefix: &str) -> Vec<String> {
    ["1", "2", "12"]
        .iter()
        .filter(|v| v.starts_with(prefix))
        .map(|v| v.to_string())
        .collect()
}

/// Reviews code.
#[prompt]
fn review(
    /// The code.
    code: String,
    /// Its language.
    #[complete(with = languages)]
    language: Option<String>,
) -> Vec<PromptMessage> {
    vec![
        PromptMessage::user(format!("Review this {} code:", language.as_deref().unwrap_or("?"))),
        PromptMessage::user(code),
    ]
}

fn languages(prefix: &str) -> Vec<String> {
    ["rust", "ruby", "python"]
        .iter()
        .filter(|l| l.starts_with(prefix))
        .map(|l| l.to_string())
        .collect()
}

struct Env {
    runtime: tokio::runtime::Runtime,
    server: Server,
    debug: bool,
}

fn env() -> &'static Env {
    static ENV: OnceLock<Env> = OnceLock::new();
    ENV.get_or_init(|| Env {
        runtime: mcp_runtime_fuzz::paused_runtime(),
        server: Server::builder()
            .name("fuzz")
            .version("0.0.0")
            .page_size(2)
            // A fixed key and a long life, so that seeds with a genuine
            // requestState keep opening.
            .request_state_keys(vec![[7; 32]])
            .request_state_ttl(Duration::from_secs(100 * 365 * 24 * 3600))
            .build()
            .expect("the fuzz server builds"),
        debug: std::env::var_os("MCP_FUZZ_DEBUG").is_some(),
    })
}

/// What the stdio transport does to a line: trims ASCII whitespace.
fn trim(line: &[u8]) -> &[u8] {
    let start = line.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(line.len());
    let end = line
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |e| e + 1);
    &line[start..end]
}

/// Stdin that hands the server one line at a time, and after each newline
/// waits until the server is idle (with the clock paused, a 1 ms sleep ends
/// only when nothing else can run): a line answering a server-to-client
/// request then arrives after that request was sent, as from a real client.
struct Paced<'a> {
    data: &'a [u8],
    pause: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl AsyncRead for Paced<'_> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if let Some(pause) = self.pause.as_mut() {
            std::task::ready!(pause.as_mut().poll(cx));
            self.pause = None;
        }
        let data = self.data;
        let end = data.iter().position(|&b| b == b'\n').map_or(data.len(), |i| i + 1);
        let n = end.min(buf.remaining());
        buf.put_slice(&data[..n]);
        self.data = &data[n..];
        if n > 0 && data[n - 1] == b'\n' {
            self.pause = Some(Box::pin(tokio::time::sleep(Duration::from_millis(1))));
        }
        Poll::Ready(Ok(()))
    }
}

fuzz_target!(|data: &[u8]| {
    let env = env();
    // At most 8 lines.
    let data = match data.iter().enumerate().filter(|(_, &b)| b == b'\n').nth(7) {
        Some((i, _)) => &data[..=i],
        None => data,
    };
    let lines: Vec<&[u8]> = data
        .split(|&b| b == b'\n')
        .map(trim)
        .filter(|l| !l.is_empty())
        .collect();
    if env.debug {
        for line in &lines {
            eprintln!("> {}", String::from_utf8_lossy(line));
        }
    }
    let stdin = Paced { data, pause: None };
    let (stdout, mut client) = tokio::io::duplex(1 << 16);
    let mut written = Vec::new();
    env.runtime.block_on(async {
        let serve = mcp_runtime::transport::stdio::serve_io(env.server.clone(), stdin, stdout);
        let read = client.read_to_end(&mut written);
        // A virtual hour: only a server that never finishes after its stdin
        // closed (a request that never ends, or a writer that never stops)
        // takes that long.
        match tokio::time::timeout(Duration::from_secs(3600), async { tokio::join!(serve, read) }).await {
            Ok((served, read)) => {
                served.expect("serve_io fails only on I/O errors");
                read.expect("reading the server's output");
            }
            Err(_) => panic!("the stdio server did not finish within a virtual hour of its stdin closing"),
        }
    });
    assert!(
        written.is_empty() || written.ends_with(b"\n"),
        "the output does not end with a newline"
    );
    let out: Vec<&[u8]> = written.split(|&b| b == b'\n').filter(|m| !m.is_empty()).collect();
    if env.debug {
        for message in &out {
            eprintln!("< {}", String::from_utf8_lossy(message));
        }
    }
    check(&lines, &out);
});

fn check(lines: &[&[u8]], out: &[&[u8]]) {
    let parsed: Vec<_> = lines.iter().map(|l| jsonrpc::parse(l)).collect();
    let sent_ids: Vec<RequestId> = parsed
        .iter()
        .filter_map(|p| match p {
            Ok(Message::Request(r)) => Some(r.id.clone()),
            Err(r) => r.id.clone(),
            _ => None,
        })
        .collect();
    let mut responses = Vec::new();
    for message in out {
        let v = check_message(message);
        if v.get("method").is_some() {
            continue; // a notification, or a legacy server-to-client request
        }
        if let Some(code) = v["error"]["code"].as_i64() {
            assert!(CODES.contains(&code), "a non-standard error code: {v}");
        }
        if let Some(id) = v.get("id") {
            assert!(
                sent_ids.iter().any(|s| id_value(s) == *id),
                "a response to an id the input never sent: {v}"
            );
        }
        responses.push(v);
    }
    // One message in: exactly the responses its classification implies.
    if let [one] = parsed.as_slice() {
        let ids: Vec<Option<&Value>> = responses.iter().map(|v| v.get("id")).collect();
        match one {
            Err(rejected) => {
                assert_eq!(ids.len(), 1, "a rejected message gets one response: {responses:?}");
                assert_eq!(ids[0], rejected.id.as_ref().map(id_value).as_ref());
                assert!(responses[0].get("error").is_some());
            }
            Ok(Message::Request(r)) => {
                let id = id_value(&r.id);
                let long_lived = mcp_runtime::__private::engine::dispatch::is_long_lived(&r.method);
                if long_lived {
                    assert!(ids.len() <= 1, "{responses:?}");
                } else {
                    assert_eq!(ids.len(), 1, "a request gets exactly one response: {responses:?}");
                }
                assert!(ids.iter().all(|i| *i == Some(&id)), "{responses:?}");
            }
            Ok(_) => assert!(
                responses.is_empty(),
                "a notification or response was answered: {responses:?}"
            ),
        }
    }
}

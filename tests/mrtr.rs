//! Multi round-trip requests over stdio: typed asks, multi-round flows with
//! sealed state, every rejection path of `requestState`, capabilities,
//! decline and cancel. Every message is validated against the schema.

mod support;

use mcp_runtime::prelude::*;
use serde_json::{json, Value};
use support::{meta_with, StdioClient};

/// Shipping details.
#[mcp_runtime::form]
struct Shipping {
    /// Deliver to this city.
    city: String,
    /// Express delivery.
    express: bool,
}

/// A size.
#[mcp_runtime::form]
#[derive(Debug)]
#[serde(rename_all = "lowercase")]
enum Size {
    /// Small
    S,
    /// Medium
    M,
}

/// A size choice.
#[mcp_runtime::form]
struct SizeChoice {
    /// The size.
    size: Size,
}

/// How urgent.
#[mcp_runtime::form]
#[derive(Debug)]
#[serde(rename_all = "lowercase")]
enum Priority {
    Low,
    Normal,
    /// Pages whoever is on call
    Urgent,
}

/// A ticket's priority.
#[mcp_runtime::form]
struct TicketPriority {
    /// The priority.
    priority: Priority,
}

/// Files a ticket: asks its priority.
#[tool]
fn file_ticket(input: Input) -> Flow<String> {
    let priority = input
        .elicit::<TicketPriority>("priority", "How urgent?")?
        .accepted()
        .map(|t| t.priority);
    Ok(format!("{priority:?}"))
}

/// How many to restock.
#[mcp_runtime::form]
struct Restock {
    /// Units, 1 to 10.
    #[schemars(range(min = 1, max = 10))]
    qty: u32,
}

/// Restocks a shelf: asks how many.
#[tool]
fn restock(input: Input) -> Flow<String> {
    let qty = input.elicit::<Restock>("qty", "How many?")?.accepted().map(|r| r.qty);
    Ok(format!("{qty:?}"))
}

/// Orders a shirt: asks for shipping, then the size, then confirms via the model.
#[tool]
fn order(item: String, input: Input) -> Flow<String> {
    let shipping = match input.elicit::<Shipping>("shipping", "Where to?")? {
        Elicited::Accepted(s) => s,
        Elicited::Declined => return Ok("declined".into()),
        Elicited::Cancelled => return Ok("cancelled".into()),
    };
    input.save(&format!("{item} to {}", shipping.city))?;
    let size = input
        .elicit::<SizeChoice>("size", "Which size?")?
        .accepted()
        .map(|s| s.size);
    let summary: String = input.state().unwrap_or_default();
    Ok(format!("{summary}, size {size:?}, express {}", shipping.express))
}

/// A record, named by its id.
#[mcp_runtime::schema]
struct Record {
    /// The record's id.
    id: String,
}

/// Ships a record: asks where to, keeps which record, then says so.
#[tool]
fn ship_record(record: Record, input: Input) -> Flow<String> {
    if input.state::<String>().is_none() {
        input.save(&record.id)?;
    }
    let shipping = input.elicit::<Shipping>("shipping", "Where to?")?.accepted();
    let kept: String = input.state().unwrap_or_default();
    Ok(format!("{kept} to {:?}", shipping.map(|s| s.city)))
}

/// Needs elicitation and sampling in one round.
#[tool]
fn both(input: Input) -> Flow<String> {
    let (a, b) = input.ask((
        Ask::<Elicited<SizeChoice>>::elicit("pick", "Pick a size"),
        Ask::sample("think", Sampling::user("Think").system("Be brief").max_tokens(10)),
    ))?;
    Ok(format!("{:?} {:?}", a.accepted().map(|s| s.size), b.text()))
}

/// Falls back to sampling when the client cannot elicit.
#[tool]
fn fallback(input: Input) -> Flow<String> {
    if input.can_elicit() {
        return Ok(format!(
            "{:?}",
            input.elicit::<SizeChoice>("pick", "Pick")?.accepted().map(|s| s.size)
        ));
    }
    Ok(input
        .sample("guess", Sampling::user("Guess a size"))?
        .text()
        .unwrap_or_default()
        .to_owned())
}

/// A prompt that asks.
#[prompt]
fn greeting(input: Input) -> Flow<String> {
    let size = input.elicit::<SizeChoice>("size", "Which size?")?;
    Ok(format!("Hello in size {:?}", size.accepted().map(|s| s.size)))
}

/// A resource that asks.
#[resource(uri = "orders://draft")]
fn draft(input: Input) -> Flow<String> {
    let roots = input.roots("roots")?;
    Ok(format!("{} roots", roots.len()))
}

fn caps_all() -> Value {
    json!({"elicitation": {}, "sampling": {}, "roots": {}})
}

fn params(name: &str, args: Value, caps: Value, extra: Value) -> Value {
    let mut p = json!({"_meta": meta_with(caps), "name": name, "arguments": args});
    for (k, v) in extra.as_object().unwrap() {
        p[k] = v.clone();
    }
    p
}

fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

fn code(v: &Value) -> i64 {
    v["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error: {v}"))
}

fn client() -> StdioClient {
    StdioClient::start(
        Server::builder()
            .request_state_keys(vec![[9; 32]])
            .build()
            .expect("the server builds"),
    )
}

#[tokio::test]
async fn a_multi_round_flow_with_typed_state() {
    let mut c = client();
    let args = json!({"item": "shirt"});
    let r1 = c
        .call(1, "tools/call", params("order", args.clone(), caps_all(), json!({})))
        .await;
    let r1 = &r1["result"];
    assert_eq!(r1["resultType"], "input_required");
    let ask = &r1["inputRequests"]["shipping"];
    assert_eq!(ask["method"], "elicitation/create");
    assert_eq!(ask["params"]["mode"], "form");
    assert_eq!(
        ask["params"]["requestedSchema"],
        json!({"type": "object", "properties": {
            "city": {"description": "Deliver to this city.", "type": "string"},
            "express": {"description": "Express delivery.", "type": "boolean"}},
            "required": ["city", "express"]})
    );
    assert!(r1.get("ttlMs").is_none(), "input_required carries no caching hints");
    let state1 = r1["requestState"].as_str().unwrap().to_owned();

    let responses = json!({"shipping": accept(json!({"city": "Lyon", "express": true}))});
    let extra = json!({"inputResponses": responses, "requestState": state1});
    let r2 = c
        .call(2, "tools/call", params("order", args.clone(), caps_all(), extra))
        .await;
    let r2 = &r2["result"];
    assert_eq!(r2["resultType"], "input_required");
    let size = &r2["inputRequests"]["size"]["params"]["requestedSchema"]["properties"]["size"];
    assert_eq!(
        size["oneOf"],
        json!([{"const": "s", "title": "Small"}, {"const": "m", "title": "Medium"}])
    );
    let state2 = r2["requestState"].as_str().unwrap().to_owned();
    assert_ne!(state1, state2);

    // Only the new answer is sent: the first is in the sealed state.
    let extra = json!({"inputResponses": {"size": accept(json!({"size": "m"}))}, "requestState": state2});
    let r3 = c
        .call(3, "tools/call", params("order", args.clone(), caps_all(), extra))
        .await;
    assert_eq!(r3["result"]["resultType"], "complete");
    assert_eq!(
        r3["result"]["content"][0]["text"],
        "shirt to Lyon, size Some(M), express true"
    );
    c.close().await.unwrap();
}

/// An answer to a question the round did not put is ignored, not kept for
/// a later round that puts it: that round asks it as usual.
#[tokio::test]
async fn an_answer_to_a_question_not_asked_is_ignored() {
    let mut c = client();
    let args = json!({"item": "shirt"});
    let r1 = c
        .call(1, "tools/call", params("order", args.clone(), caps_all(), json!({})))
        .await;
    let state1 = r1["result"]["requestState"].as_str().unwrap().to_owned();
    let responses = json!({
        "shipping": accept(json!({"city": "Lyon", "express": false})),
        "size": accept(json!({"size": "s"})),
    });
    let extra = json!({"inputResponses": responses, "requestState": state1});
    let r2 = c
        .call(2, "tools/call", params("order", args.clone(), caps_all(), extra))
        .await;
    assert_eq!(r2["result"]["resultType"], "input_required", "{r2}");
    assert!(r2["result"]["inputRequests"]["size"].is_object(), "{r2}");
    let state2 = r2["result"]["requestState"].as_str().unwrap().to_owned();
    let extra = json!({"inputResponses": {"size": accept(json!({"size": "m"}))}, "requestState": state2});
    let r3 = c.call(3, "tools/call", params("order", args, caps_all(), extra)).await;
    assert_eq!(
        r3["result"]["content"][0]["text"], "shirt to Lyon, size Some(M), express false",
        "{r3}"
    );
    c.close().await.unwrap();
}

#[tokio::test]
async fn decline_and_cancel_are_distinct() {
    let mut c = client();
    for (id, action, expected) in [(1, "decline", "declined"), (2, "cancel", "cancelled")] {
        let extra = json!({"inputResponses": {"shipping": {"action": action}}});
        let v = c
            .call(
                id,
                "tools/call",
                params("order", json!({"item": "x"}), caps_all(), extra),
            )
            .await;
        assert_eq!(v["result"]["content"][0]["text"], expected);
    }
    c.close().await.unwrap();
}

#[tokio::test]
async fn several_asks_are_batched_into_one_round() {
    let mut c = client();
    let v = c
        .call(1, "tools/call", params("both", json!({}), caps_all(), json!({})))
        .await;
    let asks = v["result"]["inputRequests"].as_object().unwrap();
    assert_eq!(asks.len(), 2);
    assert_eq!(asks["think"]["method"], "sampling/createMessage");
    assert_eq!(
        asks["think"]["params"],
        json!({"messages": [{"role": "user", "content": {"type": "text", "text": "Think"}}], "maxTokens": 10, "systemPrompt": "Be brief"})
    );
    let state = v["result"]["requestState"].clone();
    // Answering one of two asks again asks for the other only.
    let extra = json!({"inputResponses": {"pick": accept(json!({"size": "s"}))}, "requestState": state});
    let v = c
        .call(2, "tools/call", params("both", json!({}), caps_all(), extra))
        .await;
    let asks = v["result"]["inputRequests"].as_object().unwrap();
    assert_eq!(asks.keys().collect::<Vec<_>>(), ["think"]);
    let sampled =
        json!({"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "m", "stopReason": "endTurn"});
    let extra =
        json!({"inputResponses": {"think": sampled, "extra_key": 1}, "requestState": v["result"]["requestState"]});
    let v = c
        .call(3, "tools/call", params("both", json!({}), caps_all(), extra))
        .await;
    assert_eq!(v["result"]["content"][0]["text"], r#"Some(S) Some("ok")"#);
    c.close().await.unwrap();
}

#[tokio::test]
async fn every_tampering_of_request_state_is_one_fixed_error() {
    let mut c = client();
    let args = json!({"item": "shirt"});
    let r1 = c
        .call(1, "tools/call", params("order", args.clone(), caps_all(), json!({})))
        .await;
    let state = r1["result"]["requestState"].as_str().unwrap().to_owned();
    let answer = json!({"shipping": accept(json!({"city": "Lyon", "express": false}))});
    let mut flipped = state.clone().into_bytes();
    let mid = flipped.len() / 2;
    flipped[mid] = if flipped[mid] == b'A' { b'B' } else { b'A' };
    let flipped = String::from_utf8(flipped).unwrap();
    let other_key = {
        let mut other = StdioClient::start(
            Server::builder()
                .request_state_keys(vec![[1; 32]])
                .build()
                .expect("the server builds"),
        );
        let v = other
            .call(1, "tools/call", params("order", args.clone(), caps_all(), json!({})))
            .await;
        other.close().await.unwrap();
        v["result"]["requestState"].as_str().unwrap().to_owned()
    };
    let cases = [
        ("flipped byte", "order", args.clone(), flipped),
        ("truncated", "order", args.clone(), state[..state.len() - 3].to_owned()),
        ("suffix", "order", args.clone(), format!("{state}-TAMPERED")),
        ("other arguments", "order", json!({"item": "hat"}), state.clone()),
        ("another tool", "both", json!({}), state.clone()),
        ("wrong key", "order", args.clone(), other_key),
        ("oversize", "order", args.clone(), "A".repeat(70_000)),
        ("garbage", "order", args.clone(), "!!!".into()),
    ];
    let mut id = 10;
    for (what, tool, args, bad) in cases {
        id += 1;
        let extra = json!({"inputResponses": answer, "requestState": bad});
        let v = c.call(id, "tools/call", params(tool, args, caps_all(), extra)).await;
        assert_eq!(code(&v), -32602, "{what}: {v}");
        assert_eq!(
            v["error"]["message"],
            mcp_runtime::__private::engine::REJECTED,
            "{what}"
        );
    }
    c.close().await.unwrap();
}

#[tokio::test]
async fn expired_and_rotated_out_states_are_rejected() {
    let short = Server::builder()
        .request_state_keys(vec![[3; 32]])
        .request_state_ttl(std::time::Duration::ZERO)
        .build()
        .expect("the server builds");
    let mut c = StdioClient::start(short);
    let v = c
        .call(
            1,
            "tools/call",
            params("order", json!({"item": "x"}), caps_all(), json!({})),
        )
        .await;
    let state = v["result"]["requestState"].clone();
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let v = c
        .call(
            2,
            "tools/call",
            params(
                "order",
                json!({"item": "x"}),
                caps_all(),
                json!({"requestState": state}),
            ),
        )
        .await;
    assert_eq!(code(&v), -32602);
    c.close().await.unwrap();

    // Sealed with key A; a server with keys [B, A] opens it; one with [B] does not.
    let mut a = StdioClient::start(
        Server::builder()
            .request_state_keys(vec![[4; 32]])
            .build()
            .expect("the server builds"),
    );
    let v = a
        .call(
            1,
            "tools/call",
            params("order", json!({"item": "x"}), caps_all(), json!({})),
        )
        .await;
    a.close().await.unwrap();
    let state = v["result"]["requestState"].clone();
    let extra = json!({"requestState": state, "inputResponses": {"shipping": {"action": "decline"}}});
    let mut rotated = StdioClient::start(
        Server::builder()
            .request_state_keys(vec![[5; 32], [4; 32]])
            .build()
            .expect("the server builds"),
    );
    let v = rotated
        .call(
            1,
            "tools/call",
            params("order", json!({"item": "x"}), caps_all(), extra.clone()),
        )
        .await;
    assert_eq!(v["result"]["content"][0]["text"], "declined");
    rotated.close().await.unwrap();
    let mut retired = StdioClient::start(
        Server::builder()
            .request_state_keys(vec![[5; 32]])
            .build()
            .expect("the server builds"),
    );
    let v = retired
        .call(
            1,
            "tools/call",
            params("order", json!({"item": "x"}), caps_all(), extra),
        )
        .await;
    assert_eq!(code(&v), -32602);
    retired.close().await.unwrap();
}

/// A select whose enum documents some variants and not others offers
/// every variant, each with a title.
#[tokio::test]
async fn a_select_offers_every_variant_documented_or_not() {
    let mut c = client();
    let v = c
        .call(1, "tools/call", params("file_ticket", json!({}), caps_all(), json!({})))
        .await;
    let field = &v["result"]["inputRequests"]["priority"]["params"]["requestedSchema"]["properties"]["priority"];
    assert_eq!(
        field["oneOf"],
        json!([
            {"const": "low", "title": "low"},
            {"const": "normal", "title": "normal"},
            {"const": "urgent", "title": "Pages whoever is on call"}
        ]),
        "{v}"
    );
    let state = v["result"]["requestState"].clone();
    let answer = json!({"inputResponses": {"priority": accept(json!({"priority": "normal"}))}, "requestState": state});
    let v = c
        .call(2, "tools/call", params("file_ticket", json!({}), caps_all(), answer))
        .await;
    assert_eq!(v["result"]["content"][0]["text"], "Some(Normal)", "{v}");
    c.close().await.unwrap();
}

/// An accepted answer outside the bounds its form states is refused like
/// one of the wrong type; one within them is taken.
#[tokio::test]
async fn an_answer_outside_its_forms_bounds_is_an_error() {
    let mut c = client();
    let v = c
        .call(1, "tools/call", params("restock", json!({}), caps_all(), json!({})))
        .await;
    assert_eq!(v["result"]["resultType"], "input_required", "{v}");
    let asked = &v["result"]["inputRequests"]["qty"]["params"]["requestedSchema"]["properties"]["qty"];
    assert_eq!(
        (asked["minimum"].as_f64(), asked["maximum"].as_f64()),
        (Some(1.0), Some(10.0)),
        "{v}"
    );
    let state = v["result"]["requestState"].clone();
    let answer = |qty: u32| json!({"inputResponses": {"qty": accept(json!({"qty": qty}))}, "requestState": state});
    for (id, qty) in [(2, 5000), (3, 0)] {
        let v = c
            .call(id, "tools/call", params("restock", json!({}), caps_all(), answer(qty)))
            .await;
        assert_eq!(code(&v), -32602, "{qty}: {v}");
        assert!(
            v["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("content.qty")),
            "{v}"
        );
    }
    let v = c
        .call(4, "tools/call", params("restock", json!({}), caps_all(), answer(10)))
        .await;
    assert_eq!(v["result"]["content"][0]["text"], "Some(10)", "{v}");
    c.close().await.unwrap();
}

/// Arguments that do not read as a JSON value (a number out of range in a
/// field the tool ignores) still bind the state to themselves: the state
/// of `mine` opens for `mine` alone, not for `other` (whose call would
/// then ship `mine`).
#[tokio::test]
async fn a_state_is_bound_to_arguments_that_do_not_read_as_a_value() {
    let mut c = client();
    let line = |id: i64, item: &str, extra: Value| {
        let p = params(
            "ship_record",
            json!({"record": {"id": item, "x": "HUGE"}}),
            caps_all(),
            extra,
        );
        let line = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": p}).to_string();
        line.replace("\"HUGE\"", "1e400")
    };
    c.send_raw(&line(1, "mine", json!({}))).await;
    let v = c.recv().await;
    assert_eq!(v["result"]["resultType"], "input_required", "{v}");
    let state = v["result"]["requestState"].clone();
    let answer = json!({"requestState": state, "inputResponses": {"shipping": accept(json!({"city": "Lyon", "express": false}))}});
    c.send_raw(&line(2, "other", answer.clone())).await;
    let v = c.recv().await;
    assert_eq!(code(&v), -32602, "the state opened for other arguments: {v}");
    c.send_raw(&line(3, "mine", answer)).await;
    let v = c.recv().await;
    assert_eq!(v["result"]["content"][0]["text"], "mine to Some(\"Lyon\")", "{v}");
    c.close().await.unwrap();
}

#[tokio::test]
async fn missing_answers_re_ask_and_malformed_answers_are_errors() {
    let mut c = client();
    let extra = json!({"inputResponses": {"unrelated": accept(json!({}))}});
    let v = c
        .call(
            1,
            "tools/call",
            params("order", json!({"item": "x"}), caps_all(), extra),
        )
        .await;
    assert_eq!(v["result"]["resultType"], "input_required");
    for (id, bad) in [
        (2, json!({"shipping": 12345})),
        (3, json!({"shipping": accept(json!({"city": 5}))})),
        (4, json!([1])),
    ] {
        let v = c
            .call(
                id,
                "tools/call",
                params(
                    "order",
                    json!({"item": "x"}),
                    caps_all(),
                    json!({"inputResponses": bad}),
                ),
            )
            .await;
        assert_eq!(code(&v), -32602, "{v}");
    }
    let v = c
        .call(
            5,
            "tools/call",
            params(
                "order",
                json!({"item": "x"}),
                caps_all(),
                json!({"inputResponses": null}),
            ),
        )
        .await;
    assert_eq!(v["result"]["resultType"], "input_required");
    c.close().await.unwrap();
}

#[tokio::test]
async fn asks_respect_client_capabilities() {
    let mut c = client();
    // No elicitation: the call fails with -32021 naming it.
    let v = c
        .call(
            1,
            "tools/call",
            params("order", json!({"item": "x"}), json!({"sampling": {}}), json!({})),
        )
        .await;
    assert_eq!(code(&v), -32021);
    assert_eq!(v["error"]["data"]["requiredCapabilities"], json!({"elicitation": {}}));
    // A handler with a fallback asks only what the client can answer.
    let v = c
        .call(
            2,
            "tools/call",
            params("fallback", json!({}), json!({"sampling": {}}), json!({})),
        )
        .await;
    let asks = v["result"]["inputRequests"].as_object().unwrap();
    assert!(asks.values().all(|a| a["method"] == "sampling/createMessage"), "{v}");
    c.close().await.unwrap();
}

#[tokio::test]
async fn prompts_and_resources_ask_too_and_lists_never_do() {
    let mut c = client();
    let p = json!({"_meta": meta_with(caps_all()), "name": "greeting"});
    let v = c.call(1, "prompts/get", p).await;
    assert_eq!(v["result"]["resultType"], "input_required");
    let extra = json!({"_meta": meta_with(caps_all()), "name": "greeting",
        "inputResponses": {"size": accept(json!({"size": "s"}))}, "requestState": v["result"]["requestState"]});
    let v = c.call(2, "prompts/get", extra).await;
    assert_eq!(v["result"]["messages"][0]["content"]["text"], "Hello in size Some(S)");

    let r = json!({"_meta": meta_with(caps_all()), "uri": "orders://draft"});
    let v = c.call(3, "resources/read", r).await;
    assert_eq!(v["result"]["inputRequests"]["roots"]["method"], "roots/list");
    let r = json!({"_meta": meta_with(caps_all()), "uri": "orders://draft",
        "inputResponses": {"roots": {"roots": [{"uri": "file:///a"}]}}, "requestState": v["result"]["requestState"]});
    let v = c.call(4, "resources/read", r).await;
    assert_eq!(v["result"]["contents"][0]["text"], "1 roots");
    let v = c.call(5, "tools/list", json!({})).await;
    assert_eq!(v["result"]["resultType"], "complete");
    c.close().await.unwrap();
}

#[tokio::test]
async fn another_servers_state_is_rejected_even_with_the_same_keys() {
    // Two servers that share keys (one Redis, one secret store) but are
    // different servers: a state of one is foreign to the other.
    let start = |name: &str| {
        StdioClient::start(
            Server::builder()
                .name(name)
                .request_state_keys(vec![[6; 32]])
                .build()
                .expect("the server builds"),
        )
    };
    let mut billing = start("billing");
    let v = billing
        .call(
            1,
            "tools/call",
            params("order", json!({"item": "x"}), caps_all(), json!({})),
        )
        .await;
    let state = v["result"]["requestState"].clone();
    assert!(state.is_string(), "{v}");
    let extra = json!({"requestState": state, "inputResponses": {"shipping": {"action": "decline"}}});
    let v = billing
        .call(
            2,
            "tools/call",
            params("order", json!({"item": "x"}), caps_all(), extra.clone()),
        )
        .await;
    assert_eq!(v["result"]["content"][0]["text"], "declined", "its own server opens it");
    billing.close().await.unwrap();
    let mut other = start("after-sales");
    let v = other
        .call(
            1,
            "tools/call",
            params("order", json!({"item": "x"}), caps_all(), extra),
        )
        .await;
    assert_eq!(code(&v), -32602, "{v}");
    other.close().await.unwrap();
}

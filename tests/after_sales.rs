//! `examples/after-sales` on a real database, run as its binary over stdio:
//! every tool, resource and prompt; the refund's transaction (nothing
//! written when the customer declines, nothing kept when a write in it
//! fails, one ticket when the last round is retried); the export task's
//! result read back, by another process too; two processes on one database
//! (a ticket opened on one found on the other, numbers unique under
//! concurrent opening); a database that is down at start, retried until it
//! is reached; and a URL it cannot use.
//!
//! Each runs on SQLite (a file in a directory of the test's own: nothing to
//! install) and on PostgreSQL (`scripts/postgres.sh`, which installs
//! Debian's package when missing and starts a throwaway server on
//! loopback). Where PostgreSQL is missing and cannot be installed, the
//! PostgreSQL tests say SKIPPED loudly and pass; with `CI` set that is a
//! failure. Every message the server emits is validated against the schema.

mod support;

#[path = "after_sales/client.rs"]
mod client;

use client::{counts, fresh_database, postgres, sql, tool_error, Desk, Scratch};
use serde_json::json;
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// The rows of a CSV text, read by RFC 4180 (quoted fields, doubled quotes).
fn csv_rows(text: &str) -> Vec<Vec<String>> {
    let (mut rows, mut row, mut field) = (Vec::new(), Vec::new(), String::new());
    let (mut quoted, mut chars) = (false, text.chars().peekable());
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') => quoted = true,
            (false, ',') => row.push(std::mem::take(&mut field)),
            (false, '\n') => {
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            (false, c) => field.push(c),
        }
    }
    rows
}

/// Each tool, the ticket resource, the reply prompt and the export task.
fn every_tool(url: &str, dir: &Scratch) {
    let mut desk = Desk::start(url, &dir.0, "desk");
    let quote = desk.call("after_sales_quote", json!({"order_id": "ORD-1001", "opened": true}));
    assert_eq!(
        quote["structuredContent"],
        json!({"order_id": "ORD-1001", "card_cents": 31410, "store_credit_cents": 34551, "restocking_fee_cents": 3490})
    );
    let unknown = desk.call("after_sales_quote", json!({"order_id": "ORD-9"}));
    assert!(tool_error(&unknown).contains("no order ORD-9"), "{unknown}");

    let t1 = desk.call("after_sales_query_ticket", json!({"ticket_id": "T-1"}));
    assert_eq!(t1["structuredContent"]["order_id"], "ORD-1002", "{t1}");
    assert_eq!(t1["structuredContent"]["stage"], "inspecting", "{t1}");
    assert_eq!(t1["structuredContent"]["refund_method"], "original_card", "{t1}");
    for missing in ["T-999", "T-x", "T-+1", "T-01", "T-", "1"] {
        let none = desk.call("after_sales_query_ticket", json!({"ticket_id": missing}));
        assert_eq!(tool_error(&none), format!("no ticket {missing}"));
    }

    let id = desk.open_ticket("ORD-1003", "Sticky space bar", "bank_transfer");
    assert_eq!(id, "T-2", "the first ticket after the sample one");
    let found = desk.call("after_sales_query_ticket", json!({"ticket_id": id}));
    let ticket = &found["structuredContent"];
    assert_eq!(ticket["customer"], "Grace Hopper", "{found}");
    assert_eq!(ticket["refund_method"], "bank_transfer", "{found}");
    assert_eq!(ticket["refund_cents"], 12900, "{found}");
    assert_eq!(ticket["stage"], "received", "{found}");

    let read = desk.result("resources/read", json!({"uri": "tickets://T-2"}));
    let text = read["contents"][0]["text"].as_str().expect("a JSON text");
    let read_ticket: serde_json::Value = serde_json::from_str(text).expect("JSON");
    assert_eq!(&read_ticket, ticket);
    let missing = desk.request("resources/read", json!({"uri": "tickets://T-77"}));
    assert!(missing.get("error").is_some(), "{missing}");

    let prompt = desk.result(
        "prompts/get",
        json!({"name": "after_sales_reply", "arguments": {"ticket_id": "T-2"}}),
    );
    let text = prompt["messages"][0]["content"]["text"].as_str().unwrap_or_default();
    assert!(text.contains("Grace Hopper") && text.contains("ticket T-2"), "{prompt}");

    // The export: a task whose CSV is kept in the database. A reason that
    // tries to end its field and add columns, or to be a formula, stays one
    // field of text.
    let reason = "=HYPERLINK(\"x\"),store_credit,9999999,refunded";
    sql(
        url,
        &[&format!("UPDATE tickets SET reason = '{reason}' WHERE number = 1")],
    );
    let created = desk.call("after_sales_export", json!({"month": "2026-11"}));
    assert_eq!(created["resultType"], "task", "{created}");
    let task_id = created["taskId"].as_str().expect("a task id").to_owned();
    let done = desk.wait_task(&task_id, &["completed"]);
    let link = &done["result"]["content"][0];
    assert_eq!(link["type"], "resource_link", "{done}");
    assert_eq!(link["uri"], "exports://2026-11.csv", "{done}");
    let csv = desk.result("resources/read", json!({"uri": "exports://2026-11.csv"}));
    let csv = csv["contents"][0]["text"].as_str().unwrap_or_default().to_owned();
    assert!(
        csv.starts_with("ticket,order,customer,item,reason,refund_method,refund_cents,stage\n"),
        "{csv}"
    );
    assert!(csv.contains("T-1,ORD-1002,Alan Turing,"), "{csv}");
    let rows = csv_rows(&csv);
    assert_eq!(rows.len(), 2, "the header and T-1: {rows:?}");
    assert!(rows.iter().all(|r| r.len() == 8), "{rows:?}");
    assert_eq!(rows[1][4], format!("'{reason}"), "a formula is text: {rows:?}");
    assert_eq!(rows[1][5], "original_card", "{rows:?}");
    assert!(!csv.contains("T-2,"), "T-2 was opened in another month: {csv}");
    assert_eq!(link["size"], csv.len(), "{done}");
    let audited = sql(url, &["SELECT COUNT(*) FROM audit_log WHERE action = 'export_saved'"]);
    assert_eq!(audited, [1]);

    // Again: the task asks before overwriting, and keeps the export when told no.
    let created = desk.call("after_sales_export", json!({"month": "2026-11"}));
    let task_id = created["taskId"].as_str().expect("a task id").to_owned();
    let asking = desk.wait_task(&task_id, &["input_required"]);
    let key = asking["inputRequests"]
        .as_object()
        .and_then(|m| m.keys().next().cloned())
        .expect("one ask");
    let answer = json!({"action": "accept", "content": {"overwrite": false}});
    desk.result(
        "tasks/update",
        json!({"taskId": task_id, "inputResponses": {key: answer}}),
    );
    let kept = desk.wait_task(&task_id, &["completed"]);
    assert!(
        tool_error(&kept["result"]).contains("kept the earlier export of 2026-11"),
        "{kept}"
    );

    let bad = desk.call("after_sales_export", json!({"month": "November"}));
    assert!(tool_error(&bad).contains("is not a month"), "{bad}");
}

/// The ticket's view (MCP Apps) and its fallback, and the refund skill: a
/// client that renders apps is listed the view, the tool's link to it and
/// the view's own tool, and changes a refund through it (written with an
/// audit line, refused once paid); one that does not is listed none of them
/// and reads the refund options in the tool's text.
fn view_fallback_and_skill(url: &str, dir: &Scratch) {
    let mut desk = Desk::start(url, &dir.0, "view");
    let id = desk.open_ticket("ORD-1001", "Arrived scratched", "original_card");

    // Without apps: plain tools, the options in words.
    let tools = desk.result("tools/list", json!({}));
    let names = support::names(&tools, "tools", "name");
    assert!(names.contains(&"after_sales_query_ticket".to_owned()), "{tools}");
    assert!(!names.contains(&"after_sales_change_refund".to_owned()), "{tools}");
    let listed = tools["tools"].as_array().into_iter().flatten();
    assert!(listed.clone().all(|t| t.pointer("/_meta/ui").is_none()), "{tools}");
    let resources = desk.result("resources/list", json!({}));
    assert!(!resources.to_string().contains("ui://"), "{resources}");
    let plain = desk.call("after_sales_query_ticket", json!({"ticket_id": id}));
    let text = plain["content"][0]["text"].as_str().unwrap_or_default();
    assert_eq!(
        text,
        format!(
            "Ticket {id} (Espresso machine, order ORD-1001, for Ada Lovelace) is received; refund $349.00 by \
             original card. Refund options: Original card $349.00, Store credit $383.90, Bank transfer $349.00."
        ),
        "{plain}"
    );
    assert_eq!(plain["structuredContent"]["refund_cents"], 34900, "{plain}");
    let json_text: serde_json::Value =
        serde_json::from_str(plain["content"][1]["text"].as_str().unwrap_or_default()).expect("the JSON text");
    assert_eq!(json_text, plain["structuredContent"], "{plain}");

    // With apps: the view, the link, the view's tool.
    desk.renders_apps = true;
    let tools = desk.result("tools/list", json!({}));
    let query = tools["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|t| t["name"] == "after_sales_query_ticket");
    let query = query.expect("the query tool");
    assert_eq!(
        query["_meta"]["ui"]["resourceUri"], "ui://after-sales/ticket",
        "{query}"
    );
    let change = tools["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|t| t["name"] == "after_sales_change_refund");
    assert_eq!(
        change.expect("the view's tool")["_meta"]["ui"]["visibility"],
        json!(["app"]),
        "{tools}"
    );
    let view = desk.result("resources/read", json!({"uri": "ui://after-sales/ticket"}));
    assert_eq!(view["contents"][0]["mimeType"], "text/html;profile=mcp-app", "{view}");
    assert_eq!(view["contents"][0]["_meta"]["ui"]["prefersBorder"], true, "{view}");
    // Each `_meta.ui` as the extension's schema says.
    support::assert_valid("ext-apps", "McpUiToolMeta", &query["_meta"]["ui"]);
    support::assert_valid(
        "ext-apps",
        "McpUiToolMeta",
        &change.expect("the view's tool")["_meta"]["ui"],
    );
    support::assert_valid("ext-apps", "McpUiResourceMeta", &view["contents"][0]["_meta"]["ui"]);
    let html = view["contents"][0]["text"].as_str().unwrap_or_default();
    assert!(
        html.contains("ui/initialize") && html.contains("after_sales_change_refund"),
        "{html}"
    );
    let shown = desk.call("after_sales_query_ticket", json!({"ticket_id": id}));
    let text = shown["content"][0]["text"].as_str().unwrap_or_default();
    assert!(
        text.ends_with("refund $349.00 by original card."),
        "the options are the view's: {shown}"
    );

    let changed = desk.call(
        "after_sales_change_refund",
        json!({"ticket_id": id, "method": "store_credit"}),
    );
    assert_eq!(
        changed["structuredContent"]["refund_method"], "store_credit",
        "{changed}"
    );
    assert_eq!(changed["structuredContent"]["refund_cents"], 38390, "{changed}");
    let audited = sql(url, &["SELECT COUNT(*) FROM audit_log WHERE action = 'refund_changed'"]);
    assert_eq!(audited, [1]);
    let unknown = desk.call(
        "after_sales_change_refund",
        json!({"ticket_id": "T-404", "method": "store_credit"}),
    );
    assert_eq!(tool_error(&unknown), "no ticket T-404");
    let number = id.trim_start_matches("T-");
    let paid = format!("UPDATE tickets SET stage = 'refunded' WHERE number = {number}");
    sql(url, &[paid.as_str()]);
    let refused = desk.call(
        "after_sales_change_refund",
        json!({"ticket_id": id, "method": "bank_transfer"}),
    );
    assert_eq!(tool_error(&refused), format!("the refund of {id} was already paid"));
    let kept = desk.call("after_sales_query_ticket", json!({"ticket_id": id}));
    assert_eq!(kept["structuredContent"]["refund_method"], "store_credit", "{kept}");

    // The skill the tools point to.
    let skills = desk.result("skills/list", json!({}));
    assert_eq!(
        skills["skills"][0]["frontmatter"]["name"], "handling-refunds",
        "{skills}"
    );
    let skill = desk.result("resources/read", json!({"uri": "skill://handling-refunds/SKILL.md"}));
    let body = skill["contents"][0]["text"].as_str().unwrap_or_default();
    assert!(
        body.contains("after_sales_quote") && body.contains("reference/policy.md"),
        "{skill}"
    );
    let quote = tools["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|t| t["name"] == "after_sales_quote");
    let described = quote.and_then(|t| t["description"].as_str()).unwrap_or_default();
    assert!(described.contains("skill://handling-refunds/SKILL.md"), "{described}");
}

/// The customer declines: no ticket, refund or audit line is written.
fn declined_refund_writes_nothing(url: &str, dir: &Scratch) {
    let mut desk = Desk::start(url, &dir.0, "desk");
    desk.call("after_sales_quote", json!({"order_id": "ORD-1001"}));
    let before = counts(url);
    let asked = desk.ask_refund("ORD-1001", "Too loud");
    let declined = desk.answer_refund("ORD-1001", "Too loud", &asked, json!({"action": "decline"}));
    assert!(tool_error(&declined).contains("declined"), "{declined}");
    assert_eq!(counts(url), before, "tickets, refunds, audit lines");
    let none = desk.call("after_sales_query_ticket", json!({"ticket_id": "T-2"}));
    assert_eq!(tool_error(&none), "no ticket T-2");
}

/// A write inside the refund's transaction fails: the ticket written before
/// it in the same transaction is not kept, and the caller reads why.
fn failed_refund_rolls_back(url: &str, dir: &Scratch, freeze: &[&str], thaw: &[&str]) {
    let mut desk = Desk::start(url, &dir.0, "desk");
    desk.call("after_sales_quote", json!({"order_id": "ORD-1001"}));
    let before = counts(url);
    sql(url, freeze);
    let asked = desk.ask_refund("ORD-1001", "Leaks");
    let answer = json!({"action": "accept", "content": {"method": "store_credit"}});
    let failed = desk.answer_refund("ORD-1001", "Leaks", &asked, answer.clone());
    let why = tool_error(&failed);
    assert!(
        why.contains("while opening the ticket") && why.contains("refunds are frozen"),
        "{why}"
    );
    assert_eq!(counts(url), before, "the ticket was rolled back with its refund");
    let none = desk.call("after_sales_query_ticket", json!({"ticket_id": "T-2"}));
    assert_eq!(tool_error(&none), "no ticket T-2");
    // The same round, once the database takes refunds again, opens the ticket.
    sql(url, thaw);
    let opened = desk.answer_refund("ORD-1001", "Leaks", &asked, answer);
    assert_eq!(opened["structuredContent"]["id"], "T-2", "{opened}");
    assert_eq!(counts(url), [before[0] + 1, before[1] + 1, before[2] + 1]);
}

/// The last round sent twice (a client that lost the answer): one ticket.
fn retried_last_round_opens_one_ticket(url: &str, dir: &Scratch) {
    let mut desk = Desk::start(url, &dir.0, "desk");
    let asked = desk.ask_refund("ORD-1002", "Hiss");
    let before = counts(url);
    let answer = json!({"action": "accept", "content": {"method": "original_card", "note": "box kept"}});
    let first = desk.answer_refund("ORD-1002", "Hiss", &asked, answer.clone());
    let again = desk.answer_refund("ORD-1002", "Hiss", &asked, answer);
    assert_eq!(first["structuredContent"], again["structuredContent"]);
    assert_eq!(first["structuredContent"]["note"], "box kept", "{first}");
    assert_eq!(counts(url), [before[0] + 1, before[1] + 1, before[2] + 1]);
}

/// Two processes on one database, as replicas: rounds and reads on either,
/// and tickets opened on both at once all numbered apart.
fn replicas_share_the_desk(url: &str, dir: &Scratch) {
    let mut a = Desk::start(url, &dir.0, "a");
    let mut b = Desk::start(url, &dir.0, "b");
    let asked = a.ask_refund("ORD-1001", "Grinds loudly");
    let answer = json!({"action": "accept", "content": {"method": "store_credit"}});
    let opened = b.answer_refund("ORD-1001", "Grinds loudly", &asked, answer);
    let id = opened["structuredContent"]["id"].as_str().expect("an id").to_owned();
    let found = a.call("after_sales_query_ticket", json!({"ticket_id": id}));
    assert_eq!(found["structuredContent"], opened["structuredContent"]);

    let (from_a, from_b) = std::thread::scope(|s| {
        let on_a = s.spawn(|| {
            (0..8)
                .map(|i| a.open_ticket("ORD-1002", &format!("a{i}"), "original_card"))
                .collect::<Vec<_>>()
        });
        let on_b = s.spawn(|| {
            (0..8)
                .map(|i| b.open_ticket("ORD-1003", &format!("b{i}"), "bank_transfer"))
                .collect::<Vec<_>>()
        });
        (on_a.join().expect("a's tickets"), on_b.join().expect("b's tickets"))
    });
    let all: HashSet<&String> = from_a.iter().chain(&from_b).collect();
    assert_eq!(all.len(), 16, "numbers drawn twice: {from_a:?} {from_b:?}");
    for id in &from_a {
        let seen = b.call("after_sales_query_ticket", json!({"ticket_id": id}));
        assert_eq!(seen["structuredContent"]["order_id"], "ORD-1002", "{seen}");
    }
    for id in &from_b {
        let seen = a.call("after_sales_query_ticket", json!({"ticket_id": id}));
        assert_eq!(seen["structuredContent"]["order_id"], "ORD-1003", "{seen}");
    }

    // An export made by one is read by the other.
    let created = a.call("after_sales_export", json!({"month": "2026-11"}));
    let task_id = created["taskId"].as_str().expect("a task id").to_owned();
    a.wait_task(&task_id, &["completed"]);
    let csv = b.result("resources/read", json!({"uri": "exports://2026-11.csv"}));
    assert!(
        csv["contents"][0]["text"].as_str().unwrap_or_default().contains("T-1,"),
        "{csv}"
    );
}

/// The database is not there at start: calls get a tool error saying so at
/// once, the server says so on stderr and keeps trying, and serves once
/// `bring_up` made it reachable.
fn down_at_start_then_reached(url: &str, dir: &Scratch, bring_up: impl FnOnce()) {
    let mut desk = Desk::start(url, &dir.0, "desk");
    let first = desk.call("after_sales_quote", json!({"order_id": "ORD-1001"}));
    let why = tool_error(&first);
    assert!(
        why.contains("is not reachable yet") && why.contains("keeps trying"),
        "{why}"
    );
    assert!(desk.stderr().contains("not reachable"), "{}", desk.stderr());
    let t0 = Instant::now();
    let again = desk.call("after_sales_quote", json!({"order_id": "ORD-1001"}));
    assert_eq!(again["isError"], true, "{again}");
    assert!(t0.elapsed() < Duration::from_secs(2), "a known outage is said at once");
    bring_up();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let quote = desk.call("after_sales_quote", json!({"order_id": "ORD-1001"}));
        if quote["isError"] != true {
            assert_eq!(quote["structuredContent"]["card_cents"], 34900, "{quote}");
            break;
        }
        assert!(Instant::now() < deadline, "still unreachable: {quote}");
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(desk.stderr().contains("reached after"), "{}", desk.stderr());
}

// ------------------------------------------------------------------ SQLite

const SQLITE_FREEZE: &[&str] =
    &["CREATE TRIGGER refunds_frozen BEFORE INSERT ON refunds BEGIN SELECT RAISE(ABORT, 'refunds are frozen'); END"];
const SQLITE_THAW: &[&str] = &["DROP TRIGGER refunds_frozen"];

#[test]
fn sqlite_every_tool() {
    let dir = Scratch::new("every-tool");
    every_tool(&dir.sqlite(), &dir);
}

#[test]
fn sqlite_view_fallback_and_skill() {
    let dir = Scratch::new("view");
    view_fallback_and_skill(&dir.sqlite(), &dir);
}

#[test]
fn sqlite_declined_refund_writes_nothing() {
    let dir = Scratch::new("declined");
    declined_refund_writes_nothing(&dir.sqlite(), &dir);
}

#[test]
fn sqlite_failed_refund_rolls_back() {
    let dir = Scratch::new("rollback");
    failed_refund_rolls_back(&dir.sqlite(), &dir, SQLITE_FREEZE, SQLITE_THAW);
}

#[test]
fn sqlite_retried_last_round_opens_one_ticket() {
    let dir = Scratch::new("retried");
    retried_last_round_opens_one_ticket(&dir.sqlite(), &dir);
}

#[test]
fn sqlite_replicas_share_the_desk() {
    let dir = Scratch::new("replicas");
    replicas_share_the_desk(&dir.sqlite(), &dir);
}

#[test]
fn sqlite_down_at_start_then_reached() {
    let dir = Scratch::new("down");
    let later = dir.0.join("later");
    let url = format!("sqlite://{}", later.join("desk.db").display());
    down_at_start_then_reached(&url, &dir, || std::fs::create_dir_all(&later).expect("the directory"));
}

/// `GET path` on a loopback port: the status and the body (0 when nothing answers).
fn http_get(port: u16, path: &str) -> (u16, String) {
    use std::io::{Read, Write};
    let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return (0, String::new());
    };
    let request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    let mut answer = String::new();
    if stream.write_all(request.as_bytes()).is_err() || stream.read_to_string(&mut answer).is_err() {
        return (0, String::new());
    }
    let status = answer.get(9..12).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = answer
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    (status, body)
}

/// Over HTTP the desk connects at start (`on_start`), and `/readyz` names
/// the database while it is not reached, then says ready.
#[test]
fn readyz_names_the_database_until_it_is_reached() {
    let dir = Scratch::new("readyz");
    let later = dir.0.join("later");
    let url = format!("sqlite://{}", later.join("desk.db").display());
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let _server = support::Killed(
        std::process::Command::new(client::binary())
            .args(["--http", &format!("127.0.0.1:{port}")])
            .env("DATABASE_URL", &url)
            .env_remove("MCP_REDIS_URL")
            .current_dir(&dir.0)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("the after-sales example starts"),
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    while http_get(port, "/healthz").0 != 200 {
        assert!(Instant::now() < deadline, "the desk does not serve");
        std::thread::sleep(Duration::from_millis(100));
    }
    let (status, body) = http_get(port, "/readyz");
    assert_eq!(status, 503, "{body}");
    let said: serde_json::Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(said, json!({"status": "waiting", "for": [format!("database {url}")]}));
    std::fs::create_dir_all(&later).expect("the directory");
    loop {
        let (status, body) = http_get(port, "/readyz");
        if status == 200 {
            assert_eq!(body, r#"{"status":"ready"}"#);
            break;
        }
        assert!(Instant::now() < deadline, "still not ready: {body}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn without_database_url_the_desk_is_after_sales_db_in_the_working_directory() {
    let dir = Scratch::new("default");
    let mut desk = Desk::start("", &dir.0, "desk");
    let quote = desk.call("after_sales_quote", json!({"order_id": "ORD-1003"}));
    assert_eq!(quote["structuredContent"]["card_cents"], 12900, "{quote}");
    assert!(dir.0.join("after-sales.db").is_file());
}

#[test]
fn processes_starting_together_in_one_directory_share_its_new_file() {
    // As a test harness or a shell script starts them: no DATABASE_URL, one
    // working directory, the first calls at the same moment.
    let dir = Scratch::new("together");
    let mut desks: Vec<Desk> = (0..4).map(|i| Desk::start("", &dir.0, &format!("desk{i}"))).collect();
    std::thread::scope(|s| {
        for desk in &mut desks {
            s.spawn(move || {
                let quote = desk.call("after_sales_quote", json!({"order_id": "ORD-1002"}));
                assert_eq!(
                    quote["structuredContent"]["card_cents"],
                    19950,
                    "{quote}\n{}",
                    desk.stderr()
                );
            });
        }
    });
    let ids: HashSet<String> = desks
        .iter_mut()
        .map(|desk| desk.open_ticket("ORD-1002", "Crackles", "store_credit"))
        .collect();
    assert_eq!(ids.len(), 4);
}

#[test]
fn an_in_memory_sqlite_desk_keeps_its_tickets_while_the_process_lives() {
    let dir = Scratch::new("memory");
    let mut desk = Desk::start("sqlite::memory:", &dir.0, "desk");
    let id = desk.open_ticket("ORD-1001", "Dented", "original_card");
    for _ in 0..3 {
        let found = desk.call("after_sales_query_ticket", json!({"ticket_id": id}));
        assert_eq!(found["structuredContent"]["reason"], "Dented", "{found}");
    }
}

#[test]
fn a_database_url_it_cannot_use_stops_the_start() {
    let out = std::process::Command::new(client::binary())
        .env("DATABASE_URL", "mysql://desk:secret@db/desk")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("the example runs");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("SQLite (sqlite://PATH) or PostgreSQL"), "{stderr}");
    assert!(!stderr.contains("secret"), "the password was shown: {stderr}");
}

// ------------------------------------------------------------------ PostgreSQL

const PG_FREEZE: &[&str] = &[
    "CREATE FUNCTION refunds_frozen() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refunds are frozen'; END $$",
    "CREATE TRIGGER refunds_frozen BEFORE INSERT ON refunds FOR EACH ROW EXECUTE FUNCTION refunds_frozen()",
];
const PG_THAW: &[&str] = &["DROP TRIGGER refunds_frozen ON refunds"];

#[test]
fn postgres_every_tool() {
    let Some(admin) = postgres() else { return };
    every_tool(
        &fresh_database(admin, "desk_every_tool"),
        &Scratch::new("pg-every-tool"),
    );
}

/// A payment (another system, on the same database) that sets a ticket
/// to refunded while the refund's method is being changed: the change
/// waits for it and is refused, instead of changing a refund already paid.
#[test]
fn postgres_a_refund_paid_meanwhile_is_not_changed() {
    let Some(admin) = postgres() else { return };
    let url = fresh_database(admin, "desk_paid_meanwhile");
    let dir = Scratch::new("pg-paid-meanwhile");
    let mut desk = Desk::start(&url, &dir.0, "paid");
    let id = desk.open_ticket("ORD-1001", "Arrived scratched", "original_card");
    let number: i64 = id.trim_start_matches("T-").parse().unwrap();
    desk.renders_apps = true;
    let (paying, paid) = std::sync::mpsc::channel();
    let payer = {
        let url = url.clone();
        std::thread::spawn(move || {
            use sqlx::Connection;
            sqlx::any::install_default_drivers();
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async {
                let mut conn = sqlx::AnyConnection::connect(&url).await.unwrap();
                let mut tx = conn.begin().await.unwrap();
                sqlx::query("UPDATE tickets SET stage = 'refunded' WHERE number = $1")
                    .bind(number)
                    .execute(&mut *tx)
                    .await
                    .unwrap();
                paying.send(()).unwrap();
                tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
                tx.commit().await.unwrap();
            });
        })
    };
    paid.recv().unwrap();
    let changed = desk.call(
        "after_sales_change_refund",
        json!({"ticket_id": id, "method": "store_credit"}),
    );
    payer.join().unwrap();
    assert_eq!(
        tool_error(&changed),
        format!("the refund of {id} was already paid"),
        "{changed}"
    );
    let kept = desk.call("after_sales_query_ticket", json!({"ticket_id": id}));
    assert_eq!(kept["structuredContent"]["refund_method"], "original_card", "{kept}");
}

#[test]
fn postgres_view_fallback_and_skill() {
    let Some(admin) = postgres() else { return };
    view_fallback_and_skill(&fresh_database(admin, "desk_view"), &Scratch::new("pg-view"));
}

#[test]
fn postgres_declined_refund_writes_nothing() {
    let Some(admin) = postgres() else { return };
    declined_refund_writes_nothing(&fresh_database(admin, "desk_declined"), &Scratch::new("pg-declined"));
}

#[test]
fn postgres_failed_refund_rolls_back() {
    let Some(admin) = postgres() else { return };
    let url = fresh_database(admin, "desk_rollback");
    failed_refund_rolls_back(&url, &Scratch::new("pg-rollback"), PG_FREEZE, PG_THAW);
}

#[test]
fn postgres_retried_last_round_opens_one_ticket() {
    let Some(admin) = postgres() else { return };
    retried_last_round_opens_one_ticket(&fresh_database(admin, "desk_retried"), &Scratch::new("pg-retried"));
}

#[test]
fn postgres_replicas_share_the_desk() {
    let Some(admin) = postgres() else { return };
    replicas_share_the_desk(&fresh_database(admin, "desk_replicas"), &Scratch::new("pg-replicas"));
}

#[test]
fn postgres_down_at_start_then_reached() {
    // Only to know that PostgreSQL is here (or to skip): this test starts its own, late.
    if postgres().is_none() {
        return;
    }
    let dir = Scratch::new("pg-down");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
        .to_string();
    let url = format!("postgres://postgres@127.0.0.1:{port}/postgres");
    let server = dir.0.join("server");
    let server = server.to_string_lossy();
    down_at_start_then_reached(&url, &dir, || {
        let out = client::postgres_script(&["up", &server], &[("MCP_POSTGRES_PORT", &port)]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    });
    client::postgres_script(&["down", &server], &[]);
}

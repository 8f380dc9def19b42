//! The stdio transport: concurrency and out-of-order answers, cancellation,
//! progress and logging notifications, end of input, and a real process.

mod support;

use mcp_runtime::prelude::*;
use serde_json::{json, Value};
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use support::{meta_with, StdioClient};

/// Sleeps, then answers.
#[tool]
async fn slow(ms: u64) -> String {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    format!("slept {ms} ms")
}

/// Echoes its text.
#[tool]
fn echo(text: String) -> String {
    text
}

static STARTED: AtomicBool = AtomicBool::new(false);
static DROPPED: AtomicBool = AtomicBool::new(false);
static SAW_CANCEL: AtomicBool = AtomicBool::new(false);

struct DropFlag;
impl Drop for DropFlag {
    fn drop(&mut self) {
        DROPPED.store(true, Ordering::SeqCst);
    }
}

/// Runs until cancelled.
#[tool]
async fn forever(cancel: Cancellation) -> String {
    let _guard = DropFlag;
    STARTED.store(true, Ordering::SeqCst);
    let watcher = cancel.clone();
    tokio::spawn(async move {
        watcher.cancelled().await;
        SAW_CANCEL.store(true, Ordering::SeqCst);
    });
    tokio::time::sleep(Duration::from_secs(3600)).await;
    "never".into()
}

/// Reports progress three times and logs at three levels.
#[tool]
async fn chatty(ctx: Context) -> String {
    for step in 0..3 {
        ctx.progress(f64::from(step * 50), Some(100.0), Some("working"));
    }
    ctx.log(LoggingLevel::Debug, None, &"debug detail");
    ctx.log(LoggingLevel::Info, Some("chatty"), &json!({"step": "info"}));
    ctx.log(LoggingLevel::Error, None, &"an error");
    "done".into()
}

/// Holds its thread, as a synchronous library call does.
#[tool(blocking)]
fn sleepy(ms: u64) -> String {
    std::thread::sleep(Duration::from_millis(ms));
    format!("held the thread {ms} ms")
}

/// Panics on the blocking pool.
#[tool(blocking)]
fn blocking_panic() -> String {
    let empty: Vec<String> = Vec::new();
    empty.first().cloned().expect("a value that is not there")
}

fn client() -> StdioClient {
    StdioClient::start(Server::builder().build().expect("the server builds"))
}

#[tokio::test]
async fn requests_run_concurrently_and_are_answered_out_of_order() {
    let mut c = client();
    c.send(1, "tools/call", json!({"name": "slow", "arguments": {"ms": 400}}))
        .await;
    c.send(2, "tools/call", json!({"name": "echo", "arguments": {"text": "fast"}}))
        .await;
    let first = c.recv().await;
    let second = c.recv().await;
    assert_eq!(first["id"], 2, "the fast call answers first");
    assert_eq!(second["id"], 1);
    c.close().await.unwrap();
}

#[tokio::test]
async fn cancelled_notification_stops_the_handler_and_suppresses_its_response() {
    let mut c = client();
    c.send(1, "tools/call", json!({"name": "forever", "arguments": {}}))
        .await;
    support::eventually("the handler started", || STARTED.load(Ordering::SeqCst)).await;
    c.send_raw(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"user"}}"#)
        .await;
    let v = c
        .call(2, "tools/call", json!({"name": "echo", "arguments": {"text": "after"}}))
        .await;
    assert_eq!(v["result"]["content"][0]["text"], "after");
    support::eventually("the handler's future is dropped", || DROPPED.load(Ordering::SeqCst)).await;
    assert!(SAW_CANCEL.load(Ordering::SeqCst), "the cancellation token fired");
    // Closing stdin ends the server at once: nothing is left running, and no
    // response to request 1 was ever written.
    c.to_server = None;
    let rest = tokio::time::timeout(Duration::from_secs(5), c.from_server.next_line())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(rest, None, "no response for the cancelled request");
}

#[tokio::test]
async fn end_of_input_answers_what_is_running_then_exits() {
    let mut c = client();
    c.send(1, "tools/call", json!({"name": "slow", "arguments": {"ms": 100}}))
        .await;
    c.to_server = None;
    let v = c.recv().await;
    assert_eq!(v["result"]["content"][0]["text"], "slept 100 ms");
    let end = tokio::time::timeout(Duration::from_secs(5), c.from_server.next_line())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(end, None);
    tokio::time::timeout(Duration::from_secs(5), c.server)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn progress_and_logs_are_sent_only_when_asked_for() {
    let mut c = client();
    // Neither a progress token nor a log level: only the result.
    let v = c
        .call(1, "tools/call", json!({"name": "chatty", "arguments": {}}))
        .await;
    assert_eq!(v["result"]["content"][0]["text"], "done");

    // Both: three progress notifications and the logs at `info` and above, first.
    let mut meta = meta_with(json!({}));
    meta["progressToken"] = json!("tok-1");
    meta["io.modelcontextprotocol/logLevel"] = json!("info");
    c.send(
        2,
        "tools/call",
        json!({"_meta": meta, "name": "chatty", "arguments": {}}),
    )
    .await;
    let mut seen: Vec<Value> = Vec::new();
    loop {
        let m = c.recv().await;
        if m["id"] == 2 {
            break;
        }
        seen.push(m);
    }
    let progress: Vec<&Value> = seen
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .collect();
    let logs: Vec<&Value> = seen.iter().filter(|m| m["method"] == "notifications/message").collect();
    assert_eq!(progress.len(), 3, "{seen:?}");
    assert!(progress.iter().all(|p| p["params"]["progressToken"] == "tok-1"));
    let values: Vec<f64> = progress
        .iter()
        .map(|p| p["params"]["progress"].as_f64().unwrap())
        .collect();
    assert_eq!(values, [0.0, 50.0, 100.0]);
    let levels: Vec<&str> = logs.iter().map(|l| l["params"]["level"].as_str().unwrap()).collect();
    assert_eq!(levels, ["info", "error"]);
    assert_eq!(logs[0]["params"]["logger"], "chatty");
    c.close().await.unwrap();
}

#[tokio::test]
async fn blank_lines_are_skipped_and_unknown_notifications_ignored() {
    let mut c = client();
    c.send_raw("").await;
    c.send_raw("   ").await;
    c.send_raw(r#"{"jsonrpc":"2.0","method":"notifications/whatever"}"#)
        .await;
    let v = c
        .call(1, "tools/call", json!({"name": "echo", "arguments": {"text": "ok"}}))
        .await;
    assert_eq!(v["result"]["content"][0]["text"], "ok");
    c.close().await.unwrap();
}

#[test]
fn the_quickstart_binary_speaks_only_protocol_on_stdout_and_exits_on_eof() {
    use std::io::{BufRead, Write};
    use std::process::{Command, Stdio};
    let exe = support::example_binary("quickstart");
    let mut child = Command::new(&exe)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("RUST_LOG", "debug")
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", exe.display()));
    let mut stdin = child.stdin.take().unwrap();
    let discover = support::request(1, "server/discover", json!({}));
    let call = support::request(
        2,
        "tools/call",
        json!({"name": "divide", "arguments": {"dividend": 1, "divisor": 0}}),
    );
    writeln!(stdin, "{discover}\nthis is not json\n{call}").unwrap();
    drop(stdin);
    let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(&l.unwrap()).expect("JSON only"))
        .collect();
    let status = child.wait().unwrap();
    assert!(status.success());
    assert_eq!(lines.len(), 3, "{lines:?}");
    let by_id = |id: i64| lines.iter().find(|l| l["id"] == id).unwrap();
    support::validate_emitted(by_id(1), Some("server/discover"));
    assert_eq!(
        by_id(1)["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "quickstart"
    );
    assert_eq!(by_id(2)["result"]["isError"], true);
    assert!(lines.iter().any(|l| l["error"]["code"] == -32700));
}

/// Found by the `dispatch` fuzz target: a request reusing the id of a
/// `subscriptions/listen` still open took its place in the table of
/// requests in flight, so the stream was never ended and the server never
/// exited after stdin closed.
#[tokio::test]
async fn a_reused_id_in_flight_is_an_error_and_the_server_still_exits_on_eof() {
    let mut c = client();
    c.send(
        2,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    )
    .await;
    let ack = c.recv().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged", "{ack}");
    let again = c.call(2, "tools/list", json!({})).await;
    assert_eq!(again["error"]["code"], -32600, "{again}");
    assert_eq!(again["id"], 2);
    // The id is free again once its request is over: the listen stream ends
    // with its result when stdin closes, and the server exits.
    c.close().await.expect("the server exits when stdin closes");
}

/// The stdio server serves on one thread (as `main!` binaries do): a
/// `blocking` tool runs elsewhere, so calls behind it are answered meanwhile.
#[tokio::test(flavor = "current_thread")]
async fn a_blocking_tool_does_not_hold_the_stream() {
    let mut c = client();
    // The first answer read also readies the schema validator: not timed.
    c.call(0, "tools/call", json!({"name": "echo", "arguments": {"text": "warm"}}))
        .await;
    c.send(1, "tools/call", json!({"name": "sleepy", "arguments": {"ms": 600}}))
        .await;
    let started = std::time::Instant::now();
    c.send(
        2,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "meanwhile"}}),
    )
    .await;
    let v = c.recv().await;
    assert_eq!(v["id"], 2, "the blocking tool answered first: {v}");
    assert_eq!(v["result"]["content"][0]["text"], "meanwhile");
    assert!(
        started.elapsed() < Duration::from_millis(400),
        "the echo waited for the blocking tool: {:?}",
        started.elapsed()
    );
    let slept = c.recv().await;
    assert_eq!(slept["id"], 1);
    assert_eq!(slept["result"]["content"][0]["text"], "held the thread 600 ms");
    let v = c
        .call(3, "tools/call", json!({"name": "blocking_panic", "arguments": {}}))
        .await;
    assert_eq!(v["error"]["code"], -32603, "{v}");
    assert!(v["error"]["message"].as_str().unwrap().contains("panicked"), "{v}");
    c.close().await.unwrap();
}

/// A `main!` binary serves stdio on one thread whatever the machine: the
/// 64 workers tokio would start here are not started.
#[cfg(target_os = "linux")]
#[test]
fn a_stdio_server_runs_on_one_thread_whatever_the_core_count() {
    use std::io::{BufRead, Write};
    use std::process::{Command, Stdio};
    let exe = support::example_binary("quickstart");
    let mut child = Command::new(&exe)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .env("TOKIO_WORKER_THREADS", "64")
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", exe.display()));
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{}", support::request(1, "server/discover", json!({}))).unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let answer: Value = serde_json::from_str(&line).expect("JSON");
    assert_eq!(answer["id"], 1, "{answer}");
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
    let threads = status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .map(|n| n.trim().to_owned());
    drop(stdin);
    assert!(child.wait().unwrap().success());
    assert_eq!(threads.as_deref(), Some("1"), "{status}");
}

/// Past `MAX_IN_FLIGHT` requests running, the server stops reading until one
/// ends: a client sending faster than requests end is held up by the pipe.
#[tokio::test(flavor = "current_thread")]
async fn the_reader_waits_while_too_many_requests_run() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    const MAX: usize = mcp_runtime::transport::stdio::MAX_IN_FLIGHT;
    let (mut to_server, server_r) = tokio::io::duplex(16 * 1024);
    let (server_w, from_server) = tokio::io::duplex(1 << 20);
    let server = Server::builder().build().unwrap();
    let serving = tokio::spawn(mcp_runtime::transport::stdio::serve_io(server, server_r, server_w));
    let line = |id: usize| {
        support::request(
            id as i64,
            "tools/call",
            json!({"name": "slow", "arguments": {"ms": 700}}),
        )
    };
    let mut all = String::new();
    for id in 0..MAX + 400 {
        all.push_str(&line(id));
        all.push('\n');
    }
    let started = std::time::Instant::now();
    to_server.write_all(all.as_bytes()).await.unwrap();
    let took = started.elapsed();
    // The last 400 lines (more than the pipe holds) waited for the first requests to end.
    assert!(took >= Duration::from_millis(500), "all written in {took:?}");
    drop(to_server);
    let mut lines = tokio::io::BufReader::new(from_server).lines();
    let mut answered = 0;
    while let Some(l) = lines.next_line().await.unwrap() {
        let v: Value = serde_json::from_str(&l).unwrap();
        assert_eq!(v["result"]["content"][0]["text"], "slept 700 ms", "{v}");
        answered += 1;
    }
    assert_eq!(answered, MAX + 400);
    serving.await.unwrap().unwrap();
}

/// Waits until cancelled.
#[tool]
async fn until_cancelled(cancel: Cancellation) -> &'static str {
    cancel.cancelled().await;
    "cancelled"
}

/// Leaves work behind that keeps its context (and with it the way to stdout)
/// for a minute after the call is answered.
#[tool]
fn leaves_work(ctx: Context) -> &'static str {
    tokio::spawn(async move {
        let _kept = ctx;
        tokio::time::sleep(Duration::from_secs(60)).await;
    });
    "left"
}

/// The input's end ends serving once the requests running are answered,
/// whatever a handler left running with its context.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serving_ends_with_the_input_whatever_holds_a_context() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let (mut to_server, server_r) = tokio::io::duplex(1 << 16);
    let (server_w, from_server) = tokio::io::duplex(1 << 16);
    let serving = tokio::spawn(mcp_runtime::transport::stdio::serve_io(
        Server::builder().build().unwrap(),
        server_r,
        server_w,
    ));
    let call = support::request(1, "tools/call", json!({"name": "leaves_work", "arguments": {}}));
    to_server.write_all(format!("{call}\n").as_bytes()).await.unwrap();
    let mut lines = tokio::io::BufReader::new(from_server).lines();
    let answer = tokio::time::timeout(Duration::from_secs(5), lines.next_line())
        .await
        .expect("answered")
        .unwrap()
        .unwrap();
    assert!(answer.contains("left"), "{answer}");
    drop(to_server);
    tokio::time::timeout(Duration::from_secs(5), serving)
        .await
        .expect("serving ends within 5 s, not when the left work ends")
        .unwrap()
        .unwrap();
}

/// Embedded on a multi-thread runtime, every request sent before the input
/// ends is answered: the last answer is not lost to the writer's end, which
/// may run on another thread the moment the last request is done. Many
/// short sessions, each one call and then the input's end. A smoke test:
/// the window it guards (between a request leaving the table and its answer
/// being queued) was nanoseconds wide, and this did not catch it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_last_answer_before_the_input_ends_is_written_on_a_multi_thread_runtime() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let call = format!(
        "{}\n",
        support::request(1, "tools/call", json!({"name": "slow", "arguments": {"ms": 0}}))
    );
    let mut lost = 0;
    for _ in 0..500 {
        let (mut to_server, server_r) = tokio::io::duplex(1 << 16);
        let (server_w, mut from_server) = tokio::io::duplex(1 << 16);
        let serving = tokio::spawn(mcp_runtime::transport::stdio::serve_io(
            Server::builder().build().unwrap(),
            server_r,
            server_w,
        ));
        to_server.write_all(call.as_bytes()).await.unwrap();
        drop(to_server);
        let mut out = String::new();
        let ended = async {
            from_server.read_to_string(&mut out).await.unwrap();
            serving.await.unwrap().unwrap();
        };
        tokio::time::timeout(Duration::from_secs(10), ended)
            .await
            .expect("the session ends with its input");
        if out.lines().count() != 1 {
            lost += 1;
        }
    }
    assert_eq!(lost, 0, "sessions whose one answer was not written");
}

/// A request read after the runtime was shut down (an embedder driving
/// the stream with `Handle::block_on` while the runtime is dropped) is not
/// run, and serving still ends with the input: tokio drops the task inside
/// the spawn, which used to lock the table of requests in flight a second
/// time on the same thread.
#[test]
fn a_request_read_after_the_runtime_shut_down_does_not_stop_the_stream() {
    use tokio::io::AsyncWriteExt;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .build()
        .unwrap();
    let handle = runtime.handle().clone();
    let (mut to_server, server_r) = tokio::io::duplex(1 << 16);
    let (server_w, _from_server) = tokio::io::duplex(1 << 16);
    let (ended, ended_rx) = std::sync::mpsc::channel();
    let (fed, fed_rx) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        let serving = mcp_runtime::transport::stdio::serve_io(Server::builder().build().unwrap(), server_r, server_w);
        let _ = handle.block_on(serving);
        let _ = ended.send(());
    });
    let call = format!(
        "{}\n",
        support::request(1, "tools/call", json!({"name": "echo", "arguments": {"text": "late"}}))
    );
    let writer = std::thread::spawn(move || {
        let feeding = tokio::runtime::Builder::new_current_thread().build().unwrap();
        feeding.block_on(async move {
            // Once the serving runtime is gone: a request, then the input's end.
            fed_rx.recv().unwrap();
            to_server.write_all(call.as_bytes()).await.unwrap();
            drop(to_server);
        });
    });
    drop(runtime);
    fed.send(()).unwrap();
    writer.join().unwrap();
    assert!(
        ended_rx.recv_timeout(Duration::from_secs(10)).is_ok(),
        "serving ends with the input after the runtime shut down"
    );
}

/// Serves in process: `MAX_IN_FLIGHT` calls that run until cancelled, then
/// the `after` lines; the first answer, within 10 s.
async fn first_answer_behind_a_full_house(after: &[String]) -> Value {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    const MAX: usize = mcp_runtime::transport::stdio::MAX_IN_FLIGHT;
    let (mut to_server, server_r) = tokio::io::duplex(1 << 20);
    let (server_w, from_server) = tokio::io::duplex(1 << 20);
    let server = Server::builder().build().unwrap();
    let serving = tokio::spawn(mcp_runtime::transport::stdio::serve_io(server, server_r, server_w));
    let mut all = String::new();
    let running = (0..MAX).map(|id| {
        support::request(
            id as i64,
            "tools/call",
            json!({"name": "until_cancelled", "arguments": {}}),
        )
    });
    for line in running.chain(after.iter().cloned()) {
        all.push_str(&line);
        all.push('\n');
    }
    to_server.write_all(all.as_bytes()).await.unwrap();
    let mut lines = tokio::io::BufReader::new(from_server).lines();
    let answer = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
        .await
        .expect("an answer within 10 s")
        .unwrap()
        .unwrap();
    // The rest are cancelled as the stream ends.
    drop(to_server);
    serving.abort();
    serde_json::from_str(&answer).unwrap()
}

const CANCEL_FIRST: &str = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":0}}"#;

/// With `MAX_IN_FLIGHT` requests running, what is not a request is still
/// read: a cancellation ends one, and the request behind it then runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancellation_is_read_while_too_many_requests_run() {
    let echo = support::request(
        9_999,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "behind"}}),
    );
    let v = first_answer_behind_a_full_house(&[CANCEL_FIRST.to_owned(), echo]).await;
    assert_eq!(v["id"], 9_999, "{v}");
    assert_eq!(v["result"]["content"][0]["text"], "behind");
}

/// A request that waits for room (`MAX_IN_FLIGHT` run) does not stop the
/// reading: the cancellation behind it is read, ends a running request, and
/// the waiting one then runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancellation_behind_a_waiting_request_is_read() {
    let echo = support::request(
        9_998,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "ahead"}}),
    );
    let v = first_answer_behind_a_full_house(&[echo, CANCEL_FIRST.to_owned()]).await;
    assert_eq!(v["id"], 9_998, "{v}");
    assert_eq!(v["result"]["content"][0]["text"], "ahead");
}

/// A request still waiting for room (`MAX_IN_FLIGHT` run) that the client
/// cancels never runs and is never answered: the next answer is the one
/// behind it, once a running request ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_request_that_is_cancelled_never_runs() {
    let never = support::request(
        9_997,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "cancelled while waiting"}}),
    );
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9997}}"#;
    let after = support::request(
        9_996,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "after"}}),
    );
    let v = first_answer_behind_a_full_house(&[never, cancel.to_owned(), CANCEL_FIRST.to_owned(), after]).await;
    assert_eq!(v["id"], 9_996, "{v}");
    assert_eq!(v["result"]["content"][0]["text"], "after");
}

/// A client that writes without reading the answers is read until
/// `MAX_UNWRITTEN` bytes of answers wait, then held up by the pipe; once it
/// reads, the rest is read and every line answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reader_waits_while_the_client_does_not_read_its_answers() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let (mut to_server, server_r) = tokio::io::duplex(64 * 1024);
    let (server_w, from_server) = tokio::io::duplex(64 * 1024);
    let server = Server::builder().build().unwrap();
    let serving = tokio::spawn(mcp_runtime::transport::stdio::serve_io(server, server_r, server_w));
    // Each line is answered at once with a parse error of about 100 bytes:
    // twice the limit's worth of answers.
    let lines = 2 * mcp_runtime::transport::stdio::MAX_UNWRITTEN / 100;
    let all = "x\n".repeat(lines);
    let writing = tokio::spawn(async move {
        to_server.write_all(all.as_bytes()).await.unwrap();
        drop(to_server);
    });
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(
        !writing.is_finished(),
        "the server read everything without the answers being read"
    );
    let mut answers = tokio::io::BufReader::new(from_server).lines();
    let mut answered = 0;
    while let Some(l) = answers.next_line().await.unwrap() {
        let v: Value = serde_json::from_str(&l).unwrap();
        assert_eq!(v["error"]["code"], -32700, "{v}");
        answered += 1;
    }
    assert_eq!(answered, lines);
    writing.await.unwrap();
    serving.await.unwrap().unwrap();
}

/// A line is read whole wherever the reads split it: one that spans many
/// reads, blank lines and a carriage return around one, lines longer than
/// `MAX_LINE` (answered -32600 and skipped: with the request's id when it
/// holds one, wherever the id lies in it, else without), and a last line
/// with no newline before the end of input.
#[tokio::test(flavor = "current_thread")]
async fn lines_are_read_whole_however_the_reads_split_them() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    const MAX: usize = mcp_runtime::transport::stdio::MAX_LINE;
    // The server reads at most 4 KiB at a time.
    let (mut to_server, server_r) = tokio::io::duplex(4096);
    let (server_w, from_server) = tokio::io::duplex(1 << 20);
    let server = Server::builder().build().unwrap();
    let serving = tokio::spawn(mcp_runtime::transport::stdio::serve_io(server, server_r, server_w));
    let echo =
        |id: i64, text: &str| support::request(id, "tools/call", json!({"name": "echo", "arguments": {"text": text}}));
    let long_text = "y".repeat(10_000);
    let writing = tokio::spawn(async move {
        let mut input = String::new();
        input.push_str(&echo(1, "short"));
        input.push_str("\n\n  \r\n");
        input.push_str(&echo(2, &long_text));
        input.push_str("\r\n");
        to_server.write_all(input.as_bytes()).await.unwrap();
        // Over the limit by a little: the line is answered as too long.
        let chunk = vec![b'x'; 1 << 20];
        for _ in 0..MAX / chunk.len() {
            to_server.write_all(&chunk).await.unwrap();
        }
        to_server.write_all(b"xx\n").await.unwrap();
        // A request over the limit, its id after its arguments (as some
        // clients write it) and an "id" among them.
        to_server
            .write_all(
                br#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo","arguments":{"id":0,"text":""#,
            )
            .await
            .unwrap();
        for _ in 0..MAX / chunk.len() {
            to_server.write_all(&chunk).await.unwrap();
        }
        to_server.write_all(br#""}},"id":"too-long"}"#).await.unwrap();
        to_server.write_all(b"\n").await.unwrap();
        to_server.write_all(echo(3, "after").as_bytes()).await.unwrap();
        to_server.write_all(b"\n").await.unwrap();
        to_server
            .write_all(echo(4, "last, no newline").as_bytes())
            .await
            .unwrap();
    });
    let mut lines = tokio::io::BufReader::new(from_server).lines();
    let mut answers = Vec::new();
    while let Some(l) = lines.next_line().await.unwrap() {
        answers.push(serde_json::from_str::<Value>(&l).unwrap());
    }
    writing.await.unwrap();
    serving.await.unwrap().unwrap();
    assert_eq!(answers.len(), 6, "{answers:?}");
    let text = |v: &Value| v["result"]["content"][0]["text"].as_str().map(str::len);
    assert_eq!((answers[0]["id"].clone(), text(&answers[0])), (json!(1), Some(5)));
    assert_eq!((answers[1]["id"].clone(), text(&answers[1])), (json!(2), Some(10_000)));
    assert_eq!(answers[2]["error"]["code"], -32600, "{}", answers[2]);
    assert!(answers[2].get("id").is_none(), "{}", answers[2]);
    assert_eq!(answers[3]["error"]["code"], -32600, "{}", answers[3]);
    assert_eq!(answers[3]["id"], "too-long", "{}", answers[3]);
    assert_eq!(answers[4]["id"], 3);
    assert_eq!(answers[5]["id"], 4);
    assert_eq!(answers[5]["result"]["content"][0]["text"], "last, no newline");
}

/// An output that takes nothing for a while (a client that does not read),
/// then fails as a closed pipe does (the client went away).
struct GoneAfter(std::pin::Pin<Box<tokio::time::Sleep>>);

impl tokio::io::AsyncWrite for GoneAfter {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        _buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        self.0
            .as_mut()
            .poll(cx)
            .map(|()| Err(std::io::ErrorKind::BrokenPipe.into()))
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        self.0
            .as_mut()
            .poll(cx)
            .map(|()| Err(std::io::ErrorKind::BrokenPipe.into()))
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

/// A client that stopped reading (the reader waits for its output to
/// drain, past 16 MiB unwritten) and then went away (the output fails): the
/// server ends, though its input stays open, where it waited forever.
#[tokio::test]
async fn a_server_whose_output_fails_while_it_waits_for_it_to_drain_ends() {
    use tokio::io::AsyncWriteExt;
    let (mut to_server, server_r) = tokio::io::duplex(1 << 20);
    let gone = GoneAfter(Box::pin(tokio::time::sleep(Duration::from_millis(500))));
    let serving = tokio::spawn(mcp_runtime::transport::stdio::serve_io(
        Server::builder().build().unwrap(),
        server_r,
        gone,
    ));
    // Answers of 1 MiB each: 24 of them are past the 16 MiB the reader lets wait.
    let text = "x".repeat(1 << 20);
    let sending = tokio::spawn(async move {
        for id in 0..24 {
            let line = support::request(id, "tools/call", json!({"name": "echo", "arguments": {"text": text}}));
            if to_server.write_all(format!("{line}\n").as_bytes()).await.is_err() {
                return;
            }
        }
        // The input stays open.
        std::future::pending::<()>().await;
    });
    let ended = tokio::time::timeout(Duration::from_secs(10), serving).await;
    let ended = ended.expect("the server ended once its output failed");
    assert!(ended.unwrap().is_err(), "the output's failure is its error");
    sending.abort();
}

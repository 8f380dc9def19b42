//! Proxying, end to end, with `examples/everything` as the upstream: a real
//! process over stdio (and over Streamable HTTP), spoken to in each era.
//! Calls through the proxy (a tool, an elicitation round in both eras, a
//! resource, a prompt, a completion, a tool that checks the caller's
//! capabilities), an upstream killed mid-call (a clear
//! error naming it, the restart, the next call served), an upstream that
//! cannot start (the others are served), a round answered on a replica
//! where the call is not parked (a retryable error), the upstream's tasks
//! handed to the caller (over stdio and over HTTP, and followed on a listen
//! stream), a 2025-11-25 upstream's long call made a task and answered on
//! another replica, its task-only tools called as its own tasks (over stdio
//! and HTTP), and the client alone against the upstream over HTTP in both
//! eras.

mod support;

use mcp_runtime::client::{Calls, Client, Era};
use mcp_runtime::testing::TestClient;
use mcp_runtime::{ProxyOptions, Server};
use serde_json::json;
use std::time::{Duration, Instant};

fn everything() -> String {
    support::example_binary("everything").display().to_string()
}

/// `examples/everything` over Streamable HTTP on a free loopback port:
/// the process (ended when this is dropped) and its URL.
struct EverythingHttp {
    child: std::process::Child,
    url: String,
}

impl Drop for EverythingHttp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn everything_over_http() -> EverythingHttp {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    everything_over_http_on(port)
}

fn everything_over_http_on(port: u16) -> EverythingHttp {
    let child = std::process::Command::new(everything())
        .args(["--http", &format!("127.0.0.1:{port}")])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("everything starts");
    EverythingHttp {
        child,
        url: format!("http://127.0.0.1:{port}/mcp"),
    }
}

/// A server that proxies `upstreams` (prefix, client), started.
fn gateway(upstreams: Vec<(&str, mcp_runtime::client::ClientBuilder)>) -> Server {
    let mut builder = Server::builder();
    for (prefix, client) in upstreams {
        builder = builder.proxy(prefix, client);
    }
    let server = builder.build().expect("the gateway builds");
    server.start();
    server
}

/// Waits until the client lists `tool` (the upstream connects after start).
async fn until_listed(client: &TestClient, tool: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let names: Vec<String> = match client.list_tools().await {
            Ok(tools) => tools.into_iter().map(|t| t.name).collect(),
            Err(_) => Vec::new(),
        };
        if names.iter().any(|n| n == tool) {
            return;
        }
        assert!(Instant::now() < deadline, "{tool} not listed within 30 s: {names:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn elicit_ada(_: &serde_json::Value) -> serde_json::Value {
    json!({"action": "accept", "content": {"name": "Ada"}})
}

/// A tool, an elicitation round, a resource, a prompt and a completion
/// through the proxy, with the upstream spoken to in `era`.
async fn calls_pass_through(era: Era) {
    // A 2025-11-25 stdio upstream: a process per set of capabilities callers declare.
    let server = Server::builder()
        .proxy_with(
            "ev",
            Client::stdio(everything(), Vec::<String>::new()).name("ev").era(era),
            ProxyOptions::default().session_per_capabilities(true),
        )
        .build()
        .expect("the gateway builds");
    server.start();
    let client = TestClient::new(&server).on_elicit(elicit_ada);
    until_listed(&client, "ev_test_simple_text").await;

    // What the proxy emits is what the schema says, whatever the upstream's era.
    for (method, params, def) in [
        ("tools/list", json!({}), "ListToolsResult"),
        ("prompts/list", json!({}), "ListPromptsResult"),
        ("resources/list", json!({}), "ListResourcesResult"),
        ("resources/templates/list", json!({}), "ListResourceTemplatesResult"),
        (
            "tools/call",
            json!({"name": "ev_test_image_content", "arguments": {}}),
            "CallToolResult",
        ),
        (
            "resources/read",
            json!({"uri": "test://static-text"}),
            "ReadResourceResult",
        ),
    ] {
        let result = client.request(method, params).await.expect(method);
        support::assert_valid("2026-07-28", def, &result);
    }
    let asked = client
        .request(
            "tools/call",
            json!({"name": "ev_test_input_required_result_elicitation", "arguments": {}}),
        )
        .await
        .expect("round 1");
    support::assert_valid("2026-07-28", "InputRequiredResult", &asked);

    let text = client
        .call_tool("ev_test_simple_text", json!({}))
        .await
        .expect("a call");
    assert_eq!(text.text(), "This is a simple text response for testing.");
    let greeted = client
        .call_tool("ev_greet", json!({"name": "Grace"}))
        .await
        .expect("a call");
    assert_eq!(greeted.text(), "Hello, Grace!");

    // The upstream asks mid-call (2025-11-25) or with input_required
    // (2026-07-28): either way the caller gets one round, under the key the
    // upstream's handler used.
    let rounds = client.rounds();
    let hello = client
        .call_tool("ev_test_input_required_result_elicitation", json!({}))
        .await
        .expect("a call with an elicitation");
    assert_eq!(hello.text(), "Hello, Ada!");
    assert_eq!(client.rounds(), rounds + 1);

    let error = client
        .call_tool("ev_test_error_handling", json!({}))
        .await
        .expect("a tool error");
    assert_eq!(error.is_error, Some(true));

    let read = client.read_resource("test://static-text").await.expect("a read");
    assert!(!read.contents.is_empty());
    let prompt = client
        .get_prompt("ev_test_prompt_with_arguments", json!({"arg1": "a", "arg2": "b"}))
        .await
        .expect("a prompt");
    assert!(!prompt.messages.is_empty());
    let unknown = client.call_tool("ev_no_such_tool", json!({})).await;
    assert!(unknown.is_err(), "{unknown:?}");

    // The upstream sees what each caller declared, whatever its era (a
    // 2025-11-25 upstream through a session opened with just those).
    let refused = client
        .call_tool("ev_test_missing_capability", json!({}))
        .await
        .expect_err("the caller did not declare sampling");
    assert_eq!(refused.code().0, -32021, "{refused:?}");
    let sampler = TestClient::new(&server)
        .on_sample(|_| json!({"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "m"}));
    let allowed = sampler
        .call_tool("ev_test_missing_capability", json!({}))
        .await
        .expect("the caller declared sampling");
    assert_eq!(allowed.text(), "The client declared sampling.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_pass_through_to_a_2026_upstream() {
    calls_pass_through(Era::Latest).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_pass_through_to_a_2025_upstream() {
    calls_pass_through(Era::Legacy).await;
}

/// The upstream process killed in the middle of a call: the call fails
/// with an error naming the upstream, the process is started again, and
/// the next call is served; the server dropped, the process ends.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_upstream_killed_mid_call_is_restarted() {
    let dir = std::env::temp_dir().join(format!("mcp-gateway-kill-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a directory");
    let pid_file = dir.join("pid");
    // The shell writes its pid, then becomes the upstream (exec): that pid is the upstream's.
    let script = format!("echo $$ > '{}'; exec '{}'", pid_file.display(), everything());
    let upstream = Client::stdio("sh", ["-c".to_owned(), script])
        .name("ev")
        .era(Era::Legacy);
    let server = gateway(vec![("ev", upstream)]);
    let client = TestClient::new(&server);
    until_listed(&client, "ev_slow_compute").await;
    let first_pid = std::fs::read_to_string(&pid_file).expect("the pid").trim().to_owned();

    let caller = client.clone();
    let call = tokio::spawn(async move { caller.call_tool("ev_slow_compute", json!({"seconds": 30})).await });
    tokio::time::sleep(Duration::from_millis(500)).await;
    let killed = std::process::Command::new("kill")
        .args(["-9", &first_pid])
        .status()
        .expect("kill");
    assert!(killed.success());
    let outcome = tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .expect("the call ends when its upstream dies")
        .expect("the task");
    let error = outcome.expect_err("the call fails");
    assert_eq!(error.code().0, -32603, "{error:?}");
    assert!(error.message().contains("upstream `ev`"), "{error:?}");
    assert_eq!(
        error.data().map(|d| d["upstream"].clone()),
        Some(json!("ev")),
        "{error:?}"
    );

    // Started again (with backoff from half a second), then serving.
    served_again(&client).await;
    let second_pid = std::fs::read_to_string(&pid_file).expect("the pid").trim().to_owned();
    assert_ne!(first_pid, second_pid, "a new process");

    // The server dropped, its upstream process ends with it.
    drop(client);
    drop(server);
    let deadline = Instant::now() + Duration::from_secs(15);
    let alive = || std::path::Path::new(&format!("/proc/{second_pid}")).exists() && !zombie(&second_pid);
    while alive() {
        assert!(
            Instant::now() < deadline,
            "the upstream {second_pid} outlived its server"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// An upstream process that answers a call with a line longer than the
/// client reads (64 MiB) and lives on, deaf to the pipe the client stopped
/// reading: the call fails, the process is stopped and started again, and
/// the next call is served by the new one.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_upstream_that_writes_a_line_too_long_is_started_again() {
    let dir = std::env::temp_dir().join(format!("mcp-gateway-long-line-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a directory");
    let started = dir.join("started");
    let _ = std::fs::remove_file(&started);
    // The first process passes the upstream's lines through until the
    // answer to `greet("big")`, which it replaces with 70 MB on one line,
    // then sleeps (SIGPIPE ignored, so it outlives the closed pipe); the
    // next processes are the upstream itself.
    let script = format!(
        r#"if [ -e '{started}' ]; then exec '{ev}'; fi; touch '{started}'; trap '' PIPE
'{ev}' | while IFS= read -r line; do
  case "$line" in *"Hello, big"*) head -c 70000000 /dev/zero | tr -c x x; sleep 60; exit;; esac
  printf '%s\n' "$line"
done"#,
        started = started.display(),
        ev = everything(),
    );
    let upstream = Client::stdio("sh", ["-c".to_owned(), script])
        .name("ev")
        .era(Era::Legacy);
    let server = gateway(vec![("ev", upstream)]);
    let client = TestClient::new(&server);
    until_listed(&client, "ev_greet").await;
    let failed = client
        .call_tool("ev_greet", json!({"name": "big"}))
        .await
        .expect_err("the answer is too long");
    assert!(failed.message().contains("upstream `ev`"), "{failed:?}");
    served_again(&client).await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// Waits until `ev_greet` is served again (the upstream started again), at
/// most 20 s.
async fn served_again(client: &TestClient) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        match client.call_tool("ev_greet", json!({"name": "again"})).await {
            Ok(result) => {
                assert_eq!(result.text(), "Hello, again!");
                return;
            }
            Err(e) => assert!(Instant::now() < deadline, "not served again within 20 s: {e:?}"),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Whether process `pid` has exited and waits to be reaped.
#[cfg(target_os = "linux")]
fn zombie(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| {
            stat.rsplit(')')
                .next()
                .is_some_and(|rest| rest.trim_start().starts_with('Z'))
        })
        .unwrap_or(true)
}

/// One upstream that cannot start does not keep the other from being served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_that_cannot_start_leaves_the_others_served() {
    let server = gateway(vec![
        (
            "broken",
            Client::stdio("/nonexistent/mcp-server", Vec::<String>::new()).name("broken"),
        ),
        ("ev", Client::stdio(everything(), Vec::<String>::new()).name("ev")),
    ]);
    let client = TestClient::new(&server);
    until_listed(&client, "ev_greet").await;
    let names: Vec<String> = client
        .list_tools()
        .await
        .expect("a list")
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert!(names.iter().all(|n| !n.starts_with("broken_")), "{names:?}");
    let greeted = client
        .call_tool("ev_greet", json!({"name": "Ada"}))
        .await
        .expect("a call");
    assert_eq!(greeted.text(), "Hello, Ada!");
}

/// A replica built from `builder` that proxies `examples/everything` over
/// stdio (a process of its own), spoken to in `era`, under `ev`; started.
fn replica_of(builder: mcp_runtime::ServerBuilder, era: Era) -> Server {
    let upstream = Client::stdio(everything(), Vec::<String>::new()).name("ev").era(era);
    let server = builder.proxy("ev", upstream).build().expect("a replica");
    server.start();
    server
}

/// A 2025-11-25 upstream's call is parked on the replica that asked: the
/// answer sent to another replica is refused with a retryable error that
/// names the upstream, and the replica that holds the call finishes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_on_another_replica_gets_a_retryable_error() {
    // Replicas share their requestState keys.
    let key = [7u8; 32];
    let replica = || replica_of(Server::builder().request_state_keys(vec![key]), Era::Legacy);
    let (a, b) = (replica(), replica());
    let on_a = TestClient::new(&a).on_elicit(elicit_ada);
    let on_b = TestClient::new(&b).on_elicit(elicit_ada);
    until_listed(&on_a, "ev_test_input_required_result_elicitation").await;
    until_listed(&on_b, "ev_test_input_required_result_elicitation").await;

    let call = json!({"name": "ev_test_input_required_result_elicitation", "arguments": {}});
    let asked = on_a.request("tools/call", call.clone()).await.expect("round 1");
    assert_eq!(asked["resultType"], "input_required", "{asked}");
    let state = asked["requestState"].clone();
    let key = asked["inputRequests"]
        .as_object()
        .and_then(|m| m.keys().next().cloned())
        .expect("an ask");
    let mut answer = call.clone();
    answer["inputResponses"] = json!({ key.clone(): elicit_ada(&json!({})) });
    answer["requestState"] = state;

    let refused = on_b
        .request("tools/call", answer.clone())
        .await
        .expect_err("not parked on b");
    assert_eq!(refused.code().0, -32603, "{refused:?}");
    assert_eq!(
        refused.data().map(|d| d["retryable"].clone()),
        Some(json!(true)),
        "{refused:?}"
    );
    assert!(refused.message().contains("upstream `ev`"), "{refused:?}");

    let done = on_a.request("tools/call", answer).await.expect("round 2 on a");
    assert_eq!(done["content"][0]["text"], "Hello, Ada!", "{done}");
}

/// The client alone, over Streamable HTTP, against a server in each era.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_speaks_http_in_both_eras() {
    let upstream = everything_over_http();
    let url = upstream.url.clone();
    let mut outcome = Ok(());
    for era in [None, Some(Era::Legacy)] {
        let deadline = Instant::now() + Duration::from_secs(20);
        let connected = loop {
            let mut builder = Client::http(&url).on_ask(|ask| async move {
                assert_eq!(ask.method, "elicitation/create");
                Ok(elicit_ada(&ask.params))
            });
            builder = builder
                .capabilities(serde_json::from_value(json!({"elicitation": {"form": {}}})).expect("capabilities"));
            if let Some(era) = era {
                builder = builder.era(era);
            }
            match builder.connect().await {
                Ok(client) => break client,
                Err(e) if Instant::now() < deadline => {
                    let _ = e;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(e) => panic!("cannot connect: {e}"),
            }
        };
        let wanted = era.unwrap_or(Era::Latest);
        if connected.era() != Some(wanted) {
            outcome = Err(format!("{:?} instead of {wanted:?}", connected.era()));
            break;
        }
        let tools = connected.list_tools().await.expect("a list");
        assert!(tools.iter().any(|t| t.name == "greet"));
        let hello = connected
            .call_tool("test_input_required_result_elicitation", json!({}))
            .await
            .expect("a call with an elicitation");
        assert_eq!(hello.text(), "Hello, Ada!");
        if era == Some(Era::Legacy) {
            // A tool that runs only as a task: called as a 2025-11-25 task.
            let greeted = connected
                .call_tool("test_tool_with_task", json!({}))
                .await
                .expect("a task-augmented call");
            assert_eq!(greeted.text(), "Hello, Ada! (from a task)");
        }
        let failed = connected.request("tools/call", json!({"name": "no_such_tool"})).await;
        assert!(failed.is_err(), "{failed:?}");
    }
    drop(upstream);
    outcome.expect("the era found");
}

/// A 2025-11-25 upstream's call parked for its caller's answer is not bound
/// by the client's timeout, which counts only while the call runs: an answer
/// that takes longer than it still reaches the upstream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_parked_call_outlasts_the_clients_timeout() {
    let upstream = Client::stdio(everything(), Vec::<String>::new())
        .name("ev")
        .era(Era::Legacy)
        .timeout(Duration::from_secs(1));
    let server = gateway(vec![("ev", upstream)]);
    // The person answers after a second and a half.
    let client = TestClient::new(&server).on_elicit(|ask| {
        std::thread::sleep(Duration::from_millis(1500));
        elicit_ada(ask)
    });
    until_listed(&client, "ev_test_input_required_result_elicitation").await;
    let hello = client
        .call_tool("ev_test_input_required_result_elicitation", json!({}))
        .await
        .expect("the call, answered after the client's timeout");
    assert_eq!(hello.text(), "Hello, Ada!");
    assert!(client.rounds() >= 1, "the call asked");
}

/// A caller that leaves its calls waiting for answers parks a bounded
/// number of them: past it its next call is refused (retryable), and
/// another caller's calls still ask and are answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_caller_parks_a_bounded_number_of_calls() {
    let upstream = Client::stdio(everything(), Vec::<String>::new())
        .name("ev")
        .era(Era::Legacy);
    let server = gateway(vec![("ev", upstream)]);
    let tool = "ev_test_input_required_result_elicitation";
    let mallory = TestClient::new(&server).on_elicit(elicit_ada).as_principal("mallory");
    until_listed(&mallory, tool).await;
    // One request each, never answered.
    async fn ask(client: &TestClient) -> Result<serde_json::Value, mcp_runtime::McpError> {
        let tool = "ev_test_input_required_result_elicitation";
        client
            .request("tools/call", json!({"name": tool, "arguments": {}}))
            .await
    }
    for _ in 0..32 {
        let asked = ask(&mallory).await.expect("asked");
        assert_eq!(asked["resultType"], "input_required", "{asked}");
    }
    let refused = ask(&mallory).await.expect_err("past the caller's bound");
    assert_eq!(refused.code().0, -32603, "{refused:?}");
    assert!(refused.message().contains("this caller's answers"), "{refused:?}");
    assert_eq!(refused.data().map(|d| d["retryable"].clone()), Some(json!(true)));
    let alice = TestClient::new(&server).on_elicit(elicit_ada).as_principal("alice");
    let asked = ask(&alice).await.expect("another caller's call asks");
    assert_eq!(asked["resultType"], "input_required", "{asked}");
    let hello = alice.call_tool(tool, json!({})).await.expect("and is answered");
    assert_eq!(hello.text(), "Hello, Ada!");
}

/// Connects a client to `url`, trying again while the process starts.
async fn connect_http(url: &str) -> Client {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        match Client::http(url).connect().await {
            Ok(client) => return client,
            Err(e) if Instant::now() < deadline => {
                let _ = e;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => panic!("cannot connect: {e}"),
        }
    }
}

/// The notifications of `method` that arrive within `quiet` of the last one
/// (the first within 10 s), counted until `count` have come and `quiet` passed.
async fn count_notes(
    notes: &mut tokio::sync::broadcast::Receiver<mcp_runtime::client::Note>,
    method: &str,
    count: usize,
    quiet: Duration,
) -> usize {
    let mut seen = 0;
    loop {
        let wait = if seen < count { Duration::from_secs(10) } else { quiet };
        match tokio::time::timeout(wait, notes.recv()).await {
            Ok(Ok(note)) if note.message["method"] == method => seen += 1,
            Ok(Ok(_)) => {}
            Ok(Err(e)) => panic!("notifications: {e}"),
            Err(_) => return seen,
        }
    }
}

/// The client keeps one list-change stream however often it is asked for
/// one, so each change is heard once; when the HTTP upstream's process is
/// killed and started again on its port, the stream is opened again
/// (`connections` changes), and the next change is heard.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_list_change_stream_outlives_an_http_upstreams_restart() {
    let upstream = everything_over_http();
    let url = upstream.url.clone();
    let port: u16 = url
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/mcp")
        .parse()
        .expect("a port");
    let client = connect_http(&url).await;
    let mut notes = client.notifications();
    for _ in 0..3 {
        client.listen().await.expect("listening");
    }
    let acknowledged = "notifications/subscriptions/acknowledged";
    assert_eq!(
        count_notes(&mut notes, acknowledged, 1, Duration::from_millis(500)).await,
        1
    );
    let change = || {
        client.request(
            "tools/call",
            json!({"name": "test_trigger_tool_change", "arguments": {}}),
        )
    };
    for _ in 0..3 {
        change().await.expect("a change");
    }
    let changed = "notifications/tools/list_changed";
    assert_eq!(count_notes(&mut notes, changed, 3, Duration::from_millis(500)).await, 3);

    let mut connections = client.connections();
    connections.borrow_and_update();
    drop(upstream);
    let _upstream = everything_over_http_on(port);
    tokio::time::timeout(Duration::from_secs(20), connections.changed())
        .await
        .expect("the stream is opened again within 20 s")
        .expect("the client lives");
    assert_eq!(
        count_notes(&mut notes, acknowledged, 1, Duration::from_millis(200)).await,
        1
    );
    change().await.expect("a change after the restart");
    assert_eq!(count_notes(&mut notes, changed, 1, Duration::from_millis(500)).await, 1);
}

/// An upstream protected by a real OAuth authorization server
/// (oidc-provider, `scripts/auth-server.sh`): the client gets its own token
/// by the client credentials grant, for the upstream's URL; a gateway in
/// front serves the upstream's tools to a caller who sends no token at all
/// (the caller's token is never what reaches the upstream).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_behind_oauth_is_reached_with_the_clients_own_token() {
    let npm = std::process::Command::new("npm")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !npm {
        assert!(
            std::env::var_os("CI").is_none(),
            "npm is needed for the authorization server"
        );
        eprintln!("\n*** SKIPPED: the authorization server needs npm (oidc-provider) ***\n");
        return;
    }
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/auth-server.sh");
    let dir = std::env::temp_dir().join(format!("mcp-gateway-oauth-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let up = std::process::Command::new("bash")
        .arg(&script)
        .arg("up")
        .arg(&dir)
        .output()
        .expect("auth-server.sh");
    assert!(up.status.success(), "{}", String::from_utf8_lossy(&up.stderr));
    let issuer = String::from_utf8_lossy(&up.stdout).trim().to_owned();
    struct Down(std::path::PathBuf, std::path::PathBuf);
    impl Drop for Down {
        fn drop(&mut self) {
            let _ = std::process::Command::new("bash")
                .arg(&self.0)
                .arg("down")
                .arg(&self.1)
                .output();
            let _ = std::fs::remove_dir_all(&self.1);
        }
    }
    let _down = Down(script.clone(), dir.clone());

    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let _upstream = support::Killed(
        std::process::Command::new(everything())
            .args(["--http", &format!("127.0.0.1:{port}")])
            .env("MCP_AUTH_ISSUER", &issuer)
            .env("MCP_AUTH_RESOURCE", &url)
            .env_remove("MCP_REDIS_URL")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("everything starts"),
    );
    let with_token = || {
        Client::http(&url).name("protected").client_credentials(
            &issuer,
            "mcp-client",
            "mcp-client-secret",
            Some("tickets:read tickets:write"),
        )
    };
    // With the client's own token: served.
    let deadline = Instant::now() + Duration::from_secs(30);
    let client = loop {
        match with_token().connect().await {
            Ok(client) => break client,
            Err(e) => {
                assert!(Instant::now() < deadline, "cannot reach the protected upstream: {e}");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    };
    // Without one: refused (401), and the error names the upstream.
    let refused = Client::http(&url).name("protected").connect().await;
    let refused = refused.expect_err("no token, no connection");
    assert!(
        refused.to_string().contains("upstream `protected`") && refused.to_string().contains("401"),
        "{refused}"
    );

    let greeted = client
        .call_tool("greet", json!({"name": "Ada"}))
        .await
        .expect("a call with a token");
    assert_eq!(greeted.text(), "Hello, Ada!");

    // Behind a gateway: the gateway's caller sends no token; the upstream gets the gateway's.
    let server = gateway(vec![("safe", with_token())]);
    let caller = TestClient::new(&server);
    until_listed(&caller, "safe_greet").await;
    let through = caller
        .call_tool("safe_greet", json!({"name": "Grace"}))
        .await
        .expect("a proxied call");
    assert_eq!(through.text(), "Hello, Grace!");
}

/// `result` of `method` as the gateway emitted it, checked against the
/// schemas (the Tasks extension's for its messages).
fn valid(method: &str, result: &serde_json::Value) {
    support::validate_emitted(&json!({"jsonrpc": "2.0", "id": 1, "result": result}), Some(method));
}

/// Polls a task through the gateway until its status is terminal, at most 20 s.
async fn until_ended(client: &TestClient, id: &str) -> serde_json::Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let task = client
            .request("tasks/get", json!({"taskId": id}))
            .await
            .expect("tasks/get");
        valid("tasks/get", &task);
        assert_eq!(task["taskId"], json!(id), "the caller's id, not the upstream's: {task}");
        if ["completed", "failed", "cancelled"].contains(&task["status"].as_str().unwrap_or_default()) {
            return task;
        }
        assert!(Instant::now() < deadline, "still running: {task}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A 2026-07-28 upstream's tasks reach the caller as tasks of the
/// gateway's: the id the caller gets is the gateway's, and `tasks/get`,
/// `tasks/update` and `tasks/cancel` with it go to the upstream. A
/// 2025-11-25 upstream's long calls (`relayed` false) are the gateway's own
/// tasks, its asks their input requests. Either way another principal's id
/// is unknown, a quick call is answered directly, and a caller without the
/// extension gets the result itself.
async fn tasks_pass_through(upstream: mcp_runtime::client::ClientBuilder, relayed: bool) {
    let server = gateway(vec![("ev", upstream)]);
    let alice = TestClient::new(&server)
        .with_tasks()
        .on_elicit(elicit_ada)
        .as_principal("alice");
    until_listed(&alice, "ev_slow_compute").await;
    let discover = alice.request("server/discover", json!({})).await.expect("discover");
    assert_eq!(
        discover["capabilities"]["extensions"]["io.modelcontextprotocol/tasks"],
        json!({}),
        "{discover}"
    );

    // A task that completes: its result inlined.
    let call = json!({"name": "ev_slow_compute", "arguments": {"seconds": 1, "label": "relay"}});
    let created = alice.request("tools/call", call.clone()).await.expect("a task");
    valid("tools/call", &created);
    assert_eq!(created["resultType"], "task", "{created}");
    let id = created["taskId"].as_str().expect("taskId").to_owned();
    assert_eq!(id.len() > 32, relayed, "a relayed id, or one of the gateway's: {id}");
    let done = until_ended(&alice, &id).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "relay: done after 1 s", "{done}");

    // A quick call: its result at once.
    let quick = alice
        .request("tools/call", json!({"name": "ev_greet", "arguments": {"name": "Ada"}}))
        .await
        .expect("a result");
    valid("tools/call", &quick);
    assert_eq!(quick["content"][0]["text"], "Hello, Ada!", "{quick}");

    // A parameter an HTTP upstream wants as a header too (`Mcp-Param-Region`,
    // base64 when not plain ASCII): the client sends it from the listed schema.
    for region in ["eu-west", "zürich"] {
        let echoed = alice
            .call_tool("ev_test_header_echo", json!({"region": region}))
            .await
            .expect("a call with a header parameter");
        assert_eq!(echoed.text(), format!("region: {region}"));
    }

    // Another principal does not see it; a forged id is unknown too.
    let bob = TestClient::new(&server).with_tasks().as_principal("bob");
    for (who, task) in [(&bob, id.clone()), (&alice, format!("{id}x"))] {
        let unknown = who
            .request("tasks/get", json!({"taskId": task}))
            .await
            .expect_err("unknown");
        assert_eq!(unknown.code().0, -32602, "{unknown:?}");
    }

    // A task cancelled while it runs.
    let long = json!({"name": "ev_slow_compute", "arguments": {"seconds": 60}});
    let created = alice.request("tools/call", long).await.expect("a task");
    let id = created["taskId"].as_str().expect("taskId").to_owned();
    let ack = alice
        .request("tasks/cancel", json!({"taskId": id}))
        .await
        .expect("cancel");
    valid("tasks/cancel", &ack);
    assert_eq!(until_ended(&alice, &id).await["status"], "cancelled");

    // A task that asks: its input requests, answered with tasks/update.
    let created = alice
        .request(
            "tools/call",
            json!({"name": "ev_confirm_delete", "arguments": {"filename": "notes.txt"}}),
        )
        .await
        .expect("a task");
    let id = created["taskId"].as_str().expect("taskId").to_owned();
    let deadline = Instant::now() + Duration::from_secs(20);
    let asked = loop {
        let task = alice
            .request("tasks/get", json!({"taskId": id}))
            .await
            .expect("tasks/get");
        if task["status"] == "input_required" {
            valid("tasks/get", &task);
            break task;
        }
        assert!(Instant::now() < deadline, "never asked: {task}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let key = asked["inputRequests"]
        .as_object()
        .and_then(|m| m.keys().next().cloned())
        .expect("an input request");
    let answers = json!({ key: {"action": "accept", "content": {"confirm": true}} });
    let ack = alice
        .request("tasks/update", json!({"taskId": id, "inputResponses": answers}))
        .await
        .expect("update");
    valid("tasks/update", &ack);
    let done = until_ended(&alice, &id).await;
    assert_eq!(done["result"]["content"][0]["text"], "Deleted notes.txt", "{done}");

    // A tool that runs only as a task upstream: its first round is the
    // call's own `input_required` (no task yet), the next is a task whose
    // result has the answer in it. (A 2025-11-25 upstream is sent a
    // task-augmented call, followed with `tasks/result`.)
    let call_task = json!({"name": "ev_test_tool_with_task", "arguments": {}});
    let round = alice.request("tools/call", call_task.clone()).await.expect("a round");
    valid("tools/call", &round);
    assert_eq!(round["resultType"], "input_required", "{round}");
    assert!(round.get("taskId").is_none(), "{round}");
    let key = round["inputRequests"]
        .as_object()
        .and_then(|m| m.keys().next().cloned())
        .expect("an input request");
    let mut again = call_task.clone();
    again["inputResponses"] = json!({ key: {"action": "accept", "content": {"name": "Alice"}} });
    if let Some(state) = round.get("requestState") {
        again["requestState"] = state.clone();
    }
    let created = alice.request("tools/call", again).await.expect("a task");
    valid("tools/call", &created);
    assert_eq!(created["resultType"], "task", "{created}");
    let done = until_ended(&alice, created["taskId"].as_str().expect("taskId")).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        done["result"]["content"][0]["text"], "Hello, Alice! (from a task)",
        "{done}"
    );
    // A tool error is a completed task whose result says so.
    let created = alice
        .request("tools/call", json!({"name": "ev_failing_job", "arguments": {}}))
        .await
        .expect("a task");
    assert_eq!(created["resultType"], "task", "{created}");
    let done = until_ended(&alice, created["taskId"].as_str().expect("taskId")).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["isError"], true, "{done}");

    // A caller without the extension: no task, the result itself.
    let plain = TestClient::new(&server);
    let result = plain.request("tools/call", call).await.expect("a result");
    assert_eq!(result["resultType"], "complete", "{result}");
    assert_eq!(result["content"][0]["text"], "relay: done after 1 s", "{result}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstreams_tasks_pass_through_over_stdio() {
    tasks_pass_through(Client::stdio(everything(), Vec::<String>::new()).name("ev"), true).await;
}

/// [`tasks_pass_through`] with `examples/everything` over HTTP, spoken to in
/// `era` (found by the client when `None`); the process ends however the
/// run does.
async fn tasks_pass_through_over_http(era: Option<Era>, relayed: bool) {
    let process = everything_over_http();
    // The gateway retries with backoff until the upstream listens.
    let mut upstream = Client::http(&process.url).name("ev");
    if let Some(era) = era {
        upstream = upstream.era(era);
    }
    let outcome = tokio::spawn(tasks_pass_through(upstream, relayed)).await;
    drop(process);
    if let Err(e) = outcome {
        std::panic::resume_unwind(e.into_panic());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstreams_tasks_pass_through_over_http() {
    tasks_pass_through_over_http(None, true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_upstreams_long_calls_are_offered_as_tasks() {
    let upstream = Client::stdio(everything(), Vec::<String>::new())
        .name("ev")
        .era(Era::Legacy);
    tasks_pass_through(upstream, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_upstreams_long_calls_are_offered_as_tasks_over_http() {
    tasks_pass_through_over_http(Some(Era::Legacy), false).await;
}

/// Through the gateway over HTTP: a listen stream that follows an
/// upstream's task hears its changes under the caller's id (the gateway
/// follows it on a stream of its own to the upstream), and the upstream's
/// list-change stream outlives the client's request timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_stream_follows_an_upstreams_task() {
    use support::http;
    let server = gateway(vec![(
        "ev",
        Client::stdio(everything(), Vec::<String>::new())
            .name("ev")
            .timeout(Duration::from_secs(1)),
    )]);
    let local = TestClient::new(&server);
    until_listed(&local, "ev_confirm_delete").await;
    let (addr, stop) = serve_over_http(&server).await;

    // Two tasks of one upstream, followed on one stream.
    let mut ids = Vec::new();
    for (n, file) in [(1, "a.txt"), (2, "b.txt")] {
        let (_, created) = http::call(
            addr,
            n,
            "tools/call",
            Some("ev_confirm_delete"),
            with_ext(json!({"name": "ev_confirm_delete", "arguments": {"filename": file}})),
        )
        .await;
        ids.push(created["result"]["taskId"].as_str().expect("a task").to_owned());
    }
    let mut stream = http::open_stream(
        addr,
        9,
        "subscriptions/listen",
        None,
        with_ext(json!({"notifications": {"taskIds": [ids[0], ids[1], "not-a-task"]}})),
    )
    .await;
    let ack = stream.next().await;
    assert_eq!(ack["params"]["notifications"]["taskIds"], json!(ids), "{ack}");
    // The upstream's stream is open once its acknowledgement is in: give it a moment.
    tokio::time::sleep(Duration::from_millis(300)).await;
    for (n, id) in ids.iter().enumerate() {
        let answers = json!({"confirm": {"action": "accept", "content": {"confirm": true}}});
        let (_, updated) = http::call(
            addr,
            10 + n as i64,
            "tasks/update",
            Some(id),
            with_ext(json!({"taskId": id, "inputResponses": answers})),
        )
        .await;
        assert_eq!(updated["result"]["resultType"], "complete", "{updated}");
    }
    let mut completed = Vec::new();
    while completed.len() < 2 {
        let note = stream.next().await;
        support::validate_emitted(&note, None);
        assert_eq!(note["method"], "notifications/tasks", "{note}");
        assert_eq!(note["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 9);
        let id = note["params"]["taskId"].as_str().expect("a task id").to_owned();
        assert!(ids.contains(&id), "the caller's ids: {note}");
        if note["params"]["status"] == "completed" {
            let file = if id == ids[0] { "a.txt" } else { "b.txt" };
            assert_eq!(
                note["params"]["result"]["content"][0]["text"],
                format!("Deleted {file}")
            );
            completed.push(id);
        }
    }

    // Past the client's 1 s timeout, the upstream's list changes still arrive.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    local
        .call_tool("ev_test_trigger_tool_change", json!({}))
        .await
        .expect("a list change upstream");
    until_listed(&local, "ev_test_dynamic_tool").await;
    drop(stream);
    let _ = stop.send(());
}

/// A caller's subscription to an upstream's resource is followed upstream:
/// the upstream's `notifications/resources/updated` reaches the caller, a
/// 2026-07-28 caller on its listen stream or a 2025-11-25 one in its
/// session, with the upstream spoken to in `era`.
async fn resource_updates_pass_through(era: Era, legacy_caller: bool) {
    let server = gateway(vec![(
        "ev",
        Client::stdio(everything(), Vec::<String>::new()).name("ev").era(era),
    )]);
    let client = match legacy_caller {
        true => TestClient::new(&server).legacy(),
        false => TestClient::new(&server),
    };
    until_listed(&client, "ev_test_trigger_resource_update").await;
    let updated = |client: &TestClient| {
        client.notifications().iter().any(|n| {
            n["method"] == "notifications/resources/updated" && n["params"]["uri"] == "test://watched-resource"
        })
    };
    // Not followed: the upstream's update reaches nobody.
    client
        .call_tool("ev_test_trigger_resource_update", json!({}))
        .await
        .expect("served");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!updated(&client), "{:?}", client.notifications());

    client.listen(&["test://watched-resource"]).await.expect("listening");
    // The gateway follows it upstream as soon as it can: until then an
    // update upstream is not heard of, so the trigger is pulled until it is.
    let deadline = Instant::now() + Duration::from_secs(15);
    while !updated(&client) {
        assert!(
            Instant::now() < deadline,
            "no update within 15 s: {:?}",
            client.notifications()
        );
        client
            .call_tool("ev_test_trigger_resource_update", json!({}))
            .await
            .expect("served");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    for n in client.notifications() {
        support::validate_emitted(&n, None);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_callers_subscription_follows_a_2026_upstreams_resource() {
    resource_updates_pass_through(Era::Latest, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_callers_subscription_follows_a_2025_upstreams_resource() {
    resource_updates_pass_through(Era::Legacy, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_callers_subscription_follows_a_2026_upstreams_resource() {
    resource_updates_pass_through(Era::Latest, true).await;
}

/// `server` over HTTP on a loopback port: its address, and what stops it.
async fn serve_over_http(server: &Server) -> (std::net::SocketAddr, tokio::sync::oneshot::Sender<()>) {
    use mcp_runtime::transport::http::{HttpConfig, HttpServer};
    let bound = HttpServer::bind(server.clone(), "127.0.0.1:0", HttpConfig::default())
        .await
        .expect("a loopback port");
    let addr = bound.local_addr().expect("its address");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(bound.serve_until(async {
        let _ = stopped.await;
    }));
    (addr, stop)
}

/// `params` with the `_meta` of a caller that can elicit and declares the
/// tasks extension.
fn with_ext(mut params: serde_json::Value) -> serde_json::Value {
    params["_meta"] = support::meta_with(json!({
        "elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}
    }));
    params
}

/// A TCP relay on a loopback port to `to` that cuts every connection it
/// carries when told (as a proxy in front of an upstream cuts a stream it
/// takes for idle); new connections are carried again after.
struct Relay {
    addr: std::net::SocketAddr,
    cut: tokio::sync::watch::Sender<u64>,
}

impl Relay {
    async fn start(to: std::net::SocketAddr) -> Relay {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port");
        let addr = listener.local_addr().expect("its address");
        let (cut, cuts) = tokio::sync::watch::channel(0u64);
        tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                let mut cuts = cuts.clone();
                cuts.mark_unchanged();
                tokio::spawn(async move {
                    let Ok(mut outbound) = tokio::net::TcpStream::connect(to).await else {
                        return;
                    };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => {}
                        _ = cuts.changed() => {}
                    }
                });
            }
        });
        Relay { addr, cut }
    }

    /// Cuts every connection open now.
    fn cut(&self) {
        self.cut.send_modify(|n| *n += 1);
    }
}

/// A gateway proxying `examples/everything` over HTTP through a [`Relay`]
/// the test can cut: the upstream process (ended when dropped), the relay
/// and the gateway.
async fn gateway_behind_relay() -> (EverythingHttp, Relay, Server) {
    gateway_behind_relay_in(None).await
}

/// [`gateway_behind_relay`], speaking `era` to the upstream if given.
async fn gateway_behind_relay_in(era: Option<Era>) -> (EverythingHttp, Relay, Server) {
    let upstream = everything_over_http();
    let upstream_addr: std::net::SocketAddr = upstream
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .parse()
        .expect("an address");
    let relay = Relay::start(upstream_addr).await;
    let mut client = Client::http(format!("http://{}/mcp", relay.addr)).name("ev");
    if let Some(era) = era {
        client = client.era(era);
    }
    let server = gateway(vec![("ev", client)]);
    (upstream, relay, server)
}

/// The gateway's stream following an upstream's task is cut (a proxy in
/// between took it for idle): the gateway opens it again, and the caller's
/// listen stream still hears the task complete.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_followed_task_is_heard_of_after_the_upstreams_stream_is_cut() {
    use support::http;
    let (_upstream, relay, server) = gateway_behind_relay().await;
    let local = TestClient::new(&server);
    until_listed(&local, "ev_confirm_delete").await;
    let (addr, stop) = serve_over_http(&server).await;
    let (_, created) = http::call(
        addr,
        1,
        "tools/call",
        Some("ev_confirm_delete"),
        with_ext(json!({"name": "ev_confirm_delete", "arguments": {"filename": "c.txt"}})),
    )
    .await;
    let id = created["result"]["taskId"].as_str().expect("a task").to_owned();
    let mut stream = http::open_stream(
        addr,
        9,
        "subscriptions/listen",
        None,
        with_ext(json!({"notifications": {"taskIds": [id]}})),
    )
    .await;
    let ack = stream.next().await;
    assert_eq!(ack["params"]["notifications"]["taskIds"], json!([id]), "{ack}");
    // The upstream's stream is open once its acknowledgement is in: give it a moment.
    tokio::time::sleep(Duration::from_millis(300)).await;
    relay.cut();
    // Opened again after half a second.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let answers = json!({"confirm": {"action": "accept", "content": {"confirm": true}}});
    let (_, updated) = http::call(
        addr,
        2,
        "tasks/update",
        Some(&id),
        with_ext(json!({"taskId": id, "inputResponses": answers})),
    )
    .await;
    assert_eq!(updated["result"]["resultType"], "complete", "{updated}");
    let mut heard = Vec::new();
    let completed = loop {
        let Some(note) = stream.next_within(Duration::from_secs(10)).await else {
            break false;
        };
        support::validate_emitted(&note, None);
        let done = note["params"]["status"] == "completed";
        heard.push(note);
        if done {
            break true;
        }
    };
    assert!(completed, "the caller never heard the task complete: {heard:#?}");
    assert!(heard.iter().all(|n| n["params"]["taskId"] == id.as_str()), "{heard:#?}");
    drop(stream);
    let _ = stop.send(());
}

/// A caller's resource subscription is followed again after the
/// connections to the upstream (its streams among them) are cut: the
/// caller is told to read it again at once (it may have changed while the
/// gateway heard nothing), and hears of the next change.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_followed_resource_is_heard_of_after_the_upstreams_streams_are_cut() {
    followed_resource_after_cuts(None).await;
}

/// The same, with the gateway speaking 2025-11-25 to the upstream: its
/// session's subscription is made again on the new connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_followed_resource_of_a_2025_upstream_is_heard_of_after_the_connection_is_cut() {
    followed_resource_after_cuts(Some(Era::Legacy)).await;
}

async fn followed_resource_after_cuts(era: Option<Era>) {
    let (_upstream, relay, server) = gateway_behind_relay_in(era).await;
    let client = TestClient::new(&server);
    until_listed(&client, "ev_test_trigger_resource_update").await;
    client.listen(&["test://watched-resource"]).await.expect("listening");
    let heard = |client: &TestClient| {
        client
            .notifications()
            .iter()
            .filter(|n| n["method"] == "notifications/resources/updated")
            .count()
    };
    for round in 0..2 {
        if round > 0 {
            // Told once it is followed again, with no change made.
            let before = heard(&client);
            let deadline = Instant::now() + Duration::from_secs(15);
            while heard(&client) == before {
                assert!(
                    Instant::now() < deadline,
                    "round {round}: not told to read again within 15 s"
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            // Until it is quiet (a reconnection may tell once more): the
            // next update is a change's.
            let mut seen = heard(&client);
            loop {
                tokio::time::sleep(Duration::from_millis(1500)).await;
                let now = heard(&client);
                if now == seen {
                    break;
                }
                seen = now;
            }
        }
        let before = heard(&client);
        let deadline = Instant::now() + Duration::from_secs(15);
        while heard(&client) == before {
            assert!(Instant::now() < deadline, "round {round}: no update within 15 s");
            let _ = client.call_tool("ev_test_trigger_resource_update", json!({})).await;
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        relay.cut();
    }
}

/// A 2025-11-25 upstream's call made a task on one replica is answered
/// and read on another that shares the task store: the call stays open on
/// the replica that runs it, and the answer reaches it through the store.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_upstreams_task_is_answered_on_another_replica() {
    let store: std::sync::Arc<dyn mcp_runtime::TaskStore> = std::sync::Arc::new(mcp_runtime::MemoryTaskStore::new());
    let replica = || {
        replica_of(
            Server::builder()
                .request_state_keys(vec![[9u8; 32]])
                .task_store(store.clone()),
            Era::Legacy,
        )
    };
    let (a, b) = (replica(), replica());
    let on_a = TestClient::new(&a)
        .with_tasks()
        .on_elicit(elicit_ada)
        .as_principal("alice");
    let on_b = TestClient::new(&b)
        .with_tasks()
        .on_elicit(elicit_ada)
        .as_principal("alice");
    until_listed(&on_a, "ev_confirm_delete").await;
    until_listed(&on_b, "ev_confirm_delete").await;

    let created = on_a
        .request(
            "tools/call",
            json!({"name": "ev_confirm_delete", "arguments": {"filename": "b.txt"}}),
        )
        .await
        .expect("a task");
    let id = created["taskId"].as_str().expect("a task").to_owned();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let task = on_b
            .request("tasks/get", json!({"taskId": id}))
            .await
            .expect("tasks/get on b");
        if task["status"] == "input_required" {
            assert!(task["inputRequests"].get("confirm").is_some(), "{task}");
            break;
        }
        assert!(Instant::now() < deadline, "never asked: {task}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let answers = json!({"confirm": {"action": "accept", "content": {"confirm": true}}});
    on_b.request("tasks/update", json!({"taskId": id, "inputResponses": answers}))
        .await
        .expect("tasks/update on b");
    let done = until_ended(&on_b, &id).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "Deleted b.txt", "{done}");
}

/// A 2026-07-28 stdio upstream's task, asked for on another replica (whose
/// own process of the upstream does not know it): -32602 that says why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_upstreams_task_on_another_replica_is_unknown_and_says_why() {
    let replica = || replica_of(Server::builder().request_state_keys(vec![[5u8; 32]]), Era::Latest);
    let (a, b) = (replica(), replica());
    let on_a = TestClient::new(&a).with_tasks();
    let on_b = TestClient::new(&b).with_tasks();
    until_listed(&on_a, "ev_slow_compute").await;
    until_listed(&on_b, "ev_slow_compute").await;
    let created = on_a
        .request(
            "tools/call",
            json!({"name": "ev_slow_compute", "arguments": {"seconds": 30}}),
        )
        .await
        .expect("a task");
    let id = created["taskId"].as_str().expect("a task").to_owned();
    let unknown = on_b
        .request("tasks/get", json!({"taskId": id}))
        .await
        .expect_err("not known to b's process");
    assert_eq!(unknown.code().0, -32602, "{unknown:?}");
    assert!(
        unknown.message().contains("known only to the replica that started it"),
        "{unknown:?}"
    );
    let seen = on_a
        .request("tasks/get", json!({"taskId": id}))
        .await
        .expect("known to a");
    assert_eq!(seen["status"], "working", "{seen}");
    on_a.request("tasks/cancel", json!({"taskId": id}))
        .await
        .expect("cancelled");
}

/// A 2025-11-25 upstream hears each set of asks callers declare in a
/// session of its own. Opening one (here one that never opens: the upstream
/// does not answer its `initialize`) holds up only the callers that need
/// it, not the callers whose session is open already.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_being_opened_for_some_callers_holds_up_no_others() {
    use support::peer::{self, Script};
    let (url, _) = peer::serve(|request| {
        let caps = &request.body["params"]["capabilities"];
        match request.rpc() {
            // The session for callers that declared roots alone never opens.
            "initialize" if caps.get("roots").is_some() && caps.get("sampling").is_none() => Script::Hang,
            "initialize" => peer::legacy_initialize(request),
            "tools/list" => peer::json(json!({"jsonrpc": "2.0", "id": request.body["id"], "result": {
                "tools": [{"name": "t", "inputSchema": {"type": "object"}}]}})),
            "tools/call" => peer::json(json!({"jsonrpc": "2.0", "id": request.body["id"], "result": {
                "content": [{"type": "text", "text": "ok"}]}})),
            _ => Script::Reply("202 Accepted", "application/json", String::new()),
        }
    })
    .await;
    let server = gateway(vec![("up", Client::http(url).era(Era::Legacy))]);
    let sampler = TestClient::new(&server)
        .on_sample(|_| json!({"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "m"}));
    until_listed(&sampler, "up_t").await;
    let first = sampler.call_tool("up_t", json!({})).await.expect("served");
    assert_eq!(first.text(), "ok");
    let rooted = TestClient::new(&server).on_roots(|_| json!({"roots": []}));
    let opening = tokio::spawn(async move { rooted.call_tool("up_t", json!({})).await });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let again = tokio::time::timeout(Duration::from_secs(5), sampler.call_tool("up_t", json!({})))
        .await
        .expect("not held up by the session being opened")
        .expect("served");
    assert_eq!(again.text(), "ok");
    assert!(!opening.is_finished(), "that session never opens");
    opening.abort();
}

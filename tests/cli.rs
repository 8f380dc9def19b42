//! The command line of a server binary (`examples/everything`): `tools`,
//! `discover`, and `call` with its asks answered from a file, from stdin, or
//! not at all.

mod support;

use serde_json::Value;
use std::io::Write;
use std::process::{Command, Output, Stdio};

fn run(args: &[&str], stdin: &str) -> Output {
    run_with(args, stdin, &[])
}

fn run_with(args: &[&str], stdin: &str, env: &[(&str, &str)]) -> Output {
    let exe = support::example_binary("everything");
    let mut child = Command::new(exe)
        .args(args)
        .env_remove("MCP_REDIS_URL")
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the example starts");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write stdin");
    child.wait_with_output().expect("the example ends")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn tools_lists_names_descriptions_and_schemas() {
    let out = run(&["tools"], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("greet - Greets someone"), "{stdout}");
    let input = stdout
        .lines()
        .skip_while(|l| !l.starts_with("greet "))
        .nth(1)
        .and_then(|l| l.strip_prefix("  input:  "))
        .expect("greet's input schema line");
    let schema: Value = serde_json::from_str(input).expect("a JSON schema");
    assert_eq!(schema["properties"]["name"]["type"], "string");
    for line in stdout.lines().filter_map(|l| l.strip_prefix("  input:  ")) {
        let schema: Value = serde_json::from_str(line).expect("every input schema is JSON");
        assert_eq!(schema["type"], "object");
    }
    assert!(stdout.contains("slow_compute - "), "task tools are listed too");
}

#[test]
fn discover_prints_the_server_description() {
    let out = run(&["discover"], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["resultType"], "complete");
    assert_eq!(
        v["capabilities"]["extensions"]["io.modelcontextprotocol/tasks"],
        serde_json::json!({})
    );
}

#[test]
fn call_runs_a_tool_and_reports_tool_errors_by_exit_status() {
    let out = run(&["call", "greet", r#"{"name": "Ada"}"#], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "Hello, Ada!\n");

    let out = run(&["call", "test_error_handling"], "");
    assert!(!out.status.success());
    assert!(!text(&out.stdout).is_empty());

    let out = run(&["call", "no_such_tool"], "");
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("Unknown tool"), "{}", text(&out.stderr));

    let out = run(&["call", "greet", "[1, 2]"], "");
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("must be a JSON object"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn call_answers_asks_from_a_file_or_from_stdin() {
    let dir = std::env::temp_dir().join(format!("mcp-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let answers = dir.join("answers.json");
    std::fs::write(
        &answers,
        r#"{"user_name": {"action": "accept", "content": {"name": "Grace"}}}"#,
    )
    .unwrap();
    let out = run(
        &[
            "call",
            "test_input_required_result_elicitation",
            "{}",
            "--answers",
            answers.to_str().unwrap(),
        ],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("Hello, Grace!"), "{}", text(&out.stdout));

    // The same ask answered field by field on stdin.
    let out = run(&["call", "test_input_required_result_elicitation"], "Lin\n");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("Hello, Lin!"), "{}", text(&out.stdout));

    // A task tool: followed to its end, its ask answered on stdin.
    let out = run(&["call", "confirm_delete", r#"{"filename": "old.log"}"#], "yes\n");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "Deleted old.log\n");
    assert!(text(&out.stderr).contains("task "), "{}", text(&out.stderr));
    let out = run(&["call", "failing_job"], "");
    assert!(!out.status.success());
    assert!(text(&out.stdout).contains("corrupt"), "{}", text(&out.stdout));

    // No answer at all: a clear error, not a hang.
    let out = run(&["call", "test_input_required_result_elicitation"], "");
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("--answers"), "{}", text(&out.stderr));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn usage_names_the_new_commands() {
    let out = run(&["--help"], "");
    assert!(out.status.success());
    let usage = text(&out.stdout);
    for command in ["tools", "discover", "call NAME"] {
        assert!(usage.contains(command), "{usage}");
    }
}

/// An argument that is not UTF-8 is refused (exit 2), not a panic.
#[cfg(unix)]
#[test]
fn an_argument_that_is_not_utf8_is_refused() {
    use std::os::unix::ffi::OsStrExt;
    let out = Command::new(support::example_binary("everything"))
        .args([std::ffi::OsStr::new("call"), std::ffi::OsStr::new("greet")])
        .arg(std::ffi::OsStr::from_bytes(b"{\"name\": \"\xff\"}"))
        .env_remove("MCP_REDIS_URL")
        .stdin(Stdio::null())
        .output()
        .expect("the example runs");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("not UTF-8"), "{}", text(&out.stderr));
    // A setting likewise: a rate limit that is not text is not "no limit".
    let out = Command::new(support::example_binary("everything"))
        .arg("--stdio")
        .env("MCP_RATE_LIMIT", std::ffi::OsStr::from_bytes(b"10/s\xff"))
        .env_remove("MCP_REDIS_URL")
        .stdin(Stdio::null())
        .output()
        .expect("the example runs");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("MCP_RATE_LIMIT is not UTF-8"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn workers_go_with_http_and_must_be_a_number_and_metrics_with_a_server() {
    for (args, wanted) in [
        (&["--workers", "2"][..], "--workers goes with --http"),
        (&["--stdio", "--workers", "2"][..], "--workers goes with --http"),
        (
            &["tools", "--metrics", "127.0.0.1:0"][..],
            "--metrics goes with --stdio or --http",
        ),
        (
            &["call", "echo", "--metrics", "127.0.0.1:0"][..],
            "--metrics goes with --stdio or --http",
        ),
        (
            &["--http", "127.0.0.1:0", "--workers", "many"][..],
            "is not a whole number",
        ),
        (&["--http", "127.0.0.1:0", "--workers"][..], "--workers needs a number"),
        (
            &["--http", "127.0.0.1:0", "--workers", "18446744073709551615"][..],
            "more than 1024",
        ),
    ] {
        let out = run(args, "");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(text(&out.stderr).contains(wanted), "{args:?}: {}", text(&out.stderr));
    }
    let usage = text(&run(&["--help"], "").stdout);
    assert!(
        usage.contains("--workers N") && usage.contains("MCP_WORKERS"),
        "{usage}"
    );
}

/// `--workers N` caps an HTTP server's threads whatever tokio would choose.
#[cfg(target_os = "linux")]
#[test]
fn workers_cap_the_http_threads() {
    use std::io::BufRead;
    let exe = support::example_binary("quickstart");
    let mut child = Command::new(exe)
        .args(["--http", "127.0.0.1:0", "--workers", "2"])
        .env("TOKIO_WORKER_THREADS", "64")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the example starts");
    let stderr = std::io::BufReader::new(child.stderr.take().expect("stderr"));
    let child = support::Killed(child);
    let mut said = String::new();
    for line in stderr.lines() {
        let line = line.expect("stderr");
        said.push_str(&line);
        said.push('\n');
        if line.contains("http://") {
            break;
        }
    }
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.0.id())).expect("status");
    let threads: usize = status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|n| n.trim().parse().ok())
        .expect("a thread count");
    // The main thread, two workers, and at most a blocking-pool thread or two.
    assert!((3..=5).contains(&threads), "{threads} threads\n{said}{status}");
}

/// `MCP_RATE_LIMIT` limits a binary's callers (here the one stdio client);
/// a value that is not a rate stops it with status 2, saying why.
#[test]
fn the_rate_limit_comes_from_the_environment() {
    let out = run_with(&["--stdio"], "", &[("MCP_RATE_LIMIT", "fast")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("MCP_RATE_LIMIT: invalid rate \"fast\""),
        "{}",
        text(&out.stderr)
    );

    let greet = serde_json::json!({"name": "greet", "arguments": {"name": "Ada"}});
    let calls = format!(
        "{}\n{}\n",
        support::request(1, "tools/call", greet.clone()),
        support::request(2, "tools/call", greet)
    );
    let out = run_with(&["--stdio"], &calls, &[("MCP_RATE_LIMIT", "1/min")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let answers: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON lines"))
        .collect();
    assert_eq!(answers.len(), 2, "{answers:?}");
    let (first, second) = if answers[0]["id"] == 1 {
        (&answers[0], &answers[1])
    } else {
        (&answers[1], &answers[0])
    };
    assert!(first["result"].is_object(), "{first}");
    support::validate_emitted(second, Some("tools/call"));
    assert_eq!(second["error"]["code"], -32603, "{second}");
    assert!(
        second["error"]["data"]["retryAfterMs"]
            .as_u64()
            .is_some_and(|ms| ms > 50_000),
        "{second}"
    );
}

/// `tools | head -1`: stdout closed after the first line ends the command
/// quietly, not with a panic.
#[test]
fn a_closed_stdout_is_no_panic() {
    use std::io::{BufRead, BufReader};
    let mut child = Command::new(support::example_binary("everything"))
        .arg("tools")
        .env_remove("MCP_REDIS_URL")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the example starts");
    let mut first = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut first)
        .expect("a first line");
    // The reader is gone: every later line meets a closed pipe.
    let out = child.wait_with_output().expect("the example ends");
    let stderr = text(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_ne!(out.status.code(), Some(101), "{stderr}");
}

/// The quickstart's invoice tool counts in checked arithmetic: a total too
/// large for cents is a tool error, not a panic nor a wrapped number.
#[test]
fn the_quickstart_invoice_refuses_a_total_it_cannot_count() {
    let invoice = serde_json::json!({"invoice": {"customer": "x", "items": [
        {"description": "a", "quantity": 4_294_967_295u32, "unit_price_cents": 18_446_744_073_709_551_615u64}]}});
    let out = Command::new(support::example_binary("quickstart"))
        .args(["call", "total_invoice", &invoice.to_string()])
        .stdin(Stdio::null())
        .output()
        .expect("the example runs");
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("too large to count"), "{said}");
    assert!(!said.contains("panicked"), "{said}");
}

/// Authorization settings that cannot be right stop the binary at start
/// with status 2, naming the variable: they are not waited out as an
/// unreachable authorization server would be.
#[test]
fn authorization_settings_that_cannot_be_right_stop_the_start() {
    let resource = ("MCP_AUTH_RESOURCE", "http://127.0.0.1:9/mcp");
    for (env, named) in [
        (
            vec![
                ("MCP_AUTH_ISSUER", "http://127.0.0.1:9"),
                ("MCP_AUTH_RESOURCE", "https://"),
            ],
            "MCP_AUTH_RESOURCE",
        ),
        (
            vec![
                ("MCP_AUTH_ISSUER", "http://127.0.0.1:9"),
                ("MCP_AUTH_RESOURCE", "https://mcp.example.com/a b"),
            ],
            "MCP_AUTH_RESOURCE",
        ),
        // No host.
        (
            vec![
                ("MCP_AUTH_ISSUER", "http://127.0.0.1:9"),
                ("MCP_AUTH_RESOURCE", "https://?x"),
            ],
            "MCP_AUTH_RESOURCE",
        ),
        (vec![("MCP_AUTH_ISSUER", "http://:9"), resource], "MCP_AUTH_ISSUER"),
        // Settings of the HTTP server the same way: refused, not served with a default.
        (vec![("MCP_SESSION_PREFIX", "r1 ")], "MCP_SESSION_PREFIX"),
        (vec![("MCP_SHUTDOWN_GRACE", "100000")], "more than a day"),
        (vec![("TOKIO_WORKER_THREADS", "0")], "TOKIO_WORKER_THREADS"),
        (
            vec![("MCP_AUTH_ISSUER", "auth.example.com"), resource],
            "MCP_AUTH_ISSUER",
        ),
        (
            vec![
                ("MCP_AUTH_ISSUER", "http://127.0.0.1:9"),
                resource,
                ("MCP_AUTH_CLIENT_ID", "mcp"),
            ],
            "MCP_AUTH_CLIENT_SECRET",
        ),
    ] {
        // A binary that serves instead (awaiting its authorization server)
        // is stopped after 20 s, and fails the test.
        let mut child = Command::new(support::example_binary("everything"))
            .args(["--http", "127.0.0.1:0"])
            .env_remove("MCP_REDIS_URL")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the example starts");
        let started = std::time::Instant::now();
        while child.try_wait().expect("waits").is_none() && started.elapsed() < std::time::Duration::from_secs(20) {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let _ = child.kill();
        let out = child.wait_with_output().expect("the example ends");
        assert_eq!(out.status.code(), Some(2), "{env:?}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains(named), "{}", text(&out.stderr));
    }
}

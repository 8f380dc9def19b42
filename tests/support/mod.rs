//! Shared test support: schema validation of every emitted message against
//! the official JSON Schema, and an in-memory stdio client.
#![allow(dead_code)]

pub mod http;
pub mod peer;

use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};

/// The spec folder: `$MCP_SPEC_DIR`, or the repository's `tests/spec` fixtures
/// (see `tests/spec/README.md`).
pub fn spec_dir() -> PathBuf {
    match std::env::var_os("MCP_SPEC_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/spec")),
    }
}

type Cache = Mutex<HashMap<(String, String), Arc<jsonschema::Validator>>>;

fn schema(revision: &str) -> Value {
    static SCHEMAS: OnceLock<Mutex<HashMap<String, Value>>> = OnceLock::new();
    let schemas = SCHEMAS.get_or_init(Default::default);
    let mut schemas = schemas.lock().unwrap();
    schemas
        .entry(revision.to_owned())
        .or_insert_with(|| {
            let path = spec_dir().join(revision).join("schema.json");
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
            serde_json::from_str(&text).unwrap()
        })
        .clone()
}

fn validator(revision: &str, def: &str) -> Arc<jsonschema::Validator> {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let key = (revision.to_owned(), def.to_owned());
    if let Some(v) = cache.lock().unwrap().get(&key) {
        return v.clone();
    }
    let mut root = schema(revision);
    assert!(root["$defs"].get(def).is_some(), "schema {revision} has no $defs/{def}");
    root["$ref"] = json!(format!("#/$defs/{def}"));
    let v = Arc::new(jsonschema::validator_for(&root).unwrap_or_else(|e| panic!("bad schema: {e}")));
    cache.lock().unwrap().insert(key, v.clone());
    v
}

/// Asserts that `message` is valid as `$defs/<def>` of the revision.
pub fn assert_valid(revision: &str, def: &str, message: &Value) {
    let v = validator(revision, def);
    let errors: Vec<String> = v
        .iter_errors(message)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(
        errors.is_empty(),
        "message is not a valid {def} ({revision}):\n{message}\nerrors: {errors:#?}"
    );
}

/// The error-type definition a code must satisfy in 2026-07-28.
fn error_def(code: i64) -> Option<&'static str> {
    Some(match code {
        -32700 => "ParseError",
        -32600 => "InvalidRequestError",
        -32601 => "MethodNotFoundError",
        -32602 => "InvalidParamsError",
        -32603 => "InternalError",
        -32020 => "HeaderMismatchError",
        -32021 => "MissingRequiredClientCapabilityError",
        -32022 => "UnsupportedProtocolVersionError",
        _ => return None,
    })
}

/// Validates one message the server emitted, of whatever kind, against the
/// 2026-07-28 schema; `method` names the request a response answers.
pub fn validate_emitted(message: &Value, method: Option<&str>) {
    const REV: &str = "2026-07-28";
    assert_valid(REV, "JSONRPCMessage", message);
    if let Some(error) = message.get("error") {
        assert_valid(REV, "JSONRPCErrorResponse", message);
        let code = error["code"].as_i64().expect("integer error code");
        let def = error_def(code).unwrap_or_else(|| panic!("the server emitted a non-spec error code {code}"));
        // The standard codes' definitions describe the `error` member; the
        // MCP codes' definitions describe the whole response.
        if code <= -32600 {
            assert_valid(REV, def, error);
        } else {
            assert_valid(REV, def, message);
        }
    } else if let Some(result) = message.get("result") {
        assert_valid(REV, "JSONRPCResultResponse", message);
        assert!(
            result.get("resultType").is_some(),
            "result without resultType: {message}"
        );
        assert!(
            result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"].is_string(),
            "result without _meta.serverInfo: {message}"
        );
        // The Tasks extension's messages, against the extension's own schema.
        let task_def = match (method, result["resultType"].as_str()) {
            (_, Some("task")) => Some("CreateTaskResult"),
            (Some("tasks/get"), _) => Some("GetTaskResult"),
            (Some("tasks/update"), _) => Some("UpdateTaskResult"),
            (Some("tasks/cancel"), _) => Some("CancelTaskResult"),
            _ => None,
        };
        if let Some(def) = task_def {
            if def == "CreateTaskResult" {
                assert_eq!(method, Some("tools/call"), "only tools/call becomes a task: {message}");
            }
            assert_valid("ext-tasks", def, result);
            assert!(
                result.get("requestState").is_none(),
                "a task result carries no requestState: {message}"
            );
            return;
        }
        let def = match (method, result["resultType"].as_str()) {
            (_, Some("input_required")) => Some("InputRequiredResult"),
            (Some("server/discover"), _) => Some("DiscoverResultResponse"),
            (Some("tools/list"), _) => Some("ListToolsResultResponse"),
            (Some("tools/call"), _) => Some("CallToolResultResponse"),
            (Some("prompts/list"), _) => Some("ListPromptsResultResponse"),
            (Some("prompts/get"), _) => Some("GetPromptResultResponse"),
            (Some("resources/list"), _) => Some("ListResourcesResultResponse"),
            (Some("resources/templates/list"), _) => Some("ListResourceTemplatesResultResponse"),
            (Some("resources/read"), _) => Some("ReadResourceResultResponse"),
            (Some("completion/complete"), _) => Some("CompleteResultResponse"),
            _ => None,
        };
        match def {
            Some("InputRequiredResult") => assert_valid(REV, "InputRequiredResult", result),
            Some(def) => assert_valid(REV, def, message),
            None => {}
        }
    } else if let Some(method) = message.get("method").and_then(Value::as_str) {
        if method == "notifications/tasks" {
            assert_valid("ext-tasks", "TaskStatusNotification", message);
            return;
        }
        let def = match method {
            "notifications/subscriptions/acknowledged" => "SubscriptionsAcknowledgedNotification",
            other => notification_def(other)
                .unwrap_or_else(|| panic!("the server emitted an unexpected message {other}: {message}")),
        };
        assert_valid(REV, def, message);
    }
}

/// The schema definition of a server notification (the same name in both revisions).
fn notification_def(method: &str) -> Option<&'static str> {
    Some(match method {
        "notifications/progress" => "ProgressNotification",
        "notifications/message" => "LoggingMessageNotification",
        "notifications/tools/list_changed" => "ToolListChangedNotification",
        "notifications/prompts/list_changed" => "PromptListChangedNotification",
        "notifications/resources/list_changed" => "ResourceListChangedNotification",
        "notifications/resources/updated" => "ResourceUpdatedNotification",
        _ => return None,
    })
}

/// The `_meta` every 2026-07-28 request carries, with these capabilities.
pub fn meta_with(caps: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": caps,
        "io.modelcontextprotocol/clientInfo": {"name": "test-client", "version": "1.0.0"}
    })
}

/// A request line with valid `_meta` merged into `params`.
pub fn request(id: i64, method: &str, params: Value) -> String {
    let mut params = params;
    if params.get("_meta").is_none() {
        params["_meta"] = meta_with(json!({}));
    }
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// A client of an in-memory stdio server: writes lines, reads lines, and
/// validates every line it reads (compact single-line JSON, schema-valid).
pub struct StdioClient {
    pub to_server: Option<DuplexStream>,
    pub from_server: Lines<BufReader<DuplexStream>>,
    pub server: tokio::task::JoinHandle<std::io::Result<()>>,
    methods: HashMap<i64, String>,
}

impl StdioClient {
    pub fn start(server: mcp_runtime::Server) -> Self {
        let (client_w, server_r) = tokio::io::duplex(1 << 20);
        let (server_w, client_r) = tokio::io::duplex(1 << 20);
        let task = tokio::spawn(mcp_runtime::transport::stdio::serve_io(server, server_r, server_w));
        StdioClient {
            to_server: Some(client_w),
            from_server: BufReader::new(client_r).lines(),
            server: task,
            methods: HashMap::new(),
        }
    }

    /// Sends one raw line.
    pub async fn send_raw(&mut self, line: &str) {
        if let Ok(v) = serde_json::from_str::<Value>(line) {
            if let (Some(id), Some(m)) = (v["id"].as_i64(), v["method"].as_str()) {
                self.methods.insert(id, m.to_owned());
            }
        }
        let w = self.to_server.as_mut().expect("stdin still open");
        w.write_all(line.as_bytes()).await.unwrap();
        w.write_all(b"\n").await.unwrap();
        w.flush().await.unwrap();
    }

    /// Sends a request with valid `_meta`.
    pub async fn send(&mut self, id: i64, method: &str, params: Value) {
        self.send_raw(&request(id, method, params)).await;
    }

    /// Reads the next message (5 s timeout), validated.
    pub async fn recv(&mut self) -> Value {
        let (value, method) = self.next_message().await;
        validate_emitted(&value, method.as_deref());
        value
    }

    /// Reads the next message (5 s timeout) of a 2025-11-25 session,
    /// validated against that revision's schema.
    pub async fn recv_legacy(&mut self) -> Value {
        let (value, method) = self.next_message().await;
        validate_legacy(&value, method.as_deref());
        value
    }

    /// The next line, compact single-line JSON, with the method of the
    /// request it answers (if it does).
    async fn next_message(&mut self) -> (Value, Option<String>) {
        let line = tokio::time::timeout(Duration::from_secs(5), self.from_server.next_line())
            .await
            .expect("timed out waiting for the server")
            .unwrap()
            .expect("server closed stdout");
        let value: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON: {line}: {e}"));
        assert_eq!(value.to_string(), line, "not compact single-line JSON");
        let method = value["id"].as_i64().and_then(|id| self.methods.get(&id)).cloned();
        (value, method)
    }

    /// Sends a request and reads messages until its response arrives.
    pub async fn call(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(id, method, params).await;
        loop {
            let msg = self.recv().await;
            if msg["id"] == json!(id) {
                return msg;
            }
        }
    }

    /// Closes stdin and waits for the server to exit.
    pub async fn close(mut self) -> std::io::Result<()> {
        self.to_server = None;
        tokio::time::timeout(Duration::from_secs(5), self.server)
            .await
            .expect("server did not exit")
            .unwrap()
    }
}

/// Validates a message emitted on a legacy (2025-11-25) session against that
/// revision's schema, and checks it carries no 2026-only field.
pub fn validate_legacy(message: &Value, method: Option<&str>) {
    const REV: &str = "2025-11-25";
    assert_valid(REV, "JSONRPCMessage", message);
    if let Some(result) = message.get("result") {
        assert_valid(REV, "JSONRPCResultResponse", message);
        for key in ["resultType", "ttlMs", "cacheScope"] {
            assert!(
                result.get(key).is_none(),
                "2026-only field {key} on the legacy wire: {message}"
            );
        }
        assert!(
            result["_meta"].get("io.modelcontextprotocol/serverInfo").is_none(),
            "{message}"
        );
        let def = match method {
            Some("initialize") => Some("InitializeResult"),
            Some("ping" | "logging/setLevel" | "resources/subscribe" | "resources/unsubscribe") => {
                assert_eq!(result, &json!({}), "must be exactly {{}}");
                None
            }
            Some("tools/list") => Some("ListToolsResult"),
            // A task-augmented call's answer is its task.
            Some("tools/call") if result.get("task").is_some() => Some("CreateTaskResult"),
            Some("tools/call" | "tasks/result") => Some("CallToolResult"),
            Some("tasks/get") => Some("GetTaskResult"),
            Some("tasks/cancel") => Some("CancelTaskResult"),
            Some("prompts/list") => Some("ListPromptsResult"),
            Some("prompts/get") => Some("GetPromptResult"),
            Some("resources/list") => Some("ListResourcesResult"),
            Some("resources/read") => Some("ReadResourceResult"),
            Some("completion/complete") => Some("CompleteResult"),
            _ => None,
        };
        if let Some(def) = def {
            assert_valid(REV, def, result);
        }
    } else if message.get("error").is_some() {
        assert_valid(REV, "JSONRPCErrorResponse", message);
    } else if let Some(m) = message.get("method").and_then(Value::as_str) {
        let def = match m {
            "elicitation/create" => "ElicitRequest",
            "sampling/createMessage" => "CreateMessageRequest",
            "roots/list" => "ListRootsRequest",
            other => notification_def(other).unwrap_or_else(|| panic!("unexpected legacy message {other}: {message}")),
        };
        assert_valid(REV, def, message);
    }
}

/// A child process killed (and reaped) when dropped: a server a test
/// started does not outlive a failed assertion.
pub struct Killed(pub std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Builds an example (`cargo build --example NAME`, in the target dir in
/// use) and returns the path of its binary.
pub fn example_binary(name: &str) -> PathBuf {
    build_example(name, None)
}

/// Builds an example with exactly `features` of the root package
/// (`--no-default-features --features FEATURES`) and returns its binary.
pub fn example_binary_with(name: &str, features: &str) -> PathBuf {
    build_example(name, Some(features))
}

fn build_example(name: &str, features: Option<&str>) -> PathBuf {
    let mut command = std::process::Command::new(env!("CARGO"));
    command.args(["build", "--quiet", "--example", name]);
    // Set for this test by cargo; inherited, it changes what some build
    // scripts see (ring's), and the example's dependencies would rebuild.
    command.env_remove("CARGO_MANIFEST_DIR");
    if let Some(features) = features {
        command.args(["--no-default-features", "--features", features]);
    }
    let status = command
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .expect("cargo runs");
    assert!(status.success(), "cargo build --example {name} (features {features:?})");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"));
    target
        .join("debug/examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX))
}

/// Waits (at most 5 s) until `cond` holds: a wait on a condition, never a
/// fixed sleep.
pub async fn eventually(what: &str, cond: impl Fn() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while !cond() {
        assert!(tokio::time::Instant::now() < deadline, "timed out waiting until {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The names (or URIs: `field`) of the items a list result holds under `key`.
pub fn names(result: &Value, key: &str, field: &str) -> Vec<String> {
    result[key]
        .as_array()
        .unwrap_or_else(|| panic!("no {key} in {result}"))
        .iter()
        .map(|t| t[field].as_str().unwrap().to_owned())
        .collect()
}

//! The commands that use a server in process, without a transport:
//! `tools`, `discover` and `call`. Each request goes through the dispatcher
//! exactly as one from a client would.

use super::Command;
use crate::dispatch::{handle_request, Scope};
use crate::jsonrpc::{self, Message};
use crate::server::Server;
use serde_json::{json, Map, Value};
use std::io::{BufRead, IsTerminal};
use std::process::ExitCode;

/// Runs `tools`, `discover` or `call`.
pub(crate) async fn run(server: &Server, command: Command) -> ExitCode {
    match command {
        Command::Tools => {
            tools(server);
            ExitCode::SUCCESS
        }
        Command::Discover => match request(server, 1, "server/discover", json!({ "_meta": meta() })).await {
            Ok(result) => {
                say(format_args!("{}", pretty(&result)));
                ExitCode::SUCCESS
            }
            Err(e) => fail(&e),
        },
        Command::Call {
            name,
            arguments,
            answers,
        } => match call(server, &name, &arguments, answers.as_deref()).await {
            Ok(code) => code,
            Err(e) => fail(&e),
        },
        _ => ExitCode::from(2),
    }
}

/// One line on stdout. A closed stdout (`tools | head -1`) ends nothing
/// here: whoever reads has what it wanted, and the command ends as it would.
fn say(line: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let _ = writeln!(std::io::stdout().lock(), "{line}");
}

fn fail(message: &str) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::FAILURE
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

fn compact(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// The `_meta` of every request: the terminal can answer any ask.
fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": crate::protocol::LATEST_PROTOCOL_VERSION,
        "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {},
            "extensions": {(crate::protocol::TASKS_EXTENSION): {}}
        },
        "io.modelcontextprotocol/clientInfo": {"name": "command-line", "version": env!("CARGO_PKG_VERSION")}
    })
}

/// One request through the dispatcher: its result, or its error as text.
async fn request(server: &Server, id: i64, method: &str, params: Value) -> Result<Value, String> {
    let bytes = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
    let Ok(Message::Request(request)) = jsonrpc::parse(bytes.as_bytes()) else {
        return Err(format!("cannot build a {method} request"));
    };
    let reply = handle_request(server, &request, Scope::default()).await;
    let mut response: Value = serde_json::from_slice(&reply.body).map_err(|e| e.to_string())?;
    if let Some(error) = response.get("error") {
        let mut text = format!(
            "{} ({})",
            error["message"].as_str().unwrap_or("error"),
            error["code"].as_i64().unwrap_or_default()
        );
        if let Some(data) = error.get("data") {
            text.push_str(&format!("\n{}", pretty(data)));
        }
        return Err(text);
    }
    Ok(response["result"].take())
}

/// Every tool: its name and description, its input and output schemas.
fn tools(server: &Server) {
    for entry in &server.catalog().tools {
        let tool = entry.tool();
        match &tool.description {
            Some(d) => say(format_args!("{} - {}", tool.name, d.lines().next().unwrap_or_default())),
            None => say(format_args!("{}", tool.name)),
        }
        say(format_args!("  input:  {}", compact(&tool.input_schema)));
        if let Some(output) = &tool.output_schema {
            say(format_args!("  output: {}", compact(output)));
        }
    }
}

/// Calls the tool; answers its asks from `answers` (a JSON file) or on the
/// terminal, round after round; prints the result.
async fn call(server: &Server, name: &str, arguments: &str, answers: Option<&str>) -> Result<ExitCode, String> {
    let arguments: Value =
        serde_json::from_str(arguments).map_err(|e| format!("the arguments are not JSON ({e}): {arguments}"))?;
    if !arguments.is_object() {
        return Err(format!(
            "the arguments must be a JSON object, like '{{\"name\": \"Ada\"}}': {arguments}"
        ));
    }
    let answers: Map<String, Value> = match answers {
        None => Map::new(),
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
            serde_json::from_str(&text).map_err(|e| format!("{path}: not a JSON object of answers by key: {e}"))?
        }
    };
    let mut params = json!({"name": name, "arguments": arguments, "_meta": meta()});
    for round in 0..=crate::mrtr::MAX_ROUNDS {
        let result = request(server, i64::from(round) + 1, "tools/call", params.clone()).await?;
        if result["resultType"] == "task" {
            return follow_task(server, &result, &answers).await;
        }
        if result["resultType"] != "input_required" {
            print_result(&result);
            let failed = result["isError"] == true;
            return Ok(if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS });
        }
        let mut responses = Map::new();
        if let Some(asks) = result["inputRequests"].as_object() {
            for (key, ask) in asks {
                let answer = match answers.get(key) {
                    Some(answer) => answer.clone(),
                    None => ask_here(key, ask)?,
                };
                responses.insert(key.clone(), answer);
            }
        }
        params["inputResponses"] = Value::Object(responses);
        match result.get("requestState") {
            Some(state) => params["requestState"] = state.clone(),
            None => drop(params.as_object_mut().map(|p| p.remove("requestState"))),
        }
    }
    Err(format!(
        "{name} asked for input more than {} times",
        crate::mrtr::MAX_ROUNDS
    ))
}

/// Polls a task to its end, answering its asks; prints its result.
async fn follow_task(server: &Server, created: &Value, answers: &Map<String, Value>) -> Result<ExitCode, String> {
    let id = created["taskId"].as_str().unwrap_or_default().to_owned();
    let every = created["pollIntervalMs"].as_u64().unwrap_or(500).clamp(50, 1000);
    eprintln!("task {id} created; polling every {every} ms");
    let mut shown = String::new();
    for n in 1i64.. {
        let task = request(server, n, "tasks/get", json!({"taskId": id, "_meta": meta()})).await?;
        if let Some(message) = task["statusMessage"].as_str().filter(|m| *m != shown) {
            eprintln!("  {message}");
            shown = message.to_owned();
        }
        match task["status"].as_str().unwrap_or_default() {
            "completed" => {
                print_result(&task["result"]);
                let failed = task["result"]["isError"] == true;
                return Ok(if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS });
            }
            "failed" => {
                let error = &task["error"];
                return Err(format!(
                    "the task failed: {} ({})",
                    error["message"].as_str().unwrap_or_default(),
                    error["code"].as_i64().unwrap_or_default()
                ));
            }
            "cancelled" => return Err("the task was cancelled".into()),
            "input_required" => {
                let mut responses = Map::new();
                for (key, ask) in task["inputRequests"].as_object().into_iter().flatten() {
                    let answer = match answers.get(key) {
                        Some(answer) => answer.clone(),
                        None => ask_here(key, ask)?,
                    };
                    responses.insert(key.clone(), answer);
                }
                let params = json!({"taskId": id, "inputResponses": responses, "_meta": meta()});
                request(server, n, "tasks/update", params).await?;
            }
            _ => tokio::time::sleep(std::time::Duration::from_millis(every)).await,
        }
    }
    Err("the task never ended".into())
}

/// The content of a tool result: text as text, anything else as JSON.
fn print_result(result: &Value) {
    for block in result["content"].as_array().into_iter().flatten() {
        match block["text"].as_str() {
            Some(text) if block["type"] == "text" => say(format_args!("{text}")),
            _ => say(format_args!("{}", compact(block))),
        }
    }
    if let Some(structured) = result.get("structuredContent") {
        say(format_args!("{}", pretty(structured)));
    }
}

/// Asks on the terminal (or reads from piped stdin): a form field by field,
/// anything else as one line of JSON.
fn ask_here(key: &str, ask: &Value) -> Result<Value, String> {
    let method = ask["method"].as_str().unwrap_or_default();
    let params = &ask["params"];
    let interactive = std::io::stdin().is_terminal();
    let mut lines = std::io::stdin().lock().lines();
    let mut line = |prompt: &str| -> Result<String, String> {
        if interactive {
            eprint!("{prompt}");
        }
        match lines.next() {
            Some(Ok(text)) => Ok(text),
            _ => Err(format!(
                "no answer for {key:?} ({method}): pass --answers FILE or answer on stdin"
            )),
        }
    };
    if method == "elicitation/create" && params["requestedSchema"].is_object() {
        eprintln!("{} ({key})", params["message"].as_str().unwrap_or_default());
        let schema = &params["requestedSchema"];
        let required: Vec<&str> = schema["required"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let mut content = Map::new();
        for (field, spec) in schema["properties"].as_object().into_iter().flatten() {
            let kind = spec["type"].as_str().unwrap_or("string");
            let title = spec["description"].as_str().or(spec["title"].as_str()).unwrap_or(field);
            let optional = if required.contains(&field.as_str()) {
                ""
            } else {
                ", empty to skip"
            };
            let text = line(&format!("  {title} [{field}: {kind}{optional}]: "))?;
            let text = text.trim();
            if text.is_empty() && optional.is_empty() {
                return Ok(json!({"action": "decline"}));
            }
            if text.is_empty() {
                continue;
            }
            let value = match kind {
                "boolean" => Value::Bool(matches!(text, "y" | "yes" | "true" | "1")),
                "integer" | "number" => {
                    serde_json::from_str(text).map_err(|_| format!("{field}: {text:?} is not a {kind}"))?
                }
                _ => Value::String(text.to_owned()),
            };
            content.insert(field.clone(), value);
        }
        return Ok(json!({"action": "accept", "content": content}));
    }
    eprintln!("the tool asks ({key}): {}", pretty(ask));
    let text = line("answer as one line of JSON: ")?;
    serde_json::from_str(&text).map_err(|e| format!("the answer to {key:?} is not JSON: {e}"))
}

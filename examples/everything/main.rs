//! The framework's broadest example, and the fixture the official MCP
//! conformance suite looks up by name: tools of every content kind,
//! progress, logging, resources and templates, prompts, completion,
//! subscriptions with run-time list changes, a JSON Schema 2020-12 tool,
//! and Agent Skills (`skills/`, embedded with `skills!`).
//!
//! ```sh
//! cargo run --example everything -- --http 127.0.0.1:3000
//! ```

mod content;
mod mrtr;
mod prompts;
mod resources;
mod schema_tool;
mod tasks;

use mcp_runtime::prelude::*;
use mcp_runtime::protocol::Tool;
use mcp_runtime::ToolEntry;
use std::time::Duration;

/// Returns a simple text response.
#[tool]
fn test_simple_text() -> &'static str {
    "This is a simple text response for testing."
}

/// Returns an image (a 1x1 PNG).
#[tool]
fn test_image_content() -> ImageContent {
    ImageContent::from_bytes(content::PNG, "image/png")
}

/// Returns audio (a short WAV tone).
#[tool]
fn test_audio_content() -> AudioContent {
    AudioContent::from_bytes(&content::wav_tone(), "audio/wav")
}

/// Returns an embedded text resource.
#[tool]
fn test_embedded_resource() -> EmbeddedResource {
    EmbeddedResource::text(
        "test://embedded-resource",
        "text/plain",
        "This is an embedded resource content.",
    )
}

/// Returns text, an image and an embedded resource together.
#[tool]
fn test_multiple_content_types() -> Vec<ContentBlock> {
    vec![
        ContentBlock::text("Multiple content types test:"),
        ImageContent::from_bytes(content::PNG, "image/png").into(),
        EmbeddedResource::text(
            "test://mixed-content-resource",
            "application/json",
            r#"{"test":"data","value":123}"#,
        )
        .into(),
    ]
}

/// Always fails with a tool error the model can read.
#[tool]
fn test_error_handling() -> Result<String, String> {
    Err("This tool intentionally returns an error for testing".into())
}

/// Reports progress 0, 50 and 100 of 100, about 50 ms apart, then answers.
#[tool]
async fn test_tool_with_progress(ctx: Context) -> String {
    for step in [0.0, 50.0, 100.0] {
        ctx.progress(step, Some(100.0), Some("working"));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    "Progress test completed".into()
}

async fn log_three(ctx: &Context) {
    for text in [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ] {
        ctx.log(LoggingLevel::Info, Some("everything"), &text);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Logs three messages at `info` while it runs (when the client asked for logs).
#[tool]
async fn test_tool_with_logging(ctx: Context) -> String {
    log_three(&ctx).await;
    "Logging test completed".into()
}

/// Logs while it runs; a request without a log level receives no log messages.
#[tool]
async fn test_logging_tool(ctx: Context) -> String {
    log_three(&ctx).await;
    "Logging tool completed".into()
}

/// Needs the client's sampling capability; without it the call fails with -32021.
#[tool(requires(sampling))]
fn test_missing_capability() -> &'static str {
    "The client declared sampling."
}

/// Echoes a value that is also sent as the `Mcp-Param-Region` header.
#[tool(read_only)]
fn test_header_echo(
    /// A region name, mirrored into the `Mcp-Param-Region` header.
    #[header = "Region"]
    region: String,
) -> String {
    format!("region: {region}")
}

/// Adds or removes the tool `test_dynamic_tool`, which announces a tool-list change.
#[tool]
fn test_trigger_tool_change(ctx: Context) -> Result<String, String> {
    let server = ctx.server();
    if server.remove_tool("test_dynamic_tool").map_err(|e| e.to_string())? {
        return Ok("removed test_dynamic_tool".into());
    }
    let tool = Tool {
        name: "test_dynamic_tool".into(),
        description: Some("A tool added at run time.".into()),
        input_schema: serde_json::json!({"type": "object", "additionalProperties": false}),
        ..Default::default()
    };
    server
        .add_tool(ToolEntry::dynamic(tool, |_args, _ctx| async { "dynamic" }))
        .map_err(|e| e.to_string())?;
    Ok("added test_dynamic_tool".into())
}

/// Adds or removes the prompt `test_dynamic_prompt`, which announces a prompt-list change.
#[tool]
fn test_trigger_prompt_change(ctx: Context) -> Result<String, String> {
    prompts::toggle_dynamic_prompt(ctx.server()).map_err(|e| e.to_string())
}

/// Sends the team's digest: at most once a minute per caller (its own rate,
/// on top of the server's `MCP_RATE_LIMIT`; shared by replicas with Redis).
#[tool(rate_limit = "1/min burst 1")]
fn send_digest() -> &'static str {
    "digest sent"
}

/// Marks `test://watched-resource` as changed, notifying its subscribers.
#[tool]
fn test_trigger_resource_update(ctx: Context) -> &'static str {
    ctx.server().notify_resource_updated("test://watched-resource");
    "notified"
}

use mcp_runtime::serde_json;

mcp_runtime::main!(|server| server
    .instructions("The conformance fixture of mcp-runtime: one of everything.")
    // The Skills extension: two skills embedded at compile time (one under a
    // prefix path, `acme/billing/refunds`), each with a subfolder.
    .skills(mcp_runtime::skills!("examples/everything/skills")));

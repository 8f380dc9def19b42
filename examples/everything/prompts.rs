//! Prompts of the fixture.

use mcp_runtime::prelude::*;
use mcp_runtime::protocol::Prompt;
use mcp_runtime::PromptEntry;
use mcp_runtime::{BuildError, Server};

/// A simple prompt without arguments.
#[prompt]
fn test_simple_prompt() -> String {
    "This is a simple prompt for testing.".into()
}

/// A prompt with two required arguments.
#[prompt]
fn test_prompt_with_arguments(
    /// The first argument.
    #[complete(with = complete_arg1)]
    arg1: String,
    /// The second argument.
    arg2: String,
) -> String {
    format!("Prompt with arguments: arg1='{arg1}', arg2='{arg2}'")
}

fn complete_arg1(prefix: &str) -> Vec<String> {
    ["test", "testing", "tested"]
        .iter()
        .filter(|v| v.starts_with(prefix))
        .map(|v| v.to_string())
        .collect()
}

/// A prompt that embeds a resource.
#[prompt]
#[allow(non_snake_case)]
fn test_prompt_with_embedded_resource(
    /// The URI of the resource to embed.
    resourceUri: String,
) -> Vec<PromptMessage> {
    vec![
        PromptMessage::new(
            Role::User,
            EmbeddedResource::text(resourceUri, "text/plain", "Embedded resource content for testing."),
        ),
        PromptMessage::user("Please process the embedded resource above."),
    ]
}

/// A prompt with an image.
#[prompt]
fn test_prompt_with_image() -> Vec<PromptMessage> {
    vec![
        PromptMessage::new(Role::User, ImageContent::from_bytes(super::content::PNG, "image/png")),
        PromptMessage::user("Please analyze the image above."),
    ]
}

/// Adds `test_dynamic_prompt`, or removes it if it is there.
pub fn toggle_dynamic_prompt(server: &Server) -> Result<String, BuildError> {
    if server.remove_prompt("test_dynamic_prompt")? {
        return Ok("removed test_dynamic_prompt".into());
    }
    let prompt = Prompt {
        name: "test_dynamic_prompt".into(),
        description: Some("A prompt added at run time.".into()),
        ..Default::default()
    };
    server.add_prompt(PromptEntry::dynamic(prompt, |_args, _ctx| async {
        "dynamic".to_string()
    }))?;
    Ok("added test_dynamic_prompt".into())
}

//! Prompts: what a prompt function may return.

use crate::error::McpError;
use crate::mrtr::{Halt, Outcome};
use crate::protocol::{ContentBlock, GetPromptResult, PromptMessage, Role, TextContent};

/// Turns a prompt function's return value into a `prompts/get` result.
///
/// Implemented for `String` (one user message), `PromptMessage`,
/// `Vec<PromptMessage>`, `GetPromptResult`, `Result<T, McpError>` and
/// `Outcome<T>`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a #[prompt] function",
    note = "return String, PromptMessage, Vec<PromptMessage>, GetPromptResult or Result<T, McpError>"
)]
pub trait IntoPromptResult {
    /// The outcome.
    fn into_prompt_result(self) -> Result<Outcome<GetPromptResult>, McpError>;
}

fn messages(messages: Vec<PromptMessage>) -> Result<Outcome<GetPromptResult>, McpError> {
    Ok(Outcome::Complete(GetPromptResult {
        messages,
        ..Default::default()
    }))
}

impl IntoPromptResult for String {
    fn into_prompt_result(self) -> Result<Outcome<GetPromptResult>, McpError> {
        messages(vec![PromptMessage::user(self)])
    }
}

impl IntoPromptResult for PromptMessage {
    fn into_prompt_result(self) -> Result<Outcome<GetPromptResult>, McpError> {
        messages(vec![self])
    }
}

impl IntoPromptResult for Vec<PromptMessage> {
    fn into_prompt_result(self) -> Result<Outcome<GetPromptResult>, McpError> {
        messages(self)
    }
}

impl IntoPromptResult for GetPromptResult {
    fn into_prompt_result(self) -> Result<Outcome<GetPromptResult>, McpError> {
        Ok(Outcome::Complete(self))
    }
}

impl<T: IntoPromptResult> IntoPromptResult for Result<T, McpError> {
    fn into_prompt_result(self) -> Result<Outcome<GetPromptResult>, McpError> {
        self?.into_prompt_result()
    }
}

impl<T: IntoPromptResult> IntoPromptResult for Outcome<T> {
    fn into_prompt_result(self) -> Result<Outcome<GetPromptResult>, McpError> {
        match self {
            Outcome::Complete(v) => v.into_prompt_result(),
            Outcome::InputRequired(ir) => Ok(Outcome::InputRequired(ir)),
        }
    }
}

impl PromptMessage {
    /// A user message with one text block.
    pub fn user(text: impl Into<String>) -> Self {
        PromptMessage {
            role: Role::User,
            content: ContentBlock::Text(TextContent {
                text: text.into(),
                ..Default::default()
            }),
        }
    }

    /// An assistant message with one text block.
    pub fn assistant(text: impl Into<String>) -> Self {
        PromptMessage {
            role: Role::Assistant,
            content: ContentBlock::Text(TextContent {
                text: text.into(),
                ..Default::default()
            }),
        }
    }

    /// A message with any content block.
    pub fn new(role: Role, content: impl Into<ContentBlock>) -> Self {
        PromptMessage {
            role,
            content: content.into(),
        }
    }
}

impl<T: IntoPromptResult> IntoPromptResult for Result<T, Halt> {
    fn into_prompt_result(self) -> Result<Outcome<GetPromptResult>, McpError> {
        match self {
            Ok(v) => v.into_prompt_result(),
            Err(halt) => halt.into_outcome(),
        }
    }
}

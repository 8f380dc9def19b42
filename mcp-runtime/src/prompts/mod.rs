//! Prompts: the static descriptor `#[prompt]` registers, what a prompt
//! function may return, and serving `prompts/list` and `prompts/get`.

pub(crate) mod serve;

use crate::context::Context;
use crate::error::McpError;
use crate::mrtr::{Halt, Outcome};
use crate::protocol::{ContentBlock, GetPromptResult, Prompt, PromptArgument, PromptMessage, Role, TextContent};
use crate::resources::{Completer, CompleterDef};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// The future a prompt handler returns.
pub type PromptFuture = Pin<Box<dyn Future<Output = Result<Outcome<GetPromptResult>, McpError>> + Send>>;

/// The erased `prompts/get` of a prompt: the string arguments and the context.
pub type PromptHandler = Arc<dyn Fn(serde_json::Map<String, serde_json::Value>, Context) -> PromptFuture + Send + Sync>;

/// One argument as `#[prompt]` states it.
#[derive(Debug, Clone, Copy)]
pub struct PromptArgDef {
    /// Name.
    pub name: &'static str,
    /// Description (the parameter's doc comment).
    pub description: Option<&'static str>,
    /// Required unless the parameter is an `Option`.
    pub required: bool,
}

/// The static descriptor of a `#[prompt]` function.
#[derive(Debug)]
pub struct PromptDef {
    /// Name.
    pub name: &'static str,
    /// Display title.
    pub title: Option<&'static str>,
    /// Description (the doc comment unless overridden).
    pub description: Option<&'static str>,
    /// Arguments.
    pub arguments: &'static [PromptArgDef],
    /// The erased handler.
    pub get: fn(serde_json::Map<String, serde_json::Value>, Context) -> PromptFuture,
    /// Arguments' completion.
    pub completers: &'static [CompleterDef],
    /// Where the function is defined.
    pub location: &'static str,
}

/// Implemented by the type-namespace twin of each `#[prompt]` function.
pub trait RegisteredPrompt {
    /// The static descriptor.
    const DEF: &'static PromptDef;
}

/// A prompt as the router serves it.
#[derive(Clone)]
pub struct PromptEntry {
    pub(crate) prompt: Prompt,
    pub(crate) handler: PromptHandler,
    pub(crate) completers: Vec<Completer>,
    pub(crate) location: &'static str,
}

impl std::fmt::Debug for PromptEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromptEntry")
            .field("name", &self.prompt.name)
            .field("location", &self.location)
            .finish()
    }
}

impl PromptEntry {
    /// The entry of a registered `#[prompt]` function.
    pub fn from_def(def: &'static PromptDef) -> Self {
        let get = def.get;
        let arguments: Vec<PromptArgument> = def
            .arguments
            .iter()
            .map(|a| PromptArgument {
                name: a.name.to_owned(),
                description: a.description.map(str::to_owned),
                required: Some(a.required),
                ..Default::default()
            })
            .collect();
        PromptEntry {
            prompt: Prompt {
                name: def.name.to_owned(),
                title: def.title.map(str::to_owned),
                description: def.description.map(str::to_owned),
                arguments: (!arguments.is_empty()).then_some(arguments),
                ..Default::default()
            },
            handler: Arc::new(move |args, ctx| get(args, ctx)),
            completers: Completer::from_defs(def.completers),
            location: def.location,
        }
    }

    /// A prompt defined at run time.
    pub fn dynamic<F, Fut, R>(prompt: Prompt, handler: F) -> Self
    where
        F: Fn(serde_json::Map<String, serde_json::Value>, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoPromptResult,
    {
        let handler: PromptHandler = Arc::new(move |args, ctx| {
            let fut = handler(args, ctx);
            Box::pin(async move { fut.await.into_prompt_result() })
        });
        PromptEntry {
            prompt,
            handler,
            completers: Vec::new(),
            location: "dynamic",
        }
    }

    /// The wire definition.
    pub fn prompt(&self) -> &Prompt {
        &self.prompt
    }
}

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

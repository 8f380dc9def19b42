//! A prompt as the catalog serves it: the static descriptor `#[prompt]`
//! registers, and the entry built from it (or by hand, at run time).

use super::resource::{Completer, CompleterDef};
use crate::error::McpError;
use crate::mrtr::Outcome;
use crate::prompts::IntoPromptResult;
use crate::protocol::{GetPromptResult, Prompt, PromptArgument};
use crate::server::visibility::{Predicate, Viewer, VisibleIf};
use crate::server::Context;
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
    /// The OAuth scopes a caller needs (`#[prompt(scopes(..))]`).
    pub scopes: &'static [&'static str],
    /// Whether the caller sees the prompt (`#[prompt(visible_if = f)]`).
    pub visible_if: Option<VisibleIf>,
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
    /// The OAuth scopes a caller needs.
    pub(crate) scopes: Vec<String>,
    /// Whether the caller sees the prompt, when it is not everyone.
    pub(crate) visible: Option<Predicate>,
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
            scopes: def.scopes.iter().map(|s| (*s).to_owned()).collect(),
            visible: def.visible_if.map(|f| Arc::new(f) as Predicate),
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
            scopes: Vec::new(),
            visible: None,
            location: "dynamic",
        }
    }

    /// The OAuth scopes a caller needs (see [`ToolEntry::scopes`](crate::ToolEntry::scopes)).
    pub fn scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Shows the prompt only to the callers `visible` says yes to: to the
    /// others it is absent from `prompts/list`, and a get or a completion
    /// of it is answered like one of an unknown prompt (see
    /// [`ToolEntry::visible_if`](crate::ToolEntry::visible_if)).
    ///
    /// ```
    /// use mcp_runtime::{protocol::Prompt, PromptEntry};
    /// let prompt: Prompt = serde_json::from_value(serde_json::json!({"name": "triage"})).unwrap();
    /// let triage = PromptEntry::dynamic(prompt, |_args, _ctx| async { String::from("Sort these.") })
    ///     .visible_if(|viewer| viewer.header("x-team") == Some("support"));
    /// # let _ = triage;
    /// ```
    pub fn visible_if(mut self, visible: impl Fn(&Viewer<'_>) -> bool + Send + Sync + 'static) -> Self {
        self.visible = Some(Arc::new(visible));
        self
    }

    /// The wire definition.
    pub fn prompt(&self) -> &Prompt {
        &self.prompt
    }
}

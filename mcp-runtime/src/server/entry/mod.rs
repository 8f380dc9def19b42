//! The entries of the catalog, one file per kind: what `#[tool]`,
//! `#[resource]` and `#[prompt]` register, and what the builder and the
//! run-time changes add.

mod prompt;
mod resource;
mod tool;

pub use prompt::{PromptArgDef, PromptDef, PromptEntry, PromptFuture, RegisteredPrompt};
pub(crate) use resource::{CompleteRelay, Completer, ResourceHandler};
pub use resource::{CompleterDef, RegisteredResource, ResourceDef, ResourceEntry, ResourceFuture};
pub use tool::{AnnotationHints, RegisteredTool, ToolDef, ToolEntry, ToolFuture};

//! The link-time registry: every `#[tool]`, `#[resource]` and `#[prompt]` in the binary, in any module of
//! any crate it links, lands in a `linkme` distributed slice. No catalog code.
//!
//! Limits of linkme, honestly: it works on Linux, macOS, Windows, the BSDs,
//! illumos, and most embedded ELF targets; it does **not** work on
//! `wasm32` targets (no linker sections to collect). There, build the server
//! with [`Server::builder().empty()`](crate::ServerBuilder::empty) and add
//! handlers explicitly with [`ServerBuilder::tool`](crate::ServerBuilder::tool).
//! A static library whose registered items are never referenced may be dropped
//! by the linker; linking it as a Rust dependency (the normal case) is fine.

use super::entry::{PromptDef, ResourceDef, ToolDef};

/// Every `#[tool]` function linked into the binary.
#[linkme::distributed_slice]
pub static TOOLS: [ToolDef];

/// Every `#[resource]` function linked into the binary.
#[linkme::distributed_slice]
pub static RESOURCES: [ResourceDef];

/// Every `#[prompt]` function linked into the binary.
#[linkme::distributed_slice]
pub static PROMPTS: [PromptDef];

/// The registered tool descriptors (in link order; the catalog sorts them).
pub fn tools() -> &'static [ToolDef] {
    &TOOLS
}

/// The registered resource descriptors.
pub fn resources() -> &'static [ResourceDef] {
    &RESOURCES
}

/// The registered prompt descriptors.
pub fn prompts() -> &'static [PromptDef] {
    &PROMPTS
}

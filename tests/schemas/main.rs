//! Snapshot tests of the JSON Schemas `#[tool]` generates.
//!
//! Every tool below is a small `#[tool]` function whose `inputSchema` (and,
//! for `Json<T>` returns, `outputSchema`) is compared with an exact JSON
//! literal, so any change in the generator (schemars settings, inlining,
//! root clean-up, doc handling) shows up here. Independently of the
//! snapshots, every schema is checked to be valid JSON Schema 2020-12, every
//! tool definition to be a valid `Tool` of the 2026-07-28 MCP schema, and a
//! few example argument objects are validated against the schemas and sent
//! to a live server, so that the schema and the runtime decoder agree.
//!
//! Formats such as `int32`/`uint8`/`double` are schemars' own (not 2020-12
//! registry formats); they are annotation-only in 2020-12 and snapshotted
//! as they are.
#![allow(dead_code, unused_variables)]

#[path = "../support/mod.rs"]
mod support;

mod fixtures;
mod outputs;
mod parameters;
mod properties;
mod types;
mod wire;

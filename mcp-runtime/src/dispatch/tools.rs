//! `tools/list` and `tools/call`.

use super::Head;
use crate::error::McpError;
use crate::mrtr::Outcome;
use crate::protocol::CallToolResult;
use crate::server::Context;
use crate::server::{Catalog, Server};
use serde_json::value::RawValue;
use std::borrow::Cow;

/// `tools/list`.
pub(crate) fn list(server: &Server, catalog: &Catalog, params: Option<&RawValue>) -> Result<Vec<u8>, McpError> {
    super::list::list_page(server, "tools", &catalog.tools_json, params)
}

/// The params of `tools/call` this module reads.
pub(crate) struct CallParams<'a> {
    name: Cow<'a, str>,
    arguments: Option<&'a RawValue>,
}

impl<'a> CallParams<'a> {
    /// The name and arguments, from the request's one parse.
    pub(crate) fn from_head(head: &Head<'a>) -> Result<Self, McpError> {
        Ok(CallParams {
            name: Head::required(head.name, "name")?,
            arguments: head.arguments,
        })
    }

    /// The tool's name.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }
}

/// `tools/call`: finds the tool, runs it, catches a panic.
pub(crate) async fn call(
    catalog: &Catalog,
    params: &CallParams<'_>,
    headers: &crate::headers::HeaderFacts,
    ctx: Context,
) -> Result<Outcome<CallToolResult>, McpError> {
    let Some(&index) = catalog.tool_index.get(params.name()) else {
        return Err(McpError::invalid_params(format!("Unknown tool: {}", params.name)));
    };
    let entry = &catalog.tools[index];
    let args = match params.arguments {
        Some(raw) if raw.get() == "null" => None,
        Some(raw) if !raw.get().starts_with('{') => {
            return Err(McpError::invalid_params("Invalid params: arguments must be an object"));
        }
        other => other,
    };
    headers.check_params(&entry.header_params, args.map(RawValue::get))?;
    check_required(&entry.requires, ctx.client_capabilities())?;
    if entry.constrained {
        let given: serde_json::Value = match args {
            Some(raw) => serde_json::from_str(raw.get()).unwrap_or_default(),
            None => serde_json::Value::Object(Default::default()),
        };
        if let Err(why) = crate::tools::validate::check(&entry.tool.input_schema, &given, "arguments") {
            let text = format!("Invalid arguments for tool `{}`: {why}", params.name);
            return Ok(Outcome::Complete(crate::tools::error_result(text)));
        }
    }
    let result = crate::panic::run_caught(|| (entry.handler)(args, ctx)).await;
    match result {
        Ok(outcome) => outcome,
        Err(message) => {
            tracing::error!(tool = %params.name, "tool handler panicked: {message}");
            Err(McpError::internal(format!(
                "Internal error: tool `{}` panicked",
                params.name
            )))
        }
    }
}

/// -32021 unless the client declared every capability in `required`.
pub(crate) fn check_required(
    required: &[crate::protocol::ClientCapability],
    caps: &crate::protocol::ClientCapabilities,
) -> Result<(), McpError> {
    let mut missing = serde_json::Map::new();
    for capability in required.iter().filter(|c| !c.is_declared_in(caps)) {
        capability.add_to(&mut missing);
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(McpError::missing_capability(serde_json::Value::Object(missing)))
    }
}

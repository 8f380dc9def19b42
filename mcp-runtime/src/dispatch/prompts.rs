//! Serving `prompts/list` and `prompts/get`.

use crate::error::McpError;
use crate::mrtr::Outcome;
use crate::protocol::GetPromptResult;
use crate::server::Catalog;
use crate::server::Context;

/// The params of `prompts/get` this module reads.
pub(crate) struct GetParams {
    pub name: String,
    pub arguments: Option<serde_json::Map<String, serde_json::Value>>,
}

impl GetParams {
    /// The name and arguments, from the request's one parse.
    pub(crate) fn from_head(head: &super::Head<'_>) -> Result<Self, McpError> {
        let name = super::Head::required(head.name, "name")?.into_owned();
        let arguments = match head.arguments {
            None => None,
            Some(raw) => serde_json::from_str(raw.get())
                .map_err(|e| McpError::invalid_params(format!("Invalid params: arguments: {e}")))?,
        };
        Ok(GetParams { name, arguments })
    }
}

/// `prompts/get`: checks the arguments against the prompt's, then runs it.
/// `shown`: false when the prompt is hidden from the caller, who is told it
/// is unknown.
pub(crate) async fn get(
    catalog: &Catalog,
    params: &GetParams,
    shown: bool,
    ctx: Context,
) -> Result<Outcome<GetPromptResult>, McpError> {
    let Some(index) = catalog.prompt_at(&params.name).filter(|_| shown) else {
        return Err(McpError::invalid_params(format!("Unknown prompt: {}", params.name)));
    };
    let entry = &catalog.prompts[index];
    let args = params.arguments.clone().unwrap_or_default();
    let declared = entry.prompt.arguments.as_deref().unwrap_or_default();
    for a in declared {
        if a.required == Some(true) && !args.contains_key(&a.name) {
            return Err(McpError::invalid_params(format!(
                "Invalid params: missing required argument `{}` of prompt `{}`",
                a.name, params.name
            )));
        }
    }
    for (key, value) in &args {
        if !declared.iter().any(|a| &a.name == key) {
            return Err(McpError::invalid_params(format!(
                "Invalid params: unknown argument `{key}` of prompt `{}`",
                params.name
            )));
        }
        if !value.is_string() {
            return Err(McpError::invalid_params(format!(
                "Invalid params: argument `{key}` must be a string"
            )));
        }
    }
    let name = &params.name;
    let result = crate::panic::run_caught(|| (entry.handler)(args, ctx)).await;
    result.map_err(|message| {
        tracing::error!(prompt = %name, "prompt handler panicked: {message}");
        McpError::internal(format!("Internal error: prompt `{name}` panicked"))
    })?
}

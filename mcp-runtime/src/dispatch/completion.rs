//! `completion/complete`: candidates for a prompt argument or a resource
//! template variable, from a `#[complete(with = f)]` function or from the
//! values the parameter's type enumerates (enums complete by themselves).

use crate::error::McpError;
use crate::server::entry::Completer;
use crate::server::Catalog;
use serde::{Deserialize, Serialize};

/// At most this many values are returned (the spec's limit).
pub const MAX_VALUES: usize = 100;

#[derive(Deserialize)]
#[serde(tag = "type")]
enum Reference {
    #[serde(rename = "ref/prompt")]
    Prompt { name: String },
    #[serde(rename = "ref/resource")]
    Resource { uri: String },
}

#[derive(Deserialize)]
struct Argument {
    name: String,
    value: String,
}

#[derive(Deserialize, Default)]
struct CompletionContext {
    #[serde(default)]
    arguments: serde_json::Map<String, serde_json::Value>,
}

/// The params of `completion/complete`.
#[derive(Deserialize)]
pub(crate) struct CompleteParams {
    #[serde(rename = "ref")]
    reference: Reference,
    argument: Argument,
    #[serde(default)]
    context: Option<CompletionContext>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Completion {
    values: Vec<String>,
    total: usize,
    has_more: bool,
}

/// The result of `completion/complete` (without `_meta`).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CompleteResult {
    result_type: &'static str,
    completion: Completion,
}

/// `completion/complete`: a prompt's or template's completer, if the
/// caller is shown it (a hidden one is unknown) and the caller's token
/// reaches it (`token`: none when requests are not authorized).
pub(crate) fn complete(
    catalog: &Catalog,
    params: CompleteParams,
    token: Option<&crate::auth::AccessToken>,
    sight: &super::visible::Sight<'_>,
) -> Result<Completed, McpError> {
    let completers: &[Completer] = match &params.reference {
        Reference::Prompt { name } => {
            let i = catalog
                .prompt_at(name)
                .filter(|&i| sight.prompt(&catalog.prompts[i]))
                .ok_or_else(|| McpError::invalid_params(format!("Unknown prompt: {name}")))?;
            super::access::prompt(catalog, name, token)?;
            &catalog.prompts[i].completers
        }
        Reference::Resource { uri } => {
            let template = catalog
                .templates
                .iter()
                .find(|t| &t.uri == uri && sight.resource(t))
                .ok_or_else(|| McpError::invalid_params(format!("Unknown resource template: {uri}")))?;
            super::access::entry(token, &template.scopes)?;
            &template.completers
        }
    };
    if let Some(relay) = completers.iter().find_map(|c| c.relay.clone()) {
        return Ok(Completed::Relayed(relay));
    }
    let arguments = params.context.map(|c| c.arguments).unwrap_or_default();
    let prefix = params.argument.value.as_str();
    let all: Vec<String> = match completers.iter().find(|c| c.name == params.argument.name) {
        Some(Completer { custom: Some(f), .. }) => {
            crate::panic::call_caught(|| f(prefix, &arguments)).map_err(|why| {
                tracing::error!("completion function panicked: {why}");
                McpError::internal(format!("The completion function failed: {why}"))
            })?
        }
        Some(c) => c.values.iter().filter(|v| v.starts_with(prefix)).cloned().collect(),
        None => Vec::new(),
    };
    let total = all.len();
    let values: Vec<String> = all.into_iter().take(MAX_VALUES).collect();
    Ok(Completed::Here(CompleteResult {
        result_type: "complete",
        completion: Completion {
            has_more: total > values.len(),
            values,
            total,
        },
    }))
}

/// What `completion/complete` found: the result, or where to ask for it.
pub(crate) enum Completed {
    Here(CompleteResult),
    Relayed(crate::server::entry::CompleteRelay),
}

/// The result of a relayed completion, from the `completion` object it returned.
pub(crate) fn relayed(completion: serde_json::Value) -> Result<CompleteResult, McpError> {
    let completion: RelayedCompletion = serde_json::from_value(completion)
        .map_err(|e| McpError::internal(format!("the completion relayed does not read: {e}")))?;
    let total = completion.total.unwrap_or(completion.values.len());
    let has_more = completion.has_more.unwrap_or(false) || completion.values.len() > MAX_VALUES;
    let values: Vec<String> = completion.values.into_iter().take(MAX_VALUES).collect();
    Ok(CompleteResult {
        result_type: "complete",
        completion: Completion {
            values,
            total,
            has_more,
        },
    })
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RelayedCompletion {
    values: Vec<String>,
    total: Option<usize>,
    has_more: Option<bool>,
}

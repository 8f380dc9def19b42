//! Authorization in the dispatcher: what a verified token's scopes reach.
//! A request with no token (stdio, or an endpoint without authorization)
//! reaches everything; one with a token reaches an item only with every
//! scope the item asks for: a call is refused (403 `insufficient_scope`),
//! a list leaves the item out when the endpoint hides what is unreachable
//! (`visible::Lister`, with the visibility predicates).

use crate::auth::AccessToken;
use crate::error::McpError;
use crate::server::Catalog;

/// A refusal naming the scopes the token lacks, or `Ok`.
pub(crate) fn entry(token: Option<&AccessToken>, required: &[String]) -> Result<(), McpError> {
    check(token, required)
}

fn check(token: Option<&AccessToken>, required: &[String]) -> Result<(), McpError> {
    let Some(token) = token else { return Ok(()) };
    let missing = token.missing(required);
    if missing.is_empty() {
        Ok(())
    } else {
        Err(McpError::insufficient_scope(&missing))
    }
}

/// `tools/call` of `name` (an unknown name is left to the call to report).
/// Without a token nothing is looked up.
pub(crate) fn tool(catalog: &Catalog, name: &str, token: Option<&AccessToken>) -> Result<(), McpError> {
    if token.is_none() {
        return Ok(());
    }
    match catalog.tool_at(name) {
        Some(i) => check(token, &catalog.tools[i].scopes),
        None => Ok(()),
    }
}

/// `prompts/get` of `name`.
pub(crate) fn prompt(catalog: &Catalog, name: &str, token: Option<&AccessToken>) -> Result<(), McpError> {
    if token.is_none() {
        return Ok(());
    }
    match catalog.prompt_at(name) {
        Some(i) => check(token, &catalog.prompts[i].scopes),
        None => Ok(()),
    }
}

/// `resources/read` of `uri`.
pub(crate) fn resource(catalog: &Catalog, uri: &str, token: Option<&AccessToken>) -> Result<(), McpError> {
    if token.is_none() {
        return Ok(());
    }
    match catalog.find_resource(uri) {
        Some((entry, _)) => check(token, &entry.scopes),
        None => Ok(()),
    }
}

//! Serving `resources/read` (the lists are written in `dispatch/mod.rs`, through `visible`).

use crate::error::McpError;
use crate::mrtr::Outcome;
use crate::protocol::{CacheScope, ResourceContents};
use crate::server::entry::ResourceEntry;
use crate::server::Context;
use serde::Serialize;

/// The params of `resources/read` this module reads.
pub(crate) struct ReadParams {
    pub uri: String,
}

impl ReadParams {
    /// The URI, from the request's one parse.
    pub(crate) fn from_head(head: &super::Head<'_>) -> Result<Self, McpError> {
        let uri = super::Head::required(head.uri, "uri")?.into_owned();
        Ok(ReadParams { uri })
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ReadResult {
    result_type: &'static str,
    contents: Vec<ResourceContents>,
    ttl_ms: u64,
    cache_scope: CacheScope,
}

/// `resources/read` of the resource that serves the URI (`found`: an exact
/// URI first, then the templates in list order, of those the caller is
/// shown), with the variables it binds.
pub(crate) async fn read(
    found: Option<(&ResourceEntry, &[(String, String)])>,
    params: &ReadParams,
    ctx: Context,
) -> Result<Outcome<ReadResult>, McpError> {
    let uri = params.uri.as_str();
    let (entry, vars) = found.ok_or_else(|| McpError::resource_not_found(uri))?;
    let result = crate::panic::run_caught(|| (entry.handler)(uri, vars, ctx)).await;
    let outcome = result.map_err(|message| {
        tracing::error!(%uri, "resource handler panicked: {message}");
        McpError::internal(format!("Internal error: reading {uri} panicked"))
    })??;
    Ok(match outcome {
        Outcome::Complete(contents) if contents.is_empty() => return Err(McpError::resource_not_found(uri)),
        Outcome::Complete(contents) => Outcome::Complete(ReadResult {
            result_type: "complete",
            contents,
            ttl_ms: entry.ttl_ms,
            cache_scope: entry.cache_scope,
        }),
        Outcome::InputRequired(ir) => Outcome::InputRequired(ir),
    })
}

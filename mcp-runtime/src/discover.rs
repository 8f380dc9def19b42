//! `server/discover`: supported versions, capabilities derived from what is
//! registered, instructions, and caching hints.

use crate::meta::SUPPORTED_VERSIONS;
use crate::protocol::{DiscoverResult, ListChangedCapability, ResourcesCapability, ServerCapabilities};
use crate::server::{Router, Server};

/// The capabilities the server offers, derived from what it serves: no
/// `tools` capability when there are no tools. List changes and resource
/// updates are announced on `subscriptions/listen` streams, so the kinds that
/// are present declare `listChanged` (and resources `subscribe`).
pub(crate) fn capabilities(_server: &Server, router: &Router) -> ServerCapabilities {
    let has_resources = !router.resources.is_empty() || !router.templates.is_empty();
    ServerCapabilities {
        tools: (!router.tools.is_empty()).then_some(ListChangedCapability {
            list_changed: Some(true),
        }),
        prompts: (!router.prompts.is_empty()).then_some(ListChangedCapability {
            list_changed: Some(true),
        }),
        resources: has_resources.then_some(ResourcesCapability {
            list_changed: Some(true),
            subscribe: Some(true),
        }),
        completions: crate::completion::anything_completes(router).then(Default::default),
        ..Default::default()
    }
}

pub(crate) fn result(server: &Server, router: &Router) -> DiscoverResult {
    let config = server.config();
    DiscoverResult {
        supported_versions: SUPPORTED_VERSIONS.iter().map(|v| (*v).to_owned()).collect(),
        capabilities: capabilities(server, router),
        instructions: config.instructions.clone(),
        ttl_ms: config.discover_cache.ttl_ms,
        cache_scope: config.discover_cache.scope,
        ..Default::default()
    }
}

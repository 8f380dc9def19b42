//! `server/discover`: supported versions, capabilities derived from what is
//! registered, instructions, and caching hints.

use crate::meta::SUPPORTED_VERSIONS;
use crate::protocol::DiscoverResult;
use crate::server::{Catalog, Server};

pub(crate) fn result(server: &Server, catalog: &Catalog) -> DiscoverResult {
    let config = server.config();
    DiscoverResult {
        supported_versions: SUPPORTED_VERSIONS.iter().map(|v| (*v).to_owned()).collect(),
        capabilities: catalog.capabilities(),
        instructions: config.instructions.clone(),
        ttl_ms: config.discover_cache.ttl_ms,
        cache_scope: config.discover_cache.scope,
        ..Default::default()
    }
}

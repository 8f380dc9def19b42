//! The Skills extension's methods: `skills/list` (pages of whole skills),
//! `skills/get`, and `resources/directory/read` (a skill's folders). The
//! skills' files are served by `resources/read` as the catalog's
//! resources. What a caller is shown and reaches is decided as for a
//! resource: a skill is shown when its `SKILL.md` is, and needs its scopes.

use super::visible::{Lister, Sight};
use super::Head;
use crate::auth::AccessToken;
use crate::error::McpError;
use crate::protocol::CacheScope;
use crate::server::{Catalog, Server, SkillPart};
use serde::Deserialize;
use serde_json::value::RawValue;

/// `skills/list`: one page of the skills the caller is shown, a skill
/// never split across pages.
pub(crate) fn list(
    server: &Server,
    catalog: &Catalog,
    lists: &Lister<'_, '_>,
    params: Option<&RawValue>,
) -> Result<Vec<u8>, McpError> {
    lists.page(server, "skills", &catalog.skills_json, &catalog.skills, params)
}

/// `skills/get`: the entry of the skill whose `SKILL.md` is `uri`; -32602
/// for a URI no skill shown to the caller has; 403 without its scopes.
pub(crate) fn get(
    server: &Server,
    catalog: &Catalog,
    head: &Head<'_>,
    sight: &Sight<'_>,
    lists: &Lister<'_, '_>,
    token: Option<&AccessToken>,
) -> Result<Vec<u8>, McpError> {
    let uri = Head::required(head.uri, "uri")?;
    let part = catalog
        .skill(&uri)
        .filter(|part| sight.skill(part))
        .ok_or_else(|| unknown_skill(&uri))?;
    super::access::entry(token, &part.skill.scopes)?;
    let config = server.config();
    let scope = if lists.private() || !part.skill.scopes.is_empty() {
        CacheScope::Private
    } else {
        config.list_cache.scope
    };
    let scope = match scope {
        CacheScope::Public => "public",
        CacheScope::Private => "private",
    };
    let mut out = Vec::with_capacity(part.skill.entry_json.len() + 128);
    out.extend_from_slice(b"{\"resultType\":\"complete\",\"skill\":");
    out.extend_from_slice(part.skill.entry_json.as_bytes());
    out.extend_from_slice(format!(",\"ttlMs\":{},\"cacheScope\":\"{scope}\"}}", config.list_cache.ttl_ms).as_bytes());
    super::append_meta(server, &mut out);
    Ok(out)
}

fn unknown_skill(uri: &str) -> McpError {
    McpError::invalid_params(format!("No skill is served at {uri}")).with_data(serde_json::json!({ "uri": uri }))
}

#[derive(Deserialize)]
struct DirectoryParams {
    uri: String,
    #[serde(default)]
    cursor: Option<String>,
}

/// `resources/directory/read`: one page of the direct children of a
/// folder of the skills the caller is shown (files as resources,
/// subfolders as `inode/directory`); -32602 for a URI that is not such a
/// folder; 403 when the token reaches none of the skills it belongs to.
pub(crate) fn directory(
    server: &Server,
    catalog: &Catalog,
    params: Option<&RawValue>,
    sight: &Sight<'_>,
    lists: &Lister<'_, '_>,
    token: Option<&AccessToken>,
) -> Result<Vec<u8>, McpError> {
    let p: DirectoryParams = crate::jsonrpc::parse_params(params)?;
    let dir = p.uri.as_str();
    let holding: Vec<&SkillPart> = catalog
        .skills
        .iter()
        .filter(|part| sight.skill(part) && crate::skills::contains(&part.skill, dir))
        .collect();
    let Some(first) = holding.first() else {
        return Err(McpError::invalid_params(format!("{dir} is not a directory resource"))
            .with_data(serde_json::json!({ "uri": dir })));
    };
    let reached: Vec<&SkillPart> = holding
        .iter()
        .copied()
        .filter(|part| super::access::entry(token, &part.skill.scopes).is_ok())
        .collect();
    if reached.is_empty() {
        super::access::entry(token, &first.skill.scopes)?;
    }
    // Where lists hide what the token does not reach, so does a folder.
    let shown = if lists.private() { &reached } else { &holding };
    let children = crate::skills::children(shown.iter().map(|part| &*part.skill), dir);
    let private = lists.private() || shown.iter().any(|part| !part.skill.scopes.is_empty());
    super::list::write_page(server, "resources", &children, p.cursor.as_deref(), private)
}

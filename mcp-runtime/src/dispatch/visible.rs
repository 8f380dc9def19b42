//! Visibility in the dispatcher: what the caller of one request is shown.
//! A hidden item (its own predicate or a server hook said no) is absent:
//! left out of its list (pages are cut from what is shown), and a call,
//! read, get or completion of it is answered like one of an unknown item,
//! by the same code that answers those. Without any predicate, [`Sight`]
//! holds nothing, asks nothing, and lists stay borrowed pre-serialized items.
//!
//! MCP Apps are decided here too: when the catalog has app items, a caller
//! that does not render apps is listed the tools without `_meta.ui`, no
//! app-only tool and no app resource; it may still call and read them all.

use super::Scope;
use crate::auth::{reaches, AccessToken};
use crate::error::McpError;
use crate::meta::RequestMeta;
use crate::protocol::{ClientCapabilities, Implementation};
use crate::server::entry::{PromptEntry, ResourceEntry, ToolEntry};
use crate::server::visibility::{sees, Hook, Item, Viewer};
use crate::server::{Catalog, RequestScope, Server, SkillPart};
use serde_json::value::RawValue;

/// Who a request's caller is, as far as what it is shown goes.
struct Caller<'a> {
    identity: Option<&'a AccessToken>,
    principal: Option<&'a str>,
    headers: &'a crate::headers::HeaderFacts,
    capabilities: &'a ClientCapabilities,
    client_info: Option<&'a Implementation>,
    version: &'a str,
}

/// What one request's caller may see: nothing to ask (`viewer` none) unless
/// the server has a hook or an item a predicate.
pub(crate) struct Sight<'a> {
    viewer: Option<Viewer<'a>>,
    hooks: &'a [Hook],
    /// Whether the caller renders apps, when the catalog has app items.
    apps: Option<bool>,
}

impl<'a> Sight<'a> {
    /// The sight of a request with validated (or, for a legacy session,
    /// synthesized) metadata.
    pub(crate) fn new(server: &'a Server, catalog: &Catalog, scope: &'a Scope, meta: &'a RequestMeta) -> Self {
        Self::of(
            server,
            catalog,
            scope,
            &meta.client_capabilities,
            meta.client_info.as_deref(),
            &meta.protocol_version,
        )
    }

    /// The sight of a request whose metadata is the legacy session's.
    pub(crate) fn of_session(
        server: &'a Server,
        catalog: &Catalog,
        scope: &'a Scope,
        session: &'a crate::session::Session,
    ) -> Self {
        Self::of(
            server,
            catalog,
            scope,
            &session.capabilities,
            session.client_info.as_deref(),
            session.version,
        )
    }

    fn of(
        server: &'a Server,
        catalog: &Catalog,
        scope: &'a Scope,
        capabilities: &'a ClientCapabilities,
        client_info: Option<&'a Implementation>,
        version: &'a str,
    ) -> Self {
        let caller = Caller {
            identity: scope.identity.as_deref(),
            principal: scope.principal.as_deref(),
            headers: &scope.headers,
            capabilities,
            client_info,
            version,
        };
        Self::of_caller(server, catalog, caller)
    }

    /// The sight of the request a handler's context serves (a listen
    /// stream's, at each list change).
    pub(crate) fn of_request(server: &'a Server, catalog: &Catalog, request: &'a RequestScope) -> Self {
        let caller = Caller {
            identity: request.identity.as_deref(),
            principal: request.principal.as_deref(),
            headers: &request.headers,
            capabilities: &request.meta.client_capabilities,
            client_info: request.meta.client_info.as_deref(),
            version: &request.meta.protocol_version,
        };
        Self::of_caller(server, catalog, caller)
    }

    fn of_caller(server: &'a Server, catalog: &Catalog, caller: Caller<'a>) -> Self {
        let Caller {
            identity,
            principal,
            headers,
            capabilities,
            client_info,
            version,
        } = caller;
        let hooks = server.inner.visibility.as_slice();
        let apps = catalog
            .has_apps
            .then(|| crate::server::RendersApps::declared_in(capabilities).get());
        if hooks.is_empty() && !catalog.has_predicates {
            return Sight {
                viewer: None,
                hooks,
                apps,
            };
        }
        let mut viewer = Viewer::new(capabilities).with_protocol_version(version);
        if let Some(token) = identity {
            viewer = viewer.with_token(token);
        }
        if let Some(principal) = principal {
            viewer = viewer.with_principal(principal);
        }
        if let Some(headers) = headers.map() {
            viewer = viewer.with_headers(headers);
        }
        if let Some(info) = client_info {
            viewer = viewer.with_client_info(info);
        }
        Sight {
            viewer: Some(viewer),
            hooks,
            apps,
        }
    }

    /// Whether anything is asked: some predicate is configured, so what is
    /// shown may differ by caller.
    pub(crate) fn on(&self) -> bool {
        self.viewer.is_some()
    }

    /// Whether what is listed may differ by caller: a predicate, or app
    /// items that callers who do not render apps are not listed.
    pub(crate) fn varies(&self) -> bool {
        self.on() || self.apps.is_some()
    }

    /// Whether the caller is listed the tools without their `_meta.ui`:
    /// the catalog has apps and the caller does not render them.
    pub(crate) fn plain(&self) -> bool {
        self.apps == Some(false)
    }

    /// Which tools' listing this caller is listed.
    pub(crate) fn tools_listing(&self) -> crate::server::Listing {
        match self.plain() {
            true => crate::server::Listing::ToolsPlain,
            false => crate::server::Listing::Tools,
        }
    }

    /// The pre-serialized tools as this caller is listed them.
    pub(crate) fn tools_json<'c>(&self, catalog: &'c Catalog) -> &'c [String] {
        if self.plain() {
            catalog.tools_plain_json()
        } else {
            catalog.tools_json()
        }
    }

    fn sees(&self, item: Item<'_>, own: Option<&crate::server::visibility::Predicate>) -> bool {
        match &self.viewer {
            None => true,
            Some(viewer) => sees(viewer, item, own, self.hooks),
        }
    }

    pub(crate) fn tool(&self, entry: &ToolEntry) -> bool {
        self.sees(Item::Tool(entry.name()), entry.visible.as_ref())
    }

    pub(crate) fn prompt(&self, entry: &PromptEntry) -> bool {
        self.sees(Item::Prompt(&entry.prompt.name), entry.visible.as_ref())
    }

    pub(crate) fn resource(&self, entry: &ResourceEntry) -> bool {
        let item = match entry.template {
            Some(_) => Item::ResourceTemplate(&entry.uri),
            None => Item::Resource(&entry.uri),
        };
        self.sees(item, entry.visible.as_ref())
    }

    /// Whether a skill is shown: asked as its `SKILL.md` resource, so that
    /// the hooks that hide that resource hide the skill.
    pub(crate) fn skill(&self, part: &SkillPart) -> bool {
        self.sees(Item::Resource(&part.skill.uri), part.visible.as_ref())
    }

    /// Whether the tool `name` is shown: true for an unknown name too (the
    /// call reports it), false for a hidden one (the call reports it unknown).
    pub(crate) fn tool_named(&self, catalog: &Catalog, name: &str) -> bool {
        !self.on() || catalog.tool_at(name).is_none_or(|i| self.tool(&catalog.tools[i]))
    }

    /// Whether the prompt `name` is shown (as [`tool_named`](Self::tool_named)).
    pub(crate) fn prompt_named(&self, catalog: &Catalog, name: &str) -> bool {
        !self.on() || catalog.prompt_at(name).is_none_or(|i| self.prompt(&catalog.prompts[i]))
    }

    /// The shown resource that serves `uri`, with the variables it binds.
    pub(crate) fn find_resource<'c>(
        &self,
        catalog: &'c Catalog,
        uri: &str,
    ) -> Option<(&'c ResourceEntry, Vec<(String, String)>)> {
        if self.on() {
            catalog.find_resource_where(uri, |e| self.resource(e))
        } else {
            catalog.find_resource(uri)
        }
    }

    /// The URIs of `uris` that only hidden resources serve: a listen stream
    /// agrees to them as to URIs nothing serves, and sends no update of them.
    pub(crate) fn hidden_uris(&self, catalog: &Catalog, uris: &[String]) -> Vec<String> {
        if !self.on() {
            return Vec::new();
        }
        uris.iter()
            .filter(|uri| catalog.find_resource(uri).is_some() && self.find_resource(catalog, uri).is_none())
            .cloned()
            .collect()
    }

    /// The URIs of `uris` that `token` may not read: those whose resource
    /// the caller is shown (the one a read would serve, not one hidden
    /// from it) asks for scopes the token lacks.
    pub(crate) fn unreadable_uris(
        &self,
        catalog: &Catalog,
        uris: &[String],
        token: Option<&crate::auth::AccessToken>,
    ) -> Vec<String> {
        if token.is_none() {
            return Vec::new();
        }
        uris.iter()
            .filter(|uri| match self.on() {
                true => self
                    .find_resource(catalog, uri)
                    .is_some_and(|(entry, _)| super::access::entry(token, &entry.scopes).is_err()),
                false => super::access::resource(catalog, uri, token).is_err(),
            })
            .cloned()
            .collect()
    }
}

/// An entry as a list sees it.
pub(crate) trait Listed {
    /// The OAuth scopes a caller needs.
    fn scopes(&self) -> &[String];
    /// Whether the caller is shown it.
    fn shown(&self, sight: &Sight<'_>) -> bool;
}

impl Listed for ToolEntry {
    fn scopes(&self) -> &[String] {
        &self.scopes
    }
    fn shown(&self, sight: &Sight<'_>) -> bool {
        // An app-only tool is not listed to a caller that does not render apps.
        sight.tool(self) && !(sight.plain() && self.app_only())
    }
}

impl Listed for PromptEntry {
    fn scopes(&self) -> &[String] {
        &self.scopes
    }
    fn shown(&self, sight: &Sight<'_>) -> bool {
        sight.prompt(self)
    }
}

impl Listed for ResourceEntry {
    fn scopes(&self) -> &[String] {
        &self.scopes
    }
    fn shown(&self, sight: &Sight<'_>) -> bool {
        // An app is listed only to a caller that renders apps.
        sight.resource(self) && !(sight.plain() && self.app)
    }
}

impl Listed for SkillPart {
    fn scopes(&self) -> &[String] {
        &self.skill.scopes
    }
    fn shown(&self, sight: &Sight<'_>) -> bool {
        sight.skill(self)
    }
}

/// How a list request's caller is served its pages.
pub(crate) struct Lister<'s, 'a> {
    sight: &'s Sight<'a>,
    /// The caller's token, when lists leave out what its scopes do not reach.
    token: Option<&'s AccessToken>,
    /// Whether what is listed differs by caller (`cacheScope: "private"`).
    private: bool,
}

impl<'s, 'a> Lister<'s, 'a> {
    /// `hide`: whether the endpoint leaves out what `token` does not reach.
    pub(crate) fn new(sight: &'s Sight<'a>, catalog: &Catalog, token: Option<&'s AccessToken>, hide: bool) -> Self {
        let token = token.filter(|_| hide && catalog.has_scopes);
        Lister {
            sight,
            token,
            private: sight.varies() || token.is_some(),
        }
    }

    /// Whether what is listed differs by caller (`cacheScope: "private"`).
    pub(crate) fn private(&self) -> bool {
        self.private
    }

    /// Adds to `hasher` the hashes of the items the caller is shown, in
    /// order (`hashes[i]` is `entries[i]`'s, [`Catalog::hashes`]): what it
    /// makes changes when what the caller would be listed changes.
    pub(crate) fn digest<E: Listed>(&self, hasher: &mut impl std::hash::Hasher, hashes: &[u64], entries: &[E]) {
        let mut shown = 0usize;
        for (hash, entry) in hashes.iter().zip(entries) {
            if !self.private || (reaches(self.token, entry.scopes()) && entry.shown(self.sight)) {
                hasher.write_u64(*hash);
                shown = shown.saturating_add(1);
            }
        }
        // Where one listing ends and the next begins.
        hasher.write_usize(shown);
    }

    /// The page `params` names of the items (`items[i]` is `entries[i]`
    /// serialized) the caller is shown: the catalog's own slice when
    /// nothing filters, else the shown ones, borrowed.
    pub(crate) fn page<E: Listed>(
        &self,
        server: &Server,
        key: &str,
        items: &[String],
        entries: &[E],
        params: Option<&RawValue>,
    ) -> Result<Vec<u8>, McpError> {
        if !self.private {
            return super::list::list_page(server, key, items, params, false);
        }
        let shown: Vec<&str> = items
            .iter()
            .zip(entries)
            .filter(|(_, e)| reaches(self.token, e.scopes()) && e.shown(self.sight))
            .map(|(item, _)| item.as_str())
            .collect();
        super::list::list_page(server, key, &shown, params, true)
    }
}

/// `resources/subscribe` of a legacy session, before the session records
/// it: a URI only hidden resources serve is refused like one nothing
/// serves; one a shown resource serves needs the token's scopes for it.
pub(crate) fn subscribe(
    server: &Server,
    scope: &Scope,
    session: &crate::session::Session,
    uri: &str,
) -> Result<(), McpError> {
    let token = scope.identity.as_deref();
    let catalog = server.catalog();
    let sight = Sight::of_session(server, &catalog, scope, session);
    if !sight.on() {
        return super::access::resource(&catalog, uri, token);
    }
    match sight.find_resource(&catalog, uri) {
        Some((entry, _)) => super::access::entry(token, &entry.scopes),
        None if catalog.find_resource(uri).is_some() => {
            server.inner.streams.limits().check_uri(uri)?;
            Err(McpError::resource_not_found(uri))
        }
        // Nothing serves it: the session's own bookkeeping says so.
        None => Ok(()),
    }
}

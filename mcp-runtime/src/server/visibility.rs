//! Visibility by predicate: whether a tool, prompt, resource or template
//! exists for the caller of one request. An item's own predicate
//! (`#[tool(visible_if = f)]`, [`ToolEntry::visible_if`](crate::ToolEntry::visible_if))
//! and the server's hooks ([`ServerBuilder::visible_if`](crate::ServerBuilder::visible_if))
//! all have to say yes; a hidden item is left out of lists and answered as
//! an unknown one. The dispatcher asks; this module only says what the
//! predicates are and how one is asked (a panic hides the item).

use crate::auth::AccessToken;
use crate::protocol::{ClientCapabilities, ClientCapability, Implementation};
use std::sync::Arc;

/// The caller of one request, as a visibility predicate sees it: the
/// verified access token (over an authorized HTTP endpoint), the principal,
/// the client capabilities the request declared (2026-07-28: its `_meta`;
/// a 2025-11-25 session: its `initialize`), the client's self-description,
/// and the HTTP request's headers (without `Authorization`).
///
/// ```
/// use mcp_runtime::protocol::{ClientCapabilities, ClientCapability};
/// use mcp_runtime::Viewer;
///
/// /// Shown to clients that can answer a form, and to staff.
/// fn forms_or_staff(viewer: &Viewer<'_>) -> bool {
///     viewer.declares(ClientCapability::ElicitationForm)
///         || viewer.has_scope("staff")
///         || viewer.header("x-tier") == Some("staff")
/// }
///
/// /// Sends the survey.
/// #[mcp_runtime::tool(visible_if = forms_or_staff)]
/// fn survey() -> &'static str {
///     "sent"
/// }
///
/// let nothing = ClientCapabilities::default();
/// assert!(!forms_or_staff(&Viewer::new(&nothing)));
/// let mut headers = http::HeaderMap::new();
/// headers.insert("x-tier", http::HeaderValue::from_static("staff"));
/// assert!(forms_or_staff(&Viewer::new(&nothing).with_headers(&headers)));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Viewer<'a> {
    token: Option<&'a AccessToken>,
    principal: Option<&'a str>,
    capabilities: &'a ClientCapabilities,
    client_info: Option<&'a Implementation>,
    headers: Option<&'a http::HeaderMap>,
    protocol_version: &'a str,
}

impl<'a> Viewer<'a> {
    /// A caller that declared `capabilities` and nothing else is known of:
    /// no token, no principal, no headers (stdio), the newest protocol
    /// revision. For testing a predicate; the `with_*` methods add the rest.
    pub fn new(capabilities: &'a ClientCapabilities) -> Self {
        Viewer {
            token: None,
            principal: None,
            capabilities,
            client_info: None,
            headers: None,
            protocol_version: crate::protocol::LATEST_PROTOCOL_VERSION,
        }
    }

    /// With a verified token (its subject becomes the principal).
    pub fn with_token(mut self, token: &'a AccessToken) -> Self {
        self.token = Some(token);
        self.principal = Some(&token.subject);
        self
    }

    /// With a principal (one the transport authenticated without a token).
    pub fn with_principal(mut self, principal: &'a str) -> Self {
        self.principal = Some(principal);
        self
    }

    /// With the HTTP request's headers.
    pub fn with_headers(mut self, headers: &'a http::HeaderMap) -> Self {
        self.headers = Some(headers);
        self
    }

    /// With the client's self-description.
    pub fn with_client_info(mut self, info: &'a Implementation) -> Self {
        self.client_info = Some(info);
        self
    }

    /// With the protocol revision the request speaks.
    pub fn with_protocol_version(mut self, version: &'a str) -> Self {
        self.protocol_version = version;
        self
    }

    /// The verified access token, if the request was authorized.
    pub fn token(&self) -> Option<&'a AccessToken> {
        self.token
    }

    /// The token's subject, if the request was authorized.
    pub fn subject(&self) -> Option<&'a str> {
        self.token.map(|t| t.subject.as_str())
    }

    /// The authenticated principal: the token's subject, or the one the
    /// transport names (a legacy session's `principal_header`).
    pub fn principal(&self) -> Option<&'a str> {
        self.principal
    }

    /// Whether the request was authorized with `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.token.is_some_and(|t| t.has_scope(scope))
    }

    /// The capabilities the client declared.
    pub fn client_capabilities(&self) -> &'a ClientCapabilities {
        self.capabilities
    }

    /// Whether the client declared `capability`.
    pub fn declares(&self, capability: ClientCapability) -> bool {
        capability.is_declared_in(self.capabilities)
    }

    /// Whether the client renders MCP Apps (see [`RendersApps`](crate::RendersApps)).
    pub fn renders_apps(&self) -> bool {
        super::apps::renders_apps(self.capabilities)
    }

    /// The client's self-description, if it sent one. Self-reported: do not
    /// hide anything secret behind it.
    pub fn client_info(&self) -> Option<&'a Implementation> {
        self.client_info
    }

    /// The HTTP request's headers (none on stdio).
    pub fn headers(&self) -> Option<&'a http::HeaderMap> {
        self.headers
    }

    /// One header's value as text, if it was sent and is visible ASCII.
    pub fn header(&self, name: &str) -> Option<&'a str> {
        self.headers?.get(name)?.to_str().ok()
    }

    /// The protocol revision the request speaks (`2025-11-25` for a legacy session).
    pub fn protocol_version(&self) -> &'a str {
        self.protocol_version
    }
}

/// The item a server-wide visibility hook is asked about: its kind, and its
/// name (tools, prompts) or URI (resources; the template of a template).
///
/// ```
/// use mcp_runtime::Item;
/// let item = Item::Tool("admin_reset");
/// assert_eq!(item.name(), "admin_reset");
/// assert!(matches!(item, Item::Tool(name) if name.starts_with("admin_")));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Item<'a> {
    /// A tool, by name.
    Tool(&'a str),
    /// A prompt, by name.
    Prompt(&'a str),
    /// A static resource, by URI.
    Resource(&'a str),
    /// A resource template, by its URI template.
    ResourceTemplate(&'a str),
}

impl<'a> Item<'a> {
    /// The name or URI.
    pub fn name(&self) -> &'a str {
        match *self {
            Item::Tool(n) | Item::Prompt(n) | Item::Resource(n) | Item::ResourceTemplate(n) => n,
        }
    }
}

/// The predicate `#[tool(visible_if = f)]` (and `#[prompt]`, `#[resource]`) names.
pub type VisibleIf = fn(&Viewer<'_>) -> bool;

/// An item's own predicate.
pub(crate) type Predicate = Arc<dyn Fn(&Viewer<'_>) -> bool + Send + Sync>;

/// A server-wide hook.
pub(crate) type Hook = Arc<dyn Fn(&Viewer<'_>, Item<'_>) -> bool + Send + Sync>;

/// Whether `item` exists for `viewer`: its own predicate and every hook say
/// yes. A predicate that panics hides the item (and is logged).
pub(crate) fn sees(viewer: &Viewer<'_>, item: Item<'_>, own: Option<&Predicate>, hooks: &[Hook]) -> bool {
    let ask = || own.is_none_or(|p| p(viewer)) && hooks.iter().all(|h| h(viewer, item));
    match crate::panic::call_caught(ask) {
        Ok(shown) => shown,
        Err(why) => {
            tracing::error!(?item, "a visibility predicate panicked (the item is hidden): {why}");
            false
        }
    }
}

/// `own`, then a mounted server's `hooks` asked about the item under the
/// name it has there (`item(name)`): what a mounted entry carries.
pub(crate) fn with_hooks(
    own: Option<Predicate>,
    hooks: &[Hook],
    item: for<'n> fn(&'n str) -> Item<'n>,
    name: String,
) -> Option<Predicate> {
    if hooks.is_empty() {
        return own;
    }
    let hooks = hooks.to_vec();
    Some(Arc::new(move |viewer: &Viewer<'_>| {
        own.as_ref().is_none_or(|p| p(viewer)) && hooks.iter().all(|h| h(viewer, item(&name)))
    }))
}

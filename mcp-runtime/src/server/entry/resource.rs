//! A resource or template as the catalog serves it: the static descriptor
//! `#[resource]` registers, its completers, and the entry built from it (or
//! by hand, at run time).

use crate::error::McpError;
use crate::mrtr::Outcome;
use crate::protocol::{CacheScope, Resource, ResourceContents, ResourceTemplate, UiResourceMeta, APP_MIME_TYPE};
use crate::resources::{IntoResourceContents, UriTemplate};
use crate::server::visibility::{Predicate, Viewer, VisibleIf};
use crate::server::Context;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// The future a resource handler returns.
pub type ResourceFuture = Pin<Box<dyn Future<Output = Result<Outcome<Vec<ResourceContents>>, McpError>> + Send>>;

/// The erased read of a resource: the requested URI, the template
/// variables it bound (empty for a static resource), and the context.
pub type ResourceHandler = Arc<dyn Fn(&str, &[(String, String)], Context) -> ResourceFuture + Send + Sync>;

/// A completion function for a template variable or prompt argument: the
/// partial value and the other arguments already given → candidates.
pub type CompleteFn = fn(&str, &serde_json::Map<String, serde_json::Value>) -> Vec<String>;

/// How a parameter completes.
#[derive(Debug, Clone, Copy)]
pub struct CompleterDef {
    /// The variable or argument name.
    pub name: &'static str,
    /// A `#[complete(with = f)]` function.
    pub custom: Option<CompleteFn>,
    /// The values its type enumerates (computed once at start-up).
    pub values: fn() -> Vec<String>,
}

/// The static descriptor of a `#[resource]` function.
#[derive(Debug)]
pub struct ResourceDef {
    /// `uri` (static) or `uri_template` (template).
    pub uri: &'static str,
    /// Whether `uri` is an RFC 6570 template.
    pub is_template: bool,
    /// The resource's name.
    pub name: &'static str,
    /// Display title.
    pub title: Option<&'static str>,
    /// Description (the doc comment unless overridden).
    pub description: Option<&'static str>,
    /// MIME type.
    pub mime_type: Option<&'static str>,
    /// `ttlMs` of reads.
    pub ttl_ms: u64,
    /// `cacheScope` of reads.
    pub cache_scope: CacheScope,
    /// The erased read.
    pub read: fn(&str, &[(String, String)], Context) -> ResourceFuture,
    /// Template variables' completion.
    pub completers: &'static [CompleterDef],
    /// The OAuth scopes a caller needs (`#[resource(scopes(..))]`).
    pub scopes: &'static [&'static str],
    /// Whether the caller sees the resource (`#[resource(visible_if = f)]`).
    pub visible_if: Option<VisibleIf>,
    /// An MCP Apps view (`#[resource(uri = "ui://..", app(..))]`).
    pub app: Option<&'static crate::server::AppDef>,
    /// Where the function is defined.
    pub location: &'static str,
}

/// Implemented by the type-namespace twin of each `#[resource]` function.
pub trait RegisteredResource {
    /// The static descriptor.
    const DEF: &'static ResourceDef;
}

/// A resource or template as the router serves it.
#[derive(Clone)]
pub struct ResourceEntry {
    pub(crate) uri: String,
    pub(crate) template: Option<UriTemplate>,
    pub(crate) listing: serde_json::Value,
    pub(crate) ttl_ms: u64,
    pub(crate) cache_scope: CacheScope,
    pub(crate) handler: ResourceHandler,
    pub(crate) completers: Vec<Completer>,
    /// The OAuth scopes a caller needs.
    pub(crate) scopes: Vec<String>,
    /// Whether the caller sees the resource, when it is not everyone.
    pub(crate) visible: Option<Predicate>,
    /// Whether it is an MCP Apps view (listed only to callers that render apps).
    pub(crate) app: bool,
    pub(crate) location: &'static str,
}

/// Completions answered elsewhere (a proxied server's): the params of
/// `completion/complete` in, the `completion` object of its result out.
pub(crate) type CompleteRelay = Arc<
    dyn Fn(serde_json::Value) -> Pin<Box<dyn Future<Output = Result<serde_json::Value, McpError>> + Send>>
        + Send
        + Sync,
>;

/// A resolved completer.
#[derive(Clone)]
pub(crate) struct Completer {
    /// The argument or variable it completes (`*`: every one, for a relay).
    pub name: String,
    pub custom: Option<CompleteFn>,
    pub values: Vec<String>,
    /// Where every argument's completions come from, if not from here.
    pub relay: Option<CompleteRelay>,
}

impl std::fmt::Debug for Completer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Completer")
            .field("name", &self.name)
            .field("values", &self.values)
            .field("relay", &self.relay.is_some())
            .finish_non_exhaustive()
    }
}

impl Completer {
    pub(crate) fn from_defs(defs: &[CompleterDef]) -> Vec<Completer> {
        defs.iter()
            .map(|d| Completer {
                name: d.name.to_owned(),
                custom: d.custom,
                values: (d.values)(),
                relay: None,
            })
            .collect()
    }

    pub(crate) fn completes(&self) -> bool {
        self.custom.is_some() || !self.values.is_empty() || self.relay.is_some()
    }

    /// A completer that asks `relay` for every argument's completions.
    #[cfg(feature = "client")]
    pub(crate) fn relayed(relay: CompleteRelay) -> Completer {
        Completer {
            name: "*".into(),
            custom: None,
            values: Vec::new(),
            relay: Some(relay),
        }
    }
}

impl std::fmt::Debug for ResourceEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceEntry")
            .field("uri", &self.uri)
            .field("location", &self.location)
            .finish()
    }
}

impl ResourceEntry {
    /// The entry of a registered `#[resource]` function.
    pub fn from_def(def: &'static ResourceDef) -> Result<Self, String> {
        let read = def.read;
        let template = if def.is_template {
            Some(UriTemplate::parse(def.uri)?)
        } else {
            None
        };
        let listing = if def.is_template {
            serde_json::to_value(ResourceTemplate {
                uri_template: def.uri.to_owned(),
                name: def.name.to_owned(),
                title: def.title.map(str::to_owned),
                description: def.description.map(str::to_owned),
                mime_type: def.mime_type.map(str::to_owned),
                ..Default::default()
            })
        } else {
            serde_json::to_value(Resource {
                uri: def.uri.to_owned(),
                name: def.name.to_owned(),
                title: def.title.map(str::to_owned),
                description: def.description.map(str::to_owned),
                mime_type: def.mime_type.map(str::to_owned),
                ..Default::default()
            })
        }
        .map_err(|e| e.to_string())?;
        let entry = ResourceEntry {
            uri: def.uri.to_owned(),
            template,
            listing,
            ttl_ms: def.ttl_ms,
            cache_scope: def.cache_scope,
            handler: Arc::new(move |uri, vars, ctx| read(uri, vars, ctx)),
            completers: Completer::from_defs(def.completers),
            scopes: def.scopes.iter().map(|s| (*s).to_owned()).collect(),
            visible: def.visible_if.map(|f| Arc::new(f) as Predicate),
            app: false,
            location: def.location,
        };
        Ok(match def.app {
            Some(app) => entry.app(app.to_meta()),
            None => entry,
        })
    }

    /// A static resource defined at run time, read by `handler`.
    pub fn dynamic<F, Fut, R>(resource: Resource, handler: F) -> Self
    where
        F: Fn(String, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoResourceContents,
    {
        let listing = serde_json::to_value(&resource).unwrap_or_default();
        ResourceEntry::run_time(resource.uri, None, listing, resource.mime_type, handler)
    }

    /// An entry defined at run time, read by `handler` with the URI read.
    fn run_time<F, Fut, R>(
        uri: String,
        template: Option<UriTemplate>,
        listing: serde_json::Value,
        mime: Option<String>,
        handler: F,
    ) -> Self
    where
        F: Fn(String, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoResourceContents,
    {
        let handler: ResourceHandler = Arc::new(move |uri: &str, _vars: &[(String, String)], ctx| {
            let fut = handler(uri.to_owned(), ctx);
            let (uri, mime) = (uri.to_owned(), mime.clone());
            Box::pin(async move { fut.await.into_contents(&uri, mime.as_deref()) })
        });
        ResourceEntry {
            uri,
            template,
            listing,
            ttl_ms: 0,
            cache_scope: CacheScope::Private,
            handler,
            completers: Vec::new(),
            scopes: Vec::new(),
            visible: None,
            app: false,
            location: "dynamic",
        }
    }

    /// A resource template defined at run time: a read of a URI it matches
    /// goes to `handler` with the URI. An invalid template is an error.
    pub fn dynamic_template<F, Fut, R>(template: ResourceTemplate, handler: F) -> Result<Self, String>
    where
        F: Fn(String, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoResourceContents,
    {
        let parsed = UriTemplate::parse(&template.uri_template)?;
        let listing = serde_json::to_value(&template).map_err(|e| e.to_string())?;
        let ResourceTemplate {
            uri_template,
            mime_type,
            ..
        } = template;
        Ok(ResourceEntry::run_time(
            uri_template,
            Some(parsed),
            listing,
            mime_type,
            handler,
        ))
    }

    /// The OAuth scopes a caller needs (see [`ToolEntry::scopes`](crate::ToolEntry::scopes)).
    pub fn scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Shows the resource (or template) only to the callers `visible` says
    /// yes to: to the others it is absent from its list, a read of a URI it
    /// would serve is answered as one no resource serves, and a completion
    /// of a template as one of an unknown template (see
    /// [`ToolEntry::visible_if`](crate::ToolEntry::visible_if)).
    ///
    /// ```
    /// use mcp_runtime::{protocol::Resource, ResourceEntry};
    /// let resource: Resource =
    ///     serde_json::from_value(serde_json::json!({"uri": "ops://runbook", "name": "runbook"})).unwrap();
    /// let runbook = ResourceEntry::dynamic(resource, |_uri, _ctx| async { "Step 1: breathe." })
    ///     .visible_if(|viewer| viewer.has_scope("ops"));
    /// # let _ = runbook;
    /// ```
    pub fn visible_if(mut self, visible: impl Fn(&Viewer<'_>) -> bool + Send + Sync + 'static) -> Self {
        self.visible = Some(Arc::new(visible));
        self
    }

    /// Makes the resource an MCP Apps view: its HTML is served as
    /// `text/html;profile=mcp-app`, and `ui` (what its sandbox allows; the
    /// default asks for nothing) is its `_meta.ui`, in `resources/list` and
    /// on each item `resources/read` returns (unless the handler set one).
    /// Its URI must be a static `ui://` URI
    /// ([`BuildError::InvalidApp`](crate::BuildError::InvalidApp)). It is
    /// listed only to callers that render apps; anyone may read it.
    ///
    /// ```
    /// use mcp_runtime::protocol::{Resource, UiCsp, UiResourceMeta};
    /// use mcp_runtime::ResourceEntry;
    /// let resource = Resource { uri: "ui://shop/cart".into(), name: "cart".into(), ..Default::default() };
    /// let cart = ResourceEntry::dynamic(resource, |_uri, _ctx| async { "<!DOCTYPE html><title>Cart</title>" })
    ///     .app(UiResourceMeta {
    ///         csp: Some(UiCsp { connect_domains: Some(vec!["https://api.shop.example".into()]), ..Default::default() }),
    ///         prefers_border: Some(true),
    ///         ..Default::default()
    ///     });
    /// # let _ = cart;
    /// ```
    pub fn app(mut self, ui: UiResourceMeta) -> Self {
        let ui = (ui != UiResourceMeta::default()).then(|| serde_json::to_value(&ui).unwrap_or_default());
        if let Some(listing) = self.listing.as_object_mut() {
            listing.insert("mimeType".to_owned(), APP_MIME_TYPE.into());
            if let Some(ui) = &ui {
                let meta = listing.entry("_meta").or_insert_with(|| serde_json::json!({}));
                if let Some(meta) = meta.as_object_mut() {
                    meta.insert("ui".to_owned(), ui.clone());
                }
            }
        }
        let read = self.handler.clone();
        let ui = Arc::new(ui);
        self.handler = Arc::new(move |uri, vars, ctx| {
            let fut = read(uri, vars, ctx);
            let ui = ui.clone();
            Box::pin(async move {
                Ok(match fut.await? {
                    Outcome::Complete(mut contents) => {
                        contents.iter_mut().for_each(|c| dress(c, ui.as_ref().as_ref()));
                        Outcome::Complete(contents)
                    }
                    asks => asks,
                })
            })
        });
        self.app = true;
        self
    }

    /// The resource's URI, or its template.
    pub fn uri(&self) -> &str {
        &self.uri
    }
}

/// One item an app resource's read returns: the app MIME type, and the
/// view's `_meta.ui` unless the handler gave one.
fn dress(contents: &mut ResourceContents, ui: Option<&serde_json::Value>) {
    let (mime, meta) = match contents {
        ResourceContents::Text(t) => (&mut t.mime_type, &mut t.meta),
        ResourceContents::Blob(b) => (&mut b.mime_type, &mut b.meta),
    };
    *mime = Some(APP_MIME_TYPE.to_owned());
    if let Some(ui) = ui {
        meta.get_or_insert_with(Default::default)
            .entry("ui")
            .or_insert_with(|| ui.clone());
    }
}

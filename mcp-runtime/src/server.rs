//! The server: what it serves (the router), how it describes itself, and the
//! builder that assembles both from the link-time registry and/or by hand.

use crate::error::McpError;
use crate::prompts::PromptEntry;
use crate::protocol::{CacheScope, Implementation};
use crate::resources::ResourceEntry;
use crate::state::StateMap;
use crate::subscriptions::ServerEvent;
use crate::tools::{self, ToolEntry};
use std::collections::HashMap;
use std::sync::{Arc, RwLock};

/// Why a server could not be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BuildError {
    /// Two tools share a name.
    #[error("duplicate tool name `{name}`: defined at {first} and at {second}")]
    DuplicateTool {
        /// The name.
        name: String,
        /// Where the first one is defined.
        first: &'static str,
        /// Where the second one is defined.
        second: &'static str,
    },
    /// A tool name breaks the naming rule.
    #[error("invalid tool name `{0}`: use 1 to 128 characters of A-Za-z0-9_.-")]
    InvalidToolName(String),
    /// A tool's input schema is not an object schema.
    #[error("tool `{0}`: inputSchema must be a JSON object with \"type\": \"object\"")]
    InvalidInputSchema(String),
    /// Two resources (or templates, or prompts) share a URI or name.
    #[error("duplicate {kind} `{name}`: defined at {first} and at {second}")]
    Duplicate {
        /// `resource`, `resource template` or `prompt`.
        kind: &'static str,
        /// The URI or name.
        name: String,
        /// Where the first one is defined.
        first: &'static str,
        /// Where the second one is defined.
        second: &'static str,
    },
    /// An `x-mcp-header` annotation is not allowed where it is.
    #[error("tool `{0}`: {1}")]
    InvalidHeaderParam(String, String),
    /// `MCP_REQUEST_STATE_KEYS` is malformed.
    #[error("{0}")]
    InvalidKeys(String),
    /// A resource template does not parse.
    #[error("resource template: {0}")]
    InvalidTemplate(String),
}

/// Caching hints for one kind of cacheable result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheHint {
    /// `ttlMs`.
    pub ttl_ms: u64,
    /// `cacheScope`.
    pub scope: CacheScope,
}

/// Server-wide settings.
#[derive(Debug, Clone)]
pub struct Config {
    /// `serverInfo` on every result.
    pub info: Implementation,
    /// `instructions` in `server/discover`.
    pub instructions: Option<String>,
    /// Items per page of every list.
    pub page_size: usize,
    /// Caching hints of list results (default 300 000 ms, public).
    pub list_cache: CacheHint,
    /// Caching hints of `server/discover` (default 60 000 ms, public).
    pub discover_cache: CacheHint,
    /// Whether 2025-11-25 clients are served (`initialize`, sessions). Default true.
    pub legacy: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            info: Implementation {
                name: "mcp-server".into(),
                version: "0.0.0".into(),
                ..Default::default()
            },
            instructions: None,
            page_size: 100,
            list_cache: CacheHint {
                ttl_ms: 300_000,
                scope: CacheScope::Public,
            },
            discover_cache: CacheHint {
                ttl_ms: 60_000,
                scope: CacheScope::Public,
            },
            legacy: true,
        }
    }
}

/// What is served, read-only once built: swapped whole when the set changes.
#[derive(Debug, Default, Clone)]
pub(crate) struct Router {
    /// Tools sorted by name (a deterministic list order).
    pub tools: Vec<ToolEntry>,
    /// The serialized JSON of each tool, in the same order.
    pub tools_json: Vec<String>,
    pub tool_index: HashMap<String, usize>,
    /// Static resources sorted by URI.
    pub resources: Vec<ResourceEntry>,
    pub resources_json: Vec<String>,
    pub resource_index: HashMap<String, usize>,
    /// Resource templates sorted by template.
    pub templates: Vec<ResourceEntry>,
    pub templates_json: Vec<String>,
    /// Prompts sorted by name.
    pub prompts: Vec<PromptEntry>,
    pub prompts_json: Vec<String>,
    pub prompt_index: HashMap<String, usize>,
}

fn index_by<T>(
    items: &[T],
    key: impl Fn(&T) -> &str,
    location: impl Fn(&T) -> &'static str,
    kind: &'static str,
) -> Result<HashMap<String, usize>, BuildError> {
    let mut index = HashMap::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        if let Some(prev) = index.insert(key(item).to_owned(), i) {
            let (first, second) = (location(&items[prev]), location(item));
            return Err(if kind == "tool" {
                BuildError::DuplicateTool {
                    name: key(item).to_owned(),
                    first,
                    second,
                }
            } else {
                BuildError::Duplicate {
                    kind,
                    name: key(item).to_owned(),
                    first,
                    second,
                }
            });
        }
    }
    Ok(index)
}

fn to_json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "{}".into())
}

/// What the router is built from.
#[derive(Default, Clone)]
pub(crate) struct Parts {
    pub tools: Vec<ToolEntry>,
    pub resources: Vec<ResourceEntry>,
    pub prompts: Vec<PromptEntry>,
}

impl Router {
    fn build(parts: Parts) -> Result<Router, BuildError> {
        let Parts {
            mut tools,
            resources,
            mut prompts,
        } = parts;
        tools.sort_by(|a, b| a.tool.name.cmp(&b.tool.name));
        for t in &tools {
            if !tools::is_valid_name(&t.tool.name) {
                return Err(BuildError::InvalidToolName(t.tool.name.clone()));
            }
            if t.tool.input_schema.get("type").and_then(|v| v.as_str()) != Some("object") {
                return Err(BuildError::InvalidInputSchema(t.tool.name.clone()));
            }
            crate::headers::check_declared(&t.tool.input_schema)
                .map_err(|why| BuildError::InvalidHeaderParam(t.tool.name.clone(), why))?;
        }
        let tool_index = index_by(&tools, |t| &t.tool.name, |t| t.location, "tool")?;
        let (mut templates, mut statics): (Vec<_>, Vec<_>) = resources.into_iter().partition(|r| r.template.is_some());
        statics.sort_by(|a, b| a.uri.cmp(&b.uri));
        templates.sort_by(|a, b| a.uri.cmp(&b.uri));
        let resource_index = index_by(&statics, |r| &r.uri, |r| r.location, "resource")?;
        index_by(&templates, |r| &r.uri, |r| r.location, "resource template")?;
        prompts.sort_by(|a, b| a.prompt.name.cmp(&b.prompt.name));
        let prompt_index = index_by(&prompts, |p| &p.prompt.name, |p| p.location, "prompt")?;
        Ok(Router {
            tools_json: tools.iter().map(|t| to_json(&t.tool)).collect(),
            tools,
            tool_index,
            resources_json: statics.iter().map(|r| to_json(&r.listing)).collect(),
            resources: statics,
            resource_index,
            templates_json: templates.iter().map(|r| to_json(&r.listing)).collect(),
            templates,
            prompts_json: prompts.iter().map(|p| to_json(&p.prompt)).collect(),
            prompts,
            prompt_index,
        })
    }

    fn parts(&self) -> Parts {
        Parts {
            tools: self.tools.clone(),
            resources: self.resources.iter().chain(&self.templates).cloned().collect(),
            prompts: self.prompts.clone(),
        }
    }
}

pub(crate) struct ServerInner {
    pub config: Config,
    /// `"_meta":{"io.modelcontextprotocol/serverInfo":{...}}`, pre-serialized.
    pub meta_fragment: String,
    pub router: RwLock<Arc<Router>>,
    pub state: StateMap,
    pub events: tokio::sync::broadcast::Sender<ServerEvent>,
    /// Cancelled when the server stops: long-lived streams end.
    pub stopping: crate::context::Cancellation,
    pub sealer: crate::mrtr::seal::Sealer,
    /// No keys were configured: the sealing key is this process's own.
    pub ephemeral_key: bool,
}

/// A built MCP server. Cheap to clone; serve it on any transport.
///
/// ```
/// use mcp_runtime::prelude::*;
///
/// /// Greets someone.
/// #[tool]
/// fn greet(name: String) -> String {
///     format!("Hello, {name}!")
/// }
///
/// let server = Server::builder().name("greeter").version("1.0.0").try_build().unwrap();
/// assert!(server.tool_names().contains(&"greet".to_string()));
/// ```
#[derive(Clone)]
pub struct Server {
    pub(crate) inner: Arc<ServerInner>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server").field("info", &self.inner.config.info).finish()
    }
}

impl Server {
    /// Starts a builder that serves everything in the link-time registry.
    pub fn builder() -> ServerBuilder {
        ServerBuilder::default()
    }

    /// Warns (once per call) if `requestState` is sealed with a key only this
    /// process has: replicas behind a load balancer would reject each
    /// other's rounds.
    pub fn warn_if_ephemeral_key(&self) {
        if self.inner.ephemeral_key {
            tracing::warn!(
                "no requestState keys configured (set {} or ServerBuilder::request_state_keys): \
                 using a key generated for this process; replicas will not share it",
                crate::mrtr::seal::KEYS_ENV
            );
        }
    }

    /// The server's settings.
    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    pub(crate) fn router(&self) -> Arc<Router> {
        match self.inner.router.read() {
            Ok(r) => r.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// The names of the served tools, in list order.
    pub fn tool_names(&self) -> Vec<String> {
        self.router().tools.iter().map(|t| t.tool.name.clone()).collect()
    }

    /// The URIs of the served static resources, in list order.
    pub fn resource_uris(&self) -> Vec<String> {
        self.router().resources.iter().map(|r| r.uri.clone()).collect()
    }

    /// The names of the served prompts, in list order.
    pub fn prompt_names(&self) -> Vec<String> {
        self.router().prompts.iter().map(|p| p.prompt.name.clone()).collect()
    }

    /// Adds a tool at run time (replacing one of the same name) and
    /// announces `notifications/tools/list_changed`.
    pub fn add_tool(&self, entry: ToolEntry) -> Result<(), BuildError> {
        self.update(ServerEvent::ToolsListChanged, |parts| {
            parts.tools.retain(|t| t.tool.name != entry.tool.name);
            parts.tools.push(entry);
            true
        })
        .map(drop)
    }

    /// Removes a tool at run time; returns whether it was there.
    pub fn remove_tool(&self, name: &str) -> Result<bool, BuildError> {
        self.update(ServerEvent::ToolsListChanged, |parts| {
            let before = parts.tools.len();
            parts.tools.retain(|t| t.tool.name != name);
            parts.tools.len() != before
        })
    }

    /// Adds a prompt at run time (replacing one of the same name) and
    /// announces `notifications/prompts/list_changed`.
    pub fn add_prompt(&self, entry: PromptEntry) -> Result<(), BuildError> {
        self.update(ServerEvent::PromptsListChanged, |parts| {
            parts.prompts.retain(|p| p.prompt.name != entry.prompt.name);
            parts.prompts.push(entry);
            true
        })
        .map(drop)
    }

    /// Removes a prompt at run time; returns whether it was there.
    pub fn remove_prompt(&self, name: &str) -> Result<bool, BuildError> {
        self.update(ServerEvent::PromptsListChanged, |parts| {
            let before = parts.prompts.len();
            parts.prompts.retain(|p| p.prompt.name != name);
            parts.prompts.len() != before
        })
    }

    /// Adds a resource or template at run time (replacing one with the same
    /// URI) and announces `notifications/resources/list_changed`.
    pub fn add_resource(&self, entry: ResourceEntry) -> Result<(), BuildError> {
        self.update(ServerEvent::ResourcesListChanged, |parts| {
            parts.resources.retain(|r| r.uri != entry.uri);
            parts.resources.push(entry);
            true
        })
        .map(drop)
    }

    /// Removes a resource or template by URI; returns whether it was there.
    pub fn remove_resource(&self, uri: &str) -> Result<bool, BuildError> {
        self.update(ServerEvent::ResourcesListChanged, |parts| {
            let before = parts.resources.len();
            parts.resources.retain(|r| r.uri != uri);
            parts.resources.len() != before
        })
    }

    fn update(&self, event: ServerEvent, change: impl FnOnce(&mut Parts) -> bool) -> Result<bool, BuildError> {
        let changed = {
            let mut guard = match self.inner.router.write() {
                Ok(g) => g,
                Err(poisoned) => poisoned.into_inner(),
            };
            let mut parts = guard.parts();
            let changed = change(&mut parts);
            if changed {
                *guard = Arc::new(Router::build(parts)?);
            }
            changed
        };
        if changed {
            self.announce(event);
        }
        Ok(changed)
    }
}

/// Assembles a [`Server`].
///
/// By default it serves every `#[tool]` in the binary; [`empty`](Self::empty)
/// starts from nothing instead, for tests and composition.
#[derive(Default)]
pub struct ServerBuilder {
    config: Config,
    explicit: bool,
    only: Option<Vec<String>>,
    parts: Parts,
    state: StateMap,
    state_keys: Option<Vec<[u8; 32]>>,
    state_ttl: Option<std::time::Duration>,
}

impl ServerBuilder {
    /// Starts from no tools at all: only what is added explicitly is served.
    pub fn empty(mut self) -> Self {
        self.explicit = true;
        self
    }

    /// Serves only the registered tools, prompts and resources with these
    /// names (or URIs), plus explicit ones.
    pub fn only_tools<I: IntoIterator<Item = S>, S: Into<String>>(mut self, names: I) -> Self {
        self.only = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Adds a `#[tool]` function by name: `.tool::<my_tool>()`.
    pub fn tool<T: tools::RegisteredTool>(mut self) -> Self {
        self.parts.tools.push(ToolEntry::from_def(T::DEF));
        self
    }

    /// Adds a tool entry (for example one built with [`ToolEntry::dynamic`]).
    pub fn tool_entry(mut self, entry: ToolEntry) -> Self {
        self.parts.tools.push(entry);
        self
    }

    /// Adds a `#[resource]` function by name: `.resource::<my_resource>()`.
    pub fn resource<T: crate::resources::RegisteredResource>(mut self) -> Self {
        match ResourceEntry::from_def(T::DEF) {
            Ok(entry) => self.parts.resources.push(entry),
            Err(e) => tracing::error!("{e}"),
        }
        self
    }

    /// Adds a resource entry (for example one built with [`ResourceEntry::dynamic`]).
    pub fn resource_entry(mut self, entry: ResourceEntry) -> Self {
        self.parts.resources.push(entry);
        self
    }

    /// Adds a `#[prompt]` function by name: `.prompt::<my_prompt>()`.
    pub fn prompt<T: crate::prompts::RegisteredPrompt>(mut self) -> Self {
        self.parts.prompts.push(PromptEntry::from_def(T::DEF));
        self
    }

    /// Adds a prompt entry (for example one built with [`PromptEntry::dynamic`]).
    pub fn prompt_entry(mut self, entry: PromptEntry) -> Self {
        self.parts.prompts.push(entry);
        self
    }

    /// Sets `serverInfo.name` (default: the binary's name with [`crate::main!`]).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.config.info.name = name.into();
        self
    }

    /// Sets `serverInfo.version`.
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.config.info.version = version.into();
        self
    }

    /// Sets the whole `serverInfo`.
    pub fn info(mut self, info: Implementation) -> Self {
        self.config.info = info;
        self
    }

    /// Sets the `instructions` of `server/discover`.
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.config.instructions = Some(text.into());
        self
    }

    /// Sets the page size of every list (minimum 1).
    pub fn page_size(mut self, n: usize) -> Self {
        self.config.page_size = n.max(1);
        self
    }

    /// Sets the caching hints of list results.
    pub fn list_cache(mut self, ttl_ms: u64, scope: CacheScope) -> Self {
        self.config.list_cache = CacheHint { ttl_ms, scope };
        self
    }

    /// Serves only 2026-07-28: `initialize` is answered with an error naming
    /// the supported versions, as the spec recommends.
    pub fn modern_only(mut self) -> Self {
        self.config.legacy = false;
        self
    }

    /// Sets the caching hints of `server/discover`.
    pub fn discover_cache(mut self, ttl_ms: u64, scope: CacheScope) -> Self {
        self.config.discover_cache = CacheHint { ttl_ms, scope };
        self
    }

    /// Sets the keys that seal `requestState` (32 bytes each, newest first;
    /// older keys still open states sealed before a rotation). Without this,
    /// the keys come from `MCP_REQUEST_STATE_KEYS`, else one is generated.
    pub fn request_state_keys(mut self, keys: Vec<[u8; 32]>) -> Self {
        self.state_keys = Some(keys);
        self
    }

    /// Sets how long a sealed `requestState` stays valid (default 5 minutes).
    pub fn request_state_ttl(mut self, ttl: std::time::Duration) -> Self {
        self.state_ttl = Some(ttl);
        self
    }

    /// Registers shared state for the [`State<T>`](crate::State) extractor.
    pub fn state<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.state.insert(value);
        self
    }

    /// Builds the server, or says why it cannot be built (duplicate or
    /// invalid names).
    pub fn try_build(self) -> Result<Server, BuildError> {
        let mut parts = Parts::default();
        let wanted = |name: &str| self.only.as_ref().is_none_or(|only| only.iter().any(|n| n == name));
        if !self.explicit {
            for def in crate::registry::tools() {
                if wanted(def.name) {
                    parts.tools.push(ToolEntry::from_def(def));
                }
            }
            for def in crate::registry::resources() {
                if wanted(def.uri) || wanted(def.name) {
                    parts
                        .resources
                        .push(ResourceEntry::from_def(def).map_err(BuildError::InvalidTemplate)?);
                }
            }
            for def in crate::registry::prompts() {
                if wanted(def.name) {
                    parts.prompts.push(PromptEntry::from_def(def));
                }
            }
        }
        // `.tool::<f>()` of a registered item is not a duplicate of itself.
        for t in self.parts.tools {
            if !parts
                .tools
                .iter()
                .any(|e| e.tool.name == t.tool.name && e.location == t.location)
            {
                parts.tools.push(t);
            }
        }
        for r in self.parts.resources {
            if !parts
                .resources
                .iter()
                .any(|e| e.uri == r.uri && e.location == r.location)
            {
                parts.resources.push(r);
            }
        }
        for p in self.parts.prompts {
            if !parts
                .prompts
                .iter()
                .any(|e| e.prompt.name == p.prompt.name && e.location == p.location)
            {
                parts.prompts.push(p);
            }
        }
        let router = Router::build(parts)?;
        let meta_fragment = format!(
            "\"_meta\":{{\"{}\":{}}}",
            crate::protocol::META_SERVER_INFO,
            serde_json::to_string(&self.config.info).unwrap_or_else(|_| "{}".into())
        );
        let (events, _) = tokio::sync::broadcast::channel(256);
        let keys = match self.state_keys {
            Some(keys) => keys,
            None => match std::env::var(crate::mrtr::seal::KEYS_ENV) {
                Ok(text) => crate::mrtr::seal::parse_keys(&text).map_err(|e| BuildError::InvalidKeys(e.to_string()))?,
                Err(_) => Vec::new(),
            },
        };
        let ephemeral_key = keys.is_empty();
        let sealer =
            crate::mrtr::seal::Sealer::new(&keys, self.state_ttl.unwrap_or(std::time::Duration::from_secs(300)));
        Ok(Server {
            inner: Arc::new(ServerInner {
                config: self.config,
                meta_fragment,
                router: RwLock::new(Arc::new(router)),
                state: self.state,
                events,
                stopping: crate::context::Cancellation::new(),
                sealer,
                ephemeral_key,
            }),
        })
    }

    /// Builds the server; on a [`BuildError`] logs it and exits the process
    /// with status 2 (a start-up error, before any request is served).
    pub fn build(self) -> Server {
        match self.try_build() {
            Ok(server) => server,
            Err(e) => {
                tracing::error!("cannot start the MCP server: {e}");
                eprintln!("error: cannot start the MCP server: {e}");
                std::process::exit(2);
            }
        }
    }
}

impl From<BuildError> for McpError {
    fn from(e: BuildError) -> Self {
        McpError::internal(e.to_string())
    }
}

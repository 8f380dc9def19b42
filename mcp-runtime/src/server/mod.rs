//! The server and everything that refers to it: what it serves (the
//! catalog of entries and the link-time registry they come from), the
//! builder, the handler's view of a request ([`Context`], [`State`]), and the
//! change events it announces. These types refer to each other, so they
//! live together; the layers below know none of them.

mod apps;
mod builder;
mod catalog;
mod context;
pub(crate) mod entry;
mod events;
mod identity;
mod middleware;
pub(crate) mod mount;
mod readiness;
pub(crate) mod registry;
mod skills;
mod state;
pub(crate) mod visibility;

pub use apps::{AppDef, Permission, RendersApps, ToolUiDef};
pub use builder::ServerBuilder;
pub(crate) use catalog::{Catalog, Listing, Parts};
pub(crate) use context::RequestScope;
pub use context::{Context, FromContext};
pub use entry::{PromptEntry, ResourceEntry, ToolEntry};
pub(crate) use events::{encode_event, encode_task, TagMeta};
pub use events::{EventBus, ServerEvent};
pub use identity::{Identity, RequestHeaders};
pub use middleware::{Call, CallKind, CallOutcome, Middleware, MiddlewareFuture};
pub use mount::MountUris;
pub use readiness::Awaiting;
pub(crate) use skills::SkillPart;
pub use state::State;
pub(crate) use state::StateMap;
pub use visibility::{Item, Viewer, VisibleIf};

use crate::cancel::Cancellation;
use crate::error::McpError;
use crate::protocol::{CacheScope, Implementation};
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
    /// A mount prefix is not usable in tool names.
    #[error("mount prefix `{0}`: use 1 to 64 characters of A-Za-z0-9_.-")]
    InvalidMountPrefix(String),
    /// The server mounted under this prefix has middleware or server-wide
    /// limits, which mounting does not carry (they would be dropped), or a
    /// rate store its tools' rates are counted in, which the mounting
    /// server lacks (they would be counted per replica).
    #[error(
        "mount `{0}`: the mounted server has {1}, which mounting does not carry: set it on the mounting \
         server (it applies to every call there, the mounted ones too)"
    )]
    MountedGuards(String, &'static str),
    /// `MCP_REQUEST_STATE_KEYS` is malformed.
    #[error("{0}")]
    InvalidKeys(String),
    /// A resource template does not parse.
    #[error("resource template: {0}")]
    InvalidTemplate(String),
    /// A tool links to a view (`#[tool(ui = "ui://..")]`,
    /// [`ToolEntry::ui`]) that no resource of the server serves.
    #[error("tool `{tool}` links to the view `{uri}`, which no resource of the server serves")]
    UnknownView {
        /// The tool's name.
        tool: String,
        /// The view's URI.
        uri: String,
    },
    /// An app resource or a tool's view breaks a rule of MCP Apps (a URI
    /// that is not a static `ui://` URI).
    #[error("apps: {0}")]
    InvalidApp(String),
    /// A skill of [`ServerBuilder::skills_dir`] breaks a rule.
    #[error("skills: {0}")]
    Skill(#[from] crate::skills::SkillError),
    /// Two skills (of different sources, or nested) list a file at the
    /// same URI with different bytes: one would be served under the other's
    /// digest. Checked when the server is built; a watched folder whose
    /// reload makes such a pair is served (the innermost skill's bytes) and
    /// logged, so that two folders changed in turn both reload.
    #[error("skills: two skills list `{0}` with different bytes")]
    SkillFileConflict(String),
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
    /// How long a tool call may run unless the tool says otherwise
    /// (`#[tool(timeout = "..")]`); `None` (the default): no limit.
    pub tool_timeout: Option<std::time::Duration>,
    /// How long a call to a tool at its `max_concurrency` waits for a place
    /// before it is told the tool is busy (default 5 s).
    pub busy_wait: std::time::Duration,
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
            tool_timeout: None,
            busy_wait: std::time::Duration::from_secs(5),
        }
    }
}

pub(crate) struct ServerInner {
    pub config: Config,
    /// `"_meta":{"io.modelcontextprotocol/serverInfo":{...}}`, pre-serialized.
    pub meta_fragment: String,
    pub catalog: RwLock<Arc<Catalog>>,
    pub state: StateMap,
    pub events: tokio::sync::broadcast::Sender<ServerEvent>,
    /// Carries events between replicas, if configured.
    pub bus: Option<Arc<dyn EventBus>>,
    /// Hooks around handler calls, in order.
    pub middleware: Vec<Arc<dyn Middleware>>,
    /// Server-wide visibility hooks (`ServerBuilder::visible_if`), all asked.
    pub visibility: Vec<visibility::Hook>,
    /// Rate and concurrency limits per caller.
    pub limits: crate::limits::Limits,
    /// The dependencies awaited before the server is ready.
    pub readiness: Arc<readiness::Readiness>,
    /// Cancelled when the server stops: long-lived streams end.
    pub stopping: Cancellation,
    pub sealer: crate::mrtr::seal::Sealer,
    /// No keys were configured: the sealing key is this process's own.
    pub ephemeral_key: bool,
    /// Tasks: the store, the settings, the running count.
    pub tasks: Arc<crate::tasks::TaskRuntime>,
    /// The change-notification streams open, and their bounds.
    pub streams: Arc<crate::session::Streams>,
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
/// let server = Server::builder().name("greeter").version("1.0.0").build().unwrap();
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

    pub(crate) fn catalog(&self) -> Arc<Catalog> {
        match self.inner.catalog.read() {
            Ok(r) => r.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// How many tasks run in this process now.
    pub fn running_tasks(&self) -> usize {
        self.inner.tasks.running()
    }

    /// The names of the served tools, in list order.
    pub fn tool_names(&self) -> Vec<String> {
        self.catalog().tools.iter().map(|t| t.name().to_owned()).collect()
    }

    /// The URIs of the served static resources, in list order.
    pub fn resource_uris(&self) -> Vec<String> {
        self.catalog().resources.iter().map(|r| r.uri.clone()).collect()
    }

    /// The names of the served prompts, in list order.
    pub fn prompt_names(&self) -> Vec<String> {
        self.catalog().prompts.iter().map(|p| p.prompt.name.clone()).collect()
    }

    /// Every OAuth scope a served tool, resource or prompt asks for, each
    /// once, sorted: what a protected endpoint advertises.
    pub fn declared_scopes(&self) -> Vec<String> {
        let catalog = self.catalog();
        let mut scopes: Vec<String> = catalog
            .tools
            .iter()
            .flat_map(|t| &t.scopes)
            .chain(
                catalog
                    .resources
                    .iter()
                    .chain(&catalog.templates)
                    .flat_map(|r| &r.scopes),
            )
            .chain(catalog.prompts.iter().flat_map(|p| &p.scopes))
            .cloned()
            .collect();
        scopes.sort();
        scopes.dedup();
        scopes
    }

    /// Adds a tool at run time (replacing one of the same name) and
    /// announces `notifications/tools/list_changed`.
    pub fn add_tool(&self, entry: ToolEntry) -> Result<(), BuildError> {
        if entry.rate_limit.is_some() {
            self.inner.limits.note_tool_rate();
        }
        self.update(ServerEvent::ToolsListChanged, |parts| {
            parts.tools.retain(|t| t.name() != entry.name());
            parts.tools.push(entry);
            true
        })
        .map(drop)
    }

    /// Marks `what` (an authorization server, a database: named for the
    /// operator) as awaited until the returned handle is dropped: meanwhile
    /// the stand-alone HTTP server's `/readyz` answers 503 naming it. For a
    /// dependency down at start that the server retries rather than exit.
    ///
    /// ```
    /// let server = mcp_runtime::Server::builder().build().unwrap();
    /// let db = server.awaiting("database postgres://db:5432");
    /// assert_eq!(server.awaited(), ["database postgres://db:5432"]);
    /// db.ready();
    /// assert!(server.awaited().is_empty());
    /// ```
    pub fn awaiting(&self, what: impl Into<String>) -> Awaiting {
        Awaiting::new(&self.inner.readiness, what.into())
    }

    /// The dependencies awaited now (see [`awaiting`](Self::awaiting)).
    pub fn awaited(&self) -> Vec<String> {
        self.inner.readiness.awaited()
    }

    /// Removes a tool at run time; returns whether it was there.
    pub fn remove_tool(&self, name: &str) -> Result<bool, BuildError> {
        self.update(ServerEvent::ToolsListChanged, |parts| {
            let before = parts.tools.len();
            parts.tools.retain(|t| t.name() != name);
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
        let changed = self.update_quiet(change)?;
        if changed {
            self.announce(event);
        }
        Ok(changed)
    }

    #[cfg(feature = "client")]
    /// Replaces a set of run-time entries in one rebuild: removes the tools,
    /// prompts and resources named in `gone` (`uri`s for resources), adds
    /// `added`, and announces each list that changed. For a source of many
    /// entries at once (a proxied server), where one change per entry would
    /// rebuild and announce as many times.
    pub(crate) fn swap_entries(&self, gone: &EntryNames, added: Entries) -> Result<(), BuildError> {
        let mut changed = [false; 3];
        self.update_quiet(|parts| {
            let before = (parts.tools.len(), parts.prompts.len(), parts.resources.len());
            parts.tools.retain(|t| !gone.tools.iter().any(|g| g == t.name()));
            parts.prompts.retain(|p| !gone.prompts.contains(&p.prompt.name));
            parts.resources.retain(|r| !gone.resources.iter().any(|u| u == r.uri()));
            changed = [
                before.0 != parts.tools.len() || !added.tools.is_empty(),
                before.1 != parts.prompts.len() || !added.prompts.is_empty(),
                before.2 != parts.resources.len() || !added.resources.is_empty(),
            ];
            parts.tools.extend(added.tools);
            parts.prompts.extend(added.prompts);
            parts.resources.extend(added.resources);
            changed.iter().any(|c| *c)
        })?;
        let events = [
            ServerEvent::ToolsListChanged,
            ServerEvent::PromptsListChanged,
            ServerEvent::ResourcesListChanged,
        ];
        for (event, changed) in events.into_iter().zip(changed) {
            if changed {
                self.announce(event);
            }
        }
        Ok(())
    }

    /// Rebuilds the catalog with `change` (when it says it changed
    /// something) and announces nothing.
    fn update_quiet(&self, change: impl FnOnce(&mut Parts) -> bool) -> Result<bool, BuildError> {
        let changed = {
            let mut guard = match self.inner.catalog.write() {
                Ok(g) => g,
                Err(poisoned) => poisoned.into_inner(),
            };
            let mut parts = guard.parts();
            let changed = change(&mut parts);
            if changed {
                let mut next = Catalog::build(parts)?;
                // Once served, `tasks/*` stay: the tasks of a tool removed
                // since still run or are kept, and their owners read them.
                next.has_tasks |= guard.has_tasks;
                *guard = Arc::new(next);
            }
            changed
        };
        Ok(changed)
    }
}

#[cfg(feature = "client")]
/// A server held without keeping it alive (a background task's).
#[derive(Clone)]
pub(crate) struct WeakServer(std::sync::Weak<ServerInner>);

#[cfg(feature = "client")]
impl WeakServer {
    /// The server, while it lives.
    pub(crate) fn upgrade(&self) -> Option<Server> {
        self.0.upgrade().map(|inner| Server { inner })
    }
}

#[cfg(feature = "client")]
impl Server {
    /// This server, held without keeping it alive.
    pub(crate) fn downgrade(&self) -> WeakServer {
        WeakServer(Arc::downgrade(&self.inner))
    }
}

#[cfg(feature = "client")]
/// The names of run-time entries (see [`Server::swap_entries`]).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct EntryNames {
    pub tools: Vec<String>,
    pub prompts: Vec<String>,
    /// Resource URIs and templates.
    pub resources: Vec<String>,
}

#[cfg(feature = "client")]
/// Run-time entries to add (see [`Server::swap_entries`]).
#[derive(Default)]
pub(crate) struct Entries {
    pub tools: Vec<ToolEntry>,
    pub prompts: Vec<PromptEntry>,
    pub resources: Vec<ResourceEntry>,
}

#[cfg(feature = "client")]
impl Entries {
    /// Their names.
    pub(crate) fn names(&self) -> EntryNames {
        EntryNames {
            tools: self.tools.iter().map(|t| t.name().to_owned()).collect(),
            prompts: self.prompts.iter().map(|p| p.prompt.name.clone()).collect(),
            resources: self.resources.iter().map(|r| r.uri().to_owned()).collect(),
        }
    }
}

impl From<BuildError> for McpError {
    fn from(e: BuildError) -> Self {
        McpError::internal(e.to_string())
    }
}

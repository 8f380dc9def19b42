//! The builder that assembles a [`Server`] from the link-time registry
//! and/or by hand.

use super::entry::{PromptEntry, RegisteredPrompt, RegisteredResource, RegisteredTool, ResourceEntry, ToolEntry};
use super::{BuildError, CacheHint, Catalog, Config, Parts, Server, ServerInner, StateMap};
use crate::cancel::Cancellation;
use crate::protocol::{CacheScope, Implementation};
use std::sync::{Arc, RwLock};

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
    task_config: crate::tasks::TaskConfig,
    task_store: Option<Arc<dyn crate::tasks::TaskStore>>,
    subscriptions: crate::session::SubscriptionLimits,
    bus: Option<Arc<dyn super::EventBus>>,
    middleware: Vec<Arc<dyn super::Middleware>>,
    visibility: Vec<super::visibility::Hook>,
    rate_limit: Option<crate::limits::Rate>,
    max_calls_per_caller: Option<usize>,
    rate_store: Option<Arc<dyn crate::limits::RateStore>>,
    on_start: Vec<super::readiness::StartHook>,
    mounts: Vec<(String, Server, super::MountUris)>,
    skills: Vec<crate::skills::Skills>,
    skill_dirs: Vec<std::path::PathBuf>,
    /// A registration that failed, reported by [`ServerBuilder::build`].
    error: Option<BuildError>,
}

impl ServerBuilder {
    /// Starts from no tools at all: only what is added explicitly is served.
    pub fn empty(mut self) -> Self {
        self.explicit = true;
        self
    }

    /// Serves, of the link-time registry, only the tools, prompts,
    /// resources and templates whose name (or URI) is listed; what is added
    /// explicitly is served too.
    pub fn only<I: IntoIterator<Item = S>, S: Into<String>>(mut self, names: I) -> Self {
        self.only = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Adds a `#[tool]` function by name: `.tool::<my_tool>()`.
    pub fn tool<T: RegisteredTool>(mut self) -> Self {
        self.parts.tools.push(ToolEntry::from_def(T::DEF));
        self
    }

    #[cfg(feature = "client")]
    /// Records why the server cannot be built (the first reason wins):
    /// for builder methods defined outside this module.
    pub(crate) fn refuse(mut self, e: BuildError) -> Self {
        self.error.get_or_insert(e);
        self
    }

    /// Adds a tool entry (for example one built with [`ToolEntry::dynamic`]).
    pub fn tool_entry(mut self, entry: ToolEntry) -> Self {
        self.parts.tools.push(entry);
        self
    }

    /// Adds a `#[resource]` function by name: `.resource::<my_resource>()`.
    pub fn resource<T: RegisteredResource>(mut self) -> Self {
        match ResourceEntry::from_def(T::DEF) {
            Ok(entry) => self.parts.resources.push(entry),
            Err(e) => {
                self.error.get_or_insert(BuildError::InvalidTemplate(e));
            }
        }
        self
    }

    /// Adds a resource entry (for example one built with [`ResourceEntry::dynamic`]).
    pub fn resource_entry(mut self, entry: ResourceEntry) -> Self {
        self.parts.resources.push(entry);
        self
    }

    /// Adds a `#[prompt]` function by name: `.prompt::<my_prompt>()`.
    pub fn prompt<T: RegisteredPrompt>(mut self) -> Self {
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

    /// How long a tool call may run, for the tools that do not set their
    /// own (`#[tool(timeout = "30s")]`, [`ToolEntry::timeout`](crate::ToolEntry::timeout)).
    /// Past it the handler's cancellation token fires (so it can clean
    /// up), its future is dropped, and the caller gets a tool error saying
    /// it timed out; a task tool's task ends `failed`. `MCP_TOOL_TIMEOUT`
    /// (seconds) sets it for `main!` binaries.
    pub fn tool_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.config.tool_timeout = Some(timeout);
        self
    }

    /// How long a call waits for a place before it is refused (default 5 s):
    /// a call to a tool at its `max_concurrency` (told the tool is busy), or
    /// one of a caller at its [`max_calls_per_caller`](Self::max_calls_per_caller)
    /// (429). `Duration::MAX` waits as long as it takes.
    pub fn busy_wait(mut self, wait: std::time::Duration) -> Self {
        self.config.busy_wait = wait;
        self
    }

    /// Sets how tasks run: default time to live and poll interval, and the
    /// bounds on running tasks, result size and input requests.
    pub fn tasks(mut self, config: crate::tasks::TaskConfig) -> Self {
        self.task_config = config;
        self
    }

    /// Bounds what clients hold open for change notifications: streams in
    /// all, per principal and without one, resources per listen request or
    /// legacy session, URI length (see `SubscriptionLimits`).
    pub fn subscriptions(mut self, limits: crate::session::SubscriptionLimits) -> Self {
        self.subscriptions = limits;
        self
    }

    /// Keeps tasks in `store` instead of this process's memory (a store
    /// shared by replicas lets any of them serve `tasks/get`).
    pub fn task_store(mut self, store: Arc<dyn crate::tasks::TaskStore>) -> Self {
        self.task_store = Some(store);
        self
    }

    /// Carries change events (list changes, resource updates, task status)
    /// between replicas through `bus`, so that a `subscriptions/listen`
    /// stream on one replica hears of a change made on another.
    pub fn event_bus(mut self, bus: Arc<dyn super::EventBus>) -> Self {
        self.bus = Some(bus);
        self
    }

    /// Each caller (the token's principal, else the client's address) may
    /// make tool calls, resource reads and prompt gets at `rate`, all
    /// together; a tool may have a rate of its own besides
    /// (`#[tool(rate_limit = "5/s")]`, [`ToolEntry::rate_limit`](crate::ToolEntry::rate_limit)).
    /// A call past it is refused before it runs: JSON-RPC -32603 with
    /// `data.retryAfterMs`, and over HTTP status 429 with `Retry-After`.
    /// `MCP_RATE_LIMIT` (`"100/min"`) sets it for `main!` binaries.
    /// Replicas share the count through a [`rate_store`](Self::rate_store).
    ///
    /// ```
    /// let server = mcp_runtime::Server::builder()
    ///     .rate_limit("100/min burst 20".parse().unwrap())
    ///     .build()
    ///     .unwrap();
    /// # drop(server);
    /// ```
    pub fn rate_limit(mut self, rate: crate::limits::Rate) -> Self {
        self.rate_limit = Some(rate);
        self
    }

    /// Each caller may have at most `n` tool calls, reads and gets in
    /// progress at once; one more waits at most [`busy_wait`](Self::busy_wait)
    /// for one to end, then is refused like a call past a rate limit (429,
    /// retry in a second). A task's call ends when the task is created; a
    /// `#[tool(blocking)]` function that runs on after its call ended (timed
    /// out, cancelled) holds its caller's place until it returns. 0 sets no
    /// bound, the default. `MCP_MAX_CALLS_PER_CALLER` sets it for `main!`
    /// binaries.
    pub fn max_calls_per_caller(mut self, n: usize) -> Self {
        self.max_calls_per_caller = (n > 0).then_some(n);
        self
    }

    /// Keeps the rate-limit counts in `store`, which replicas share (Redis:
    /// `RedisShared::apply` sets it, the `redis` feature),
    /// so that three replicas admit a caller's rate, not three times it.
    /// When the store fails, each replica limits on its own until it is back.
    pub fn rate_store(mut self, store: Arc<dyn crate::limits::RateStore>) -> Self {
        self.rate_store = Some(store);
        self
    }

    /// Shows each tool, prompt, resource and template only to the callers
    /// `visible` says yes to, asked per request with the caller (token,
    /// capabilities, headers: a [`Viewer`](crate::Viewer)) and the item
    /// (kind and name or URI: an [`Item`](crate::Item)), so that a whole
    /// group can be hidden at once. A hidden item is absent from its list,
    /// and a call, read, get or completion of it is answered like one of an
    /// unknown item; lists then say `cacheScope: "private"`, as they differ
    /// by caller. Hooks added several times must all say yes, and so must
    /// an item's own predicate (`#[tool(visible_if = f)]`,
    /// [`ToolEntry::visible_if`](crate::ToolEntry::visible_if)). A hook that
    /// panics hides the item. A server mounted into another keeps its hooks
    /// for its own items, asked with their unprefixed names.
    ///
    /// ```
    /// use mcp_runtime::{Item, Server};
    ///
    /// // `admin_*` tools only for tokens with the `admin` scope.
    /// let server = Server::builder()
    ///     .visible_if(|viewer, item| match item {
    ///         Item::Tool(name) if name.starts_with("admin_") => viewer.has_scope("admin"),
    ///         _ => true,
    ///     })
    ///     .build()
    ///     .unwrap();
    /// # drop(server);
    /// ```
    pub fn visible_if(
        mut self,
        visible: impl Fn(&super::Viewer<'_>, super::Item<'_>) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.visibility.push(Arc::new(visible));
        self
    }

    /// Runs `hook` once when the server starts ([`Server::start`](crate::Server::start):
    /// a [`main!`](crate::main!) binary calls it inside its tokio runtime right
    /// after building, before serving), so that the hook may spawn tasks: to
    /// connect to a database in the background while the server already
    /// serves, holding [`Server::awaiting`](crate::Server::awaiting) until it
    /// is reached, say.
    ///
    /// ```
    /// let server = mcp_runtime::Server::builder()
    ///     .on_start(|server| {
    ///         let waiting = server.awaiting("database");
    ///         // tokio::spawn(async move { connect().await; waiting.ready(); });
    ///         waiting.ready();
    ///     })
    ///     .build()
    ///     .unwrap();
    /// server.start();
    /// assert!(server.awaited().is_empty());
    /// ```
    pub fn on_start(mut self, hook: impl FnOnce(&super::Server) + Send + 'static) -> Self {
        self.on_start.push(Box::new(hook));
        self
    }

    /// Adds a hook around every tool call, resource read and prompt get.
    /// Hooks run in the order added (`before`), and in reverse (`after`).
    pub fn middleware(mut self, middleware: impl super::Middleware) -> Self {
        self.middleware.push(Arc::new(middleware));
        self
    }

    /// Serves `other`'s tools and prompts under `prefix` (`prefix_name`) and
    /// its resources and templates under their own URIs, each handler with
    /// `other`'s state; `other`'s instructions are appended to these. A name
    /// or URI that clashes is a [`BuildError`] naming both definitions.
    /// Build `other` from [`empty`](Self::empty) (or [`only`](Self::only)) so
    /// that it holds just its own part of the link-time registry. Its tools
    /// keep their timeouts (its `tool_timeout` too) and rates; middleware or
    /// server-wide limits on `other` are a [`BuildError`]: set them here. So
    /// is a [`rate_store`](Self::rate_store) of `other` its tools' rates are
    /// counted in, when this server has none.
    pub fn mount(self, prefix: impl Into<String>, other: &Server) -> Self {
        self.mount_with(prefix, other, super::MountUris::Kept)
    }

    /// [`mount`](Self::mount), with the mounted resource and template URIs
    /// kept or served under the prefix ([`MountUris::Prefixed`](super::MountUris::Prefixed):
    /// `crm://about` as `crm://PREFIX/about`), so that two mounts of servers
    /// with the same URIs do not clash.
    pub fn mount_with(mut self, prefix: impl Into<String>, other: &Server, uris: super::MountUris) -> Self {
        self.mounts.push((prefix.into(), other.clone(), uris));
        self
    }

    /// Serves `skills` (the Skills extension, `io.modelcontextprotocol/skills`):
    /// `skills/list`, `skills/get`, every file through `resources/read` (and
    /// `resources/list`), `resources/directory/read`; the capability is
    /// declared. Embed a folder at compile time with
    /// [`skills!`](crate::skills!), or read one with [`Skills::from_dir`](crate::Skills::from_dir).
    ///
    /// ```ignore
    /// let server = Server::builder().skills(mcp_runtime::skills!("skills")).build()?;
    /// ```
    pub fn skills(mut self, skills: crate::skills::Skills) -> Self {
        self.skills.push(skills);
        self
    }

    /// Serves the skills of the folder `dir` (see [`Skills::from_dir`](crate::Skills::from_dir)),
    /// read when the server is built (a bad skill is a [`BuildError::Skill`]
    /// naming the file and the rule) and watched while it lives: once a
    /// second the folder is looked at, and when a file changed, appeared or
    /// went away it is read again and, if valid, served in place of the old
    /// skills, with `notifications/resources/list_changed` on every listen
    /// stream (through the [`event_bus`](Self::event_bus), on every
    /// replica's), and `notifications/resources/updated` for each file whose
    /// bytes changed. A folder that became invalid is logged and the
    /// previous skills stay served. A server mounted into another hands over
    /// the skills it had when the other was built.
    pub fn skills_dir(mut self, dir: impl Into<std::path::PathBuf>) -> Self {
        self.skill_dirs.push(dir.into());
        self
    }

    /// Registers shared state for the [`State<T>`](crate::State) extractor.
    pub fn state<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.state.insert(value);
        self
    }

    /// Builds the server, or says why it cannot be built: duplicate or
    /// invalid names, a malformed input schema or URI template, malformed
    /// `requestState` keys. Nothing is served until this succeeds, and it
    /// never ends the process: [`main!`](crate::main!) reports the error and
    /// exits with status 2.
    pub fn build(self) -> Result<Server, BuildError> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let mut parts = Parts::default();
        let wanted = |name: &str| self.only.as_ref().is_none_or(|only| only.iter().any(|n| n == name));
        if !self.explicit {
            for def in super::registry::tools() {
                if wanted(def.name) {
                    parts.tools.push(ToolEntry::from_def(def));
                }
            }
            for def in super::registry::resources() {
                if wanted(def.uri) || wanted(def.name) {
                    parts
                        .resources
                        .push(ResourceEntry::from_def(def).map_err(BuildError::InvalidTemplate)?);
                }
            }
            for def in super::registry::prompts() {
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
                .any(|e| e.name() == t.name() && e.location == t.location)
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
        for skills in self.skills {
            parts.skills.extend(super::skills::parts(skills, 0));
        }
        // What each folder held before it is read: a change made while it is
        // read is one the watcher sees, not one it takes for the start.
        let mut seen = Vec::with_capacity(self.skill_dirs.len());
        for (i, dir) in self.skill_dirs.iter().enumerate() {
            seen.push(super::skills::fingerprint(dir));
            let skills = crate::skills::Skills::from_dir(dir)?;
            parts.skills.extend(super::skills::parts(skills, i as u64 + 1));
        }
        let mut config = self.config;
        for (prefix, other, uris) in &self.mounts {
            super::mount::mount_into(&mut parts, prefix, other, *uris, self.rate_store.is_some())?;
            if let Some(theirs) = &other.inner.config.instructions {
                let text = match config.instructions.take() {
                    Some(mine) => format!("{mine}\n\n{prefix}: {theirs}"),
                    None => format!("{prefix}: {theirs}"),
                };
                config.instructions = Some(text);
            }
        }
        if let Some(uri) = super::skills::conflicting_file(&parts.skills) {
            return Err(BuildError::SkillFileConflict(uri.to_owned()));
        }
        let catalog = Catalog::build(parts)?;
        let limits = crate::limits::Limits::new(
            self.rate_limit,
            self.max_calls_per_caller,
            catalog.tools.iter().any(|t| t.rate_limit.is_some()),
            self.rate_store,
        );
        let meta_fragment = format!(
            "\"_meta\":{{\"{}\":{}}}",
            crate::protocol::META_SERVER_INFO,
            serde_json::to_string(&config.info).unwrap_or_else(|_| "{}".into())
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
        let store = self
            .task_store
            .unwrap_or_else(|| Arc::new(crate::tasks::MemoryTaskStore::new()));
        if let Some(bus) = &self.bus {
            bus.named(&config.info.name);
            bus.start(events.clone());
        }
        let (local, shared) = (events.clone(), self.bus.clone());
        let notify: crate::tasks::Notify = Arc::new(move |record| {
            let event = super::ServerEvent::Task {
                id: record.id.clone(),
                version: record.version,
            };
            match &shared {
                Some(bus) => bus.publish(&event),
                // No listener is not an error.
                None => drop(local.send(event)),
            }
        });
        let tasks = Arc::new(crate::tasks::TaskRuntime::new(store, self.task_config, notify));
        let sealer =
            crate::mrtr::seal::Sealer::new(&keys, self.state_ttl.unwrap_or(std::time::Duration::from_secs(300)))
                .for_server(&config.info.name);
        let server = Server {
            inner: Arc::new(ServerInner {
                config,
                meta_fragment,
                catalog: RwLock::new(Arc::new(catalog)),
                state: self.state,
                events,
                bus: self.bus,
                middleware: self.middleware,
                visibility: self.visibility,
                limits,
                readiness: Arc::new(super::readiness::Readiness::with_hooks(self.on_start)),
                stopping: Cancellation::new(),
                sealer,
                ephemeral_key,
                tasks,
                streams: Arc::new(crate::session::Streams::new(self.subscriptions)),
            }),
        };
        for (i, (dir, seen)) in self.skill_dirs.into_iter().zip(seen).enumerate() {
            super::skills::watch(
                Arc::downgrade(&server.inner),
                dir,
                seen,
                i as u64 + 1,
                super::skills::POLL,
            );
        }
        Ok(server)
    }
}

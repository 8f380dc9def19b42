//! A tool as the catalog serves it: the static descriptor `#[tool]`
//! registers, and the entry built from it (or by hand, at run time).

use crate::error::McpError;
use crate::mrtr::Outcome;
use crate::protocol::{CallToolResult, ClientCapability, Tool, ToolAnnotations, UiToolMeta, UI_RESOURCE_URI_META_KEY};
use crate::schema::validate;
use crate::server::visibility::{Predicate, Viewer, VisibleIf};
use crate::server::Context;
use crate::tasks::TaskSupport;
use crate::tools::IntoToolResult;
use serde_json::value::RawValue;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};

/// The future a tool handler returns.
pub type ToolFuture = Pin<Box<dyn Future<Output = Result<Outcome<CallToolResult>, McpError>> + Send>>;

/// The type-erased call of a tool: raw arguments and the request context in,
/// a future of the outcome out.
pub type ToolHandler = Arc<dyn Fn(Option<&RawValue>, Context) -> ToolFuture + Send + Sync>;

/// Annotation hints as a `#[tool]` attribute states them.
#[derive(Debug, Clone, Copy, Default)]
pub struct AnnotationHints {
    /// `read_only`
    pub read_only: Option<bool>,
    /// `destructive`
    pub destructive: Option<bool>,
    /// `idempotent`
    pub idempotent: Option<bool>,
    /// `open_world`
    pub open_world: Option<bool>,
}

/// The static descriptor of a `#[tool]` function, placed in the link-time
/// registry. Not written by hand: the macro builds it.
#[derive(Debug)]
pub struct ToolDef {
    /// The tool's name.
    pub name: &'static str,
    /// Display title.
    pub title: Option<&'static str>,
    /// Description (the doc comment unless overridden).
    pub description: Option<&'static str>,
    /// Annotation hints.
    pub hints: AnnotationHints,
    /// Builds the input schema (called when the schema is first needed).
    pub input_schema: fn() -> serde_json::Value,
    /// Whether the input schema may declare header parameters (`#[header]`,
    /// `#[schemars(..)]`, `#[arguments]`, or an argument of a type other
    /// than the standard scalars and strings): such a schema is built and
    /// checked when the server is built, any other when a list or a call
    /// first needs it.
    pub check_schema: bool,
    /// Builds the output schema, if the return type has one.
    pub output_schema: fn() -> Option<serde_json::Value>,
    /// The erased handler.
    pub call: fn(Option<&RawValue>, Context) -> ToolFuture,
    /// Client capabilities the tool always needs (`sampling`, `elicitation`, `roots`).
    pub requires: &'static [ClientCapability],
    /// Whether it runs as a task (`#[tool(task)]`).
    pub task: TaskSupport,
    /// The OAuth scopes a caller needs (`#[tool(scopes(..))]`).
    pub scopes: &'static [&'static str],
    /// How long a call may run, in milliseconds (`#[tool(timeout = "30s")]`).
    pub timeout_ms: Option<u64>,
    /// Calls running at once, at most (`#[tool(max_concurrency = 4)]`).
    pub max_concurrency: Option<u64>,
    /// Whether it is a synchronous function run on the blocking pool
    /// (`#[tool(blocking)]`).
    pub blocking: bool,
    /// Calls per caller (`#[tool(rate_limit = "5/s")]`).
    pub rate_limit: Option<crate::limits::Rate>,
    /// Whether the caller sees the tool (`#[tool(visible_if = f)]`).
    pub visible_if: Option<VisibleIf>,
    /// Its view and who may call it (`#[tool(ui = "ui://..", visibility(..))]`).
    pub ui: Option<&'static crate::server::ToolUiDef>,
    /// Where the function is defined (for diagnostics).
    pub location: &'static str,
}

impl ToolDef {
    /// The wire definition of the tool.
    pub fn to_tool(&self) -> Tool {
        let h = self.hints;
        let annotations =
            if h.read_only.is_some() || h.destructive.is_some() || h.idempotent.is_some() || h.open_world.is_some() {
                Some(ToolAnnotations {
                    title: None,
                    read_only_hint: h.read_only,
                    destructive_hint: h.destructive,
                    idempotent_hint: h.idempotent,
                    open_world_hint: h.open_world,
                })
            } else {
                None
            };
        Tool {
            name: self.name.to_owned(),
            title: self.title.map(str::to_owned),
            description: self.description.map(str::to_owned),
            input_schema: (self.input_schema)(),
            output_schema: (self.output_schema)(),
            annotations,
            icons: None,
            meta: None,
        }
    }
}

/// A tool's wire definition and what is read off its input schema.
#[derive(Debug, Clone)]
pub(crate) struct Wire {
    pub tool: Tool,
    /// `x-mcp-header` parameters: (property's path, header name).
    pub header_params: Vec<crate::headers::HeaderParam>,
    /// Whether the input schema has constraints serde does not check.
    pub constrained: bool,
}

impl Wire {
    fn of(tool: Tool) -> Wire {
        Wire {
            header_params: crate::headers::declared_params(&tool.input_schema),
            constrained: validate::has_constraints(&tool.input_schema),
            tool,
        }
    }
}

/// A tool as the router serves it: its wire definition and its handler.
#[derive(Clone)]
pub struct ToolEntry {
    /// Its name (the wire definition's, which may not be built yet).
    name: String,
    /// The `#[tool]` descriptor the wire definition is built from.
    def: Option<&'static ToolDef>,
    /// The wire definition: a `#[tool]`'s is built when first needed (see
    /// [`ToolDef::check_schema`]), a dynamic tool's is given.
    wire: OnceLock<Wire>,
    /// Client capabilities the tool always needs.
    pub(crate) requires: Vec<ClientCapability>,
    /// Whether it runs as a task.
    pub(crate) task: TaskSupport,
    /// The OAuth scopes a caller needs.
    pub(crate) scopes: Vec<String>,
    /// How long a call may run, if not the server's default.
    pub(crate) timeout: Option<std::time::Duration>,
    /// The places of the calls running at once, when they are bounded.
    pub(crate) concurrency: Option<Arc<tokio::sync::Semaphore>>,
    /// Whether its handler runs a function on the blocking pool, which goes
    /// on when the call is dropped: a bounded call's place is held until it
    /// returns.
    pub(crate) blocking: bool,
    /// Whether the caller sees the tool, when it is not everyone.
    pub(crate) visible: Option<Predicate>,
    /// Calls per caller, when the tool has a rate of its own.
    pub(crate) rate_limit: Option<crate::limits::Rate>,
    /// Its `_meta.ui` (MCP Apps), also written in the wire definition's `_meta`.
    pub(crate) ui: Option<UiToolMeta>,
    /// Whether its handler may answer with a task another server runs (a
    /// proxied tool whose upstream declares the tasks extension).
    pub(crate) relays_tasks: bool,
    /// A task tool whose call becomes a task only when its handler has not
    /// answered within this time (a proxied 2025-11-25 upstream's tool);
    /// `None`: as soon as the handler first waits.
    pub(crate) task_after: Option<std::time::Duration>,
    pub(crate) handler: ToolHandler,
    pub(crate) location: &'static str,
}

impl std::fmt::Debug for ToolEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolEntry")
            .field("name", &self.name)
            .field("location", &self.location)
            .finish()
    }
}

impl ToolEntry {
    /// The entry of a registered `#[tool]` function.
    pub fn from_def(def: &'static ToolDef) -> Self {
        let call = def.call;
        ToolEntry {
            name: def.name.to_owned(),
            def: Some(def),
            wire: OnceLock::new(),
            requires: def.requires.to_vec(),
            task: def.task,
            scopes: def.scopes.iter().map(|s| (*s).to_owned()).collect(),
            timeout: def.timeout_ms.map(std::time::Duration::from_millis),
            concurrency: def.max_concurrency.map(places),
            blocking: def.blocking,
            visible: def.visible_if.map(|f| Arc::new(f) as Predicate),
            rate_limit: def.rate_limit,
            ui: def.ui.map(|ui| ui.to_meta()),
            relays_tasks: false,
            task_after: None,
            handler: Arc::new(move |args, ctx| call(args, ctx)),
            location: def.location,
        }
    }

    /// A tool defined at run time: its wire definition and a handler that
    /// receives the arguments object. A `_meta.ui` in the definition is
    /// read as [`ui`](Self::ui) says.
    ///
    /// ```
    /// use mcp_runtime::{protocol::Tool, ToolEntry};
    /// let echo = ToolEntry::dynamic(
    ///     Tool {
    ///         name: "echo".into(),
    ///         description: Some("Echoes its text".into()),
    ///         input_schema: serde_json::json!({
    ///             "type": "object",
    ///             "properties": {"text": {"type": "string"}},
    ///             "required": ["text"]
    ///         }),
    ///         ..Default::default()
    ///     },
    ///     |args, _ctx| async move { args["text"].as_str().unwrap_or_default().to_owned() },
    /// );
    /// # let _ = echo;
    /// ```
    pub fn dynamic<F, Fut, R>(tool: Tool, handler: F) -> Self
    where
        F: Fn(serde_json::Map<String, serde_json::Value>, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoToolResult,
    {
        let handler: ToolHandler = Arc::new(move |args, ctx| {
            let parsed = match args {
                None => Ok(serde_json::Map::new()),
                Some(raw) => serde_json::from_str(raw.get()),
            };
            match parsed {
                Ok(map) => {
                    let fut = handler(map, ctx);
                    Box::pin(async move { fut.await.into_tool_result() })
                }
                Err(e) => Box::pin(std::future::ready(Ok(Outcome::Complete(crate::tools::error_result(
                    format!("Invalid arguments: {e}"),
                ))))),
            }
        });
        let ui = tool
            .meta
            .as_ref()
            .and_then(|m| m.get("ui"))
            .and_then(|ui| serde_json::from_value(ui.clone()).ok());
        ToolEntry {
            ui,
            name: tool.name.clone(),
            def: None,
            wire: OnceLock::from(Wire::of(tool)),
            requires: Vec::new(),
            task: TaskSupport::NEVER,
            scopes: Vec::new(),
            timeout: None,
            concurrency: None,
            blocking: false,
            visible: None,
            rate_limit: None,
            relays_tasks: false,
            task_after: None,
            handler,
            location: "dynamic",
        }
    }

    /// Declares client capabilities the tool always needs: a call from a
    /// client that lacks one fails with -32021 before the handler runs.
    pub fn requires(mut self, capabilities: &[ClientCapability]) -> Self {
        self.requires = capabilities.to_vec();
        self
    }

    /// Runs the tool as a task for clients that declared the tasks extension
    /// (the handler reaches its [`Task`](crate::Task) with
    /// `Task::from_context(&ctx)`).
    pub fn task(mut self, support: TaskSupport) -> Self {
        self.task = support;
        self
    }

    /// The OAuth scopes a caller needs: over an authorized HTTP endpoint,
    /// a token without them does not see the tool in `tools/list` and is
    /// answered 403 `insufficient_scope` when it calls it.
    pub fn scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// How long a call may run, instead of the server's default
    /// ([`ServerBuilder::tool_timeout`](crate::ServerBuilder::tool_timeout)):
    /// past it the handler's cancellation token fires, its future is
    /// dropped and the caller gets a tool error saying so; a task tool's
    /// task ends `failed`.
    pub fn timeout(mut self, timeout: std::time::Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// At most `n` calls of the tool run at once (one that holds a scarce
    /// connection, say): one more waits (without holding a thread) at most
    /// [`Config::busy_wait`](crate::Config::busy_wait), then gets a tool error
    /// saying the tool is busy. A task holds its place until it ends.
    pub fn max_concurrency(mut self, n: u64) -> Self {
        self.concurrency = Some(places(n));
        self
    }

    /// Each caller (principal, else address) may call the tool at `rate`:
    /// one more call is refused with the delay to wait (HTTP 429 with
    /// `Retry-After`; JSON-RPC -32603 with `data.retryAfterMs`), besides
    /// the server's own limit
    /// ([`ServerBuilder::rate_limit`](crate::ServerBuilder::rate_limit)).
    /// Replicas that share Redis share the count.
    pub fn rate_limit(mut self, rate: crate::limits::Rate) -> Self {
        self.rate_limit = Some(rate);
        self
    }

    /// Shows the tool only to the callers `visible` says yes to: to the
    /// others it is absent from `tools/list` and a call of it is answered
    /// like a call of an unknown tool. Asked on every list and call (keep
    /// it quick); a panic hides the tool. See [`Viewer`](crate::Viewer).
    ///
    /// ```
    /// use mcp_runtime::{protocol::Tool, ToolEntry};
    /// let tool: Tool = serde_json::from_value(serde_json::json!({
    ///     "name": "reset", "inputSchema": {"type": "object"}
    /// })).unwrap();
    /// let reset = ToolEntry::dynamic(tool, |_args, _ctx| async { "reset" })
    ///     .visible_if(|viewer| viewer.has_scope("admin"));
    /// # let _ = reset;
    /// ```
    pub fn visible_if(mut self, visible: impl Fn(&Viewer<'_>) -> bool + Send + Sync + 'static) -> Self {
        self.visible = Some(Arc::new(visible));
        self
    }

    /// Links the tool to an MCP Apps view and says who may call it: its
    /// `_meta.ui` (`{resourceUri, visibility}`), with the deprecated
    /// `_meta["ui/resourceUri"]` beside it for older hosts. Callers that do
    /// not render apps get the tool without either key, and a tool only the
    /// app may call (`visibility` exactly `[App]`) is left out of their
    /// `tools/list` (it can still be called). The server does not build
    /// unless a resource of it serves the view
    /// ([`BuildError::UnknownView`](crate::BuildError::UnknownView)).
    ///
    /// ```
    /// use mcp_runtime::protocol::{Resource, Tool, UiToolMeta, Visibility};
    /// use mcp_runtime::{ResourceEntry, Server, ToolEntry};
    /// let tool: Tool = serde_json::from_value(serde_json::json!({
    ///     "name": "forecast", "inputSchema": {"type": "object"}
    /// })).unwrap();
    /// let forecast = ToolEntry::dynamic(tool, |_args, _ctx| async { "sunny" })
    ///     .ui(UiToolMeta::view("ui://weather/forecast").with_visibility([Visibility::Model, Visibility::App]));
    /// let view = ResourceEntry::dynamic(
    ///     Resource { uri: "ui://weather/forecast".into(), name: "forecast".into(), ..Default::default() },
    ///     |_uri, _ctx| async { "<!DOCTYPE html><title>Forecast</title>" },
    /// )
    /// .app(Default::default());
    /// let server = Server::builder().tool_entry(forecast).resource_entry(view).build().unwrap();
    /// # let _ = server;
    /// ```
    pub fn ui(mut self, ui: UiToolMeta) -> Self {
        if let Some(wire) = self.wire.get_mut() {
            write_ui(&mut wire.tool, &ui);
        }
        self.ui = Some(ui);
        self
    }

    /// Whether only the app may call the tool (`visibility` exactly `[app]`).
    pub(crate) fn app_only(&self) -> bool {
        self.ui.as_ref().is_some_and(UiToolMeta::app_only)
    }

    /// The wire definition as a caller that does not render apps sees it:
    /// without `_meta.ui` and `_meta["ui/resourceUri"]`.
    pub(crate) fn plain_tool(&self) -> Tool {
        let mut tool = self.tool().clone();
        if let Some(meta) = tool.meta.as_mut() {
            meta.remove("ui");
            meta.remove(UI_RESOURCE_URI_META_KEY);
            if meta.is_empty() {
                tool.meta = None;
            }
        }
        tool
    }

    /// The wire definition.
    pub fn tool(&self) -> &Tool {
        &self.wire().tool
    }

    /// The tool's name.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// Renames the tool (a mounted server's, under its prefix).
    pub(crate) fn rename(&mut self, name: String) {
        if let Some(wire) = self.wire.get_mut() {
            wire.tool.name.clone_from(&name);
        }
        self.name = name;
    }

    /// The wire definition and what its input schema declares, built by
    /// the first caller that needs them.
    pub(crate) fn wire(&self) -> &Wire {
        self.wire.get_or_init(|| {
            let mut tool = self.def.map(ToolDef::to_tool).unwrap_or_default();
            tool.name.clone_from(&self.name);
            if let Some(ui) = &self.ui {
                write_ui(&mut tool, ui);
            }
            Wire::of(tool)
        })
    }

    /// Whether building the server checks the input schema: a dynamic
    /// tool's, and a `#[tool]`'s that may declare header parameters (the
    /// others' are built by the macro as objects without them). It depends
    /// on where the entry comes from, not on whether its definition has
    /// been built, so a rebuild after a list checks what the first build did.
    pub(crate) fn checked_at_build(&self) -> bool {
        self.def.is_none_or(|d| d.check_schema)
    }
}

/// Writes `_meta.ui`, and the deprecated `_meta["ui/resourceUri"]` beside it.
fn write_ui(tool: &mut Tool, ui: &UiToolMeta) {
    let meta = tool.meta.get_or_insert_with(Default::default);
    meta.insert("ui".to_owned(), serde_json::to_value(ui).unwrap_or_default());
    match &ui.resource_uri {
        Some(uri) => meta.insert(UI_RESOURCE_URI_META_KEY.to_owned(), uri.clone().into()),
        None => meta.remove(UI_RESOURCE_URI_META_KEY),
    };
}

/// Implemented by the type-namespace twin `#[tool]` generates for each tool
/// function, so that `ServerBuilder::tool::<my_tool>()` can name it.
pub trait RegisteredTool {
    /// The tool's static descriptor.
    const DEF: &'static ToolDef;
}

/// A semaphore of `n` places (at least one, at most what tokio allows).
fn places(n: u64) -> Arc<tokio::sync::Semaphore> {
    let n = usize::try_from(n)
        .unwrap_or(usize::MAX)
        .clamp(1, tokio::sync::Semaphore::MAX_PERMITS);
    Arc::new(tokio::sync::Semaphore::new(n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::catalog::{Catalog, Parts};
    use crate::server::BuildError;
    use std::sync::atomic::{AtomicUsize, Ordering};

    static BUILT: AtomicUsize = AtomicUsize::new(0);

    fn counted_schema() -> serde_json::Value {
        BUILT.fetch_add(1, Ordering::SeqCst);
        serde_json::json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}})
    }

    fn header_schema() -> serde_json::Value {
        serde_json::json!({"type": "object", "properties": {"n": {"type": "object", "x-mcp-header": "N"}}})
    }

    fn no_output() -> Option<serde_json::Value> {
        None
    }

    fn answer(_: Option<&RawValue>, _: Context) -> ToolFuture {
        Box::pin(std::future::ready(Ok(Outcome::Complete(CallToolResult::default()))))
    }

    const fn def(name: &'static str, input_schema: fn() -> serde_json::Value, check_schema: bool) -> ToolDef {
        ToolDef {
            name,
            title: None,
            description: None,
            hints: AnnotationHints {
                read_only: None,
                destructive: None,
                idempotent: None,
                open_world: None,
            },
            input_schema,
            check_schema,
            output_schema: no_output,
            call: answer,
            requires: &[],
            task: TaskSupport::NEVER,
            scopes: &[],
            timeout_ms: None,
            max_concurrency: None,
            blocking: false,
            rate_limit: None,
            visible_if: None,
            ui: None,
            location: "tests",
        }
    }

    /// Catalog parts holding this one tool.
    fn one_tool(def: &'static ToolDef) -> Parts {
        Parts {
            tools: vec![ToolEntry::from_def(def)],
            ..Default::default()
        }
    }

    static LAZY: ToolDef = def("lazy", counted_schema, false);
    static RENAMED: ToolDef = def("renamed", header_schema, false);
    static BAD_HEADER: ToolDef = def("bad_header", header_schema, true);

    #[test]
    fn a_tools_schema_is_built_by_the_first_list_not_by_building_the_server() {
        let parts = one_tool(&LAZY);
        let catalog = Catalog::build(parts).unwrap();
        assert_eq!(BUILT.load(Ordering::SeqCst), 0, "building the catalog built the schema");
        let listed = catalog.tools_json();
        assert_eq!(BUILT.load(Ordering::SeqCst), 1);
        assert!(listed[0].contains(r#""minimum":1"#), "{listed:?}");
        let wire = catalog.tools[0].wire();
        assert!(wire.constrained);
        assert_eq!(BUILT.load(Ordering::SeqCst), 1, "the schema was built twice");
    }

    #[test]
    fn a_renamed_tool_is_listed_under_its_new_name_whenever_its_definition_is_built() {
        let mut unbuilt = ToolEntry::from_def(&RENAMED);
        unbuilt.rename("mounted_lazy".into());
        assert_eq!(unbuilt.tool().name, "mounted_lazy");
        let mut built = ToolEntry::from_def(&RENAMED);
        let _ = built.tool();
        built.rename("mounted_lazy".into());
        assert_eq!(
            (built.name(), built.tool().name.as_str()),
            ("mounted_lazy", "mounted_lazy")
        );
    }

    #[test]
    fn a_rebuild_after_a_list_checks_what_the_first_build_checked() {
        // RENAMED's schema would fail the header check, which its
        // descriptor says it need not pass: building its definition for a
        // list must not make the next build check it.
        let parts = one_tool(&RENAMED);
        let catalog = Catalog::build(parts).unwrap();
        let _ = catalog.tools_json();
        assert!(catalog.tools[0].wire.get().is_some());
        assert!(Catalog::build(catalog.parts()).is_ok());
    }

    #[test]
    fn a_schema_that_may_declare_headers_is_checked_when_the_server_is_built() {
        let parts = one_tool(&BAD_HEADER);
        match Catalog::build(parts) {
            Err(BuildError::InvalidHeaderParam(name, _)) => assert_eq!(name, "bad_header"),
            other => panic!("expected InvalidHeaderParam, got {:?}", other.map(|_| ())),
        }
    }
}

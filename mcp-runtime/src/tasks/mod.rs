//! Long-running tools: the Tasks extension (`io.modelcontextprotocol/tasks`,
//! SEP-2663).
//!
//! A `#[tool(task)]` call from a client that declared the extension becomes
//! a task when its handler first waits: the record is written to the
//! [`TaskStore`] (the creation result leaves only after that), and the
//! handler's future runs on in the background ([`run`]), once, to the end.
//! Its [`Task`] extractor reports status and asks for input; `tasks/get`,
//! `tasks/update` and `tasks/cancel` (served by `dispatch::tasks`) read and
//! change the record, and the runner learns of answers and cancellation
//! through the store, so the replica that serves them need not be the one
//! that runs the task. A handler that finishes in its first poll (or halts
//! on an MRTR ask) answers the `tools/call` directly, as the spec allows.

mod handle;
pub(crate) mod run;
mod store;
pub(crate) mod time;

pub(crate) use handle::{extension_required, Mode, Shared};
pub use handle::{Task, TaskError};
pub use store::{MemoryTaskStore, StoreError, StoreFuture, TaskChange, TaskRecord, TaskStore};

use crate::error::McpError;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Whether a tool runs as a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TaskMode {
    /// Never: an ordinary tool.
    #[default]
    Never,
    /// When the client declared the extension; synchronously otherwise.
    Optional,
    /// Only as a task: a client without the extension (and any 2025-11-25
    /// session, which cannot declare it) gets -32021 naming it.
    Required,
}

/// How a tool takes part in tasks (`#[tool(task)]`, `#[tool(task = required)]`,
/// `#[tool(task(ttl_ms = 600000, poll_interval_ms = 1000))]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TaskSupport {
    /// Whether it runs as a task.
    pub mode: TaskMode,
    /// Its tasks' time to live, if not the server's default.
    pub ttl_ms: Option<u64>,
    /// Its tasks' suggested poll interval, if not the server's default.
    pub poll_interval_ms: Option<u64>,
}

impl TaskSupport {
    /// An ordinary tool.
    pub const NEVER: TaskSupport = TaskSupport {
        mode: TaskMode::Never,
        ttl_ms: None,
        poll_interval_ms: None,
    };
}

/// Server-wide settings of tasks ([`ServerBuilder::tasks`](crate::ServerBuilder::tasks)).
#[derive(Debug, Clone)]
pub struct TaskConfig {
    /// Time to live of a task from its creation, unless the tool sets one (1 hour).
    pub ttl_ms: u64,
    /// Suggested poll interval, unless the tool sets one (500 ms).
    pub poll_interval_ms: u64,
    /// Tasks running at once in this process (1024).
    pub max_running: usize,
    /// Tasks running at once for one principal (64).
    pub max_running_per_principal: usize,
    /// Largest serialized result a task may keep (4 MiB); a larger one fails the task.
    pub max_result_bytes: usize,
    /// Input requests one task may make over its life (32).
    pub max_inputs: u32,
    /// How long a cancelled task's handler may go on to clean up before it is dropped (2 s).
    pub cancel_grace: Duration,
}

impl Default for TaskConfig {
    fn default() -> Self {
        TaskConfig {
            ttl_ms: 3_600_000,
            poll_interval_ms: 500,
            max_running: 1024,
            max_running_per_principal: 64,
            max_result_bytes: 4 << 20,
            max_inputs: 32,
            cancel_grace: Duration::from_secs(2),
        }
    }
}

/// Called with a task's record after each change a client may see.
pub(crate) type Notify = Arc<dyn Fn(&TaskRecord) + Send + Sync>;

/// The tasks of one server: the store, the settings, and the count of
/// tasks running in this process.
pub(crate) struct TaskRuntime {
    pub store: Arc<dyn TaskStore>,
    pub config: TaskConfig,
    pub notify: Notify,
    running: Mutex<Running>,
    /// Cancelled when the server stops and its grace is over: the runners
    /// still going record their tasks failed and end.
    pub(crate) halt: crate::cancel::Cancellation,
}

#[derive(Default)]
struct Running {
    total: usize,
    by_principal: HashMap<String, usize>,
}

/// A running task's place in the count; given back when dropped.
pub(crate) struct Slot {
    runtime: Arc<TaskRuntime>,
    principal: String,
}

impl TaskRuntime {
    pub(crate) fn new(store: Arc<dyn TaskStore>, config: TaskConfig, notify: Notify) -> Self {
        TaskRuntime {
            store,
            config,
            notify,
            running: Mutex::new(Running::default()),
            halt: crate::cancel::Cancellation::new(),
        }
    }

    /// Waits (at most `grace`) for the running tasks to end; then the ones
    /// still running are recorded `failed` ("the server stopped"), and it
    /// waits (at most 5 s more) for those records to be written, so that a
    /// client polling another replica learns at once, not when the lease
    /// runs out. Returns how many tasks were stopped that way.
    pub(crate) async fn stop(&self, grace: std::time::Duration) -> usize {
        let ended = |within: std::time::Duration| async move {
            let deadline = tokio::time::Instant::now() + within;
            while self.running() > 0 && tokio::time::Instant::now() < deadline {
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
            self.running()
        };
        let left = ended(grace).await;
        if left > 0 {
            self.halt.cancel();
            let unrecorded = ended(std::time::Duration::from_secs(5)).await;
            if unrecorded > 0 {
                tracing::warn!("stopping: {unrecorded} task(s) could not be recorded failed in time");
            }
        }
        left
    }

    /// Takes a place for a new task of `principal`, or says which bound it hits.
    pub(crate) fn reserve(self: &Arc<Self>, principal: Option<&str>) -> Result<Slot, McpError> {
        let principal = principal.unwrap_or_default().to_owned();
        let mut running = self.running.lock().unwrap_or_else(|p| p.into_inner());
        if running.total >= self.config.max_running {
            return Err(McpError::internal(format!(
                "Server busy: {} tasks are running, the most this server runs at once; try again later",
                running.total
            )));
        }
        let mine = running.by_principal.get(&principal).copied().unwrap_or(0);
        if mine >= self.config.max_running_per_principal {
            return Err(McpError::internal(format!(
                "Too many tasks: you have {mine} running, the most one caller may have; wait for one to finish"
            )));
        }
        running.total = running.total.saturating_add(1);
        running.by_principal.insert(principal.clone(), mine.saturating_add(1));
        Ok(Slot {
            runtime: self.clone(),
            principal,
        })
    }

    /// How many tasks run in this process.
    pub(crate) fn running(&self) -> usize {
        self.running.lock().unwrap_or_else(|p| p.into_inner()).total
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut running = self.runtime.running.lock().unwrap_or_else(|p| p.into_inner());
        running.total = running.total.saturating_sub(1);
        if let Some(n) = running.by_principal.get_mut(&self.principal) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                running.by_principal.remove(&self.principal);
            }
        }
    }
}

/// A new task id: 128 random bits, hex.
pub(crate) fn new_id() -> String {
    crate::session::random_id()
}

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
mod kept;
pub(crate) mod legacy;
#[cfg(feature = "client")]
pub(crate) mod relay;
pub(crate) mod run;
mod store;
pub(crate) mod time;

pub(crate) use handle::{extension_required, AskBounds, Mode, Shared};
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
    /// When the client declared the extension (or a 2025-11-25 session
    /// sent the call with `task`); synchronously otherwise.
    Optional,
    /// Only as a task: a client without the extension gets -32021 naming
    /// it, a 2025-11-25 session's call without `task` -32601.
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
///
/// Callers are told apart by principal (a token's subject, or the
/// `principal_header`'s value); anonymous callers of the stand-alone HTTP
/// server by their address, so one of them cannot use up the others'
/// share (behind a proxy every caller has the proxy's address: set a
/// principal there). The bounds on kept records are this process's: with
/// replicas sharing a store, each keeps its own.
#[derive(Debug, Clone)]
pub struct TaskConfig {
    /// Time to live of a task from its creation, unless the tool sets one (1 hour).
    pub ttl_ms: u64,
    /// How long a task is kept once it has ended, if less than what is left
    /// of its time to live (10 minutes): its `ttlMs` is shortened to match.
    pub finished_ttl_ms: u64,
    /// Suggested poll interval, unless the tool sets one (500 ms).
    pub poll_interval_ms: u64,
    /// Tasks running at once in this process (1024).
    pub max_running: usize,
    /// Tasks running at once for one caller (64).
    pub max_running_per_principal: usize,
    /// Task records this process keeps at once, running and ended, until
    /// they expire (10,000); a new task beyond it is refused.
    pub max_kept: usize,
    /// Task records kept at once for one caller (256).
    pub max_kept_per_principal: usize,
    /// Bytes of results the ended tasks of this process keep at once
    /// (256 MiB); while they are over it, new tasks are refused.
    pub max_kept_bytes: usize,
    /// Largest serialized result a task may keep (4 MiB); a larger one fails the task.
    pub max_result_bytes: usize,
    /// Input requests one task may make over its life (32).
    pub max_inputs: u32,
    /// How long an input request waits for its answer (10 minutes): then
    /// the ask fails with [`TaskError::Unanswered`] and is withdrawn, so a
    /// task nobody answers ends rather than holding its place for its
    /// whole time to live.
    pub input_timeout: Duration,
    /// How long a cancelled task's handler may go on to clean up before it is dropped (2 s).
    pub cancel_grace: Duration,
}

impl Default for TaskConfig {
    fn default() -> Self {
        TaskConfig {
            ttl_ms: 3_600_000,
            finished_ttl_ms: 600_000,
            poll_interval_ms: 500,
            max_running: 1024,
            max_running_per_principal: 64,
            max_kept: 10_000,
            max_kept_per_principal: 256,
            max_kept_bytes: 256 << 20,
            max_result_bytes: 4 << 20,
            max_inputs: 32,
            input_timeout: Duration::from_secs(600),
            cancel_grace: Duration::from_secs(2),
        }
    }
}

/// Called with a task's record after each change a client may see.
pub(crate) type Notify = Arc<dyn Fn(&TaskRecord) + Send + Sync>;

/// The tasks of one server: the store, the settings, the count of tasks
/// running in this process and the ledger of the records it keeps.
pub(crate) struct TaskRuntime {
    pub store: Arc<dyn TaskStore>,
    pub config: TaskConfig,
    pub notify: Notify,
    counts: Mutex<Counts>,
    /// Cancelled when the server stops and its grace is over: the runners
    /// still going record their tasks failed and end.
    pub(crate) halt: crate::cancel::Cancellation,
    /// The upstreams whose tasks are served as this server's.
    #[cfg(feature = "client")]
    pub(crate) relays: relay::Relays,
}

#[derive(Default)]
struct Counts {
    running: usize,
    running_by_caller: HashMap<String, usize>,
    kept: kept::Kept,
}

/// A running task's place in the count (given back when dropped), and its
/// record's in the ledger of kept ones.
pub(crate) struct Slot {
    runtime: Arc<TaskRuntime>,
    caller: String,
}

impl TaskRuntime {
    pub(crate) fn new(store: Arc<dyn TaskStore>, config: TaskConfig, notify: Notify) -> Self {
        TaskRuntime {
            store,
            config,
            notify,
            counts: Mutex::new(Counts::default()),
            halt: crate::cancel::Cancellation::new(),
            #[cfg(feature = "client")]
            relays: relay::Relays::default(),
        }
    }

    fn counts(&self) -> std::sync::MutexGuard<'_, Counts> {
        self.counts.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits (at most `grace`) for the running tasks to end; then the ones
    /// still running are recorded `failed` ("the server stopped"), and it
    /// waits (at most 5 s more) for those records to be written, so that a
    /// client polling another replica learns at once, not when the lease
    /// runs out. Returns how many tasks were stopped that way.
    pub(crate) async fn stop(&self, grace: std::time::Duration) -> usize {
        let ended = |within: std::time::Duration| async move {
            // A grace too long for the clock is as good as none.
            let now = tokio::time::Instant::now();
            let deadline = now
                .checked_add(within)
                .unwrap_or_else(|| now + std::time::Duration::from_secs(100 * 365 * 86_400));
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

    /// Takes a place for a new task of `caller` (a principal, or an
    /// anonymous caller's address), or says which bound it hits.
    pub(crate) fn reserve(self: &Arc<Self>, caller: &str) -> Result<Slot, McpError> {
        let config = &self.config;
        let mut counts = self.counts();
        if counts.running >= config.max_running {
            return Err(McpError::internal(format!(
                "Server busy: {} tasks are running, the most this server runs at once; try again later",
                counts.running
            )));
        }
        let mine = counts.running_by_caller.get(caller).copied().unwrap_or(0);
        if mine >= config.max_running_per_principal {
            return Err(McpError::internal(format!(
                "Too many tasks: you have {mine} running, the most one caller may have; wait for one to finish"
            )));
        }
        let bounds = kept::Bounds {
            per_caller: config.max_kept_per_principal,
            total: config.max_kept,
            bytes: config.max_kept_bytes,
        };
        let keep_for = std::time::Duration::from_millis(config.finished_ttl_ms.min(config.ttl_ms));
        let later = format!("records of ended tasks are kept {} s", keep_for.as_secs());
        match counts.kept.check(caller, time::now_ms(), bounds) {
            Ok(()) => {}
            Err(kept::Full::Caller(n)) => {
                return Err(McpError::internal(format!(
                    "Too many tasks: the server keeps {n} of yours, the most one caller may have; \
                     try again once some expire ({later})"
                )))
            }
            Err(kept::Full::Total(n)) => {
                return Err(McpError::internal(format!(
                    "Server busy: it keeps {n} tasks, the most it keeps at once; try again later ({later})"
                )))
            }
            Err(kept::Full::Bytes(n)) => {
                return Err(McpError::internal(format!(
                    "Server busy: the results of ended tasks fill the {n} bytes it keeps; try again later ({later})"
                )))
            }
        }
        counts.running = counts.running.saturating_add(1);
        counts
            .running_by_caller
            .insert(caller.to_owned(), mine.saturating_add(1));
        Ok(Slot {
            runtime: self.clone(),
            caller: caller.to_owned(),
        })
    }

    /// How many tasks run in this process.
    pub(crate) fn running(&self) -> usize {
        self.counts().running
    }
}

impl Slot {
    /// The task's record was written, to be kept until `expires_ms` at most.
    pub(crate) fn created(&self, id: &str, expires_ms: u64) {
        self.runtime.counts().kept.add(&self.caller, id, expires_ms);
    }

    /// The task ended: its record is kept until `expires_ms` with `bytes`
    /// of result, or is gone (`None`).
    pub(crate) fn ended(&self, id: &str, kept: Option<(u64, usize)>) {
        self.runtime.counts().kept.ended(&self.caller, id, kept);
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut counts = self.runtime.counts();
        counts.running = counts.running.saturating_sub(1);
        if let Some(n) = counts.running_by_caller.get_mut(&self.caller) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                counts.running_by_caller.remove(&self.caller);
            }
        }
    }
}

/// The caller a task is counted for: its principal, else (an anonymous
/// caller) its address when the transport knows one, else everyone
/// anonymous together.
pub(crate) fn caller_key(principal: Option<&str>, peer: Option<std::net::IpAddr>) -> String {
    match (principal, peer) {
        (Some(p), _) => p.to_owned(),
        // Not a principal's name: those never hold a space and a bracket.
        (None, Some(ip)) => anonymous_key(ip),
        (None, None) => String::new(),
    }
}

/// `[anonymous 127.0.0.1]`: an IPv4 address written digit by digit (this
/// is on the path of every limited call, where `format!` costs a thousand
/// instructions), an IPv6 one's /64 (`[anonymous 2001:db8:1:2::]`: the
/// addresses a client holds count as one) by its `Display`.
fn anonymous_key(ip: std::net::IpAddr) -> String {
    let mut key = String::with_capacity(48);
    key.push_str("[anonymous ");
    match crate::peer::key(ip) {
        std::net::IpAddr::V4(v4) => {
            for (i, octet) in v4.octets().into_iter().enumerate() {
                if i > 0 {
                    key.push('.');
                }
                if octet >= 100 {
                    key.push(char::from(b'0' + octet / 100));
                }
                if octet >= 10 {
                    key.push(char::from(b'0' + octet / 10 % 10));
                }
                key.push(char::from(b'0' + octet % 10));
            }
        }
        std::net::IpAddr::V6(v6) => {
            use std::fmt::Write as _;
            let _ = write!(key, "{v6}");
        }
    }
    key.push(']');
    key
}

/// A finished record's time to live: what it had, or less, so that it is
/// kept `finished_ttl_ms` from `now` (never from the past).
pub(crate) fn finished_ttl(record: &TaskRecord, finished_ttl_ms: u64, now: u64) -> Option<u64> {
    let kept = now.saturating_sub(record.created_ms).saturating_add(finished_ttl_ms);
    Some(record.ttl_ms.map_or(kept, |ttl| ttl.min(kept)))
}

/// Whether a client declared the tasks extension.
pub(crate) fn declared(caps: &crate::protocol::ClientCapabilities) -> bool {
    caps.extensions
        .as_ref()
        .is_some_and(|e| e.contains_key(crate::protocol::TASKS_EXTENSION))
}

/// A new task id: 128 random bits, hex.
pub(crate) fn new_id() -> String {
    crate::session::random_id()
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_anonymous_callers_key_is_its_address_as_display_writes_it() {
        for ip in ["0.0.0.0", "127.0.0.1", "10.20.255.9", "192.168.100.1"] {
            let addr: std::net::IpAddr = ip.parse().unwrap();
            assert_eq!(
                crate::tasks::caller_key(None, Some(addr)),
                format!("[anonymous {addr}]")
            );
        }
        // An IPv6 client is its /64: the addresses it holds are one caller.
        for (ip, key) in [
            ("::1", "[anonymous ::]"),
            ("2001:db8::8a2e:370:7334", "[anonymous 2001:db8::]"),
            ("2001:db8:1:2:ffff::1", "[anonymous 2001:db8:1:2::]"),
            ("::ffff:10.0.0.7", "[anonymous 10.0.0.7]"),
        ] {
            assert_eq!(crate::tasks::caller_key(None, Some(ip.parse().unwrap())), key);
        }
        assert_eq!(crate::tasks::caller_key(Some("alice"), None), "alice");
    }
}

//! Where tasks live: the [`TaskStore`] trait and the in-memory default.
//!
//! The record of a task and its input queue live in the store; the work runs
//! on the replica that created it. Every other operation is a change to the
//! record made through [`TaskStore::update`] (atomic per record): queueing
//! input requests and setting status and result (the replica running the
//! task), delivering input responses and requesting cancellation (any
//! replica serving `tasks/update` or `tasks/cancel`). The running replica
//! learns of them through [`TaskStore::changed`]. A store shared by many
//! replicas (Redis, say) implements the same five methods.

use super::time::now_ms;
use crate::protocol::{DetailedTask, JsonObject, TaskStatus};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use tokio::sync::watch;

/// The future a [`TaskStore`] method returns.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

/// Why a store could not do what was asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// The store cannot be reached, or refused the operation.
    #[error("task store unavailable: {0}")]
    Unavailable(String),
    /// A record in the store does not read as one.
    #[error("task store record unreadable: {0}")]
    Corrupt(String),
    /// A record with this id exists already.
    #[error("task `{0}` exists already")]
    Exists(String),
}

impl StoreError {
    /// What a client is told when the store fails: a generic -32603. The
    /// detail (a Redis address, a record's text) is the operator's, so it
    /// goes to the log, never on the wire.
    pub(crate) fn to_client(&self) -> crate::error::McpError {
        tracing::error!("task store: {self}");
        crate::error::McpError::internal("Internal error: the task store failed")
    }
}

/// Everything the server keeps about one task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRecord {
    /// The task's identifier (128 random bits, hex).
    pub id: String,
    /// The principal that created it; only the same principal may see it.
    pub owner: Option<String>,
    /// Its status.
    pub status: TaskStatus,
    /// What it is doing, for people.
    pub status_message: Option<String>,
    /// Creation time, milliseconds since the Unix epoch.
    pub created_ms: u64,
    /// Time of the last change, milliseconds since the Unix epoch.
    pub updated_ms: u64,
    /// How long after creation it is kept (`None`: until removed).
    pub ttl_ms: Option<u64>,
    /// Suggested milliseconds between polls.
    pub poll_interval_ms: Option<u64>,
    /// Outstanding input requests, by key.
    pub input_requests: JsonObject,
    /// Answers delivered and not yet taken by the running replica, by key.
    pub input_responses: JsonObject,
    /// How many input requests the task has made over its life.
    pub input_count: u32,
    /// `completed`: the result.
    pub result: Option<JsonObject>,
    /// `failed`: the JSON-RPC error object.
    pub error: Option<JsonObject>,
    /// Bumped by the store on every change.
    pub version: u64,
    /// The W3C `traceparent` of the request that created it, when spans are
    /// exported: the task's own span and the spans of `tasks/*` requests for
    /// it link there, on any replica.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
}

impl TaskRecord {
    /// When the record may be dropped, if ever.
    pub fn expires_ms(&self) -> Option<u64> {
        self.ttl_ms.map(|ttl| self.created_ms.saturating_add(ttl))
    }

    /// Whether its time to live has passed at `now` (milliseconds).
    pub fn is_expired(&self, now: u64) -> bool {
        self.expires_ms().is_some_and(|at| now >= at)
    }

    /// The task as `tasks/get` and `notifications/tasks` show it.
    pub fn detailed(&self) -> DetailedTask {
        let mut task = self.summary();
        match self.status {
            TaskStatus::InputRequired => task.input_requests = Some(self.input_requests.clone()),
            TaskStatus::Completed => task.result = Some(self.result.clone().unwrap_or_default()),
            TaskStatus::Failed => {
                task.error = Some(self.error.clone().unwrap_or_else(|| {
                    let mut e = JsonObject::new();
                    e.insert("code".into(), (-32603).into());
                    e.insert("message".into(), "Internal error".into());
                    e
                }))
            }
            TaskStatus::Working | TaskStatus::Cancelled => {}
        }
        task
    }

    /// The task without its status payload (`CreateTaskResult`).
    pub fn summary(&self) -> DetailedTask {
        DetailedTask {
            task_id: self.id.clone(),
            status: self.status,
            status_message: self.status_message.clone(),
            created_at: super::time::iso8601(self.created_ms),
            last_updated_at: super::time::iso8601(self.updated_ms),
            ttl_ms: self.ttl_ms,
            poll_interval_ms: self.poll_interval_ms,
            input_requests: None,
            result: None,
            error: None,
        }
    }
}

/// The change [`TaskStore::update`] applies: returns whether it changed anything.
pub type TaskChange<'a> = &'a (dyn Fn(&mut TaskRecord) -> bool + Send + Sync);

/// Where tasks are kept. The in-memory [`MemoryTaskStore`] is the default;
/// replicas that share tasks share a store.
pub trait TaskStore: Send + Sync + 'static {
    /// Writes a new record. Resolves only when a [`get`](TaskStore::get) of
    /// it, on any replica, would find it (the creation result waits for it).
    fn create(&self, record: TaskRecord) -> StoreFuture<'_, ()>;

    /// The record, or `None` if unknown or expired.
    fn get<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<TaskRecord>>;

    /// Applies `change` atomically to the record (it may run more than once
    /// on a store that retries); when it returns true, bumps `version`, sets
    /// `updated_ms` and writes. Resolves to the record as it is afterwards,
    /// or `None` if it is unknown or expired.
    fn update<'a>(&'a self, id: &'a str, change: TaskChange<'a>) -> StoreFuture<'a, Option<TaskRecord>>;

    /// Resolves once the record's version is above `seen`, or it is gone.
    /// May also resolve spuriously; callers read the record again.
    fn changed<'a>(&'a self, id: &'a str, seen: u64) -> StoreFuture<'a, ()>;

    /// How often the replica running a task calls [`heartbeat`](TaskStore::heartbeat):
    /// `None` (the default) for a store that needs no lease, because it dies
    /// with the process that runs the tasks.
    fn heartbeat_interval(&self) -> Option<std::time::Duration> {
        None
    }

    /// Renews the lease of the replica running task `id`. A shared store
    /// marks a task whose lease ran out `failed`: its replica is gone.
    fn heartbeat<'a>(&'a self, id: &'a str) -> StoreFuture<'a, ()> {
        let _ = id;
        Box::pin(std::future::ready(Ok(())))
    }
}

/// Tasks in this process's memory: expired records are swept on access
/// (at most once a second), so memory stays bounded by the tasks alive.
#[derive(Default)]
pub struct MemoryTaskStore {
    inner: Mutex<Memory>,
}

#[derive(Default)]
struct Memory {
    records: HashMap<String, (TaskRecord, watch::Sender<u64>)>,
    last_sweep_ms: u64,
}

impl std::fmt::Debug for MemoryTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryTaskStore").field("tasks", &self.len()).finish()
    }
}

impl MemoryTaskStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many records it holds (expired ones not yet swept included).
    pub fn len(&self) -> usize {
        self.lock().records.len()
    }

    /// Whether it holds no record.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Memory> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Memory {
    fn sweep(&mut self, now: u64) {
        if now.saturating_sub(self.last_sweep_ms) < 1000 {
            return;
        }
        self.last_sweep_ms = now;
        // Dropping a record's sender wakes whoever waits on it.
        self.records.retain(|_, (record, _)| !record.is_expired(now));
    }

    fn live(&mut self, id: &str, now: u64) -> Option<&mut (TaskRecord, watch::Sender<u64>)> {
        if self.records.get(id).is_some_and(|(r, _)| r.is_expired(now)) {
            self.records.remove(id);
        }
        self.records.get_mut(id)
    }
}

impl TaskStore for MemoryTaskStore {
    fn create(&self, record: TaskRecord) -> StoreFuture<'_, ()> {
        let mut memory = self.lock();
        let now = now_ms();
        memory.sweep(now);
        let result = if memory.live(&record.id, now).is_some() {
            Err(StoreError::Exists(record.id))
        } else {
            let (tx, _) = watch::channel(record.version);
            memory.records.insert(record.id.clone(), (record, tx));
            Ok(())
        };
        Box::pin(std::future::ready(result))
    }

    fn get<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<TaskRecord>> {
        let mut memory = self.lock();
        let now = now_ms();
        memory.sweep(now);
        let found = memory.live(id, now).map(|(r, _)| r.clone());
        Box::pin(std::future::ready(Ok(found)))
    }

    fn update<'a>(&'a self, id: &'a str, change: TaskChange<'a>) -> StoreFuture<'a, Option<TaskRecord>> {
        let mut memory = self.lock();
        let now = now_ms();
        let found = memory.live(id, now).map(|(record, tx)| {
            if change(record) {
                record.version = record.version.saturating_add(1);
                record.updated_ms = now.max(record.updated_ms);
                tx.send_replace(record.version);
            }
            record.clone()
        });
        Box::pin(std::future::ready(Ok(found)))
    }

    fn changed<'a>(&'a self, id: &'a str, seen: u64) -> StoreFuture<'a, ()> {
        let rx = self.lock().records.get(id).map(|(_, tx)| tx.subscribe());
        Box::pin(async move {
            if let Some(mut rx) = rx {
                // An error means the record was dropped: that is a change too.
                let _ = rx.wait_for(|v| *v > seen).await;
            }
            Ok(())
        })
    }
}

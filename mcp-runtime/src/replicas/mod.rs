//! Many replicas on one Redis (the `redis` feature): a [`TaskStore`] whose
//! records, input queues and leases live in Redis, and an [`EventBus`] that
//! carries change events (list changes, resource updates, task status)
//! between replicas over one pub/sub channel.
//!
//! One [`RedisShared`] is both: `RedisShared::connect(url).await?`, then
//! [`RedisShared::apply`] to a builder. The command line of
//! [`main!`](crate::main!) does it when `MCP_REDIS_URL` is set.
//!
//! - Records: `mcp:task:{id}` (the id as a Cluster hash tag), JSON,
//!   expiring with the task's TTL (`PX`, no sweep); Redis 6.0 or later. Every change is a compare-and-set of the whole record in a
//!   Lua script that also publishes `{id} {version}` on `mcp:tasks`, so the
//!   replica running the task hears of answers and cancellation.
//! - Leases: `mcp:task-lease:{id}`, renewed by the running replica every
//!   third of [`LEASE`]; a read of a task that is not finished and whose
//!   lease is gone marks it `failed` (its replica died).
//! - Events: published on `mcp:events` by one writer task per replica (in
//!   order), received by one subscriber per replica (own events included)
//!   and handed to that replica's listeners. When Redis goes away the
//!   subscriber reconnects with backoff and the listen streams stay open;
//!   events published meanwhile are lost (the spec has no replay).

mod bus;
mod store;

use crate::server::{EventBus, ServerEvent};
use crate::tasks::TaskStore;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tokio::sync::{broadcast, mpsc, watch};

/// How long a task's lease lasts without renewal.
pub const LEASE: Duration = Duration::from_secs(6);

/// The environment variable `main!`'s command line reads: a Redis URL such
/// as `redis://127.0.0.1:6379`.
pub const REDIS_URL_ENV: &str = "MCP_REDIS_URL";

const EVENTS: &str = "mcp:events";
/// Events waiting to be published, at most.
const OUTBOX: usize = 4096;
const TASKS: &str = "mcp:tasks";

/// Why Redis could not be used.
#[derive(Debug, thiserror::Error)]
#[error("redis: {0}")]
pub struct RedisError(String);

impl From<redis::RedisError> for RedisError {
    fn from(e: redis::RedisError) -> Self {
        RedisError(e.to_string())
    }
}

/// A connection to the Redis that replicas share: the task store and the
/// event bus of one server. Cheap to clone.
#[derive(Clone)]
pub struct RedisShared {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for RedisShared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisShared").finish_non_exhaustive()
    }
}

struct Inner {
    conn: redis::aio::ConnectionManager,
    /// Events to publish, in order, by the writer task (bounded: while Redis
    /// is away, events beyond [`OUTBOX`] are dropped, not queued forever).
    outbox: mpsc::Sender<String>,
    /// Where received events go: this process's listeners (set by `start`).
    local: OnceLock<broadcast::Sender<ServerEvent>>,
    /// Local waiters for task changes: id → the last version heard of.
    waiters: Mutex<std::collections::HashMap<String, watch::Sender<u64>>>,
}

impl RedisShared {
    /// Connects to `url` (`redis://host:port/db`), and starts this replica's
    /// event writer and subscriber (they reconnect by themselves).
    pub async fn connect(url: &str) -> Result<Self, RedisError> {
        let client = redis::Client::open(url)?;
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_connection_timeout(Duration::from_secs(2))
            .set_response_timeout(Duration::from_secs(2));
        let conn = redis::aio::ConnectionManager::new_with_config(client.clone(), config).await?;
        let (outbox, rx) = mpsc::channel(OUTBOX);
        let inner = Arc::new(Inner {
            conn,
            outbox,
            local: OnceLock::new(),
            waiters: Mutex::new(Default::default()),
        });
        tokio::spawn(bus::write(inner.conn.clone(), rx));
        tokio::spawn(bus::subscribe(client, Arc::downgrade(&inner)));
        Ok(RedisShared { inner })
    }

    /// Keeps the builder's tasks in Redis and carries its events through it.
    pub fn apply(&self, builder: crate::server::ServerBuilder) -> crate::server::ServerBuilder {
        builder.task_store(self.task_store()).event_bus(self.event_bus())
    }

    /// The task store, for [`ServerBuilder::task_store`](crate::ServerBuilder::task_store).
    pub fn task_store(&self) -> Arc<dyn TaskStore> {
        Arc::new(self.clone())
    }

    /// The event bus, for [`ServerBuilder::event_bus`](crate::ServerBuilder::event_bus).
    pub fn event_bus(&self) -> Arc<dyn EventBus> {
        Arc::new(self.clone())
    }
}

//! Many replicas on one Redis (the `redis` feature): a [`TaskStore`] whose
//! records, input queues and leases live in Redis, and an [`EventBus`] that
//! carries change events (list changes, resource updates, task status)
//! between replicas over one pub/sub channel.
//!
//! One [`RedisShared`] is both: `RedisShared::connect(url).await?`, then
//! [`RedisShared::apply`] to a builder. The command line of
//! [`main!`](crate::main!) does it when `MCP_REDIS_URL` is set.
//!
//! Every name below starts with the deployment's namespace `{ns}`, so that
//! several servers share one Redis without hearing each other: the
//! server's name (`serverInfo.name`, given when the server is built), or
//! the one passed to [`RedisShared::connect_in`] (`MCP_REDIS_NAMESPACE` for
//! `main!`). Every message on the channels carries it too; a message of
//! another namespace, or one that does not parse, is ignored with a warning
//! (at most one a minute).
//!
//! - Records: `{ns}:task:{id}` (the id as a Cluster hash tag), JSON,
//!   expiring with the task's TTL (`PX`, no sweep); Redis 6.0 or later. Every change is a compare-and-set of the whole record in a
//!   Lua script that also publishes the id and version on `{ns}:tasks`, so the
//!   replica running the task hears of answers and cancellation.
//! - Leases: `{ns}:task-lease:{id}`, renewed by the running replica every
//!   third of [`LEASE`] (from a task of its own); a read of a task that is
//!   not finished and whose lease is gone marks it `failed` (its replica
//!   died), in a script that looks at the lease again, so a renewal in
//!   between wins.
//! - Task events on `{ns}:events` carry the task's id and version only;
//!   the listen streams that follow it read the record.
//! - Rate limits: `{ns}:rate:{cell}`, a cell's theoretical arrival time
//!   in microseconds of Redis's clock, checked and spent by one script
//!   (`rates.rs`), expiring when it holds nothing.
//! - Events: published on `{ns}:events` by one writer task per replica (in
//!   order), received by one subscriber per replica (own events included)
//!   and handed to that replica's listeners. When Redis goes away the
//!   subscriber reconnects with backoff and the listen streams stay open;
//!   events published meanwhile are lost (the spec has no replay).

mod bus;
mod names;
mod rates;
mod store;

pub use names::REDIS_NAMESPACE_ENV;

use crate::server::{EventBus, ServerEvent};
use crate::tasks::TaskStore;
use names::Names;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tokio::sync::{broadcast, mpsc, watch};

/// How long a task's lease lasts without renewal.
pub const LEASE: Duration = Duration::from_secs(6);

/// The environment variable `main!`'s command line reads: a Redis URL such
/// as `redis://127.0.0.1:6379`.
pub const REDIS_URL_ENV: &str = "MCP_REDIS_URL";

/// Events waiting to be published, at most.
const OUTBOX: usize = 4096;

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
        f.debug_struct("RedisShared")
            .field("namespace", &self.namespace())
            .finish_non_exhaustive()
    }
}

struct Inner {
    conn: redis::aio::ConnectionManager,
    /// Events to publish, in order, by the writer task (bounded: while Redis
    /// is away, events beyond [`OUTBOX`] are dropped, not queued forever).
    outbox: mpsc::Sender<bus::Outgoing>,
    /// What the subscriber hands messages to.
    hub: Arc<bus::Hub>,
    /// Told when the namespace is fixed: the subscriber waits for it.
    named: watch::Sender<bool>,
}

impl Inner {
    /// The names of this deployment, fixed on first use: the namespace given
    /// at connect, else the server's name given when it was built; a store
    /// used before any server was built with this bus gets [`names::FALLBACK`].
    fn names(&self) -> &Names {
        match self.hub.names.get() {
            Some(names) => names,
            None => {
                tracing::warn!(
                    "redis: used before any server was built with this bus and without a namespace: using {:?}",
                    names::FALLBACK
                );
                self.fix(Names::fallback(), "the default")
            }
        }
    }

    /// Fixes the namespace unless it already is; wakes the subscriber.
    fn fix(&self, names: Names, why: &str) -> &Names {
        let mut fixed = false;
        let names = self.hub.names.get_or_init(|| {
            fixed = true;
            names
        });
        if fixed {
            tracing::info!(
                "redis: namespace {:?} ({why}): channels {} and {}",
                names.namespace(),
                names.events(),
                names.tasks()
            );
            self.named.send_replace(true);
        }
        names
    }
}

impl RedisShared {
    /// Connects to `url` (`redis://host:port/db`), and starts this replica's
    /// event writer and subscriber (they reconnect by themselves). The
    /// namespace of its channels and keys is the name of the server built
    /// with it (see [`connect_in`](RedisShared::connect_in)).
    pub async fn connect(url: &str) -> Result<Self, RedisError> {
        Self::open(url, None).await
    }

    /// Like [`connect`](RedisShared::connect), with the namespace of every
    /// channel and key given rather than taken from the server's name:
    /// replicas of one deployment share it, other deployments on the same
    /// Redis use another. 1 to 128 characters, none of them whitespace,
    /// control characters or braces. Changing it is like changing the keys:
    /// replicas in different namespaces share no task and no event.
    pub async fn connect_in(url: &str, namespace: &str) -> Result<Self, RedisError> {
        let names = Names::given(namespace).map_err(RedisError)?;
        Self::open(url, Some(names)).await
    }

    async fn open(url: &str, names: Option<Names>) -> Result<Self, RedisError> {
        let client = redis::Client::open(url)?;
        // Reconnecting after Redis went away, every command waits for the
        // one attempt in progress: attempts 1 to 2 s apart (the delay starts
        // at 1 s and doubles, capped at 1 s, with jitter up to as much
        // again), so that a Redis back after a restart is reached within
        // about 2 s, well inside a task's lease (6 s). The client's default
        // multiplies the delay by 100 from one attempt to the next: a
        // restart of 3 s stalled every command for one to two minutes.
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_connection_timeout(Duration::from_secs(2))
            .set_response_timeout(Duration::from_secs(2))
            .set_factor(2)
            .set_max_delay(1_000)
            .set_number_of_retries(6);
        let conn = redis::aio::ConnectionManager::new_with_config(client.clone(), config).await?;
        let (outbox, rx) = mpsc::channel(OUTBOX);
        let (named, named_rx) = watch::channel(false);
        let inner = Arc::new(Inner {
            conn,
            outbox,
            hub: Arc::new(bus::Hub::new()),
            named,
        });
        if let Some(names) = names {
            inner.fix(names, "given");
        }
        tokio::spawn(bus::write(inner.conn.clone(), rx));
        tokio::spawn(bus::subscribe(client, Arc::downgrade(&inner), named_rx));
        Ok(RedisShared { inner })
    }

    /// The namespace of this deployment's channels and keys, once fixed (at
    /// connect when given, else when the server is built).
    pub fn namespace(&self) -> Option<&str> {
        self.inner.hub.names.get().map(Names::namespace)
    }

    /// Keeps the builder's tasks and rate-limit counts in Redis and carries
    /// its events through it.
    pub fn apply(&self, builder: crate::server::ServerBuilder) -> crate::server::ServerBuilder {
        builder
            .task_store(self.task_store())
            .event_bus(self.event_bus())
            .rate_store(self.rate_store())
    }

    /// The rate-limit counts, for [`ServerBuilder::rate_store`](crate::ServerBuilder::rate_store).
    pub fn rate_store(&self) -> Arc<dyn crate::limits::RateStore> {
        Arc::new(self.clone())
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

/// Local waiters for task changes: id → the last version heard of.
type Waiters = Mutex<std::collections::HashMap<String, watch::Sender<u64>>>;

/// Where this process's listeners are (set by `EventBus::start`).
type Local = OnceLock<broadcast::Sender<ServerEvent>>;

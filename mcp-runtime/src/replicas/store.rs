//! The [`TaskStore`] on Redis: a record per task with its TTL, changed by
//! compare-and-set, and a lease per running task.

use super::{RedisShared, LEASE};
use crate::protocol::{JsonObject, TaskStatus};
use crate::tasks::{StoreError, StoreFuture, TaskChange, TaskRecord, TaskStore};
use std::time::Duration;
use tokio::sync::watch;

/// Writes a new record with its expiry (milliseconds from now, `0` for
/// none) and its first lease, and announces it. (Needs Redis 6.0 or later,
/// for `KEEPTTL` below.)
const CREATE: &str = r"
local ok
if ARGV[2] == '0' then
  ok = redis.call('SET', KEYS[1], ARGV[1], 'NX')
else
  ok = redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])
end
if not ok then return 0 end
redis.call('SET', KEYS[2], '1', 'PX', ARGV[3])
redis.call('PUBLISH', ARGV[4], ARGV[5])
return 1
";

/// Replaces the record if it is still exactly what was read, and announces
/// it. With a second key (a lease), only while that lease is gone: the
/// check and the write are one step, so a renewal in between wins.
/// ARGV[5], when not `0`, is the record's new expiry in milliseconds from
/// now (a finished task is kept for less time).
const SWAP: &str = r"
if #KEYS > 1 and redis.call('EXISTS', KEYS[2]) == 1 then return 2 end
local current = redis.call('GET', KEYS[1])
if not current then return -1 end
if current ~= ARGV[1] then return 0 end
if ARGV[5] == '0' then
  redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
else
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[5])
end
redis.call('PUBLISH', ARGV[3], ARGV[4])
return 1
";

fn unavailable(e: redis::RedisError) -> StoreError {
    StoreError::Unavailable(e.to_string())
}

/// Runs `cmd`. A connection Redis dropped (it restarted) fails the first
/// command after it, however long ago, before sending it; the manager
/// reconnects then, and the command is sent once more.
pub(super) async fn query<T: redis::FromRedisValue>(
    conn: &redis::aio::ConnectionManager,
    cmd: &redis::Cmd,
) -> Result<T, StoreError> {
    let mut conn = conn.clone();
    match cmd.query_async(&mut conn).await {
        Err(e) if e.is_connection_dropped() => cmd.query_async(&mut conn).await.map_err(unavailable),
        done => done.map_err(unavailable),
    }
}

fn lease_ms() -> u64 {
    u64::try_from(LEASE.as_millis()).unwrap_or(u64::MAX)
}

impl RedisShared {
    async fn read(&self, id: &str) -> Result<Option<(String, TaskRecord)>, StoreError> {
        let text: Option<String> = query(
            &self.inner.conn,
            redis::cmd("GET").arg(self.inner.names().record_key(id)),
        )
        .await?;
        match text {
            None => Ok(None),
            Some(text) => {
                let record = serde_json::from_str(&text).map_err(|e| StoreError::Corrupt(e.to_string()))?;
                Ok(Some((text, record)))
            }
        }
    }

    async fn swap(&self, id: &str, change: TaskChange<'_>) -> Result<Option<TaskRecord>, StoreError> {
        self.swap_unless_leased(id, change, false)
            .await
            .map(|swapped| match swapped {
                Swapped::Done(record) => record,
                // Not asked to look at the lease.
                Swapped::Leased(record) => Some(record),
            })
    }

    /// Compare-and-set of the record; with `only_unleased`, only while its
    /// lease is gone (checked in the same script).
    async fn swap_unless_leased(
        &self,
        id: &str,
        change: TaskChange<'_>,
        only_unleased: bool,
    ) -> Result<Swapped, StoreError> {
        // Compare-and-set: another replica's change in between means read and try again.
        for _ in 0..32 {
            let Some((old, mut record)) = self.read(id).await? else {
                return Ok(Swapped::Done(None));
            };
            let expires_before = record.expires_ms();
            if !change(&mut record) {
                return Ok(Swapped::Done(Some(record)));
            }
            record.version = record.version.saturating_add(1);
            let now = crate::tasks::time::now_ms();
            record.updated_ms = now.max(record.updated_ms);
            // A change that brings the expiry forward (a finished task) sets it anew.
            let expiry = match record.expires_ms() {
                Some(at) if expires_before.is_none_or(|before| at < before) => at.saturating_sub(now).max(1),
                _ => 0,
            };
            let new = serde_json::to_string(&record).map_err(|e| StoreError::Corrupt(e.to_string()))?;
            let names = self.inner.names();
            let mut script = redis::cmd("EVAL");
            script
                .arg(SWAP)
                .arg(if only_unleased { 2 } else { 1 })
                .arg(names.record_key(id));
            if only_unleased {
                script.arg(names.lease_key(id));
            }
            script
                .arg(&old)
                .arg(&new)
                .arg(names.tasks())
                .arg(super::bus::task_message(names.namespace(), id, record.version))
                .arg(expiry);
            let swapped: i64 = query(&self.inner.conn, &script).await?;
            match swapped {
                1 => return Ok(Swapped::Done(Some(record))),
                -1 => return Ok(Swapped::Done(None)),
                2 => {
                    let Some((_, current)) = self.read(id).await? else {
                        return Ok(Swapped::Done(None));
                    };
                    return Ok(Swapped::Leased(current));
                }
                _ => tokio::task::yield_now().await,
            }
        }
        Err(StoreError::Unavailable(format!(
            "task {id}: too many concurrent changes"
        )))
    }

    /// A record that is not finished and whose lease ran out is `failed`.
    /// The lease is looked at again in the script that writes the failure,
    /// so a renewal that comes after the first look keeps the task alive.
    async fn check_lease(&self, record: TaskRecord) -> Result<Option<TaskRecord>, StoreError> {
        if record.status.is_terminal() {
            return Ok(Some(record));
        }
        let alive: i64 = query(
            &self.inner.conn,
            redis::cmd("EXISTS").arg(self.inner.names().lease_key(&record.id)),
        )
        .await?;
        if alive == 1 {
            return Ok(Some(record));
        }
        let failed = self
            .swap_unless_leased(
                &record.id,
                &|r| {
                    if r.status.is_terminal() {
                        return false;
                    }
                    let mut error = JsonObject::new();
                    error.insert("code".into(), (-32603).into());
                    error.insert(
                        "message".into(),
                        "the server replica running this task stopped before it finished".into(),
                    );
                    r.status = TaskStatus::Failed;
                    r.status_message = Some("the server replica running this task stopped".into());
                    r.error = Some(error);
                    r.input_requests.clear();
                    r.input_responses.clear();
                    true
                },
                true,
            )
            .await?;
        match failed {
            Swapped::Done(record) => {
                if let Some(r) = &record {
                    if r.status == TaskStatus::Failed {
                        tracing::warn!(task = %r.id, "the replica running the task stopped: marked it failed");
                        // Streams that follow the task hear of it, on every
                        // replica, as of any other change.
                        crate::server::EventBus::publish(
                            self,
                            &crate::server::ServerEvent::Task {
                                id: r.id.clone(),
                                version: r.version,
                            },
                        );
                    }
                }
                Ok(record)
            }
            Swapped::Leased(record) => Ok(Some(record)),
        }
    }
}

/// How a compare-and-set that minds the lease ended.
enum Swapped {
    /// Written (or nothing to write, or gone): the record as it is now.
    Done(Option<TaskRecord>),
    /// Not written: the lease is alive again. The record as it is.
    Leased(TaskRecord),
}

impl TaskStore for RedisShared {
    fn create(&self, record: TaskRecord) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            let text = serde_json::to_string(&record).map_err(|e| StoreError::Corrupt(e.to_string()))?;
            let names = self.inner.names();
            let created: i64 = query(
                &self.inner.conn,
                redis::cmd("EVAL")
                    .arg(CREATE)
                    .arg(2)
                    .arg(names.record_key(&record.id))
                    .arg(names.lease_key(&record.id))
                    .arg(&text)
                    // Relative to Redis's clock, not ours: a skewed clock cannot expire it at once.
                    .arg(
                        record
                            .expires_ms()
                            .map_or(0, |at| at.saturating_sub(crate::tasks::time::now_ms()).max(1)),
                    )
                    .arg(lease_ms())
                    .arg(names.tasks())
                    .arg(super::bus::task_message(names.namespace(), &record.id, record.version)),
            )
            .await?;
            // Redis answered after the write: every replica's GET sees it now.
            if created == 1 {
                Ok(())
            } else {
                Err(StoreError::Exists(record.id))
            }
        })
    }

    fn get<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<TaskRecord>> {
        Box::pin(async move {
            match self.read(id).await? {
                None => Ok(None),
                Some((_, record)) => self.check_lease(record).await,
            }
        })
    }

    fn update<'a>(&'a self, id: &'a str, change: TaskChange<'a>) -> StoreFuture<'a, Option<TaskRecord>> {
        Box::pin(self.swap(id, change))
    }

    fn changed<'a>(&'a self, id: &'a str, seen: u64) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let mut rx = self
                .inner
                .hub
                .lock_waiters()
                .entry(id.to_owned())
                .or_insert_with(|| watch::channel(0).0)
                .subscribe();
            // A change may have come before this replica listened.
            match self.read(id).await? {
                Some((_, record)) if record.version <= seen => {}
                _ => return Ok(()),
            }
            // Spurious wake-ups are allowed: a missed message costs a second.
            let _ = tokio::time::timeout(Duration::from_secs(1), rx.wait_for(|v| *v > seen)).await;
            Ok(())
        })
    }

    fn heartbeat_interval(&self) -> Option<Duration> {
        Some(LEASE / 3)
    }

    fn heartbeat<'a>(&'a self, id: &'a str) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let _: () = query(
                &self.inner.conn,
                redis::cmd("SET")
                    .arg(self.inner.names().lease_key(id))
                    .arg(1)
                    .arg("PX")
                    .arg(lease_ms()),
            )
            .await?;
            Ok(())
        })
    }
}

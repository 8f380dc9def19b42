//! Where the desk's data lives: an SQLite file by default (`after-sales.db`
//! in the working directory, created with its schema on first use), or the
//! database `DATABASE_URL` names (`postgres://...` for replicas that share
//! one; `sqlite://PATH` for another file).
//!
//! The pool is opened in the background from the start (`main.rs`'s
//! `on_start`; else the first time a handler needs it): a database that is
//! down is retried with backoff (0.5 s doubling up to 10 s), said on stderr
//! at each try, `/readyz` names it until it is reached, and every call
//! meanwhile gets a tool error saying so, at once. The migrations in `migrations/` run each time
//! it is reached (those already applied are skipped; on PostgreSQL under a
//! lock, so replicas starting together apply them once).

use sqlx::any::AnyPoolOptions;
use sqlx::{AnyConnection, AnyPool, Connection};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// The schema, embedded at build time from `examples/after-sales/migrations`.
static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("examples/after-sales/migrations");

/// The database used when `DATABASE_URL` is not set.
pub const DEFAULT_URL: &str = "sqlite://after-sales.db";

/// How long a first call waits for the first try to end, and how long one
/// try may take to connect.
const FIRST_WAIT: Duration = Duration::from_secs(5);
/// The first wait between two tries, and the longest.
const FIRST_RETRY: Duration = Duration::from_millis(500);
const LONGEST_RETRY: Duration = Duration::from_secs(10);

/// How far the connection is.
#[derive(Clone)]
enum Status {
    /// Nobody asked yet, or the first try is under way.
    Connecting,
    /// The last try failed, with this error; another follows.
    Down(String),
    /// Reached and migrated.
    Up(AnyPool),
}

/// The desk's database, opened on first use and shared by every handler.
pub struct Db {
    /// The URL, which may hold a password: never logged.
    url: String,
    /// The URL as logs and errors show it.
    shown: String,
    started: AtomicBool,
    status: Arc<watch::Sender<Status>>,
}

impl Db {
    /// The database `DATABASE_URL` names, else [`DEFAULT_URL`]. Only SQLite
    /// and PostgreSQL URLs are taken.
    pub fn from_env() -> Result<Db, String> {
        let url = std::env::var("DATABASE_URL")
            .ok()
            .filter(|u| !u.trim().is_empty())
            .unwrap_or_else(|| DEFAULT_URL.to_owned());
        Db::new(url.trim())
    }

    /// The database at `url` (not connected yet).
    pub fn new(url: &str) -> Result<Db, String> {
        let shown = mcp_runtime::cli::redacted(url);
        let url = if url.starts_with("sqlite:") {
            // A file that does not exist yet is created (with its schema).
            if url.contains("mode=") {
                url.to_owned()
            } else if url.contains('?') {
                format!("{url}&mode=rwc")
            } else {
                format!("{url}?mode=rwc")
            }
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            url.to_owned()
        } else {
            return Err(format!(
                "DATABASE_URL={shown}: the desk keeps its data in SQLite (sqlite://PATH) or PostgreSQL (postgres://...)"
            ));
        };
        sqlx::any::install_default_drivers();
        let (status, _) = watch::channel(Status::Connecting);
        Ok(Db {
            url,
            shown,
            started: AtomicBool::new(false),
            status: Arc::new(status),
        })
    }

    /// The database as logs show it (without its password).
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// Starts connecting now rather than on first use; the server is not
    /// ready (`/readyz` names the database) until it is reached.
    pub fn connect_at_start(&self, awaiting: mcp_runtime::Awaiting) {
        if !self.started.swap(true, Ordering::AcqRel) {
            tokio::spawn(connect(self.url.clone(), self.shown.clone(), self.status.clone()));
        }
        let mut status = self.status.subscribe();
        tokio::spawn(async move {
            let _ = status.wait_for(|s| matches!(s, Status::Up(_))).await;
            awaiting.ready();
        });
    }

    /// The pool, once the database was reached; the first call starts
    /// connecting and waits for the first try (at most [`FIRST_WAIT`]).
    pub async fn pool(&self) -> Result<AnyPool, String> {
        if let Status::Up(pool) = &*self.status.borrow() {
            return Ok(pool.clone());
        }
        if !self.started.swap(true, Ordering::AcqRel) {
            tokio::spawn(connect(self.url.clone(), self.shown.clone(), self.status.clone()));
        }
        let mut status = self.status.subscribe();
        let settled = tokio::time::timeout(FIRST_WAIT, status.wait_for(|s| !matches!(s, Status::Connecting))).await;
        let why = match settled {
            Ok(Ok(status)) => match &*status {
                Status::Up(pool) => return Ok(pool.clone()),
                Status::Down(why) => why.clone(),
                Status::Connecting => "still connecting".to_owned(),
            },
            Ok(Err(_)) => "the connecting task ended".to_owned(),
            Err(_) => format!("no answer within {} s", FIRST_WAIT.as_secs()),
        };
        Err(format!(
            "the desk's database ({}) is not reachable yet: {why}; the server keeps trying, so try again shortly",
            self.shown
        ))
    }
}

/// Tries to reach the database until it is, then publishes the pool.
async fn connect(url: String, shown: String, status: Arc<watch::Sender<Status>>) {
    let mut wait = FIRST_RETRY;
    let mut tries = 1u32;
    loop {
        match open(&url).await {
            Ok(pool) => {
                match tries {
                    1 => tracing::info!("database {shown} reached; schema up to date"),
                    n => tracing::info!("database {shown} reached after {n} tries; schema up to date"),
                }
                status.send_replace(Status::Up(pool));
                return;
            }
            Err(why) => {
                tracing::warn!("database {shown} not reachable ({why}); next try in {wait:?}");
                status.send_replace(Status::Down(why));
            }
        }
        tokio::time::sleep(wait).await;
        wait = wait.saturating_mul(2).min(LONGEST_RETRY);
        tries = tries.saturating_add(1);
    }
}

/// One try: a first connection (whose error says what is wrong, where the
/// pool's would only say it timed out), then the pool and the migrations.
async fn open(url: &str) -> Result<AnyPool, String> {
    let probe = tokio::time::timeout(FIRST_WAIT, AnyConnection::connect(url))
        .await
        .map_err(|_| format!("no connection within {} s", FIRST_WAIT.as_secs()))?
        .map_err(|e| e.to_string())?;
    let _ = probe.close().await;
    let options = AnyPoolOptions::new().acquire_timeout(FIRST_WAIT);
    // An in-memory SQLite database lives in its connection: one, kept open.
    let in_memory = url.starts_with("sqlite:") && (url.contains(":memory:") || url.contains("mode=memory"));
    let options = match in_memory {
        true => options.max_connections(1).idle_timeout(None).max_lifetime(None),
        false => options.max_connections(8),
    };
    let pool = options.connect(url).await.map_err(|e| e.to_string())?;
    if url.starts_with("sqlite:") {
        // Write-ahead logging lets several processes read while one writes
        // (the busy timeout, 5 s, makes writers take turns). The mode is kept
        // in the file; when another process holds a lock now, the next start sets it.
        if let Err(e) = sqlx::query("PRAGMA journal_mode = WAL").execute(&pool).await {
            tracing::debug!("journal_mode = WAL not set now: {e}");
        }
    }
    migrate(pool, url.starts_with("sqlite:"))
        .await
        .map_err(|e| format!("cannot apply the migrations: {e}"))
}

/// Applies the migrations not applied yet. PostgreSQL's migrator takes a
/// lock; SQLite's takes none, so processes that open a new file at the same
/// moment may both apply the first migration, and the one that commits
/// second fails: looking again a moment later, it finds them applied.
async fn migrate(pool: AnyPool, sqlite: bool) -> Result<AnyPool, sqlx::migrate::MigrateError> {
    let mut looks_left = if sqlite { 20 } else { 0 };
    loop {
        match MIGRATOR.run(&pool).await {
            Ok(()) => return Ok(pool),
            Err(e) if looks_left == 0 => return Err(e),
            Err(_) => {
                looks_left -= 1;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

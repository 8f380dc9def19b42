//! The desk's data: orders, tickets and their refunds, exports and the audit
//! log, in the database of `db.rs`. Every query is a runtime one
//! (`sqlx::query` with `$n` binds, which SQLite and PostgreSQL both read), so
//! the build needs no database; `tests/after_sales.rs` runs each on both.
//! A failed query is a [`DeskError`], which tools return as their error.

use crate::db::Db;
use crate::RefundMethod;
use sqlx::any::AnyRow;
use sqlx::Row;
use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

/// An order a customer placed.
#[derive(Debug, Clone)]
pub struct Order {
    pub id: String,
    pub customer: String,
    pub item: String,
    pub total_cents: u64,
}

/// Where a ticket is.
#[mcp_runtime::schema]
#[derive(Debug, Clone, Copy, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// The return request was received.
    Received,
    /// The goods are being inspected.
    Inspecting,
    /// The refund was issued.
    Refunded,
}

/// An after-sales ticket.
#[mcp_runtime::schema]
#[derive(Debug, Clone)]
pub struct Ticket {
    /// The ticket id, like `T-1`.
    pub id: String,
    /// The order returned.
    pub order_id: String,
    /// The customer.
    pub customer: String,
    /// The item returned.
    pub item: String,
    /// Why it was returned.
    pub reason: String,
    /// How the refund is paid.
    pub refund_method: RefundMethod,
    /// The refund, in cents.
    pub refund_cents: u64,
    /// A note from the customer.
    pub note: Option<String>,
    /// Where the ticket is.
    pub stage: Stage,
}

/// A new ticket and its refund, as the customer chose it.
pub struct NewTicket<'a> {
    /// The number drawn for it with [`Desk::draw_ticket_number`].
    pub number: i64,
    pub order: &'a Order,
    pub reason: String,
    pub method: RefundMethod,
    pub note: Option<String>,
    /// Who opens it (for the audit log).
    pub by: &'a str,
}

/// What went wrong reaching the data, said so that the caller can act on it.
#[derive(Debug)]
pub enum DeskError {
    /// The database was not reached (yet).
    Unreachable(String),
    /// A query failed.
    Query { doing: &'static str, error: sqlx::Error },
    /// A value in the database that this server does not write.
    Unreadable(String),
    /// What was asked cannot be done to the data as it is.
    Refused(String),
}

impl fmt::Display for DeskError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeskError::Unreachable(why) | DeskError::Refused(why) => f.write_str(why),
            DeskError::Query { doing, error } => write!(f, "the desk's database failed while {doing}: {error}"),
            DeskError::Unreadable(what) => write!(f, "the desk's database holds {what}, which this server cannot read"),
        }
    }
}

impl From<DeskError> for String {
    fn from(e: DeskError) -> String {
        e.to_string()
    }
}

/// Adds what was being done to a failed query's error, and logs it.
fn failed(doing: &'static str) -> impl FnOnce(sqlx::Error) -> DeskError {
    move |error| {
        tracing::warn!("database error while {doing}: {error}");
        DeskError::Query { doing, error }
    }
}

/// The ticket query, with `$tail` (a condition, an order) after its joins;
/// [`ticket_from`] reads its rows.
macro_rules! ticket_query {
    ($tail:literal) => {
        concat!(
            "SELECT t.number, t.order_id, o.customer, o.item, t.reason, r.method, r.amount_cents, r.note, t.stage ",
            "FROM tickets t JOIN orders o ON o.id = t.order_id JOIN refunds r ON r.ticket_number = t.number ",
            $tail
        )
    };
}

/// The desk: its database and what it knows to do with it.
pub struct Desk {
    db: std::sync::Arc<Db>,
}

impl Desk {
    pub fn new(db: Db) -> Self {
        Desk {
            db: std::sync::Arc::new(db),
        }
    }

    /// Its database, to connect at start.
    pub fn db(&self) -> std::sync::Arc<Db> {
        self.db.clone()
    }

    async fn pool(&self) -> Result<sqlx::AnyPool, DeskError> {
        self.db.pool().await.map_err(DeskError::Unreachable)
    }

    pub async fn order(&self, id: &str) -> Result<Option<Order>, DeskError> {
        let row = sqlx::query("SELECT id, customer, item, total_cents FROM orders WHERE id = $1")
            .bind(id)
            .fetch_optional(&self.pool().await?)
            .await
            .map_err(failed("reading the order"))?;
        row.as_ref().map(order_from).transpose()
    }

    /// The ticket `T-n`, if there is one.
    pub async fn ticket(&self, id: &str) -> Result<Option<Ticket>, DeskError> {
        let Some(number) = ticket_number(id) else {
            return Ok(None);
        };
        let sql = ticket_query!("WHERE t.number = $1");
        let row = sqlx::query(sql)
            .bind(number)
            .fetch_optional(&self.pool().await?)
            .await
            .map_err(failed("reading the ticket"))?;
        row.as_ref().map(ticket_from).transpose()
    }

    /// The tickets opened from `from_ms` (included) to `to_ms` (excluded), by number.
    pub async fn tickets_opened(&self, from_ms: i64, to_ms: i64) -> Result<Vec<Ticket>, DeskError> {
        let sql = ticket_query!("WHERE t.opened_at_ms >= $1 AND t.opened_at_ms < $2 ORDER BY t.number");
        let rows = sqlx::query(sql)
            .bind(from_ms)
            .bind(to_ms)
            .fetch_all(&self.pool().await?)
            .await
            .map_err(failed("reading the tickets"))?;
        rows.iter().map(ticket_from).collect()
    }

    /// A new ticket number, never drawn before on any replica of this
    /// database (one that is not used leaves a gap, as sequences do).
    pub async fn draw_ticket_number(&self) -> Result<i64, DeskError> {
        sqlx::query_scalar::<_, i64>("UPDATE counters SET value = value + 1 WHERE name = 'ticket' RETURNING value")
            .fetch_one(&self.pool().await?)
            .await
            .map_err(failed("drawing a ticket number"))
    }

    /// Opens the ticket and records its refund and an audit line, in one
    /// transaction: all of it is written, or (on any error) none. Opening a
    /// number that is already open changes nothing and returns that ticket,
    /// so a client that retries the last round gets the same one.
    pub async fn open_ticket(&self, new: NewTicket<'_>) -> Result<Ticket, DeskError> {
        let doing = "opening the ticket";
        let mut tx = self.pool().await?.begin().await.map_err(failed(doing))?;
        let inserted = sqlx::query(
            "INSERT INTO tickets (number, order_id, reason, stage, opened_by, opened_at_ms) \
             VALUES ($1, $2, $3, 'received', $4, $5) ON CONFLICT (number) DO NOTHING",
        )
        .bind(new.number)
        .bind(&new.order.id)
        .bind(&new.reason)
        .bind(new.by)
        .bind(now_ms())
        .execute(&mut *tx)
        .await
        .map_err(failed(doing))?
        .rows_affected();
        if inserted == 1 {
            let amount = i64::try_from(new.method.refund_cents(new.order.total_cents)).unwrap_or(i64::MAX);
            sqlx::query("INSERT INTO refunds (ticket_number, method, amount_cents, note) VALUES ($1, $2, $3, $4)")
                .bind(new.number)
                .bind(new.method.as_str())
                .bind(amount)
                .bind(new.note.as_deref())
                .execute(&mut *tx)
                .await
                .map_err(failed(doing))?;
            let detail = format!("{} refund {} {amount}", new.order.id, new.method.as_str());
            audit(&mut tx, new.by, "ticket_opened", &format!("T-{}", new.number), &detail)
                .await
                .map_err(failed(doing))?;
        }
        let sql = ticket_query!("WHERE t.number = $1");
        let row = sqlx::query(sql)
            .bind(new.number)
            .fetch_one(&mut *tx)
            .await
            .map_err(failed(doing))?;
        let ticket = ticket_from(&row)?;
        tx.commit().await.map_err(failed(doing))?;
        Ok(ticket)
    }

    /// Pays the refund of ticket `T-n` another way, with an audit line, in
    /// one transaction. `Ok(None)`: there is no such ticket. A refund already
    /// paid is not changed: [`DeskError::Refused`].
    pub async fn change_refund(&self, id: &str, method: RefundMethod, by: &str) -> Result<Option<Ticket>, DeskError> {
        let Some(number) = ticket_number(id) else {
            return Ok(None);
        };
        let doing = "changing the refund";
        let mut tx = self.pool().await?.begin().await.map_err(failed(doing))?;
        // The ticket's row is taken first (PostgreSQL locks it, SQLite the
        // database), so the stage read next is the latest: a payment that
        // sets it to refunded meanwhile is waited for, not overwritten by a
        // change checked against the stage before it.
        sqlx::query("UPDATE tickets SET stage = stage WHERE number = $1")
            .bind(number)
            .execute(&mut *tx)
            .await
            .map_err(failed(doing))?;
        let sql = ticket_query!("WHERE t.number = $1");
        let Some(row) = sqlx::query(sql)
            .bind(number)
            .fetch_optional(&mut *tx)
            .await
            .map_err(failed(doing))?
        else {
            return Ok(None);
        };
        let before = ticket_from(&row)?;
        if before.stage == Stage::Refunded {
            return Err(DeskError::Refused(format!("the refund of {id} was already paid")));
        }
        let total: i64 = sqlx::query_scalar("SELECT total_cents FROM orders WHERE id = $1")
            .bind(&before.order_id)
            .fetch_one(&mut *tx)
            .await
            .map_err(failed(doing))?;
        let amount = i64::try_from(method.refund_cents(cents(total)?)).unwrap_or(i64::MAX);
        sqlx::query("UPDATE refunds SET method = $1, amount_cents = $2 WHERE ticket_number = $3")
            .bind(method.as_str())
            .bind(amount)
            .bind(number)
            .execute(&mut *tx)
            .await
            .map_err(failed(doing))?;
        let detail = format!("{} -> {} {amount}", before.refund_method.as_str(), method.as_str());
        audit(&mut tx, by, "refund_changed", id, &detail)
            .await
            .map_err(failed(doing))?;
        let row = sqlx::query(sql)
            .bind(number)
            .fetch_one(&mut *tx)
            .await
            .map_err(failed(doing))?;
        let ticket = ticket_from(&row)?;
        tx.commit().await.map_err(failed(doing))?;
        Ok(Some(ticket))
    }

    /// The CSV exported for `month`, if any.
    pub async fn export(&self, month: &str) -> Result<Option<String>, DeskError> {
        sqlx::query_scalar::<_, String>("SELECT csv FROM exports WHERE month = $1")
            .bind(month)
            .fetch_optional(&self.pool().await?)
            .await
            .map_err(failed("reading the export"))
    }

    /// Keeps (or replaces) the CSV of `month`, with an audit line, in one transaction.
    pub async fn save_export(&self, month: &str, csv: &str, tickets: usize, by: &str) -> Result<(), DeskError> {
        let doing = "saving the export";
        let mut tx = self.pool().await?.begin().await.map_err(failed(doing))?;
        let count = i64::try_from(tickets).unwrap_or(i64::MAX);
        sqlx::query(
            "INSERT INTO exports (month, csv, tickets, made_at_ms) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (month) DO UPDATE SET csv = excluded.csv, tickets = excluded.tickets, \
             made_at_ms = excluded.made_at_ms",
        )
        .bind(month)
        .bind(csv)
        .bind(count)
        .bind(now_ms())
        .execute(&mut *tx)
        .await
        .map_err(failed(doing))?;
        let subject = format!("exports://{month}.csv");
        audit(&mut tx, by, "export_saved", &subject, &format!("{tickets} tickets"))
            .await
            .map_err(failed(doing))?;
        tx.commit().await.map_err(failed(doing))
    }
}

/// A line of the audit log, in the caller's transaction.
async fn audit(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    actor: &str,
    action: &str,
    subject: &str,
    detail: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query("INSERT INTO audit_log (at_ms, actor, action, subject, detail) VALUES ($1, $2, $3, $4, $5)")
        .bind(now_ms())
        .bind(actor)
        .bind(action)
        .bind(subject)
        .bind(detail)
        .execute(&mut **tx)
        .await
        .map(|_| ())
}

/// The number of a ticket id like `T-12` (written so: no sign, no leading zero).
fn ticket_number(id: &str) -> Option<i64> {
    let digits = id.strip_prefix("T-")?;
    if digits.starts_with('0') || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

fn order_from(row: &AnyRow) -> Result<Order, DeskError> {
    let doing = "reading the order";
    Ok(Order {
        id: row.try_get("id").map_err(failed(doing))?,
        customer: row.try_get("customer").map_err(failed(doing))?,
        item: row.try_get("item").map_err(failed(doing))?,
        total_cents: cents(row.try_get("total_cents").map_err(failed(doing))?)?,
    })
}

fn ticket_from(row: &AnyRow) -> Result<Ticket, DeskError> {
    let doing = "reading the ticket";
    let get_text = |column: &str| row.try_get::<String, _>(column).map_err(failed(doing));
    let number: i64 = row.try_get("number").map_err(failed(doing))?;
    let method = get_text("method")?;
    let stage = get_text("stage")?;
    Ok(Ticket {
        id: format!("T-{number}"),
        order_id: get_text("order_id")?,
        customer: get_text("customer")?,
        item: get_text("item")?,
        reason: get_text("reason")?,
        refund_method: RefundMethod::parse(&method)
            .ok_or_else(|| DeskError::Unreadable(format!("the refund method {method:?}")))?,
        refund_cents: cents(row.try_get("amount_cents").map_err(failed(doing))?)?,
        note: row.try_get("note").map_err(failed(doing))?,
        stage: match stage.as_str() {
            "received" => Stage::Received,
            "inspecting" => Stage::Inspecting,
            "refunded" => Stage::Refunded,
            _ => return Err(DeskError::Unreadable(format!("the stage {stage:?}"))),
        },
    })
}

fn cents(value: i64) -> Result<u64, DeskError> {
    u64::try_from(value).map_err(|_| DeskError::Unreadable(format!("the amount {value}")))
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

//! A long-running job: exporting a month of tickets as CSV. It runs as a
//! task (`#[tool(task)]`) for hosts that declared the tasks extension: the
//! host gets a task id at once, polls `tasks/get` for the status, answers
//! the overwrite question with `tasks/update`, and may `tasks/cancel` it.
//! Other hosts get the same export synchronously.
//!
//! The CSV is written to the database: the link the task ends with reads
//! on any replica, whichever ran the task.

use crate::desk::Desk;
use mcp_runtime::prelude::*;
use std::time::Duration;

/// Whether to replace an earlier export.
#[mcp_runtime::form]
struct Overwrite {
    /// Replace the earlier export of this month.
    overwrite: bool,
}

/// How long writing one ticket takes (the ticket system is slow).
const PER_TICKET: Duration = Duration::from_millis(300);

/// Exports the tickets opened in a month as CSV to the desk's export shelf
/// and links to it. Takes a while; asks before overwriting an earlier export
/// of the same month.
#[tool(
    name = "after_sales_export",
    task(ttl_ms = 86_400_000, poll_interval_ms = 1000),
    // It reads the tickets, and writes the export and the audit log.
    scopes("tickets:read", "tickets:write")
)]
async fn export(
    /// The month, as `YYYY-MM`.
    month: String,
    task: Task,
    desk: State<Desk>,
    identity: Identity,
) -> Result<ResourceLink, String> {
    let Some((from_ms, to_ms)) = month_range(&month) else {
        return Err(format!("`{month}` is not a month: write it as YYYY-MM, like 2026-11"));
    };
    task.status(format!("collecting the tickets of {month}"));
    let tickets = desk.tickets_opened(from_ms, to_ms).await?;
    let mut csv = String::from("ticket,order,customer,item,reason,refund_method,refund_cents,stage\n");
    for (i, t) in tickets.iter().enumerate() {
        tokio::select! {
            _ = task.cancelled() => return Err(format!("export of {month} cancelled after {i} tickets")),
            _ = tokio::time::sleep(PER_TICKET) => {}
        }
        csv.push_str(&format!(
            "{},{},{},{},{},{},{},{:?}\n",
            field(&t.id),
            field(&t.order_id),
            field(&t.customer),
            field(&t.item),
            field(&t.reason),
            t.refund_method.as_str(),
            t.refund_cents,
            t.stage
        ));
        task.status(format!("wrote {} of {} tickets", i + 1, tickets.len()));
    }
    if desk.export(&month).await?.is_some() {
        task.status(format!("waiting for confirmation to overwrite the export of {month}"));
        let question = format!("An export of {month} exists. Overwrite it?");
        let answer = task.elicit::<Overwrite>("overwrite", &question).await?;
        if !answer.accepted().is_some_and(|o| o.overwrite) {
            return Err(format!("kept the earlier export of {month}"));
        }
    }
    let by = identity.subject().unwrap_or("a local user");
    desk.save_export(&month, &csv, tickets.len(), by).await?;
    let mut link = ResourceLink::new(format!("exports://{month}.csv"), format!("tickets-{month}.csv"));
    link.mime_type = Some("text/csv".into());
    link.size = u64::try_from(csv.len()).ok();
    link.description = Some(format!("{} tickets of {month}", tickets.len()));
    Ok(link)
}

/// One CSV field (RFC 4180): quoted, its quotes doubled, when it holds a
/// comma, a quote or a line break, so that a customer's text cannot end its
/// field and add columns; one a spreadsheet would take for a formula (first
/// character `=`, `+`, `-`, `@`, tab or carriage return) starts with `'`.
fn field(text: &str) -> String {
    let text = if text.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{text}")
    } else {
        text.to_owned()
    };
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text
    }
}

/// An export made by `after_sales_export`.
#[resource(
    uri_template = "exports://{month}.csv",
    mime_type = "text/csv",
    scopes("tickets:read")
)]
async fn export_file(month: String, desk: State<Desk>) -> Result<String, McpError> {
    desk.export(&month)
        .await
        .map_err(|e| McpError::internal(e.to_string()))?
        .ok_or_else(|| McpError::resource_not_found(&format!("exports://{month}.csv")))
}

/// The first millisecond of the month `YYYY-MM` (UTC) and the first of the next.
fn month_range(month: &str) -> Option<(i64, i64)> {
    let (year, mm) = month.split_once('-')?;
    if year.len() != 4 || mm.len() != 2 || !(year.bytes().chain(mm.bytes())).all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (year, mm): (i64, i64) = (year.parse().ok()?, mm.parse().ok()?);
    if !(1..=12).contains(&mm) {
        return None;
    }
    let (next_year, next_mm) = if mm == 12 { (year + 1, 1) } else { (year, mm + 1) };
    let day_ms = 86_400_000;
    Some((
        days_from_civil(year, mm) * day_ms,
        days_from_civil(next_year, next_mm) * day_ms,
    ))
}

/// Days from 1970-01-01 to the first day of `month` of `year` (proleptic
/// Gregorian calendar; Howard Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5; // day 1 of the month
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

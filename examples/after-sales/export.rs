//! A long-running job: exporting a month of tickets as CSV. It runs as a
//! task (`#[tool(task)]`) for hosts that declared the tasks extension: the
//! host gets a task id at once, polls `tasks/get` for the status, answers
//! the overwrite question with `tasks/update`, and may `tasks/cancel` it.
//! Other hosts get the same export synchronously.

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

/// Exports every ticket of a month as CSV to the desk's export shelf and
/// links to it. Takes a while; asks before overwriting an earlier export of
/// the same month.
#[tool(
    name = "after_sales_export",
    task(ttl_ms = 86_400_000, poll_interval_ms = 1000),
    scopes("tickets:read")
)]
async fn export(
    /// The month, as `YYYY-MM`.
    month: String,
    task: Task,
    desk: State<Desk>,
) -> Result<ResourceLink, String> {
    let valid = month.len() == 7
        && month.as_bytes()[4] == b'-'
        && month.chars().enumerate().all(|(i, c)| i == 4 || c.is_ascii_digit());
    if !valid {
        return Err(format!("`{month}` is not a month: write it as YYYY-MM, like 2026-11"));
    }
    task.status(format!("collecting the tickets of {month}"));
    let tickets = desk.tickets();
    let mut csv = String::from("ticket,order,customer,item,reason,refund_method,stage\n");
    for (i, t) in tickets.iter().enumerate() {
        tokio::select! {
            _ = task.cancelled() => return Err(format!("export of {month} cancelled after {i} tickets")),
            _ = tokio::time::sleep(PER_TICKET) => {}
        }
        csv.push_str(&format!(
            "{},{},{},{},{:?},{:?},{:?}\n",
            t.id,
            t.order_id,
            t.customer.replace(',', " "),
            t.item.replace(',', " "),
            t.reason,
            t.refund_method,
            t.stage
        ));
        task.status(format!("wrote {} of {} tickets", i + 1, tickets.len()));
    }
    if desk.export(&month).is_some() {
        task.status(format!("waiting for confirmation to overwrite the export of {month}"));
        let question = format!("An export of {month} exists. Overwrite it?");
        let answer = task.elicit::<Overwrite>("overwrite", &question).await?;
        if !answer.accepted().is_some_and(|o| o.overwrite) {
            return Err(format!("kept the earlier export of {month}"));
        }
    }
    let bytes = csv.len();
    desk.save_export(&month, csv);
    let mut link = ResourceLink::new(format!("exports://{month}.csv"), format!("tickets-{month}.csv"));
    link.mime_type = Some("text/csv".into());
    link.size = u64::try_from(bytes).ok();
    link.description = Some(format!("{} tickets of {month}", tickets.len()));
    Ok(link)
}

/// An export made by `after_sales_export`.
#[resource(
    uri_template = "exports://{month}.csv",
    mime_type = "text/csv",
    scopes("tickets:read")
)]
fn export_file(month: String, desk: State<Desk>) -> Result<String, McpError> {
    desk.export(&month)
        .ok_or_else(|| McpError::resource_not_found(&format!("exports://{month}.csv")))
}

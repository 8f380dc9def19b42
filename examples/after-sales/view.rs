//! The ticket's view (the MCP Apps extension): hosts that render apps show
//! `after_sales_query_ticket`'s result in `ticket.html`, a ticket's stage and
//! its refund options, and the view changes the refund through
//! `after_sales_change_refund`, a tool only views see. Other hosts get the
//! same tool with a summary in words and the options spelled out (the
//! fallback), and are not shown the view or the view's tool.

use crate::desk::{Desk, Stage, Ticket};
use crate::RefundMethod;
use mcp_runtime::prelude::*;
use mcp_runtime::Summarized;

/// A ticket's stage and refund options, for hosts that render MCP Apps.
#[resource(uri = "ui://after-sales/ticket", app(prefers_border), scopes("tickets:read"))]
fn ticket_view() -> &'static str {
    include_str!("ticket.html")
}

/// Looks up an after-sales ticket and says which stage it is at.
#[tool(
    name = "after_sales_query_ticket",
    read_only,
    idempotent,
    scopes("tickets:read"),
    ui = "ui://after-sales/ticket",
    visibility(model, app)
)]
async fn query_ticket(
    /// The ticket id, like `T-1`.
    ticket_id: String,
    desk: State<Desk>,
    apps: RendersApps,
) -> Result<Summarized<Ticket>, String> {
    let ticket = desk
        .ticket(&ticket_id)
        .await?
        .ok_or_else(|| format!("no ticket {ticket_id}"))?;
    let mut summary = said(&ticket);
    // The view shows the options; a host without it reads them here.
    if !apps.get() && ticket.stage != Stage::Refunded {
        if let Some(order) = desk.order(&ticket.order_id).await? {
            let options: Vec<String> = [
                RefundMethod::OriginalCard,
                RefundMethod::StoreCredit,
                RefundMethod::BankTransfer,
            ]
            .into_iter()
            .map(|m| format!("{} {}", m.label(), money(m.refund_cents(order.total_cents))))
            .collect();
            summary.push_str(&format!(" Refund options: {}.", options.join(", ")));
        }
    }
    Ok(Summarized { summary, value: ticket })
}

/// Pays a ticket's refund another way; the ticket view's buttons call it.
/// A refund already paid does not change.
#[tool(
    name = "after_sales_change_refund",
    idempotent,
    scopes("tickets:write"),
    visibility(app)
)]
async fn change_refund(
    /// The ticket id, like `T-1`.
    ticket_id: String,
    /// How the refund is to be paid.
    method: RefundMethod,
    desk: State<Desk>,
    identity: Identity,
) -> Result<Json<Ticket>, String> {
    let by = identity.subject().unwrap_or("a local user");
    desk.change_refund(&ticket_id, method, by)
        .await?
        .map(Json)
        .ok_or_else(|| format!("no ticket {ticket_id}"))
}

/// The ticket in a sentence.
fn said(t: &Ticket) -> String {
    let stage = match t.stage {
        Stage::Received => "received",
        Stage::Inspecting => "being inspected",
        Stage::Refunded => "refunded",
    };
    format!(
        "Ticket {} ({}, order {}, for {}) is {stage}; refund {} by {}.",
        t.id,
        t.item,
        t.order_id,
        t.customer,
        money(t.refund_cents),
        t.refund_method.label().to_lowercase()
    )
}

/// Cents as dollars: `$349.00`.
fn money(cents: u64) -> String {
    format!("${}.{:02}", cents / 100, cents % 100)
}

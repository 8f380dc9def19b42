//! An after-sales desk: look up tickets, quote refunds, open tickets that
//! ask the customer (by elicitation) how they want to be refunded, and
//! export a month of tickets as a long-running task (`export.rs`).
//!
//! State across calls travels in explicit handles (ticket ids), never in a
//! session: any replica could serve any call.
//!
//! ```sh
//! cargo run --example after-sales                         # stdio
//! cargo run --example after-sales -- --http 127.0.0.1:3000
//! # protected: tokens from this authorization server, for this URL
//! MCP_AUTH_ISSUER=https://auth.example.com MCP_AUTH_RESOURCE=http://127.0.0.1:3000/mcp \
//!   cargo run --example after-sales -- --http 127.0.0.1:3000
//! ```
//!
//! Protected, queries need the scope `tickets:read`, opening tickets (and
//! so refunds) `tickets:write`; a token without them does not see those
//! tools and is refused (403) if it calls them.

mod audit;
mod desk;
mod export;

use desk::{Desk, Order, Stage, Ticket};
use mcp_runtime::prelude::*;

/// How the customer wants their money back.
#[mcp_runtime::form]
#[derive(Debug, Clone, Copy, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum RefundMethod {
    /// Back to the original card
    OriginalCard,
    /// Store credit (10% bonus)
    StoreCredit,
    /// Bank transfer
    BankTransfer,
}

/// The refund form shown to the customer.
#[mcp_runtime::form]
struct RefundChoice {
    /// How would you like to be refunded?
    method: RefundMethod,
    /// Anything we should know (optional).
    note: Option<String>,
}

/// A refund estimate.
#[mcp_runtime::schema]
struct Quote {
    /// The order quoted.
    order_id: String,
    /// Refund to the original card, in cents.
    card_cents: u64,
    /// Refund as store credit (with its bonus), in cents.
    store_credit_cents: u64,
    /// Restocking fee withheld, in cents.
    restocking_fee_cents: u64,
}

fn find_order(desk: &Desk, order_id: &str) -> Result<Order, String> {
    desk.order(order_id)
        .ok_or_else(|| format!("no order {order_id}; orders look like ORD-1001"))
}

/// Looks up an after-sales ticket and says which stage it is at.
#[tool(name = "after_sales_query_ticket", read_only, idempotent, scopes("tickets:read"))]
fn query_ticket(
    /// The ticket id, like `T-1`.
    ticket_id: String,
    desk: State<Desk>,
) -> Result<Json<Ticket>, String> {
    desk.ticket(&ticket_id)
        .map(Json)
        .ok_or_else(|| format!("no ticket {ticket_id}"))
}

/// Estimates the refund for returning an order, for each refund method.
#[tool(name = "after_sales_quote", read_only, idempotent, scopes("tickets:read"))]
fn quote(
    /// The order id, like `ORD-1001`.
    order_id: String,
    /// Whether the goods were opened (opened goods carry a 10% restocking fee).
    #[serde(default)]
    opened: bool,
    desk: State<Desk>,
) -> Result<Json<Quote>, String> {
    let order = find_order(&desk, &order_id)?;
    let fee = if opened { order.total_cents / 10 } else { 0 };
    let card = order.total_cents - fee;
    Ok(Json(Quote {
        order_id,
        card_cents: card,
        store_credit_cents: card + card / 10,
        restocking_fee_cents: fee,
    }))
}

/// Opens an after-sales ticket for an order. Asks the customer how to refund.
#[tool(name = "after_sales_create_ticket", requires(elicitation), scopes("tickets:write"))]
fn create_ticket(
    /// The order id, like `ORD-1001`.
    order_id: String,
    /// Why the customer returns it.
    reason: String,
    desk: State<Desk>,
    input: Input,
    identity: Identity,
) -> Flow<Json<Ticket>> {
    let order = find_order(&desk, &order_id)?;
    let message = format!(
        "Your return of {} ({}): how would you like to be refunded?",
        order.id, order.item
    );
    let choice = match input.elicit::<RefundChoice>("refund", &message)? {
        Elicited::Accepted(choice) => choice,
        Elicited::Declined => return Err("the customer declined to choose a refund method; no ticket opened".into()),
        Elicited::Cancelled => return Err("the customer cancelled; no ticket opened".into()),
    };
    // Side effects come after the last ask: this runs once, in the final round.
    let ticket = desk.open_ticket(&order, reason, choice.method, choice.note);
    // Who opened it: the token's subject over protected HTTP (nobody is named on stdio).
    let by = identity.subject().unwrap_or("a local user");
    tracing::info!(ticket = %ticket.id, order = %order.id, "ticket opened by {by}");
    Ok(Json(ticket))
}

/// A ticket, readable as a resource.
#[resource(
    uri_template = "tickets://{ticket_id}",
    mime_type = "application/json",
    scopes("tickets:read")
)]
fn ticket_resource(ticket_id: String, desk: State<Desk>) -> Option<Json<Ticket>> {
    desk.ticket(&ticket_id).map(Json)
}

/// Drafts a reply to the customer about a ticket.
#[prompt(name = "after_sales_reply", scopes("tickets:read"))]
fn reply(
    /// The ticket id, like `T-1`.
    ticket_id: String,
    desk: State<Desk>,
) -> Result<Vec<PromptMessage>, McpError> {
    let t = desk
        .ticket(&ticket_id)
        .ok_or_else(|| McpError::invalid_params(format!("no ticket {ticket_id}")))?;
    let stage = match t.stage {
        Stage::Received => "we have received the return request",
        Stage::Inspecting => "the goods are being inspected",
        Stage::Refunded => "the refund has been issued",
    };
    Ok(vec![PromptMessage::user(format!(
        "Write a short, warm reply to {} about ticket {} (order {}, {}): {stage}. Refund method: {:?}.",
        t.customer, t.id, t.order_id, t.item, t.refund_method
    ))])
}

mcp_runtime::main!(|server| server
    .middleware(audit::Audit)
    // Each caller (token subject, else address): 60 calls a minute, 429 past it.
    .rate_limit(mcp_runtime::Rate::per_minute(60))
    .state(Desk::with_sample_data())
    .instructions("An after-sales desk: quote refunds, open and look up return tickets."));

//! An after-sales desk: look up tickets, quote refunds, open tickets that
//! ask the customer (by elicitation) how they want to be refunded, and
//! export a month of tickets as a long-running task (`export.rs`). Hosts
//! that render MCP Apps show a ticket in a view (`view.rs`, `ticket.html`);
//! agents learn the desk's way of handling a refund from the skill in
//! `skills/handling-refunds`.
//!
//! Its data lives in a database (`db.rs`, `desk.rs`, schema in
//! `migrations/`): the SQLite file `after-sales.db` in the working directory
//! by default, created on first use; with `DATABASE_URL=postgres://...`, a
//! PostgreSQL database that every replica shares, so a ticket opened
//! through one replica is found by the next.
//!
//! State across calls travels in explicit handles (ticket ids) and the
//! database, never in a session: any replica could serve any call.
//!
//! ```sh
//! cargo run --example after-sales                         # stdio
//! cargo run --example after-sales -- --http 127.0.0.1:3000
//! # replicas on one PostgreSQL (and one Redis for their tasks and events)
//! DATABASE_URL=postgres://desk@db.internal/desk MCP_REDIS_URL=redis://127.0.0.1:6379 \
//!   cargo run --example after-sales -- --http 127.0.0.1:3000
//! # protected: tokens from this authorization server, for this URL
//! MCP_AUTH_ISSUER=https://auth.example.com MCP_AUTH_RESOURCE=http://127.0.0.1:3000/mcp \
//!   cargo run --example after-sales -- --http 127.0.0.1:3000
//! ```
//!
//! Protected, queries need the scope `tickets:read`, opening tickets (and
//! so refunds) `tickets:write`, the export (which writes the export and the
//! audit log) both; a token without them does not see those tools and is
//! refused (403) if it calls them.

mod audit;
mod db;
mod desk;
mod export;
mod view;

use desk::{Desk, NewTicket, Order, Stage, Ticket};
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

impl RefundMethod {
    /// How the database writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            RefundMethod::OriginalCard => "original_card",
            RefundMethod::StoreCredit => "store_credit",
            RefundMethod::BankTransfer => "bank_transfer",
        }
    }

    /// The method the database wrote as `text`.
    pub fn parse(text: &str) -> Option<Self> {
        [
            RefundMethod::OriginalCard,
            RefundMethod::StoreCredit,
            RefundMethod::BankTransfer,
        ]
        .into_iter()
        .find(|m| m.as_str() == text)
    }

    /// How a person says it: `Store credit`.
    pub fn label(self) -> &'static str {
        match self {
            RefundMethod::OriginalCard => "Original card",
            RefundMethod::StoreCredit => "Store credit",
            RefundMethod::BankTransfer => "Bank transfer",
        }
    }

    /// The refund of goods worth `cents`, paid this way (store credit has a 10% bonus).
    pub fn refund_cents(self, cents: u64) -> u64 {
        match self {
            RefundMethod::StoreCredit => cents.saturating_add(cents / 10),
            RefundMethod::OriginalCard | RefundMethod::BankTransfer => cents,
        }
    }
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

async fn find_order(desk: &Desk, order_id: &str) -> Result<Order, String> {
    desk.order(order_id)
        .await?
        .ok_or_else(|| format!("no order {order_id}; orders look like ORD-1001"))
}

/// Estimates the refund for returning an order, for each refund method.
/// How to handle a refund, step by step: the skill `skill://handling-refunds/SKILL.md`.
#[tool(name = "after_sales_quote", read_only, idempotent, scopes("tickets:read"))]
async fn quote(
    /// The order id, like `ORD-1001`.
    order_id: String,
    /// Whether the goods were opened (opened goods carry a 10% restocking fee).
    #[serde(default)]
    opened: bool,
    desk: State<Desk>,
) -> Result<Json<Quote>, String> {
    let order = find_order(&desk, &order_id).await?;
    let fee = if opened { order.total_cents / 10 } else { 0 };
    let card = order.total_cents - fee;
    Ok(Json(Quote {
        order_id,
        card_cents: card,
        store_credit_cents: RefundMethod::StoreCredit.refund_cents(card),
        restocking_fee_cents: fee,
    }))
}

/// Opens an after-sales ticket for an order. Asks the customer how to refund.
/// Quote first, as the skill `skill://handling-refunds/SKILL.md` says.
#[tool(name = "after_sales_create_ticket", requires(elicitation), scopes("tickets:write"))]
async fn create_ticket(
    /// The order id, like `ORD-1001`.
    order_id: String,
    /// Why the customer returns it.
    reason: String,
    desk: State<Desk>,
    input: Input,
    identity: Identity,
) -> Flow<Json<Ticket>> {
    let order = find_order(&desk, &order_id).await?;
    // The ticket's number is drawn from the database before the first ask
    // and travels in the sealed requestState: whichever replica serves the
    // last round opens that number, and a client retrying that round gets
    // the same ticket instead of a second one.
    let number = match input.state::<i64>() {
        Some(number) => number,
        None => {
            let number = desk.draw_ticket_number().await?;
            input.save(&number)?;
            number
        }
    };
    let message = format!(
        "{}, your return of {} ({}): how would you like to be refunded?",
        order.customer, order.id, order.item
    );
    let choice = match input.elicit::<RefundChoice>("refund", &message)? {
        Elicited::Accepted(choice) => choice,
        Elicited::Declined => return Err("the customer declined to choose a refund method; no ticket opened".into()),
        Elicited::Cancelled => return Err("the customer cancelled; no ticket opened".into()),
    };
    // Side effects come after the last ask, in one transaction: the ticket,
    // its refund and the audit line are all written, or none is.
    // Who opened it: the token's subject over protected HTTP (nobody is named on stdio).
    let by = identity.subject().unwrap_or("a local user");
    let ticket = desk
        .open_ticket(NewTicket {
            number,
            order: &order,
            reason,
            method: choice.method,
            note: choice.note,
            by,
        })
        .await?;
    tracing::info!(ticket = %ticket.id, order = %order.id, "ticket opened by {by}");
    Ok(Json(ticket))
}

/// A ticket, readable as a resource.
#[resource(
    uri_template = "tickets://{ticket_id}",
    mime_type = "application/json",
    scopes("tickets:read")
)]
async fn ticket_resource(ticket_id: String, desk: State<Desk>) -> Result<Option<Json<Ticket>>, McpError> {
    let ticket = desk
        .ticket(&ticket_id)
        .await
        .map_err(|e| McpError::internal(e.to_string()))?;
    Ok(ticket.map(Json))
}

/// Drafts a reply to the customer about a ticket.
#[prompt(name = "after_sales_reply", scopes("tickets:read"))]
async fn reply(
    /// The ticket id, like `T-1`.
    ticket_id: String,
    desk: State<Desk>,
) -> Result<Vec<PromptMessage>, McpError> {
    let t = desk
        .ticket(&ticket_id)
        .await
        .map_err(|e| McpError::internal(e.to_string()))?
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

/// The desk on the database `DATABASE_URL` names (SQLite's `after-sales.db`
/// without it); a URL it cannot use stops the start.
fn open_desk() -> Desk {
    match db::Db::from_env() {
        Ok(db) => {
            tracing::info!("desk data in {}", db.shown());
            Desk::new(db)
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}

mcp_runtime::main!(|server| {
    let desk = open_desk();
    let db = desk.db();
    server
        .middleware(audit::Audit)
        // Each caller (token subject, else address): 60 calls a minute, 429 past it.
        .rate_limit(mcp_runtime::Rate::per_minute(60))
        .state(desk)
        // How to handle a refund, for the agent: embedded at compile time.
        .skills(mcp_runtime::skills!("examples/after-sales/skills"))
        // Connect at start, in the background: the server serves meanwhile,
        // and /readyz says it waits for the database until it is reached.
        .on_start(move |server| db.connect_at_start(server.awaiting(format!("database {}", db.shown()))))
        .instructions("An after-sales desk: quote refunds, open and look up return tickets.")
});

//! The desk's data: orders and tickets, in memory.

use crate::RefundMethod;
use std::collections::BTreeMap;
use std::sync::Mutex;

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
    /// A note from the customer.
    pub note: Option<String>,
    /// Where the ticket is.
    pub stage: Stage,
}

/// Orders and tickets.
#[derive(Default)]
pub struct Desk {
    orders: BTreeMap<String, Order>,
    tickets: Mutex<BTreeMap<String, Ticket>>,
    exports: Mutex<BTreeMap<String, String>>,
}

impl Desk {
    /// A desk with a few orders and one ticket already under way.
    pub fn with_sample_data() -> Self {
        let orders = [
            ("ORD-1001", "Ada Lovelace", "Espresso machine", 34_900),
            ("ORD-1002", "Alan Turing", "Noise-cancelling headphones", 19_950),
            ("ORD-1003", "Grace Hopper", "Mechanical keyboard", 12_900),
        ]
        .into_iter()
        .map(|(id, customer, item, total_cents)| {
            (
                id.to_owned(),
                Order {
                    id: id.into(),
                    customer: customer.into(),
                    item: item.into(),
                    total_cents,
                },
            )
        })
        .collect();
        let desk = Desk {
            orders,
            tickets: Mutex::default(),
            exports: Mutex::default(),
        };
        if let Some(order) = desk.order("ORD-1002") {
            let t = desk.open_ticket(&order, "Left ear cup rattles".into(), RefundMethod::OriginalCard, None);
            desk.set_stage(&t.id, Stage::Inspecting);
        }
        desk
    }

    pub fn order(&self, id: &str) -> Option<Order> {
        self.orders.get(id).cloned()
    }

    pub fn ticket(&self, id: &str) -> Option<Ticket> {
        self.tickets.lock().unwrap_or_else(|p| p.into_inner()).get(id).cloned()
    }

    /// Every ticket, in id order.
    pub fn tickets(&self) -> Vec<Ticket> {
        self.tickets
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect()
    }

    /// The CSV exported for `month`, if any.
    pub fn export(&self, month: &str) -> Option<String> {
        self.exports
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(month)
            .cloned()
    }

    /// Keeps (or replaces) the CSV of `month`.
    pub fn save_export(&self, month: &str, csv: String) {
        self.exports
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(month.to_owned(), csv);
    }

    pub fn open_ticket(
        &self,
        order: &Order,
        reason: String,
        refund_method: RefundMethod,
        note: Option<String>,
    ) -> Ticket {
        let mut tickets = self.tickets.lock().unwrap_or_else(|p| p.into_inner());
        let id = format!("T-{}", tickets.len() + 1);
        let ticket = Ticket {
            id: id.clone(),
            order_id: order.id.clone(),
            customer: order.customer.clone(),
            item: order.item.clone(),
            reason,
            refund_method,
            note,
            stage: Stage::Received,
        };
        tickets.insert(id, ticket.clone());
        ticket
    }

    fn set_stage(&self, id: &str, stage: Stage) {
        if let Some(t) = self.tickets.lock().unwrap_or_else(|p| p.into_inner()).get_mut(id) {
            t.stage = stage;
        }
    }
}

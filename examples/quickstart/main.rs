//! A small, realistic MCP server: four tools, no router.
//!
//! Run it over stdio with `cargo run --example quickstart`, or point a host
//! at the built binary (`target/debug/examples/quickstart`).

use mcp_runtime::prelude::*;

/// A temperature scale.
#[mcp_runtime::schema]
#[derive(Debug, Clone, Copy, PartialEq)]
#[serde(rename_all = "lowercase")]
enum Scale {
    /// Degrees Celsius.
    Celsius,
    /// Degrees Fahrenheit.
    Fahrenheit,
    /// Kelvin.
    Kelvin,
}

/// The result of a temperature conversion.
#[mcp_runtime::schema]
struct Conversion {
    /// The converted value, rounded to two decimals.
    value: f64,
    /// The scale it is expressed in.
    scale: Scale,
}

fn to_kelvin(value: f64, scale: Scale) -> f64 {
    match scale {
        Scale::Celsius => value + 273.15,
        Scale::Fahrenheit => (value - 32.0) * 5.0 / 9.0 + 273.15,
        Scale::Kelvin => value,
    }
}

fn from_kelvin(kelvin: f64, scale: Scale) -> f64 {
    match scale {
        Scale::Celsius => kelvin - 273.15,
        Scale::Fahrenheit => (kelvin - 273.15) * 9.0 / 5.0 + 32.0,
        Scale::Kelvin => kelvin,
    }
}

/// Converts a temperature between Celsius, Fahrenheit and Kelvin.
#[tool(read_only, idempotent, open_world = false)]
fn convert_temperature(
    /// The temperature to convert.
    value: f64,
    /// The scale `value` is in.
    from: Scale,
    /// The scale to convert to.
    to: Scale,
) -> Result<Json<Conversion>, String> {
    let kelvin = to_kelvin(value, from);
    if kelvin < 0.0 {
        return Err(format!("{value} {from:?} is below absolute zero"));
    }
    let converted = (from_kelvin(kelvin, to) * 100.0).round() / 100.0;
    Ok(Json(Conversion {
        value: converted,
        scale: to,
    }))
}

/// One line item of an invoice.
#[mcp_runtime::schema]
struct LineItem {
    /// What was sold.
    description: String,
    /// How many units.
    quantity: u32,
    /// Price of one unit, in cents.
    unit_price_cents: u64,
}

/// An invoice to total.
#[mcp_runtime::schema]
struct Invoice {
    /// The customer's name.
    customer: String,
    /// The items sold.
    items: Vec<LineItem>,
    /// Discount in percent (0-100).
    #[serde(default)]
    discount_percent: u8,
}

/// Totals an invoice and describes it in one line.
#[tool(read_only)]
fn total_invoice(
    /// The invoice.
    invoice: Invoice,
) -> Result<String, String> {
    if invoice.discount_percent > 100 {
        return Err(format!(
            "a discount of {}% is more than the whole price",
            invoice.discount_percent
        ));
    }
    // Checked: the amounts are the caller's, and a total too large to count
    // is the caller's to hear about, not a panic or a wrapped number.
    let too_large = || "the invoice's total is too large to count in cents".to_owned();
    let gross = invoice.items.iter().try_fold(0u64, |sum, item| {
        item.unit_price_cents
            .checked_mul(u64::from(item.quantity))
            .and_then(|line| sum.checked_add(line))
            .ok_or_else(too_large)
    })?;
    let net = gross
        .checked_mul(u64::from(100 - invoice.discount_percent))
        .ok_or_else(too_large)?
        / 100;
    Ok(format!(
        "{}: {} item line(s), total {}.{:02} after a {}% discount",
        invoice.customer,
        invoice.items.len(),
        net / 100,
        net % 100,
        invoice.discount_percent
    ))
}

/// Statistics about a text.
#[mcp_runtime::schema]
struct TextStats {
    /// Words, split on whitespace.
    words: usize,
    /// Lines.
    lines: usize,
    /// Unicode scalar values.
    characters: usize,
    /// The most frequent word (lowercased), if any.
    most_common_word: Option<String>,
}

/// Counts the words, lines and characters of a text.
#[tool(read_only, idempotent)]
async fn text_stats(text: String) -> Json<TextStats> {
    let mut counts = std::collections::BTreeMap::<String, usize>::new();
    for word in text.split_whitespace() {
        *counts.entry(word.to_lowercase()).or_default() += 1;
    }
    let most_common_word = counts.iter().max_by_key(|(_, n)| **n).map(|(w, _)| w.clone());
    Json(TextStats {
        words: text.split_whitespace().count(),
        lines: text.lines().count(),
        characters: text.chars().count(),
        most_common_word,
    })
}

/// Divides one number by another. Dividing by zero is a tool error the model can read.
#[tool(read_only, idempotent)]
fn divide(dividend: f64, divisor: f64) -> Result<String, String> {
    if divisor == 0.0 {
        return Err("cannot divide by zero: pass a non-zero divisor".into());
    }
    Ok((dividend / divisor).to_string())
}

mcp_runtime::main!(|server| server
    .instructions("Small utilities: temperature conversion, invoice totals, text statistics and division."));

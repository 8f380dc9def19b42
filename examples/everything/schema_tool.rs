//! A tool whose input schema uses JSON Schema 2020-12 keywords beyond what
//! Rust types express by themselves: `$defs` with `$anchor`, composition
//! (`allOf`/`anyOf`) and conditionals (`if`/`then`/`else`). The schema is
//! still derived from Rust types; the extra keywords are schemars attributes.

use mcp_runtime::prelude::*;

/// A postal address.
#[mcp_runtime::schema]
#[schemars(rename = "address", extend("$anchor" = "addressDef"))]
struct Address {
    street: Option<String>,
    city: Option<String>,
}

/// How to reach the contact.
#[mcp_runtime::schema]
#[serde(rename_all = "lowercase")]
enum ContactMethod {
    Phone,
    Email,
}

/// The tool's arguments: a contact with a phone or an email.
#[mcp_runtime::schema]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(extend(
    "$schema" = "https://json-schema.org/draft/2020-12/schema",
    "allOf" = [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if" = {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then" = {"required": ["phone"]},
    "else" = {"required": ["email"]}
))]
struct Contact {
    name: Option<String>,
    address: Option<Address>,
    contact_method: Option<ContactMethod>,
    phone: Option<String>,
    email: Option<String>,
}

/// Stores a contact (exercises JSON Schema 2020-12 keywords in its input schema).
#[tool(keep_defs)]
fn json_schema_2020_12_tool(#[arguments] contact: Contact) -> String {
    format!("contact {} saved", contact.name.as_deref().unwrap_or("(unnamed)"))
}

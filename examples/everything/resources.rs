//! Resources of the fixture: static text and binary, a template, and a
//! resource to subscribe to.

use mcp_runtime::prelude::*;

/// A static text resource.
#[resource(
    uri = "test://static-text",
    mime_type = "text/plain",
    ttl_ms = 60000,
    cache_scope = "public"
)]
fn static_text() -> &'static str {
    "This is the content of the static text resource."
}

/// A static binary resource (a PNG).
#[resource(
    uri = "test://static-binary",
    mime_type = "image/png",
    ttl_ms = 60000,
    cache_scope = "public"
)]
fn static_binary() -> Blob {
    Blob(super::content::PNG.to_vec())
}

/// Data for an id.
#[resource(uri_template = "test://template/{id}/data", mime_type = "application/json")]
fn template_data(#[complete(with = complete_id)] id: String) -> Json<serde_json::Value> {
    Json(serde_json::json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")}))
}

fn complete_id(prefix: &str) -> Vec<String> {
    ["123", "456", "789"]
        .iter()
        .filter(|v| v.starts_with(prefix))
        .map(|v| v.to_string())
        .collect()
}

/// A resource whose changes can be subscribed to.
#[resource(uri = "test://watched-resource", mime_type = "text/plain")]
fn watched() -> &'static str {
    "Watched resource content."
}

use mcp_runtime::serde_json;

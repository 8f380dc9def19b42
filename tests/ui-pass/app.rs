//! An app: a `ui://` view, a tool linked to it, and an app-only tool.
use mcp_runtime::prelude::*;

/// The view.
#[resource(
    uri = "ui://notes/board",
    app(
        csp(connect = ["https://api.example"], resource = [], frame = ["https://maps.example"], base_uri = ["https://notes.example"]),
        permissions(camera, microphone, geolocation, clipboard_write),
        domain = "notes.example",
        prefers_border = false
    )
)]
fn board() -> String {
    include_str!("app.rs").replace("//!", "<!DOCTYPE html>")
}

/// Shows the notes.
#[tool(ui = "ui://notes/board")]
fn notes(apps: RendersApps) -> String {
    if apps.get() { "in the view" } else { "no notes" }.into()
}

/// Saves a note: only the view calls it.
#[tool(visibility(app))]
fn save(text: String) -> String {
    text
}

fn main() {
    let server = Server::builder().build().expect("the view is served");
    let _ = (server, save("x".into()), notes(RendersApps(true)));
}

use mcp_runtime::prelude::*;

/// An app is served at a `ui://` URI.
#[resource(uri = "https://example.com/view", app(prefers_border))]
fn web_view() -> &'static str {
    "<!DOCTYPE html>"
}

/// An app is static, and its MIME type is the app one.
#[resource(uri_template = "ui://views/{id}", mime_type = "text/html", app(permissions(camera, webcam)))]
fn templated(id: String) -> String {
    id
}

/// An unknown key of the sandbox.
#[resource(uri = "ui://views/main", app(csp(connect = ["https://api.example"], script = ["x"]), border))]
fn main_view() -> &'static str {
    "<!DOCTYPE html>"
}

fn main() {}

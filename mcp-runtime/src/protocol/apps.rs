//! The MCP Apps extension (`io.modelcontextprotocol/ui`, SEP-1865): HTML
//! views served as `ui://` resources and the tools linked to them. These
//! mirror the `McpUi*` definitions of the extension's JSON Schema
//! (`@modelcontextprotocol/ext-apps` `schema.json`), where every object
//! forbids other keys.

use super::JsonObject;
use serde::{Deserialize, Serialize};

/// The extension's identifier, in a client's `capabilities.extensions`.
pub const UI_EXTENSION: &str = "io.modelcontextprotocol/ui";

/// The MIME type of an app's HTML, which a client lists in
/// `extensions["io.modelcontextprotocol/ui"].mimeTypes` to say it renders apps.
pub const APP_MIME_TYPE: &str = "text/html;profile=mcp-app";

/// The URI scheme of app resources.
pub const UI_SCHEME: &str = "ui://";

/// The deprecated flat `_meta` key of a tool's view, mirrored beside
/// `_meta.ui.resourceUri` for older hosts.
pub const UI_RESOURCE_URI_META_KEY: &str = "ui/resourceUri";

/// What a client declares under `extensions["io.modelcontextprotocol/ui"]`
/// (`$defs/McpUiClientCapabilities`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UiClientCapabilities {
    /// The MIME types of the views the client renders.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_types: Option<Vec<String>>,
}

/// Who may call a tool linked to a view (`$defs/McpUiToolVisibility`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Visibility {
    /// The model: the host shows the tool to the agent.
    Model,
    /// The view: the app may call it (through the host, on the same connection).
    App,
}

/// A tool's `_meta.ui` (`$defs/McpUiToolMeta`): the view that renders its
/// results and who may call it.
///
/// ```
/// use mcp_runtime::protocol::{UiToolMeta, Visibility};
/// let ui = UiToolMeta::view("ui://weather/forecast").with_visibility([Visibility::App]);
/// assert_eq!(
///     serde_json::to_string(&ui).unwrap(),
///     r#"{"resourceUri":"ui://weather/forecast","visibility":["app"]}"#
/// );
/// assert!(ui.app_only());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UiToolMeta {
    /// The `ui://` resource of the view.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_uri: Option<String>,
    /// Who may call the tool (absent: the model and the app).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub visibility: Option<Vec<Visibility>>,
}

impl UiToolMeta {
    /// A tool rendered by the view at `resource_uri`.
    pub fn view(resource_uri: impl Into<String>) -> Self {
        UiToolMeta {
            resource_uri: Some(resource_uri.into()),
            visibility: None,
        }
    }

    /// With who may call the tool.
    pub fn with_visibility(mut self, visibility: impl IntoIterator<Item = Visibility>) -> Self {
        self.visibility = Some(visibility.into_iter().collect());
        self
    }

    /// Whether the model may not call the tool (a `visibility` that names
    /// some callers but not `"model"`; none, or an empty list, means both):
    /// such a tool is not listed to callers that do not render apps.
    pub fn app_only(&self) -> bool {
        self.visibility
            .as_deref()
            .is_some_and(|who| !who.is_empty() && !who.contains(&Visibility::Model))
    }
}

/// A view's `_meta.ui` (`$defs/McpUiResourceMeta`): what its sandbox allows.
///
/// ```
/// use mcp_runtime::protocol::{UiCsp, UiResourceMeta};
/// let ui = UiResourceMeta {
///     csp: Some(UiCsp {
///         connect_domains: Some(vec!["https://api.example.com".into()]),
///         ..Default::default()
///     }),
///     prefers_border: Some(true),
///     ..Default::default()
/// };
/// assert_eq!(
///     serde_json::to_string(&ui).unwrap(),
///     r#"{"csp":{"connectDomains":["https://api.example.com"]},"prefersBorder":true}"#
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UiResourceMeta {
    /// The origins the view may reach (the host builds its CSP from them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub csp: Option<UiCsp>,
    /// The browser permissions the view asks for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permissions: Option<UiPermissions>,
    /// A dedicated sandbox origin (its format is the host's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// Whether the host draws a border and background (absent: the host decides).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefers_border: Option<bool>,
}

/// The origins a view may reach (`$defs/McpUiResourceCsp`); absent lists allow none.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UiCsp {
    /// `fetch`, XHR and WebSocket origins (`connect-src`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connect_domains: Option<Vec<String>>,
    /// Origins of scripts, styles, images, fonts and media.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_domains: Option<Vec<String>>,
    /// Origins of nested frames (`frame-src`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame_domains: Option<Vec<String>>,
    /// Allowed `<base>` URIs (`base-uri`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_uri_domains: Option<Vec<String>>,
}

/// The browser permissions a view asks for (`$defs/McpUiResourcePermissions`):
/// each present as an empty object; hosts may grant them.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UiPermissions {
    /// The camera.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub camera: Option<JsonObject>,
    /// The microphone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub microphone: Option<JsonObject>,
    /// The location.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub geolocation: Option<JsonObject>,
    /// Writing to the clipboard.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clipboard_write: Option<JsonObject>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn app_only_is_any_visibility_without_the_model() {
        let ui = |who: &[Visibility]| UiToolMeta::view("ui://v").with_visibility(who.iter().copied());
        assert!(ui(&[Visibility::App]).app_only());
        assert!(ui(&[Visibility::App, Visibility::App]).app_only());
        assert!(!ui(&[]).app_only(), "an empty list: model and app");
        assert!(!ui(&[Visibility::Model, Visibility::App]).app_only());
        assert!(!ui(&[Visibility::Model]).app_only());
        assert!(!UiToolMeta::view("ui://v").app_only(), "none: model and app");
    }
}

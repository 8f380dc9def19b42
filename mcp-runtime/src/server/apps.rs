//! MCP Apps (`io.modelcontextprotocol/ui`): whether a caller renders apps,
//! the static descriptors `#[resource(app(..))]` and `#[tool(ui = ..)]`
//! register, and the check that every tool's view is served. What a caller
//! is shown is decided with the rest of visibility (`dispatch/visible.rs`).

use super::catalog::Catalog;
use super::context::{Context, FromContext};
use super::BuildError;
use crate::error::McpError;
use crate::protocol::{
    ClientCapabilities, UiClientCapabilities, UiCsp, UiPermissions, UiResourceMeta, UiToolMeta, Visibility,
    APP_MIME_TYPE, UI_EXTENSION, UI_SCHEME,
};

/// Whether `capabilities` declare the Apps extension with the app MIME type
/// (`extensions["io.modelcontextprotocol/ui"].mimeTypes` ∋ `text/html;profile=mcp-app`).
pub(crate) fn renders_apps(capabilities: &ClientCapabilities) -> bool {
    let Some(declared) = capabilities.extensions.as_ref().and_then(|e| e.get(UI_EXTENSION)) else {
        return false;
    };
    // Read without cloning: only `mimeTypes` matters.
    declared
        .get("mimeTypes")
        .and_then(|m| m.as_array())
        .is_some_and(|types| types.iter().any(|t| t.as_str() == Some(APP_MIME_TYPE)))
}

/// Whether the caller of this request renders MCP Apps: its client
/// declared the `io.modelcontextprotocol/ui` extension with the
/// `text/html;profile=mcp-app` MIME type (2026-07-28: in this request's
/// `_meta`; a 2025-11-25 session: at `initialize`). A handler of a tool
/// with a view returns a plain text summary to the others, and may spare
/// them the `structuredContent` only the view reads.
///
/// ```
/// use mcp_runtime::prelude::*;
/// use mcp_runtime::RendersApps;
///
/// /// Today's forecast.
/// #[tool(ui = "ui://weather/forecast")]
/// fn forecast(city: String, apps: RendersApps) -> String {
///     if apps.get() {
///         format!("Forecast for {city} (shown in the view).")
///     } else {
///         format!("{city}: sunny, 21 °C, light wind.")
///     }
/// }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RendersApps(pub bool);

impl RendersApps {
    /// Whether the caller renders apps.
    pub fn get(self) -> bool {
        self.0
    }

    /// Whether `capabilities` say the client renders apps.
    ///
    /// ```
    /// use mcp_runtime::protocol::ClientCapabilities;
    /// use mcp_runtime::RendersApps;
    /// let caps: ClientCapabilities = serde_json::from_value(serde_json::json!({
    ///     "extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}
    /// })).unwrap();
    /// assert!(RendersApps::declared_in(&caps).get());
    /// assert!(!RendersApps::declared_in(&ClientCapabilities::default()).get());
    /// ```
    pub fn declared_in(capabilities: &ClientCapabilities) -> Self {
        RendersApps(renders_apps(capabilities))
    }

    /// The client capabilities that declare rendering apps: for a test
    /// client or a host.
    ///
    /// ```
    /// use mcp_runtime::RendersApps;
    /// assert!(RendersApps::declared_in(&RendersApps::capabilities()).get());
    /// ```
    pub fn capabilities() -> ClientCapabilities {
        let declared = UiClientCapabilities {
            mime_types: Some(vec![APP_MIME_TYPE.to_owned()]),
        };
        let mut extensions = serde_json::Map::new();
        extensions.insert(
            UI_EXTENSION.to_owned(),
            serde_json::to_value(declared).unwrap_or_default(),
        );
        ClientCapabilities {
            extensions: Some(extensions),
            ..Default::default()
        }
    }
}

impl FromContext for RendersApps {
    fn from_context(ctx: &Context) -> Result<Self, McpError> {
        Ok(RendersApps::declared_in(ctx.client_capabilities()))
    }
}

/// A browser permission a view asks for (`#[resource(app(permissions(..)))]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permission {
    /// `camera`
    Camera,
    /// `microphone`
    Microphone,
    /// `geolocation`
    Geolocation,
    /// `clipboardWrite`
    ClipboardWrite,
}

/// The static descriptor of `#[resource(uri = "ui://..", app(..))]`: what
/// the view's sandbox allows. Not written by hand: the macro builds it.
#[derive(Debug, Default)]
pub struct AppDef {
    /// `csp(connect = [..])`
    pub connect_domains: Option<&'static [&'static str]>,
    /// `csp(resource = [..])`
    pub resource_domains: Option<&'static [&'static str]>,
    /// `csp(frame = [..])`
    pub frame_domains: Option<&'static [&'static str]>,
    /// `csp(base_uri = [..])`
    pub base_uri_domains: Option<&'static [&'static str]>,
    /// `permissions(..)`
    pub permissions: &'static [Permission],
    /// `domain = ".."`
    pub domain: Option<&'static str>,
    /// `prefers_border` (`= false` to ask for none)
    pub prefers_border: Option<bool>,
}

impl AppDef {
    /// The `_meta.ui` this descriptor says.
    pub fn to_meta(&self) -> UiResourceMeta {
        let list = |d: Option<&'static [&'static str]>| d.map(|d| d.iter().map(|s| (*s).to_owned()).collect());
        let csp = UiCsp {
            connect_domains: list(self.connect_domains),
            resource_domains: list(self.resource_domains),
            frame_domains: list(self.frame_domains),
            base_uri_domains: list(self.base_uri_domains),
        };
        let asks = |p: Permission| self.permissions.contains(&p).then(serde_json::Map::new);
        let permissions = UiPermissions {
            camera: asks(Permission::Camera),
            microphone: asks(Permission::Microphone),
            geolocation: asks(Permission::Geolocation),
            clipboard_write: asks(Permission::ClipboardWrite),
        };
        UiResourceMeta {
            csp: (csp != UiCsp::default()).then_some(csp),
            permissions: (permissions != UiPermissions::default()).then_some(permissions),
            domain: self.domain.map(str::to_owned),
            prefers_border: self.prefers_border,
        }
    }
}

/// The static `_meta.ui` of `#[tool(ui = "ui://..", visibility(..))]`.
#[derive(Debug)]
pub struct ToolUiDef {
    /// The view's `ui://` URI, if the tool has one.
    pub resource_uri: Option<&'static str>,
    /// Who may call the tool (empty: absent, the model and the app).
    pub visibility: &'static [Visibility],
}

impl ToolUiDef {
    /// The `_meta.ui` this descriptor says.
    pub fn to_meta(&self) -> UiToolMeta {
        UiToolMeta {
            resource_uri: self.resource_uri.map(str::to_owned),
            visibility: (!self.visibility.is_empty()).then(|| self.visibility.to_vec()),
        }
    }
}

/// Every tool's view must be an app resource of the same server, and every
/// view and app resource a static `ui://` URI.
pub(crate) fn check(catalog: &Catalog) -> Result<(), BuildError> {
    for entry in catalog.resources.iter().chain(&catalog.templates) {
        if entry.app && (entry.template.is_some() || !entry.uri.starts_with(UI_SCHEME)) {
            return Err(BuildError::InvalidApp(format!(
                "resource `{}` is an app: its URI must be a static `ui://` URI",
                entry.uri
            )));
        }
    }
    for entry in &catalog.tools {
        let Some(uri) = entry.ui.as_ref().and_then(|ui| ui.resource_uri.as_deref()) else {
            continue;
        };
        if !uri.starts_with(UI_SCHEME) {
            return Err(BuildError::InvalidApp(format!(
                "tool `{}` links to `{uri}`: a view's URI starts with `ui://`",
                entry.name()
            )));
        }
        match catalog.find_resource(uri) {
            None => {
                return Err(BuildError::UnknownView {
                    tool: entry.name().to_owned(),
                    uri: uri.to_owned(),
                })
            }
            Some((view, _)) if !view.app => {
                return Err(BuildError::InvalidApp(format!(
                    "tool `{}` links to `{uri}`, a resource not marked `app(..)`: a view is served as `{}`",
                    entry.name(),
                    APP_MIME_TYPE
                )))
            }
            Some(_) => {}
        }
    }
    Ok(())
}

//! Constructors for content blocks, so handlers need not base64-encode by hand.

use crate::protocol::{
    AudioContent, BlobResourceContents, ContentBlock, EmbeddedResource, ImageContent, ResourceContents, ResourceLink,
    TextContent, TextResourceContents,
};
use base64::Engine;

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

impl TextContent {
    /// Text content.
    pub fn new(text: impl Into<String>) -> Self {
        TextContent {
            text: text.into(),
            ..Default::default()
        }
    }
}

impl ImageContent {
    /// An image from its bytes (base64-encoded here) and MIME type.
    pub fn from_bytes(bytes: &[u8], mime_type: impl Into<String>) -> Self {
        ImageContent {
            data: b64(bytes),
            mime_type: mime_type.into(),
            ..Default::default()
        }
    }
}

impl AudioContent {
    /// Audio from its bytes (base64-encoded here) and MIME type.
    pub fn from_bytes(bytes: &[u8], mime_type: impl Into<String>) -> Self {
        AudioContent {
            data: b64(bytes),
            mime_type: mime_type.into(),
            ..Default::default()
        }
    }
}

impl EmbeddedResource {
    /// An embedded text resource.
    pub fn text(uri: impl Into<String>, mime_type: impl Into<String>, text: impl Into<String>) -> Self {
        EmbeddedResource {
            resource: ResourceContents::Text(TextResourceContents {
                uri: uri.into(),
                mime_type: Some(mime_type.into()),
                text: text.into(),
                meta: None,
            }),
            annotations: None,
            meta: None,
        }
    }

    /// An embedded binary resource (base64-encoded here).
    pub fn blob(uri: impl Into<String>, mime_type: impl Into<String>, bytes: &[u8]) -> Self {
        EmbeddedResource {
            resource: ResourceContents::Blob(BlobResourceContents {
                uri: uri.into(),
                mime_type: Some(mime_type.into()),
                blob: b64(bytes),
                meta: None,
            }),
            annotations: None,
            meta: None,
        }
    }
}

impl ResourceLink {
    /// A link to the resource `uri` named `name`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        ResourceLink {
            uri: uri.into(),
            name: name.into(),
            ..Default::default()
        }
    }
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text(TextContent::new(text))
    }
}

/// Structured output: the value becomes the result's `structuredContent`
/// (any JSON value, no wrapper object), a text block carries the same JSON,
/// and the tool advertises `outputSchema` derived from `T`.
///
/// ```
/// use mcp_runtime::prelude::*;
///
/// #[mcp_runtime::schema]
/// struct Sum { total: i64 }
///
/// /// Adds two numbers.
/// #[tool]
/// fn add(a: i64, b: i64) -> Json<Sum> {
///     Json(Sum { total: a + b })
/// }
/// # fn main() {}
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Json<T>(pub T);

/// Structured output with a summary in words: like [`Json`], and the text
/// content starts with `summary`, so that a host that shows the text (one
/// that does not render an app's view, say) says something a person or a
/// model reads at a glance. The content is the summary, then the JSON text
/// (kept for clients that read only text); `structuredContent` is the value,
/// and the tool advertises `outputSchema` derived from `T`.
///
/// ```
/// use mcp_runtime::prelude::*;
/// use mcp_runtime::Summarized;
///
/// #[mcp_runtime::schema]
/// struct Sum { total: i64 }
///
/// /// Adds two numbers.
/// #[tool]
/// fn add(a: i64, b: i64) -> Summarized<Sum> {
///     let total = a + b;
///     Summarized { summary: format!("{a} + {b} = {total}"), value: Sum { total } }
/// }
/// # fn main() {}
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Summarized<T> {
    /// The sentence the text content starts with.
    pub summary: String,
    /// The structured value.
    pub value: T,
}

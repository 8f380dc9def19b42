//! What a resource function may return, and how each becomes contents.

use crate::content::Json;
use crate::error::McpError;
use crate::mrtr::{Halt, Outcome};
use crate::protocol::{BlobResourceContents, ResourceContents, TextResourceContents};
use base64::Engine;
use serde::Serialize;

/// Binary contents, served base64-encoded as `blob`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Blob(pub Vec<u8>);

/// Turns a resource function's return value into the contents of a read.
///
/// Implemented for `String`, `&'static str` (text), [`Blob`] and `Vec<u8>`
/// (base64 `blob`), `Json<T>` (JSON text, `application/json` unless the
/// resource says otherwise), `ResourceContents`, `Vec<ResourceContents>`,
/// `Option<T>` (`None`: the resource does not exist, -32602 with
/// `data.uri`), `Result<T, McpError>` and `Outcome<T>`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a #[resource] function",
    note = "return String, Blob, Vec<u8>, Json<T>, ResourceContents, Option<T> or Result<T, McpError>"
)]
pub trait IntoResourceContents {
    /// The contents, for the requested `uri` and the resource's MIME type.
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Result<Outcome<Vec<ResourceContents>>, McpError>;
}

fn text(uri: &str, mime_type: Option<&str>, text: String) -> Result<Outcome<Vec<ResourceContents>>, McpError> {
    Ok(Outcome::Complete(vec![ResourceContents::Text(TextResourceContents {
        uri: uri.to_owned(),
        mime_type: mime_type.map(str::to_owned),
        text,
        meta: None,
    })]))
}

impl IntoResourceContents for String {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Result<Outcome<Vec<ResourceContents>>, McpError> {
        text(uri, mime_type, self)
    }
}

impl IntoResourceContents for &'static str {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Result<Outcome<Vec<ResourceContents>>, McpError> {
        text(uri, mime_type, self.to_owned())
    }
}

impl IntoResourceContents for Blob {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Result<Outcome<Vec<ResourceContents>>, McpError> {
        Ok(Outcome::Complete(vec![ResourceContents::Blob(BlobResourceContents {
            uri: uri.to_owned(),
            mime_type: mime_type.map(str::to_owned),
            blob: base64::engine::general_purpose::STANDARD.encode(&self.0),
            meta: None,
        })]))
    }
}

impl IntoResourceContents for Vec<u8> {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Result<Outcome<Vec<ResourceContents>>, McpError> {
        Blob(self).into_contents(uri, mime_type)
    }
}

impl<T: Serialize> IntoResourceContents for Json<T> {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Result<Outcome<Vec<ResourceContents>>, McpError> {
        let json = serde_json::to_string(&self.0)
            .map_err(|e| McpError::internal(format!("resource could not be serialized: {e}")))?;
        text(uri, Some(mime_type.unwrap_or("application/json")), json)
    }
}

impl IntoResourceContents for ResourceContents {
    fn into_contents(self, _uri: &str, _mime: Option<&str>) -> Result<Outcome<Vec<ResourceContents>>, McpError> {
        Ok(Outcome::Complete(vec![self]))
    }
}

impl IntoResourceContents for Vec<ResourceContents> {
    fn into_contents(self, _uri: &str, _mime: Option<&str>) -> Result<Outcome<Vec<ResourceContents>>, McpError> {
        Ok(Outcome::Complete(self))
    }
}

impl<T: IntoResourceContents> IntoResourceContents for Option<T> {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Result<Outcome<Vec<ResourceContents>>, McpError> {
        match self {
            Some(v) => v.into_contents(uri, mime_type),
            None => Err(McpError::resource_not_found(uri)),
        }
    }
}

impl<T: IntoResourceContents> IntoResourceContents for Result<T, McpError> {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Result<Outcome<Vec<ResourceContents>>, McpError> {
        self?.into_contents(uri, mime_type)
    }
}

impl<T: IntoResourceContents> IntoResourceContents for Outcome<T> {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Result<Outcome<Vec<ResourceContents>>, McpError> {
        match self {
            Outcome::Complete(v) => v.into_contents(uri, mime_type),
            Outcome::InputRequired(ir) => Ok(Outcome::InputRequired(ir)),
        }
    }
}

impl<T: IntoResourceContents> IntoResourceContents for Result<T, Halt> {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Result<Outcome<Vec<ResourceContents>>, McpError> {
        match self {
            Ok(v) => v.into_contents(uri, mime_type),
            Err(halt) => halt.into_outcome(),
        }
    }
}

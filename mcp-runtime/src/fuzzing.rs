//! Thin wrappers over crate-private items, for the fuzz targets in `fuzz/`
//! only (feature `fuzzing`). Not a public API: no stability promise.

use crate::dispatch::Head;
use crate::error::McpError;
use crate::meta::MetaSlot;
use serde_json::value::RawValue;
use std::borrow::Cow;

/// The fields the dispatcher's one pass over a request's params reads
/// (`dispatch::Head`), as read by it.
#[derive(Debug, Clone, Copy)]
pub struct HeadView<'a> {
    /// `_meta`, as [`crate::meta::validate`] takes it.
    pub meta: Option<MetaSlot<'a>>,
    /// `name`.
    pub name: Option<&'a RawValue>,
    /// `uri`.
    pub uri: Option<&'a RawValue>,
    /// `arguments`.
    pub arguments: Option<&'a RawValue>,
    /// `inputResponses`.
    pub input_responses: Option<&'a RawValue>,
    /// `requestState`.
    pub request_state: Option<&'a RawValue>,
}

impl<'a> HeadView<'a> {
    fn head(&self) -> Head<'a> {
        Head {
            meta: self.meta,
            name: self.name,
            uri: self.uri,
            arguments: self.arguments,
            input_responses: self.input_responses,
            request_state: self.request_state,
        }
    }

    /// `Head::routing_name`: the name `Mcp-Name` must repeat for `method`.
    pub fn routing_name(&self, method: &str) -> Option<Cow<'a, str>> {
        self.head().routing_name(method)
    }
}

/// `Head::parse`: the one pass over a request's params.
pub fn read_head(params: Option<&RawValue>) -> Result<HeadView<'_>, McpError> {
    let h = Head::parse(params)?;
    Ok(HeadView {
        meta: h.meta,
        name: h.name,
        uri: h.uri,
        arguments: h.arguments,
        input_responses: h.input_responses,
        request_state: h.request_state,
    })
}

/// `Head::string`: an optional string field, -32602 naming it otherwise.
pub fn head_string<'a>(raw: Option<&'a RawValue>, field: &str) -> Result<Option<Cow<'a, str>>, McpError> {
    Head::string(raw, field)
}

/// `Head::required`: a required string field.
pub fn head_required<'a>(raw: Option<&'a RawValue>, field: &str) -> Result<Cow<'a, str>, McpError> {
    Head::required(raw, field)
}

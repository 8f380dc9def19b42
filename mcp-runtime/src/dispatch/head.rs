//! The one pass over a request's params: the fields the dispatcher routes,
//! checks and binds by, borrowed from the request. Method-specific params
//! (a cursor, a completion reference) are read by their own modules.

use crate::error::McpError;
use crate::jsonrpc::raw_str;
use crate::meta::MetaSlot;
use crate::method::{Method, NameParam};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;

/// The common fields of a request's params, unparsed.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Head<'a> {
    /// `_meta` (validated by [`crate::meta::validate`]).
    #[serde(rename = "_meta", borrow, default)]
    pub meta: Option<MetaSlot<'a>>,
    /// `name` of `tools/call` and `prompts/get`.
    #[serde(borrow, default)]
    pub name: Option<&'a RawValue>,
    /// `uri` of `resources/read`.
    #[serde(borrow, default)]
    pub uri: Option<&'a RawValue>,
    /// `arguments` of `tools/call` and `prompts/get`.
    #[serde(borrow, default)]
    pub arguments: Option<&'a RawValue>,
    /// MRTR: the client's answers.
    #[serde(borrow, default)]
    pub input_responses: Option<&'a RawValue>,
    /// `taskId` of `tasks/get`, `tasks/update` and `tasks/cancel`.
    #[serde(borrow, default)]
    pub task_id: Option<&'a RawValue>,
    /// MRTR: the sealed state echoed back.
    #[serde(borrow, default)]
    pub request_state: Option<&'a RawValue>,
}

impl<'a> Head<'a> {
    /// Reads the fields in one pass (absent params read as `{}`).
    pub fn parse(params: Option<&'a RawValue>) -> Result<Self, McpError> {
        match params {
            None => Ok(Head::default()),
            Some(p) => {
                serde_json::from_str(p.get()).map_err(|e| McpError::invalid_params(format!("Invalid params: {e}")))
            }
        }
    }

    /// The text of an optional string field; -32602 naming it if it is not a string.
    pub fn string(raw: Option<&'a RawValue>, field: &str) -> Result<Option<Cow<'a, str>>, McpError> {
        match raw {
            None => Ok(None),
            Some(raw) => raw_str(raw)
                .map(Some)
                .ok_or_else(|| McpError::invalid_params(format!("Invalid params: {field} must be a string"))),
        }
    }

    /// The text of a required string field.
    pub fn required(raw: Option<&'a RawValue>, field: &str) -> Result<Cow<'a, str>, McpError> {
        Self::string(raw, field)?
            .ok_or_else(|| McpError::invalid_params(format!("Invalid params: missing field `{field}`")))
    }

    /// 2025-11-25: `task` of a task-augmented `tools/call` (`{"ttl": ..}`),
    /// read apart for a legacy session's call only (every other request
    /// ignores it, and a smaller `Head` keeps their futures smaller).
    pub fn task(params: Option<&'a RawValue>) -> Result<Option<&'a RawValue>, McpError> {
        #[derive(Deserialize)]
        struct Task<'a> {
            #[serde(borrow, default)]
            task: Option<&'a RawValue>,
        }
        match params {
            None => Ok(None),
            Some(p) => serde_json::from_str::<Task<'a>>(p.get())
                .map(|t| t.task)
                .map_err(|e| McpError::invalid_params(format!("Invalid params: {e}"))),
        }
    }

    /// The name the `Mcp-Name` header must repeat, for the methods that have one.
    pub fn routing_name(&self, method: Option<Method>) -> Option<Cow<'a, str>> {
        let field = match method?.name_param()? {
            NameParam::Uri => self.uri,
            NameParam::Name => self.name,
            NameParam::TaskId => self.task_id,
        };
        Some(field.and_then(raw_str).unwrap_or(Cow::Borrowed("")))
    }
}

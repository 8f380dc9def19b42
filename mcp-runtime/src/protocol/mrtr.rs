//! Multi round-trip requests: `input_required` results and the client's answers.

use super::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult, ListRootsRequestParams,
    ListRootsResult, RequestMeta, ResultMeta, ResultType,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A request the server needs the client to answer (`$defs/InputRequest`), tagged by `method`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "method")]
pub enum InputRequest {
    /// `sampling/createMessage`: ask the client's model.
    #[serde(rename = "sampling/createMessage")]
    CreateMessage {
        /// The sampling request.
        params: CreateMessageRequestParams,
    },
    /// `roots/list`: ask for the client's roots.
    #[serde(rename = "roots/list")]
    ListRoots {
        /// Optional params.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        params: Option<ListRootsRequestParams>,
    },
    /// `elicitation/create`: ask the user.
    #[serde(rename = "elicitation/create")]
    Elicit {
        /// The elicitation request.
        params: ElicitRequestParams,
    },
}

/// Input requests keyed by server-chosen names (`$defs/InputRequests`).
pub type InputRequests = BTreeMap<String, InputRequest>;

/// The client's answer to one [`InputRequest`] (`$defs/InputResponse`); untagged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum InputResponse {
    /// Answer to `sampling/createMessage` (boxed: it is much larger than the others).
    CreateMessage(Box<CreateMessageResult>),
    /// Answer to `roots/list`.
    ListRoots(ListRootsResult),
    /// Answer to `elicitation/create`.
    Elicit(ElicitResult),
}

/// Answers to input requests, keyed like the requests were (`$defs/InputResponses`).
pub type InputResponses = BTreeMap<String, InputResponse>;

/// A result asking for more input before the request can complete (`$defs/InputRequiredResult`).
///
/// At least one of `input_requests` and `request_state` is present.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputRequiredResult {
    /// Always `input_required`.
    pub result_type: ResultType,
    /// What the client must answer before retrying.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<InputRequests>,
    /// Opaque state the client echoes on the retry.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// Result metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

impl Default for InputRequiredResult {
    fn default() -> Self {
        Self {
            result_type: ResultType::InputRequired,
            input_requests: None,
            request_state: None,
            meta: None,
        }
    }
}

/// Params of a retried request that answers an `input_required` result (`$defs/InputResponseRequestParams`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputResponseRequestParams {
    /// Request metadata.
    #[serde(rename = "_meta")]
    pub meta: RequestMeta,
    /// Answers to the earlier input requests.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<InputResponses>,
    /// State echoed from the earlier result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
}

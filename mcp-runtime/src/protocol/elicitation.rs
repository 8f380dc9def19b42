//! Elicitation: a server asks the user for input, by form or by URL (`elicitation/create`).

mod schema;
mod select;

pub use schema::*;
pub use select::*;

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Params of an `elicitation/create` input request (`$defs/ElicitRequestParams`): form or URL mode.
///
/// Untagged, because `mode` may be omitted for form mode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ElicitRequestParams {
    /// Form mode: structured, non-sensitive input.
    Form(ElicitRequestFormParams),
    /// URL mode: the user goes to a URL, out of band.
    Url(ElicitRequestUrlParams),
}

/// Params of a form-mode elicitation (`$defs/ElicitRequestFormParams`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitRequestFormParams {
    /// `"form"`; may be omitted, as form is the default mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<FormMode>,
    /// What is being asked, shown to the user.
    pub message: String,
    /// The form: a flat object schema of primitive properties.
    pub requested_schema: ElicitRequestedSchema,
}

/// The `"form"` elicitation mode tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FormMode {
    /// Form mode.
    #[default]
    Form,
}

/// The restricted JSON Schema of a form (`ElicitRequestFormParams.requestedSchema`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitRequestedSchema {
    /// The JSON Schema dialect, if not the default.
    #[serde(rename = "$schema", skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Always `"object"`.
    pub r#type: ObjectType,
    /// The fields, in display order.
    pub properties: ElicitProperties,
    /// Names of the fields that must be filled in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub required: Option<Vec<String>>,
}

/// Params of a URL-mode elicitation (`$defs/ElicitRequestURLParams`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitRequestUrlParams {
    /// Always `"url"`.
    pub mode: UrlMode,
    /// Why the user should visit the URL.
    pub message: String,
    /// The URL to visit.
    pub url: String,
    /// An id for the elicitation: required by 2025-11-25 (which sends it as
    /// a server-to-client request), ignored by 2026-07-28 clients.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elicitation_id: Option<String>,
}

/// The `"url"` elicitation mode tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UrlMode {
    /// URL mode.
    #[default]
    Url,
}

/// The client's answer to `elicitation/create` (`$defs/ElicitResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitResult {
    /// What the user did.
    pub action: ElicitAction,
    /// The submitted form data: only for `accept` in form mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<BTreeMap<String, ElicitValue>>,
}

/// What the user did with an elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// Submitted the form or confirmed.
    Accept,
    /// Explicitly declined.
    Decline,
    /// Dismissed without choosing.
    Cancel,
}

/// One submitted form value: a string, number, boolean or list of strings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ElicitValue {
    /// A string (also enum and single-select values).
    String(String),
    /// A number, integer or not (kept exactly as sent).
    Number(serde_json::Number),
    /// A boolean.
    Boolean(bool),
    /// The choices of a multi-select.
    Strings(Vec<String>),
}

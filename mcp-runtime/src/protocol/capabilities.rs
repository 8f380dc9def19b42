//! What a client declares per request, and what a server offers.

use super::JsonObject;
use serde::{Deserialize, Serialize};

/// Capabilities a client declares in a request's `_meta` (`$defs/ClientCapabilities`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ClientCapabilities {
    /// The client can answer `elicitation/create`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<ElicitationCapability>,
    /// The client can answer `sampling/createMessage`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sampling: Option<SamplingCapability>,
    /// The client can answer `roots/list`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub roots: Option<JsonObject>,
    /// Experimental capabilities.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub experimental: Option<serde_json::Map<String, serde_json::Value>>,
    /// Extensions, keyed by identifier.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extensions: Option<serde_json::Map<String, serde_json::Value>>,
}

/// A client capability a server may need: the kinds of input request a
/// client can answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClientCapability {
    /// `elicitation`, in any mode.
    Elicitation,
    /// Form-mode elicitation (`elicitation` with no modes, or `elicitation.form`).
    ElicitationForm,
    /// `elicitation.url` (URL mode).
    ElicitationUrl,
    /// `sampling`.
    Sampling,
    /// `roots`.
    Roots,
}

impl ClientCapability {
    /// Whether `declared` covers this capability.
    pub fn is_declared_in(self, declared: &ClientCapabilities) -> bool {
        match self {
            ClientCapability::Elicitation => declared.elicitation.is_some(),
            ClientCapability::ElicitationForm => declared
                .elicitation
                .as_ref()
                .is_some_and(|e| e.form.is_some() || e.url.is_none()),
            ClientCapability::ElicitationUrl => declared.elicitation.as_ref().is_some_and(|e| e.url.is_some()),
            ClientCapability::Sampling => declared.sampling.is_some(),
            ClientCapability::Roots => declared.roots.is_some(),
        }
    }

    /// Adds this capability to a `requiredCapabilities` object (the `data`
    /// of -32021), as the declaration that would cover it together with
    /// what the object already requires (form and URL elicitation both:
    /// `{"form": {}, "url": {}}`, since `{"url": {}}` alone is no form mode).
    pub fn add_to(self, required: &mut serde_json::Map<String, serde_json::Value>) {
        use serde_json::{json, Value};
        let (name, value) = match self {
            ClientCapability::Elicitation | ClientCapability::ElicitationForm => ("elicitation", json!({})),
            ClientCapability::ElicitationUrl => ("elicitation", json!({"url": {}})),
            ClientCapability::Sampling => ("sampling", json!({})),
            ClientCapability::Roots => ("roots", json!({})),
        };
        let merged = match (required.get(name), &value) {
            // Both modes of elicitation.
            (Some(Value::Object(had)), Value::Object(new)) if name == "elicitation" && had != new => {
                json!({"form": {}, "url": {}})
            }
            _ => value,
        };
        required.insert(name.to_owned(), merged);
    }
}

/// The elicitation modes a client supports.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ElicitationCapability {
    /// Form mode (an empty capability object means form mode too).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub form: Option<JsonObject>,
    /// URL mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<JsonObject>,
}

/// What a client's sampling supports.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SamplingCapability {
    /// Context inclusion.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<JsonObject>,
    /// Tool use during sampling.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<JsonObject>,
}

/// Capabilities a server offers (`$defs/ServerCapabilities`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ServerCapabilities {
    /// Argument completion.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completions: Option<JsonObject>,
    /// Log messages to the client.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logging: Option<JsonObject>,
    /// Prompt templates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompts: Option<ListChangedCapability>,
    /// Readable resources.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourcesCapability>,
    /// Callable tools.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<ListChangedCapability>,
    /// Experimental capabilities.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub experimental: Option<serde_json::Map<String, serde_json::Value>>,
    /// Extensions, keyed by identifier.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extensions: Option<serde_json::Map<String, serde_json::Value>>,
    /// 2025-11-25 only: the task-augmented requests the server accepts
    /// (`{"cancel": {}, "requests": {"tools": {"call": {}}}}`), declared at
    /// `initialize`. 2026-07-28 has the tasks extension instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tasks: Option<JsonObject>,
}

impl ServerCapabilities {
    /// Whether a 2025-11-25 server accepts task-augmented `tools/call`s
    /// (`tasks.requests.tools.call`).
    pub fn accepts_tool_tasks(&self) -> bool {
        self.tasks
            .as_ref()
            .and_then(|t| t.get("requests"))
            .and_then(|r| r.get("tools"))
            .and_then(|t| t.get("call"))
            .is_some_and(serde_json::Value::is_object)
    }
}

/// A capability that may announce list changes.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListChangedCapability {
    /// Whether list-changed notifications are sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

/// The resources capability.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesCapability {
    /// Whether list-changed notifications are sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Whether clients may subscribe to resource updates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subscribe: Option<bool>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_and_url_elicitation_required_together_name_both_modes() {
        for order in [
            [ClientCapability::ElicitationForm, ClientCapability::ElicitationUrl],
            [ClientCapability::ElicitationUrl, ClientCapability::ElicitationForm],
        ] {
            let mut required = serde_json::Map::new();
            for capability in order {
                capability.add_to(&mut required);
            }
            let wanted = serde_json::json!({"form": {}, "url": {}});
            assert_eq!(required["elicitation"], wanted, "{order:?}");
            let declared = ClientCapabilities {
                elicitation: serde_json::from_value(wanted).unwrap(),
                ..Default::default()
            };
            assert!(order.iter().all(|c| c.is_declared_in(&declared)));
        }
        let mut required = serde_json::Map::new();
        ClientCapability::ElicitationUrl.add_to(&mut required);
        ClientCapability::ElicitationUrl.add_to(&mut required);
        assert_eq!(required["elicitation"], serde_json::json!({"url": {}}));
    }
}

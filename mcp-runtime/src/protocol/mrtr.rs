//! Multi round-trip requests: `input_required` results and the client's answers.

/// Answers to input requests, keyed like the requests were (`$defs/InputResponses`).
pub type InputResponses = serde_json::Map<String, serde_json::Value>;

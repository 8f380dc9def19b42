//! The [`Input`] extractor and typed asks.

use super::form::{requested_schema, ElicitForm};
use super::{Flow, Halt, InputRequired, MrtrScope};
use crate::error::McpError;
use crate::protocol::{ClientCapabilities, Root};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::sync::Arc;

/// Asks the client for input from inside a `tools/call`, `prompts/get` or
/// `resources/read` handler (add an `input: Input` parameter and return
/// [`Flow<T>`](super::Flow)).
///
/// ```
/// use mcp_runtime::prelude::*;
///
/// /// How to refund.
/// #[mcp_runtime::form]
/// struct Refund {
///     /// Refund to the original card (or as store credit).
///     to_card: bool,
/// }
///
/// /// Cancels an order, asking how to refund it.
/// #[tool]
/// fn cancel_order(order_id: String, input: Input) -> Flow<String> {
///     match input.elicit::<Refund>("refund", "How should we refund you?")? {
///         Elicited::Accepted(r) if r.to_card => Ok(format!("{order_id}: refunded to card")),
///         Elicited::Accepted(_) => Ok(format!("{order_id}: store credit issued")),
///         Elicited::Declined | Elicited::Cancelled => Ok(format!("{order_id}: not cancelled")),
///     }
/// }
/// # fn main() {}
/// ```
#[derive(Clone)]
pub struct Input {
    scope: Arc<MrtrScope>,
    caps: std::sync::Arc<ClientCapabilities>,
}

impl std::fmt::Debug for Input {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Input")
            .field("round", &self.scope.round)
            .field("answers", &self.scope.answers.len())
            .finish()
    }
}

impl Input {
    /// The `Input` of a handler run in an MRTR round.
    pub(crate) fn new(scope: Arc<MrtrScope>, caps: Arc<ClientCapabilities>) -> Self {
        Input { scope, caps }
    }
}

/// The answer to an elicitation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Elicited<T> {
    /// The user submitted the form.
    Accepted(T),
    /// The user explicitly declined.
    Declined,
    /// The user dismissed the request.
    Cancelled,
}

impl<T> Elicited<T> {
    /// The accepted value, if any.
    pub fn accepted(self) -> Option<T> {
        match self {
            Elicited::Accepted(v) => Some(v),
            _ => None,
        }
    }
}

/// The model's answer to a sampling request.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Sampled {
    /// The role of the answer (normally `assistant`).
    pub role: String,
    /// The content: one block, or an array of blocks.
    pub content: Value,
    /// The model that answered.
    pub model: String,
    /// Why sampling stopped, if said.
    #[serde(default)]
    pub stop_reason: Option<String>,
}

impl Sampled {
    /// The text of the answer (the first text block), if any.
    pub fn text(&self) -> Option<&str> {
        let block = match &self.content {
            Value::Array(items) => items.iter().find(|b| b["type"] == "text")?,
            one => one,
        };
        block.get("text").and_then(Value::as_str)
    }
}

/// A sampling request, built up fluently.
#[derive(Debug, Clone, Default)]
pub struct Sampling {
    messages: Vec<Value>,
    system_prompt: Option<String>,
    max_tokens: u32,
    temperature: Option<f64>,
    model_hints: Vec<String>,
    stop_sequences: Vec<String>,
}

impl Sampling {
    /// A request with one user message and a 1,000-token limit.
    pub fn user(text: impl Into<String>) -> Self {
        Sampling {
            max_tokens: 1000,
            ..Default::default()
        }
        .then_user(text)
    }

    /// Appends a user message.
    pub fn then_user(mut self, text: impl Into<String>) -> Self {
        self.messages
            .push(json!({"role": "user", "content": {"type": "text", "text": text.into()}}));
        self
    }

    /// Appends an assistant message.
    pub fn then_assistant(mut self, text: impl Into<String>) -> Self {
        self.messages
            .push(json!({"role": "assistant", "content": {"type": "text", "text": text.into()}}));
        self
    }

    /// Sets the system prompt.
    pub fn system(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }

    /// Sets the token limit.
    pub fn max_tokens(mut self, n: u32) -> Self {
        self.max_tokens = n;
        self
    }

    /// Sets the temperature.
    pub fn temperature(mut self, t: f64) -> Self {
        self.temperature = Some(t);
        self
    }

    /// Adds a model-name hint to the model preferences.
    pub fn prefer_model(mut self, hint: impl Into<String>) -> Self {
        self.model_hints.push(hint.into());
        self
    }

    /// Adds a stop sequence.
    pub fn stop_at(mut self, sequence: impl Into<String>) -> Self {
        self.stop_sequences.push(sequence.into());
        self
    }

    fn params(&self) -> Value {
        let mut p = json!({"messages": self.messages, "maxTokens": self.max_tokens});
        if let Some(s) = &self.system_prompt {
            p["systemPrompt"] = json!(s);
        }
        if let Some(t) = self.temperature {
            p["temperature"] = json!(t);
        }
        if !self.model_hints.is_empty() {
            p["modelPreferences"] =
                json!({"hints": self.model_hints.iter().map(|h| json!({"name": h})).collect::<Vec<_>>()});
        }
        if !self.stop_sequences.is_empty() {
            p["stopSequences"] = json!(self.stop_sequences);
        }
        p
    }
}

/// One typed ask: its key, the request it sends, and how its answer parses.
pub struct Ask<T> {
    key: String,
    method: &'static str,
    params: Value,
    capability: &'static str,
    parse: Box<dyn Fn(Value) -> Result<T, String> + Send + Sync>,
}

#[derive(Deserialize)]
struct ElicitResult {
    action: String,
    #[serde(default)]
    content: Option<Value>,
}

fn parse_elicited<T: DeserializeOwned>(value: Value) -> Result<Elicited<T>, String> {
    let r: ElicitResult = serde_json::from_value(value).map_err(|e| format!("not an elicitation result: {e}"))?;
    match r.action.as_str() {
        "accept" => {
            let content = r.content.unwrap_or_else(|| json!({}));
            serde_json::from_value(content)
                .map(Elicited::Accepted)
                .map_err(|e| format!("the form content is invalid: {e}"))
        }
        "decline" => Ok(Elicited::Declined),
        "cancel" => Ok(Elicited::Cancelled),
        other => Err(format!("unknown elicitation action {other:?}")),
    }
}

impl<T: ElicitForm + 'static> Ask<Elicited<T>> {
    /// Asks the user to fill in the form `T` (form-mode elicitation).
    pub fn elicit(key: impl Into<String>, message: impl Into<String>) -> Self {
        Ask {
            key: key.into(),
            method: "elicitation/create",
            params: json!({"mode": "form", "message": message.into(), "requestedSchema": requested_schema::<T>()}),
            capability: "elicitation",
            parse: Box::new(parse_elicited::<T>),
        }
    }
}

impl Ask<Elicited<()>> {
    /// Sends the user to a URL (URL-mode elicitation), for interactions
    /// that must not pass through the client (credentials, payments).
    pub fn elicit_url(key: impl Into<String>, message: impl Into<String>, url: impl Into<String>) -> Self {
        let key = key.into();
        Ask {
            params: json!({"mode": "url", "message": message.into(), "url": url.into(), "elicitationId": key}),
            key,
            method: "elicitation/create",
            capability: "elicitation.url",
            parse: Box::new(|v| {
                parse_elicited::<Value>(v).map(|e| match e {
                    Elicited::Accepted(_) => Elicited::Accepted(()),
                    Elicited::Declined => Elicited::Declined,
                    Elicited::Cancelled => Elicited::Cancelled,
                })
            }),
        }
    }
}

impl Ask<Sampled> {
    /// Asks the client's model to answer a sampling request.
    pub fn sample(key: impl Into<String>, request: Sampling) -> Self {
        Ask {
            key: key.into(),
            method: "sampling/createMessage",
            params: request.params(),
            capability: "sampling",
            parse: Box::new(|v| serde_json::from_value(v).map_err(|e| format!("not a sampling result: {e}"))),
        }
    }
}

#[derive(Deserialize)]
struct RootsResult {
    roots: Vec<Root>,
}

impl Ask<Vec<Root>> {
    /// Asks the client for its roots (the folders it lets the server see).
    pub fn roots(key: impl Into<String>) -> Self {
        Ask {
            key: key.into(),
            method: "roots/list",
            params: json!({}),
            capability: "roots",
            parse: Box::new(|v| {
                serde_json::from_value::<RootsResult>(v)
                    .map(|r| r.roots)
                    .map_err(|e| format!("not a roots result: {e}"))
            }),
        }
    }
}

impl<T> Ask<T> {
    fn covered_by(&self, caps: &ClientCapabilities) -> bool {
        match self.capability {
            "elicitation" => caps
                .elicitation
                .as_ref()
                .is_some_and(|e| e.form.is_some() || e.url.is_none()),
            "elicitation.url" => caps.elicitation.as_ref().is_some_and(|e| e.url.is_some()),
            "sampling" => caps.sampling.is_some(),
            "roots" => caps.roots.is_some(),
            _ => false,
        }
    }

    fn missing_capability(&self) -> Value {
        match self.capability {
            "elicitation.url" => json!({"elicitation": {"url": {}}}),
            other => json!({ other: {} }),
        }
    }

    /// Looks the answer up: `None` if not answered yet.
    fn take(&self, answers: &Map<String, Value>) -> Option<Result<T, McpError>> {
        let value = answers.get(&self.key)?;
        if value.is_null() {
            return None;
        }
        Some(
            (self.parse)(value.clone()).map_err(|why| {
                McpError::invalid_params(format!("Invalid params: inputResponses[{:?}]: {why}", self.key))
            }),
        )
    }

    fn request(&self) -> Value {
        json!({"method": self.method, "params": self.params})
    }
}

/// A set of asks resolved together (tuples of up to four [`Ask`]s): all
/// unanswered ones go to the client in one `input_required` round.
pub trait Asks {
    /// The typed answers.
    type Output;
    /// Resolves against the input, or halts to ask.
    fn resolve(self, input: &Input) -> Flow<Self::Output>;
}

struct Pending {
    requests: Map<String, Value>,
    missing_caps: Map<String, Value>,
}

impl Pending {
    fn new() -> Self {
        Pending {
            requests: Map::new(),
            missing_caps: Map::new(),
        }
    }

    fn add<T>(&mut self, ask: &Ask<T>, caps: &ClientCapabilities) {
        if ask.covered_by(caps) {
            self.requests.insert(ask.key.clone(), ask.request());
        } else if let Value::Object(m) = ask.missing_capability() {
            for (k, v) in m {
                self.missing_caps.insert(k, v);
            }
        }
    }

    fn halt(self) -> Halt {
        if !self.missing_caps.is_empty() {
            return Halt::Protocol(McpError::missing_capability(Value::Object(self.missing_caps)));
        }
        Halt::Ask(InputRequired {
            input_requests: self.requests,
            request_state: None,
        })
    }
}

macro_rules! tuple_asks {
    ($($name:ident : $t:ident),+) => {
        impl<$($t),+> Asks for ($(Ask<$t>,)+) {
            type Output = ($($t,)+);
            fn resolve(self, input: &Input) -> Flow<Self::Output> {
                let ($($name,)+) = self;
                let answers = &input.scope.answers;
                let mut pending = Pending::new();
                $(
                    let $name = match $name.take(answers) {
                        Some(Ok(v)) => Some(v),
                        Some(Err(e)) => return Err(Halt::Protocol(e)),
                        None => { pending.add(&$name, &input.caps); None }
                    };
                )+
                match ($($name,)+) {
                    ($(Some($name),)+) => Ok(($($name,)+)),
                    _ => Err(pending.halt()),
                }
            }
        }
    };
}
tuple_asks!(a: A);
tuple_asks!(a: A, b: B);
tuple_asks!(a: A, b: B, c: C);
tuple_asks!(a: A, b: B, c: C, d: D);

impl Input {
    /// Resolves several asks in one round: `input.ask((Ask::elicit(..), Ask::roots(..)))?`.
    pub fn ask<A: Asks>(&self, asks: A) -> Flow<A::Output> {
        asks.resolve(self)
    }

    /// Asks the user to fill in the form `T`.
    pub fn elicit<T: ElicitForm + 'static>(&self, key: &str, message: &str) -> Flow<Elicited<T>> {
        self.ask((Ask::<Elicited<T>>::elicit(key, message),)).map(|(v,)| v)
    }

    /// Sends the user to a URL (URL-mode elicitation).
    pub fn elicit_url(&self, key: &str, message: &str, url: &str) -> Flow<Elicited<()>> {
        self.ask((Ask::elicit_url(key, message, url),)).map(|(v,)| v)
    }

    /// Asks the client's model.
    pub fn sample(&self, key: &str, request: Sampling) -> Flow<Sampled> {
        self.ask((Ask::sample(key, request),)).map(|(v,)| v)
    }

    /// Asks for the client's roots.
    pub fn roots(&self, key: &str) -> Flow<Vec<Root>> {
        self.ask((Ask::roots(key),)).map(|(v,)| v)
    }

    /// Whether the client can answer form elicitations.
    pub fn can_elicit(&self) -> bool {
        self.caps
            .elicitation
            .as_ref()
            .is_some_and(|e| e.form.is_some() || e.url.is_none())
    }

    /// Whether the client can answer sampling requests.
    pub fn can_sample(&self) -> bool {
        self.caps.sampling.is_some()
    }

    /// Whether the client can list roots.
    pub fn can_list_roots(&self) -> bool {
        self.caps.roots.is_some()
    }

    /// Which round this is: 0 for the first request, 1 after one `input_required`...
    pub fn round(&self) -> u32 {
        self.scope.round
    }

    /// Saves typed continuation state, sealed into the next `requestState`.
    pub fn save<S: Serialize>(&self, state: &S) -> Result<(), Halt> {
        let value = serde_json::to_value(state).map_err(|e| Halt::Protocol(McpError::internal(e.to_string())))?;
        *self.scope.state.lock().unwrap_or_else(|p| p.into_inner()) = Some(value);
        Ok(())
    }

    /// The continuation state saved in an earlier round, if any.
    pub fn state<S: DeserializeOwned>(&self) -> Option<S> {
        let guard = self.scope.state.lock().unwrap_or_else(|p| p.into_inner());
        guard.as_ref().and_then(|v| serde_json::from_value(v.clone()).ok())
    }
}

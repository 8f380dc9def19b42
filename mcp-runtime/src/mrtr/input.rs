//! The [`Input`] extractor and typed asks.

use super::form::ElicitForm;
use super::{Flow, Halt, InputRequired, MrtrScope};
use crate::error::McpError;
use crate::protocol::{
    ClientCapabilities, ClientCapability, CreateMessageRequestParams, CreateMessageResult, ElicitAction,
    ElicitRequestFormParams, ElicitRequestParams, ElicitRequestUrlParams, ElicitResult, FormMode, InputRequest,
    ListRootsResult, ModelHint, Role, Root, SamplingContent, SamplingMessage, SamplingMessageContentBlock, TextContent,
    UrlMode,
};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};
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

/// The model's answer to a sampling request: the protocol's
/// `CreateMessageResult`, read from the client's input response.
pub type Sampled = CreateMessageResult;

impl CreateMessageResult {
    /// The text of the answer (its first text block), if any.
    pub fn text(&self) -> Option<&str> {
        fn text(block: &SamplingMessageContentBlock) -> Option<&str> {
            match block {
                SamplingMessageContentBlock::Text(t) => Some(t.text.as_str()),
                _ => None,
            }
        }
        match &self.content {
            SamplingContent::One(block) => text(block),
            SamplingContent::Many(blocks) => blocks.iter().find_map(text),
        }
    }
}

/// A sampling request, built up fluently: the protocol's
/// `CreateMessageRequestParams`.
#[derive(Debug, Clone, Default)]
pub struct Sampling {
    params: CreateMessageRequestParams,
}

fn message(role: Role, text: String) -> SamplingMessage {
    SamplingMessage {
        role,
        content: SamplingContent::One(SamplingMessageContentBlock::Text(TextContent::new(text))),
        meta: None,
    }
}

impl Sampling {
    /// A request with one user message and a 1,000-token limit.
    pub fn user(text: impl Into<String>) -> Self {
        Sampling {
            params: CreateMessageRequestParams {
                max_tokens: 1000,
                ..Default::default()
            },
        }
        .then_user(text)
    }

    /// Appends a user message.
    pub fn then_user(mut self, text: impl Into<String>) -> Self {
        self.params.messages.push(message(Role::User, text.into()));
        self
    }

    /// Appends an assistant message (an earlier answer, for a conversation).
    pub fn then_assistant(mut self, text: impl Into<String>) -> Self {
        self.params.messages.push(message(Role::Assistant, text.into()));
        self
    }

    /// Sets the system prompt.
    pub fn system(mut self, prompt: impl Into<String>) -> Self {
        self.params.system_prompt = Some(prompt.into());
        self
    }

    /// Sets the token limit.
    pub fn max_tokens(mut self, n: u32) -> Self {
        self.params.max_tokens = u64::from(n);
        self
    }

    /// Sets the sampling temperature.
    pub fn temperature(mut self, t: f64) -> Self {
        self.params.temperature = Some(t);
        self
    }

    /// Adds a model name hint (in order of preference).
    pub fn prefer_model(mut self, hint: impl Into<String>) -> Self {
        let prefs = self.params.model_preferences.get_or_insert_with(Default::default);
        prefs.hints.get_or_insert_with(Vec::new).push(ModelHint {
            name: Some(hint.into()),
        });
        self
    }

    /// Adds a stop sequence.
    pub fn stop_at(mut self, sequence: impl Into<String>) -> Self {
        self.params
            .stop_sequences
            .get_or_insert_with(Vec::new)
            .push(sequence.into());
        self
    }
}

/// One typed ask: its key, the input request it sends, the client
/// capability that request needs, and how its answer parses.
pub struct Ask<T> {
    key: String,
    /// The request, or why it could not be built (a form type whose schema
    /// is outside the elicitation subset: reported when the ask is made).
    request: Result<InputRequest, String>,
    capability: ClientCapability,
    parse: Box<dyn Fn(Value) -> Result<T, String> + Send + Sync>,
}

/// An `elicitation/create` answer as the user's choice; accepted content
/// must also keep the bounds `schema` (the `requestedSchema` sent) states,
/// which serde does not check (`minimum`, `maxLength`, ...). A schema that
/// is not an object states none.
fn parse_elicited<T: DeserializeOwned>(mut value: Value, schema: &Value) -> Result<Elicited<T>, String> {
    if !value.is_object() {
        return Err("not an elicitation result: expected an object".into());
    }
    // A `null` field of the content is an optional field left empty (some
    // clients send it so); the schema's value types have no null.
    if let Some(Value::Object(content)) = value.get_mut("content") {
        content.retain(|_, v| !v.is_null());
    }
    let r: ElicitResult = serde_json::from_value(value).map_err(|e| format!("not an elicitation result: {e}"))?;
    match r.action {
        ElicitAction::Accept => {
            let content = serde_json::to_value(r.content.unwrap_or_default()).map_err(|e| e.to_string())?;
            crate::schema::validate::check(schema, &content, "content")
                .map_err(|e| format!("the form content is invalid: {e}"))?;
            serde_json::from_value(content)
                .map(Elicited::Accepted)
                .map_err(|e| format!("the form content is invalid: {e}"))
        }
        ElicitAction::Decline => Ok(Elicited::Declined),
        ElicitAction::Cancel => Ok(Elicited::Cancelled),
    }
}

impl<T: ElicitForm + 'static> Ask<Elicited<T>> {
    /// Asks the user to fill in the form `T` (form-mode elicitation).
    pub fn elicit(key: impl Into<String>, message: impl Into<String>) -> Self {
        let (requested, schema) = super::form::requested_schema_with_value::<T>();
        Ask {
            key: key.into(),
            request: requested.map(|requested_schema| InputRequest::Elicit {
                params: ElicitRequestParams::Form(ElicitRequestFormParams {
                    mode: Some(FormMode::Form),
                    message: message.into(),
                    requested_schema,
                }),
            }),
            capability: ClientCapability::ElicitationForm,
            parse: Box::new(move |v| parse_elicited::<T>(v, &schema)),
        }
    }
}

impl Ask<Elicited<()>> {
    /// Sends the user to a URL (URL-mode elicitation), for interactions
    /// that must not pass through the client (credentials, payments).
    pub fn elicit_url(key: impl Into<String>, message: impl Into<String>, url: impl Into<String>) -> Self {
        let key = key.into();
        Ask {
            request: Ok(InputRequest::Elicit {
                params: ElicitRequestParams::Url(ElicitRequestUrlParams {
                    mode: UrlMode::Url,
                    message: message.into(),
                    url: url.into(),
                    // Unique within the server, as 2025-11-25 asks: a client
                    // tells concurrent ones (and their completions) apart.
                    elicitation_id: Some(format!("{key}-{}", crate::session::random_id())),
                }),
            }),
            key,
            capability: ClientCapability::ElicitationUrl,
            parse: Box::new(|v| {
                parse_elicited::<Value>(v, &Value::Null).map(|e| match e {
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
            request: Ok(InputRequest::CreateMessage { params: request.params }),
            capability: ClientCapability::Sampling,
            parse: Box::new(|v| serde_json::from_value(v).map_err(|e| format!("not a sampling result: {e}"))),
        }
    }
}

impl Ask<Vec<Root>> {
    /// Asks the client for its roots (the folders it lets the server see).
    pub fn roots(key: impl Into<String>) -> Self {
        Ask {
            key: key.into(),
            request: Ok(InputRequest::ListRoots {
                params: Some(Default::default()),
            }),
            capability: ClientCapability::Roots,
            parse: Box::new(|v| {
                serde_json::from_value::<ListRootsResult>(v)
                    .map(|r| r.roots)
                    .map_err(|e| format!("not a roots result: {e}"))
            }),
        }
    }
}

impl<T> Ask<T> {
    /// The key the answer comes back under.
    pub(crate) fn key(&self) -> &str {
        &self.key
    }

    /// The client capability the request needs.
    pub(crate) fn capability(&self) -> ClientCapability {
        self.capability
    }

    /// The input request as the wire carries it.
    pub(crate) fn request_value(&self) -> Result<Value, String> {
        let request = self
            .request
            .as_ref()
            .map_err(|why| format!("ask {:?}: {why}", self.key))?;
        serde_json::to_value(request).map_err(|e| format!("ask {:?}: {e}", self.key))
    }

    /// Reads an answer: -32602 naming the key if it is malformed.
    pub(crate) fn answer(&self, value: Value) -> Result<T, McpError> {
        (self.parse)(value)
            .map_err(|why| McpError::invalid_params(format!("Invalid params: inputResponses[{:?}]: {why}", self.key)))
    }

    /// Looks the answer up: `None` if not answered yet.
    fn take(&self, answers: &Map<String, Value>) -> Option<Result<T, McpError>> {
        let value = answers.get(&self.key)?;
        if value.is_null() {
            return None;
        }
        Some(self.answer(value.clone()))
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
    broken: Option<String>,
}

impl Pending {
    fn new() -> Self {
        Pending {
            requests: Map::new(),
            missing_caps: Map::new(),
            broken: None,
        }
    }

    fn add<T>(&mut self, ask: &Ask<T>, caps: &ClientCapabilities) {
        if ask.capability.is_declared_in(caps) {
            // The typed request, as the wire carries it.
            match ask.request.as_ref().map(serde_json::to_value) {
                Ok(Ok(request)) => {
                    self.requests.insert(ask.key.clone(), request);
                }
                Ok(Err(e)) => self.broken = Some(format!("ask {:?}: {e}", ask.key)),
                Err(why) => self.broken = Some(format!("ask {:?}: {why}", ask.key)),
            }
        } else {
            ask.capability.add_to(&mut self.missing_caps);
        }
    }

    fn halt(self) -> Halt {
        if let Some(why) = self.broken {
            return Halt::Protocol(McpError::internal(why));
        }
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

    #[cfg(feature = "client")]
    /// The answers this round carries, raw (`inputResponses`).
    pub(crate) fn answers(&self) -> &Map<String, Value> {
        &self.scope.answers
    }

    #[cfg(feature = "client")]
    /// The capabilities the caller declared.
    pub(crate) fn capabilities(&self) -> &ClientCapabilities {
        &self.caps
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Debug, PartialEq, serde::Deserialize)]
    struct Form {
        name: String,
        note: Option<String>,
    }

    #[test]
    fn elicitation_answers_are_read_as_the_typed_result() {
        let ok = parse_elicited::<Form>(
            json!({"action": "accept", "content": {"name": "Ada", "note": null}}),
            &Value::Null,
        );
        assert_eq!(
            ok,
            Ok(Elicited::Accepted(Form {
                name: "Ada".into(),
                note: None
            }))
        );
        assert_eq!(
            parse_elicited::<Form>(json!({"action": "decline"}), &Value::Null),
            Ok(Elicited::Declined)
        );
        for bad in [
            json!(["accept", {"name": "Ada"}]),
            json!({"action": "Accept"}),
            json!({"action": "accept", "content": {"name": {"nested": 1}}}),
            json!({"action": "accept", "content": []}),
        ] {
            assert!(parse_elicited::<Form>(bad.clone(), &Value::Null).is_err(), "{bad}");
        }
    }

    #[test]
    fn accepted_content_keeps_the_bounds_its_form_states() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "maxLength": 5},
            "qty": {"type": "integer", "minimum": 1, "maximum": 10}
        }});
        #[derive(Debug, PartialEq, serde::Deserialize)]
        struct Order {
            name: String,
            qty: u32,
        }
        let answer = |content: Value| parse_elicited::<Order>(json!({"action": "accept", "content": content}), &schema);
        assert_eq!(
            answer(json!({"name": "Ada", "qty": 10})),
            Ok(Elicited::Accepted(Order {
                name: "Ada".into(),
                qty: 10
            }))
        );
        for (bad, says) in [
            (json!({"name": "Ada", "qty": 5000}), "content.qty must be at most 10"),
            (json!({"name": "Ada", "qty": 0}), "content.qty must be at least 1"),
            (
                json!({"name": "Adelaide", "qty": 1}),
                "content.name must have at most 5 characters",
            ),
        ] {
            let refused = answer(bad.clone()).expect_err("out of bounds");
            assert!(refused.contains(says), "{bad}: {refused}");
        }
        // Declining needs no content at all.
        assert_eq!(
            parse_elicited::<Order>(json!({"action": "decline"}), &schema),
            Ok(Elicited::Declined)
        );
    }
}

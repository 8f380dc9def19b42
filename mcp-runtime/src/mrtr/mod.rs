//! Multi round-trip requests (MRTR): a handler asks the client for more
//! input simply by what it returns.
//!
//! A handler takes an [`Input`] parameter and returns [`Flow<T>`] (that is,
//! `Result<T, Halt>`). Asking — [`Input::elicit`], [`Input::sample`],
//! [`Input::roots`], or several at once with [`Input::ask`] — returns the
//! typed answer when the client already gave it, and otherwise a
//! [`Halt`] that `?` propagates. The framework turns that into an
//! `input_required` result whose sealed `requestState` ([`seal`]) carries
//! every answer so far; on the retry it verifies the state, merges the new
//! answers, and runs the handler again from the top, so each ask now
//! returns its value. Nothing about a round is kept in server memory: any
//! replica with the key serves any round.
//!
//! Code before an ask runs once per round: keep side effects after the
//! asks, or carry what must not be redone in [`Input::save`]d state.

pub mod form;
mod input;
pub mod seal;

pub use form::ElicitForm;
pub use input::{Ask, Asks, Elicited, Input, Sampled, Sampling};

use crate::error::McpError;
use serde_json::{Map, Value};
use std::fmt::Display;
use std::sync::Mutex;

/// What a handler produced: a complete result, or a request for more input.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome<T> {
    /// The request is answered.
    Complete(T),
    /// The client must answer these input requests and retry.
    InputRequired(InputRequired),
}

/// An `input_required` answer: the asks, keyed, and the state to echo back.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct InputRequired {
    /// Input requests keyed by a server-chosen name.
    pub input_requests: Map<String, Value>,
    /// Opaque state the client echoes on the retry (set by the framework).
    pub request_state: Option<String>,
}

/// Why a [`Flow`] handler stopped before its result.
#[derive(Debug)]
pub enum Halt {
    /// It needs answers from the client first.
    Ask(InputRequired),
    /// It failed: a tool reports this as an `isError` result; a prompt or
    /// resource as an internal error.
    Failed(String),
    /// A protocol error (malformed answers, missing client capabilities).
    Protocol(McpError),
}

impl Halt {
    /// A protocol-level error.
    pub fn protocol(e: McpError) -> Self {
        Halt::Protocol(e)
    }
}

/// Any displayable error stops the flow as a failure, so `?` works on
/// ordinary errors inside a `Flow` handler.
impl<E: Display> From<E> for Halt {
    fn from(e: E) -> Self {
        Halt::Failed(e.to_string())
    }
}

/// The return type of a handler that may ask for input.
pub type Flow<T> = Result<T, Halt>;

/// Per-request MRTR data: the answers known so far and the handler's state.
#[derive(Debug, Default)]
pub(crate) struct MrtrScope {
    pub answers: Map<String, Value>,
    pub state: Mutex<Option<Value>>,
    pub round: u32,
    /// The span of the round before, as a W3C `traceparent` (telemetry).
    pub link: Option<String>,
}

/// The most `input_required` rounds one request may go through.
pub const MAX_ROUNDS: u32 = 16;

impl Halt {
    pub(crate) fn into_outcome<T>(self) -> Result<Outcome<T>, McpError> {
        match self {
            Halt::Ask(ir) => Ok(Outcome::InputRequired(ir)),
            Halt::Protocol(e) => Err(e),
            Halt::Failed(msg) => Err(McpError::internal(msg)),
        }
    }
}

/// Opens a round: verifies the echoed `requestState` (if any) against the
/// request, and merges its answers with the new `inputResponses`.
pub(crate) fn open_round<'b>(
    sealer: &seal::Sealer,
    binding: impl FnOnce() -> seal::Binding<'b>,
    responses: Option<&serde_json::value::RawValue>,
    state: Option<&str>,
) -> Result<MrtrScope, McpError> {
    let sealed = match state {
        None if responses.is_none() => return Ok(MrtrScope::default()),
        None => seal::Sealed::default(),
        Some(text) => sealer
            .open(text, &binding())
            .ok_or_else(|| McpError::invalid_params(seal::REJECTED))?,
    };
    let mut answers = sealed.answers;
    match responses.map(|r| r.get()) {
        None | Some("null") => {}
        Some(text) => {
            let new: Map<String, Value> = serde_json::from_str(text)
                .map_err(|_| McpError::invalid_params("Invalid params: inputResponses must be an object"))?;
            // Only what the last round asked for: an answer to a question
            // never put is not kept for a later round that puts it.
            let asked = |key: &String| sealed.asked.as_ref().is_none_or(|keys| keys.contains(key));
            answers.extend(new.into_iter().filter(|(key, _)| asked(key)));
        }
    }
    Ok(MrtrScope {
        answers,
        state: Mutex::new(sealed.state),
        round: sealed.round,
        link: sealed.link,
    })
}

/// Closes a round that asks for more: seals every answer so far and the
/// handler's state into the `requestState` of the `input_required` result.
pub(crate) fn close_round(
    sealer: &seal::Sealer,
    binding: &seal::Binding<'_>,
    scope: &MrtrScope,
    mut ir: InputRequired,
) -> Result<InputRequired, McpError> {
    if scope.round.saturating_add(1) > MAX_ROUNDS {
        return Err(McpError::invalid_params(format!(
            "Invalid params: more than {MAX_ROUNDS} input rounds for one request"
        )));
    }
    let state = scope.state.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let sealed = seal::Sealed {
        answers: scope.answers.clone(),
        state,
        round: scope.round.saturating_add(1),
        exp: 0,
        link: crate::telemetry::current_link(),
        asked: Some(ir.input_requests.keys().cloned().collect()),
    };
    let text = sealer
        .seal(sealed, binding)
        .ok_or_else(|| McpError::internal("the requestState would exceed its size limit"))?;
    ir.request_state = Some(text);
    Ok(ir)
}

//! Multi round-trip tools and prompt of the fixture: each asks the client
//! for input by what it returns (`Flow<T>`), and the framework turns that
//! into `input_required` rounds with a sealed `requestState`.

use mcp_runtime::prelude::*;

/// A name.
#[mcp_runtime::form]
struct Name {
    /// Your name.
    name: String,
}

/// A confirmation.
#[mcp_runtime::form]
struct Confirm {
    /// Whether to go ahead.
    ok: bool,
}

/// A colour choice.
#[mcp_runtime::form]
struct Colour {
    /// Your favourite colour.
    color: String,
}

/// Some context.
#[mcp_runtime::form]
struct UserContext {
    /// Context for the prompt.
    context: String,
}

/// Asks for the user's name, then greets them.
#[tool]
fn test_input_required_result_elicitation(input: Input) -> Flow<String> {
    match input.elicit::<Name>("user_name", "What is your name?")? {
        Elicited::Accepted(n) => Ok(format!("Hello, {}!", n.name)),
        Elicited::Declined => Ok("You declined to give your name.".into()),
        Elicited::Cancelled => Ok("Cancelled.".into()),
    }
}

/// Asks the client's model a question.
#[tool]
fn test_input_required_result_sampling(input: Input) -> Flow<String> {
    let answer = input.sample(
        "sample_request",
        Sampling::user("What is the capital of France?").max_tokens(100),
    )?;
    Ok(format!("The model said: {}", answer.text().unwrap_or("(no text)")))
}

/// Asks the client for its roots.
#[tool]
fn test_input_required_result_list_roots(input: Input) -> Flow<String> {
    let roots = input.roots("roots_request")?;
    let uris: Vec<&str> = roots.iter().map(|r| r.uri.as_str()).collect();
    Ok(format!("roots: {}", uris.join(", ")))
}

/// Asks for a confirmation, carrying typed state across the round.
#[tool]
fn test_input_required_result_request_state(input: Input) -> Flow<String> {
    if input.round() == 0 {
        input.save(&"started")?;
    }
    let confirmed = input
        .elicit::<Confirm>("confirm", "Please confirm")?
        .accepted()
        .is_some_and(|c| c.ok);
    let state: Option<String> = input.state();
    Ok(format!(
        "state-ok: confirmed={confirmed}, state={}",
        state.as_deref().unwrap_or("none")
    ))
}

/// Asks for three inputs of different kinds in one round.
#[tool]
fn test_input_required_result_multiple_inputs(input: Input) -> Flow<String> {
    let (name, greeting, roots) = input.ask((
        Ask::<Elicited<Name>>::elicit("user_name", "What is your name?"),
        Ask::sample("greeting", Sampling::user("Write a short greeting.").max_tokens(50)),
        Ask::roots("client_roots"),
    ))?;
    let name = name.accepted().map(|n| n.name).unwrap_or_else(|| "stranger".into());
    Ok(format!(
        "{} {name} ({} roots)",
        greeting.text().unwrap_or("Hi"),
        roots.len()
    ))
}

/// Asks for a name, then, based on it, for a colour: two rounds.
#[tool]
fn test_input_required_result_multi_round(input: Input) -> Flow<String> {
    let name = input
        .elicit::<Name>("step1", "What is your name?")?
        .accepted()
        .map(|n| n.name)
        .unwrap_or_default();
    let colour = input.elicit::<Colour>("step2", &format!("{name}, what is your favourite colour?"))?;
    let colour = colour.accepted().map(|c| c.color).unwrap_or_default();
    Ok(format!("{name} likes {colour}"))
}

/// Asks for a confirmation; a tampered requestState is rejected.
#[tool]
fn test_input_required_result_tampered_state(input: Input) -> Flow<String> {
    let ok = input
        .elicit::<Confirm>("confirm", "Please confirm")?
        .accepted()
        .is_some_and(|c| c.ok);
    Ok(format!("confirmed: {ok}"))
}

/// Asks only for what the client can answer: elicitation if it can, else sampling.
#[tool]
fn test_input_required_result_capabilities(input: Input) -> Flow<String> {
    if input.can_elicit() {
        let name = input.elicit::<Name>("elicit_input", "What is your name?")?;
        return Ok(format!("elicited: {:?}", name.accepted().map(|n| n.name)));
    }
    let answer = input.sample("sample_input", Sampling::user("Say something.").max_tokens(50))?;
    Ok(format!("sampled: {}", answer.text().unwrap_or_default()))
}

/// Asks for a name over the response stream of the call.
#[tool]
fn test_streaming_elicitation(input: Input) -> Flow<String> {
    let name = input.elicit::<Name>("user_name", "What is your name?")?;
    Ok(format!("streamed: {:?}", name.accepted().map(|n| n.name)))
}

/// A prompt that asks for context before it is rendered.
#[prompt]
fn test_input_required_result_prompt(input: Input) -> Flow<String> {
    let context = input.elicit::<UserContext>("user_context", "What context should the prompt use?")?;
    let context = context.accepted().map(|c| c.context).unwrap_or_default();
    Ok(format!("Prompt rendered with context: {context}"))
}

/// Asks the client's model about a prompt (sampling).
#[tool]
fn test_sampling(
    /// The prompt to send to the model.
    prompt: String,
    input: Input,
) -> Flow<String> {
    let answer = input.sample("sampling", Sampling::user(prompt).max_tokens(100))?;
    Ok(format!("LLM response: {}", answer.text().unwrap_or_default()))
}

/// The user's information.
#[mcp_runtime::form]
struct UserInfo {
    /// User name.
    username: String,
    /// Email address.
    email: String,
}

/// Asks the user for their information (elicitation).
#[tool]
fn test_elicitation(
    /// The message to show the user.
    message: String,
    input: Input,
) -> Flow<String> {
    match input.elicit::<UserInfo>("user_info", &message)? {
        Elicited::Accepted(u) => Ok(format!("User accepted: {} <{}>", u.username, u.email)),
        Elicited::Declined => Ok("User declined".into()),
        Elicited::Cancelled => Ok("User cancelled".into()),
    }
}

/// An account status.
#[mcp_runtime::form]
#[serde(rename_all = "lowercase")]
enum Status {
    Active,
    Inactive,
    Pending,
}

fn john_doe() -> String {
    "John Doe".into()
}
fn thirty() -> i64 {
    30
}
fn score() -> f64 {
    95.5
}
fn active() -> Status {
    Status::Active
}
fn yes() -> bool {
    true
}

/// A form whose fields all have defaults.
#[mcp_runtime::form]
struct Defaults {
    /// Name.
    #[serde(default = "john_doe")]
    name: String,
    /// Age.
    #[serde(default = "thirty")]
    age: i64,
    /// Score.
    #[serde(default = "score")]
    score: f64,
    /// Status.
    #[serde(default = "active")]
    status: Status,
    /// Verified.
    #[serde(default = "yes")]
    verified: bool,
}

/// Asks with a form whose fields carry defaults (SEP-1034).
#[tool]
fn test_elicitation_sep1034_defaults(input: Input) -> Flow<String> {
    let d = input.elicit::<Defaults>("defaults", "Please review your details")?;
    Ok(format!(
        "{:?}",
        d.accepted().map(|d| (d.name, d.age, d.score, d.verified))
    ))
}

/// An option without titles.
#[mcp_runtime::form]
#[serde(rename_all = "lowercase")]
enum Untitled {
    Option1,
    Option2,
    Option3,
}

/// An option with titles.
#[mcp_runtime::form]
#[serde(rename_all = "lowercase")]
enum Titled {
    /// First Option
    Value1,
    /// Second Option
    Value2,
    /// Third Option
    Value3,
}

/// A legacy titled option.
#[mcp_runtime::form]
#[serde(rename_all = "lowercase")]
enum Legacy {
    Opt1,
    Opt2,
    Opt3,
}

/// A form of every select kind (SEP-1330).
#[mcp_runtime::form]
#[allow(non_snake_case)]
struct Selects {
    /// Pick one.
    untitledSingle: Option<Untitled>,
    /// Pick one.
    titledSingle: Option<Titled>,
    /// Pick one (legacy names).
    #[schemars(extend("enumNames" = ["Option One", "Option Two", "Option Three"]))]
    legacyEnum: Option<Legacy>,
    /// Pick several.
    #[schemars(length(min = 1, max = 3))]
    untitledMulti: Option<Vec<Untitled>>,
    /// Pick several.
    #[schemars(length(min = 1, max = 3))]
    titledMulti: Option<Vec<Titled>>,
}

/// Asks with a form of every enum kind (SEP-1330).
#[tool]
fn test_elicitation_sep1330_enums(input: Input) -> Flow<String> {
    let s = input.elicit::<Selects>("selects", "Pick your options")?;
    Ok(format!("accepted: {}", s.accepted().is_some()))
}

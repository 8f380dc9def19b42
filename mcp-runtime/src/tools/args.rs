//! Decoding a tool's arguments into its parameters, with errors that name
//! the argument and say what is wrong with it.

use crate::protocol::CallToolResult;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// What the decoder knows of one parameter, for precise error messages.
#[derive(Debug, Clone, Copy)]
pub struct ArgSpec {
    /// The argument's name on the wire.
    pub name: &'static str,
    /// Tries to decode a value as the parameter's type.
    pub probe: fn(Value) -> Result<(), String>,
    /// The parameter has a default, so it may be absent.
    pub has_default: bool,
}

/// Tries to decode `value` as a `T` (used by [`ArgSpec::probe`]).
pub fn probe<T: DeserializeOwned>(value: Value) -> Result<(), String> {
    serde_json::from_value::<T>(value).map(drop).map_err(|e| e.to_string())
}

/// Decodes a tool's raw `arguments` into its hidden arguments struct.
///
/// On failure, the error is a tool execution error (`isError: true`) whose
/// text names the offending argument: missing, unknown, or of the wrong type.
pub fn decode_arguments<T: DeserializeOwned>(
    tool: &str,
    raw: Option<&RawValue>,
    specs: &[ArgSpec],
) -> Result<T, Box<CallToolResult>> {
    let text = raw.map(RawValue::get).unwrap_or("{}");
    match serde_json::from_str::<T>(text) {
        Ok(v) => Ok(v),
        Err(e) => Err(Box::new(super::output::error_result(explain(tool, text, specs, e)))),
    }
}

fn explain(tool: &str, text: &str, specs: &[ArgSpec], fallback: serde_json::Error) -> String {
    let prefix = format!("Invalid arguments for tool `{tool}`");
    let Ok(mut given) = serde_json::from_str::<Map<String, Value>>(text) else {
        return format!("{prefix}: arguments must be a JSON object");
    };
    for spec in specs {
        match given.remove(spec.name) {
            None if spec.has_default || (spec.probe)(Value::Null).is_ok() => {}
            None => return format!("{prefix}: missing required argument `{}`", spec.name),
            Some(value) => {
                if let Err(why) = (spec.probe)(value) {
                    return format!("{prefix}: argument `{}`: {why}", spec.name);
                }
            }
        }
    }
    if let Some(unknown) = given.keys().next() {
        let expected: Vec<&str> = specs.iter().map(|s| s.name).collect();
        return if expected.is_empty() {
            format!("{prefix}: unknown argument `{unknown}`; this tool takes no arguments")
        } else {
            format!(
                "{prefix}: unknown argument `{unknown}`; expected one of: {}",
                expected.join(", ")
            )
        };
    }
    format!("{prefix}: {fallback}")
}

//! Decoding a tool's arguments into its parameters, with errors that name
//! the argument and say what is wrong with it.

use crate::protocol::CallToolResult;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::Value;

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
    let first = match serde_json::from_str::<T>(text) {
        Ok(v) => return Ok(v),
        Err(e) => e,
    };
    // JSON Schema counts `2.0` as an integer, serde does not: a value the
    // schema admits is decoded again with its whole numbers written as such.
    if let Some(Ok(v)) = whole_numbers(text).map(serde_json::from_value::<T>) {
        return Ok(v);
    }
    Err(Box::new(super::output::error_result(explain(tool, text, specs, first))))
}

/// `text` parsed, with every number written with a fraction or an exponent
/// whose value is a whole number within 2^53 written as an integer;
/// `None` when there is none (or `text` is not JSON).
fn whole_numbers(text: &str) -> Option<Value> {
    fn visit(value: &mut Value) -> bool {
        match value {
            Value::Number(n) if n.is_f64() => match n.as_f64().and_then(as_integer) {
                Some(whole) => {
                    *value = whole;
                    true
                }
                None => false,
            },
            Value::Array(items) => items.iter_mut().fold(false, |any, v| visit(v) | any),
            Value::Object(map) => map.values_mut().fold(false, |any, v| visit(v) | any),
            _ => false,
        }
    }
    let mut value = serde_json::from_str::<Value>(text).ok()?;
    visit(&mut value).then_some(value)
}

/// A whole `f64` as a JSON integer, within 2^53 either side: there every
/// integer is a double of its own, so the number written is the one meant
/// (`9007199254740993.0` reads as ...992: refused, not changed).
fn as_integer(n: f64) -> Option<Value> {
    const EXACT: f64 = crate::protocol::EXACT_INTEGER as f64;
    // In range, the cast is exact.
    (n.fract() == 0.0 && (-EXACT..=EXACT).contains(&n)).then(|| Value::from(n as i64))
}

fn explain(tool: &str, text: &str, specs: &[ArgSpec], fallback: serde_json::Error) -> String {
    let prefix = format!("Invalid arguments for tool `{tool}`");
    let given = whole_numbers(text).map_or_else(|| serde_json::from_str(text), Ok);
    let Ok(Value::Object(mut given)) = given else {
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

#[cfg(test)]
mod tests {
    use super::{as_integer, whole_numbers};
    use serde_json::json;

    #[test]
    fn whole_numbers_become_integers_within_64_bits() {
        assert_eq!(as_integer(2.0), Some(json!(2)));
        assert_eq!(as_integer(-0.0), Some(json!(0)));
        assert_eq!(as_integer(9_007_199_254_740_992.0), Some(json!(1i64 << 53)));
        assert_eq!(as_integer(-9_007_199_254_740_992.0), Some(json!(-(1i64 << 53))));
        // Past 2^53 a double stands for several integers: which one is unknown.
        assert_eq!(as_integer(9_007_199_254_740_994.0), None);
        assert_eq!(as_integer(1e19), None);
        assert_eq!(as_integer(2.5), None);
        assert_eq!(as_integer(f64::INFINITY), None);
    }

    #[test]
    fn only_a_text_with_a_whole_float_is_rewritten() {
        assert_eq!(
            whole_numbers(r#"{"a":[1.0,2.5],"b":{"c":3e2},"d":4}"#),
            Some(json!({"a": [1, 2.5], "b": {"c": 300}, "d": 4}))
        );
        assert_eq!(whole_numbers(r#"{"a":1,"b":2.5}"#), None);
        assert_eq!(whole_numbers("not json"), None);
    }
}

//! Arguments that arrive as text (URI template variables, prompt arguments)
//! parsed into the handler's parameter types.

use serde::de::DeserializeOwned;
use serde_json::Value;

/// Parses a text argument as `T`: first as a JSON string (for `String`,
/// string enums, and other string-like types), then as a JSON literal (for
/// numbers and booleans: `"42"` → `42u64`).
pub fn parse_text<T: DeserializeOwned>(text: &str) -> Result<T, String> {
    match serde_json::from_value::<T>(Value::String(text.to_owned())) {
        Ok(v) => Ok(v),
        Err(as_string) => match serde_json::from_str::<T>(text) {
            Ok(v) => Ok(v),
            Err(_) => Err(as_string.to_string()),
        },
    }
}

/// The values a text argument may take, when its type's JSON Schema lists
/// them (`enum`, or `oneOf`/`anyOf` of `const`s), for completion.
pub fn enumerated_values(schema: &Value) -> Vec<String> {
    let mut out = Vec::new();
    collect(schema, &mut out);
    out
}

fn collect(schema: &Value, out: &mut Vec<String>) {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        out.extend(values.iter().filter_map(Value::as_str).map(str::to_owned));
    }
    if let Some(c) = schema.get("const").and_then(Value::as_str) {
        out.push(c.to_owned());
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(alts) = schema.get(key).and_then(Value::as_array) {
            for alt in alts {
                collect(alt, out);
            }
        }
    }
}

/// The completion candidates of a parameter of type `T` (from its schema).
pub fn schema_values<T: schemars::JsonSchema>() -> Vec<String> {
    let schema = crate::schema::input_schema_for::<T>(false);
    enumerated_values(&schema)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_strings_numbers_and_bools() {
        assert_eq!(parse_text::<String>("123").unwrap(), "123");
        assert_eq!(parse_text::<u64>("123").unwrap(), 123);
        assert!(parse_text::<bool>("true").unwrap());
        assert!(parse_text::<u64>("abc").is_err());
    }
}

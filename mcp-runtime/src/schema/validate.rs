//! Enforcing what a tool's input schema (or an elicitation form's
//! `requestedSchema`) says beyond the Rust types: serde
//! checks types and required fields, this checks the constraint keywords
//! schemars writes from `#[schemars(range(..), length(..))]` and from the
//! integer types' bounds: `minimum`, `maximum`, `exclusiveMinimum`,
//! `exclusiveMaximum`, `minLength`, `maxLength`, `minItems`, `maxItems`,
//! `enum` and `const`, through `properties`, `items` and inlined subschemas.
//! (`pattern` is not enforced.)

use serde_json::Value;

const KEYWORDS: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
];

/// Whether a schema has any constraint this module checks (computed once per tool).
pub(crate) fn has_constraints(schema: &Value) -> bool {
    match schema {
        Value::Object(map) => map
            .iter()
            .any(|(k, v)| KEYWORDS.contains(&k.as_str()) || has_constraints(v)),
        Value::Array(items) => items.iter().any(has_constraints),
        _ => false,
    }
}

/// Checks `value` against `schema`; the error names the path and the rule.
pub(crate) fn check(schema: &Value, value: &Value, path: &str) -> Result<(), String> {
    let Some(s) = schema.as_object() else { return Ok(()) };
    if let Some(n) = value.as_f64() {
        let rule = |k: &str| s.get(k).and_then(Value::as_f64);
        if let Some(min) = rule("minimum").filter(|m| n < *m) {
            return Err(format!("{path} must be at least {min}"));
        }
        if let Some(max) = rule("maximum").filter(|m| n > *m) {
            return Err(format!("{path} must be at most {max}"));
        }
        if let Some(min) = rule("exclusiveMinimum").filter(|m| n <= *m) {
            return Err(format!("{path} must be greater than {min}"));
        }
        if let Some(max) = rule("exclusiveMaximum").filter(|m| n >= *m) {
            return Err(format!("{path} must be less than {max}"));
        }
    }
    let count = |k: &str| s.get(k).and_then(Value::as_u64).map(|v| v as usize);
    if let Some(text) = value.as_str() {
        let len = text.chars().count();
        if let Some(min) = count("minLength").filter(|m| len < *m) {
            return Err(format!("{path} must have at least {min} characters"));
        }
        if let Some(max) = count("maxLength").filter(|m| len > *m) {
            return Err(format!("{path} must have at most {max} characters"));
        }
    }
    if let Some(items) = value.as_array() {
        if let Some(min) = count("minItems").filter(|m| items.len() < *m) {
            return Err(format!("{path} must have at least {min} items"));
        }
        if let Some(max) = count("maxItems").filter(|m| items.len() > *m) {
            return Err(format!("{path} must have at most {max} items"));
        }
        if let Some(item_schema) = s.get("items") {
            for (i, item) in items.iter().enumerate() {
                check(item_schema, item, &format!("{path}[{i}]"))?;
            }
        }
    }
    if let (Some(props), Some(obj)) = (s.get("properties").and_then(Value::as_object), value.as_object()) {
        for (key, v) in obj {
            if let Some(p) = props.get(key) {
                check(p, v, &format!("{path}.{key}"))?;
            }
        }
    }
    if let (Some(extra), Some(obj)) = (
        s.get("additionalProperties").filter(|a| a.is_object()),
        value.as_object(),
    ) {
        let props = s.get("properties").and_then(Value::as_object);
        for (key, v) in obj.iter().filter(|(k, _)| props.is_none_or(|p| !p.contains_key(*k))) {
            check(extra, v, &format!("{path}.{key}"))?;
        }
    }
    // An inlined `Option<T>` or enum: the value must satisfy one of the
    // alternatives its shape fits (an alternative of another type, tag or
    // fields says nothing of its constraints: a unit variant's `const` does
    // not let a struct variant's out-of-range field through).
    for key in ["anyOf", "oneOf"] {
        if let Some(alts) = s.get(key).and_then(Value::as_array) {
            if !value.is_null() && !alts.is_empty() {
                let fitting: Vec<&Value> = alts.iter().filter(|a| fits(a, value)).collect();
                // None fits: serde refuses the value by its type.
                let mut errors = fitting.iter().filter_map(|a| check(a, value, path).err());
                if let Some(first) = errors.next() {
                    if errors.count() + 1 == fitting.len() {
                        return Err(first);
                    }
                }
            }
        }
    }
    if let Some(all) = s.get("allOf").and_then(Value::as_array) {
        for a in all {
            check(a, value, path)?;
        }
    }
    Ok(())
}

/// Whether `value` has the shape `schema` describes at its top: its `type`
/// (an `integer` is a number without a fraction), its `const` or `enum`,
/// its `required` fields, no field `additionalProperties: false` refuses,
/// and the `const` or `enum` of its fields (an internally tagged variant's
/// tag). Constraints are not looked at: [`check`] does that.
fn fits(schema: &Value, value: &Value) -> bool {
    let Some(s) = schema.as_object() else { return true };
    let type_fits = |t: &Value| match t.as_str() {
        Some("null") => value.is_null(),
        Some("boolean") => value.is_boolean(),
        Some("object") => value.is_object(),
        Some("array") => value.is_array(),
        Some("string") => value.is_string(),
        Some("number") => value.is_number(),
        Some("integer") => value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|n| n.fract() == 0.0),
        _ => true,
    };
    let typed = match s.get("type") {
        None => true,
        Some(Value::Array(types)) => types.iter().any(type_fits),
        Some(t) => type_fits(t),
    };
    if !typed
        || s.get("const").is_some_and(|c| c != value)
        || s.get("enum")
            .and_then(Value::as_array)
            .is_some_and(|e| !e.contains(value))
    {
        return false;
    }
    let Some(object) = value.as_object() else { return true };
    let required = s.get("required").and_then(Value::as_array).into_iter().flatten();
    if required
        .filter_map(Value::as_str)
        .any(|name| !object.contains_key(name))
    {
        return false;
    }
    let props = s.get("properties").and_then(Value::as_object);
    let closed = s.get("additionalProperties") == Some(&Value::Bool(false));
    object
        .iter()
        .all(|(name, field)| match props.and_then(|p| p.get(name)) {
            Some(p) => {
                p.get("const").is_none_or(|c| c == field)
                    && p.get("enum")
                        .and_then(Value::as_array)
                        .is_none_or(|e| e.contains(field))
            }
            None => !closed,
        })
}

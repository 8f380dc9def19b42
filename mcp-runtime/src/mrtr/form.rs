//! Elicitation forms: the Rust types whose schema fits the restricted
//! subset `elicitation/create` allows (a flat object of strings, numbers,
//! booleans, single- and multi-select enums), checked at compile time.
//!
//! `#[mcp_runtime::form]` on a struct implements [`ElicitForm`] and asserts
//! that every field is a [`FormField`]; on a unit-only enum it implements
//! `FormField` (a single select; `Vec<Enum>` is a multi-select).

use crate::protocol::ElicitRequestedSchema;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// A struct that can be asked for with `elicitation/create`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an elicitation form",
    note = "put #[mcp_runtime::form] on a struct whose fields are strings, numbers, booleans, #[form] enums or Vec of them"
)]
pub trait ElicitForm: JsonSchema + DeserializeOwned {}

/// A type that can be one field of an elicitation form.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a field of an elicitation form",
    note = "form fields are String, bool, integers, floats, #[mcp_runtime::form] unit enums, Option or Vec of those"
)]
pub trait FormField {}

macro_rules! form_fields {
    ($($t:ty),*) => { $(impl FormField for $t {})* };
}
form_fields!(String, bool, i8, i16, i32, i64, u8, u16, u32, u64, f32, f64, isize, usize);
impl<T: FormField> FormField for Option<T> {}
impl<T: FormEnum> FormField for Vec<T> {}

/// A unit-only enum usable as a (multi-)select (implemented by `#[form]`).
pub trait FormEnum: FormField {}

/// Compile-time check used by `#[form]`.
#[doc(hidden)]
pub const fn assert_field<T: FormField + ?Sized>() {}

/// The `requestedSchema` of `T`: schemars' schema, reduced to the keywords
/// of the elicitation subset (titles from variant docs, no `format` but the
/// four string formats the subset allows, `null` types removed); and the
/// same schema as JSON, whose bounds an accepted answer is checked against.
pub(crate) fn requested_schema_with_value<T: ElicitForm>() -> (Result<ElicitRequestedSchema, String>, Value) {
    let value = requested_schema_value::<T>();
    let typed = serde_json::from_value(value.clone())
        .map_err(|e| format!("the form's schema is outside the elicitation subset: {e}"));
    (typed, value)
}

/// The form's schema as JSON, before it is read into the typed schema.
fn requested_schema_value<T: ElicitForm>() -> Value {
    let schema = crate::schema::input_schema_for::<T>(false);
    let mut out = Map::new();
    out.insert("type".into(), Value::String("object".into()));
    let mut props = Map::new();
    if let Some(p) = schema.get("properties").and_then(Value::as_object) {
        for (name, prop) in p {
            props.insert(name.clone(), primitive(prop));
        }
    }
    out.insert("properties".into(), Value::Object(props));
    if let Some(req) = schema.get("required") {
        out.insert("required".into(), req.clone());
    }
    Value::Object(out)
}

fn strip_null(prop: &Value) -> Value {
    let mut prop = prop.clone();
    if let Some(Value::Array(types)) = prop.get("type") {
        let kept: Vec<Value> = types.iter().filter(|t| t.as_str() != Some("null")).cloned().collect();
        if kept.len() == 1 {
            prop["type"] = kept[0].clone();
        }
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(alts)) = prop.get(key).cloned() {
            let kept: Vec<Value> = alts
                .into_iter()
                .filter(|a| a.get("type").and_then(Value::as_str) != Some("null"))
                .collect();
            if kept.len() == 1 && kept[0].get("const").is_none() {
                let mut merged = kept[0].clone();
                if let (Some(m), Some(d)) = (merged.as_object_mut(), prop.get("description")) {
                    // The field's own description wins over its type's.
                    m.insert("description".into(), d.clone());
                }
                if let (Some(m), Some(d)) = (merged.as_object_mut(), prop.get("default")) {
                    m.entry("default").or_insert(d.clone());
                }
                return strip_null(&merged);
            }
            if let Some(o) = prop.as_object_mut() {
                o.insert(key.into(), Value::Array(kept));
            }
        }
    }
    prop
}

/// The options of a select from schemars' `oneOf`: a documented variant is
/// an entry of its own (`const`, its doc as the title); the undocumented
/// ones of an enum that mixes both come together in one entry's `enum`,
/// each its own title.
fn titled(alts: &[Value]) -> Vec<Value> {
    let mut options = Vec::new();
    for a in alts {
        if let Some(c) = a.get("const") {
            let title = a.get("title").or_else(|| a.get("description")).unwrap_or(c);
            options.push(serde_json::json!({"const": c, "title": title}));
        } else if let Some(values) = a.get("enum").and_then(Value::as_array) {
            let plain = values.iter().filter(|v| v.is_string());
            options.extend(plain.map(|v| serde_json::json!({"const": v, "title": v})));
        }
    }
    options
}

fn primitive(prop: &Value) -> Value {
    let prop = strip_null(prop);
    let mut out = Map::new();
    for key in ["title", "description", "default"] {
        if let Some(v) = prop.get(key) {
            out.insert(key.into(), v.clone());
        }
    }
    let ty = prop.get("type").and_then(Value::as_str).unwrap_or("string");
    match ty {
        "array" => {
            out.insert("type".into(), "array".into());
            let items = prop.get("items").cloned().unwrap_or_default();
            let items = match items.get("oneOf").and_then(Value::as_array) {
                Some(alts) => serde_json::json!({"anyOf": titled(alts)}),
                None => serde_json::json!({"type": "string", "enum": items.get("enum").cloned().unwrap_or_default()}),
            };
            out.insert("items".into(), items);
            for key in ["minItems", "maxItems"] {
                if let Some(v) = prop.get(key) {
                    out.insert(key.into(), v.clone());
                }
            }
        }
        "integer" | "number" | "boolean" => {
            out.insert("type".into(), ty.into());
            for key in ["minimum", "maximum"] {
                if let Some(v) = prop.get(key) {
                    out.insert(key.into(), v.clone());
                }
            }
        }
        _ => {
            out.insert("type".into(), "string".into());
            if let Some(alts) = prop.get("oneOf").and_then(Value::as_array) {
                out.insert("oneOf".into(), Value::Array(titled(alts)));
            } else if let Some(Value::Array(e)) = prop.get("enum") {
                let values: Vec<Value> = e.iter().filter(|v| v.is_string()).cloned().collect();
                out.insert("enum".into(), Value::Array(values));
                if let Some(names) = prop.get("enumNames") {
                    out.insert("enumNames".into(), names.clone());
                }
            }
            for key in ["minLength", "maxLength", "pattern"] {
                if let Some(v) = prop.get(key) {
                    out.insert(key.into(), v.clone());
                }
            }
            if let Some(f) = prop.get("format").and_then(Value::as_str) {
                if matches!(f, "email" | "uri" | "date" | "date-time") {
                    out.insert("format".into(), f.into());
                }
            }
        }
    }
    Value::Object(out)
}

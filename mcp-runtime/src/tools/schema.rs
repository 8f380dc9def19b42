//! JSON Schema 2020-12 for tool inputs and outputs, derived with schemars.
//!
//! By default every subschema is inlined: several popular hosts fail on
//! `$ref`. `#[tool(keep_defs)]` keeps schemars' `$defs`/`$ref` form instead
//! (useful for large or recursive types; a recursive type keeps a `$ref` to
//! itself even when inlining). The root carries no `title`, and no `$schema`
//! unless the type asks for one (2020-12 is MCP's default dialect).

use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde_json::Value;

fn generate<T: JsonSchema>(keep_defs: bool) -> Value {
    let settings = SchemaSettings::draft2020_12().with(|s| {
        s.inline_subschemas = !keep_defs;
        s.meta_schema = None;
    });
    let mut value = settings.into_generator().into_root_schema_for::<T>().to_value();
    if let Some(obj) = value.as_object_mut() {
        obj.remove("title");
    }
    value
}

/// The `inputSchema` of a tool whose arguments are the fields of `T`.
///
/// An argument-less tool gets exactly `{"type":"object","additionalProperties":false}`.
pub fn input_schema_for<T: JsonSchema>(keep_defs: bool) -> Value {
    let mut value = generate::<T>(keep_defs);
    if let Some(obj) = value.as_object_mut() {
        if obj
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|p| p.is_empty())
        {
            obj.remove("properties");
        }
        if obj
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(|r| r.is_empty())
        {
            obj.remove("required");
        }
        obj.entry("type").or_insert_with(|| Value::String("object".into()));
    }
    value
}

/// The `outputSchema` of a tool returning `Json<T>`.
pub fn output_schema_for<T: JsonSchema>(keep_defs: bool) -> Value {
    match generate::<T>(keep_defs) {
        // A boolean schema (`true`: any value) is written as the object `{}`.
        Value::Bool(_) => Value::Object(Default::default()),
        other => other,
    }
}

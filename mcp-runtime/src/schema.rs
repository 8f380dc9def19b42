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

/// The `format` values JSON Schema 2020-12 defines. schemars also writes
/// `int32`, `uint8`, `double`... which strict validators (Ajv in strict
/// mode, used by several hosts) reject as unknown: those are removed, the
/// numeric bounds schemars writes beside them stay.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

fn strip_formats(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if map
                .get("format")
                .and_then(Value::as_str)
                .is_some_and(|f| !STANDARD_FORMATS.contains(&f))
            {
                map.remove("format");
            }
            map.values_mut().for_each(strip_formats);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_formats),
        _ => {}
    }
}

fn generate<T: JsonSchema>(keep_defs: bool) -> Value {
    let settings = SchemaSettings::draft2020_12().with(|s| {
        s.inline_subschemas = !keep_defs;
        s.meta_schema = None;
    });
    let mut value = settings.into_generator().into_root_schema_for::<T>().to_value();
    if let Some(obj) = value.as_object_mut() {
        obj.remove("title");
    }
    strip_formats(&mut value);
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

//! JSON Schema 2020-12 for tool inputs and outputs, derived with schemars.
//!
//! By default every subschema is inlined: several popular hosts fail on
//! `$ref`. `#[tool(keep_defs)]` keeps schemars' `$defs`/`$ref` form instead
//! (useful for large or recursive types; a recursive type keeps a `$ref` to
//! itself even when inlining). The root carries no `title`, and no `$schema`
//! unless the type asks for one (2020-12 is MCP's default dialect).
//! [`validate`] checks a value against the bounds such a schema states
//! (a tool's arguments, an elicitation form's answer).

pub(crate) mod validate;

use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde_json::Value;

/// The `format` values JSON Schema 2020-12 defines. schemars also writes
/// `int32`, `uint8`, `double`... which strict validators (Ajv in strict
/// mode, used by several hosts) reject as unknown: those are removed, the
/// numeric bounds schemars writes beside them stay, and a 32-bit integer's
/// bounds, which schemars leaves to the format, are written in its place
/// (see [`bounds_of`]).
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

/// The range a non-standard integer `format` stands for, when schemars does
/// not write it as `minimum`/`maximum` itself: the 32-bit ones (and the
/// pointer-sized ones on a 32-bit target). Without it a client sees a bare
/// `integer` and learns the range only from the refusal. The 64-bit bounds are
/// left out: most clients read JSON numbers as doubles, where `2^63 - 1`
/// becomes `2^63`, a bound that would admit a value the server refuses.
fn bounds_of(format: &str) -> Option<(i64, i64)> {
    match format {
        "int32" => Some((i32::MIN.into(), i32::MAX.into())),
        "uint32" => Some((0, u32::MAX.into())),
        #[cfg(target_pointer_width = "32")]
        "int" => Some((i32::MIN.into(), i32::MAX.into())),
        #[cfg(target_pointer_width = "32")]
        "uint" => Some((0, u32::MAX.into())),
        _ => None,
    }
}

/// The keywords whose contents are values, not subschemas.
const VALUE_KEYWORDS: &[&str] = &["default", "examples", "example", "const", "enum"];

/// The keywords whose contents map names to subschemas.
const NAMED_SUBSCHEMAS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

fn strip_formats(value: &mut Value) {
    match value {
        Value::Object(map) => {
            let unknown = map
                .get("format")
                .and_then(Value::as_str)
                .filter(|f| !STANDARD_FORMATS.contains(f))
                .map(bounds_of);
            if let Some(bounds) = unknown {
                if let Some((min, max)) = bounds {
                    map.entry("minimum").or_insert(min.into());
                    map.entry("maximum").or_insert(max.into());
                }
                map.remove("format");
            }
            // Subschemas only: a `default`, `examples`, `const` or `enum`
            // holds values, whose own `format` fields are data. The maps
            // of named subschemas (`properties`, `$defs`, ...) hold a
            // schema under every key, whatever the key is called.
            for (key, v) in map.iter_mut() {
                if NAMED_SUBSCHEMAS.contains(&key.as_str()) {
                    if let Value::Object(named) = v {
                        named.values_mut().for_each(strip_formats);
                    }
                } else if !VALUE_KEYWORDS.contains(&key.as_str()) {
                    strip_formats(v);
                }
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_format_is_stripped_from_subschemas_not_from_values() {
        let mut schema = json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer", "format": "int32"},
                "opts": {
                    "type": "object",
                    "properties": {"format": {"type": "string", "format": "csv-ish"}},
                    "default": {"format": "csv", "compress": false},
                    "examples": [{"format": "int32"}]
                },
                "kind": {"const": {"format": "x"}, "enum": [{"format": "y"}]},
                "default": {"type": "integer", "format": "uint32"},
                "enum": {"type": "object", "properties": {"const": {"type": "integer", "format": "int32"}}}
            },
            "$defs": {"examples": {"type": "integer", "format": "uint8"}}
        });
        strip_formats(&mut schema);
        let props = &schema["properties"];
        assert_eq!(props["n"]["minimum"], json!(i32::MIN), "{schema}");
        assert!(props["n"].get("format").is_none(), "{schema}");
        assert!(
            props["opts"]["properties"]["format"].get("format").is_none(),
            "{schema}"
        );
        assert_eq!(props["opts"]["default"], json!({"format": "csv", "compress": false}));
        assert_eq!(props["opts"]["examples"], json!([{"format": "int32"}]));
        assert_eq!(
            props["kind"],
            json!({"const": {"format": "x"}, "enum": [{"format": "y"}]})
        );
        // Arguments named like keywords are schemas all the same.
        assert!(props["default"].get("format").is_none(), "{schema}");
        assert_eq!(props["default"]["maximum"], json!(u32::MAX), "{schema}");
        assert!(props["enum"]["properties"]["const"].get("format").is_none(), "{schema}");
        assert!(schema["$defs"]["examples"].get("format").is_none(), "{schema}");
    }
}

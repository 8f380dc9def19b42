//! Snapshots: output schemas.

use super::fixtures::*;
use serde_json::json;

// ---------------------------------------------------------------------------
// Snapshots: output schemas.
// ---------------------------------------------------------------------------

#[test]
fn json_struct_output() {
    assert_eq!(output::<out_struct>(), Some(point_schema()));
}

/// 2026-07-28 allows any JSON value as `structuredContent` and any schema as
/// `outputSchema`, so a `Json<Vec<T>>` advertises an array root.
#[test]
fn json_vec_output_has_an_array_root() {
    assert_eq!(
        output::<out_vec>(),
        Some(json!({"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 4294967295u32}}))
    );
    assert_eq!(
        output::<out_defs>(),
        Some(json!({"type": "array", "items": {"$ref": "#/$defs/Point"}, "$defs": {"Point": point_schema()}}))
    );
}

#[test]
fn result_of_json_output_advertises_the_ok_schema() {
    assert_eq!(
        output::<out_result>(),
        Some(json!({
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "address": {
                    "type": "object",
                    "description": "Where they live.",
                    "properties": {
                        "streetLine": {"type": "string", "description": "Street and number."},
                        "city": {"type": "string"},
                        "postalCode": {"type": ["string", "null"]}
                    },
                    "required": ["streetLine", "city"]
                },
                "tags": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["name", "address", "tags"]
        }))
    );
    assert_eq!(
        input::<out_result>(),
        json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {"fail": {"type": "boolean"}},
            "required": ["fail"]
        })
    );
}

#[test]
fn other_json_outputs() {
    assert_eq!(
        output::<out_enum>(),
        Some(json!({"type": "string", "enum": ["Red", "Green", "Blue"]}))
    );
    let mut nullable_point = point_schema();
    nullable_point["type"] = json!(["object", "null"]);
    assert_eq!(output::<out_option>(), Some(nullable_point));
    // `Value`'s schema is `true`; it is written as the equivalent object `{}`.
    assert_eq!(output::<out_value>(), Some(json!({})));
    // A recursive root refers to itself with `#`.
    assert_eq!(
        output::<out_tree>(),
        Some(json!({
            "type": "object",
            "description": "A tree of integers.",
            "properties": {
                "value": {"type": "integer", "minimum": -2147483648, "maximum": 2147483647},
                "children": {"type": "array", "items": {"$ref": "#"}}
            },
            "required": ["value", "children"]
        }))
    );
    assert_eq!(
        output::<out_map>(),
        Some(json!({"type": "object", "additionalProperties": point_schema()}))
    );
    // The root `title` (here an explicit one) is dropped; the description stays.
    assert_eq!(
        output::<out_titled>(),
        Some(json!({
            "type": "object",
            "description": "Body text.",
            "properties": {"a": {"type": "integer", "minimum": -2147483648, "maximum": 2147483647}},
            "required": ["a"]
        }))
    );
}

#[test]
fn non_json_returns_have_no_output_schema() {
    assert_eq!(output::<out_string>(), None);
    assert_eq!(output::<out_unit>(), None);
    assert_eq!(output::<out_result_string>(), None);
    let wire = serde_json::to_value(tool::<out_string>()).unwrap();
    assert!(wire.get("outputSchema").is_none());
}

//! Snapshots: parameter types (enums, nested structs, collections, `$defs`, recursion, renames, extractors).

use super::fixtures::*;
use serde_json::json;

#[test]
fn unit_enums_are_string_enums_or_documented_consts() {
    let s = input::<unit_enums>();
    assert_eq!(
        s,
        json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "color": {"type": "string", "enum": ["Red", "Green", "Blue"]},
                "scale": {
                    "description": "A temperature scale.",
                    "oneOf": [
                        {"type": "string", "const": "celsius", "description": "Degrees Celsius."},
                        {"type": "string", "const": "fahrenheit", "description": "Degrees Fahrenheit."}
                    ]
                },
                "level": {"type": "string", "enum": ["VERY_LOW", "HIGH"]},
                "partial": {
                    "description": "Only some variants documented.",
                    "oneOf": [
                        {"type": "string", "enum": ["second-one"]},
                        {"type": "string", "const": "first-one", "description": "Only this one is documented."}
                    ]
                }
            },
            "required": ["color", "scale", "level", "partial"]
        })
    );
    let good = json!({"color": "Red", "scale": "celsius", "level": "VERY_LOW", "partial": "first-one"});
    assert_accepts(&s, good.clone());
    for (key, bad) in [
        ("color", "red"),
        ("scale", "Celsius"),
        ("level", "VeryLow"),
        ("partial", "FirstOne"),
    ] {
        let mut args = good.clone();
        args[key] = json!(bad);
        assert_rejects(&s, args);
    }
}

#[test]
fn data_carrying_enums() {
    let s = input::<data_enums>();
    assert_eq!(
        s,
        json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "shape": {
                    "description": "A shape.",
                    "oneOf": [
                        {"type": "string", "enum": ["Empty"]},
                        {
                            "type": "object",
                            "description": "A circle.",
                            "properties": {
                                "Circle": {
                                    "type": "object",
                                    "properties": {"radius": {"type": "number"}},
                                    "required": ["radius"]
                                }
                            },
                            "required": ["Circle"],
                            "additionalProperties": false
                        },
                        {
                            "type": "object",
                            "properties": {
                                "Rect": {
                                    "type": "object",
                                    "properties": {
                                        "width": {"type": "number"},
                                        "height": {"type": "number"}
                                    },
                                    "required": ["width", "height"]
                                }
                            },
                            "required": ["Rect"],
                            "additionalProperties": false
                        },
                        {
                            "type": "object",
                            "properties": {"Square": {"type": "number"}},
                            "required": ["Square"],
                            "additionalProperties": false
                        }
                    ]
                },
                "command": {
                    "oneOf": [
                        {
                            "type": "object",
                            "properties": {
                                "kind": {"type": "string", "const": "move"},
                                "x": {"type": "integer", "minimum": -2147483648, "maximum": 2147483647},
                                "y": {"type": "integer", "minimum": -2147483648, "maximum": 2147483647}
                            },
                            "required": ["kind", "x", "y"]
                        },
                        {
                            "type": "object",
                            "properties": {"kind": {"type": "string", "const": "stop"}},
                            "required": ["kind"]
                        }
                    ]
                },
                "who": {
                    "anyOf": [
                        {"type": "integer", "minimum": 0},
                        {"type": "string"}
                    ]
                }
            },
            "required": ["shape", "command", "who"]
        })
    );
    for shape in [
        json!("Empty"),
        json!({"Circle": {"radius": 1.0}}),
        json!({"Rect": {"width": 1, "height": 2}}),
        json!({"Square": 3}),
    ] {
        assert_accepts(&s, json!({"shape": shape, "command": {"kind": "stop"}, "who": 7}));
    }
    assert_accepts(
        &s,
        json!({"shape": "Empty", "command": {"kind": "move", "x": 1, "y": -1}, "who": "ada"}),
    );
    assert_rejects(&s, json!({"shape": "Circle", "command": {"kind": "stop"}, "who": 7}));
    assert_rejects(
        &s,
        json!({"shape": {"Circle": {}}, "command": {"kind": "stop"}, "who": 7}),
    );
    assert_rejects(
        &s,
        json!({"shape": {"Circle": {"radius": 1}, "Square": 2}, "command": {"kind": "stop"}, "who": 7}),
    );
    assert_rejects(
        &s,
        json!({"shape": "Empty", "command": {"kind": "move", "x": 1}, "who": 7}),
    );
    assert_rejects(&s, json!({"shape": "Empty", "command": {"kind": "jump"}, "who": 7}));
    assert_rejects(&s, json!({"shape": "Empty", "command": {"kind": "stop"}, "who": -1}));
}

#[test]
fn nested_structs_are_inlined_with_their_docs() {
    let s = input::<nested>();
    assert_eq!(
        s,
        json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "person": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "address": {
                            "type": "object",
                            // The field's doc comment wins over the type's ("A postal address.").
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
                }
            },
            "required": ["person"]
        })
    );
    let good = json!({"person": {"name": "Ada", "address": {"streetLine": "1 Main", "city": "London"}, "tags": []}});
    assert_accepts(&s, good);
    // Nested user types are not `deny_unknown_fields`, and neither is their schema.
    assert_accepts(
        &s,
        json!({"person": {"name": "Ada", "address": {"streetLine": "1", "city": "L", "extra": 1}, "tags": []}}),
    );
    assert_rejects(
        &s,
        json!({"person": {"name": "Ada", "address": {"street_line": "1", "city": "L"}, "tags": []}}),
    );
}

#[test]
fn collections_vec_maps_sets_tuples_arrays() {
    let s = input::<collections>();
    assert_eq!(
        s,
        json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "names": {"type": "array", "items": {"type": "string"}},
                "points": {"type": "array", "items": point_schema()},
                "counts": {
                    "type": "object",
                    "additionalProperties": {"type": "integer", "minimum": 0, "maximum": 4294967295u32}
                },
                "places": {"type": "object", "additionalProperties": point_schema()},
                "unique": {"type": "array", "uniqueItems": true, "items": {"type": "integer"}},
                "pair": {
                    "type": "array",
                    "prefixItems": [{"type": "integer", "minimum": -2147483648, "maximum": 2147483647}, {"type": "string"}],
                    "minItems": 2,
                    "maxItems": 2
                },
                "fixed": {
                    "type": "array",
                    "items": {"type": "integer", "minimum": 0, "maximum": 255},
                    "minItems": 3,
                    "maxItems": 3
                }
            },
            "required": ["names", "points", "counts", "places", "unique", "pair", "fixed"]
        })
    );
    let good = json!({
        "names": ["a"], "points": [{"x": 1, "y": 2}], "counts": {"a": 1}, "places": {"home": {"x": 0, "y": 0}},
        "unique": [1, 2], "pair": [1, "one"], "fixed": [1, 2, 3]
    });
    assert_accepts(&s, good.clone());
    for (key, bad) in [
        ("names", json!([1])),
        ("points", json!([{"x": 1}])),
        ("counts", json!({"a": -1})),
        ("places", json!({"home": {"y": 0}})),
        ("unique", json!([1, 1])),
        ("pair", json!([1])),
        ("pair", json!(["one", 1])),
        ("pair", json!([1, "one", 2])),
        ("fixed", json!([1, 2])),
        ("fixed", json!([1, 2, 256])),
    ] {
        let mut args = good.clone();
        args[key] = bad;
        assert_rejects(&s, args);
    }
}

#[test]
fn optional_struct_and_enum() {
    let s = input::<optional_types>();
    assert_eq!(
        s,
        json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "at": {
                    "type": ["object", "null"],
                    "description": "Maybe a point.",
                    "properties": {
                        "x": {"type": "number", "description": "Horizontal."},
                        "y": {"type": "number"}
                    },
                    "required": ["x", "y"]
                },
                "color": {"type": ["string", "null"], "enum": ["Red", "Green", "Blue", null]},
                "scale": {
                    "anyOf": [
                        {
                            "description": "A temperature scale.",
                            "oneOf": [
                                {"type": "string", "const": "celsius", "description": "Degrees Celsius."},
                                {"type": "string", "const": "fahrenheit", "description": "Degrees Fahrenheit."}
                            ]
                        },
                        {"type": "null"}
                    ]
                }
            }
        })
    );
    assert_accepts(&s, json!({}));
    assert_accepts(&s, json!({"at": null, "color": null, "scale": null}));
    assert_accepts(
        &s,
        json!({"at": {"x": 1, "y": 2}, "color": "Blue", "scale": "fahrenheit"}),
    );
    assert_rejects(&s, json!({"at": {"x": 1}}));
    assert_rejects(&s, json!({"color": "blue"}));
    assert_rejects(&s, json!({"scale": "kelvin"}));
}

#[test]
fn a_struct_used_twice_is_inlined_twice_by_default() {
    assert_eq!(
        input::<twice_inlined>(),
        json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {"a": point_schema(), "b": point_schema()},
            "required": ["a", "b"]
        })
    );
}

#[test]
fn keep_defs_uses_one_def_and_refs() {
    let s = input::<twice_defs>();
    assert_eq!(
        s,
        json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "a": {"$ref": "#/$defs/Point"},
                "b": {"$ref": "#/$defs/Point"},
                "c": {"anyOf": [{"$ref": "#/$defs/Point"}, {"type": "null"}]}
            },
            "required": ["a", "b"],
            "$defs": {"Point": point_schema()}
        })
    );
    assert_accepts(&s, json!({"a": {"x": 1, "y": 2}, "b": {"x": 3, "y": 4}, "c": null}));
    assert_rejects(&s, json!({"a": {"x": 1, "y": 2}, "b": {"x": 3}}));
    assert_rejects(
        &s,
        json!({"a": {"x": 1, "y": 2}, "b": {"x": 3, "y": 4}, "c": {"y": "no"}}),
    );
}

/// A recursive type cannot be fully inlined: by default the parameter is
/// inlined once AND a copy is kept in `$defs/Tree`, which the inlined copy's
/// `children` refer to (so the default output is not `$ref`-free for such
/// types). With `keep_defs` the parameter is a plain `$ref`.
#[test]
fn recursive_types_keep_a_ref_to_themselves() {
    let s = input::<recursive>();
    assert_eq!(
        s,
        json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {"tree": tree_schema()},
            "required": ["tree"],
            "$defs": {"Tree": tree_schema()}
        })
    );
    let d = input::<recursive_defs>();
    assert_eq!(
        d,
        json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {"tree": {"$ref": "#/$defs/Tree"}},
            "required": ["tree"],
            "$defs": {"Tree": tree_schema()}
        })
    );
    let deep = json!({"tree": {"value": 1, "children": [{"value": 2, "children": [{"value": 3, "children": []}]}]}});
    let bad_deep =
        json!({"tree": {"value": 1, "children": [{"value": 2, "children": [{"value": "3", "children": []}]}]}});
    for schema in [&s, &d] {
        assert_accepts(schema, deep.clone());
        assert_rejects(schema, bad_deep.clone());
        assert_rejects(schema, json!({"tree": {"value": 1, "children": [{"value": 2}]}}));
    }
}

#[test]
fn renamed_and_raw_identifier_parameters_use_their_wire_names() {
    let s = input::<renamed_params>();
    assert_eq!(
        s,
        json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "camelName": {"type": "string"},
                "renamedDefault": {"type": "integer", "minimum": 0, "maximum": 65535, "default": 0},
                "type": {"type": "string"}
            },
            "required": ["camelName", "type"]
        })
    );
    assert_accepts(&s, json!({"camelName": "a", "type": "b"}));
    assert_rejects(&s, json!({"snake_name": "a", "type": "b"}));
    assert_rejects(&s, json!({"camelName": "a", "r#type": "b"}));
}

#[test]
fn extractors_are_not_in_the_schema() {
    assert_eq!(
        input::<extractors>(),
        json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {"query": {"type": "string"}},
            "required": ["query"]
        })
    );
    assert_eq!(
        input::<extractors_only>(),
        json!({"type": "object", "additionalProperties": false})
    );
}

#[test]
fn newtypes_values_schemars_attributes_and_boxes() {
    assert_eq!(
        input::<misc>(),
        json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "id": {"type": "integer", "minimum": 0},
                // `serde_json::Value`: any value (the `true` schema).
                "any": true,
                "maybe_any": true,
                "level": {"type": "integer", "minimum": 1, "maximum": 10},
                "wide": {"type": "integer"},
                "boxed": point_schema()
            },
            "required": ["id", "any", "level", "wide", "boxed"]
        })
    );
    let s = input::<misc>();
    assert_accepts(
        &s,
        json!({"id": 1, "any": null, "level": 10, "wide": 5, "boxed": {"x": 0, "y": 0}}),
    );
    assert_rejects(
        &s,
        json!({"id": 1, "any": null, "level": 11, "wide": 5, "boxed": {"x": 0, "y": 0}}),
    );
    assert_rejects(&s, json!({"id": 1, "level": 1, "wide": 5, "boxed": {"x": 0, "y": 0}}));
}

/// Only the root loses its `title`; a nested type keeps an explicit
/// `#[schemars(title)]` (a `# Heading` doc line is schemars' title syntax
/// too, overridden here by the attribute).
#[test]
fn explicit_titles_survive_below_the_root() {
    assert_eq!(
        input::<titled_arg>(),
        json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "titled": {
                    "type": "object",
                    "title": "Explicit Title",
                    "description": "Body text.",
                    "properties": {"a": {"type": "integer", "minimum": -2147483648, "maximum": 2147483647}},
                    "required": ["a"]
                }
            },
            "required": ["titled"]
        })
    );
}

#[test]
fn an_arguments_parameter_is_the_whole_object() {
    let s = input::<flattened>();
    assert_eq!(
        s,
        json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {"x": {"type": "integer", "minimum": -2147483648, "maximum": 2147483647}, "other": {"type": "string"}},
            "required": ["x", "other"]
        })
    );
    assert_accepts(&s, json!({"x": 1, "other": "o"}));
    assert_rejects(&s, json!({"x": 1, "other": "o", "zzz": 1}));
}

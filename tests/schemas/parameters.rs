//! Snapshots: parameters and their metadata (scalars, options, defaults, docs, overrides, hints).

use super::fixtures::*;
use mcp_runtime::__private::RegisteredTool;
use serde_json::json;

// ---------------------------------------------------------------------------
// Snapshots: parameters and metadata.
// ---------------------------------------------------------------------------

#[test]
fn no_parameters_is_exactly_an_empty_closed_object() {
    assert_eq!(
        input::<no_params>(),
        json!({"type": "object", "additionalProperties": false})
    );
    assert_eq!(
        input::<no_params>().to_string(),
        r#"{"type":"object","additionalProperties":false}"#
    );
    let t = tool::<no_params>();
    assert_eq!(t.name, "no_params");
    assert_eq!(t.title, None);
    assert_eq!(t.description, None);
    assert!(t.annotations.is_none());
    assert!(t.output_schema.is_none());
    let s = input::<no_params>();
    assert_accepts(&s, json!({}));
    assert_rejects(&s, json!({"unexpected": 1}));
    assert_rejects(&s, json!([]));
}

#[test]
fn scalar_types() {
    let s = input::<scalars>();
    assert_eq!(
        s,
        json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "s": {"type": "string"},
                "b": {"type": "boolean"},
                "i_8": {"type": "integer", "minimum": -128, "maximum": 127},
                "i_16": {"type": "integer", "minimum": -32768, "maximum": 32767},
                "i_32": {"type": "integer", "minimum": -2147483648, "maximum": 2147483647},
                "i_64": {"type": "integer"},
                "i_128": {"type": "integer"},
                "i_size": {"type": "integer"},
                "u_8": {"type": "integer", "minimum": 0, "maximum": 255},
                "u_16": {"type": "integer", "minimum": 0, "maximum": 65535},
                "u_32": {"type": "integer", "minimum": 0, "maximum": 4294967295u32},
                "u_64": {"type": "integer", "minimum": 0},
                "u_128": {"type": "integer", "minimum": 0},
                "u_size": {"type": "integer", "minimum": 0},
                "f_32": {"type": "number"},
                "f_64": {"type": "number"},
                "c": {"type": "string", "minLength": 1, "maxLength": 1}
            },
            "required": [
                "s", "b", "i_8", "i_16", "i_32", "i_64", "i_128", "i_size",
                "u_8", "u_16", "u_32", "u_64", "u_128", "u_size", "f_32", "f_64", "c"
            ]
        })
    );
    // The order of `properties` and `required` is the parameters' order.
    let names: Vec<&str> = s["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(names[..4], ["s", "b", "i_8", "i_16"]);
    assert_eq!(s["required"][16], "c");

    let good = scalar_args();
    assert_accepts(&s, good.clone());
    for (key, bad) in [
        ("u_8", json!(256)),
        ("u_8", json!(-1)),
        ("i_8", json!(-129)),
        ("i_16", json!(32768)),
        ("u_64", json!(-5)),
        ("i_32", json!(1.5)),
        ("b", json!("true")),
        ("c", json!("ab")),
        ("c", json!("")),
        ("s", json!(null)),
    ] {
        let mut args = good.clone();
        args[key] = bad;
        assert_rejects(&s, args);
    }
    let mut missing = good;
    missing.as_object_mut().unwrap().remove("f_64");
    assert_rejects(&s, missing);
}

#[test]
fn option_parameters_are_nullable_and_not_required() {
    let s = input::<optional>();
    assert_eq!(
        s,
        json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "required": {"type": "string"},
                "maybe": {"type": ["integer", "null"], "minimum": -2147483648, "maximum": 2147483647},
                "maybe_text": {"type": ["string", "null"]}
            },
            "required": ["required"]
        })
    );
    assert_accepts(&s, json!({"required": "r"}));
    assert_accepts(&s, json!({"required": "r", "maybe": null, "maybe_text": null}));
    assert_accepts(&s, json!({"required": "r", "maybe": 3, "maybe_text": "t"}));
    assert_rejects(&s, json!({"maybe": 3}));
    assert_rejects(&s, json!({"required": "r", "maybe": "3"}));
    assert_rejects(&s, json!({"required": "r", "extra": true}));
}

#[test]
fn serde_default_parameters_are_not_required_and_carry_their_default() {
    let s = input::<defaults>();
    assert_eq!(
        s,
        json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "count": {"type": "integer", "minimum": 0, "maximum": 4294967295u32, "default": 0},
                "greeting": {"type": "string", "default": "hello"},
                "flags": {"type": "array", "items": {"type": "string"}, "default": []},
                "opt_default": {"type": ["boolean", "null"], "default": null}
            }
        })
    );
    assert!(s.get("required").is_none());
    assert_accepts(&s, json!({}));
    assert_accepts(
        &s,
        json!({"count": 2, "greeting": "hi", "flags": ["a"], "opt_default": true}),
    );
    assert_rejects(&s, json!({"count": -2}));
}

#[test]
fn doc_comments_become_descriptions() {
    let t = tool::<documented>();
    assert_eq!(
        t.description.as_deref(),
        Some("Greets someone.\n\nA second paragraph\nover two lines.")
    );
    assert_eq!(t.title, None);
    assert_eq!(
        t.input_schema,
        json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "name": {"type": "string", "description": "Who to greet."},
                "times": {
                    "type": "integer",
                    "minimum": 0,
                    "maximum": 255,
                    "description": "How many times.\n\nSecond paragraph of the parameter."
                },
                "via_schemars": {"type": "string", "description": "From a schemars attribute."}
            },
            "required": ["name", "times", "via_schemars"]
        })
    );
}

#[test]
fn a_doc_attribute_of_an_expression_is_part_of_the_description() {
    let t = tool::<included_docs>();
    assert_eq!(
        t.description.as_deref(),
        Some(
            "Greets from a file.\n\nThe rest of the description lives in a file,\nkept beside the code.\n\n\n\
             A line after the file."
        )
    );
    assert_eq!(
        t.input_schema["properties"]["name"]["description"],
        json!("Who to greet.\n\nThe rest of the description lives in a file,\nkept beside the code.")
    );
    let t = tool::<included_docs_overridden>();
    assert_eq!(t.description.as_deref(), Some("The attribute wins over the file."));
    // A blank file is no description, as blank doc lines are none.
    assert_eq!(tool::<included_blank>().description, None);
}

#[test]
fn attribute_overrides_name_title_and_description() {
    let t = tool::<overridden>();
    assert_eq!(t.name, "renamed.tool-1_x");
    assert_eq!(t.title.as_deref(), Some("A Friendly Title"));
    assert_eq!(t.description.as_deref(), Some("The description from the attribute."));
    assert!(
        t.annotations.is_none(),
        "a title is the tool's `title`, not `annotations.title`"
    );
    assert_eq!(t.input_schema, json!({"type": "object", "additionalProperties": false}));
    assert_eq!(<overridden as RegisteredTool>::DEF.name, "renamed.tool-1_x");

    let t = tool::<titled_only>();
    assert_eq!(t.name, "titled_only");
    assert_eq!(t.title.as_deref(), Some("Only A Title"));
    assert_eq!(t.description.as_deref(), Some("Documented, with a title only."));

    assert_eq!(
        serde_json::to_value(tool::<overridden>()).unwrap(),
        json!({
            "name": "renamed.tool-1_x",
            "title": "A Friendly Title",
            "description": "The description from the attribute.",
            "inputSchema": {"type": "object", "additionalProperties": false}
        })
    );
}

#[test]
fn annotation_hints() {
    let wire = serde_json::to_value(tool::<hinted>()).unwrap();
    assert_eq!(
        wire["annotations"],
        json!({"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": true})
    );
    let wire = serde_json::to_value(tool::<hinted_false>()).unwrap();
    assert_eq!(
        wire["annotations"],
        json!({"readOnlyHint": false, "openWorldHint": false})
    );
    let wire = serde_json::to_value(tool::<no_params>()).unwrap();
    assert!(wire.get("annotations").is_none());
}

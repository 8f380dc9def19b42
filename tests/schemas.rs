//! Snapshot tests of the JSON Schemas `#[tool]` generates.
//!
//! Every tool below is a small `#[tool]` function whose `inputSchema` (and,
//! for `Json<T>` returns, `outputSchema`) is compared with an exact JSON
//! literal, so any change in the generator (schemars settings, inlining,
//! root clean-up, doc handling) shows up here. Independently of the
//! snapshots, every schema is checked to be valid JSON Schema 2020-12, every
//! tool definition to be a valid `Tool` of the 2026-07-28 MCP schema, and a
//! few example argument objects are validated against the schemas and sent
//! to a live server, so that the schema and the runtime decoder agree.
//!
//! Formats such as `int32`/`uint8`/`double` are schemars' own (not 2020-12
//! registry formats); they are annotation-only in 2020-12 and snapshotted
//! as they are.
#![allow(dead_code, unused_variables)]

mod support;

use mcp_runtime::__private::RegisteredTool;
use mcp_runtime::prelude::*;
use mcp_runtime::protocol::Tool;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap};

// ---------------------------------------------------------------------------
// Types used as arguments and outputs.
// ---------------------------------------------------------------------------

#[mcp_runtime::schema]
enum Color {
    Red,
    Green,
    Blue,
}

/// A temperature scale.
#[mcp_runtime::schema]
#[serde(rename_all = "lowercase")]
enum Scale {
    /// Degrees Celsius.
    Celsius,
    /// Degrees Fahrenheit.
    Fahrenheit,
}

#[mcp_runtime::schema]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
enum Level {
    VeryLow,
    High,
}

/// Only some variants documented.
#[mcp_runtime::schema]
#[serde(rename_all = "kebab-case")]
enum Partial {
    /// Only this one is documented.
    FirstOne,
    SecondOne,
}

/// A shape.
#[mcp_runtime::schema]
enum Shape {
    /// A circle.
    Circle {
        radius: f64,
    },
    Rect {
        width: f64,
        height: f64,
    },
    Square(f64),
    Empty,
}

#[mcp_runtime::schema]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Command {
    Move { x: i32, y: i32 },
    Stop,
}

#[mcp_runtime::schema]
#[serde(untagged)]
enum IdOrName {
    Id(u64),
    Name(String),
}

/// A postal address.
#[mcp_runtime::schema]
#[serde(rename_all = "camelCase")]
struct Address {
    /// Street and number.
    street_line: String,
    city: String,
    postal_code: Option<String>,
}

#[mcp_runtime::schema]
struct Person {
    name: String,
    /// Where they live.
    address: Address,
    tags: Vec<String>,
}

/// A point on a plane.
#[mcp_runtime::schema]
#[derive(Clone, Copy)]
struct Point {
    /// Horizontal.
    x: f64,
    y: f64,
}

/// A tree of integers.
#[mcp_runtime::schema]
struct Tree {
    value: i32,
    children: Vec<Tree>,
}

#[mcp_runtime::schema]
struct UserId(u64);

#[mcp_runtime::schema]
struct Inner {
    x: i32,
}

/// # Heading Title
///
/// Body text.
#[mcp_runtime::schema]
#[schemars(title = "Explicit Title")]
struct Titled {
    a: i32,
}

struct Counter;

struct Custom;

impl mcp_runtime::FromContext for Custom {
    fn from_context(_: &Context) -> Result<Self, McpError> {
        Ok(Custom)
    }
}

fn default_greeting() -> String {
    "hello".into()
}

fn point(x: f64, y: f64) -> Point {
    Point { x, y }
}

// ---------------------------------------------------------------------------
// The tools.
// ---------------------------------------------------------------------------

#[tool]
fn no_params() -> String {
    String::new()
}

#[tool]
fn scalars(
    s: String,
    b: bool,
    i_8: i8,
    i_16: i16,
    i_32: i32,
    i_64: i64,
    i_128: i128,
    i_size: isize,
    u_8: u8,
    u_16: u16,
    u_32: u32,
    u_64: u64,
    u_128: u128,
    u_size: usize,
    f_32: f32,
    f_64: f64,
    c: char,
) -> String {
    String::new()
}

#[tool]
fn optional(required: String, maybe: Option<i32>, maybe_text: Option<String>) -> String {
    String::new()
}

#[tool]
fn defaults(
    #[serde(default)] count: u32,
    #[serde(default = "default_greeting")] greeting: String,
    #[serde(default)] flags: Vec<String>,
    #[serde(default)] opt_default: Option<bool>,
) -> String {
    String::new()
}

/// Greets someone.
///
/// A second paragraph
/// over two lines.
#[tool]
fn documented(
    /// Who to greet.
    name: String,
    /// How many times.
    ///
    /// Second paragraph of the parameter.
    times: u8,
    #[schemars(description = "From a schemars attribute.")] via_schemars: String,
) -> String {
    String::new()
}

/// The doc comment, overridden by the attribute.
#[tool(
    name = "renamed.tool-1_x",
    title = "A Friendly Title",
    description = "The description from the attribute."
)]
fn overridden() -> String {
    String::new()
}

/// Documented, with a title only.
#[tool(title = "Only A Title")]
fn titled_only() -> String {
    String::new()
}

#[tool(read_only, destructive = false, idempotent, open_world)]
fn hinted() -> String {
    String::new()
}

#[tool(read_only = false, open_world = false)]
fn hinted_false() -> String {
    String::new()
}

#[tool]
fn unit_enums(color: Color, scale: Scale, level: Level, partial: Partial) -> String {
    String::new()
}

#[tool]
fn data_enums(shape: Shape, command: Command, who: IdOrName) -> String {
    String::new()
}

#[tool]
fn nested(person: Person) -> String {
    String::new()
}

#[tool]
fn collections(
    names: Vec<String>,
    points: Vec<Point>,
    counts: HashMap<String, u32>,
    places: BTreeMap<String, Point>,
    unique: BTreeSet<i64>,
    pair: (i32, String),
    fixed: [u8; 3],
) -> String {
    String::new()
}

#[tool]
fn optional_types(
    /// Maybe a point.
    at: Option<Point>,
    color: Option<Color>,
    scale: Option<Scale>,
) -> String {
    String::new()
}

#[tool]
fn twice_inlined(a: Point, b: Point) -> String {
    String::new()
}

#[tool(keep_defs)]
fn twice_defs(a: Point, b: Point, c: Option<Point>) -> String {
    String::new()
}

#[tool]
fn recursive(tree: Tree) -> String {
    String::new()
}

#[tool(keep_defs)]
fn recursive_defs(tree: Tree) -> String {
    String::new()
}

#[tool]
fn renamed_params(
    #[serde(rename = "camelName")] snake_name: String,
    #[serde(rename = "renamedDefault", default)] renamed_default: u16,
    r#type: String,
) -> String {
    String::new()
}

#[tool]
async fn extractors(
    ctx: Context,
    query: String,
    state: State<Counter>,
    cancel: Cancellation,
    #[extract] custom: Custom,
) -> String {
    String::new()
}

#[tool]
fn extractors_only(ctx: Context, state: State<Counter>) -> String {
    String::new()
}

#[tool]
#[allow(clippy::boxed_local)] // `Box<T>` parameters are part of what is covered.
fn misc(
    id: UserId,
    any: Value,
    maybe_any: Option<Value>,
    #[schemars(range(min = 1, max = 10))] level: u8,
    #[schemars(with = "i64")] wide: u64,
    boxed: Box<Point>,
) -> String {
    String::new()
}

#[tool]
fn titled_arg(titled: Titled) -> String {
    String::new()
}

// The whole arguments object of `flattened` (no doc comment: no description).
#[mcp_runtime::schema]
#[serde(deny_unknown_fields)]
struct Whole {
    x: i32,
    other: String,
}

#[tool]
fn flattened(#[arguments] whole: Whole) -> String {
    format!("{} {}", whole.x, whole.other)
}

#[tool]
fn out_struct() -> Json<Point> {
    Json(point(1.0, 2.0))
}

#[tool]
async fn out_vec() -> Json<Vec<u32>> {
    Json(vec![1, 2, 3])
}

#[tool]
fn out_result(fail: bool) -> Result<Json<Person>, String> {
    if fail {
        return Err("asked to fail".into());
    }
    Ok(Json(Person {
        name: "Ada".into(),
        address: Address {
            street_line: "1 Main St".into(),
            city: "London".into(),
            postal_code: None,
        },
        tags: vec!["math".into()],
    }))
}

#[tool(keep_defs)]
fn out_defs() -> Json<Vec<Point>> {
    Json(vec![point(0.0, 0.0), point(1.0, 1.0)])
}

#[tool]
fn out_enum() -> Json<Color> {
    Json(Color::Green)
}

#[tool]
fn out_option() -> Json<Option<Point>> {
    Json(None)
}

#[tool]
fn out_value() -> Json<Value> {
    Json(json!({"anything": [1, "two"]}))
}

#[tool]
fn out_tree() -> Json<Tree> {
    Json(Tree {
        value: 1,
        children: vec![Tree {
            value: 2,
            children: vec![],
        }],
    })
}

#[tool]
fn out_map() -> Json<HashMap<String, Point>> {
    Json(HashMap::from([("origin".to_owned(), point(0.0, 0.0))]))
}

#[tool]
fn out_titled() -> Json<Titled> {
    Json(Titled { a: 1 })
}

#[tool]
fn out_string() -> String {
    String::new()
}

#[tool]
fn out_unit() {}

#[tool]
fn out_result_string() -> Result<String, String> {
    Ok(String::new())
}

// ---------------------------------------------------------------------------
// Helpers.
// ---------------------------------------------------------------------------

fn tool<T: RegisteredTool>() -> Tool {
    T::DEF.to_tool()
}

fn input<T: RegisteredTool>() -> Value {
    tool::<T>().input_schema
}

fn output<T: RegisteredTool>() -> Option<Value> {
    tool::<T>().output_schema
}

/// Every tool of this file, with whether its schemas may contain `$ref`.
fn all_tools() -> Vec<(Tool, bool)> {
    vec![
        (tool::<no_params>(), false),
        (tool::<scalars>(), false),
        (tool::<optional>(), false),
        (tool::<defaults>(), false),
        (tool::<documented>(), false),
        (tool::<overridden>(), false),
        (tool::<titled_only>(), false),
        (tool::<hinted>(), false),
        (tool::<hinted_false>(), false),
        (tool::<unit_enums>(), false),
        (tool::<data_enums>(), false),
        (tool::<nested>(), false),
        (tool::<collections>(), false),
        (tool::<optional_types>(), false),
        (tool::<twice_inlined>(), false),
        (tool::<twice_defs>(), true),
        // Recursive types keep a `$ref` even when inlining.
        (tool::<recursive>(), true),
        (tool::<recursive_defs>(), true),
        (tool::<renamed_params>(), false),
        (tool::<extractors>(), false),
        (tool::<extractors_only>(), false),
        (tool::<misc>(), false),
        (tool::<titled_arg>(), false),
        (tool::<flattened>(), false),
        (tool::<out_struct>(), false),
        (tool::<out_vec>(), false),
        (tool::<out_result>(), false),
        (tool::<out_defs>(), true),
        (tool::<out_enum>(), false),
        (tool::<out_option>(), false),
        (tool::<out_value>(), false),
        (tool::<out_tree>(), true),
        (tool::<out_map>(), false),
        (tool::<out_titled>(), false),
        (tool::<out_string>(), false),
        (tool::<out_unit>(), false),
        (tool::<out_result_string>(), false),
    ]
}

/// Checks `schema` against the 2020-12 meta-schema and compiles it (which
/// also resolves every `$ref`).
fn compile(schema: &Value) -> jsonschema::Validator {
    if let Err(e) = jsonschema::draft202012::meta::validate(schema) {
        panic!("not a valid JSON Schema 2020-12: {e}\n{schema:#}");
    }
    jsonschema::validator_for(schema).unwrap_or_else(|e| panic!("schema does not compile: {e}\n{schema:#}"))
}

fn assert_accepts(schema: &Value, instance: Value) {
    let v = compile(schema);
    let errors: Vec<String> = v
        .iter_errors(&instance)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(
        errors.is_empty(),
        "{instance} should be valid against\n{schema:#}\nerrors: {errors:#?}"
    );
}

fn assert_rejects(schema: &Value, instance: Value) {
    assert!(
        !compile(schema).is_valid(&instance),
        "{instance} should be invalid against\n{schema:#}"
    );
}

/// Every `$ref` value anywhere in `value`.
fn refs(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                if k == "$ref" {
                    out.push(v.as_str().unwrap_or_default().to_owned());
                }
                refs(v, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
        _ => {}
    }
}

/// The schema of a `Point`, inlined.
fn point_schema() -> Value {
    json!({
        "type": "object",
        "description": "A point on a plane.",
        "properties": {
            "x": {"type": "number", "description": "Horizontal."},
            "y": {"type": "number"}
        },
        "required": ["x", "y"]
    })
}

fn with_description(mut schema: Value, description: &str) -> Value {
    schema["description"] = json!(description);
    schema
}

// ---------------------------------------------------------------------------
// Properties every generated schema must have.
// ---------------------------------------------------------------------------

#[test]
fn every_input_schema_is_a_valid_2020_12_object_schema_without_root_noise() {
    for (t, may_ref) in all_tools() {
        let s = &t.input_schema;
        compile(s);
        assert_eq!(
            s["type"], "object",
            "{}: the inputSchema root must be `type: object`: {s:#}",
            t.name
        );
        for key in ["$schema", "title", "$id", "definitions"] {
            assert!(
                s.get(key).is_none(),
                "{}: inputSchema root carries `{key}`: {s:#}",
                t.name
            );
        }
        // Tool arguments are exactly the declared parameters.
        assert_eq!(s["additionalProperties"], false, "{}: {s:#}", t.name);
        if let Some(required) = s.get("required") {
            let required = required.as_array().expect("required is an array");
            assert!(!required.is_empty(), "{}: empty `required` should be omitted", t.name);
            for r in required {
                assert!(
                    s["properties"].get(r.as_str().unwrap()).is_some(),
                    "{}: required {r} is no property",
                    t.name
                );
            }
        }
        if let Some(p) = s.get("properties") {
            assert!(
                !p.as_object().unwrap().is_empty(),
                "{}: empty `properties` should be omitted",
                t.name
            );
        }
        let mut found = Vec::new();
        refs(s, &mut found);
        if !may_ref {
            assert!(
                found.is_empty(),
                "{}: inlined schema still has $ref {found:?}: {s:#}",
                t.name
            );
            assert!(s.get("$defs").is_none(), "{}: inlined schema has $defs: {s:#}", t.name);
        }
    }
}

#[test]
fn every_output_schema_is_valid_2020_12_without_root_noise() {
    let mut with_output = 0;
    for (t, may_ref) in all_tools() {
        let Some(s) = &t.output_schema else { continue };
        with_output += 1;
        assert!(
            s.is_object(),
            "{}: outputSchema must be a JSON object (not a boolean schema): {s}",
            t.name
        );
        compile(s);
        for key in ["$schema", "title", "$id", "definitions"] {
            assert!(
                s.get(key).is_none(),
                "{}: outputSchema root carries `{key}`: {s:#}",
                t.name
            );
        }
        let mut found = Vec::new();
        refs(s, &mut found);
        if !may_ref {
            assert!(
                found.is_empty(),
                "{}: inlined outputSchema still has $ref {found:?}: {s:#}",
                t.name
            );
        }
    }
    assert_eq!(with_output, 10);
}

#[test]
fn every_tool_definition_is_a_valid_mcp_tool() {
    for (t, _) in all_tools() {
        let wire = serde_json::to_value(&t).unwrap();
        support::assert_valid("2026-07-28", "Tool", &wire);
    }
}

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
                "i_32": {"type": "integer"},
                "i_64": {"type": "integer"},
                "i_128": {"type": "integer"},
                "i_size": {"type": "integer"},
                "u_8": {"type": "integer", "minimum": 0, "maximum": 255},
                "u_16": {"type": "integer", "minimum": 0, "maximum": 65535},
                "u_32": {"type": "integer", "minimum": 0},
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

fn scalar_args() -> Value {
    json!({
        "s": "text", "b": true, "i_8": -128, "i_16": 32767, "i_32": -7, "i_64": 9007199254740993i64,
        "i_128": 1, "i_size": -1, "u_8": 255, "u_16": 0, "u_32": 4294967295u32, "u_64": 18446744073709551615u64,
        "u_128": 2, "u_size": 3, "f_32": 1.5, "f_64": -0.25, "c": "é"
    })
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
                "maybe": {"type": ["integer", "null"]},
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
                "count": {"type": "integer", "minimum": 0, "default": 0},
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
                                "x": {"type": "integer"},
                                "y": {"type": "integer"}
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
                    "additionalProperties": {"type": "integer", "minimum": 0}
                },
                "places": {"type": "object", "additionalProperties": point_schema()},
                "unique": {"type": "array", "uniqueItems": true, "items": {"type": "integer"}},
                "pair": {
                    "type": "array",
                    "prefixItems": [{"type": "integer"}, {"type": "string"}],
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

fn tree_schema() -> Value {
    json!({
        "type": "object",
        "description": "A tree of integers.",
        "properties": {
            "value": {"type": "integer"},
            "children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}
        },
        "required": ["value", "children"]
    })
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
                    "properties": {"a": {"type": "integer"}},
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
            "properties": {"x": {"type": "integer"}, "other": {"type": "string"}},
            "required": ["x", "other"]
        })
    );
    assert_accepts(&s, json!({"x": 1, "other": "o"}));
    assert_rejects(&s, json!({"x": 1, "other": "o", "zzz": 1}));
}

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
        Some(json!({"type": "array", "items": {"type": "integer", "minimum": 0}}))
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
                "value": {"type": "integer"},
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
            "properties": {"a": {"type": "integer"}},
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

// ---------------------------------------------------------------------------
// The schemas on the wire, and against the runtime.
// ---------------------------------------------------------------------------

fn server() -> support::StdioClient {
    support::StdioClient::start(
        Server::builder()
            .name("schemas-test")
            .version("1.0.0")
            .build()
            .expect("the server builds"),
    )
}

#[tokio::test]
async fn tools_list_serves_exactly_the_generated_definitions() {
    let mut c = server();
    let mut listed = BTreeMap::new();
    let mut cursor: Option<String> = None;
    for id in 1..100 {
        let params = match &cursor {
            Some(cur) => json!({"cursor": cur}),
            None => json!({}),
        };
        let v = c.call(id, "tools/list", params).await;
        for t in v["result"]["tools"].as_array().unwrap() {
            listed.insert(t["name"].as_str().unwrap().to_owned(), t.clone());
        }
        match v["result"].get("nextCursor") {
            Some(next) => cursor = Some(next.as_str().unwrap().to_owned()),
            None => break,
        }
    }
    let expected = all_tools();
    assert_eq!(listed.len(), expected.len(), "listed: {:?}", listed.keys());
    for (t, _) in expected {
        let wire = serde_json::to_value(&t).unwrap();
        assert_eq!(
            listed.get(&t.name),
            Some(&wire),
            "tools/list differs from DEF.to_tool() for {}",
            t.name
        );
    }
    c.close().await.unwrap();
}

/// Asserts that the schema and the live server agree on `args`: both accept
/// them, or both reject them (the server with an argument error).
async fn assert_verdicts_agree(
    c: &mut support::StdioClient,
    id: i64,
    name: &str,
    schema: &Value,
    args: Value,
    valid: bool,
) {
    assert_eq!(
        compile(schema).is_valid(&args),
        valid,
        "schema verdict for {name} {args}"
    );
    let v = c.call(id, "tools/call", json!({"name": name, "arguments": args})).await;
    let result = &v["result"];
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    if valid {
        assert!(result.get("isError").is_none(), "{name} {args} should be accepted: {v}");
    } else {
        assert_eq!(
            result["isError"], true,
            "{name} {args} is invalid by the schema, the server should reject it: {v}"
        );
        assert!(
            text.starts_with(&format!("Invalid arguments for tool `{name}`")),
            "{text}"
        );
    }
}

/// For each example: the schema verdict and the runtime's must agree.
#[tokio::test]
async fn schema_verdicts_match_the_runtime_decoder() {
    let cases: Vec<(&str, Value, Value, bool)> = vec![
        ("no_params", input::<no_params>(), json!({}), true),
        ("no_params", input::<no_params>(), json!({"x": 1}), false),
        ("scalars", input::<scalars>(), scalar_args(), true),
        (
            "scalars",
            input::<scalars>(),
            {
                let mut a = scalar_args();
                a["u_8"] = json!(256);
                a
            },
            false,
        ),
        (
            "scalars",
            input::<scalars>(),
            {
                let mut a = scalar_args();
                a["i_8"] = json!(-129);
                a
            },
            false,
        ),
        (
            "scalars",
            input::<scalars>(),
            {
                let mut a = scalar_args();
                a["c"] = json!("ab");
                a
            },
            false,
        ),
        (
            "scalars",
            input::<scalars>(),
            {
                let mut a = scalar_args();
                a["i_32"] = json!(1.5);
                a
            },
            false,
        ),
        ("optional", input::<optional>(), json!({"required": "r"}), true),
        (
            "optional",
            input::<optional>(),
            json!({"required": "r", "maybe": null}),
            true,
        ),
        ("optional", input::<optional>(), json!({"maybe": 1}), false),
        ("defaults", input::<defaults>(), json!({}), true),
        ("defaults", input::<defaults>(), json!({"count": -1}), false),
        (
            "unit_enums",
            input::<unit_enums>(),
            json!({"color": "Red", "scale": "celsius", "level": "HIGH", "partial": "second-one"}),
            true,
        ),
        (
            "unit_enums",
            input::<unit_enums>(),
            json!({"color": "Red", "scale": "Celsius", "level": "HIGH", "partial": "second-one"}),
            false,
        ),
        (
            "data_enums",
            input::<data_enums>(),
            json!({"shape": {"Square": 2}, "command": {"kind": "move", "x": 1, "y": 2}, "who": "n"}),
            true,
        ),
        (
            "data_enums",
            input::<data_enums>(),
            json!({"shape": {"Square": 2}, "command": {"kind": "move", "x": 1}, "who": "n"}),
            false,
        ),
        (
            "collections",
            input::<collections>(),
            json!({"names": [], "points": [], "counts": {}, "places": {}, "unique": [], "pair": [1, "a"], "fixed": [1, 2, 3]}),
            true,
        ),
        (
            "collections",
            input::<collections>(),
            json!({"names": [], "points": [], "counts": {}, "places": {}, "unique": [], "pair": [1, "a"], "fixed": [1, 2]}),
            false,
        ),
        (
            "twice_defs",
            input::<twice_defs>(),
            json!({"a": {"x": 1, "y": 2}, "b": {"x": 1, "y": 2}}),
            true,
        ),
        (
            "twice_defs",
            input::<twice_defs>(),
            json!({"a": {"x": 1, "y": 2}}),
            false,
        ),
        (
            "recursive",
            input::<recursive>(),
            json!({"tree": {"value": 1, "children": [{"value": 2, "children": []}]}}),
            true,
        ),
        (
            "recursive",
            input::<recursive>(),
            json!({"tree": {"value": 1, "children": [{"value": "2", "children": []}]}}),
            false,
        ),
        (
            "renamed_params",
            input::<renamed_params>(),
            json!({"camelName": "a", "type": "t"}),
            true,
        ),
        (
            "renamed_params",
            input::<renamed_params>(),
            json!({"snake_name": "a", "type": "t"}),
            false,
        ),
        (
            "misc",
            input::<misc>(),
            json!({"id": 1, "any": [1], "level": 1, "wide": 2, "boxed": {"x": 0, "y": 0}}),
            true,
        ),
        ("flattened", input::<flattened>(), json!({"x": 1, "other": "o"}), true),
        (
            "flattened",
            input::<flattened>(),
            json!({"x": 1, "other": "o", "zzz": 1}),
            false,
        ),
    ];
    let mut c = server();
    for (i, (name, schema, args, valid)) in cases.into_iter().enumerate() {
        assert_verdicts_agree(&mut c, i as i64 + 1, name, &schema, args, valid).await;
    }
    c.close().await.unwrap();
}

/// The `structuredContent` each `Json<T>` tool returns validates against
/// the `outputSchema` it advertises.
#[tokio::test]
async fn structured_content_matches_the_output_schema() {
    let mut c = server();
    let calls = [
        ("out_struct", json!({})),
        ("out_vec", json!({})),
        ("out_result", json!({"fail": false})),
        ("out_defs", json!({})),
        ("out_enum", json!({})),
        ("out_option", json!({})),
        ("out_value", json!({})),
        ("out_tree", json!({})),
        ("out_map", json!({})),
        ("out_titled", json!({})),
    ];
    let schemas: HashMap<String, Value> = all_tools()
        .into_iter()
        .filter_map(|(t, _)| Some((t.name.clone(), t.output_schema?)))
        .collect();
    for (i, (name, args)) in calls.into_iter().enumerate() {
        let v = c
            .call(i as i64 + 1, "tools/call", json!({"name": name, "arguments": args}))
            .await;
        let result = &v["result"];
        assert!(result.get("isError").is_none(), "{v}");
        let structured = result
            .get("structuredContent")
            .unwrap_or_else(|| panic!("{name}: no structuredContent: {v}"));
        assert_accepts(&schemas[name], structured.clone());
    }
    // An `Err` of `Result<Json<T>, E>` is a tool error without structured content.
    let v = c
        .call(
            100,
            "tools/call",
            json!({"name": "out_result", "arguments": {"fail": true}}),
        )
        .await;
    assert_eq!(v["result"]["isError"], true);
    assert!(v["result"].get("structuredContent").is_none(), "{v}");
    c.close().await.unwrap();
}

/// DISCREPANCY (fails today): `#[schemars(range(min = 1, max = 10))]` on a
/// parameter puts `minimum: 1, maximum: 10` in the advertised inputSchema,
/// but the decoder only runs serde, so `level: 0` reaches the function. The
/// MCP tools spec requires servers to validate tool inputs; a server that
/// advertises a constraint should enforce it (or the macro should refuse
/// validation-only schemars attributes).
#[tokio::test]
async fn schemars_constraints_in_the_schema_are_enforced_by_the_runtime() {
    let mut c = server();
    let args = json!({"id": 1, "any": [1], "level": 0, "wide": 2, "boxed": {"x": 0, "y": 0}});
    assert_verdicts_agree(&mut c, 1, "misc", &input::<misc>(), args, false).await;
    c.close().await.unwrap();
}

//! The argument and output types, the tools whose schemas are snapshotted,
//! and the helpers the snapshots share.

use mcp_runtime::__private::RegisteredTool;
use mcp_runtime::prelude::*;
use mcp_runtime::protocol::Tool;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap};

// ---------------------------------------------------------------------------
// Types used as arguments and outputs.
// ---------------------------------------------------------------------------

#[mcp_runtime::schema]
pub(crate) enum Color {
    Red,
    Green,
    Blue,
}

/// A temperature scale.
#[mcp_runtime::schema]
#[serde(rename_all = "lowercase")]
pub(crate) enum Scale {
    /// Degrees Celsius.
    Celsius,
    /// Degrees Fahrenheit.
    Fahrenheit,
}

#[mcp_runtime::schema]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub(crate) enum Level {
    VeryLow,
    High,
}

/// Only some variants documented.
#[mcp_runtime::schema]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Partial {
    /// Only this one is documented.
    FirstOne,
    SecondOne,
}

/// A shape.
#[mcp_runtime::schema]
pub(crate) enum Shape {
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
pub(crate) enum Command {
    Move { x: i32, y: i32 },
    Stop,
}

/// A discount: none, or a percentage within bounds (a range inside one
/// alternative of a `oneOf`).
#[mcp_runtime::schema]
pub(crate) enum Discount {
    NoDiscount,
    Percent {
        #[schemars(range(min = 1, max = 100))]
        value: u8,
    },
}

#[mcp_runtime::schema]
#[serde(untagged)]
pub(crate) enum IdOrName {
    Id(u64),
    Name(String),
}

/// A postal address.
#[mcp_runtime::schema]
#[serde(rename_all = "camelCase")]
pub(crate) struct Address {
    /// Street and number.
    pub(crate) street_line: String,
    pub(crate) city: String,
    pub(crate) postal_code: Option<String>,
}

#[mcp_runtime::schema]
pub(crate) struct Person {
    pub(crate) name: String,
    /// Where they live.
    pub(crate) address: Address,
    pub(crate) tags: Vec<String>,
}

/// A point on a plane.
#[mcp_runtime::schema]
#[derive(Clone, Copy)]
pub(crate) struct Point {
    /// Horizontal.
    pub(crate) x: f64,
    pub(crate) y: f64,
}

/// A tree of integers.
#[mcp_runtime::schema]
pub(crate) struct Tree {
    pub(crate) value: i32,
    pub(crate) children: Vec<Tree>,
}

#[mcp_runtime::schema]
pub(crate) struct UserId(u64);

#[mcp_runtime::schema]
pub(crate) struct Inner {
    pub(crate) x: i32,
}

/// # Heading Title
///
/// Body text.
#[mcp_runtime::schema]
#[schemars(title = "Explicit Title")]
pub(crate) struct Titled {
    pub(crate) a: i32,
}

pub(crate) struct Counter;

pub(crate) struct Custom;

impl mcp_runtime::FromContext for Custom {
    fn from_context(_: &Context) -> Result<Self, McpError> {
        Ok(Custom)
    }
}

pub(crate) fn default_greeting() -> String {
    "hello".into()
}

pub(crate) fn point(x: f64, y: f64) -> Point {
    Point { x, y }
}

// ---------------------------------------------------------------------------
// The tools.
// ---------------------------------------------------------------------------

#[tool]
pub(crate) fn no_params() -> String {
    String::new()
}

#[tool]
pub(crate) fn scalars(
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
pub(crate) fn optional(required: String, maybe: Option<i32>, maybe_text: Option<String>) -> String {
    String::new()
}

#[tool]
pub(crate) fn defaults(
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
pub(crate) fn documented(
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

/// Greets from a file.
#[doc = include_str!("included_doc.md")]
/// A line after the file.
#[tool]
pub(crate) fn included_docs(
    /// Who to greet.
    #[doc = include_str!("included_doc.md")]
    name: String,
) -> String {
    name
}

// A blank file on purpose: a description of nothing is none.
#[allow(clippy::empty_docs)]
#[doc = include_str!("blank_doc.md")]
#[tool]
pub(crate) fn included_blank() -> String {
    String::new()
}

/// Only a file.
#[doc = ""]
#[tool(description = "The attribute wins over the file.")]
#[doc = include_str!("included_doc.md")]
pub(crate) fn included_docs_overridden() -> String {
    String::new()
}

/// The doc comment, overridden by the attribute.
#[tool(
    name = "renamed.tool-1_x",
    title = "A Friendly Title",
    description = "The description from the attribute."
)]
pub(crate) fn overridden() -> String {
    String::new()
}

/// Documented, with a title only.
#[tool(title = "Only A Title")]
pub(crate) fn titled_only() -> String {
    String::new()
}

#[tool(read_only, destructive = false, idempotent, open_world)]
pub(crate) fn hinted() -> String {
    String::new()
}

#[tool(read_only = false, open_world = false)]
pub(crate) fn hinted_false() -> String {
    String::new()
}

#[tool]
pub(crate) fn unit_enums(color: Color, scale: Scale, level: Level, partial: Partial) -> String {
    String::new()
}

#[tool]
pub(crate) fn data_enums(shape: Shape, command: Command, who: IdOrName) -> String {
    String::new()
}

#[tool]
pub(crate) fn nested(person: Person) -> String {
    String::new()
}

#[tool]
pub(crate) fn collections(
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
pub(crate) fn optional_types(
    /// Maybe a point.
    at: Option<Point>,
    color: Option<Color>,
    scale: Option<Scale>,
) -> String {
    String::new()
}

#[tool]
pub(crate) fn twice_inlined(a: Point, b: Point) -> String {
    String::new()
}

#[tool(keep_defs)]
pub(crate) fn twice_defs(a: Point, b: Point, c: Option<Point>) -> String {
    String::new()
}

#[tool]
pub(crate) fn recursive(tree: Tree) -> String {
    String::new()
}

#[tool(keep_defs)]
pub(crate) fn recursive_defs(tree: Tree) -> String {
    String::new()
}

#[tool]
pub(crate) fn renamed_params(
    #[serde(rename = "camelName")] snake_name: String,
    #[serde(rename = "renamedDefault", default)] renamed_default: u16,
    r#type: String,
) -> String {
    String::new()
}

#[tool]
pub(crate) async fn extractors(
    ctx: Context,
    query: String,
    state: State<Counter>,
    cancel: Cancellation,
    #[extract] custom: Custom,
) -> String {
    String::new()
}

#[tool]
pub(crate) fn extractors_only(ctx: Context, state: State<Counter>) -> String {
    String::new()
}

#[tool]
#[allow(clippy::boxed_local)] // `Box<T>` parameters are part of what is covered.
pub(crate) fn misc(
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
pub(crate) fn discounted(discount: Discount, extra: Option<Discount>) -> String {
    let _ = (discount, extra);
    String::new()
}

#[tool]
pub(crate) fn titled_arg(titled: Titled) -> String {
    String::new()
}

// The whole arguments object of `flattened` (no doc comment: no description).
#[mcp_runtime::schema]
#[serde(deny_unknown_fields)]
pub(crate) struct Whole {
    pub(crate) x: i32,
    pub(crate) other: String,
}

#[tool]
pub(crate) fn flattened(#[arguments] whole: Whole) -> String {
    format!("{} {}", whole.x, whole.other)
}

#[tool]
pub(crate) fn out_struct() -> Json<Point> {
    Json(point(1.0, 2.0))
}

#[tool]
pub(crate) async fn out_vec() -> Json<Vec<u32>> {
    Json(vec![1, 2, 3])
}

#[tool]
pub(crate) fn out_result(fail: bool) -> Result<Json<Person>, String> {
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
pub(crate) fn out_defs() -> Json<Vec<Point>> {
    Json(vec![point(0.0, 0.0), point(1.0, 1.0)])
}

#[tool]
pub(crate) fn out_enum() -> Json<Color> {
    Json(Color::Green)
}

#[tool]
pub(crate) fn out_option() -> Json<Option<Point>> {
    Json(None)
}

#[tool]
pub(crate) fn out_value() -> Json<Value> {
    Json(json!({"anything": [1, "two"]}))
}

#[tool]
pub(crate) fn out_tree() -> Json<Tree> {
    Json(Tree {
        value: 1,
        children: vec![Tree {
            value: 2,
            children: vec![],
        }],
    })
}

#[tool]
pub(crate) fn out_map() -> Json<HashMap<String, Point>> {
    Json(HashMap::from([("origin".to_owned(), point(0.0, 0.0))]))
}

#[tool]
pub(crate) fn out_titled() -> Json<Titled> {
    Json(Titled { a: 1 })
}

#[tool]
pub(crate) fn out_string() -> String {
    String::new()
}

#[tool]
pub(crate) fn out_unit() {}

#[tool]
pub(crate) fn out_result_string() -> Result<String, String> {
    Ok(String::new())
}

// ---------------------------------------------------------------------------
// Helpers.
// ---------------------------------------------------------------------------

pub(crate) fn tool<T: RegisteredTool>() -> Tool {
    T::DEF.to_tool()
}

pub(crate) fn input<T: RegisteredTool>() -> Value {
    tool::<T>().input_schema
}

pub(crate) fn output<T: RegisteredTool>() -> Option<Value> {
    tool::<T>().output_schema
}

/// Every tool of this file, with whether its schemas may contain `$ref`.
pub(crate) fn all_tools() -> Vec<(Tool, bool)> {
    vec![
        (tool::<no_params>(), false),
        (tool::<scalars>(), false),
        (tool::<optional>(), false),
        (tool::<defaults>(), false),
        (tool::<documented>(), false),
        (tool::<included_docs>(), false),
        (tool::<included_docs_overridden>(), false),
        (tool::<included_blank>(), false),
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
        (tool::<discounted>(), false),
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
pub(crate) fn compile(schema: &Value) -> jsonschema::Validator {
    if let Err(e) = jsonschema::draft202012::meta::validate(schema) {
        panic!("not a valid JSON Schema 2020-12: {e}\n{schema:#}");
    }
    jsonschema::validator_for(schema).unwrap_or_else(|e| panic!("schema does not compile: {e}\n{schema:#}"))
}

pub(crate) fn assert_accepts(schema: &Value, instance: Value) {
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

pub(crate) fn assert_rejects(schema: &Value, instance: Value) {
    assert!(
        !compile(schema).is_valid(&instance),
        "{instance} should be invalid against\n{schema:#}"
    );
}

/// Every `$ref` value anywhere in `value`.
pub(crate) fn refs(value: &Value, out: &mut Vec<String>) {
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
pub(crate) fn point_schema() -> Value {
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

pub(crate) fn with_description(mut schema: Value, description: &str) -> Value {
    schema["description"] = json!(description);
    schema
}

pub(crate) fn scalar_args() -> Value {
    json!({
        "s": "text", "b": true, "i_8": -128, "i_16": 32767, "i_32": -7, "i_64": 9007199254740993i64,
        "i_128": 1, "i_size": -1, "u_8": 255, "u_16": 0, "u_32": 4294967295u32, "u_64": 18446744073709551615u64,
        "u_128": 2, "u_size": 3, "f_32": 1.5, "f_64": -0.25, "c": "é"
    })
}

pub(crate) fn tree_schema() -> Value {
    json!({
        "type": "object",
        "description": "A tree of integers.",
        "properties": {
            "value": {"type": "integer", "minimum": -2147483648, "maximum": 2147483647},
            "children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}
        },
        "required": ["value", "children"]
    })
}

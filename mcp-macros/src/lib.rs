//! Procedural macros of `mcp-runtime`: `#[tool]`, `#[resource]`, `#[prompt]` and `#[schema]`.
//!
//! Use them through `mcp-runtime`, which re-exports them; the generated code
//! names one path, `::mcp_runtime::__private`. Each macro goes parse → model
//! → check → expand, like serde_derive, with one error collector (`Ctxt`,
//! in `src/ctxt.rs`) carried through the first three: `parse` reads the
//! attribute and the function with `syn`, `model` decides what every
//! parameter is, `check` applies the rules, and only an item with no error
//! reaches `expand`, which writes the code (private modules of this crate,
//! not documented here). Every error of an item is reported at once, at the
//! span of the user's code that caused it.

use proc_macro::TokenStream;

mod check;
mod ctxt;
mod docs;
mod expand;
mod model;
mod parse;
mod skills;

use ctxt::Ctxt;

/// Runs the steps of one item: `read` (parse and model), `check`, then
/// `expand` if nothing was recorded.
fn run<M>(
    read: impl FnOnce(&Ctxt) -> Option<M>,
    check: impl FnOnce(&Ctxt, &M),
    expand: impl FnOnce(&M) -> proc_macro2::TokenStream,
) -> TokenStream {
    let cx = Ctxt::new();
    let model = read(&cx);
    if let Some(m) = &model {
        check(&cx, m);
    }
    match (cx.check(), model) {
        (Ok(()), Some(m)) => expand(&m).into(),
        (Err(e), _) => e.to_compile_error().into(),
        (Ok(()), None) => TokenStream::new(),
    }
}

/// Turns a plain function into an MCP tool, registered at link time.
///
/// ```ignore
/// /// Adds two integers.
/// #[tool(read_only, idempotent)]
/// fn add(/// The first addend.
///        a: i64,
///        /// The second addend (default 0).
///        b: Option<i64>) -> String {
///     (a + b.unwrap_or(0)).to_string()
/// }
/// ```
///
/// The description is the doc comment unless `description` is given; a doc
/// attribute may be an expression (`#[doc = include_str!("search.md")]`),
/// joined with the comment's lines where the tool is compiled.
///
/// Attribute keys: `name`, `title`, `description` (strings); the hints
/// `read_only`, `destructive`, `idempotent`, `open_world` (a flag or
/// `= bool`); `keep_defs` (keep `$defs`/`$ref` in the schemas instead of
/// inlining); `visible_if = path::to_fn` (a `fn(&Viewer<'_>) -> bool`
/// asked per request: a caller it says no to is not shown the tool, and
/// its call is answered as one of an unknown tool); the guardrails
/// `timeout = "30s"`, `max_concurrency = 4` and `rate_limit = "10/s"`
/// (`N/s`, `N/min`, `N/h`, `N/<ms>ms`, optionally `burst B`: calls per
/// caller, checked at compile time). See the `mcp-runtime`
/// documentation for parameters, extractors and return types.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    run(
        |cx| parse::tool(cx, attr.into(), item.into()).map(|p| model::Tool::from_parsed(cx, p)),
        check::tool,
        expand::tool,
    )
}

/// Derives `Serialize`, `Deserialize` and `JsonSchema` through
/// `mcp-runtime`'s re-exports, so that a type can be a tool argument or a
/// `Json<T>` output without depending on serde or schemars directly.
///
/// ```ignore
/// #[mcp_runtime::schema]
/// #[serde(rename_all = "camelCase")]
/// struct Address { street: String, city: String }
/// ```
/// Turns a plain function into an MCP resource (`uri = "..."`) or resource
/// template (`uri_template = "scheme://{var}"`), registered at link time.
///
/// ```ignore
/// /// A ticket, by number.
/// #[resource(uri_template = "tickets://{id}", mime_type = "application/json")]
/// fn ticket(id: u64) -> Option<Json<Ticket>> { TICKETS.get(id).map(Json) }
/// ```
///
/// Keys: `uri` or `uri_template`, `name` (default: the function's name),
/// `title`, `description` (default: the doc comment), `mime_type`, `ttl_ms`
/// (default 0) and `cache_scope` (`"public"` or `"private"`, the default),
/// `visible_if = path::to_fn` (as for `#[tool]`).
/// Template variables bind to parameters by name; `#[complete(with = f)]`
/// on a parameter completes it.
#[proc_macro_attribute]
pub fn resource(attr: TokenStream, item: TokenStream) -> TokenStream {
    run(
        |cx| parse::resource(cx, attr.into(), item.into()).map(|p| model::Resource::from_parsed(cx, p)),
        check::resource,
        expand::resource,
    )
}

/// Turns a plain function into an MCP prompt, registered at link time. Its
/// parameters are the prompt's arguments (required unless `Option`), their
/// doc comments the arguments' descriptions.
///
/// ```ignore
/// /// Asks for a code review.
/// #[prompt]
/// fn review(/// The code to review.
///           code: String,
///           #[complete(with = languages)] language: Option<String>) -> Vec<PromptMessage> { ... }
/// ```
///
/// Keys: `name`, `title`, `description`, `scopes(..)`, `visible_if =
/// path::to_fn` (as for `#[tool]`).
#[proc_macro_attribute]
pub fn prompt(attr: TokenStream, item: TokenStream) -> TokenStream {
    run(
        |cx| parse::prompt(cx, attr.into(), item.into()).map(|p| model::Prompt::from_parsed(cx, p)),
        check::prompt,
        expand::prompt,
    )
}

/// Makes a struct an elicitation form (or a unit-only enum a select field
/// of one): derives Serialize, Deserialize and JsonSchema, and checks at
/// compile time that every field fits the elicitation schema subset
/// (strings, numbers, booleans, `#[form]` enums, `Option`/`Vec` of them).
///
/// ```ignore
/// #[mcp_runtime::form]
/// struct Contact { name: String, age: Option<u32>, newsletter: bool }
/// ```
#[proc_macro_attribute]
pub fn form(attr: TokenStream, item: TokenStream) -> TokenStream {
    match expand::form(attr.into(), item.into()) {
        Ok(tokens) => tokens.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

#[proc_macro_attribute]
pub fn schema(attr: TokenStream, item: TokenStream) -> TokenStream {
    match expand::schema(attr.into(), item.into()) {
        Ok(tokens) => tokens.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// Embeds a folder of Agent Skills in the binary at compile time, for
/// [`ServerBuilder::skills`]: `Server::builder().skills(mcp_runtime::skills!("skills"))`.
///
/// The path is relative to the crate's folder (`CARGO_MANIFEST_DIR`). Each
/// folder below it holding a `SKILL.md` is a skill; its frontmatter is
/// parsed (YAML 1.2) and checked against the Agent Skills rules (the name:
/// 1 to 64 of `a-z0-9-`, no leading, trailing or doubled hyphen, equal to
/// its folder's name; a description of 1 to 1024 characters), and every file
/// is embedded with `include_bytes!`, its SHA-256 digest and size computed
/// here: the binary serves them with no file I/O. A bad skill is a compile
/// error naming the file and the rule.
///
/// The build reruns when an embedded file changes; a file *added* to the
/// folder is not seen until something else makes the crate rebuild. Add
/// `println!("cargo:rerun-if-changed=skills");` to a `build.rs` to make
/// cargo watch the whole folder.
///
/// ```ignore
/// let server = mcp_runtime::Server::builder()
///     .skills(mcp_runtime::skills!("skills"))
///     .build()?;
/// ```
///
/// [`ServerBuilder::skills`]: https://docs.rs/mcp-runtime/latest/mcp_runtime/struct.ServerBuilder.html#method.skills
#[proc_macro]
pub fn skills(input: TokenStream) -> TokenStream {
    run(|cx| skills::read(cx, input), |_, _| {}, skills::expand)
}

//! Procedural macros of `mcp-runtime`: `#[tool]`, `#[resource]`, `#[prompt]` and `#[schema]`.
//!
//! Use them through `mcp-runtime`, which re-exports them; the generated code
//! refers to `::mcp_runtime`. Each macro goes parse → model → expand:
//! [`parse`] reads the attribute and the function with `syn`, [`model`]
//! checks them and decides what every parameter is, [`expand`] writes the
//! code. Errors carry the span of the user's code that caused them.

use proc_macro::TokenStream;

mod docs;
mod expand;
mod model;
mod parse;

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
/// Attribute keys: `name`, `title`, `description` (strings); the hints
/// `read_only`, `destructive`, `idempotent`, `open_world` (a flag or
/// `= bool`); `keep_defs` (keep `$defs`/`$ref` in the schemas instead of
/// inlining). See the `mcp-runtime` documentation for parameters,
/// extractors and return types.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    let result = parse::tool(attr.into(), item.into())
        .and_then(model::Tool::from_parsed)
        .map(|tool| expand::tool(&tool));
    match result {
        Ok(tokens) => tokens.into(),
        Err(e) => e.to_compile_error().into(),
    }
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
/// (default 0) and `cache_scope` (`"public"` or `"private"`, the default).
/// Template variables bind to parameters by name; `#[complete(with = f)]`
/// on a parameter completes it.
#[proc_macro_attribute]
pub fn resource(attr: TokenStream, item: TokenStream) -> TokenStream {
    let result = parse::resource(attr.into(), item.into())
        .and_then(model::Resource::from_parsed)
        .map(|r| expand::resource(&r));
    match result {
        Ok(tokens) => tokens.into(),
        Err(e) => e.to_compile_error().into(),
    }
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
#[proc_macro_attribute]
pub fn prompt(attr: TokenStream, item: TokenStream) -> TokenStream {
    let result = parse::prompt(attr.into(), item.into())
        .and_then(model::Prompt::from_parsed)
        .map(|p| expand::prompt(&p));
    match result {
        Ok(tokens) => tokens.into(),
        Err(e) => e.to_compile_error().into(),
    }
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

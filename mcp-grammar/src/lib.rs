//! The rules that both `mcp-runtime` and its macros apply, written once:
//! the tool-name rule, the subset of RFC 6570 URI templates resources
//! use, and how a rate limit is written. The macros check them at compile time, with a span on the user's
//! code; the runtime checks entries built at run time and matches URIs.
//! No dependencies, and `no_std`, unless the `skills` feature (std, YAML,
//! SHA-256) adds [`skills`]: reading and checking a folder of Agent Skills.
#![no_std]
#![warn(missing_docs)]

extern crate alloc;
#[cfg(feature = "skills")]
extern crate std;

#[cfg(feature = "skills")]
pub mod skills;

mod rate;
pub use rate::{parse_rate, RateParts};

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

/// The longest tool name (the spec's limit).
pub const MAX_TOOL_NAME: usize = 128;

/// Whether `name` is a valid tool name: 1 to 128 characters of
/// `A-Za-z0-9`, `_`, `.` and `-`.
///
/// ```
/// assert!(mcp_runtime_grammar::is_valid_tool_name("tickets.search_v2"));
/// assert!(!mcp_runtime_grammar::is_valid_tool_name("has space"));
/// assert!(!mcp_runtime_grammar::is_valid_tool_name(""));
/// ```
#[inline]
pub fn is_valid_tool_name(name: &str) -> bool {
    (1..=MAX_TOOL_NAME).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// One piece of a URI template.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TemplatePart<'a> {
    /// Text matched as written.
    Literal(&'a str),
    /// `{name}` (level 1) or, `reserved`, `{+name}` (level 2).
    Variable {
        /// The variable's name.
        name: &'a str,
        /// Whether it is a reserved expansion (`{+name}`).
        reserved: bool,
    },
}

/// Splits a URI template into its parts, or says what is unsupported in it:
/// only `{name}` and `{+name}` expressions (names of `A-Za-z0-9_`), each
/// variable once, with a literal between two variables.
///
/// ```
/// use mcp_runtime_grammar::{parse_template, TemplatePart};
/// let parts = parse_template("files://{+path}/raw").unwrap();
/// assert_eq!(parts[1], TemplatePart::Variable { name: "path", reserved: true });
/// assert!(parse_template("x://{a}{b}").is_err());
/// ```
pub fn parse_template(template: &str) -> Result<Vec<TemplatePart<'_>>, String> {
    let mut parts = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        if open > 0 {
            parts.push(TemplatePart::Literal(&rest[..open]));
        }
        let close = match rest[open..].find('}') {
            Some(offset) => open + offset,
            None => return Err(String::from("unclosed `{` in the URI template")),
        };
        let expr = &rest[open + 1..close];
        let (reserved, name) = match expr.strip_prefix('+') {
            Some(name) => (true, name),
            None => (false, expr),
        };
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(format!(
                "unsupported expression `{{{expr}}}`: only RFC 6570 `{{name}}` and `{{+name}}` are supported"
            ));
        }
        if matches!(parts.last(), Some(TemplatePart::Variable { .. })) {
            return Err(String::from("two variables need a literal between them"));
        }
        if parts
            .iter()
            .any(|p| matches!(p, TemplatePart::Variable { name: n, .. } if *n == name))
        {
            return Err(format!("variable `{name}` appears twice"));
        }
        parts.push(TemplatePart::Variable { name, reserved });
        rest = &rest[close + 1..];
    }
    if rest.contains('}') {
        return Err(String::from("unopened `}` in the URI template"));
    }
    if !rest.is_empty() {
        parts.push(TemplatePart::Literal(rest));
    }
    Ok(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names() {
        assert!(is_valid_tool_name("a"));
        assert!(is_valid_tool_name(&"x".repeat(128)));
        assert!(!is_valid_tool_name(&"x".repeat(129)));
        for bad in ["", "a b", "a/b", "é", "a:b"] {
            assert!(!is_valid_tool_name(bad), "{bad}");
        }
    }

    #[test]
    fn templates() {
        assert_eq!(
            parse_template("t://{id}/data").unwrap(),
            [
                TemplatePart::Literal("t://"),
                TemplatePart::Variable {
                    name: "id",
                    reserved: false
                },
                TemplatePart::Literal("/data"),
            ]
        );
        for bad in [
            "x://{#a}",
            "x://{a,b}",
            "x://{a*}",
            "x://{?q}",
            "x://{a",
            "x://{a}{b}",
            "x://{a}/{a}",
            "x://a}",
            "x://{}",
        ] {
            assert!(parse_template(bad).is_err(), "{bad}");
        }
    }
}

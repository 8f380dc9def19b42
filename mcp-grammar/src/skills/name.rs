//! The Agent Skills naming rule and the URI segments of a skill's path.

use super::{SkillRule, MAX_NAME};
use std::borrow::ToOwned;

/// Checks a skill name: 1 to 64 characters of `a-z0-9-`, not starting or
/// ending with `-`, without `--`.
///
/// ```
/// use mcp_runtime_grammar::skills::check_name;
/// assert!(check_name("pdf-processing").is_ok());
/// assert!(check_name("PDF").is_err());
/// assert!(check_name("a--b").is_err());
/// assert!(check_name("-a").is_err());
/// ```
pub fn check_name(name: &str) -> Result<(), SkillRule> {
    let why = if name.is_empty() {
        Some("must not be empty")
    } else if name.len() > MAX_NAME {
        Some("must be at most 64 characters")
    } else if !name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        Some("use only lowercase letters, digits and hyphens (a-z0-9-)")
    } else if name.starts_with('-') || name.ends_with('-') {
        Some("must not start or end with a hyphen")
    } else if name.contains("--") {
        Some("must not contain two hyphens in a row")
    } else {
        None
    };
    match why {
        Some(why) => Err(SkillRule::Name {
            name: name.to_owned(),
            why,
        }),
        None => Ok(()),
    }
}

/// Checks that a folder name can be a segment of a `skill://` URI as it
/// is (RFC 3986 unreserved characters: `A-Za-z0-9-._~`), so that the
/// first one is a valid authority and no segment needs escaping.
///
/// ```
/// use mcp_runtime_grammar::skills::check_segment;
/// assert!(check_segment("acme.billing").is_ok());
/// assert!(check_segment("two words").is_err());
/// ```
pub fn check_segment(segment: &str) -> Result<(), SkillRule> {
    let ok = !segment.is_empty()
        && segment != "."
        && segment != ".."
        && segment
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'));
    if ok {
        Ok(())
    } else {
        Err(SkillRule::Segment(segment.to_owned()))
    }
}

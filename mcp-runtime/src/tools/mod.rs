//! Tools: what a tool function may return, how its arguments are decoded
//! and checked, and the tool-name rule.

mod args;
mod output;
pub(crate) mod validate;

pub use args::{decode_arguments, probe, ArgSpec};
pub use output::IntoToolResult;
pub(crate) use output::{error_result, write_call_result};

/// Whether `name` is a valid tool name: 1 to 128 characters of `A-Za-z0-9_.-`.
pub fn is_valid_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

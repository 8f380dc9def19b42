//! Resources: what a resource function may return, and URI templates
//! (RFC 6570 levels 1 and 2) with their matching and decoding.

mod output;
pub mod template;

pub use output::{Blob, IntoResourceContents};
pub use template::UriTemplate;

//! Examples and cross-crate tests of the workspace.

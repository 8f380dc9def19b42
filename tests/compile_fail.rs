//! Compile tests of the macros: each `tests/ui/*.rs` must fail to build
//! with the diagnostic pinned in its `.stderr` (regenerate with
//! `TRYBUILD=overwrite cargo test --test compile_fail`), and each
//! `tests/ui-pass/*.rs` must build and run.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
    t.pass("tests/ui-pass/*.rs");
}

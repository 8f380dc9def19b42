//! Compile-fail tests of `#[tool]` and `#[schema]`: each `tests/ui/*.rs`
//! must fail to build with the diagnostic pinned in its `.stderr`
//! (regenerate with `TRYBUILD=overwrite cargo test --test compile_fail`).

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}

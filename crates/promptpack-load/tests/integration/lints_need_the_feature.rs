//! Lints asked of a core built without its `lint` feature do not compile,
//! rather than come back empty. trybuild builds the case against this
//! crate and its dev-dependencies only, none of which turns `lint` on
//! (this crate has no feature that would), so the case sees the core an
//! application that only loads and renders gets, however the workspace's
//! own tests are built.

#[test]
fn lints_without_the_feature_do_not_compile() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}

//! The `resolve_render` target: [`promptpack_testkit::fuzz_resolve_render`] says what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| promptpack_testkit::fuzz_resolve_render(data));

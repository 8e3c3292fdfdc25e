//! The `parse` target: [`promptpack_testkit::fuzz_parse`] says what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| promptpack_testkit::fuzz_parse(data));

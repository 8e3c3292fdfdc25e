//! The `codegen` target: [`promptpack_testkit::fuzz_codegen`] says what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| promptpack_testkit::fuzz_codegen(data));

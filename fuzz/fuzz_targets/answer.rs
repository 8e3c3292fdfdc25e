//! The `answer` target: [`promptpack_testkit::fuzz_answer`] says what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| promptpack_testkit::fuzz_answer(data));

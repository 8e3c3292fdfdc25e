//! The `snippet_fanout` target: [`promptpack_testkit::fuzz_snippet_fanout`] says what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| promptpack_testkit::fuzz_snippet_fanout(data));

//! The root crate's integration tests in one binary: each module was a
//! `tests/<name>.rs` of its own, and each of those linked the whole crate
//! and its dev-dependencies again. A module that needs features says so
//! with `cfg`, so `cargo test` with fewer features runs the rest.
//!
//! Separate binaries stay: `tests/alloc.rs` and `tests/render_bound.rs`
//! install a `#[global_allocator]`, and `tests/snapshots_sample.rs` is the
//! suite `init --cargo --snapshots` gives a user, a top-level test file
//! whose snapshot names and `source:` lines it checks
//! (`tests/snapshots/snapshots_sample__<case>.snap`): as a module here they
//! would be another layout than a user's.

mod support;

mod build_errors;
mod build_warnings;
mod codegen;
mod codegen_compiles;
#[cfg(feature = "library")]
mod conformance;
#[cfg(feature = "testing")]
mod conversation_snapshots;
#[cfg(feature = "library")]
mod exchange;
#[cfg(feature = "library")]
mod fixtures;
mod fuzz_regressions;
#[cfg(feature = "unstable-machinery")]
mod properties;
mod readme_setup;
#[cfg(all(feature = "hot-reload", feature = "unstable-machinery"))]
mod reload;
mod rerun;
#[cfg(feature = "unstable-machinery")]
mod scale;
#[cfg(feature = "testing")]
mod survivors;
#[cfg(all(feature = "samples", feature = "library"))]
mod typed;

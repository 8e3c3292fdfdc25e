//! The live prompts' integration tests in one binary: each module was a
//! `tests/<name>.rs` of its own, and each of those linked the live handle,
//! both stores' clients and the console again.

// `#[macro_use]`: `every_store!` is in scope in every module below.
#[macro_use]
mod support;

mod damaged;
mod fake_relay;
mod faults;
mod follow;
mod processes;
mod registration;
mod relay_follow;
mod snapshots;
mod sqlite_files;
mod stalls;
mod verdicts;
mod weights;

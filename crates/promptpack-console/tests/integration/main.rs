//! The console's integration tests in one binary: each module was a
//! `tests/<name>.rs` of its own, and each of those linked the console, its
//! server stack and the catalog again.
//!
//! `tests/browser.rs` stays a binary of its own (harness = false: its own
//! main drives one Chromium through the pages).

#[path = "../support/mod.rs"]
mod support;

mod api;
mod openapi;
mod pages;
mod pages_finish;
mod relay;
mod roles;
mod snippet_pages;
mod tools_pages;

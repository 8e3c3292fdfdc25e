//! The core's integration tests in one binary: each module was a
//! `tests/<name>.rs` of its own, each linking the core again.

mod error_display;
mod js_numbers;

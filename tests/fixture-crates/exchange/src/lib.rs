//! A crate whose prompts declare a `response` and `tools`: the response
//! struct, its nested types, the tools' args and the enum of calls come from
//! `build.rs` through promptpack. Undocumented public items are errors, as
//! the generated code must document all it makes public.
#![deny(missing_docs)]

promptpack::include_prompts!();

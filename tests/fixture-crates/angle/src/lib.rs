//! A crate whose prompts use `<<`/`>>` delimiters: `PromptId`, the vars
//! structs and `build_prompt` come from `build.rs` through promptpack.

promptpack::include_prompts!();

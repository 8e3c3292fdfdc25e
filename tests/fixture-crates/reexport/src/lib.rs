//! A crate that has promptpack only as `agent_framework::llm::prompts`:
//! `PromptId`, the vars structs and `build_prompt` come from `build.rs`,
//! generated for that path.

agent_framework::llm::prompts::include_prompts!();

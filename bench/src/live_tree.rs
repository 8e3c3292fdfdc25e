//! The 1,000 small prompts of the `live` section's start-up rows.
//!
//! Shared, through `#[path]`, by the build script (which writes them as a
//! template tree in `OUT_DIR/live_many/` and generates their typed code,
//! `OUT_DIR/live_many.rs`) and by the bench binary (which publishes the same
//! texts into a catalog), so it depends on nothing but `std`.

/// How many prompts.
pub const PROMPTS: usize = 1_000;

/// The id (template folder name) of prompt `i`.
pub fn id(i: usize) -> String {
    format!("live-{i:04}")
}

/// The `system.md` of prompt `i`: about 300 bytes, two text variables and
/// one flag.
pub fn system(i: usize) -> String {
    format!(
        "You are {{{{agentName}}}}, assistant number {i} of the fleet, working with \
         {{{{userName}}}}.\n\n\
         Answer briefly and precisely. Say what you checked and what you did not; when you \
         are unsure, say so.\n\
         {{{{#if verbose}}}}\nExplain each step before you take it.\n{{{{/if}}}}\n"
    )
}

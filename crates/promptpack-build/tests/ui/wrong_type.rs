include!("../../../../target/promptpack-ui/prompts.rs");

fn main() {
    // `allowEnding` is only a condition, so it is a bool, not text.
    let _ = build_prompt(
        PromptId::Director,
        DirectorVars { allow_ending: "yes", agent_roster: "Ada", transcript: "" },
    );
}

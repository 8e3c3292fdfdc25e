include!("../../../../target/promptpack-ui/prompts.rs");

fn main() {
    let _ = build_prompt(
        PromptId::Directr,
        DirectorVars { allow_ending: true, agent_roster: "Ada", transcript: "" },
    );
}

include!("../../../../target/promptpack-ui/drifted.rs");

fn main() {
    let _ = build_prompt(
        PromptId::Director,
        DirectorVars { allow_ending: true, agent_roster: "Ada", transcript: "" },
    );
}

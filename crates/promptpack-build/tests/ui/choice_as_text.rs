include!("../../../../target/promptpack-ui/prompts.rs");

fn main() {
    // A compared variable is its enum, not free text.
    let _ = build_prompt(
        PromptId::ClassroomAgent,
        ClassroomAgentVars { agent_name: "Ada", role: "teacher", topic: "tides" },
    );
}

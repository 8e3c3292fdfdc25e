include!("../../../../target/promptpack-ui/prompts.rs");

fn main() {
    // The prompt compares `role` with "teacher", "assistant" and "student"
    // only: another role has no variant to pass.
    let _ = build_prompt(
        PromptId::ClassroomAgent,
        ClassroomAgentVars { agent_name: "Ada", role: ClassroomAgentRole::Principal, topic: "tides" },
    );
}

include!("../../../../target/promptpack-ui/prompts.rs");

// A history is messages with their roles, never text that could hold one.
fn main() {
    let _ = build_prompt(
        PromptId::SupportChat,
        SupportChatVars {
            product_name: "Acme Cloud",
            show_examples: false,
            history: "user: hi",
            question: "Where is my order?",
        },
    );
}

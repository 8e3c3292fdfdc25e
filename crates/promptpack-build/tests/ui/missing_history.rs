include!("../../../../target/promptpack-ui/prompts.rs");

// A conversation's history is a field as any variable is: leaving it out
// does not compile.
fn main() {
    let _ = build_prompt(
        PromptId::SupportChat,
        SupportChatVars {
            product_name: "Acme Cloud",
            show_examples: false,
            question: "Where is my order?",
        },
    );
}

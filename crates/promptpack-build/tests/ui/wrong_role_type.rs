include!("../../../../target/promptpack-ui/prompts.rs");

use promptpack::Message;

// A role is one of promptpack's `Role`s, never a string that could be any.
fn main() {
    let history = [Message { role: "user", content: "Hi".into(), name: None, id: None }];
    let _ = build_prompt(
        PromptId::SupportChat,
        SupportChatVars {
            product_name: "Acme Cloud",
            show_examples: false,
            history: &history,
            question: "Where is my order?",
        },
    );
}

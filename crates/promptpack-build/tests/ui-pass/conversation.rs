include!("../../../../target/promptpack-ui/prompts.rs");

use promptpack::{Message, Role};

// A conversation's vars take the history as a slice of messages, from an
// array, a `Vec` or anything that derefs to one.
fn main() {
    let history = vec![
        Message::new(Role::User, "Hi"),
        Message::new(Role::Assistant, "Hello."),
    ];
    let vars = SupportChatVars {
        product_name: "Acme Cloud",
        show_examples: true,
        history: &history,
        question: "Where is my order?",
    };
    let _ = build_prompt(PromptId::SupportChat, vars);
    let _: Result<Vec<Message>, promptpack::Error> = vars.render_messages();
    let none = SupportChatVars { history: &[], ..vars };
    assert!(PromptId::SupportChat.is_conversation());
    let _ = none.build();
}

include!("../../../../target/promptpack-ui/contract.rs");

fn main() {
    let prompt = GreetVars { name: "Ada", nickname: None, formal: true }.build().expect("renders");
    assert_eq!(prompt.system, "Dear Ada.");
    assert_eq!(
        PromptId::Greet.description(),
        Some("Greets someone, declaring every variable it uses.")
    );
    assert_eq!(PromptId::Greet.metadata(), "{}");
    assert_eq!(PromptId::Greet.max_tokens(), None);
}

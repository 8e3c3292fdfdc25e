include!("../../../../target/promptpack-ui/contract.rs");

fn main() {
    // The prompt declares `name`, `nickname` and `formal`, and nothing else.
    let _ = GreetVars { name: "Ada", nickname: None, formal: true, title: "Dr." }.build();
}

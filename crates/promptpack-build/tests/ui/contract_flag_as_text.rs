include!("../../../../target/promptpack-ui/contract.rs");

fn main() {
    // `formal` is declared `kind: flag` in the front matter: a bool.
    let _ = GreetVars { name: "Ada", nickname: None, formal: "yes" }.build();
}

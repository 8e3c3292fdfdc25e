include!("../../../../target/promptpack-ui/contract.rs");

fn main() {
    // `nickname` is only printed, but declared `kind: optional`: an Option.
    let _ = GreetVars { name: "Ada", nickname: "Al", formal: true }.build();
}

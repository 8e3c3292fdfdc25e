//! Generated code that names promptpack only by the crate path it was
//! given: here a re-export at the crate's root.

pub use promptpack as runtime;

include!("../../../../target/promptpack-ui/reexported.rs");

fn main() {
    let prompt = DirectorVars { allow_ending: true, agent_roster: "Ada", transcript: "" }
        .build()
        .expect("renders");
    assert_eq!(prompt.id, PromptId::Director);
    let _: Result<PromptId, runtime::Error> = "director".parse();
}

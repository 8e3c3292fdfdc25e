//! A crate that has promptpack only through `agent_framework::llm::prompts`
//! builds its prompts through the crate-path setting and uses them as any
//! crate does: that it compiles at all shows the generated code names no
//! `::promptpack` (not a dependency of this crate).

use agent_framework::llm::prompts::{ErrorCode, Prompt, TypedVars, ValueRef, Vars};
use reexport_fixture::{HelloVars, PromptId, SupportPlan, SupportVars, build_prompt};

fn support(plan: SupportPlan) -> SupportVars<'static> {
    SupportVars {
        agent_name: "Ada",
        product: "Orbit",
        tone: "brief",
        nickname: Some("Sam"),
        urgent: true,
        plan,
        question: "Where is my order?",
    }
}

#[test]
fn the_build_script_generated_the_prompts() {
    assert_eq!(PromptId::ALL, [PromptId::Hello, PromptId::Support]);
    assert_eq!(
        PromptId::Support.variables(),
        [
            "agentName",
            "product",
            "tone",
            "nickname",
            "urgent",
            "plan",
            "question"
        ]
    );
    assert_eq!(SupportPlan::ALL, [SupportPlan::Pro, SupportPlan::Team]);
}

#[test]
fn typed_render_goes_through_the_reexport() {
    let prompt: Prompt<PromptId> =
        build_prompt(PromptId::Support, support(SupportPlan::Team)).expect("renders");
    assert_eq!(
        prompt.system,
        "You are Ada, answering for Orbit.\n\
         Be brief.\n\
         Call the customer Sam.\n\
         Answer first, explain after.\n\
         The customer's team shares one plan.\n"
    );
    assert_eq!(prompt.user.as_deref(), Some("Where is my order?"));
    assert_eq!(prompt.hash, SupportVars::HASH);

    let hello = HelloVars {}.build().expect("renders");
    assert_eq!((hello.system.as_str(), hello.user), ("Hello.", None));
}

#[test]
fn the_generated_code_renders_as_the_typed_api_does() {
    let values = |name: &str| match name {
        "agentName" => Some("Ada".to_string()),
        "product" => Some("Orbit".to_string()),
        "tone" => Some("brief".to_string()),
        "nickname" => Some("Sam".to_string()),
        "urgent" => Some("yes".to_string()),
        "plan" => Some("pro".to_string()),
        "question" => Some("Where is my order?".to_string()),
        _ => None,
    };
    let generated = PromptId::Support.render_generated(&values);
    let typed = support(SupportPlan::Pro).build().expect("renders");
    assert_eq!(generated.system, typed.system);
    assert_eq!(generated.user, typed.user);
}

#[test]
fn the_runtime_traits_and_errors_are_the_reexported_ones() {
    let vars = support(SupportPlan::Pro);
    assert_eq!(Vars::get(&vars, "plan"), Some(ValueRef::Str("pro")));
    assert_eq!(Vars::get(&vars, "urgent"), Some(ValueRef::Bool(true)));
    assert_eq!(<SupportVars<'_> as TypedVars>::ID, PromptId::Support);

    assert_eq!("team".parse::<SupportPlan>().ok(), Some(SupportPlan::Team));
    let error = "gold".parse::<SupportPlan>().expect_err("not a plan");
    assert_eq!(error.code(), ErrorCode::InvalidChoice);
    assert_eq!("hello".parse::<PromptId>().ok(), Some(PromptId::Hello));
    let error = "goodbye".parse::<PromptId>().expect_err("not a prompt");
    assert_eq!(error.code(), ErrorCode::UnknownPrompt);
}

//! Renders this crate's prompts through the code promptpack generated at
//! build time.

promptpack::include_prompts!();

fn main() -> Result<(), promptpack::Error> {
    let agent = build_prompt(
        PromptId::AgentSystem,
        AgentSystemVars { agent_name: "Ada", web_access: true },
    )?;
    println!("== {} (hash {})\n{}\n", agent.id, agent.hash, agent.system);

    let summary = SummarizeVars { audience: "executives", max_words: "120", document: "Q3 revenue grew 4%." }
        .build()?;
    println!("== {}\n{}\n-- user --\n{}", summary.id, summary.system, summary.user.unwrap_or_default());

    // A prompt that declares its tools and the shape of its answer: the
    // request's JSON comes from the build, and the model's answer (here, one
    // as models write them: a sentence, then a fenced block) reads into the
    // generated type.
    let triage = TriageVars { ticket: "Order 18 never arrived and I cannot work." }.build()?;
    let tools = PromptId::Triage.tools().map(promptpack::RequestJson::to_value);
    let format = PromptId::Triage.response_format().map(promptpack::RequestJson::to_value);
    println!("\n== {}\n{}", triage.id, triage.system);
    println!("-- tools: {}", tools.unwrap_or_default());
    println!("-- response format: {}", format.unwrap_or_default()["json_schema"]["name"]);
    let call = TriageTool::parse("lookup_order", r#"{"order": "18"}"#)?;
    let TriageTool::LookupOrder(args) = &call;
    println!("-- the model calls {}({})", call.name(), args.order);
    let answer = "Here is the triage:\n```json\n{\"category\": \"billing\", \"urgent\": true, \
                  \"summary\": \"Order 18 lost\", \"order\": \"18\"}\n```";
    let read = TriageResponse::parse(answer)?;
    println!(
        "-- answer: {} (urgent: {}) {:?}, order {:?}",
        read.category.as_str(),
        read.urgent,
        read.summary,
        read.order
    );
    let refused = TriageResponse::parse("{\"category\": \"refund\", \"urgent\": true}")
        .expect_err("refund is no category, and the summary is missing");
    println!("-- a wrong answer: {refused}");

    let ids: Vec<&str> = PromptId::ALL.iter().map(|id| id.as_str()).collect();
    println!("\nprompts: {}", ids.join(", "));
    Ok(())
}

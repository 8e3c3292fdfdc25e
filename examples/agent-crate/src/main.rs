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

    let ids: Vec<&str> = PromptId::ALL.iter().map(|id| id.as_str()).collect();
    println!("\nprompts: {}", ids.join(", "));
    Ok(())
}

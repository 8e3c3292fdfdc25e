promptpack::include_prompts!();

fn main() -> Result<(), promptpack::Error> {
    let prompt = build_prompt(PromptId::Greet, GreetVars { name: "Ada" })?;
    println!("{}", prompt.system);
    Ok(())
}

include!("../../../../target/promptpack-ui/keywords.rs");

fn main() {
    let vars = KwVars {
        r#type: "t",
        self_: "s",
        crate_: "c",
        r#match: "m",
        values: "v",
        vars: "w",
        r#async: true,
    };
    assert_eq!(vars.render_system().as_deref(), Ok("t s c m v w x"));
    let prompt = PromptId::Kw.render_generated(&|name| Some(name.to_string()));
    assert_eq!(prompt.system, "type self crate match values vars x");
}

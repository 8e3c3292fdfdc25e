include!("../../target/promptpack-ui/keywords.rs");

fn main() {
    let vars = KwVars { r#type: "t", self_: "s", crate_: "c", r#match: "m", r#async: true };
    let prompt = vars.render_system();
    assert_eq!(prompt, "t s c m x");
}

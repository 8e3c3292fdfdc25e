use std::collections::BTreeMap;
use std::path::Path;

fn main() -> Result<(), promptpack::Error> {
    // The prompts ship beside Cargo.toml; load them at run time.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts");
    let library = promptpack::Library::load(dir)?;
    let vars = BTreeMap::from([("name", "Ada")]);
    let prompt = library.build_prompt("greet", &vars)?;
    println!("{}", prompt.system);
    Ok(())
}

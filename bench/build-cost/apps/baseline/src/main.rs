use serde::Serialize;

#[derive(Serialize)]
struct Greeting<'a> {
    name: &'a str,
    count: u32,
}

#[derive(Debug, thiserror::Error)]
enum AppError {
    #[error("could not serialize: {0}")]
    Json(#[from] serde_json::Error),
}

fn main() -> Result<(), AppError> {
    let greeting = Greeting { name: "Ada", count: 1 };
    println!("{}", serde_json::to_string(&greeting)?);
    Ok(())
}

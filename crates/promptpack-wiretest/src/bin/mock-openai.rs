//! A local OpenAI-compatible chat-completions server for examples and
//! manual runs: prints its base URL (`http://127.0.0.1:PORT/v1`) on the
//! first line of stdout, then serves a script until stdin closes or a line
//! is read from it: the chat completions of the JSON array in the file named
//! by its argument, in order (the last one again after the others), or
//! without an argument the wire tests' script (a tool call of each of the
//! `orders` prompt's tools, then the final answer).
//!
//! ```text
//! mock-openai [SCRIPT.json]
//! ```

use promptpack_wiretest::server::{Script, Server};
use std::io::{BufRead, Write};

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    let script = match std::env::args_os().nth(1) {
        Some(path) => read_script(std::path::Path::new(&path))?,
        None => Script::tool_calls_then_answer(),
    };
    let server = Server::start(script).await?;
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{}", server.base_url())?;
    stdout.flush()?;
    drop(stdout);
    // Stdin is read on a blocking thread, so the server keeps serving.
    tokio::task::spawn_blocking(|| {
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line)
    })
    .await
    .map_err(std::io::Error::other)??;
    for request in server.received() {
        eprintln!("{} {}", request.path, request.body);
    }
    server.stop().await
}

/// The script in the file at `path`: a JSON array of chat-completion
/// bodies, at least one.
fn read_script(path: &std::path::Path) -> std::io::Result<Script> {
    let invalid = |why: String| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("{}: {why}", path.display()),
        )
    };
    let text = std::fs::read_to_string(path)?;
    let answers: Vec<serde_json::Value> = serde_json::from_str(&text)
        .map_err(|e| invalid(format!("not a JSON array of chat completions: {e}")))?;
    if answers.is_empty() {
        return Err(invalid("the script holds no chat completion".to_string()));
    }
    Ok(Script::new(answers))
}

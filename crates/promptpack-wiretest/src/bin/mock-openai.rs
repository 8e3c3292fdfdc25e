//! A local OpenAI-compatible chat-completions server for examples and
//! manual runs: prints its base URL (`http://127.0.0.1:PORT/v1`) on the
//! first line of stdout, then serves the wire tests' script (a tool call of
//! each of the `orders` prompt's tools, then the final answer, repeated)
//! until stdin closes or a line is read from it.

use promptpack_wiretest::server::{Script, Server};
use std::io::{BufRead, Write};

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    let server = Server::start(Script::tool_calls_then_answer()).await?;
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

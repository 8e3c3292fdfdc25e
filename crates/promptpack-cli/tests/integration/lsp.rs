//! `promptpack lsp`: the real binary spoken to over stdio, framed as an
//! editor frames JSON-RPC, with `check`'s token budgets.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use crate::support::BIN;

struct Server {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Server {
    fn start(dir: &std::path::Path) -> Server {
        let mut child = Command::new(BIN)
            .arg("lsp")
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("promptpack lsp starts");
        let input = child.stdin.take().expect("stdin");
        let output = BufReader::new(child.stdout.take().expect("stdout"));
        Server {
            child,
            input,
            output,
        }
    }

    fn frame(&mut self, body: &[u8]) {
        write!(self.input, "Content-Length: {}\r\n\r\n", body.len()).expect("the server reads");
        self.input.write_all(body).expect("the server reads");
        self.input.flush().expect("the server reads");
    }

    fn send(&mut self, message: Value) {
        self.frame(message.to_string().as_bytes());
    }

    /// The next message the server writes. Reading blocks: a server that
    /// stops answering shows as a test that never ends, which the test
    /// runner's own limit reports.
    fn receive(&mut self) -> Value {
        let mut length = 0;
        loop {
            let mut line = String::new();
            self.output.read_line(&mut line).expect("a header line");
            assert!(!line.is_empty(), "the server closed its output");
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some(value) = line.strip_prefix("Content-Length: ") {
                length = value.parse().expect("a length");
            }
        }
        let mut body = vec![0; length];
        self.output.read_exact(&mut body).expect("a body");
        serde_json::from_slice(&body).expect("JSON")
    }

    /// The answer to request `id`, skipping notifications.
    fn answer(&mut self, id: i64) -> Value {
        loop {
            let message = self.receive();
            if message["id"] == id && message.get("method").is_none() {
                return message;
            }
        }
    }
}

const TEMPLATE: &str = "---\nmax_tokens: 3\nvars:\n  name: Who is greeted.\n---\nHello {{name}}, welcome to a prompt longer than three tokens.\n";

#[test]
fn the_binary_serves_checks_with_budgets_over_stdio_and_survives_bad_frames() {
    let dir = tempfile::tempdir().expect("a folder");
    std::fs::create_dir_all(dir.path().join("templates/greet")).expect("a template folder");
    std::fs::write(dir.path().join("promptpack.toml"), "").expect("the settings");
    let file = dir.path().join("templates/greet/system.md");
    std::fs::write(&file, TEMPLATE).expect("a template");
    let mut server = Server::start(dir.path());

    // Not UTF-8: an error answer to its id, and the server goes on.
    server.frame(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":\"\xff\"}");
    let refused = server.answer(1);
    assert_eq!(refused["error"]["code"], -32700, "{refused}");

    let root = format!("file://{}", dir.path().join("templates").display());
    server.send(json!({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {"capabilities": {}, "rootUri": root}}));
    let init = server.answer(2);
    assert_eq!(init["result"]["serverInfo"]["name"], "promptpack", "{init}");
    server.send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));

    let uri = format!("file://{}", file.display());
    server.send(
        json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": TEMPLATE}}}),
    );
    server.send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "promptpack/diagnostics", "params": null}),
    );
    let shown = server.answer(3);
    let list = &shown["result"][&uri];
    assert_eq!(list[0]["code"], "over_budget", "{shown}");
    assert_eq!(list[0]["range"]["start"]["line"], 1, "at `max_tokens`");

    // The first line: the token range, counted as `promptpack list` does.
    server.send(
        json!({"jsonrpc": "2.0", "id": 4, "method": "textDocument/hover", "params": {
        "textDocument": {"uri": uri}, "position": {"line": 0, "character": 1}}}),
    );
    let hover = server.answer(4);
    let text = hover["result"]["contents"]["value"].as_str().unwrap_or("");
    assert!(
        text.contains("tokens 14 (o200k_base; max_tokens 3)"),
        "{hover}"
    );

    server.send(json!({"jsonrpc": "2.0", "id": 5, "method": "shutdown", "params": null}));
    assert_eq!(server.answer(5)["result"], Value::Null);
    server.send(json!({"jsonrpc": "2.0", "method": "exit", "params": null}));
    let status = server.child.wait().expect("the server ends");
    assert!(status.success(), "{status}");
}

//! The `lsp` section: the language server's keystroke latency and memory.
//!
//! A keystroke is a one-character `textDocument/didChange` in one open
//! template: a `=` typed before the `}}` of its first `{{#if name}}` (a
//! malformed condition, `invalid_condition`), then deleted again, so that
//! the file's diagnostics change on every edit. The clock runs from just
//! before the edit is sent until the `textDocument/publishDiagnostics` for
//! that file arrives. The server (`promptpack_lsp::run` with
//! `BuildChecker`) runs on a thread of this process over
//! `lsp_server::Connection::memory()`, and on the 1,000-prompt tree also as
//! a child `promptpack lsp --root DIR` over stdio (Content-Length framed
//! JSON-RPC) when that binary is found. Every template is open in the
//! editor. The peer is the direct check, `promptpack_build::check_sources`
//! on the same sources (read once with `read_sources`; each run checks a
//! clone made before the clock starts, with the same edit toggled). The
//! server checks again only the prompt edited and adds up the parts it
//! kept, so the ratio is what that saves, less what it adds: its overlay
//! of the open buffers, the whole tree's lints, the diff against what it
//! published, and the messages.

use crate::harness::{err, escape_cell, measure_memory, summary};
use crate::synthetic::{Scratch, write_synthetic};
use crate::workload::corpus_dir;
use lsp_server::{Connection, Message, Notification, Request, RequestId, Response};
use promptpack_build::Config;
use promptpack_core::source_file::SourceFile;
use promptpack_lsp::{BuildChecker, DIAGNOSTICS_METHOD, Options};
use serde_json::{Value, json};
use std::hint::black_box;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Prompts in the synthetic tree.
const PROMPTS: usize = 1_000;
/// Only a hung server waits this long.
const HANG_GUARD: Duration = Duration::from_secs(60);
/// Untimed keystrokes before the timed ones.
const WARM_UP: usize = 4;

// ---------------------------------------------------------------------------
// Transports.

/// How messages reach the server and come back.
trait Wire {
    fn send(&mut self, message: Message) -> Result<(), String>;
    fn recv(&mut self) -> Result<Message, String>;
    /// Waits for the server to end, after `exit`.
    fn finish(&mut self) -> Result<(), String>;
    /// The server's process id, when it is a process of its own.
    fn pid(&self) -> Option<u32> {
        None
    }
}

/// The server on a thread of this process, over `Connection::memory()`.
struct InProcess {
    connection: Connection,
    server: Option<JoinHandle<std::io::Result<()>>>,
}

impl InProcess {
    fn start(root: &Path) -> InProcess {
        let (server_side, connection) = Connection::memory();
        let options = Options {
            root: Some(root.to_path_buf()),
        };
        let server =
            std::thread::spawn(move || promptpack_lsp::run(&server_side, options, &BuildChecker));
        InProcess {
            connection,
            server: Some(server),
        }
    }
}

impl Wire for InProcess {
    fn send(&mut self, message: Message) -> Result<(), String> {
        self.connection.sender.send(message).map_err(err)
    }
    fn recv(&mut self) -> Result<Message, String> {
        self.connection
            .receiver
            .recv_timeout(HANG_GUARD)
            .map_err(|e| format!("no message from the server: {e}"))
    }
    fn finish(&mut self) -> Result<(), String> {
        match self.server.take() {
            Some(server) => match server.join() {
                Ok(served) => served.map_err(err),
                Err(_) => Err("the server panicked".into()),
            },
            None => Ok(()),
        }
    }
}

/// The server as a child process over stdio: a thread reads its framed
/// messages into a channel.
struct ChildServer {
    child: Child,
    stdin: Option<ChildStdin>,
    received: mpsc::Receiver<Message>,
    reader: Option<JoinHandle<()>>,
}

impl ChildServer {
    fn start(binary: &Path, root: &Path) -> Result<ChildServer, String> {
        let mut child = Command::new(binary)
            .arg("lsp")
            .arg("--root")
            .arg(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("{}: {e}", binary.display()))?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let (sender, received) = mpsc::channel();
        let reader = std::thread::spawn(move || {
            let mut stdout = BufReader::new(stdout);
            while let Ok(Some(message)) = Message::read(&mut stdout) {
                if sender.send(message).is_err() {
                    break;
                }
            }
        });
        Ok(ChildServer {
            child,
            stdin,
            received,
            reader: Some(reader),
        })
    }
}

impl Wire for ChildServer {
    fn send(&mut self, message: Message) -> Result<(), String> {
        let stdin = self.stdin.as_mut().ok_or("stdin closed")?;
        message.write(stdin).map_err(err)
    }
    fn recv(&mut self) -> Result<Message, String> {
        self.received
            .recv_timeout(HANG_GUARD)
            .map_err(|e| format!("no message from the server: {e}"))
    }
    fn finish(&mut self) -> Result<(), String> {
        drop(self.stdin.take());
        let status = self.child.wait().map_err(err)?;
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
        if status.success() {
            Ok(())
        } else {
            Err(format!("`promptpack lsp` ended with {status}"))
        }
    }
    fn pid(&self) -> Option<u32> {
        Some(self.child.id())
    }
}

impl Drop for ChildServer {
    fn drop(&mut self) {
        // A run that failed half-way: do not leave the child behind.
        if self.stdin.is_some() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

// ---------------------------------------------------------------------------
// The editor's side.

/// `path` as a `file://` URI (the bench's folders need no escapes but
/// spaces).
fn uri(path: &Path) -> String {
    format!("file://{}", path.display()).replace(' ', "%20")
}

/// Every template file under `root/templates`, sorted.
fn templates(root: &Path) -> Result<Vec<PathBuf>, String> {
    let dir = root.join("templates");
    let mut folders: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    folders.sort();
    Ok(folders
        .iter()
        .flat_map(|f| [f.join("system.md"), f.join("user.md")])
        .filter(|p| p.is_file())
        .collect())
}

/// The edited template: its path, the prompt id, and the (line, UTF-16
/// column) of the `}}` of its first `{{#if …}}`, where the `=` goes.
struct Target {
    path: PathBuf,
    id: String,
    text: String,
    line: u32,
    column: u32,
    /// Byte offset of the insertion.
    at: usize,
}

impl Target {
    fn find(files: &[PathBuf]) -> Result<Target, String> {
        for path in files.iter().filter(|p| p.ends_with("system.md")) {
            let text = std::fs::read_to_string(path).map_err(err)?;
            let Some(open) = text.find("{{#if ") else {
                continue;
            };
            let Some(close) = text[open..].find("}}") else {
                continue;
            };
            let at = open + close;
            let line_start = text[..at].rfind('\n').map_or(0, |n| n + 1);
            let id = path
                .parent()
                .and_then(Path::file_name)
                .and_then(|n| n.to_str())
                .ok_or("a template folder")?
                .to_string();
            return Ok(Target {
                path: path.clone(),
                id,
                line: text[..at].matches('\n').count() as u32,
                column: text[line_start..at].encode_utf16().count() as u32,
                at,
                text,
            });
        }
        Err("no system.md with a `{{#if …}}` to edit".into())
    }

    fn broken(&self) -> String {
        let mut text = self.text.clone();
        text.insert(self.at, '=');
        text
    }
}

struct Session {
    wire: Box<dyn Wire>,
    next_id: i32,
    version: i32,
}

impl Session {
    fn new(wire: Box<dyn Wire>) -> Session {
        Session {
            wire,
            next_id: 0,
            version: 1,
        }
    }

    fn notify(&mut self, method: &str, params: Value) -> Result<(), String> {
        self.wire
            .send(Notification::new(method.to_string(), params).into())
    }

    /// Sends a request and waits for its answer, passing over what comes
    /// first.
    fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        self.next_id += 1;
        let id = RequestId::from(self.next_id);
        self.wire
            .send(Request::new(id.clone(), method.to_string(), params).into())?;
        loop {
            match self.wire.recv()? {
                Message::Response(Response {
                    id: got,
                    result,
                    error,
                }) if got == id => {
                    return match error {
                        Some(e) => Err(format!("`{method}`: {}", e.message)),
                        None => Ok(result.unwrap_or(Value::Null)),
                    };
                }
                _ => {}
            }
        }
    }

    /// The handshake, every template opened, and the first check done:
    /// seconds from `initialize` to the answer of the check.
    fn open(&mut self, root: &Path, files: &[PathBuf]) -> Result<f64, String> {
        let start = Instant::now();
        self.request(
            "initialize",
            json!({"capabilities": {}, "rootUri": uri(root)}),
        )?;
        self.notify("initialized", json!({}))?;
        for path in files {
            let text = std::fs::read_to_string(path).map_err(err)?;
            self.notify(
                "textDocument/didOpen",
                json!({"textDocument": {"uri": uri(path), "languageId": "markdown", "version": 1, "text": text}}),
            )?;
        }
        self.request(DIAGNOSTICS_METHOD, Value::Null)?;
        Ok(start.elapsed().as_secs_f64())
    }

    /// Keystroke `n` (the `=` typed when even, deleted when odd): seconds
    /// until the file's diagnostics are published; checks that they say
    /// what the edit did.
    fn keystroke(&mut self, target: &Target, n: usize) -> Result<f64, String> {
        let typed = n.is_multiple_of(2);
        let (line, column) = (target.line, target.column);
        let end = if typed { column } else { column + 1 };
        let text = if typed { "=" } else { "" };
        self.version += 1;
        let address = uri(&target.path);
        let params = json!({
            "textDocument": {"uri": address, "version": self.version},
            "contentChanges": [{
                "range": {"start": {"line": line, "character": column}, "end": {"line": line, "character": end}},
                "text": text,
            }],
        });
        let start = Instant::now();
        self.notify("textDocument/didChange", params)?;
        loop {
            let Message::Notification(note) = self.wire.recv()? else {
                continue;
            };
            if note.method != "textDocument/publishDiagnostics" || note.params["uri"] != address {
                continue;
            }
            let took = start.elapsed().as_secs_f64();
            let flagged = note.params["diagnostics"]
                .as_array()
                .is_some_and(|list| list.iter().any(|d| d["code"] == "invalid_condition"));
            if flagged != typed {
                return Err(format!(
                    "keystroke {n}: `invalid_condition` shown {flagged}, expected {typed}"
                ));
            }
            return Ok(took);
        }
    }

    /// `count` timed keystrokes after a few untimed ones, in seconds.
    fn keystrokes(&mut self, target: &Target, count: usize) -> Result<Vec<f64>, String> {
        let mut samples = Vec::with_capacity(count);
        for n in 0..WARM_UP + count {
            let took = self.keystroke(target, n)?;
            if n >= WARM_UP {
                samples.push(took);
            }
        }
        Ok(samples)
    }

    fn finish(mut self) -> Result<(), String> {
        self.request("shutdown", Value::Null)?;
        self.notify("exit", Value::Null)?;
        self.wire.finish()
    }
}

// ---------------------------------------------------------------------------
// The direct check.

/// Seconds of `read_sources` (once), and of `count` runs of
/// `check_sources` on a clone of the sources, the edit toggled as the
/// keystrokes toggle it.
fn direct(root: &Path, target: &Target, count: usize) -> Result<(f64, Vec<f64>), String> {
    let config = Config::new(root).into_absolute();
    let start = Instant::now();
    let (clean, _) = promptpack_load::read_sources(&config);
    let read = start.elapsed().as_secs_f64();
    let mut broken = clean.clone();
    let template = broken
        .templates
        .iter_mut()
        .find(|t| t.id == target.id)
        .ok_or_else(|| format!("`{}` not among the sources", target.id))?;
    template.system = SourceFile::new(template.system.path().to_string(), target.broken());
    let flagged = |sources: &promptpack_core::sources::Sources| {
        promptpack_build::check_sources(sources.clone(), &config)
            .errors
            .iter()
            .any(|d| d.code.as_str() == "invalid_condition")
    };
    if flagged(&clean) || !flagged(&broken) {
        return Err("the direct check does not see the edit".into());
    }
    let mut samples = Vec::with_capacity(count);
    for n in 0..WARM_UP + count {
        let sources = if n.is_multiple_of(2) { &broken } else { &clean }.clone();
        let start = Instant::now();
        black_box(promptpack_build::check_sources(sources, &config));
        if n >= WARM_UP {
            samples.push(start.elapsed().as_secs_f64());
        }
    }
    Ok((read, samples))
}

// ---------------------------------------------------------------------------
// The section.

/// `promptpack` built in release: `PROMPTPACK_BIN`, else
/// `$CARGO_TARGET_DIR/release/promptpack`, else the repository's
/// `target/release/promptpack`.
fn promptpack_binary() -> Option<PathBuf> {
    if let Some(bin) = std::env::var_os("PROMPTPACK_BIN") {
        return Some(PathBuf::from(bin));
    }
    let mut candidates = Vec::new();
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        candidates.push(PathBuf::from(dir).join("release/promptpack"));
    }
    candidates.push(PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../target/release/promptpack"
    )));
    candidates.into_iter().find(|p| p.is_file())
}

/// `VmRSS` and `VmHWM` of process `pid`, in bytes.
fn rss(pid: u32) -> Option<(u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = status.lines().find(|l| l.starts_with(name))?;
        let kb: u64 = line[name.len()..]
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()?;
        Some(kb * 1024)
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

fn ms(seconds: f64) -> String {
    format!("{:.2}", seconds * 1e3)
}

fn mb(bytes: f64) -> String {
    format!("{:.1} MB", bytes / 1e6)
}

/// One table row: the keystrokes beside the direct check.
fn row(
    tree: &str,
    transport: &str,
    prompts: usize,
    keys: &mut [f64],
    direct: &mut [f64],
) -> String {
    let (mid, p95) = summary(keys);
    let (direct_mid, _) = summary(direct);
    format!(
        "| {tree} | {transport} | {prompts} | {} | {} | {} | {} | {:.2}× |\n",
        keys.len(),
        ms(mid),
        ms(p95),
        ms(direct_mid),
        mid / direct_mid
    )
}

fn failed(tree: &str, transport: &str, e: &str) -> String {
    format!(
        "| {tree} | {transport} | | | FAILED: {} | | | |\n",
        escape_cell(e)
    )
}

/// The template files of `root`, the prompts among them, and the edit.
fn tree(root: &Path) -> Result<(Vec<PathBuf>, usize, Target), String> {
    let files = templates(root)?;
    let prompts = files.iter().filter(|p| p.ends_with("system.md")).count();
    let target = Target::find(&files)?;
    Ok((files, prompts, target))
}

/// The section's Markdown.
pub fn section(quick: bool) -> String {
    let count = if quick { 10 } else { 30 };
    let mut out = format!(
        "## Language server: keystroke → diagnostics\n\n\
         Each keystroke is a one-character `didChange` in one open template (a `=` typed before \
         the `}}}}` of its first `{{{{#if …}}}}`, then deleted: the file's diagnostics change \
         every time), timed until its `publishDiagnostics` arrives; {count} keystrokes after \
         {WARM_UP} untimed, every template of the tree open. `memory`: `promptpack_lsp::run` \
         with `BuildChecker` on a thread over `Connection::memory()`; `stdio`: a child \
         `promptpack lsp --root DIR` (release build, `check`'s checker with token budgets) over \
         Content-Length framed JSON-RPC. The peer: `promptpack_build::check_sources` on the same \
         sources with the same edit, a clone made before the clock starts.\n\n\
         | tree | transport | prompts | keystrokes | median ms | p95 ms | direct check median ms | ratio |\n\
         |---|---|--:|--:|--:|--:|--:|--:|\n"
    );
    let mut notes = Vec::new();
    let mut memory = String::new();

    // (a) The conformance tree, read in place (the server writes nothing).
    let corpus = corpus_dir();
    match corpus.canonicalize() {
        Err(_) => out.push_str(&failed(
            "OpenMAIC",
            "memory",
            "corpus folder not found (set PROMPTPACK_CONFORMANCE_DIR)",
        )),
        Ok(root) => {
            let result = (|| -> Result<String, String> {
                let (files, prompts, target) = tree(&root)?;
                let mut session = Session::new(Box::new(InProcess::start(&root)));
                let first = session.open(&root, &files)?;
                let mut keys = session.keystrokes(&target, count)?;
                session.finish()?;
                let (read, mut direct) = direct(&root, &target, count)?;
                notes.push(format!(
                    "OpenMAIC: {} template files, `{}` edited; `read_sources` once: {} ms; \
                     first check (`initialize`, every `didOpen`, the whole tree and each \
                     prompt alone): {} ms",
                    files.len(),
                    target.id,
                    ms(read),
                    ms(first)
                ));
                Ok(row("OpenMAIC", "memory", prompts, &mut keys, &mut direct))
            })();
            out.push_str(&result.unwrap_or_else(|e| failed("OpenMAIC", "memory", &e)));
        }
    }

    // (b) and (c): the synthetic tree, in a temporary folder.
    let scratch = Scratch::new("lsp");
    let synthetic = format!("synthetic ({PROMPTS})");
    let result = (|| -> Result<(), String> {
        let bytes = write_synthetic(&scratch.0, PROMPTS).map_err(err)?;
        let root = scratch.0.canonicalize().map_err(err)?;
        let (files, prompts, target) = tree(&root)?;
        let (read, mut direct) = direct(&root, &target, count)?;
        notes.push(format!(
            "synthetic: {prompts} prompts of about 5 KB ({} of template and snippet text), \
             `{}` edited; `read_sources` once: {} ms",
            mb(bytes as f64),
            target.id,
            ms(read)
        ));

        // In this process: the memory first, then the keystrokes.
        let (session, peak, live) = measure_memory(|| {
            let mut session = Session::new(Box::new(InProcess::start(&root)));
            session.open(&root, &files).map(|_| session)
        });
        let mut session = session?;
        memory.push_str(&format!(
            "| held by the server, in this process | {} | counting allocator: live bytes after \
             `initialize`, {} `didOpen`s and the first check, minus before (the open buffers, \
             the tree as read, what was published) |\n\
             | peak live heap during that | {} | same counter |\n",
            mb(live as f64),
            files.len(),
            mb(peak as f64)
        ));
        match session.keystrokes(&target, count) {
            Ok(mut keys) => {
                out.push_str(&row(&synthetic, "memory", prompts, &mut keys, &mut direct));
            }
            Err(e) => out.push_str(&failed(&synthetic, "memory", &e)),
        }
        session.finish()?;

        // A child `promptpack lsp` over stdio.
        let Some(binary) = promptpack_binary() else {
            out.push_str(&failed(
                &synthetic,
                "stdio",
                "skipped: no release `promptpack` (build it with `cargo build --release -p \
                 promptpack-cli --features full`, or set PROMPTPACK_BIN)",
            ));
            return Ok(());
        };
        let result = (|| -> Result<String, String> {
            let wire = ChildServer::start(&binary, &root)?;
            let pid = wire.pid();
            let mut session = Session::new(Box::new(wire));
            let first = session.open(&root, &files)?;
            notes.push(format!(
                "stdio at {PROMPTS} prompts: first check (`initialize`, every `didOpen`, the \
                 whole tree and each prompt alone): {} ms",
                ms(first)
            ));
            if let Some((now, high)) = pid.and_then(rss) {
                memory.push_str(&format!(
                    "| `promptpack lsp` resident set | {} | `VmRSS` of the child after \
                     `initialize`, {} `didOpen`s and the first check (peak `VmHWM`: {}) |\n",
                    mb(now as f64),
                    files.len(),
                    mb(high as f64)
                ));
            }
            let mut keys = session.keystrokes(&target, count)?;
            session.finish()?;
            Ok(row(&synthetic, "stdio", prompts, &mut keys, &mut direct))
        })();
        out.push_str(&result.unwrap_or_else(|e| failed(&synthetic, "stdio", &e)));
        notes.push(format!("`promptpack`: `{}`", binary.display()));
        Ok(())
    })();
    if let Err(e) = result {
        out.push_str(&failed(&synthetic, "memory", &e));
    }
    for note in notes {
        out.push_str(&format!("\n{note}."));
    }
    out.push('\n');
    if !memory.is_empty() {
        out.push_str(&format!(
            "\n### Language server: memory at {PROMPTS} prompts, every template open\n\n\
             | measure | result | notes |\n|---|--:|---|\n{memory}"
        ));
    }
    out
}

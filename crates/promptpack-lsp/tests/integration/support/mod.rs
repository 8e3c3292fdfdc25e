//! An editor for the tests: drives the server over JSON-RPC messages as an
//! editor does (initialize, didOpen, didChange, requests, shutdown), on a
//! copy of a fixture tree in a temporary folder.

use lsp_server::{Connection, Message, Notification, Request, RequestId, Response};
use promptpack_lsp::{BuildChecker, Checker, DIAGNOSTICS_METHOD, Options};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::thread::JoinHandle;

/// One diagnostic as the tests compare them: file (relative to the root),
/// 1-based line and column, code, message (without its help line).
pub type Shown = (String, u32, u32, String, String);

pub struct Editor {
    connection: Connection,
    server: Option<JoinHandle<std::io::Result<()>>>,
    next_id: i32,
    /// Notifications seen, in order.
    pub notifications: Vec<Notification>,
    /// Buffers opened, with their versions.
    versions: BTreeMap<String, i32>,
    pub root: PathBuf,
    _dir: tempfile::TempDir,
}

/// A copy of `tests/fixtures/<name>` in a temporary folder.
pub fn fixture(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let from = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    copy_tree(&from, dir.path());
    let root = dir.path().canonicalize().expect("the folder exists");
    (dir, root)
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).expect("the fixture exists") {
        let entry = entry.expect("a fixture entry");
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            std::fs::create_dir_all(&target).expect("a folder");
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("a copy");
        }
    }
}

impl Editor {
    /// A server on a copy of fixture `name`, found from the workspace
    /// folder (a subfolder of the root, as an editor opened on `templates/`
    /// sends), with the build's checker.
    pub fn start(name: &str) -> Editor {
        Editor::start_with(name, Box::new(BuildChecker))
    }

    pub fn start_with(name: &str, checker: Box<dyn Checker + Send>) -> Editor {
        Editor::start_in(name, checker, Some("templates"))
    }

    /// A server on a copy of fixture `name`, the editor's workspace folder
    /// `folder` of it, or (`None`) a folder outside it holding no prompts.
    pub fn start_in(name: &str, checker: Box<dyn Checker + Send>, folder: Option<&str>) -> Editor {
        let (dir, root) = fixture(name);
        let (server_side, connection) = Connection::memory();
        let server = std::thread::spawn(move || {
            promptpack_lsp::run(&server_side, Options::default(), &*checker)
        });
        let mut editor = Editor {
            connection,
            server: Some(server),
            next_id: 0,
            notifications: Vec::new(),
            versions: BTreeMap::new(),
            root,
            _dir: dir,
        };
        let elsewhere = std::env::temp_dir();
        let folder = match folder {
            Some(folder) => editor.uri(folder),
            None => format!("file://{}", elsewhere.display()),
        };
        let answer = editor.request(
            "initialize",
            json!({"capabilities": {}, "workspaceFolders": [{"uri": folder, "name": "templates"}]}),
        );
        assert!(answer.is_ok(), "initialize: {answer:?}");
        editor.notify("initialized", json!({}));
        editor
    }

    pub fn uri(&self, relative: &str) -> String {
        let path = self.root.join(relative);
        format!("file://{}", path.display()).replace(' ', "%20")
    }

    pub fn relative(&self, uri: &str) -> String {
        let prefix = format!("file://{}/", self.root.display());
        uri.strip_prefix(&prefix).unwrap_or(uri).to_string()
    }

    pub fn send(&self, message: Message) {
        self.connection
            .sender
            .send(message)
            .expect("the server listens");
    }

    pub fn notify(&self, method: &str, params: Value) {
        self.send(Notification::new(method.to_string(), params).into());
    }

    /// Sends a request and waits for its answer: the result, or the error
    /// object. Notifications that come first are kept.
    pub fn request(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        self.next_id += 1;
        let id = RequestId::from(self.next_id);
        self.send(Request::new(id.clone(), method.to_string(), params).into());
        self.answer(&id)
    }

    pub fn answer(&mut self, id: &RequestId) -> Result<Value, Value> {
        loop {
            match self.receive() {
                Message::Response(Response {
                    id: got,
                    result,
                    error,
                }) if got == *id => {
                    return match error {
                        Some(e) => Err(serde_json::to_value(e).expect("an error object")),
                        None => Ok(result.unwrap_or(Value::Null)),
                    };
                }
                Message::Notification(n) => self.notifications.push(n),
                other => panic!("unexpected message {other:?}"),
            }
        }
    }

    fn receive(&self) -> Message {
        self.connection
            .receiver
            .recv()
            .expect("the server answers (no deadline: it ended)")
    }

    pub fn open(&mut self, relative: &str) {
        let text = std::fs::read_to_string(self.root.join(relative)).expect("a fixture file");
        self.open_text(relative, &text);
    }

    pub fn open_text(&mut self, relative: &str, text: &str) {
        self.versions.insert(relative.to_string(), 1);
        let uri = self.uri(relative);
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": text}}),
        );
    }

    /// Replaces lines `from..to` (0-based, `to` exclusive) with `text`.
    pub fn edit(&mut self, relative: &str, start: (u32, u32), end: (u32, u32), text: &str) {
        let version = self.versions.entry(relative.to_string()).or_insert(1);
        *version += 1;
        let version = *version;
        let uri = self.uri(relative);
        self.notify(
            "textDocument/didChange",
            json!({
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{
                    "range": {"start": {"line": start.0, "character": start.1}, "end": {"line": end.0, "character": end.1}},
                    "text": text,
                }],
            }),
        );
    }

    /// Replaces the whole text of a buffer.
    pub fn replace(&mut self, relative: &str, text: &str) {
        let uri = self.uri(relative);
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": 99}, "contentChanges": [{"text": text}]}),
        );
    }

    /// What the server shows once it has checked everything sent so far,
    /// by file; asserts that what it published says the same.
    pub fn diagnostics(&mut self) -> BTreeMap<String, Vec<Value>> {
        let answer = self
            .request(DIAGNOSTICS_METHOD, json!(null))
            .expect("the diagnostics");
        let answered: BTreeMap<String, Vec<Value>> =
            serde_json::from_value(answer).expect("a map of files to diagnostics");
        let mut published: BTreeMap<String, Vec<Value>> = BTreeMap::new();
        for n in &self.notifications {
            if n.method == "textDocument/publishDiagnostics" {
                let uri = n.params["uri"].as_str().expect("a uri").to_string();
                let list = n.params["diagnostics"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                if list.is_empty() {
                    published.remove(&uri);
                } else {
                    published.insert(uri, list);
                }
            }
        }
        assert_eq!(
            published, answered,
            "what was published is what the server shows"
        );
        answered
            .into_iter()
            .map(|(uri, list)| (self.relative(&uri), list))
            .collect()
    }

    /// [`Editor::diagnostics`], shown as the tests compare them, sorted.
    pub fn shown(&mut self) -> Vec<Shown> {
        let mut shown: Vec<Shown> = self
            .diagnostics()
            .into_iter()
            .flat_map(|(file, list)| {
                list.into_iter().map(move |d| {
                    let message = d["message"].as_str().unwrap_or("");
                    let message = message.split("\nhelp: ").next().unwrap_or("").to_string();
                    (
                        file.clone(),
                        d["range"]["start"]["line"].as_u64().unwrap_or(0) as u32 + 1,
                        d["range"]["start"]["character"].as_u64().unwrap_or(0) as u32 + 1,
                        d["code"].as_str().unwrap_or("").to_string(),
                        message,
                    )
                })
            })
            .collect();
        shown.sort();
        shown
    }

    /// Whether the server never said that the prompts it checked one by one
    /// did not add up to the whole check (it then checks the whole tree on
    /// every edit: right, but not what it is built to do).
    pub fn parts_added_up(&self) -> bool {
        !self.notifications.iter().any(|n| {
            n.params["message"]
                .as_str()
                .is_some_and(|m| m.contains("did not add up"))
        })
    }

    /// A request at a position of a file.
    pub fn at(
        &mut self,
        method: &str,
        relative: &str,
        line: u32,
        character: u32,
        extra: Value,
    ) -> Result<Value, Value> {
        let mut params = json!({
            "textDocument": {"uri": self.uri(relative)},
            "position": {"line": line, "character": character},
        });
        if let (Some(target), Value::Object(more)) = (params.as_object_mut(), extra) {
            target.extend(more);
        }
        self.request(method, params)
    }

    /// Shuts the server down as an editor does, and waits for it to end.
    pub fn shutdown(mut self) {
        let answer = self.request("shutdown", json!(null));
        assert_eq!(answer, Ok(Value::Null));
        self.notify("exit", json!(null));
        let served = self
            .server
            .take()
            .expect("the server thread")
            .join()
            .expect("the server did not panic");
        assert!(served.is_ok(), "the server ended cleanly: {served:?}");
    }
}

/// What `promptpack check` says of the tree at `root` (as it is on disk),
/// shown as the tests compare them, sorted.
pub fn check_on_disk(root: &Path) -> Vec<Shown> {
    let mut shown = Vec::new();
    let config = match promptpack_load::Config::load(root) {
        Ok(config) => config,
        Err(e) => {
            let diagnostics = e.into_diagnostics();
            return diagnostics.iter().map(|d| show(d, root)).collect();
        }
    };
    let report = promptpack_build::check(&config);
    for d in report.errors.iter().chain(&report.warnings) {
        let entry = show(d, root);
        if !shown.contains(&entry) {
            shown.push(entry);
        }
    }
    shown.sort();
    shown
}

fn show(d: &promptpack_build::Diagnostic, root: &Path) -> Shown {
    let (file, line, column) = match &d.location {
        Some(l) => {
            let path = l.path();
            let path = Path::new(path)
                .strip_prefix(root)
                .map_or(path.to_string(), |p| p.display().to_string());
            let whole = l.is_whole_file();
            // `check` counts columns in characters, the protocol in UTF-16
            // units: the same place, told in the editor's units.
            let units: usize = l
                .line_text()
                .chars()
                .take(l.column() - 1)
                .map(char::len_utf16)
                .sum();
            (
                path,
                if whole { 1 } else { l.line() as u32 },
                if whole { 1 } else { units as u32 + 1 },
            )
        }
        None => ("promptpack.toml".to_string(), 1, 1),
    };
    (
        file,
        line,
        column,
        d.code.as_str().to_string(),
        d.message.clone(),
    )
}

/// The text of the hover at a position of `file`, empty when there is none.
pub fn hover_text(editor: &mut Editor, file: &str, line: u32, character: u32) -> String {
    let answer = editor
        .at("textDocument/hover", file, line, character, json!({}))
        .expect("a hover");
    answer["contents"]["value"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

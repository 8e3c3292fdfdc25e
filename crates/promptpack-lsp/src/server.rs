//! The message loop: the handshake, then each message in the order it came.
//! Edits mark the tree changed; it is checked once the queue is empty, so a
//! burst of keystrokes costs one check, and only the files whose
//! diagnostics changed are published.

use crate::analysis::Tree;
use crate::checker::{Checker, Findings};
use crate::diagnostics::{ByFile, by_file, changes};
use crate::documents::Documents;
use crate::features::{self, At};
use crate::incremental::Incremental;
use crate::transport;
use crate::uri;
use crate::workspace::Workspace;
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidChangeWatchedFiles, DidCloseTextDocument, DidOpenTextDocument,
    DidSaveTextDocument, LogMessage, Notification as _, PublishDiagnostics, ShowMessage,
};
use lsp_types::request::{
    CodeActionRequest, Completion, GotoDefinition, HoverRequest, PrepareRenameRequest, References,
    Rename, Request as _,
};
use lsp_types::{
    CodeActionOptions, CodeActionParams, CodeActionProviderCapability, CompletionOptions,
    CompletionParams, GotoDefinitionParams, HoverParams, HoverProviderCapability, InitializeParams,
    LogMessageParams, MessageType, OneOf, Position, PublishDiagnosticsParams, ReferenceParams,
    RenameOptions, RenameParams, SaveOptions, ServerCapabilities, ServerInfo, ShowMessageParams,
    TextDocumentPositionParams, TextDocumentSyncCapability, TextDocumentSyncKind,
    TextDocumentSyncOptions, TextDocumentSyncSaveOptions, Uri,
};
use promptpack_build::ErrorCode as Code;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

/// `promptpack/diagnostics`: checks the tree now (edits waiting or not) and
/// answers what the server has published, by file URI, after publishing
/// what changed. For tests and tools that need to know the check is done.
pub const DIAGNOSTICS_METHOD: &str = "promptpack/diagnostics";

/// How the server is started.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The prompt root; `None` finds it from the editor's workspace folder
    /// as the CLI finds it from the current folder.
    pub root: Option<PathBuf>,
}

/// Serves an editor over this process's stdin and stdout until it sends
/// `exit` or closes the stream.
///
/// # Errors
/// When the stream breaks (a header that is not one) or the handshake
/// fails: the editor is gone, there is no one left to answer.
pub fn run_stdio(options: Options, checker: &dyn Checker) -> std::io::Result<()> {
    let (connection, threads) = transport::stdio()?;
    let served = run(&connection, options, checker);
    drop(connection);
    let io = threads.join();
    served.and(io)
}

/// Serves an editor over `connection` (`Connection::memory()` in tests)
/// until `shutdown`, or until the editor hangs up.
///
/// # Errors
/// When the handshake fails: a message other than `initialize` came first
/// that was not a request to refuse, or the editor hung up.
pub fn run(
    connection: &Connection,
    options: Options,
    checker: &dyn Checker,
) -> std::io::Result<()> {
    let (id, params) = connection
        .initialize_start()
        .map_err(std::io::Error::other)?;
    let params: InitializeParams = serde_json::from_value(params).unwrap_or_default();
    let root = options.root.or_else(|| root_of(&params));
    let result = serde_json::json!({
        "capabilities": capabilities(),
        "serverInfo": ServerInfo {
            name: "promptpack".to_string(),
            version: Some(env!("CARGO_PKG_VERSION").to_string()),
        },
    });
    connection
        .initialize_finish(id, result)
        .map_err(std::io::Error::other)?;
    let mut server = Server {
        connection,
        checker,
        workspace: None,
        documents: Documents::default(),
        published: ByFile::new(),
        changed: true,
        incremental: Incremental::default(),
    };
    match root {
        Some(root) => server.serve_root(&root),
        None => server.log(
            MessageType::INFO,
            "no prompt root above the workspace folder: the first prompt file opened shows where it is".to_string(),
        ),
    }
    server.serve()
}

/// The prompt root for the editor's first workspace folder (or its root
/// URI), found above it as the CLI finds it from the current folder; `None`
/// when there is none.
#[allow(deprecated)] // `root_uri`: older editors send only that
fn root_of(params: &InitializeParams) -> Option<PathBuf> {
    let folder = params
        .workspace_folders
        .as_ref()
        .and_then(|folders| folders.first())
        .map(|f| f.uri.clone())
        .or_else(|| params.root_uri.clone())
        .and_then(|u| uri::to_path(u.as_str()))
        .or_else(|| std::env::current_dir().ok())?;
    root_above(&folder)
}

/// The prompt root above `dir`, as the CLI finds it.
fn root_above(dir: &Path) -> Option<PathBuf> {
    let up = promptpack_load::root_above(dir)?;
    dir.ancestors().nth(up).map(Path::to_path_buf)
}

fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Options(
            TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::INCREMENTAL),
                save: Some(TextDocumentSyncSaveOptions::SaveOptions(SaveOptions {
                    include_text: Some(false),
                })),
                ..TextDocumentSyncOptions::default()
            },
        )),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        definition_provider: Some(OneOf::Left(true)),
        references_provider: Some(OneOf::Left(true)),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some([":", "#", "{", "\"", " ", "<"].map(String::from).to_vec()),
            ..CompletionOptions::default()
        }),
        rename_provider: Some(OneOf::Right(RenameOptions {
            prepare_provider: Some(true),
            work_done_progress_options: Default::default(),
        })),
        code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
            code_action_kinds: Some(vec![lsp_types::CodeActionKind::QUICKFIX]),
            ..CodeActionOptions::default()
        })),
        ..ServerCapabilities::default()
    }
}

struct Server<'c> {
    connection: &'c Connection,
    checker: &'c dyn Checker,
    /// The prompt root served: `None` until one is found (a workspace
    /// folder outside any prompt root waits for a prompt file to open), and
    /// nothing is checked or answered meanwhile.
    workspace: Option<Workspace>,
    documents: Documents,
    /// What the editor shows now, by file.
    published: ByFile,
    /// Whether the tree changed since the last check.
    changed: bool,
    /// The parts of the last check, so that an edit re-checks only the
    /// prompts it can change.
    incremental: Incremental,
}

/// A request's failure: its code and message.
type Failure = (ErrorCode, String);

impl Server<'_> {
    fn serve(&mut self) -> std::io::Result<()> {
        self.check_if_idle();
        while let Ok(message) = self.connection.receiver.recv() {
            match message {
                Message::Request(request) => {
                    if self
                        .connection
                        .handle_shutdown(&request)
                        .map_err(std::io::Error::other)?
                    {
                        return Ok(());
                    }
                    let id = request.id.clone();
                    let method = request.method.clone();
                    let response = match catch_unwind(AssertUnwindSafe(|| self.request(request))) {
                        Ok(Ok(value)) => Response::new_ok(id, value),
                        Ok(Err((code, message))) => Response::new_err(id, code as i32, message),
                        Err(_) => Response::new_err(
                            id,
                            ErrorCode::InternalError as i32,
                            format!("the server failed on `{method}`: a bug, please report it"),
                        ),
                    };
                    self.send(response.into());
                }
                Message::Notification(notification) => {
                    let method = notification.method.clone();
                    if catch_unwind(AssertUnwindSafe(|| self.notification(notification))).is_err() {
                        self.log(
                            MessageType::ERROR,
                            format!("the server failed on `{method}`: a bug, please report it"),
                        );
                    }
                }
                Message::Response(_) => {}
            }
            self.check_if_idle();
        }
        Ok(())
    }

    fn send(&self, message: Message) {
        // A closed channel means the editor is gone: the loop ends on the
        // next receive.
        let _ = self.connection.sender.send(message);
    }

    fn notify<N: lsp_types::notification::Notification>(&self, params: N::Params)
    where
        N::Params: Serialize,
    {
        self.send(Notification::new(N::METHOD.to_string(), params).into());
    }

    fn log(&self, typ: MessageType, message: String) {
        self.notify::<LogMessage>(LogMessageParams { typ, message });
    }

    /// Checks the tree and publishes what changed, once no message waits.
    fn check_if_idle(&mut self) {
        if self.changed && self.connection.receiver.is_empty() {
            self.check_now();
        }
    }

    /// Checks the tree, if it changed, and publishes what changed.
    fn check_now(&mut self) {
        if !self.changed {
            return;
        }
        self.changed = false;
        let now = match catch_unwind(AssertUnwindSafe(|| self.diagnostics())) {
            Ok(now) => now,
            Err(_) => {
                self.log(
                    MessageType::ERROR,
                    "the check failed: a bug, please report it".to_string(),
                );
                return;
            }
        };
        for (uri, diagnostics) in changes(&self.published, &now) {
            self.notify::<PublishDiagnostics>(PublishDiagnosticsParams::new(
                uri,
                diagnostics,
                None,
            ));
        }
        self.published = now;
    }

    /// Serves the prompt root at `root` from now on.
    fn serve_root(&mut self, root: &Path) {
        self.workspace = Some(Workspace::new(root));
        self.incremental.reset();
        self.changed = true;
        self.log(
            MessageType::INFO,
            format!("serving the prompts of {}", root.display()),
        );
    }

    /// Everything `promptpack check` would say of the tree as the editor
    /// sees it, by file; nothing without a prompt root.
    fn diagnostics(&mut self) -> ByFile {
        let Some(workspace) = &mut self.workspace else {
            return ByFile::new();
        };
        let (overlaid, refused) = workspace.overlaid(&self.documents);
        let was_mismatched = self.incremental.mismatched();
        let checked = self
            .incremental
            .check(self.checker, workspace.config(), &overlaid.sources);
        let Findings {
            errors: found,
            mut warnings,
        } = checked.findings;
        let mut errors = workspace.config_errors().to_vec();
        errors.extend(overlaid.read_errors);
        errors.extend(refused);
        if !errors.is_empty() {
            // As `check`, which counts budgets only on a tree that loads.
            warnings.retain(|w| w.code != Code::OverBudget);
        }
        errors.extend(found);
        let shown = by_file(workspace, &errors, &warnings);
        let what = match &checked.prompts {
            None => "checked the whole tree".to_string(),
            Some(ids) => format!("checked again: {}", ids.join(", ")),
        };
        self.log(MessageType::LOG, what);
        if self.incremental.mismatched() && !was_mismatched {
            self.log(
                MessageType::WARNING,
                "the prompts checked one by one did not add up to the whole check: checking the whole tree on every edit (a bug: please report it)".to_string(),
            );
        }
        shown
    }

    fn notification(&mut self, notification: Notification) {
        match notification.method.as_str() {
            DidOpenTextDocument::METHOD => {
                if let Some(p) = params::<lsp_types::DidOpenTextDocumentParams>(notification.params)
                {
                    let folder = uri::to_path(p.text_document.uri.as_str())
                        .and_then(|path| path.parent().map(Path::to_path_buf));
                    self.documents
                        .open(&p.text_document.uri, p.text_document.text);
                    self.changed = true;
                    if self.workspace.is_none()
                        && let Some(root) = folder.as_deref().and_then(root_above)
                    {
                        self.serve_root(&root);
                    }
                }
            }
            DidChangeTextDocument::METHOD => {
                if let Some(p) =
                    params::<lsp_types::DidChangeTextDocumentParams>(notification.params)
                {
                    if self
                        .documents
                        .change(&p.text_document.uri, p.content_changes)
                    {
                        self.changed = true;
                    } else {
                        let uri = p.text_document.uri.as_str();
                        self.log(
                            MessageType::WARNING,
                            format!("an edit of {uri}, which is not open, was ignored"),
                        );
                    }
                }
            }
            DidCloseTextDocument::METHOD => {
                if let Some(p) =
                    params::<lsp_types::DidCloseTextDocumentParams>(notification.params)
                {
                    self.documents.close(&p.text_document.uri);
                    // What was saved is what counts now: read it again.
                    if let Some(workspace) = &mut self.workspace {
                        workspace.files_changed();
                    }
                    self.changed = true;
                }
            }
            DidSaveTextDocument::METHOD => {
                if let Some(p) = params::<lsp_types::DidSaveTextDocumentParams>(notification.params)
                {
                    self.file_changed(uri::to_path(p.text_document.uri.as_str()).as_deref());
                }
            }
            DidChangeWatchedFiles::METHOD => {
                if let Some(p) =
                    params::<lsp_types::DidChangeWatchedFilesParams>(notification.params)
                {
                    for event in p.changes {
                        self.file_changed(uri::to_path(event.uri.as_str()).as_deref());
                    }
                }
            }
            _ => {}
        }
    }

    fn file_changed(&mut self, path: Option<&Path>) {
        let Some(workspace) = &mut self.workspace else {
            return;
        };
        if path.is_some_and(|p| workspace.is_config(p)) {
            workspace.reload();
            self.incremental.reset();
        } else {
            workspace.files_changed();
        }
        self.changed = true;
    }

    fn request(&mut self, request: Request) -> Result<serde_json::Value, Failure> {
        let Request { method, params, .. } = request;
        match method.as_str() {
            HoverRequest::METHOD => {
                let p: HoverParams = parse(params)?;
                let checker = self.checker;
                let Some(workspace) = &mut self.workspace else {
                    return Ok(serde_json::Value::Null);
                };
                let config = workspace.config().clone();
                let (overlaid, _) = workspace.overlaid(&self.documents);
                let sources = overlaid.sources;
                let token_range = |id: &str| checker.token_range(&config, sources.clone(), id);
                self.at(&p.text_document_position_params, |at| {
                    to_json(features::hover(at, &token_range))
                })
            }
            GotoDefinition::METHOD => {
                let p: GotoDefinitionParams = parse(params)?;
                self.at(&p.text_document_position_params, |at| {
                    to_json(features::definition(at))
                })
            }
            References::METHOD => {
                let p: ReferenceParams = parse(params)?;
                let with_declaration = p.context.include_declaration;
                self.at(&p.text_document_position, |at| {
                    to_json(features::references(at, with_declaration))
                })
            }
            Completion::METHOD => {
                let p: CompletionParams = parse(params)?;
                self.at(&p.text_document_position, |at| {
                    to_json(features::completion(at))
                })
            }
            PrepareRenameRequest::METHOD => {
                let p: TextDocumentPositionParams = parse(params)?;
                self.at(&p, |at| to_json(features::prepare_rename(at)))
            }
            Rename::METHOD => {
                let p: RenameParams = parse(params)?;
                let new_name = p.new_name.clone();
                let edit = self.at(&p.text_document_position, |at| {
                    features::rename(at, &new_name)
                        .map_err(|m| (ErrorCode::InvalidParams, m))
                        .and_then(to_json)
                })?;
                if !edit.is_null() {
                    let message = format!(
                        "renamed to `{new_name}`: the field of the generated vars struct is renamed with it, so the Rust code that sets it needs the new name"
                    );
                    self.notify::<ShowMessage>(ShowMessageParams {
                        typ: MessageType::INFO,
                        message,
                    });
                }
                Ok(edit)
            }
            DIAGNOSTICS_METHOD => {
                self.changed = true;
                self.check_now();
                to_json(&self.published)
            }
            CodeActionRequest::METHOD => {
                let p: CodeActionParams = parse(params)?;
                self.code_actions(&p)
            }
            _ => Err((
                ErrorCode::MethodNotFound,
                format!("`{method}` is not supported"),
            )),
        }
    }

    /// Runs `answer` at a position of a file of the tree; `null` for a file
    /// that is not one.
    fn at(
        &mut self,
        params: &TextDocumentPositionParams,
        answer: impl FnOnce(&At<'_, '_>) -> Result<serde_json::Value, Failure>,
    ) -> Result<serde_json::Value, Failure> {
        self.with_tree(&params.text_document.uri, params.position, answer)
    }

    fn with_tree(
        &mut self,
        uri: &Uri,
        position: Position,
        answer: impl FnOnce(&At<'_, '_>) -> Result<serde_json::Value, Failure>,
    ) -> Result<serde_json::Value, Failure> {
        let (Some(path), Some(workspace)) = (uri::to_path(uri.as_str()), &mut self.workspace)
        else {
            return Ok(serde_json::Value::Null);
        };
        let shown = workspace.shown(&path);
        let (overlaid, _) = workspace.overlaid(&self.documents);
        let workspace = &*workspace;
        let tree = Tree {
            sources: &overlaid.sources,
            delims: workspace.config().delimiters(),
        };
        let Some(place) = tree.place(&shown) else {
            return Ok(serde_json::Value::Null);
        };
        let uri_of = |shown: &str| uri::from_path(&workspace.absolute(shown));
        answer(&At::new(&tree, place, position, &uri_of))
    }

    fn code_actions(&mut self, p: &CodeActionParams) -> Result<serde_json::Value, Failure> {
        let uri = p.text_document.uri.clone();
        let diagnostics = p.context.diagnostics.clone();
        self.with_tree(&uri, p.range.start, |at| {
            let scope = at.tree.scope(&at.place);
            let front_matter = at.tree.front_matter(&scope, &at.place.role);
            to_json(features::quick_fixes(
                at.place.file,
                &front_matter,
                &uri,
                &diagnostics,
            ))
        })
    }
}

fn params<P: DeserializeOwned>(value: serde_json::Value) -> Option<P> {
    serde_json::from_value(value).ok()
}

fn parse<P: DeserializeOwned>(value: serde_json::Value) -> Result<P, Failure> {
    serde_json::from_value(value)
        .map_err(|e| (ErrorCode::InvalidParams, format!("invalid params: {e}")))
}

fn to_json(value: impl Serialize) -> Result<serde_json::Value, Failure> {
    serde_json::to_value(value).map_err(|e| (ErrorCode::InternalError, e.to_string()))
}

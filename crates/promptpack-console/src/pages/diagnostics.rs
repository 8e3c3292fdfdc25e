//! Diagnostics, refusals and renders as a page shows them: the edit page,
//! the snippet edit, the preview and the diff all list them alike.

use super::prose::Prose;
use crate::state::AppState;
use promptpack::{Diagnostic, Prompt, Severity};
use promptpack_catalog::Error;

/// A diagnostic as a page shows it: `path:line:col`, severity, code,
/// message, the line and the help.
pub(crate) struct DiagnosticView {
    pub(crate) place: String,
    /// The file and line it points at (line 0: the whole file, or none).
    pub(crate) path: String,
    pub(crate) line: usize,
    /// The numbered line of the page it links to, when the page shows one.
    pub(crate) anchor: Option<String>,
    pub(crate) severity: &'static str,
    pub(crate) code: String,
    pub(crate) message: Prose,
    pub(crate) line_text: Option<String>,
    pub(crate) help: Option<Prose>,
}

impl DiagnosticView {
    pub(crate) fn of(diagnostic: &Diagnostic, severity: Severity) -> DiagnosticView {
        let place = match &diagnostic.location {
            Some(at) if !at.is_whole_file() => {
                format!("{}:{}:{}", at.path(), at.line(), at.column())
            }
            Some(at) => at.path().to_string(),
            None => String::new(),
        };
        let line_text = diagnostic
            .location
            .as_ref()
            .filter(|at| !at.is_whole_file())
            .map(|at| at.line_text().to_string())
            .filter(|line| !line.is_empty());
        let (path, line) = match &diagnostic.location {
            Some(at) if !at.is_whole_file() => (at.path().to_string(), at.line()),
            Some(at) => (at.path().to_string(), 0),
            None => (String::new(), 0),
        };
        DiagnosticView {
            place,
            path,
            line,
            anchor: None,
            severity: match severity {
                Severity::Warning => "warning",
                _ => "error",
            },
            code: diagnostic.code.as_str().to_string(),
            message: Prose::of(&diagnostic.message),
            line_text,
            help: diagnostic.help.as_deref().map(Prose::of),
        }
    }

    pub(crate) fn all(diagnostics: &[Diagnostic], severity: Severity) -> Vec<DiagnosticView> {
        diagnostics
            .iter()
            .map(|d| DiagnosticView::of(d, severity))
            .collect()
    }
}

/// A refused request as a page shows it: each of its diagnostics on a line
/// of its own (an error of three missing values is three lines).
pub(crate) struct Refusal {
    pub(crate) lines: Vec<RefusalLine>,
}

/// One diagnostic of a [`Refusal`]: its code, message and help.
pub(crate) struct RefusalLine {
    pub(crate) code: String,
    pub(crate) message: Prose,
    pub(crate) help: Option<Prose>,
}

impl Refusal {
    pub(crate) fn of(error: &Error) -> Refusal {
        let mut lines: Vec<RefusalLine> = error
            .diagnostics()
            .iter()
            .map(|d| RefusalLine {
                code: d.code.as_str().to_string(),
                message: Prose::of(&d.message),
                help: d.help.as_deref().map(Prose::of),
            })
            .collect();
        if lines.is_empty() {
            lines.push(RefusalLine {
                code: error.code().as_str().to_string(),
                message: Prose::of(&error.to_string()),
                help: None,
            });
        }
        Refusal { lines }
    }
}

/// A prompt rendered (or refused) for a page: a name (the example, or
/// `values`), the texts and their size.
pub(crate) struct RenderView {
    pub(crate) name: String,
    pub(crate) system: String,
    pub(crate) user: Option<String>,
    /// A conversation's messages after the system message, each under its
    /// role; empty for a prompt of two files.
    pub(crate) messages: Vec<MessageView>,
    pub(crate) counts: String,
    pub(crate) error: Option<Refusal>,
}

/// One message of a rendered conversation, as the page lists it.
pub(crate) struct MessageView {
    /// `user`, `assistant`, `system`, `tool` or `call`: its heading and
    /// its class.
    pub(crate) role: &'static str,
    /// A call's or a tool result's tool.
    pub(crate) name: Option<String>,
    /// A call's id, or the id of the call a result answers (a history's).
    pub(crate) id: Option<String>,
    pub(crate) content: String,
}

impl RenderView {
    pub(crate) fn of(state: &AppState, name: &str, rendered: &Result<Prompt, Error>) -> RenderView {
        match rendered {
            Ok(prompt) => RenderView {
                name: name.to_string(),
                counts: counts(state, prompt),
                system: prompt.system.clone(),
                user: prompt.user.clone(),
                messages: prompt
                    .messages
                    .iter()
                    .map(|m| MessageView {
                        role: m.role.as_str(),
                        name: m.name.clone(),
                        id: m.id.clone(),
                        content: m.content.clone(),
                    })
                    .collect(),
                error: None,
            },
            Err(error) => RenderView {
                name: name.to_string(),
                system: String::new(),
                user: None,
                messages: Vec::new(),
                counts: String::new(),
                error: Some(Refusal::of(error)),
            },
        }
    }
}

/// `1,234 characters, 321 tokens` (tokens when the console has a counter).
fn counts(state: &AppState, prompt: &Prompt) -> String {
    // Every message sent: the system text, then the user text or each
    // message of a conversation.
    let texts: Vec<&str> = prompt.messages().map(|m| m.content).collect();
    let chars: usize = texts.iter().map(|t| t.chars().count()).sum();
    match &state.token_counter {
        Some(count) => {
            let tokens: usize = texts.iter().map(|t| count(t)).sum();
            format!("{chars} characters, {tokens} tokens")
        }
        None => format!("{chars} characters"),
    }
}

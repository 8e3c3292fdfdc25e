//! The one error type of promptpack: a stable code, a message and, where the
//! problem has one, the place in a source file.

use crate::source_file::{Placed, Resolved};
use std::fmt;

/// What went wrong, as a stable machine-readable code.
///
/// The string form ([`ErrorCode::as_str`]) is part of the public contract: tests,
/// CI scripts and editors may match on it. The lint codes at the end are
/// reported as warnings by `promptpack check`; the rest are errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ErrorCode {
    /// A value token the render reached has no value (strict mode).
    MissingVar,
    /// `{{snippet:x}}` names a snippet that does not exist.
    SnippetNotFound,
    /// Snippets include each other in a cycle.
    SnippetCycle,
    /// A snippet name that is not a plain name, such as one escaping the snippets folder.
    InvalidSnippetName,
    /// `{{#if}}` without its `{{/if}}` in the same file.
    UnclosedBlock,
    /// `{{/if}}` without an open `{{#if}}`.
    StrayClose,
    /// `{{else}}` outside an `{{#if}}` block, or a second one in the same block.
    StrayElse,
    /// A malformed condition: `{{#if role == teacher}}`, `{{else if}}`.
    InvalidCondition,
    /// A compared value that cannot become a variant of the generated enum,
    /// or two that would become the same one; a comparison with a value a
    /// choice's declaration (`values: […]`) lacks; a value a choice does not
    /// take, given at run time.
    InvalidChoice,
    /// A template folder without `system.md`.
    MissingSystem,
    /// A file that is not valid UTF-8.
    InvalidUtf8,
    /// A file or folder that could not be read.
    Io,
    /// `promptpack.toml` or a builder setting that is not valid.
    InvalidConfig,
    /// Two snippet files with the same name.
    DuplicateSnippet,
    /// A template folder name that is not a valid prompt id.
    InvalidId,
    /// Two template folders that map to the same generated name.
    IdCollision,
    /// A variable name that cannot become a Rust field.
    InvalidVarName,
    /// Two variables of one prompt that map to the same Rust field.
    VarCollision,
    /// A path (such as a symlink) that leads outside the prompt root.
    OutsideRoot,
    /// No prompt with this id.
    UnknownPrompt,
    /// The variables given are not a map of names to values.
    InvalidVars,
    /// The vars struct passed belongs to another prompt.
    WrongVars,
    /// A template edited in dev needs a variable the compiled struct does not have.
    StaleBuild,
    /// A prompt the compiled program cannot render: it needs a variable the
    /// program's vars struct lacks, uses one with another kind, compares one
    /// with a value its enum lacks, or has an id the program does not know.
    ContractViolation,
    /// The file watcher could not be set up or failed.
    Watch,
    /// A template that expands, snippets spliced in, past a size limit.
    TooLarge,
    /// Catalog: no such prompt, snippet, version or label, or the prompt is
    /// deleted (a deleted prompt does not resolve).
    NotFound,
    /// Catalog: a prompt or snippet with this id already exists.
    AlreadyExists,
    /// Catalog: a request that cannot be carried out as asked (an empty id,
    /// a label named `latest`, version 0, a cursor that is not one).
    InvalidRequest,
    /// Catalog: the database has no promptpack schema (run `promptpack
    /// catalog init`), a schema newer than this promptpack knows, or the
    /// file is not a database at all.
    NotConfigured,
    /// Catalog: the store cannot be reached, or a read or write failed.
    Unavailable,
    /// Catalog: `upgrade` would mint a version identical to the current one:
    /// every snippet it pins is at its newest revision.
    PinsCurrent,
    /// Catalog: the store holds what this promptpack never writes: a
    /// version whose text does not match its content hash, a pinned snippet
    /// revision that is missing, a schema guard dropped, a migration edited
    /// after it was applied, or a database file that is corrupt. Retrying
    /// does not help; `promptpack catalog verify` lists what is wrong.
    Damaged,
    /// A front matter block that is not valid YAML, or a field of it with
    /// the wrong shape (`vars: 3`, `kind: number`, an example value that
    /// does not fit its variable).
    InvalidFrontMatter,
    /// A token uses a name the prompt's front matter does not declare, in a
    /// prompt that declares `vars`.
    UndeclaredVar,
    /// A token uses a declared variable against its kind (`{{x}}` of a
    /// `flag`, `{{#if x}}` of a `text`).
    KindMismatch,
    /// `{{snippet:name#section}}` names a heading the snippet does not have.
    SectionNotFound,
    /// Lint: a front matter key promptpack does not know (a typo, most often).
    UnknownKey,
    /// Lint: a variable the front matter declares that no template reaches.
    UnusedVar,
    /// Lint: a value a choice declares (`values: […]`) that no branch
    /// compares with, so that it renders what the block's `{{else}}` does,
    /// or nothing.
    UnhandledChoice,
    /// Lint: a combination of conditions renders more tokens than the
    /// prompt's `max_tokens`.
    OverBudget,
    /// Lint: a conditional whose branches cut a fenced code block in two, so
    /// that under some conditions the rest of the prompt is code.
    BrokenFence,
    /// Lint: text that looks like a token but is not one, and so reaches
    /// the model literally (`{{ name }}`, `{{#each x}}`).
    NearMiss,
    /// Lint: a snippet no template includes.
    UnusedSnippet,
    /// Lint: a template or snippet file with nothing in it.
    EmptyFile,
    /// Lint: a file in a template folder that promptpack never reads.
    StrayFile,
    /// Lint: a name that breaks the conventions (camelCase variables,
    /// kebab-case ids).
    Naming,
    /// A conversation (`messages.md`) whose messages are not whole: a role
    /// block opened inside another, closed by another role's tag, or cut
    /// by an `{{#if}}` that opens on one side of its tag and closes on the
    /// other; a history placed inside a message or twice; a `messages.md`
    /// beside a `user.md`.
    InvalidMessage,
    /// Text between the messages of a conversation, which belongs to no
    /// message: every byte of `messages.md` outside the role blocks is
    /// whitespace, an `{{#if}}` around whole messages, or the history.
    TextOutsideMessage,
    /// Lint: a message of a conversation with nothing in it (whitespace
    /// only), which providers refuse or models read as noise.
    EmptyMessage,
    /// Lint: a conversation that ends with the assistant's turn, so that
    /// the model would be asked to continue its own message.
    EndsWithAssistant,
    /// A `response` or `tools` declaration in front matter that is not a
    /// schema: an unknown type, an enum without values, a field name that
    /// cannot become a Rust field, nesting past the strict mode's limit.
    InvalidSchema,
    /// Lint: a declared tool without a description, so that the model
    /// sees a name and arguments but not when to call it.
    UndescribedTool,
    /// A model's answer with no JSON value in it, or one cut short or not
    /// well formed: located in the answer's text.
    AnswerNotJson,
    /// A model's answer whose JSON the schema does not take: a field
    /// missing or not declared, a value of another type, a value an enum
    /// lacks. Located at the value in the answer's text, saying what the
    /// schema wanted there.
    AnswerMismatch,
    /// An example call in a conversation (`{{#call name}}`) of a tool the
    /// prompt does not declare, or whose arguments are not literal JSON
    /// that fits the tool's parameters: located in `messages.md`.
    InvalidCall,
    /// Lint: a tool result (`{{#tool name}}`) with no call of its tool
    /// before it, or a call (`{{#call name}}`) with no result after it.
    /// Chat APIs pair each result with its call and refuse a request
    /// where one lacks the other.
    UnpairedCall,
}

impl ErrorCode {
    /// The stable snake_case name of this code, e.g. `"missing_var"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorCode::MissingVar => "missing_var",
            ErrorCode::SnippetNotFound => "snippet_not_found",
            ErrorCode::SnippetCycle => "snippet_cycle",
            ErrorCode::InvalidSnippetName => "invalid_snippet_name",
            ErrorCode::UnclosedBlock => "unclosed_block",
            ErrorCode::StrayClose => "stray_close",
            ErrorCode::StrayElse => "stray_else",
            ErrorCode::InvalidCondition => "invalid_condition",
            ErrorCode::InvalidChoice => "invalid_choice",
            ErrorCode::MissingSystem => "missing_system",
            ErrorCode::InvalidUtf8 => "invalid_utf8",
            ErrorCode::Io => "io",
            ErrorCode::InvalidConfig => "invalid_config",
            ErrorCode::DuplicateSnippet => "duplicate_snippet",
            ErrorCode::InvalidId => "invalid_id",
            ErrorCode::IdCollision => "id_collision",
            ErrorCode::InvalidVarName => "invalid_var_name",
            ErrorCode::VarCollision => "var_collision",
            ErrorCode::OutsideRoot => "outside_root",
            ErrorCode::UnknownPrompt => "unknown_prompt",
            ErrorCode::InvalidVars => "invalid_vars",
            ErrorCode::WrongVars => "wrong_vars",
            ErrorCode::StaleBuild => "stale_build",
            ErrorCode::ContractViolation => "contract_violation",
            ErrorCode::Watch => "watch",
            ErrorCode::TooLarge => "too_large",
            ErrorCode::NotFound => "not_found",
            ErrorCode::AlreadyExists => "already_exists",
            ErrorCode::InvalidRequest => "invalid_request",
            ErrorCode::NotConfigured => "not_configured",
            ErrorCode::Unavailable => "unavailable",
            ErrorCode::PinsCurrent => "pins_current",
            ErrorCode::Damaged => "damaged",
            ErrorCode::InvalidFrontMatter => "invalid_front_matter",
            ErrorCode::UndeclaredVar => "undeclared_var",
            ErrorCode::KindMismatch => "kind_mismatch",
            ErrorCode::SectionNotFound => "section_not_found",
            ErrorCode::UnknownKey => "unknown_key",
            ErrorCode::UnusedVar => "unused_var",
            ErrorCode::UnhandledChoice => "unhandled_choice",
            ErrorCode::OverBudget => "over_budget",
            ErrorCode::BrokenFence => "broken_fence",
            ErrorCode::NearMiss => "near_miss",
            ErrorCode::UnusedSnippet => "unused_snippet",
            ErrorCode::EmptyFile => "empty_file",
            ErrorCode::StrayFile => "stray_file",
            ErrorCode::Naming => "naming",
            ErrorCode::InvalidMessage => "invalid_message",
            ErrorCode::TextOutsideMessage => "text_outside_message",
            ErrorCode::EmptyMessage => "empty_message",
            ErrorCode::EndsWithAssistant => "ends_with_assistant",
            ErrorCode::InvalidSchema => "invalid_schema",
            ErrorCode::UndescribedTool => "undescribed_tool",
            ErrorCode::AnswerNotJson => "answer_not_json",
            ErrorCode::AnswerMismatch => "answer_mismatch",
            ErrorCode::InvalidCall => "invalid_call",
            ErrorCode::UnpairedCall => "unpaired_call",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where in a source file a problem is.
///
/// Line and column are 1-based and count characters as they are in the file
/// on disk (before trimming). A location made by
/// [`SourceFile::location`](crate::SourceFile::location) shares the file's
/// text instead of copying its line: it costs a pointer and a span however
/// long the line, and works out line, column and line text when asked (a
/// binary search and a short count, not a walk along the line), so that a
/// diagnostic with a caret can be printed without reading the file again.
#[derive(Clone)]
pub struct Location {
    at: At,
}

#[derive(Clone)]
enum At {
    /// A whole file or folder.
    File(Box<str>),
    /// A span of a file held in memory.
    Span(Placed),
}

impl Location {
    /// A location that names a file but no position in it (line 1, column 1).
    pub fn file(path: impl Into<String>) -> Location {
        Location {
            at: At::File(path.into().into_boxed_str()),
        }
    }

    /// A span of a file, as [`SourceFile::location`](crate::SourceFile::location) makes.
    pub(crate) fn placed(placed: Placed) -> Location {
        Location {
            at: At::Span(placed),
        }
    }

    /// Whether this names a whole file or folder, with no position in it
    /// (as [`Location::file`] makes): nothing to point a caret at.
    pub fn is_whole_file(&self) -> bool {
        matches!(self.at, At::File(_))
    }

    /// The file, as a path relative to the prompt root where there is one
    /// (`templates/director/system.md`).
    pub fn path(&self) -> &str {
        match &self.at {
            At::File(path) => path,
            At::Span(placed) => placed.path(),
        }
    }

    /// 1-based line number.
    pub fn line(&self) -> usize {
        self.resolved().map_or(1, |r| r.line)
    }

    /// 1-based column, in characters.
    pub fn column(&self) -> usize {
        self.resolved().map_or(1, |r| r.column)
    }

    /// Length of the offending text in characters: at least 1 (a caret)
    /// for a span, 0 for a whole file.
    #[allow(clippy::len_without_is_empty)] // a span is never empty; `is_whole_file` says what 0 means
    pub fn len(&self) -> usize {
        self.resolved().map_or(0, |r| r.len)
    }

    /// The text of the line, without its line ending (empty for a whole file).
    pub fn line_text(&self) -> &str {
        self.resolved().map_or("", |r| r.line_text)
    }

    /// Line, column, length and line, for a span.
    pub(crate) fn resolved(&self) -> Option<Resolved<'_>> {
        match &self.at {
            At::File(_) => None,
            At::Span(placed) => Some(placed.resolve()),
        }
    }
}

/// Equal when they print the same: path, line, column, length and line text.
impl PartialEq for Location {
    fn eq(&self, other: &Self) -> bool {
        fn shown(l: &Location) -> Option<(usize, usize, usize, &str)> {
            l.resolved().map(|r| (r.line, r.column, r.len, r.line_text))
        }
        self.path() == other.path() && shown(self) == shown(other)
    }
}

impl Eq for Location {}

impl fmt::Debug for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Location")
            .field("path", &self.path())
            .field("line", &self.line())
            .field("column", &self.column())
            .field("len", &self.len())
            .field("line_text", &self.line_text())
            .finish()
    }
}

/// One problem, with a stable [`ErrorCode`], a message and, where there is one,
/// its [`Location`].
///
/// `Display` reads like `templates/director/system.md:12:5: unclosed_block: …`.
///
/// Its fields are read directly; it is made with [`Diagnostic::new`],
/// [`Diagnostic::at`] and [`Diagnostic::with_help`], so that a field added
/// later breaks no caller.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Diagnostic {
    /// What kind of problem this is.
    pub code: ErrorCode,
    /// A sentence saying what is wrong.
    pub message: String,
    /// Where it is, when it has a place in a file.
    pub location: Option<Location>,
    /// An optional hint on how to fix it.
    pub help: Option<String>,
}

impl Diagnostic {
    /// A diagnostic with no location.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            code,
            message: message.into(),
            location: None,
            help: None,
        }
    }

    /// The same diagnostic, placed at `location`.
    pub fn at(mut self, location: Location) -> Diagnostic {
        self.location = Some(location);
        self
    }

    /// The same diagnostic with a help line.
    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(loc) = &self.location {
            write!(f, "{}:{}:{}: ", loc.path(), loc.line(), loc.column())?;
        }
        write!(f, "{}: {}", self.code, self.message)
    }
}

/// The error type of every fallible promptpack operation.
///
/// It holds one or more [`Diagnostic`]s: loading a prompt folder reports every
/// problem at once rather than stopping at the first.
///
/// `Debug` reads like the build script's output (rustc style, a caret under
/// each problem), since `fn main() -> Result<(), Error>` and `unwrap` print
/// `Debug`; `{:#?}` shows the structure.
#[derive(Clone)]
pub struct Error {
    /// Boxed, so that a `Result<T, Error>` carries one pointer of error
    /// beside its `T`, however much the error says.
    inner: Box<Inner>,
}

/// What an [`Error`] holds.
#[derive(Clone)]
struct Inner {
    diagnostics: Vec<Diagnostic>,
    /// What caused it, where it came from another library (a database
    /// driver's error, an I/O error): kept for [`std::error::Error::source`],
    /// not compared.
    cause: Option<std::sync::Arc<dyn std::error::Error + Send + Sync + 'static>>,
}

/// Two errors are equal when they say the same: their causes, which may not
/// be comparable, are not compared.
impl PartialEq for Error {
    fn eq(&self, other: &Error) -> bool {
        self.inner.diagnostics == other.inner.diagnostics
    }
}

impl Eq for Error {}

impl Error {
    /// An error made of one diagnostic.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Error {
        Error::from(Diagnostic::new(code, message))
    }

    /// `unknown_prompt`: no prompt is named `id`. The help names the few
    /// ids `id` is a typo of, and lists `known` when there are a few; among
    /// more, it says only how many there are, so that its size is bounded
    /// whatever their number (and `id` is shortened in the message, whatever
    /// its length).
    pub fn unknown_prompt<'a>(id: &str, known: impl IntoIterator<Item = &'a str>) -> Error {
        let known: Vec<&str> = known.into_iter().collect();
        Error::unknown_prompt_among(id, &known)
    }

    /// [`Error::unknown_prompt`] once the ids are collected: not generic,
    /// so that each caller's crate compiles only the collecting, not the
    /// message once more for every iterator type it passes.
    fn unknown_prompt_among(id: &str, known: &[&str]) -> Error {
        /// Up to this many prompts, the help lists them all.
        const LISTED: usize = 8;
        /// How many near ids the help names.
        const NEAREST: usize = 3;
        let quoted = |names: &[&str]| {
            names
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let count = known.len();
        let near = crate::similar::nearest_in(id, known, NEAREST);
        let help = match (count, near.as_slice()) {
            (0, _) => "there are no prompts".to_string(),
            (1..=LISTED, []) => format!("the prompts are: {}", known.join(", ")),
            // The one meant first, even among few: `tutr` among ids that
            // include `tutor` should not leave the reader to spot it.
            (1..=LISTED, near) => format!(
                "did you mean {}? The prompts are: {}",
                quoted(near),
                known.join(", ")
            ),
            (_, []) => format!("{count} prompts; `promptpack list` shows them"),
            (_, near) => format!(
                "did you mean {}? ({count} prompts; `promptpack list` shows them)",
                quoted(near)
            ),
        };
        let shown = match id.char_indices().nth(80) {
            Some((end, _)) => format!("{}…", &id[..end]),
            None => id.to_string(),
        };
        Diagnostic::new(
            ErrorCode::UnknownPrompt,
            format!("no prompt named `{shown}`"),
        )
        .with_help(help)
        .into()
    }

    /// An error made of several diagnostics; `None` when the list is empty.
    pub fn from_diagnostics(diagnostics: Vec<Diagnostic>) -> Option<Error> {
        if diagnostics.is_empty() {
            None
        } else {
            Some(Error {
                inner: Box::new(Inner {
                    diagnostics,
                    cause: None,
                }),
            })
        }
    }

    /// The same error, caused by `cause` (what [`std::error::Error::source`]
    /// returns).
    pub fn caused_by(mut self, cause: impl std::error::Error + Send + Sync + 'static) -> Error {
        self.inner.cause = Some(std::sync::Arc::new(cause));
        self
    }

    /// Whether the same request may succeed later unchanged: a store that
    /// could not be reached or answered too late (`unavailable`). Every
    /// other code describes the request or the data, which a retry does not
    /// change.
    pub fn is_retryable(&self) -> bool {
        self.code() == ErrorCode::Unavailable
    }

    /// The code of the first diagnostic.
    pub fn code(&self) -> ErrorCode {
        self.inner.diagnostics[0].code
    }

    /// Every diagnostic, in the order they were found.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.inner.diagnostics
    }

    /// The same error, with `location` given to every diagnostic that had none.
    pub fn located(mut self, location: Location) -> Error {
        for d in &mut self.inner.diagnostics {
            if d.location.is_none() {
                d.location = Some(location.clone());
            }
        }
        self
    }

    /// Every diagnostic, by value.
    pub fn into_diagnostics(self) -> Vec<Diagnostic> {
        self.inner.diagnostics
    }
}

impl From<Diagnostic> for Error {
    fn from(diagnostic: Diagnostic) -> Error {
        Error {
            inner: Box::new(Inner {
                diagnostics: vec![diagnostic],
                cause: None,
            }),
        }
    }
}

/// Written out rather than derived: the cause is kept behind an `Arc` (so
/// that the error stays `Clone`), and `source` must return the cause itself,
/// so that a caller can downcast it to the driver's error type.
impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.inner
            .cause
            .as_deref()
            .map(|cause| cause as &(dyn std::error::Error + 'static))
    }
}

/// One line per diagnostic: `path:line:col: code: message (help: …)`.
impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.inner.diagnostics.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{d}")?;
            // On the diagnostic's line, as the build's `cargo::error` line
            // has it: a "did you mean" is most of what a typo's error says.
            if let Some(help) = &d.help {
                write!(f, " (help: {help})")?;
            }
        }
        Ok(())
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if f.alternate() {
            f.debug_struct("Error")
                .field("diagnostics", &self.inner.diagnostics)
                .finish()
        } else {
            let shown = crate::diagnostics::render_error(self, crate::diagnostics::Style::Plain);
            f.write_str(&shown)
        }
    }
}

/// `Result` with promptpack's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod cause_tests {
    use super::*;

    #[test]
    fn a_result_carries_one_pointer_of_error() {
        assert_eq!(
            std::mem::size_of::<Error>(),
            std::mem::size_of::<usize>(),
            "the error is boxed"
        );
    }

    #[test]
    fn the_cause_is_the_source_and_downcasts() {
        let io = std::io::Error::new(std::io::ErrorKind::TimedOut, "no answer");
        let error = Error::new(ErrorCode::Unavailable, "store down").caused_by(io);
        let source = std::error::Error::source(&error).map(|s| s.to_string());
        assert_eq!(source.as_deref(), Some("no answer"));
        let kind = std::error::Error::source(&error)
            .and_then(|s| s.downcast_ref::<std::io::Error>())
            .map(std::io::Error::kind);
        assert_eq!(kind, Some(std::io::ErrorKind::TimedOut));
        assert!(error.is_retryable());
        // Equal by what they say, whatever their causes.
        assert_eq!(error, Error::new(ErrorCode::Unavailable, "store down"));
        assert!(!Error::new(ErrorCode::Damaged, "x").is_retryable());
    }
}

#[cfg(test)]
mod debug_tests {
    use super::*;
    use crate::source_file::{SourceFile, Span};

    /// What `main` and `unwrap` print is the diagnostic, not a struct dump.
    #[test]
    fn debug_reads_like_the_build_output() {
        let file = SourceFile::new("templates/t/system.md", "Hi {{#if x}}");
        let error = Error::from(
            Diagnostic::new(ErrorCode::UnclosedBlock, "{{#if x}} is never closed")
                .at(file.location(Span { start: 3, end: 12 })),
        );
        let shown = format!("{error:?}");
        assert!(
            shown.starts_with("error[unclosed_block]: {{#if x}} is never closed"),
            "{shown}"
        );
        assert!(shown.contains("--> templates/t/system.md:1:4"), "{shown}");
        assert!(shown.contains("^^^^^^^^^"), "{shown}");
        assert!(!shown.contains("Diagnostic {"), "{shown}");
        let structure = format!("{error:#?}");
        assert!(
            structure.contains("diagnostics") && structure.contains("UnclosedBlock"),
            "{structure}"
        );
    }
}

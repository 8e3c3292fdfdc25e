//! A draft and the catalog's snippets through the same pipeline as the
//! build (parse, resolve, front matter, contract), into what a version
//! stores: its pins, its resolved text and the hash of that text. Pure: the
//! caller reads the snippets inside its write transaction and writes what
//! comes out, or nothing when this refuses.
//!
//! The one place of the catalog's content rules, which hold alike on every
//! store and for every way in (publish, snippet, import): a file of at most
//! [`MAX_FILE_BYTES`], text without NUL, a message and an author without NUL.

use promptpack_core::contract::{Contract, check_all};
use promptpack_core::pipeline::{Stages, compile};
use promptpack_core::print::{conversation_text, template_text};
use promptpack_core::resolve::ResolvedPrompt;
use promptpack_core::source_file::Span;
use promptpack_core::{
    Diagnostic, Error, ErrorCode, Location, Settings, SnippetSource, SourceFile, Sources,
    TemplateSource,
};

use crate::hash::version_hash;
use crate::model::{Draft, Pin, Syntax};

/// A snippet at one revision, as the catalog holds it.
#[derive(Debug, Clone)]
pub(crate) struct SnippetText {
    pub name: String,
    pub revision: u32,
    pub text: String,
}

/// What a version stores beyond its draft.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Compiled {
    pub pins: Vec<Pin>,
    pub resolved_system: String,
    pub resolved_user: Option<String>,
    pub resolved_messages: Option<String>,
    pub content_hash: String,
    pub front_matter: serde_json::Value,
    pub description: Option<String>,
    /// What publishing it warns of: each value a declared choice takes
    /// that no branch compares with (`unhandled_choice`).
    pub warnings: Vec<Diagnostic>,
}

/// A prompt's resolved text, as a version stores it, and that text's
/// content hash: the one place both are computed, for a draft published
/// and for a stored version judged or verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ResolvedText {
    pub system: String,
    pub user: Option<String>,
    /// The conversation, as `messages.md` text in canonical form
    /// ([`conversation_text`]), when the prompt is one.
    pub messages: Option<String>,
    pub content_hash: String,
}

impl ResolvedText {
    /// What `prompt`, parsed in `settings`, renders with its tokens in
    /// canonical form.
    pub(crate) fn of(prompt: &ResolvedPrompt, settings: &Settings) -> ResolvedText {
        let delimiters = &settings.delimiters;
        let system = template_text(&prompt.system, &prompt.vars, delimiters);
        let user = prompt
            .user
            .as_ref()
            .map(|user| template_text(user, &prompt.vars, delimiters));
        let messages = prompt
            .conversation
            .as_ref()
            .map(|conversation| conversation_text(conversation, &prompt.vars, delimiters));
        let content_hash = version_hash(&system, user.as_deref(), messages.as_deref());
        ResolvedText {
            system,
            user,
            messages,
            content_hash,
        }
    }
}

/// One prompt compiled from its files and snippets under its syntax.
#[derive(Debug)]
pub(crate) struct CompiledPrompt {
    pub prompt: ResolvedPrompt,
    pub settings: Settings,
    pub text: ResolvedText,
    pub warnings: Vec<Diagnostic>,
}

/// Prompt `id` of `sources` through the build's pipeline under `syntax`:
/// every parse, resolve and front matter error at once, as one [`Error`].
/// What a draft is published with and what a stored version is judged and
/// verified with.
pub(crate) fn compile_prompt(
    id: &str,
    syntax: &Syntax,
    sources: Sources,
) -> Result<CompiledPrompt, Error> {
    let settings = syntax.settings()?;
    let compiled = compile(sources, Vec::new(), &settings, Stages::default()).into_result()?;
    let Some(prompt) = compiled.prompts.into_iter().find(|p| p.id == id) else {
        return Err(Error::new(
            ErrorCode::NotFound,
            format!("`{id}` holds no template that resolves"),
        ));
    };
    let text = ResolvedText::of(&prompt, &settings);
    Ok(CompiledPrompt {
        prompt,
        settings,
        text,
        warnings: compiled.warnings,
    })
}

/// The most bytes one file of a version holds (`system.md`, `user.md`,
/// `messages.md`, a snippet), and the most static text a part of a version expands to,
/// snippets spliced in: 2 MiB, `promptpack_core::resolve::MAX_PROMPT_BYTES`,
/// the one number behind the build's limit on the Rust code one prompt
/// generates too. `promptpack check` refuses such a prompt as `too_large`,
/// and so does the catalog, from a file's size before reading it.
pub const MAX_FILE_BYTES: u64 = promptpack_core::resolve::MAX_PROMPT_BYTES as u64;

/// Checks one file of a version, shown as `path`, against the content
/// rules: at most [`MAX_FILE_BYTES`] (`too_large`), and no NUL byte
/// (`invalid_request`, at its line and column): PostgreSQL's text cannot
/// hold one, and the rule is the same on every store.
pub(crate) fn check_content(path: &str, text: &str) -> Result<(), Error> {
    if text.len() as u64 > MAX_FILE_BYTES {
        return Err(too_large(path, text.len()));
    }
    let Some(nul) = text.find('\0') else {
        return Ok(());
    };
    let file = SourceFile::new(path, text);
    let at = file.location(Span {
        start: nul,
        end: nul + 1,
    });
    Err(Diagnostic::new(
        ErrorCode::InvalidRequest,
        format!(
            "{path} holds a NUL byte at line {}, column {}: the catalog keeps no NUL on any store",
            at.line(),
            at.column()
        ),
    )
    .at(at)
    .with_help("remove it: a prompt's text is printable text")
    .into())
}

/// Checks what a write records beside the text: its `author` and `message`
/// hold no NUL byte (`invalid_request`), on every store alike.
pub(crate) fn check_record(author: &str, message: &str) -> Result<(), Error> {
    for (what, text) in [("author", author), ("message", message)] {
        if text.contains('\0') {
            return Err(Error::new(
                ErrorCode::InvalidRequest,
                format!("the {what} holds a NUL byte, which the catalog does not keep"),
            ));
        }
    }
    Ok(())
}

fn too_large(path: &str, bytes: usize) -> Error {
    Diagnostic::new(
        ErrorCode::TooLarge,
        format!(
            "{path} holds {bytes} bytes, past the limit of {MAX_FILE_BYTES} for one file of a version"
        ),
    )
    .at(Location::file(path))
    .with_help("`promptpack check` refuses it too: split the prompt, or include less")
    .into()
}

/// The paths diagnostics name: those of the files the version would be
/// exported to, so that a location reads as it would in an editor.
pub(crate) fn system_path(id: &str) -> String {
    format!("templates/{id}/system.md")
}

pub(crate) fn user_path(id: &str) -> String {
    format!("templates/{id}/user.md")
}

pub(crate) fn messages_path(id: &str) -> String {
    format!("templates/{id}/messages.md")
}

pub(crate) fn snippet_path(name: &str) -> String {
    format!("snippets/{name}.md")
}

/// The files of a version or a draft: `system.md`, and `user.md` or
/// `messages.md` (never both: the compiler refuses that).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Files<'a> {
    pub system: &'a str,
    pub user: Option<&'a str>,
    pub messages: Option<&'a str>,
}

impl<'a> Files<'a> {
    pub(crate) fn of_draft(draft: &'a Draft) -> Files<'a> {
        Files {
            system: &draft.system,
            user: draft.user.as_deref(),
            messages: draft.messages.as_deref(),
        }
    }

    pub(crate) fn of_version(version: &'a crate::model::Version) -> Files<'a> {
        Files {
            system: &version.system,
            user: version.user.as_deref(),
            messages: version.messages.as_deref(),
        }
    }
}

/// The sources of prompt `id` with its `files` and `snippets`.
pub(crate) fn sources(id: &str, files: Files<'_>, snippets: &[SnippetText]) -> Sources {
    let Files {
        system,
        user,
        messages,
    } = files;
    Sources {
        templates: vec![TemplateSource {
            id: id.to_string(),
            system: SourceFile::new(system_path(id), system),
            user: user.map(|text| SourceFile::new(user_path(id), text)),
            messages: messages.map(|text| SourceFile::new(messages_path(id), text)),
        }],
        snippets: snippets
            .iter()
            .map(|s| SnippetSource {
                name: s.name.clone(),
                file: SourceFile::new(snippet_path(&s.name), s.text.as_str()),
            })
            .collect(),
        ..Sources::default()
    }
}

/// Checks `draft` of prompt `id`, in its syntax, against `snippets` (the
/// newest revision of each) and, when given, the program's `contract`; every parse, resolve,
/// front matter and contract error at once, as one [`Error`].
pub(crate) fn compile_draft(
    id: &str,
    draft: &Draft,
    snippets: &[SnippetText],
    contract: Option<&Contract>,
) -> Result<Compiled, Error> {
    check_content(&system_path(id), &draft.system)?;
    if let Some(user) = &draft.user {
        check_content(&user_path(id), user)?;
    }
    if let Some(messages) = &draft.messages {
        check_content(&messages_path(id), messages)?;
    }
    let sources = sources(id, Files::of_draft(draft), snippets);
    let compiled = compile_prompt(id, &draft.syntax, sources)?;
    let prompt = &compiled.prompt;
    // Snippets spliced in may expand a small file past what check accepts:
    // each message of a conversation is held to the limit of a part.
    let messages = prompt.conversation.iter().flat_map(|c| c.programs());
    for (part, path) in std::iter::once((&prompt.system, system_path(id)))
        .chain(prompt.user.as_ref().map(|user| (user, user_path(id))))
        .chain(messages.map(|message| (message, messages_path(id))))
    {
        if part.text.len() as u64 > MAX_FILE_BYTES {
            return Err(Diagnostic::new(
                ErrorCode::TooLarge,
                format!(
                    "{path} expands, snippets spliced in, to {} bytes of text, past the limit of {MAX_FILE_BYTES}",
                    part.text.len()
                ),
            )
            .at(Location::file(path))
            .with_help("`promptpack check` refuses it too: include less")
            .into());
        }
    }
    if let Some(contract) = contract
        && let Some(error) =
            Error::from_diagnostics(check_all(std::slice::from_ref(prompt), contract))
    {
        return Err(error);
    }
    Ok(describe(compiled, snippets))
}

/// Checks a snippet text on its own: it must parse, and what it includes
/// must be in `others` (the newest revision of every other snippet).
pub(crate) fn check_snippet(
    name: &str,
    text: &str,
    others: &[SnippetText],
    settings: &Settings,
) -> Result<(), Error> {
    check_content(&snippet_path(name), text)?;
    let mut snippets: Vec<SnippetText> =
        others.iter().filter(|s| s.name != name).cloned().collect();
    snippets.push(SnippetText {
        name: name.to_string(),
        revision: 0,
        text: text.to_string(),
    });
    // A template holding only the include: resolving it parses the snippet
    // and everything it includes, with the build's own checks.
    let include = format!(
        "{}snippet:{name}{}",
        settings.delimiters.open(),
        settings.delimiters.close()
    );
    let files = Files {
        system: &include,
        user: None,
        messages: None,
    };
    let as_text = compile(
        sources("snippet-check", files, &snippets),
        Vec::new(),
        settings,
        Stages::default(),
    )
    .into_result();
    let Err(error) = as_text else {
        return Ok(());
    };
    // A snippet of whole turns (role blocks) is never spliced into a text:
    // it is checked where it can only be, between the messages of a
    // conversation.
    if !error
        .diagnostics()
        .iter()
        .all(|d| d.code == ErrorCode::InvalidMessage)
    {
        return Err(error);
    }
    let files = Files {
        system: "",
        user: None,
        messages: Some(&include),
    };
    compile(
        sources("snippet-check", files, &snippets),
        Vec::new(),
        settings,
        Stages::default(),
    )
    .into_result()
    .map(|_| ())
}

/// What a version stores of `compiled`: the snippet revisions of
/// `snippets` it reaches (its pins), its resolved text and hash, its front
/// matter; and the warnings publishing it gives.
fn describe(compiled: CompiledPrompt, snippets: &[SnippetText]) -> Compiled {
    let CompiledPrompt {
        prompt,
        text,
        warnings,
        ..
    } = compiled;
    let front = &prompt.front_matter;
    // Plain data (strings, numbers, JSON values) serializes without fail;
    // an empty object is what a version without front matter stores.
    let front_matter = serde_json::to_value(front).unwrap_or_else(|_| serde_json::json!({}));
    Compiled {
        pins: pins_of(&prompt, snippets),
        resolved_system: text.system,
        resolved_user: text.user,
        resolved_messages: text.messages,
        content_hash: text.content_hash,
        front_matter,
        description: front.description.clone(),
        warnings: warnings
            .into_iter()
            .filter(|w| w.code == ErrorCode::UnhandledChoice)
            .collect(),
    }
}

/// The snippet revisions of `snippets` that `prompt` reaches, by name.
pub(crate) fn pins_of(prompt: &ResolvedPrompt, snippets: &[SnippetText]) -> Vec<Pin> {
    prompt
        .snippets
        .iter()
        .filter_map(|name| {
            let snippet = snippets.iter().find(|s| &s.name == name)?;
            Some(Pin {
                snippet: name.clone(),
                revision: snippet.revision,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draft(system: &str) -> Draft {
        Draft {
            system: system.into(),
            ..Draft::default()
        }
    }

    fn snippet(name: &str, revision: u32, text: &str) -> SnippetText {
        SnippetText {
            name: name.into(),
            revision,
            text: text.into(),
        }
    }

    #[test]
    fn a_version_pins_every_snippet_it_reaches() {
        let snippets = [
            snippet("a", 3, "A {{snippet:b}}"),
            snippet("b", 7, "B {{x}}"),
            snippet("unused", 1, "U"),
        ];
        let compiled = compile_draft("p", &draft("{{snippet:a}}!"), &snippets, None)
            .map_err(|e| e.to_string());
        let compiled = compiled.unwrap_or_else(|e| panic!("{e}"));
        let pins: Vec<(&str, u32)> = compiled
            .pins
            .iter()
            .map(|p| (p.snippet.as_str(), p.revision))
            .collect();
        assert_eq!(pins, [("a", 3), ("b", 7)]);
        assert_eq!(compiled.resolved_system, "A B {{x}}!");
        assert_eq!(
            compiled.content_hash,
            crate::hash::content_hash("A B {{x}}!", None)
        );
    }

    #[test]
    fn errors_are_located_in_the_files_a_version_exports_to() {
        let error = compile_draft("p", &draft("Hi\n{{#if x}}"), &[], None)
            .err()
            .map(|e| e.into_diagnostics());
        let diagnostics = error.unwrap_or_default();
        assert_eq!(diagnostics.len(), 1);
        assert_eq!(diagnostics[0].code, ErrorCode::UnclosedBlock);
        let location = diagnostics[0]
            .location
            .as_ref()
            .map(|l| (l.path().to_string(), l.line()));
        assert_eq!(location, Some(("templates/p/system.md".to_string(), 2)));
    }
}

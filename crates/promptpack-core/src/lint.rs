//! Warnings about prompt sources that load fine but are probably not what
//! their author meant: near-miss tokens, conditionals that cut a code fence
//! in two, unused snippets, empty and stray files, names off the
//! conventions. Pure: works on [`Sources`] already read,
//! and on nothing else, so it runs even when the templates have errors.
//!
//! ```
//! use promptpack_core::lint::lint_sources;
//! use promptpack_core::{ErrorCode, Settings, SourceFile, Sources, TemplateSource};
//! let sources = Sources {
//!     templates: vec![TemplateSource {
//!         id: "greet".into(),
//!         system: SourceFile::new("templates/greet/system.md", "Hi {{ name }}."),
//!         user: None,
//!         messages: None,
//!     }],
//!     ..Sources::default()
//! };
//! let lints = lint_sources(&sources, &Settings::default());
//! assert_eq!(lints.len(), 1);
//! assert_eq!(lints[0].code, ErrorCode::NearMiss);
//! assert_eq!(lints[0].help.as_deref(), Some("write `{{name}}`: no spaces inside the delimiters"));
//! ```

use crate::error::{Diagnostic, ErrorCode, Location};
use crate::scan::{Finding, FindingKind, find_tokens};
use crate::settings::Settings;
use crate::source_file::SourceFile;
use crate::sources::Sources;
use crate::syntax::{Delimiters, is_var_name};
use heck::{ToKebabCase, ToLowerCamelCase};
use std::collections::{HashMap, HashSet};

mod conversation;
mod fences;

/// A lint is a [`Diagnostic`] with one of the lint codes of [`ErrorCode`]
/// (`near_miss`, `broken_fence`, `unused_snippet`, `empty_file`,
/// `stray_file`, `naming`),
/// rendered as a warning.
fn lint(code: ErrorCode, message: impl Into<String>, location: Location) -> Diagnostic {
    Diagnostic::new(code, message).at(location)
}

/// Every lint of `sources`, sorted by file, line and column.
///
/// `settings` gives the delimiters and the template ids exempt from the
/// naming lints ([`Settings::naming_exempt`]). Only what `sources` holds is looked at:
/// nothing is read from disk.
pub fn lint_sources(sources: &Sources, settings: &Settings) -> Vec<Diagnostic> {
    lint_with(sources, settings, None)
}

/// [`lint_sources`] for a caller that lints a tree again and again as it
/// changes (the language server, on every edit): what a file's lints owe
/// to that file alone (its tokens, near-misses, fences, emptiness) is kept
/// in `cache` and reused while the file's path and text are the same; the
/// rest, which looks across files, is done every time. The same lints as
/// [`lint_sources`], always.
pub fn lint_sources_cached(
    sources: &Sources,
    settings: &Settings,
    cache: &mut LintCache,
) -> Vec<Diagnostic> {
    lint_with(sources, settings, Some(cache))
}

/// What [`lint_sources_cached`] keeps of each file between calls: the
/// file, its tokens and the lints it has of itself. Files gone from the
/// tree are forgotten at the next call; a change of delimiters forgets all.
#[derive(Debug, Default)]
pub struct LintCache {
    delimiters: Option<Delimiters>,
    files: HashMap<String, FileLints>,
}

/// One file's tokens and the lints it has of itself.
#[derive(Debug, Clone)]
struct FileLints {
    file: SourceFile,
    findings: Vec<Finding>,
    lints: Vec<Diagnostic>,
}

impl FileLints {
    fn of(file: &SourceFile, delims: &Delimiters) -> FileLints {
        step();
        let findings = find_tokens(file.text(), delims);
        let mut lints = Vec::new();
        near_misses(file, &findings, delims, &mut lints);
        fences::broken_fences(file, delims, &mut lints);
        if conversation::is_conversation_file(file) {
            conversation::conversation_lints(file, delims, &mut lints);
        }
        if file.body().is_empty() {
            lints.push(empty_file(file));
        }
        FileLints {
            file: file.clone(),
            findings,
            lints,
        }
    }
}

impl LintCache {
    /// `file`'s own lints, made again only when its text changed.
    fn file(&mut self, file: &SourceFile, delims: &Delimiters) -> &FileLints {
        let kept = self
            .files
            .entry(file.path().to_string())
            .or_insert_with(|| FileLints::of(file, delims));
        if kept.file.text() != file.text() {
            *kept = FileLints::of(file, delims);
        }
        kept
    }
}

fn lint_with(
    sources: &Sources,
    settings: &Settings,
    mut cache: Option<&mut LintCache>,
) -> Vec<Diagnostic> {
    let delims = &settings.delimiters;
    let exempt: HashSet<&str> = settings.naming_exempt.iter().map(String::as_str).collect();
    let mut lints = Vec::new();
    if let Some(cache) = cache.as_deref_mut() {
        if cache.delimiters.as_ref() != Some(delims) {
            *cache = LintCache {
                delimiters: Some(delims.clone()),
                files: HashMap::new(),
            };
        }
        let paths: HashSet<&str> = sources
            .templates
            .iter()
            .flat_map(|t| std::iter::once(&t.system).chain(&t.user).chain(&t.messages))
            .chain(sources.snippets.iter().map(|s| &s.file))
            .map(SourceFile::path)
            .collect();
        cache.files.retain(|path, _| paths.contains(path.as_str()));
    }

    // Each file is scanned once (or not at all when the cache has it); its
    // findings are found again by position (template i's, snippet j's),
    // never by a search among all files.
    let mut own = |file: &SourceFile| match cache.as_deref_mut() {
        Some(cache) => {
            let kept = cache.file(file, delims);
            lints.extend(kept.lints.iter().cloned());
            kept.findings.clone()
        }
        None => {
            let made = FileLints::of(file, delims);
            lints.extend(made.lints);
            made.findings
        }
    };
    type Scans = (Vec<Finding>, Option<Vec<Finding>>, Option<Vec<Finding>>);
    let template_scans: Vec<Scans> = sources
        .templates
        .iter()
        .map(|t| {
            let system = own(&t.system);
            let user = t.user.as_ref().map(&mut own);
            (system, user, t.messages.as_ref().map(&mut own))
        })
        .collect();
    let snippet_scans: Vec<Vec<Finding>> = sources.snippets.iter().map(|s| own(&s.file)).collect();
    // A template's files with their findings.
    let template_files = |i: usize| {
        let t = &sources.templates[i];
        let (system, user, messages) = &template_scans[i];
        std::iter::once((&t.system, &system[..]))
            .chain(t.user.as_ref().zip(user.as_deref()))
            .chain(t.messages.as_ref().zip(messages.as_deref()))
    };

    // The snippets some template reaches, following includes transitively,
    // and those some template not exempt from the naming lints reaches: one
    // walk of the include graph each, whatever the number of templates.
    let includes: HashMap<&str, Vec<&str>> = sources
        .snippets
        .iter()
        .zip(&snippet_scans)
        .map(|(s, findings)| (s.name.as_str(), snippet_names(&s.file, findings)))
        .collect();
    let reached_from = |roots: &mut dyn Iterator<Item = usize>| {
        let mut stack: Vec<&str> = roots
            .flat_map(template_files)
            .flat_map(|(file, findings)| snippet_names(file, findings))
            .collect();
        let mut seen = HashSet::new();
        while let Some(name) = stack.pop() {
            step();
            if seen.insert(name) {
                stack.extend(includes.get(name).into_iter().flatten().copied());
            }
        }
        seen
    };
    let reached = reached_from(&mut (0..sources.templates.len()));
    let reached_unexempt = reached_from(
        &mut (0..sources.templates.len())
            .filter(|&i| !exempt.contains(sources.templates[i].id.as_str())),
    );
    for s in &sources.snippets {
        if !reached.contains(s.name.as_str()) {
            let message = format!("snippet `{}` is not included by any template", s.name);
            let help = format!(
                "include it with `{}snippet:{}{}`, or delete {}",
                delims.open(),
                s.name,
                delims.close(),
                s.file.path()
            );
            lints.push(
                lint(
                    ErrorCode::UnusedSnippet,
                    message,
                    Location::file(s.file.path()),
                )
                .with_help(help),
            );
        }
    }

    for path in &sources.stray_files {
        let message = format!("{path} is never read");
        let help = "a template folder holds only system.md and an optional user.md, and the templates folder only template folders";
        lints.push(
            lint(ErrorCode::StrayFile, message, Location::file(path.as_str())).with_help(help),
        );
    }

    let exemption = |id: &str| {
        format!("or exempt the prompt with `[lints] naming_exempt = [\"{id}\"]` in promptpack.toml")
    };
    let ids: HashSet<&str> = sources.templates.iter().map(|t| t.id.as_str()).collect();
    for (i, t) in sources.templates.iter().enumerate() {
        if exempt.contains(t.id.as_str()) {
            continue;
        }
        if !is_kebab_case(&t.id) {
            let folder = t
                .system
                .path()
                .rsplit_once('/')
                .map_or(t.system.path(), |(dir, _)| dir);
            let message = format!("prompt id `{}` is not kebab-case", t.id);
            let kebab = to_kebab_case(&t.id);
            // Renaming onto another prompt's folder would merge the two.
            let rename = if ids.contains(kebab.as_str()) {
                format!("rename the folder to a kebab-case name (`{kebab}` is taken)")
            } else {
                format!("rename the folder to `{kebab}`")
            };
            let help = format!("{rename}, {}", exemption(&t.id));
            lints.push(lint(ErrorCode::Naming, message, Location::file(folder)).with_help(help));
        }
        // The names the prompt's own files use: a rename onto one of them
        // would make two variables one.
        let used: HashSet<&str> = template_files(i)
            .flat_map(|(file, findings)| var_tokens(file, findings))
            .collect();
        for (file, findings) in template_files(i) {
            var_names(file, findings, &used, Some(&exemption(&t.id)), &mut lints);
        }
    }
    for (s, findings) in sources.snippets.iter().zip(&snippet_scans) {
        // Unreached snippets are linted; reached ones unless every template
        // that reaches them is exempt.
        let exempted =
            reached.contains(s.name.as_str()) && !reached_unexempt.contains(s.name.as_str());
        if !exempted {
            let used: HashSet<&str> = var_tokens(&s.file, findings).collect();
            var_names(&s.file, findings, &used, None, &mut lints);
        }
    }

    lints.sort_by(|a, b| {
        sort_key(a)
            .cmp(&sort_key(b))
            .then(a.code.cmp(&b.code))
            .then(a.message.cmp(&b.message))
    });
    lints
}

/// Where a lint is: file, line, column.
fn sort_key(lint: &Diagnostic) -> (&str, usize, usize) {
    lint.location
        .as_ref()
        .map(|loc| (loc.path(), loc.line(), loc.column()))
        .unwrap_or_default()
}

#[cfg(test)]
thread_local! {
    /// Steps of `lint_sources`: files scanned, snippets visited.
    static STEPS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Counts a step of work for `lint_work_is_linear`, which holds
/// `lint_sources` linear without timing it; nothing outside tests.
fn step() {
    #[cfg(test)]
    STEPS.with(|s| s.set(s.get() + 1));
}

fn snippet_names<'f>(file: &'f SourceFile, findings: &[Finding]) -> Vec<&'f str> {
    findings
        .iter()
        .filter(|f| f.kind == FindingKind::Snippet)
        .filter_map(|f| f.name(file.text()))
        .collect()
}

fn near_misses(
    file: &SourceFile,
    findings: &[Finding],
    delims: &Delimiters,
    lints: &mut Vec<Diagnostic>,
) {
    let (open, close) = (delims.open(), delims.close());
    let role_tags_are_tokens = conversation::may_hold_role_tags(file);
    for f in findings {
        if !f.kind.is_near_miss() || f.kind == FindingKind::UnmatchedClose {
            continue;
        }
        // A role tag is a token of a conversation's file (and of a
        // snippet of turns it includes).
        if role_tags_are_tokens && f.kind == FindingKind::RoleTag {
            continue;
        }
        let shown = shorten(f.text(file.text()));
        let literally = "reaches the model literally";
        let (message, help) = match f.kind {
            FindingKind::Spaced => (
                format!("`{shown}` is not a token and {literally}"),
                f.suggestion
                    .as_ref()
                    .map(|s| format!("write `{s}`: no spaces inside the delimiters")),
            ),
            FindingKind::SnippetSyntax => (
                format!("`{shown}` is not a snippet include and {literally}"),
                Some(match &f.suggestion {
                    Some(s) => format!("write `{s}`"),
                    None => format!(
                        "write `{open}snippet:name{close}`, with a name of letters, digits, `_` and `-`"
                    ),
                }),
            ),
            FindingKind::SchemaSyntax => (
                format!("`{shown}` is not a schema token and {literally}"),
                Some(format!(
                    "write `{open}schema:response{close}`, which prints the shape of the answer the prompt's front matter declares under `response:`"
                )),
            ),
            FindingKind::UnknownBlock => (
                format!("`{shown}` is not a block promptpack knows, and {literally}"),
                Some(
                    match conversation::role_typo(&file.text()[f.inner.start..f.inner.end]) {
                        Some(role_tag) => {
                            format!("a role tag is misspelled: write `{open}{role_tag}{close}`")
                        }
                        None => format!(
                            "the one block is `{open}#if name{close}…{open}else{close}…{open}/if{close}`"
                        ),
                    },
                ),
            ),
            FindingKind::RoleTag => (
                format!(
                    "`{shown}` is a role tag, literal text outside messages.md: it {literally}"
                ),
                Some("role blocks make a conversation in the prompt's messages.md".to_string()),
            ),
            FindingKind::InvalidName => {
                let inner = &file.text()[f.inner.start..f.inner.end];
                let camel = to_camel_case(inner);
                let help = if is_var_name(&camel) && camel != inner {
                    format!(
                        "variable names are letters, digits and `_`: write `{open}{camel}{close}`"
                    )
                } else {
                    "variable names are letters, digits and `_`".to_string()
                };
                (
                    format!("`{shown}` is not a variable and {literally}"),
                    Some(help),
                )
            }
            FindingKind::UnmatchedOpen => (
                format!("`{open}` is not closed on its line and {literally}"),
                Some(format!(
                    "finish the token with `{close}`, or remove the `{open}`"
                )),
            ),
            _ => (
                format!("`{shown}` is not a token and {literally}"),
                Some(format!(
                    "the tokens are `{open}name{close}`, `{open}snippet:name{close}`, `{open}#if name{close}`, `{open}else{close}` and `{open}/if{close}`"
                )),
            ),
        };
        let mut found = lint(ErrorCode::NearMiss, message, file.location(f.span));
        found.help = help;
        lints.push(found);
    }
}

/// The variable names that the near-misses of `file` with stray spaces were
/// meant to be, each with the near-miss's location (the one its `near_miss`
/// lint has): `audience` for `{{ audience }}`, `hasTools` for
/// `{{# if hasTools}}`. Such a name is not a variable: the build script says
/// so when no real token uses it, since the vars struct then lacks the field.
///
/// ```
/// use promptpack_core::lint::near_miss_names;
/// use promptpack_core::{Delimiters, SourceFile};
/// let file = SourceFile::new("templates/a/system.md", "Hi {{name}}.\nFor {{ audience }}.");
/// let found = near_miss_names(&file, &Delimiters::default());
/// assert_eq!(found.len(), 1);
/// assert_eq!(found[0].0, "audience");
/// assert_eq!((found[0].1.line(), found[0].1.column()), (2, 5));
/// ```
pub fn near_miss_names(file: &SourceFile, delims: &Delimiters) -> Vec<(String, Location)> {
    find_tokens(file.text(), delims)
        .into_iter()
        .filter(|f| f.kind == FindingKind::Spaced)
        .filter_map(|f| {
            let suggestion = f.suggestion.as_deref()?;
            let token = find_tokens(suggestion, delims).into_iter().next()?;
            let whole = token.span.start == 0 && token.span.end == suggestion.len();
            let named = matches!(
                token.kind,
                FindingKind::Var | FindingKind::If | FindingKind::ElseIf
            );
            let name = token.name(suggestion).filter(|_| whole && named)?;
            Some((name.to_string(), file.location(f.span)))
        })
        .collect()
}

/// At most 40 characters of a near-miss, for a message.
fn shorten(text: &str) -> String {
    match text.char_indices().nth(40) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

fn empty_file(file: &SourceFile) -> Diagnostic {
    let path = file.path();
    let help = if path.ends_with("/user.md") {
        "write the user prompt, or delete user.md: it is optional"
    } else if path.ends_with("/system.md") {
        "write the system prompt: as it is, the prompt renders empty"
    } else {
        "write the snippet, or delete it and its includes"
    };
    lint(
        ErrorCode::EmptyFile,
        format!("{path} is empty"),
        Location::file(path),
    )
    .with_help(help)
}

/// The names of a file's variables and conditions.
fn var_tokens<'f>(file: &'f SourceFile, findings: &'f [Finding]) -> impl Iterator<Item = &'f str> {
    findings
        .iter()
        .filter(|f| matches!(f.kind, FindingKind::Var | FindingKind::If))
        .filter_map(|f| f.name(file.text()))
}

/// Warns once per file about each variable name that is not camelCase;
/// suggests the camelCase name unless `used` (the names in the same scope)
/// holds it already.
fn var_names(
    file: &SourceFile,
    findings: &[Finding],
    used: &HashSet<&str>,
    exemption: Option<&str>,
    lints: &mut Vec<Diagnostic>,
) {
    let mut seen = HashSet::new();
    for f in findings {
        let Some(name) = f
            .name(file.text())
            .filter(|_| matches!(f.kind, FindingKind::Var | FindingKind::If))
        else {
            continue;
        };
        if is_camel_case(name) || !seen.insert(name) {
            continue;
        }
        let camel = to_camel_case(name);
        let mut help = if used.contains(camel.as_str()) {
            format!("rename it to a camelCase name other than `{camel}`, a variable here already")
        } else if is_camel_case(&camel) {
            format!("write `{camel}` (the generated field is snake_case either way)")
        } else {
            "variable names start with a lowercase letter and have no `_`".to_string()
        };
        if let Some(exemption) = exemption {
            help = format!("{help}, {exemption}");
        }
        let message = format!("variable `{name}` is not camelCase");
        lints.push(lint(ErrorCode::Naming, message, file.location(f.span)).with_help(help));
    }
}

/// `agentName`, `x`, `userID`: a lowercase ASCII letter, then letters and digits.
fn is_camel_case(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase()) && chars.all(|c| c.is_ascii_alphanumeric())
}

/// `agent-system`: no `_` and no uppercase.
fn is_kebab_case(id: &str) -> bool {
    !id.contains('_') && !id.chars().any(char::is_uppercase)
}

/// `agent_name`, `AgentName`, `next-agent`, `HAS_TOOLS` → `agentName`,
/// `agentName`, `nextAgent`, `hasTools`.
fn to_camel_case(name: &str) -> String {
    name.to_lower_camel_case()
}

/// `Agent_System`, `agentSystem` → `agent-system`.
fn to_kebab_case(id: &str) -> String {
    id.to_kebab_case()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::{SnippetSource, TemplateSource};

    fn template(id: &str, system: &str) -> TemplateSource {
        TemplateSource {
            id: id.into(),
            system: SourceFile::new(format!("templates/{id}/system.md"), system),
            user: None,
            messages: None,
        }
    }

    fn snippet(name: &str, text: &str) -> SnippetSource {
        SnippetSource {
            name: name.into(),
            file: SourceFile::new(format!("snippets/{name}.md"), text),
        }
    }

    fn codes(sources: &Sources, settings: &Settings) -> Vec<(ErrorCode, String)> {
        lint_sources(sources, settings)
            .into_iter()
            .map(|l| (l.code, l.message))
            .collect()
    }

    /// A section include is a use of its snippet.
    #[test]
    fn unused_snippets_follow_includes() {
        let sources = Sources {
            templates: vec![template("a", "{{snippet:b#x}}")],
            snippets: vec![
                snippet("b", "# X\n{{snippet:c#y}}"),
                snippet("c", "# Y\ntext"),
                snippet("d", "text"),
            ],
            ..Sources::default()
        };
        assert_eq!(
            codes(&sources, &Settings::default()),
            [(
                ErrorCode::UnusedSnippet,
                "snippet `d` is not included by any template".to_string()
            )]
        );
    }

    #[test]
    fn naming_and_exemptions() {
        let sources = Sources {
            templates: vec![
                template(
                    "Bad_Id",
                    "{{agent_name}} {{#if HasTools}}{{/if}} {{agent_name}}",
                ),
                template("good", "{{agentName}} {{snippet:s}}"),
            ],
            snippets: vec![snippet("s", "{{snake_case}}")],
            ..Sources::default()
        };
        let found = codes(&sources, &Settings::default());
        assert_eq!(found.len(), 4, "{found:?}");
        assert!(found.iter().all(|(c, _)| *c == ErrorCode::Naming));
        let lints = lint_sources(&sources, &Settings::default());
        let id = lints.iter().find(|l| l.message.starts_with("prompt id"));
        let help = id.and_then(|l| l.help.as_deref()).unwrap_or("");
        assert!(help.starts_with("rename the folder to `bad-id`"), "{help}");
    }

    #[test]
    fn empty_and_stray_files() {
        let sources = Sources {
            templates: vec![template("a", " \n ")],
            snippets: vec![],
            stray_files: vec!["templates/a/notes.txt".into()],
            ..Sources::default()
        };
        let found: Vec<_> = codes(&sources, &Settings::default())
            .into_iter()
            .map(|(c, _)| c)
            .collect();
        assert_eq!(found, [ErrorCode::StrayFile, ErrorCode::EmptyFile]);
    }

    #[test]
    fn near_miss_names_are_the_spaced_variables() {
        let file = SourceFile::new(
            "snippets/s.md",
            "{{ audience }} {{# if hasTools}}x{{/if}} {{ snippet:tail }} {{#each xs}} {{a b}} {{ Bad-name }}",
        );
        let found = near_miss_names(&file, &Delimiters::default());
        let names: Vec<&str> = found.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["audience", "hasTools"]);
        let lints = {
            let mut lints = Vec::new();
            let findings = find_tokens(file.text(), &Delimiters::default());
            near_misses(&file, &findings, &Delimiters::default(), &mut lints);
            lints
        };
        // The same place as the near-miss lint, so the build can join the two.
        assert!(
            found
                .iter()
                .all(|(_, at)| lints.iter().any(|l| l.location.as_ref() == Some(at)))
        );
        let angle = Delimiters::new("<<", ">>").expect("delimiters");
        let file = SourceFile::new("t.md", "<< who >> {{ not }}");
        let found = near_miss_names(&file, &angle);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].0, "who");
    }

    /// A naming lint never suggests a name that is taken: renaming onto it
    /// would merge two prompts, or two variables.
    #[test]
    fn naming_never_suggests_a_taken_name() {
        let sources = Sources {
            templates: vec![
                template("a_b", "{{agent_name}} {{agentName}} {{user_name}}"),
                template("a-b", "{{snippet:s}}"),
                template("c_d", "x"),
            ],
            snippets: vec![snippet("s", "{{tone_of}} {{#if toneOf}}{{/if}}")],
            ..Sources::default()
        };
        let helps: Vec<(String, String)> = lint_sources(&sources, &Settings::default())
            .into_iter()
            .map(|l| (l.message, l.help.unwrap_or_default()))
            .collect();
        let help = |message: &str| {
            helps
                .iter()
                .find(|(m, _)| m == message)
                .map(|(_, h)| h.split(", or exempt").next().unwrap_or_default())
        };
        assert_eq!(
            help("prompt id `a_b` is not kebab-case"),
            Some("rename the folder to a kebab-case name (`a-b` is taken)")
        );
        assert_eq!(
            help("prompt id `c_d` is not kebab-case"),
            Some("rename the folder to `c-d`")
        );
        let taken = "rename it to a camelCase name other than";
        let agent = help("variable `agent_name` is not camelCase").unwrap_or_default();
        assert!(agent.starts_with(taken), "{agent}");
        let tone = help("variable `tone_of` is not camelCase").unwrap_or_default();
        assert!(tone.starts_with(taken), "{tone}");
        let user = help("variable `user_name` is not camelCase").unwrap_or_default();
        assert!(user.starts_with("write `userName`"), "{user}");
    }

    /// `lint_sources` takes steps in proportion to the files and includes,
    /// however they combine: many templates, each including a long chain of
    /// snippets (no file looked up by a search among all, no chain walked
    /// once per template).
    #[test]
    fn lint_work_is_linear() {
        let steps = |templates: usize, chain: usize| {
            let sources = Sources {
                templates: (0..templates)
                    .map(|i| template(&format!("t{i}"), "{{snippet:s0}} {{agentName}}"))
                    .collect(),
                snippets: (0..chain)
                    .map(|i| snippet(&format!("s{i}"), &format!("{{{{snippet:s{}}}}}", i + 1)))
                    .collect(),
                ..Sources::default()
            };
            STEPS.with(|s| s.set(0));
            let lints = lint_sources(&sources, &Settings::default());
            // The last snippet includes one that does not exist: no lint.
            assert!(lints.is_empty(), "{:?}", lints.first());
            STEPS.with(std::cell::Cell::get)
        };
        for (templates, chain) in [(1, 1), (200, 1), (1, 200), (200, 200), (2000, 50)] {
            let size = templates + 2 * chain;
            let taken = steps(templates, chain);
            assert!(
                taken <= 8 * size,
                "{templates} templates, a chain of {chain} snippets: {taken} steps for {size} files and includes"
            );
        }
    }

    /// The cache gives the lints `lint_sources` gives, through edits,
    /// files coming and going and a change of delimiters, and scans again
    /// only the files whose text changed.
    #[test]
    fn cached_lints_are_the_lints_and_scan_only_what_changed() {
        let mut sources = Sources {
            templates: vec![
                template("a", "{{snippet:s}} {{ spaced }} {{agent_name}}"),
                template("b", "```\n{{x}}\n"),
            ],
            snippets: vec![snippet("s", "{{#if on}}yes{{/if}}"), snippet("unused", "")],
            ..Sources::default()
        };
        let settings = Settings::default();
        let mut cache = LintCache::default();
        let mut lints_and_scans = |sources: &Sources, settings: &Settings| {
            STEPS.with(|s| s.set(0));
            let cached = lint_sources_cached(sources, settings, &mut cache);
            let scans = STEPS.with(std::cell::Cell::get);
            assert_eq!(cached, lint_sources(sources, settings));
            (cached, scans)
        };
        let (first, first_steps) = lints_and_scans(&sources, &settings);
        assert!(!first.is_empty());
        let (again, again_steps) = lints_and_scans(&sources, &settings);
        assert_eq!(again, first);
        // Only the include graph's walk: no file scanned again.
        assert_eq!(
            first_steps - again_steps,
            4,
            "{first_steps} then {again_steps}"
        );

        sources.templates[1].system =
            SourceFile::new("templates/b/system.md", "{{snippet:unused}}");
        let (edited, edited_steps) = lints_and_scans(&sources, &settings);
        assert_ne!(edited, first);
        assert!(
            edited_steps < first_steps,
            "{edited_steps} of {first_steps}"
        );
        sources.snippets.pop();
        sources.templates.push(template("c", ""));
        lints_and_scans(&sources, &settings);
        let angled = Settings {
            delimiters: Delimiters::new("<<", ">>").expect("delimiters"),
            ..Settings::default()
        };
        lints_and_scans(&sources, &angled);
        lints_and_scans(&sources, &settings);
    }

    #[test]
    fn camel_and_kebab() {
        assert_eq!(to_camel_case("agent_name"), "agentName");
        assert_eq!(to_camel_case("AgentName"), "agentName");
        assert_eq!(to_camel_case("HAS_TOOLS"), "hasTools");
        assert_eq!(to_camel_case("next-agent"), "nextAgent");
        assert_eq!(to_kebab_case("Agent_System"), "agent-system");
        assert_eq!(to_kebab_case("agentSystem"), "agent-system");
        assert!(is_camel_case("userID") && !is_camel_case("user_id") && !is_camel_case("User"));
    }

    /// The lints of conversations, each with what it reports and where:
    /// `(messages.md, the lints as "code line:column help")`.
    #[test]
    fn conversations_are_linted_for_empty_messages_their_end_unpaired_calls_and_misspelled_roles() {
        let cases: &[(&str, &[&str])] = &[
            ("{{#user}}\nHi.\n{{/user}}\n", &[]),
            (
                "{{#user}}\n  \n{{/user}}\n{{#user}}Q{{/user}}",
                &["empty_message 1:1"],
            ),
            (
                "{{#user}}Q{{/user}}\n{{#assistant}}\nA\n{{/assistant}}\n",
                &["ends_with_assistant 2:1"],
            ),
            (
                "---\nvars:\n  history: {kind: messages}\n---\n{{#assistant}}A{{/assistant}}\n{{history}}\n",
                &[],
            ),
            (
                "{{#user}}Q{{/user}}\n{{#asistant}}A{{/assistant}}",
                &["near_miss 2:1 a role tag is misspelled: write `{{#assistant}}`"],
            ),
            // A call answered by its result, the assistant's text before it.
            (
                "{{#user}}Q{{/user}}\n{{#assistant}}L{{/assistant}}\n{{#call f}}{}{{/call}}\n{{#tool f}}R{{/tool}}\n{{#user}}Q{{/user}}",
                &[],
            ),
            // Two calls, answered out of order: each result finds its tool.
            (
                "{{#call f}}{}{{/call}}\n{{#call g}}{}{{/call}}\n{{#tool g}}R{{/tool}}\n{{#tool f}}R{{/tool}}\n{{#user}}Q{{/user}}",
                &[],
            ),
            // A result with no call before it.
            (
                "{{#user}}Q{{/user}}\n{{#tool f}}R{{/tool}}\n{{#user}}Q{{/user}}",
                &["unpaired_call 2:1"],
            ),
            // A result of another tool than the one called: both unpaired.
            (
                "{{#call f}}{}{{/call}}\n{{#tool g}}R{{/tool}}\n{{#user}}Q{{/user}}",
                &["unpaired_call 1:1", "unpaired_call 2:1"],
            ),
            // A call the user speaks after, and one at the end of the file.
            (
                "{{#call f}}{}{{/call}}\n{{#user}}Q{{/user}}\n{{#call f}}{}{{/call}}",
                &["unpaired_call 1:1", "unpaired_call 3:1"],
            ),
            // A call in one arm of an `{{#if}}` is answered in that arm.
            (
                "{{#if x}}\n{{#call f}}{}{{/call}}\n{{else}}\n{{#tool f}}R{{/tool}}\n{{/if}}\n{{#user}}Q{{/user}}",
                &["unpaired_call 2:1", "unpaired_call 4:1"],
            ),
        ];
        for (messages, expected) in cases {
            let sources = Sources {
                templates: vec![TemplateSource {
                    messages: Some(SourceFile::new("templates/t/messages.md", *messages)),
                    ..template("t", "S")
                }],
                ..Sources::default()
            };
            let found: Vec<String> = lint_sources(&sources, &Settings::default())
                .iter()
                .map(|l| {
                    let at = l.location.as_ref().expect("located");
                    let help = match (&l.help, l.code) {
                        (Some(help), ErrorCode::NearMiss) => format!(" {help}"),
                        _ => String::new(),
                    };
                    format!("{} {}:{}{help}", l.code, at.line(), at.column())
                })
                .collect();
            assert_eq!(&found, expected, "{messages:?}");
        }
    }

    /// A role tag in system.md is literal text, and `near_miss` says where
    /// it would be a token.
    #[test]
    fn a_role_tag_outside_messages_md_is_a_near_miss() {
        let sources = Sources {
            templates: vec![template("t", "{{#user}}Hi{{/user}}")],
            ..Sources::default()
        };
        let lints = lint_sources(&sources, &Settings::default());
        assert_eq!(lints.len(), 2, "{lints:?}");
        assert!(lints.iter().all(|l| l.code == ErrorCode::NearMiss));
        assert!(
            lints[0].message.contains("role tag"),
            "{}",
            lints[0].message
        );
    }

    /// `{{schema:response}}` is a token, no near miss; a near form of it
    /// (spaced, without its colon) stays text and is warned of, with the
    /// token it was meant to be.
    #[test]
    fn the_schema_token_is_no_near_miss_but_its_near_forms_are() {
        let text = "---\nresponse:\n  a: string\n---\n{{schema:response}}\n{{ schema:response }}\n{{schema response}}\n";
        let sources = Sources {
            templates: vec![template("t", text)],
            ..Sources::default()
        };
        let lints = lint_sources(&sources, &Settings::default());
        let found: Vec<(ErrorCode, &str, Option<&str>)> = lints
            .iter()
            .map(|l| (l.code, l.message.as_str(), l.help.as_deref()))
            .collect();
        assert_eq!(
            found,
            [
                (
                    ErrorCode::NearMiss,
                    "`{{ schema:response }}` is not a token and reaches the model literally",
                    Some("write `{{schema:response}}`: no spaces inside the delimiters")
                ),
                (
                    ErrorCode::NearMiss,
                    "`{{schema response}}` is not a schema token and reaches the model literally",
                    Some(
                        "write `{{schema:response}}`, which prints the shape of the answer the prompt's front matter declares under `response:`"
                    )
                ),
            ]
        );
    }

    /// A snippet included only from a conversation is a used snippet.
    #[test]
    fn a_snippet_a_conversation_includes_is_used() {
        let sources = Sources {
            templates: vec![TemplateSource {
                messages: Some(SourceFile::new(
                    "templates/t/messages.md",
                    "{{snippet:turns}}\n{{#user}}{{snippet:text}}{{/user}}",
                )),
                ..template("t", "S")
            }],
            snippets: vec![
                snippet("turns", "{{#user}}Q{{/user}}"),
                snippet("text", "T"),
            ],
            ..Sources::default()
        };
        let lints = lint_sources(&sources, &Settings::default());
        assert!(lints.is_empty(), "{lints:?}");
    }
}

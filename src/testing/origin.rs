//! Where a survivor comes from: the template or snippet file, or a value.

#[allow(unused_imports)]
use super::prelude::*;

/// The prompt files of a crate, read once per run to say where a survivor's
/// text comes from.
pub(super) struct PromptFiles {
    /// The delimiters the prompts were compiled with.
    pub(super) delimiters: Delimiters,
    /// The files of each template folder, by prompt id.
    pub(super) templates: BTreeMap<String, TemplateFiles>,
    /// Each snippet file, by the name it is included by.
    pub(super) snippets: BTreeMap<String, SourceFile>,
}

/// The files of one template folder.
pub(super) struct TemplateFiles {
    system: SourceFile,
    user: Option<SourceFile>,
    messages: Option<SourceFile>,
}

/// Which file of a template folder a rendered text comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FilePart {
    /// `system.md`.
    System,
    /// `user.md`.
    User,
    /// `messages.md`: any message of a conversation.
    Messages,
}

impl fmt::Debug for PromptFiles {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PromptFiles")
            .field("delimiters", &self.delimiters)
            .field("templates", &self.templates.keys().collect::<Vec<_>>())
            .field("snippets", &self.snippets.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl PromptFiles {
    /// What can be read of the folders `config` points at; a file that
    /// cannot be read is simply not there.
    pub(super) fn read(config: &Config, delimiters: Delimiters) -> PromptFiles {
        let (sources, _problems) = promptpack_load::read_sources(config);
        PromptFiles {
            delimiters,
            templates: sources
                .templates
                .into_iter()
                .map(|t| {
                    let files = TemplateFiles {
                        system: t.system,
                        user: t.user,
                        messages: t.messages,
                    };
                    (t.id, files)
                })
                .collect(),
            snippets: sources
                .snippets
                .into_iter()
                .map(|s| (s.name, s.file))
                .collect(),
        }
    }

    /// The files a part of a prompt is made of: the part, then the snippets
    /// it includes, and theirs, in order of first inclusion.
    pub(super) fn chain(&self, prompt: &str, part: FilePart) -> Vec<&SourceFile> {
        let Some(files) = self.templates.get(prompt) else {
            return Vec::new();
        };
        let part = match part {
            FilePart::System => Some(&files.system),
            FilePart::User => files.user.as_ref(),
            FilePart::Messages => files.messages.as_ref(),
        };
        let mut chain: Vec<&SourceFile> = part.into_iter().collect();
        let mut seen = BTreeSet::new();
        let mut i = 0;
        while let Some(file) = chain.get(i).copied() {
            for token in find_tokens(file.text(), &self.delimiters) {
                if token.kind == FindingKind::Snippet
                    && let Some(name) = token.name(file.text())
                    && seen.insert(name.to_string())
                    && let Some(snippet) = self.snippets.get(name)
                {
                    chain.push(snippet);
                }
            }
            i += 1;
        }
        chain
    }

    /// For each survivor of `rendered` (a part of `prompt`, or a message of
    /// its conversation), the
    /// `file:line:col` its text comes from, or `from a value`; `None` when
    /// the part's file was not found.
    ///
    /// The text comes from the first place in the part, else in a snippet,
    /// where it is written other than as a token the render replaces.
    /// Where it is written several times, the place written as the same
    /// kind of survivor and with the most of its line around it as in the
    /// rendered text wins, and one not given to an earlier survivor.
    pub(super) fn origins(
        &self,
        prompt: &str,
        part: FilePart,
        rendered: &str,
        findings: &[Finding],
    ) -> Option<Vec<String>> {
        let chain = self.chain(prompt, part);
        // In a conversation's files a role tag is a token the render
        // consumes (it never reaches a message's text), as the other tokens.
        let consumed = |kind: FindingKind| {
            kind.is_token() || (part == FilePart::Messages && kind == FindingKind::RoleTag)
        };
        if chain.is_empty() {
            return None;
        }
        let scanned: Vec<Vec<Finding>> = chain
            .iter()
            .map(|file| find_tokens(file.text(), &self.delimiters))
            .collect();
        let mut used = BTreeSet::new();
        let origins = findings
            .iter()
            .map(|finding| {
                let needle = finding.text(rendered);
                // ((same kind, context, unused), file, offset)
                let mut best: Option<((bool, usize, bool), usize, usize)> = None;
                for (i, (file, tokens)) in chain.iter().zip(&scanned).enumerate() {
                    let text = file.text();
                    for (start, _) in text.match_indices(needle).filter(|_| !needle.is_empty()) {
                        let end = start + needle.len();
                        let replaced = tokens
                            .iter()
                            .any(|t| consumed(t.kind) && t.span.start < end && start < t.span.end);
                        if replaced {
                            continue;
                        }
                        let same_kind = tokens.iter().any(|t| {
                            t.span.start == start && t.span.end == end && t.kind == finding.kind
                        });
                        let context = shared_context(rendered, finding.span, text, start, end);
                        let score = (same_kind, context, !used.contains(&(i, start)));
                        if best.as_ref().is_none_or(|(s, ..)| score > *s) {
                            best = Some((score, i, start));
                        }
                    }
                }
                match best {
                    Some((_, i, start)) => {
                        used.insert((i, start));
                        let end = start + needle.len();
                        let at = chain[i].location(Span { start, end });
                        format!("{}:{}:{}", at.path(), at.line(), at.column())
                    }
                    None => "from a value".to_string(),
                }
            })
            .collect();
        Some(origins)
    }
}

/// How many characters around a survivor on its line (before it, and after
/// it) are the same in the rendered text and at `start..end` of a file.
pub(super) fn shared_context(
    rendered: &str,
    span: Span,
    file: &str,
    start: usize,
    end: usize,
) -> usize {
    pub(super) fn line_start(text: &str, at: usize) -> usize {
        text[..at].rfind('\n').map_or(0, |i| i + 1)
    }
    pub(super) fn line_end(text: &str, at: usize) -> usize {
        text[at..].find('\n').map_or(text.len(), |i| at + i)
    }
    let before_rendered = &rendered[line_start(rendered, span.start)..span.start];
    let before_file = &file[line_start(file, start)..start];
    let after_rendered = &rendered[span.end..line_end(rendered, span.end)];
    let after_file = &file[end..line_end(file, end)];
    let before = before_rendered
        .chars()
        .rev()
        .zip(before_file.chars().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let after = after_rendered
        .chars()
        .zip(after_file.chars())
        .take_while(|(a, b)| a == b)
        .count();
    before + after
}

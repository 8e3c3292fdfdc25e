//! The names record: each prompt's variables at the build script's last
//! successful generation, kept in `OUT_DIR` so that the next run can tell a
//! renamed variable (and so a renamed field of the vars struct) apart from a
//! new one, and say where the rename is.
//!
//! One line per prompt: its id, then its variable names, then, marked `-`,
//! the names it lost the last time its names changed (a variable name never
//! starts with `-`, an id never holds a space):
//!
//! ```text
//! # promptpack: …
//! assistant agentNmae userName -agentName
//! ```

use promptpack_core::resolve::ResolvedPrompt;
use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;
use std::path::Path;

/// The record's file name in `OUT_DIR`.
pub(crate) const NAMES_FILE: &str = "promptpack_names.txt";

/// What the record holds for every prompt, by id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct NameRecord {
    pub(crate) prompts: BTreeMap<String, RecordedNames>,
}

/// One prompt's line of the record.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RecordedNames {
    /// Its variables, in order of first use.
    pub(crate) names: Vec<String>,
    /// The names it lost the last time its names changed: a variable that
    /// comes back is a rename undone, not a new typo.
    pub(crate) dropped: Vec<String>,
}

impl NameRecord {
    /// The record of the last run, or `None` when there is none (the first
    /// build, or one after `cargo clean`) or it cannot be read.
    pub(crate) fn read(path: &Path) -> Option<NameRecord> {
        std::fs::read_to_string(path)
            .ok()
            .map(|text| NameRecord::parse(&text))
    }

    /// Parses the record's text; lines it does not understand are skipped.
    pub(crate) fn parse(text: &str) -> NameRecord {
        let mut prompts = BTreeMap::new();
        for line in text.lines() {
            let mut words = line.split_whitespace();
            let Some(id) = words.next().filter(|id| !id.starts_with('#')) else {
                continue;
            };
            let mut names = RecordedNames::default();
            for word in words {
                match word.strip_prefix('-') {
                    Some(dropped) if !dropped.is_empty() => names.dropped.push(dropped.to_string()),
                    Some(_) => {}
                    None => names.names.push(word.to_string()),
                }
            }
            prompts.insert(id.to_string(), names);
        }
        NameRecord { prompts }
    }

    /// The record's text.
    pub(crate) fn render(&self) -> String {
        let mut out = String::from(
            "# promptpack: each prompt's variables at the build script's last generation \
             (-name: lost when they last changed), for the build's rename warnings\n",
        );
        for (id, recorded) in &self.prompts {
            out.push_str(id);
            for name in &recorded.names {
                let _ = write!(out, " {name}");
            }
            for name in &recorded.dropped {
                let _ = write!(out, " -{name}");
            }
            out.push('\n');
        }
        out
    }

    /// The record after a generation of `prompts`: their names now, and for
    /// each prompt whose names changed since `previous`, the names it lost
    /// (kept from `previous` when they did not change).
    pub(crate) fn next(prompts: &[ResolvedPrompt], previous: Option<&NameRecord>) -> NameRecord {
        let prompts = prompts
            .iter()
            .map(|p| {
                let names: Vec<String> = p.vars.iter().map(|v| v.name.clone()).collect();
                let before = previous.and_then(|r| r.prompts.get(&p.id));
                // A set, not a scan per name: a prompt may have thousands.
                let now: HashSet<&str> = names.iter().map(String::as_str).collect();
                let dropped = match before {
                    Some(before) if same_set(&before.names, &now) => before.dropped.clone(),
                    Some(before) => before
                        .names
                        .iter()
                        .filter(|n| !now.contains(n.as_str()))
                        .cloned()
                        .collect(),
                    None => Vec::new(),
                };
                (p.id.clone(), RecordedNames { names, dropped })
            })
            .collect();
        NameRecord { prompts }
    }
}

/// Whether the names `a` (each once) are the names `b`.
fn same_set(a: &[String], b: &HashSet<&str>) -> bool {
    a.len() == b.len() && a.iter().all(|n| b.contains(n.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use promptpack_core::resolve::resolve;
    use promptpack_core::{Delimiters, SourceFile, TemplateSource};

    fn prompts(templates: &[(&str, &str)]) -> Vec<ResolvedPrompt> {
        let templates: Vec<TemplateSource> = templates
            .iter()
            .map(|(id, text)| TemplateSource {
                id: (*id).to_string(),
                system: SourceFile::new(format!("templates/{id}/system.md"), *text),
                user: None,
                messages: None,
            })
            .collect();
        let (prompts, errors) = resolve(&templates, &[], &Delimiters::default());
        assert!(errors.is_empty(), "{errors:?}");
        prompts
    }

    #[test]
    fn round_trip() {
        let first = NameRecord::next(
            &prompts(&[
                (
                    "assistant",
                    "{{agentName}} {{#if hasTools}}{{userName}}{{/if}}",
                ),
                ("empty", "no variables"),
            ]),
            None,
        );
        let text = first.render();
        assert!(
            text.contains("\nassistant agentName hasTools userName\nempty\n"),
            "{text}"
        );
        assert_eq!(NameRecord::parse(&text), first);

        let second = NameRecord::next(
            &prompts(&[(
                "assistant",
                "{{agentNmae}} {{#if hasTools}}{{userName}}{{/if}}",
            )]),
            Some(&first),
        );
        let text = second.render();
        assert!(
            text.ends_with("\nassistant agentNmae hasTools userName -agentName\n"),
            "{text}"
        );
        assert_eq!(NameRecord::parse(&text), second);
        let assistant = &second.prompts["assistant"];
        assert!(
            assistant.names.iter().any(|n| n == "agentNmae")
                && !assistant.names.iter().any(|n| n == "agentName")
        );
        assert!(
            !second.prompts.contains_key("empty"),
            "a deleted prompt leaves"
        );

        // Names unchanged (a text edit): what was lost is remembered.
        let third = NameRecord::next(
            &prompts(&[(
                "assistant",
                "Hi {{userName}} {{agentNmae}} {{#if hasTools}}!{{/if}}",
            )]),
            Some(&second),
        );
        assert_eq!(third.prompts["assistant"].dropped, ["agentName"]);
    }

    #[test]
    fn unreadable_lines_are_skipped() {
        let record = NameRecord::parse("# comment\n\n  \nx a - -b\n");
        assert_eq!(record.prompts.len(), 1);
        assert_eq!(record.prompts["x"].names, ["a"]);
        assert_eq!(record.prompts["x"].dropped, ["b"]);
        let dir = tempfile::tempdir().expect("temp dir");
        assert_eq!(NameRecord::read(&dir.path().join(NAMES_FILE)), None);
        std::fs::write(dir.path().join(NAMES_FILE), record.render()).expect("write");
        assert_eq!(NameRecord::read(&dir.path().join(NAMES_FILE)), Some(record));
    }
}

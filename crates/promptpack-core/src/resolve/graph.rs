//! The include graph of the snippets: whole snippets and the sections
//! included, as nodes. Finds each include's target (reporting a missing
//! snippet or section), and cycles, each reported once.

use super::missing::{section_not_found, snippet_not_found};
use super::snippets::{Parse, ParsedSnippet};
use crate::error::{Diagnostic, ErrorCode};
use crate::sections::Headings;
use crate::source_file::SourceFile;
use crate::sources::SnippetSource;
use crate::syntax::{Delimiters, Include, Item, Parsed, parse_conversation};
use std::collections::{HashMap, HashSet};

/// The includes of a parsed file, in order.
pub(super) fn snippet_refs(parsed: &Parsed) -> impl Iterator<Item = &Include> {
    parsed.items.iter().filter_map(|i| match i {
        Item::Snippet(include) => Some(include),
        _ => None,
    })
}

/// What an include splices: a whole snippet, or the section under one of
/// its headings (by index, so that a heading's slug and its id are one
/// target).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct Target<'a> {
    pub(super) name: &'a str,
    pub(super) section: Option<usize>,
}

/// The sections of one snippet that includes name.
struct Sections {
    headings: Headings,
    /// The heading each section name included names.
    found: HashMap<String, usize>,
    /// The sections included, parsed, by heading.
    parsed: HashMap<usize, SectionFile>,
}

/// One section as a file of its own: the snippet's file narrowed to it.
struct SectionFile {
    file: SourceFile,
    parsed: Option<Parsed>,
}

#[derive(Clone, Copy, PartialEq)]
enum State {
    Visiting,
    Done(bool),
}

/// One file on the include chain of the graph check: the includes it
/// makes, how many were followed, and whether all so far are usable.
struct Frame<'a> {
    target: Target<'a>,
    file: SourceFile,
    refs: Vec<Include>,
    next: usize,
    ok: bool,
}

/// The include graph: whole snippets and the sections included, as nodes.
/// Reports missing snippets and sections and cycles, each once, and knows
/// which targets can be spliced: parsed, and everything they include,
/// transitively, exists, parses and is free of cycles. A section is parsed
/// on its first include, with the snippet's headings found then.
pub(super) struct SnippetGraph<'s, 'a> {
    snippets: &'s HashMap<&'a str, ParsedSnippet<'a>>,
    sections: HashMap<&'a str, Sections>,
    state: HashMap<Target<'a>, State>,
    delims: &'s Delimiters,
    unreadable: &'s [String],
    /// The snippets that hold whole turns (role blocks): they go between a
    /// conversation's messages, never into a text.
    turns: HashSet<&'a str>,
}

impl<'s, 'a> SnippetGraph<'s, 'a> {
    pub(super) fn new(
        snippets: &'s HashMap<&'a str, ParsedSnippet<'a>>,
        delims: &'s Delimiters,
        unreadable: &'s [String],
    ) -> Self {
        let role_tag = [format!("{}#", delims.open()), format!("{}/", delims.open())];
        let turns = snippets
            .iter()
            .filter(|(_, s)| {
                role_tag
                    .iter()
                    .any(|tag| s.file.text().contains(tag.as_str()))
            })
            .filter(|(_, s)| {
                parse_conversation(s.file, delims)
                    .is_ok_and(|p| p.items.iter().any(|i| matches!(i, Item::OpenMessage(_))))
            })
            .map(|(&name, _)| name)
            .collect();
        SnippetGraph {
            snippets,
            sections: HashMap::new(),
            state: HashMap::new(),
            delims,
            unreadable,
            turns,
        }
    }

    /// Whether snippet `name` holds whole turns (role blocks).
    /// The delimiters the snippets are read with.
    pub(super) fn delims(&self) -> &Delimiters {
        self.delims
    }

    pub(super) fn holds_turns(&self, name: &str) -> bool {
        self.turns.contains(name)
    }

    /// Checks every snippet, in order, and all it includes.
    pub(super) fn check_all(
        &mut self,
        snippets: &'a [SnippetSource],
        parse: Parse<'_>,
        errors: &mut Vec<Diagnostic>,
    ) {
        for root in snippets {
            let root = Target {
                name: root.name.as_str(),
                section: None,
            };
            if !self.state.contains_key(&root) {
                self.check(root, parse, errors);
            }
        }
    }

    /// Whether `include`, in `file`, can be spliced; reports what it finds
    /// wrong that was not reported before.
    pub(super) fn usable(
        &mut self,
        file: &SourceFile,
        include: &Include,
        parse: Parse<'_>,
        errors: &mut Vec<Diagnostic>,
    ) -> bool {
        self.target(file, include, parse, errors)
            .is_some_and(|target| self.check(target, parse, errors))
    }

    /// The target of `include`, in `file`: reports a missing snippet (one
    /// that was read) or section, and parses a section on its first include.
    fn target(
        &mut self,
        file: &SourceFile,
        include: &Include,
        parse: Parse<'_>,
        errors: &mut Vec<Diagnostic>,
    ) -> Option<Target<'a>> {
        let Some((&name, snippet)) = self.snippets.get_key_value(include.name.name.as_str()) else {
            if !self.unreadable.contains(&include.name.name) {
                // Sorted, so that of two names as near, the one suggested
                // does not depend on the map's order.
                let mut names: Vec<&str> = self.snippets.keys().copied().collect();
                names.sort_unstable();
                errors.push(snippet_not_found(file, &include.name, &names, self.delims));
            }
            return None;
        };
        let Some(section) = &include.section else {
            return Some(Target {
                name,
                section: None,
            });
        };
        let sections = self.sections.entry(name).or_insert_with(|| Sections {
            headings: Headings::of(snippet.file),
            found: HashMap::new(),
            parsed: HashMap::new(),
        });
        let Some(index) = sections.headings.find(section) else {
            errors.push(section_not_found(
                file,
                include,
                snippet.file,
                &sections.headings,
                self.delims,
            ));
            return None;
        };
        sections.found.insert(section.clone(), index);
        sections.parsed.entry(index).or_insert_with(|| {
            let file = snippet.file.with_body(sections.headings.list[index].section);
            // A snippet that does not parse has been reported whole: its
            // sections would only repeat that.
            let heading = sections.headings.list[index].name();
            let parsed = snippet.parsed.as_ref().and_then(|_| {
                parse(&file)
                    .map_err(|found| {
                        // The whole snippet parses: what is wrong is a block
                        // that crosses the section's edge.
                        errors.extend(found.into_iter().map(|e| {
                            e.with_help(format!(
                                "a section is parsed on its own: open and close each block within the section `{heading}` of snippet `{name}`"
                            ))
                        }));
                    })
                    .ok()
            });
            SectionFile { file, parsed }
        });
        Some(Target {
            name,
            section: Some(index),
        })
    }

    /// The snippet named `name`, as read.
    pub(super) fn snippet(&self, name: &str) -> Option<&ParsedSnippet<'a>> {
        self.snippets.get(name)
    }

    /// The target an include already checked names, as [`SnippetGraph::target`]
    /// found it.
    pub(super) fn find(&self, include: &Include) -> Option<Target<'a>> {
        let (&name, _) = self.snippets.get_key_value(include.name.name.as_str())?;
        let section = match &include.section {
            Some(section) => Some(*self.sections.get(name)?.found.get(section)?),
            None => None,
        };
        Some(Target { name, section })
    }

    /// The file of a target and its items, when it parsed.
    pub(super) fn node(&self, target: Target<'a>) -> (&SourceFile, Option<&Parsed>) {
        let whole = &self.snippets[target.name];
        match target
            .section
            .and_then(|i| self.sections.get(target.name)?.parsed.get(&i))
        {
            Some(section) => (&section.file, section.parsed.as_ref()),
            None => (whole.file, whole.parsed.as_ref()),
        }
    }

    /// How a cycle message names a target: `name` or `name#heading`.
    fn label(&self, target: Target<'a>) -> String {
        let heading = target
            .section
            .and_then(|i| self.sections.get(target.name)?.headings.list.get(i));
        match heading {
            Some(h) => format!("{}#{}", target.name, h.name()),
            None => target.name.to_string(),
        }
    }

    fn frame(&self, target: Target<'a>) -> Frame<'a> {
        let (file, parsed) = self.node(target);
        Frame {
            target,
            file: file.clone(),
            refs: parsed
                .map(|p| snippet_refs(p).cloned().collect())
                .unwrap_or_default(),
            next: 0,
            ok: parsed.is_some(),
        }
    }

    /// Whether `root` can be spliced: a depth-first search of what it
    /// includes, reporting what is missing and every cycle met.
    fn check(&mut self, root: Target<'a>, parse: Parse<'_>, errors: &mut Vec<Diagnostic>) -> bool {
        if let Some(&State::Done(ok)) = self.state.get(&root) {
            return ok;
        }
        self.state.insert(root, State::Visiting);
        // The include chain so far.
        let mut path = vec![self.frame(root)];
        while let Some(frame) = path.last_mut() {
            let Some(include) = frame.refs.get(frame.next).cloned() else {
                if let Some(done) = path.pop() {
                    self.state.insert(done.target, State::Done(done.ok));
                    if let Some(parent) = path.last_mut() {
                        parent.ok &= done.ok;
                    }
                }
                continue;
            };
            frame.next += 1;
            let file = frame.file.clone();
            let Some(target) = self.target(&file, &include, parse, errors) else {
                frame.ok = false;
                continue;
            };
            match self.state.get(&target).copied() {
                Some(State::Done(good)) => frame.ok &= good,
                Some(State::Visiting) => {
                    frame.ok = false;
                    let from = path.iter().position(|f| f.target == target).unwrap_or(0);
                    let mut cycle: Vec<String> =
                        path[from..].iter().map(|f| self.label(f.target)).collect();
                    cycle.push(self.label(target));
                    errors.push(
                        Diagnostic::new(
                            ErrorCode::SnippetCycle,
                            format!(
                                "snippets include each other in a cycle: {}",
                                cycle.join(" -> ")
                            ),
                        )
                        .at(file.location(include.name.span))
                        .with_help("a snippet may not include itself, directly or through others"),
                    );
                }
                None => {
                    self.state.insert(target, State::Visiting);
                    path.push(self.frame(target));
                }
            }
        }
        self.state.get(&root) == Some(&State::Done(true))
    }
}

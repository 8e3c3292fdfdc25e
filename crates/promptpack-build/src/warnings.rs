//! What the build script tells cargo to show as warnings: every lint of the
//! pipeline (what `promptpack check` warns about), and likely typos in
//! variable names, each with the template's file, line and column. A typo in
//! a template otherwise surfaces as a rustc error about a field of a vars
//! struct that names no template.
//!
//! A typo is a variable one or two edits (Damerau–Levenshtein) from
//! - another variable of the same prompt (`{{userName}}` and `{{usreName}}`),
//! - or a variable the prompt had at the last build and has lost
//!   (`{{agentName}}` edited into `{{agentNmae}}`: the field `agent_name`
//!   became `agent_nmae`), from the [`NameRecord`] in `OUT_DIR`;
//!
//! and a name written only in a near-miss (`{{ audience }}`, no real
//! `{{audience}}`) gets its `near_miss` lint extended: the spaces make it
//! text, so the vars struct has no such field.

use crate::names::field_ident;
use crate::record::NameRecord;
use heck::{ToSnakeCase, ToUpperCamelCase};
use promptpack_core::error::{Diagnostic, ErrorCode, Location};
use promptpack_core::lint::near_miss_names;
use promptpack_core::program::{Op, VarInfo};
use promptpack_core::resolve::ResolvedPrompt;
use promptpack_core::settings::Settings;
use promptpack_core::similar::edit_distance;
use promptpack_core::source_file::SourceFile;
use promptpack_load::Compiled;
use std::collections::{HashMap, HashSet};
use std::fmt;

/// One warning for cargo: `path:line:col: code: message (help: …)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Warning {
    pub(crate) location: Option<Location>,
    /// A lint's code (`near_miss`, …), or `typo`.
    pub(crate) code: &'static str,
    pub(crate) message: String,
    pub(crate) help: Option<String>,
}

impl From<&Diagnostic> for Warning {
    fn from(d: &Diagnostic) -> Warning {
        Warning {
            location: d.location.clone(),
            code: d.code.as_str(),
            message: d.message.clone(),
            help: d.help.clone(),
        }
    }
}

impl fmt::Display for Warning {
    /// One line, as `cargo:warning=` and `cargo::error=` need: line breaks
    /// become spaces.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut line = String::new();
        if let Some(loc) = &self.location {
            line = format!("{}:{}:{}: ", loc.path(), loc.line(), loc.column());
        }
        line.push_str(self.code);
        line.push_str(": ");
        line.push_str(&self.message);
        if let Some(help) = &self.help {
            line.push_str(" (help: ");
            line.push_str(help);
            line.push(')');
        }
        f.write_str(&line.replace(['\r', '\n'], " "))
    }
}

/// Every warning of a build, sorted by file, line and column: the lints of
/// `compiled` (those of near-misses of names no prompt has, extended) and
/// the typos of its prompts, against each other and against `previous`, the
/// last build's names.
pub(crate) fn build_warnings(
    compiled: &Compiled,
    previous: Option<&NameRecord>,
    settings: &Settings,
) -> Vec<Warning> {
    let mut warnings: Vec<Warning> = compiled.warnings.iter().map(Warning::from).collect();
    explain_near_misses(compiled, settings, &mut warnings);
    for prompt in &compiled.prompts {
        warnings.extend(typos(prompt, previous));
    }
    let key = |w: &Warning| {
        w.location
            .as_ref()
            .map(|l| (l.path().to_string(), l.line(), l.column()))
    };
    warnings.sort_by_key(key);
    warnings
}

/// Extends the `near_miss` lint of `{{ audience }}` when none of the prompts
/// its file is part of has a variable `audience`.
///
/// Linear in the warnings, files and prompts: each lint is found by its
/// place in a map, each file's prompts by id or from one pass over the
/// prompts' snippets, and only files with a near-miss are looked at (a scan
/// of every warning for every near-miss, and of every prompt for every
/// file, took a debug build script 12 s for 4,000 near-misses on one line).
fn explain_near_misses(compiled: &Compiled, settings: &Settings, warnings: &mut [Warning]) {
    // Each near-miss lint by its place; the first one where two share it.
    let mut lints: HashMap<(String, usize, usize), usize> = HashMap::new();
    for (i, w) in warnings.iter().enumerate() {
        if w.code == ErrorCode::NearMiss.as_str()
            && let Some(l) = &w.location
        {
            lints
                .entry((l.path().to_string(), l.line(), l.column()))
                .or_insert(i);
        }
    }
    if lints.is_empty() {
        return;
    }
    let files: HashSet<&str> = lints.keys().map(|(path, _, _)| path.as_str()).collect();
    let by_id: HashMap<&str, &ResolvedPrompt> = compiled
        .prompts
        .iter()
        .map(|p| (p.id.as_str(), p))
        .collect();
    let mut users: HashMap<&str, Vec<&ResolvedPrompt>> = HashMap::new();
    for prompt in &compiled.prompts {
        for snippet in &prompt.snippets {
            users.entry(snippet.as_str()).or_default().push(prompt);
        }
    }
    let sources = &compiled.sources;
    let template_files = sources.templates.iter().flat_map(|t| {
        let prompts: Vec<&ResolvedPrompt> = by_id.get(t.id.as_str()).copied().into_iter().collect();
        std::iter::once(&t.system)
            .chain(t.user.as_ref())
            .map(move |f| (f, prompts.clone()))
    });
    let snippet_files = sources.snippets.iter().map(|s| {
        (
            &s.file,
            users.get(s.name.as_str()).cloned().unwrap_or_default(),
        )
    });
    for (file, prompts) in template_files.chain(snippet_files) {
        if files.contains(file.path()) {
            explain_file(file, &prompts, settings, &lints, warnings);
        }
    }
}

/// At most this many vars structs are named in one extended lint: a snippet
/// included by a thousand prompts would otherwise name a thousand structs
/// in each of its lints.
const STRUCTS_NAMED: usize = 3;

fn explain_file(
    file: &SourceFile,
    prompts: &[&ResolvedPrompt],
    settings: &Settings,
    lints: &HashMap<(String, usize, usize), usize>,
    warnings: &mut [Warning],
) {
    if prompts.is_empty() {
        return;
    }
    let names: HashSet<&str> = prompts
        .iter()
        .flat_map(|p| p.vars.iter().map(|v| v.name.as_str()))
        .collect();
    let mut structs: Vec<String> = prompts
        .iter()
        .take(STRUCTS_NAMED)
        .map(|p| format!("`{}`", struct_name(&p.id)))
        .collect();
    if prompts.len() > STRUCTS_NAMED {
        structs.push(format!("{} more", prompts.len() - STRUCTS_NAMED));
    }
    let structs = structs.join(", ");
    let (has, which) = match prompts.len() {
        1 => ("has", "the prompt does not use elsewhere"),
        _ => ("have", "no prompt that includes this file uses elsewhere"),
    };
    for (name, at) in near_miss_names(file, &settings.delimiters) {
        if names.contains(name.as_str()) {
            continue;
        }
        let key = (at.path().to_string(), at.line(), at.column());
        let Some(lint) = lints.get(&key).and_then(|&i| warnings.get_mut(i)) else {
            continue;
        };
        lint.message = format!(
            "{}: the spaces make it text, not the variable `{name}`, which {which}, \
             so {structs} {has} no field `{}`",
            lint.message,
            field_name(&name)
        );
    }
}

/// How many pairs of names [`typos`] compares for one prompt at most. The
/// typo hints are a courtesy: a prompt of thousands of variables, or one
/// whose every name changed since the last build, would otherwise cost the
/// build script time quadratic in its names (6,100 names gone and 1,700 new
/// took a debug build script three minutes). Past the budget the rest of
/// the prompt's names are not looked at.
const TYPO_PAIRS_MAX: usize = 1 << 16;

/// The likely typos among the variables of `prompt`: at most one warning per
/// variable, at its first use, from at most [`TYPO_PAIRS_MAX`] comparisons.
fn typos(prompt: &ResolvedPrompt, previous: Option<&NameRecord>) -> Vec<Warning> {
    let vars = &prompt.vars;
    let uses = use_counts(prompt);
    let structure = struct_name(&prompt.id);
    let before = previous.and_then(|r| r.prompts.get(&prompt.id));
    // Worked out once per prompt, not once per pair: sets for the lookups,
    // each name's letters and field for the sibling filter.
    let current: HashSet<&str> = vars.iter().map(|v| v.name.as_str()).collect();
    let (had, dropped, gone): (HashSet<&str>, HashSet<&str>, Vec<&str>) =
        before.map_or_else(Default::default, |before| {
            (
                before.names.iter().map(String::as_str).collect(),
                before.dropped.iter().map(String::as_str).collect(),
                before
                    .names
                    .iter()
                    .map(String::as_str)
                    .filter(|old| !current.contains(old))
                    .collect(),
            )
        });
    let letters: Vec<String> = vars.iter().map(|v| without_digits(&v.name)).collect();
    let fields: Vec<String> = vars.iter().map(|v| field_name(&v.name)).collect();
    let mut budget = TYPO_PAIRS_MAX;
    let mut warnings = Vec::new();
    for (i, var) in vars.iter().enumerate() {
        // Renamed since the last build: a field of the struct changed name.
        let is_new = before.is_some()
            && !had.contains(var.name.as_str())
            && !dropped.contains(var.name.as_str());
        let renamed = is_new
            .then(|| closest(&var.name, gone.iter().copied(), &mut budget))
            .flatten();
        if let Some((old, edits)) = renamed {
            warnings.push(Warning {
                location: Some(var.first_use.clone()),
                code: "typo",
                message: format!(
                    "variable `{new}` is new since the last build and {edits} from \
                     `{old}`, which is gone: `{structure}` now has the field `{new_field}` \
                     instead of `{old_field}`",
                    new = var.name,
                    edits = edits_words(edits),
                    new_field = fields[i],
                    old_field = field_name(old),
                ),
                help: Some(format!(
                    "if `{new}` is a typo, write `{old}` here; if the rename is meant, \
                     rename the field `{old_field}` where your code builds `{structure}`",
                    new = var.name,
                    old_field = field_name(old),
                )),
            });
            continue;
        }
        // Next to another variable of the same prompt: the one used less
        // (or, as often, later) is the typo. Numbered siblings (`tool1`,
        // `tool2`) and names of one field are not typos of each other.
        let others = vars.iter().enumerate().filter(|&(j, _)| {
            j != i
                && (uses[j], usize::MAX - j) > (uses[i], usize::MAX - i)
                && letters[i] != letters[j]
                && fields[i] != fields[j]
        });
        let others = others.map(|(_, v)| v.name.as_str());
        if let Some((other, edits)) = closest(&var.name, others, &mut budget) {
            warnings.push(same_prompt_typo(prompt, var, other, edits, &structure));
        }
        if budget == 0 {
            break;
        }
    }
    warnings
}

fn same_prompt_typo(
    prompt: &ResolvedPrompt,
    var: &VarInfo,
    other: &str,
    edits: usize,
    structure: &str,
) -> Warning {
    Warning {
        location: Some(var.first_use.clone()),
        code: "typo",
        message: format!(
            "variable `{name}` is {edits} from `{other}`, another variable of prompt `{id}`: \
             `{structure}` has both fields, `{field}` and `{other_field}`",
            name = var.name,
            edits = edits_words(edits),
            id = prompt.id,
            field = field_name(&var.name),
            other_field = field_name(other),
        ),
        help: Some(format!(
            "if `{name}` is a typo, write `{other}` here",
            name = var.name
        )),
    }
}

/// How often each variable of `prompt` is used, by index, snippets spliced in.
fn use_counts(prompt: &ResolvedPrompt) -> Vec<usize> {
    let mut counts = vec![0; prompt.vars.len()];
    for program in std::iter::once(&prompt.system).chain(&prompt.user) {
        for op in &program.ops {
            let used = match op {
                Op::Var(i) => *i,
                Op::If { cond, .. } => *cond,
                _ => continue,
            };
            if let Some(count) = counts.get_mut(used) {
                *count += 1;
            }
        }
    }
    counts
}

/// Of `candidates`, the first one closest to `name` within [`max_edits`],
/// with its distance; each candidate looked at spends one of `budget`, and
/// none are looked at once it is spent.
fn closest<'a>(
    name: &str,
    candidates: impl Iterator<Item = &'a str>,
    budget: &mut usize,
) -> Option<(&'a str, usize)> {
    let mut best: Option<(&str, usize)> = None;
    for candidate in candidates {
        let Some(left) = budget.checked_sub(1) else {
            break;
        };
        *budget = left;
        if let Some(edits) = typo_distance(name, candidate)
            && best.is_none_or(|(_, b)| edits < b)
        {
            best = Some((candidate, edits));
        }
    }
    best
}

/// The edit distance of two different names when it is small enough for one
/// to be a typo of the other ([`max_edits`]).
pub(crate) fn typo_distance(a: &str, b: &str) -> Option<usize> {
    let max = max_edits(a, b);
    let (la, lb) = (a.chars().count(), b.chars().count());
    if a == b || max == 0 || la.abs_diff(lb) > max {
        return None;
    }
    let edits = edit_distance(a, b);
    (edits <= max).then_some(edits)
}

/// How many edits still read as a typo: none for names of one or two
/// characters (`x` and `y` are not typos of each other), one up to five
/// characters, two from six on. The shorter name counts.
fn max_edits(a: &str, b: &str) -> usize {
    match a.chars().count().min(b.chars().count()) {
        0..=2 => 0,
        3..=5 => 1,
        _ => 2,
    }
}

/// `name` without its digits: `tool1` and `tool2`, `item` and `item2` are
/// numbered siblings, not typos, when these are equal.
fn without_digits(name: &str) -> String {
    name.chars().filter(|c| !c.is_ascii_digit()).collect()
}

fn edits_words(edits: usize) -> &'static str {
    if edits == 1 { "one edit" } else { "two edits" }
}

/// The vars struct of prompt `id`, as the code generator names it.
fn struct_name(id: &str) -> String {
    format!("{}Vars", id.to_upper_camel_case())
}

/// The field of variable `name`, as the code generator names it.
fn field_name(name: &str) -> String {
    field_ident(name).unwrap_or_else(|| name.to_snake_case())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::NameRecord;
    use promptpack_core::Sources;
    use promptpack_core::pipeline::{Stages, compile};

    #[test]
    fn what_counts_as_a_typo() {
        assert_eq!(typo_distance("agentName", "agentNmae"), Some(1));
        assert_eq!(typo_distance("userName", "usrNme"), Some(2));
        assert_eq!(typo_distance("name", "nmae"), Some(1));
        assert_eq!(
            typo_distance("name", "nmea"),
            None,
            "two edits on a short name"
        );
        assert_eq!(typo_distance("x", "y"), None, "one-letter names");
        assert_eq!(typo_distance("agentName", "agentName"), None);
        assert_eq!(typo_distance("agentName", "userName"), None);
        assert_eq!(without_digits("tool1"), without_digits("tool2"));
        assert_eq!(without_digits("item"), without_digits("item2"));
        assert_ne!(without_digits("tool"), without_digits("tools"));
    }

    fn compiled(system: &str, snippets: &[(&str, &str)]) -> Compiled {
        compiled_many(&[("assistant", system)], snippets)
    }

    fn compiled_many(templates: &[(&str, &str)], snippets: &[(&str, &str)]) -> Compiled {
        let sources = Sources::from_texts(templates, snippets);
        let compiled = compile(sources, vec![], &Settings::default(), Stages::with_lints());
        assert!(compiled.errors.is_empty(), "{:?}", compiled.errors);
        compiled
    }

    fn lines(compiled: &Compiled, previous: Option<&NameRecord>) -> Vec<String> {
        build_warnings(compiled, previous, &Settings::default())
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn lints_become_one_line_each() {
        let found = lines(&compiled("Hi {{agentName}}.\n\n  {{ mood }}", &[]), None);
        assert_eq!(
            found,
            [
                "templates/assistant/system.md:3:3: near_miss: `{{ mood }}` is not a token and \
              reaches the model literally: the spaces make it text, not the variable `mood`, \
              which the prompt does not use elsewhere, so `AssistantVars` has no field `mood` \
              (help: write `{{mood}}`: no spaces inside the delimiters)"
            ]
        );
        // A name used for real elsewhere: the plain lint.
        let found = lines(&compiled("{{mood}} {{ mood }}", &[]), None);
        assert_eq!(found.len(), 1);
        assert!(
            found[0]
                .ends_with("literally (help: write `{{mood}}`: no spaces inside the delimiters)"),
            "{}",
            found[0]
        );
        // In a snippet, the prompts that include it count.
        let found = lines(&compiled("{{snippet:s}}", &[("s", "{{ mood }}")]), None);
        assert_eq!(found.len(), 1);
        assert!(
            found[0].starts_with("snippets/s.md:1:1: near_miss:"),
            "{}",
            found[0]
        );
        assert!(
            found[0].contains("`AssistantVars` has no field `mood`"),
            "{}",
            found[0]
        );
        let two = compiled_many(
            &[("a", "{{snippet:s}}"), ("b-c", "{{snippet:s}}")],
            &[("s", "{{ mood }}")],
        );
        let found = lines(&two, None);
        assert_eq!(found.len(), 1);
        assert!(
            found[0].contains(
                "which no prompt that includes this file uses elsewhere, so `AVars`, `BCVars` \
                 have no field `mood`"
            ),
            "{}",
            found[0]
        );
        // One of them has the variable: the plain lint.
        let two = compiled_many(
            &[("a", "{{snippet:s}}"), ("b", "{{snippet:s}} {{mood}}")],
            &[("s", "{{ mood }}")],
        );
        let found = lines(&two, None);
        assert_eq!(found.len(), 1);
        assert!(!found[0].contains("no field"), "{}", found[0]);
        let line = Warning {
            location: None,
            code: "io",
            message: "two\nlines".into(),
            help: None,
        };
        assert_eq!(line.to_string(), "io: two lines");
    }

    #[test]
    fn typos_within_a_prompt() {
        let found = lines(
            &compiled(
                "Hi {{userName}}.\n{{#if userName}}Bye {{usreName}}{{/if}}",
                &[],
            ),
            None,
        );
        assert_eq!(
            found,
            [
                "templates/assistant/system.md:2:21: typo: variable `usreName` is one edit from \
              `userName`, another variable of prompt `assistant`: `AssistantVars` has both \
              fields, `usre_name` and `user_name` (help: if `usreName` is a typo, write \
              `userName` here)"
            ]
        );
        // The one used more is the name meant, wherever it comes first.
        let found = lines(
            &compiled("{{usreName}} {{userName}} {{userName}}", &[]),
            None,
        );
        assert_eq!(found.len(), 1);
        assert!(
            found[0].contains(":1:1: typo: variable `usreName`"),
            "{}",
            found[0]
        );
        // Numbered siblings, one-letter names, far names: nothing.
        let found = lines(
            &compiled(
                "{{tool1}} {{tool2}} {{x}} {{y}} {{agentName}} {{userName}}",
                &[],
            ),
            None,
        );
        assert_eq!(found, Vec::<String>::new());
    }

    #[test]
    fn renames_since_the_last_build() {
        let first = compiled("You are {{agentName}}. {{#if hasTools}}Tools.{{/if}}", &[]);
        assert_eq!(lines(&first, None), Vec::<String>::new());
        let record = NameRecord::next(&first.prompts, None);

        let second = compiled("You are {{agentNmae}}. {{#if hasTools}}Tools.{{/if}}", &[]);
        assert_eq!(
            lines(&second, Some(&record)),
            [
                "templates/assistant/system.md:1:9: typo: variable `agentNmae` is new since the last \
              build and one edit from `agentName`, which is gone: `AssistantVars` now has the \
              field `agent_nmae` instead of `agent_name` (help: if `agentNmae` is a typo, \
              write `agentName` here; if the rename is meant, rename the field `agent_name` \
              where your code builds `AssistantVars`)"
            ]
        );
        assert_eq!(
            lines(&second, None),
            Vec::<String>::new(),
            "no record, no rename"
        );

        // Undoing the rename is not a typo of the typo.
        let record = NameRecord::next(&second.prompts, Some(&record));
        assert_eq!(lines(&first, Some(&record)), Vec::<String>::new());
        // A far rename, or a new variable next to a kept one, is no rename.
        let record = NameRecord::next(&first.prompts, None);
        let third = compiled(
            "{{assistantName}} {{agentName}} {{#if hasTool}}{{/if}}",
            &[],
        );
        let found = lines(&third, Some(&record));
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].contains(
                "variable `hasTool` is new since the last build and one edit from `hasTools`"
            ),
            "{}",
            found[0]
        );
    }

    /// Typo hints cost a bounded number of comparisons per prompt, however
    /// many names it has and lost: 600 names, each renamed since the last
    /// build and within two edits of every lost name, compared all against
    /// all were 360,000 comparisons (three minutes of a debug build script
    /// for 1,700 against 6,100); now the first of them get their hint and
    /// the rest are not looked at.
    #[test]
    fn typo_hints_are_bounded() {
        const N: usize = 600;
        let text = |prefix: &str| -> String {
            (0..N).map(|i| format!("{{{{{prefix}{i:03}}}}} ")).collect()
        };
        let first = compiled(&text("old"), &[]);
        let record = NameRecord::next(&first.prompts, None);
        let found = lines(&compiled(&text("olx"), &[]), Some(&record));
        assert!(
            found[0].contains(
                "variable `olx000` is new since the last build and one edit from `old000`"
            ),
            "{}",
            found[0]
        );
        assert!(
            found.len() <= TYPO_PAIRS_MAX / N + 1,
            "{} hints: every name compared with every other",
            found.len()
        );
    }

    /// Extending near-miss lints is linear: 40,000 of them on one line
    /// (each lint once looked for among all the others: 12 s for 4,000,
    /// quadratic, so some twenty minutes here) under a hang guard, not a
    /// measure; and a snippet included by many prompts names a few structs
    /// and how many more, not all of them in each lint.
    #[test]
    fn near_miss_lints_are_extended_in_linear_work() {
        const N: usize = 40_000;
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let line = "{{ mood }}".repeat(N);
            let _ = tx.send(lines(&compiled(&line, &[]), None));
        });
        let found = rx
            .recv_timeout(std::time::Duration::from_secs(300))
            .expect("40,000 near-misses on one line end");
        assert_eq!(found.len(), N);
        assert!(found.iter().all(|w| w.contains("has no field `mood`")));

        let ids: Vec<String> = (0..50).map(|i| format!("p{i}")).collect();
        let templates: Vec<(&str, &str)> = ids
            .iter()
            .map(|id| (id.as_str(), "{{snippet:s}}"))
            .collect();
        let found = lines(&compiled_many(&templates, &[("s", "{{ mood }}")]), None);
        assert_eq!(found.len(), 1);
        assert!(
            found[0].contains("so `P0Vars`, `P1Vars`, `P10Vars`, 47 more have no field `mood`"),
            "{}",
            found[0]
        );
    }
}

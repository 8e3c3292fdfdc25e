//! One template resolved: its parts' front matter read and merged, their
//! includes checked against the snippet graph, the parts spliced, the
//! prompt hashed and held to its declared contract.

use super::ResolvedPrompt;
use super::expand::PromptBuilder;
use super::graph::{SnippetGraph, snippet_refs};
use super::snippets::Parse;
use crate::error::{Diagnostic, ErrorCode};
use crate::front_matter::{DeclaredVar, FileRole, FrontMatter, apply_contract, read_front_matter};
use crate::program::{StableHasher, hash_program};
use crate::sources::TemplateSource;

/// Template `t` resolved, when it resolved (every problem is in `errors`),
/// and the steps its splicing took.
pub(super) fn resolve_template(
    t: &TemplateSource,
    graph: &mut SnippetGraph<'_, '_>,
    parse: Parse<'_>,
    errors: &mut Vec<Diagnostic>,
    warnings: &mut Vec<Diagnostic>,
) -> (Option<ResolvedPrompt>, u64) {
    let mut builder = PromptBuilder::default();
    let mut ok = true;
    let mut parts = Vec::new();
    let mut front_matter = FrontMatter::default();
    for file in std::iter::once(&t.system).chain(t.user.as_ref()) {
        let read = read_front_matter(file, FileRole::Template);
        ok &= read.errors.is_empty();
        errors.extend(read.errors);
        warnings.extend(read.warnings);
        front_matter.merge(read.front_matter, errors);
        let parsed = match parse(file) {
            Ok(p) => p,
            Err(e) => {
                errors.extend(e);
                ok = false;
                continue;
            }
        };
        for include in snippet_refs(&parsed) {
            // A problem of what it includes is reported once, however
            // many includes reach it.
            if !graph.usable(file, include, parse, errors) {
                ok = false;
            }
        }
        if ok {
            match builder.expand(file, &parsed, graph) {
                Ok(program) => parts.push(program),
                Err(e) => {
                    errors.push(*e);
                    ok = false;
                }
            }
        }
    }
    let steps = builder.steps;
    if !ok {
        return (None, steps);
    }
    let mut parts = parts.into_iter();
    let (Some(system), user) = (parts.next(), parts.next()) else {
        return (None, steps);
    };
    let mut hasher = StableHasher::default();
    hash_program(&mut hasher, &system, builder.vars.list());
    if let Some(user) = &user {
        hasher.write(b"\0user\0");
        hash_program(&mut hasher, user, builder.vars.list());
    }
    let mut vars = builder.vars.into_list();
    // Resolved prompts are kept for as long as a library lives: give
    // back the room the buffers grew into (up to half their memory).
    vars.shrink_to_fit();
    let snippet_vars: Vec<&DeclaredVar> = builder
        .snippets
        .iter()
        .filter_map(|name| graph.snippet(name))
        .flat_map(|s| s.front_matter.vars.iter().flatten())
        .collect();
    let errors_before = errors.len();
    let mut found = Vec::new();
    apply_contract(&mut vars, &front_matter, &snippet_vars, errors, &mut found);
    // A snippet's declared choice is checked in every prompt that
    // includes it: its warning, at the snippet, is told once.
    for warning in found {
        if !(warning.code == ErrorCode::UnhandledChoice && warnings.contains(&warning)) {
            warnings.push(warning);
        }
    }
    if errors.len() > errors_before {
        return (None, steps);
    }
    let prompt = ResolvedPrompt {
        id: t.id.clone(),
        system,
        user,
        system_path: t.system.path().to_string(),
        user_path: t.user.as_ref().map(|u| u.path().to_string()),
        vars,
        snippets: builder.snippets,
        hash: hasher.finish(),
        front_matter,
    };
    (Some(prompt), steps)
}

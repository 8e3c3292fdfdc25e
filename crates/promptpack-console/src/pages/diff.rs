//! `/prompts/{id}/diff?from=A&to=B`: two versions side by side — the files,
//! the front matter, the tools and the response declared, the resolved
//! texts, what every declared example renders on each side, and what
//! changed in the variables.

use super::exchange::{response_text, tools_text};
use super::prose::Prose;
use super::shared::{Chrome, OrPage, PageResult, html};
use crate::auth::PageUser;
use crate::cancel::cancellable;
use crate::failure::Failure;
use crate::preview::{examples, library_of};
use crate::state::AppState;
use crate::word_diff::{Budget, Cancelled, DEFAULT_STEPS, Row, compare as compare_texts};
use askama::Template;
use axum::extract::Path;
use axum::extract::{Query, State};
use promptpack::{Library, Prompt};
use promptpack_catalog::{Catalog, Error, Selector, Version};
use serde::Deserialize;
use std::collections::BTreeSet;
use std::sync::Arc;

#[derive(Deserialize)]
pub(crate) struct DiffParams {
    from: Option<u32>,
    to: Option<u32>,
}

/// A part compared: its name, its rows (none when both sides are the
/// same) and why it has no word marks, if it has none.
pub(crate) struct Part {
    pub(crate) name: String,
    pub(crate) rows: Vec<Row>,
    pub(crate) coarse: Option<&'static str>,
}

impl Part {
    /// `a` against `b` within `budget`.
    pub(crate) fn of(name: &str, a: &str, b: &str, budget: &mut Budget) -> Result<Part, Cancelled> {
        let (rows, coarse) = if a == b {
            (Vec::new(), None)
        } else {
            let compared = compare_texts(a, b, budget)?;
            (compared.rows, compared.coarse)
        };
        Ok(Part {
            name: name.to_string(),
            rows,
            coarse,
        })
    }

    /// Its id on the page: `part-front-matter`, `part-response`.
    pub(crate) fn anchor(&self) -> String {
        format!("part-{}", self.name.replace(['.', ' '], "-"))
    }
}

/// The error a diff stopped for its gone client answers with: nobody
/// reads it.
pub(crate) fn cancelled() -> Error {
    Error::new(
        promptpack_catalog::ErrorCode::Unavailable,
        "the request was abandoned before its diff finished",
    )
}

#[derive(Template)]
#[template(path = "diff.html")]
struct DiffPage {
    chrome: Option<Chrome>,
    id: String,
    from: u32,
    to: u32,
    numbers: Vec<u32>,
    parts: Vec<Part>,
    examples: Vec<Part>,
    variables: Vec<Prose>,
}

/// A version and what it compiles to.
struct Side {
    version: Version,
    library: Library,
}

fn side(catalog: &mut Catalog, id: &str, number: u32, bound: usize) -> Result<Side, Error> {
    let version = catalog.get(id, &Selector::Version(number))?;
    let library = library_of(catalog, &version, bound)?;
    Ok(Side { version, library })
}

/// A render as one text: the system part, then the user part, or each
/// message of a conversation under a line naming its role.
pub(crate) fn as_text(rendered: &Result<Prompt, Error>) -> String {
    match rendered {
        Ok(prompt) => {
            let mut text = prompt.system.clone();
            if let Some(user) = &prompt.user {
                text.push_str(&format!("\n--- user ---\n{user}"));
            }
            for message in &prompt.messages {
                text.push_str(&format!(
                    "\n--- {} ---\n{}",
                    message.label(),
                    message.content
                ));
            }
            text
        }
        Err(error) => format!("(does not render: {error})"),
    }
}

fn pretty(value: &serde_json::Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

/// The parts compared, in the page's order.
fn parts(old: &Version, new: &Version, budget: &mut Budget) -> Result<Vec<Part>, Cancelled> {
    let optional = |text: &Option<String>| text.clone().unwrap_or_default();
    // A conversation's files on either side: each message shows as the
    // lines of its role block, so a message changed, added or dropped is
    // read where it is.
    let conversation = old.messages.is_some() || new.messages.is_some();
    let mut parts = vec![("system.md", old.system.clone(), new.system.clone())];
    if !conversation || old.user.is_some() || new.user.is_some() {
        parts.push(("user.md", optional(&old.user), optional(&new.user)));
    }
    if conversation {
        parts.push((
            "messages.md",
            optional(&old.messages),
            optional(&new.messages),
        ));
    }
    parts.push((
        "front matter",
        pretty(&old.front_matter),
        pretty(&new.front_matter),
    ));
    parts.push((
        "resolved system",
        old.resolved_system.clone(),
        new.resolved_system.clone(),
    ));
    if !conversation || old.resolved_user.is_some() || new.resolved_user.is_some() {
        parts.push((
            "resolved user",
            optional(&old.resolved_user),
            optional(&new.resolved_user),
        ));
    }
    if conversation {
        parts.push((
            "resolved messages",
            optional(&old.resolved_messages),
            optional(&new.resolved_messages),
        ));
    }
    parts
        .into_iter()
        .map(|(name, a, b)| Part::of(name, &a, &b, budget))
        .collect()
}

/// The tools and the response of both sides, as the prompt page lists
/// them (each tool with its arguments; the response as the prompt prints
/// it), when either side declares them.
fn exchange_parts(
    id: &str,
    old: &Library,
    new: &Library,
    budget: &mut Budget,
) -> Result<Vec<Part>, Cancelled> {
    let (old, new) = (old.front_matter(id), new.front_matter(id));
    let mut parts = Vec::new();
    let (old_tools, new_tools) = (tools_text(old), tools_text(new));
    if !old_tools.is_empty() || !new_tools.is_empty() {
        parts.push(Part::of("tools", &old_tools, &new_tools, budget)?);
    }
    let (old_response, new_response) = (response_text(old), response_text(new));
    if !old_response.is_empty() || !new_response.is_empty() {
        parts.push(Part::of("response", &old_response, &new_response, budget)?);
    }
    Ok(parts)
}

/// Every example either side declares, rendered on both.
fn example_diffs(
    id: &str,
    old: &Library,
    new: &Library,
    budget: &mut Budget,
) -> Result<Vec<Part>, Cancelled> {
    let old_examples = examples(old, id);
    let new_examples = examples(new, id);
    let names: BTreeSet<&str> = old_examples
        .iter()
        .chain(&new_examples)
        .map(|e| e.name.as_str())
        .collect();
    let text_of = |list: &[crate::preview::ExampleRender], name: &str| {
        list.iter()
            .find(|e| e.name == name)
            .map(|e| as_text(&e.rendered))
            .unwrap_or_else(|| "(no such example on this side)".to_string())
    };
    names
        .into_iter()
        .map(|name| {
            let (a, b) = (text_of(&old_examples, name), text_of(&new_examples, name));
            Part::of(name, &a, &b, budget)
        })
        .collect()
}

/// What changed in the variables: declared ones (kind, description,
/// example) and the kinds the templates use them as.
fn variable_changes(id: &str, old: &Library, new: &Library) -> Vec<String> {
    let used = |library: &Library| -> Vec<(String, String)> {
        promptpack::house::resolved(library, id)
            .map(|p| {
                p.vars
                    .iter()
                    .map(|v| (v.name.clone(), format!("{:?}", v.kind()).to_lowercase()))
                    .collect()
            })
            .unwrap_or_default()
    };
    let declared = |library: &Library| -> Vec<(String, String)> {
        library
            .front_matter(id)
            .and_then(|f| f.vars.clone())
            .unwrap_or_default()
            .into_iter()
            .map(|v| {
                let text = serde_json::to_string(&v).unwrap_or_default();
                (v.name, text)
            })
            .collect()
    };
    let mut changes = Vec::new();
    compare("used", &used(old), &used(new), &mut changes);
    compare("declared", &declared(old), &declared(new), &mut changes);
    changes
}

fn compare(what: &str, old: &[(String, String)], new: &[(String, String)], out: &mut Vec<String>) {
    for (name, before) in old {
        match new.iter().find(|(n, _)| n == name) {
            None => out.push(format!("{what} `{name}` removed (was {before})")),
            Some((_, after)) if after != before => {
                out.push(format!("{what} `{name}`: {before} → {after}"));
            }
            Some(_) => {}
        }
    }
    for (name, after) in new {
        if !old.iter().any(|(n, _)| n == name) {
            out.push(format!("{what} `{name}` added ({after})"));
        }
    }
}

pub(crate) async fn page(
    State(state): State<Arc<AppState>>,
    user: PageUser,
    Path(id): Path<String>,
    Query(params): Query<DiffParams>,
) -> PageResult {
    let chrome = Chrome::of(&user);
    let (Some(from), Some(to)) = (params.from, params.to) else {
        return Err(Failure::bad_request("name both versions: ?from=A&to=B")).or_page(&chrome);
    };
    let wanted = id.clone();
    let bound = state.max_render_bytes;
    let (old, new, numbers) = state
        .catalog
        .run(&user.user.name, move |catalog| {
            let old = side(catalog, &wanted, from, bound)?;
            let new = side(catalog, &wanted, to, bound)?;
            let numbers = catalog
                .history(&wanted)?
                .versions
                .iter()
                .map(|v| v.version)
                .collect::<Vec<_>>();
            Ok((old, new, numbers))
        })
        .await
        .or_page(&chrome)?;
    // Off the request's thread, and stopped when its client goes.
    let prompt = id.clone();
    let (parts, examples, variables) = cancellable(move |flag| {
        let mut budget = Budget::new(DEFAULT_STEPS, Some(flag));
        let mut parts = parts(&old.version, &new.version, &mut budget)?;
        // The declared exchange right after the files that declare it,
        // before the front matter's JSON (which holds it as JSON Schema).
        let exchange = exchange_parts(&prompt, &old.library, &new.library, &mut budget)?;
        let at = parts
            .iter()
            .position(|p| p.name == "front matter")
            .unwrap_or(parts.len());
        parts.splice(at..at, exchange);
        let examples = example_diffs(&prompt, &old.library, &new.library, &mut budget)?;
        let variables = variable_changes(&prompt, &old.library, &new.library);
        Ok::<_, Cancelled>((parts, examples, variables))
    })
    .await
    .and_then(|done| done.map_err(|Cancelled| cancelled()))
    .or_page(&chrome)?;
    Ok(html(&DiffPage {
        chrome: Some(chrome),
        from,
        to,
        numbers,
        parts,
        examples,
        variables: variables.iter().map(|change| Prose::of(change)).collect(),
        id,
    }))
}

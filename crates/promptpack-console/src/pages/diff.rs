//! `/prompts/{id}/diff?from=A&to=B`: two versions side by side — the files,
//! the front matter, the resolved texts, what every declared example
//! renders on each side, and what changed in the variables.

use super::prose::Prose;
use super::{Chrome, OrPage, PageResult, html};
use crate::auth::PageUser;
use crate::failure::Failure;
use crate::preview::{examples, library_of};
use crate::server::AppState;
use crate::word_diff::{Row, side_by_side};
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

struct Part {
    name: String,
    rows: Vec<Row>,
}

struct ExampleDiff {
    name: String,
    rows: Vec<Row>,
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
    examples: Vec<ExampleDiff>,
    variables: Vec<Prose>,
}

/// A version and what it compiles to.
struct Side {
    version: Version,
    library: Library,
}

fn side(catalog: &mut Catalog, id: &str, number: u32) -> Result<Side, Error> {
    let version = catalog.get(id, &Selector::Version(number))?;
    let library = library_of(catalog, &version)?;
    Ok(Side { version, library })
}

/// A render as one text: the system part, then the user part.
pub(crate) fn as_text(rendered: &Result<Prompt, Error>) -> String {
    match rendered {
        Ok(prompt) => match &prompt.user {
            Some(user) => format!("{}\n--- user ---\n{user}", prompt.system),
            None => prompt.system.clone(),
        },
        Err(error) => format!("(does not render: {error})"),
    }
}

fn pretty(value: &serde_json::Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

/// The parts compared, in the page's order.
fn parts(old: &Version, new: &Version) -> Vec<Part> {
    let optional = |text: &Option<String>| text.clone().unwrap_or_default();
    [
        ("system.md", old.system.clone(), new.system.clone()),
        ("user.md", optional(&old.user), optional(&new.user)),
        (
            "front matter",
            pretty(&old.front_matter),
            pretty(&new.front_matter),
        ),
        (
            "resolved system",
            old.resolved_system.clone(),
            new.resolved_system.clone(),
        ),
        (
            "resolved user",
            optional(&old.resolved_user),
            optional(&new.resolved_user),
        ),
    ]
    .into_iter()
    .map(|(name, a, b)| Part {
        name: name.to_string(),
        rows: if a == b {
            Vec::new()
        } else {
            side_by_side(&a, &b)
        },
    })
    .collect()
}

/// Every example either side declares, rendered on both.
fn example_diffs(id: &str, old: &Library, new: &Library) -> Vec<ExampleDiff> {
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
            ExampleDiff {
                name: name.to_string(),
                rows: if a == b {
                    Vec::new()
                } else {
                    side_by_side(&a, &b)
                },
            }
        })
        .collect()
}

/// What changed in the variables: declared ones (kind, description,
/// example) and the kinds the templates use them as.
fn variable_changes(id: &str, old: &Library, new: &Library) -> Vec<String> {
    let used = |library: &Library| -> Vec<(String, String)> {
        library
            .resolved(id)
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
    let (old, new, numbers) = state
        .catalog
        .run(&user.user.name, move |catalog| {
            let old = side(catalog, &wanted, from)?;
            let new = side(catalog, &wanted, to)?;
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
    Ok(html(&DiffPage {
        chrome: Some(chrome),
        from,
        to,
        numbers,
        parts: parts(&old.version, &new.version),
        examples: example_diffs(&id, &old.library, &new.library),
        variables: variable_changes(&id, &old.library, &new.library)
            .iter()
            .map(|change| Prose::of(change))
            .collect(),
        id,
    }))
}

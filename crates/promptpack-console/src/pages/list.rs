//! `/`: the live prompts (filtered by text, a page at a time) and the
//! snippets.

use super::prose::Prose;
use super::shared::{Chrome, OrPage, PageResult, html, query_escape};
use super::when::When;
use crate::auth::PageUser;
use crate::state::AppState;
use askama::Template;
use axum::extract::{Query, State};
use promptpack_catalog::{Arm, ListQuery, Listed};
use serde::Deserialize;
use std::sync::Arc;

/// Prompts per page.
const PAGE: u32 = 50;

#[derive(Deserialize)]
pub(crate) struct ListParams {
    q: Option<String>,
    cursor: Option<String>,
}

struct Row {
    id: String,
    description: Prose,
    latest: u32,
    labels: Vec<String>,
    changed_by: String,
    changed_at: Option<When>,
}

struct SnippetRow {
    name: String,
    revision: u32,
    author: String,
    at: When,
}

#[derive(Template)]
#[template(path = "list.html")]
struct ListPage {
    chrome: Option<Chrome>,
    q: String,
    prompts: Vec<Row>,
    next: Option<String>,
    snippets: Vec<SnippetRow>,
}

/// `production → v3`, or `canary → v3 90 / v4 10` for a split.
pub(crate) fn label_text(label: &str, arms: &[Arm]) -> String {
    format!("{label} → {}", arms_text(arms))
}

/// What a label serves: `v3`, or `v3 90 / v4 10` for a split.
pub(crate) fn arms_text(arms: &[Arm]) -> String {
    match arms {
        [one] => format!("v{}", one.version),
        _ => arms
            .iter()
            .map(|a| format!("v{} {}", a.version, a.weight))
            .collect::<Vec<_>>()
            .join(" / "),
    }
}

fn row(listed: Listed) -> Row {
    let Listed {
        prompt,
        current,
        labels,
        ..
    } = listed;
    let (changed_by, changed_at) = current
        .map(|v| (v.author, Some(When::of(v.created_at))))
        .unwrap_or_default();
    Row {
        id: prompt.id,
        description: Prose::of(&prompt.description),
        latest: prompt.latest_version,
        labels: labels
            .iter()
            .map(|(label, arms)| label_text(label, arms))
            .collect(),
        changed_by,
        changed_at,
    }
}

pub(crate) async fn page(
    State(state): State<Arc<AppState>>,
    user: PageUser,
    Query(params): Query<ListParams>,
) -> PageResult {
    let chrome = Chrome::of(&user);
    let q = params.q.unwrap_or_default();
    let text = q.clone();
    let cursor = params.cursor;
    let (page, snippets) = state
        .catalog
        .run(&user.user.name, move |catalog| {
            let page = catalog.search(&ListQuery {
                limit: PAGE,
                cursor: cursor.as_deref(),
                text: Some(text.as_str()).filter(|t| !t.is_empty()),
            })?;
            Ok((page, catalog.snippets()?))
        })
        .await
        .or_page(&chrome)?;
    let next = page
        .next_cursor
        .map(|cursor: String| format!("/?q={}&cursor={}", query_escape(&q), query_escape(&cursor)));
    // The filter is the page's, not the prompts' alone: a snippet is listed
    // when its name holds the text, in any case (as a prompt is by its id,
    // name or description).
    let wanted = q.to_lowercase();
    let snippets = snippets
        .into_iter()
        .filter(|s| s.name.to_lowercase().contains(&wanted))
        .map(|s| SnippetRow {
            name: s.name,
            revision: s.revision,
            author: s.author,
            at: When::of(s.created_at),
        })
        .collect();
    Ok(html(&ListPage {
        chrome: Some(chrome),
        q,
        prompts: page.prompts.into_iter().map(row).collect(),
        next,
        snippets,
    }))
}

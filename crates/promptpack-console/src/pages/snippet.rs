//! `/snippets/{name}`: a snippet's revisions, the text of one with its
//! line numbers, the diff of two, and the prompts that include it with the
//! revision each of their versions pins; an editor upgrades a prompt's
//! pins from here (the prompt page's pins-only upgrade). The edit is
//! [`super::snippet_edit`].

use super::diff::{Part, cancelled};
use super::prose::Prose;
use super::shared::{Chrome, OrPage, PageResult, html, may_send, query_escape, short_hash};
use super::when::When;
use crate::action::Action;
use crate::auth::PageUser;
use crate::cancel::cancellable;
use crate::failure::Failure;
use crate::reads::snippet_revisions;
use crate::state::AppState;
use crate::word_diff::{Budget, Cancelled, DEFAULT_STEPS, Row};
use askama::Template;
use axum::Form;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Redirect};
use promptpack_catalog::{Error, ErrorCode, SnippetUse};
use serde::Deserialize;
use std::sync::Arc;

/// A numbered line of a text.
pub(crate) struct Line {
    pub(crate) number: usize,
    pub(crate) text: String,
}

/// `text` as numbered lines (a final newline ends the last line, it does
/// not start another).
pub(crate) fn numbered(text: &str) -> Vec<Line> {
    text.lines()
        .enumerate()
        .map(|(i, line)| Line {
            number: i + 1,
            text: line.to_string(),
        })
        .collect()
}

struct RevisionRow {
    revision: u32,
    author: String,
    message: Prose,
    at: When,
    short_hash: String,
}

/// A prompt that includes the snippet: what its versions pin.
struct UseRow {
    prompt: String,
    /// Its newest version that pins the snippet, and the revision pinned.
    newest_version: u32,
    newest_pin: u32,
    /// `v3 r2 · v2 r1 · v1 r1`.
    versions: String,
    /// Whether the newest version pins an older revision than the newest.
    behind: bool,
}

#[derive(Template)]
#[template(path = "snippet.html")]
struct SnippetPage {
    chrome: Option<Chrome>,
    csrf: String,
    name: String,
    newest: u32,
    shown: u32,
    lines: Vec<Line>,
    revisions: Vec<RevisionRow>,
    uses: Vec<UseRow>,
    can_edit: bool,
    can_upgrade: bool,
    notice: Option<(&'static str, String)>,
}

#[derive(Deserialize)]
pub(crate) struct PageParams {
    revision: Option<u32>,
    published: Option<u32>,
    upgraded: Option<String>,
    version: Option<u32>,
}

/// The prompts of `uses` (by id, newest version first), one row each.
fn use_rows(uses: Vec<SnippetUse>, newest: u32) -> Vec<UseRow> {
    let mut rows: Vec<UseRow> = Vec::new();
    for pin in uses {
        match rows.last_mut() {
            Some(row) if row.prompt == pin.prompt_id => {
                row.versions
                    .push_str(&format!(" · v{} r{}", pin.version, pin.revision));
            }
            _ => rows.push(UseRow {
                versions: format!("v{} r{}", pin.version, pin.revision),
                behind: pin.revision < newest,
                newest_version: pin.version,
                newest_pin: pin.revision,
                prompt: pin.prompt_id,
            }),
        }
    }
    rows
}

pub(crate) async fn page(
    State(state): State<Arc<AppState>>,
    user: PageUser,
    Path(name): Path<String>,
    Query(params): Query<PageParams>,
) -> PageResult {
    let chrome = Chrome::of(&user);
    let wanted = name.clone();
    let (revisions, uses) = state
        .catalog
        .run(&user.user.name, move |catalog| {
            Ok((
                snippet_revisions(catalog, &wanted)?,
                catalog.snippet_uses(&wanted)?,
            ))
        })
        .await
        .or_page(&chrome)?;
    let newest = revisions.first().map_or(0, |r| r.revision);
    let shown = params.revision.unwrap_or(newest);
    let Some(text) = revisions
        .iter()
        .find(|r| r.revision == shown)
        .map(|r| &r.text)
    else {
        return Err(Failure::from(Error::new(
            ErrorCode::NotFound,
            format!("snippet `{name}` has no revision {shown}"),
        )))
        .or_page(&chrome);
    };
    // What the write that led here did, with an id a test can wait for.
    let notice = match (params.published, params.upgraded, params.version) {
        (Some(revision), _, _) => Some((
            "published",
            format!(
                "Published r{revision}. Each prompt below keeps the revision it pins until its pins are upgraded."
            ),
        )),
        (_, Some(prompt), Some(version)) => Some((
            "upgraded",
            format!("Upgraded {prompt}: v{version} pins the newest revisions."),
        )),
        _ => None,
    };
    Ok(html(&SnippetPage {
        csrf: chrome.csrf.clone(),
        chrome: Some(chrome),
        lines: numbered(text),
        revisions: revisions
            .iter()
            .map(|r| RevisionRow {
                revision: r.revision,
                author: r.author.clone(),
                message: Prose::of(&r.message),
                at: When::of(r.created_at),
                short_hash: short_hash(&r.content_hash),
            })
            .collect(),
        uses: use_rows(uses, newest),
        can_edit: Action::EditSnippet.allows(&user.user),
        can_upgrade: Action::UpgradeSnippets.allows(&user.user),
        newest,
        shown,
        notice,
        name,
    }))
}

#[derive(Template)]
#[template(path = "snippet_diff.html")]
struct SnippetDiffPage {
    chrome: Option<Chrome>,
    name: String,
    from: u32,
    to: u32,
    numbers: Vec<u32>,
    rows: Vec<Row>,
    coarse: Option<&'static str>,
}

#[derive(Deserialize)]
pub(crate) struct DiffParams {
    from: Option<u32>,
    to: Option<u32>,
}

pub(crate) async fn diff(
    State(state): State<Arc<AppState>>,
    user: PageUser,
    Path(name): Path<String>,
    Query(params): Query<DiffParams>,
) -> PageResult {
    let chrome = Chrome::of(&user);
    let (Some(from), Some(to)) = (params.from, params.to) else {
        return Err(Failure::bad_request("name both revisions: ?from=A&to=B")).or_page(&chrome);
    };
    let wanted = name.clone();
    let revisions = state
        .catalog
        .run(&user.user.name, move |catalog| {
            snippet_revisions(catalog, &wanted)
        })
        .await
        .or_page(&chrome)?;
    let text_of = |revision: u32| {
        revisions
            .iter()
            .find(|r| r.revision == revision)
            .map(|r| r.text.clone())
            .ok_or_else(|| {
                Error::new(
                    ErrorCode::NotFound,
                    format!("snippet `{name}` has no revision {revision}"),
                )
            })
    };
    let (old, new) = (
        text_of(from).or_page(&chrome)?,
        text_of(to).or_page(&chrome)?,
    );
    // Off the request's thread, and stopped when its client goes.
    let part = cancellable(move |flag| {
        let mut budget = Budget::new(DEFAULT_STEPS, Some(flag));
        Part::of("text", &old, &new, &mut budget)
    })
    .await
    .and_then(|done| done.map_err(|Cancelled| cancelled()))
    .or_page(&chrome)?;
    Ok(html(&SnippetDiffPage {
        chrome: Some(chrome),
        numbers: revisions.iter().rev().map(|r| r.revision).collect(),
        rows: part.rows,
        coarse: part.coarse,
        from,
        to,
        name,
    }))
}

#[derive(Deserialize)]
pub(crate) struct UpgradeForm {
    #[serde(default)]
    csrf: String,
    prompt: String,
}

/// Mints the next version of one including prompt with the newest
/// revision of every snippet it includes (the prompt page's upgrade,
/// checked as a publish), then back to the snippet.
pub(crate) async fn upgrade(
    State(state): State<Arc<AppState>>,
    user: PageUser,
    Path(name): Path<String>,
    Form(form): Form<UpgradeForm>,
) -> PageResult {
    let chrome = may_send(&user, &form.csrf, Action::UpgradeSnippets)?;
    let prompt = form.prompt.clone();
    let version = state
        .catalog
        .run(&user.user.name, move |catalog| {
            catalog.upgrade(&prompt, None)
        })
        .await
        .or_page(&chrome)?;
    Ok(Redirect::to(&format!(
        "/snippets/{name}?upgraded={}&version={}",
        query_escape(&form.prompt),
        version.version
    ))
    .into_response())
}

//! `/snippets/{name}/edit`: a new revision of a snippet, checked against
//! every prompt that includes it before it is published (the check a
//! prompt's edit page makes, once per including prompt), then published;
//! the snippet's page then offers each including prompt's pins-only
//! upgrade. A refused publish writes nothing and keeps the draft on screen.

use super::diagnostics::{DiagnosticView, Refusal, RefusalLine};
use super::prose::Prose;
use super::shared::{Chrome, OrPage, PageResult, form_text, html, html_with_status, may, may_send};
use crate::action::Action;
use crate::auth::PageUser;
use crate::failure::Failure;
use crate::snippet_check::{PromptCheck, check_against, including};
use crate::state::AppState;
use askama::Template;
use axum::Form;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect};
use promptpack::Severity;
use promptpack_catalog::ErrorCode;
use serde::Deserialize;
use std::sync::Arc;

/// What one including prompt says of the draft, for the page.
struct CheckView {
    prompt: String,
    version: u32,
    errors: Vec<DiagnosticView>,
    warnings: Vec<DiagnosticView>,
}

impl CheckView {
    fn of(check: &PromptCheck) -> CheckView {
        CheckView {
            prompt: check.prompt_id.clone(),
            version: check.version,
            errors: DiagnosticView::all(&check.errors, Severity::Error),
            warnings: DiagnosticView::all(&check.warnings, Severity::Warning),
        }
    }
}

#[derive(Template)]
#[template(path = "snippet_edit.html")]
struct SnippetEditPage {
    chrome: Option<Chrome>,
    csrf: String,
    name: String,
    from: Option<u32>,
    text: String,
    message: String,
    refusal: Option<Refusal>,
    own_errors: Vec<DiagnosticView>,
    checked: bool,
    checks: Vec<CheckView>,
}

impl SnippetEditPage {
    fn new(chrome: Chrome, name: String, from: Option<u32>, text: String) -> SnippetEditPage {
        SnippetEditPage {
            csrf: chrome.csrf.clone(),
            chrome: Some(chrome),
            name,
            from,
            text,
            message: String::new(),
            refusal: None,
            own_errors: Vec::new(),
            checked: false,
            checks: Vec::new(),
        }
    }

    fn failing(&self) -> usize {
        self.checks.iter().filter(|c| !c.errors.is_empty()).count()
    }
}

#[derive(Deserialize)]
pub(crate) struct From {
    from: Option<u32>,
}

pub(crate) async fn form(
    State(state): State<Arc<AppState>>,
    user: PageUser,
    Path(name): Path<String>,
    Query(From { from }): Query<From>,
) -> PageResult {
    let chrome = may(&user, Action::EditSnippet)?;
    let wanted = name.clone();
    let start = state
        .catalog
        .run(&user.user.name, move |catalog| {
            match catalog.snippet(&wanted, from) {
                Ok(revision) => Ok(Some(revision)),
                // A new snippet starts empty; its first publish creates it.
                Err(e) if e.code() == ErrorCode::NotFound && from.is_none() => Ok(None),
                Err(e) => Err(e),
            }
        })
        .await
        .or_page(&chrome)?;
    let (from, text) = match start {
        Some(revision) => (Some(revision.revision), revision.text),
        None => (None, String::new()),
    };
    Ok(html(&SnippetEditPage::new(chrome, name, from, text)))
}

#[derive(Deserialize)]
pub(crate) struct Submitted {
    #[serde(default)]
    csrf: String,
    from: Option<String>,
    text: String,
    #[serde(default)]
    message: String,
    action: String,
}

pub(crate) async fn submit(
    State(state): State<Arc<AppState>>,
    user: PageUser,
    Path(name): Path<String>,
    Form(form): Form<Submitted>,
) -> PageResult {
    let chrome = may_send(&user, &form.csrf, Action::EditSnippet)?;
    let publish = match form.action.as_str() {
        "publish" => true,
        "check" => false,
        other => {
            return Err(Failure::bad_request(format!(
                "unknown action `{other}`: check or publish"
            )))
            .or_page(&chrome);
        }
    };
    let from = form.from.as_deref().and_then(|f| f.parse().ok());
    let text = form_text(&form.text);
    let mut page = SnippetEditPage::new(chrome.clone(), name.clone(), from, text.clone());
    page.message = form.message.clone();
    let (wanted, message) = (name.clone(), form.message);
    // Checked against every including prompt; published only when none
    // refuses it (the catalog then checks the snippet itself).
    let outcome = state
        .catalog
        .run(&user.user.name, move |catalog| {
            let prompts = including(catalog, &wanted)?;
            let checks = check_against(catalog, &wanted, &text, &prompts)?;
            let clean = checks.iter().all(|c| c.errors.is_empty());
            let published = if publish && clean {
                Some(catalog.publish_snippet(&wanted, &text, &message))
            } else {
                None
            };
            Ok((checks, published))
        })
        .await
        .or_page(&chrome)?;
    let (checks, published) = outcome;
    page.checked = true;
    page.checks = checks.iter().map(CheckView::of).collect();
    match published {
        Some(Ok(revision)) => Ok(Redirect::to(&format!(
            "/snippets/{name}?published={}",
            revision.revision
        ))
        .into_response()),
        Some(Err(error)) => {
            page.own_errors = DiagnosticView::all(error.diagnostics(), Severity::Error);
            page.refusal = Some(Refusal::of(&error));
            Ok(html_with_status(Failure::from(error).status, &page))
        }
        None if publish => {
            let broken = match (page.failing(), page.checks.len()) {
                (_, 1) => format!("the one prompt that includes `{name}`"),
                (failing, all) => format!("{failing} of the {all} prompts that include `{name}`"),
            };
            page.refusal = Some(Refusal {
                lines: vec![RefusalLine {
                    code: "check_failed".to_string(),
                    message: Prose::of(&format!(
                        "not published: the draft breaks {broken} (below)"
                    )),
                    help: None,
                }],
            });
            Ok(html_with_status(StatusCode::UNPROCESSABLE_ENTITY, &page))
        }
        None => Ok(html(&page)),
    }
}

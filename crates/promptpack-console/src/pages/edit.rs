//! `/prompts/{id}/edit`: a draft started from any version, checked as the
//! build checks it (diagnostics at line:col beside the text), previewed
//! with its examples, and published. A refused publish writes nothing and
//! keeps the draft on screen.

use super::diagnostics::{DiagnosticView, Refusal, RenderView};
use super::exchange::Exchange;
use super::shared::{Chrome, OrPage, PageResult, form_text, html, html_with_status, may, may_send};
use crate::action::Action;
use crate::auth::PageUser;
use crate::failure::Failure;
use crate::preview::examples;
use crate::reads::syntax_of;
use crate::state::AppState;
use askama::Template;
use axum::Form;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Redirect};
use promptpack::Severity;
use promptpack_catalog::{Draft, ErrorCode, Selector};
use serde::Deserialize;
use std::sync::Arc;

#[derive(Template)]
#[template(path = "edit.html")]
struct EditPage {
    chrome: Option<Chrome>,
    csrf: String,
    id: String,
    from: Option<u32>,
    system: String,
    user: String,
    /// `messages.md`: a conversation's turns (empty: none).
    messages: String,
    message: String,
    notice: Option<String>,
    refusal: Option<Refusal>,
    checked: bool,
    errors: Vec<DiagnosticView>,
    warnings: Vec<DiagnosticView>,
    renders: Vec<RenderView>,
    listings: Vec<Listing>,
    /// The tools and response of a checked draft without errors, as the
    /// prompt page will list them once it is published.
    exchange: Option<Exchange>,
    exchange_of: String,
}

/// A file of the draft as numbered lines, those a diagnostic points at
/// marked: the textarea has no line numbers, and this needs no script.
struct Listing {
    /// `system`, `user` or `messages`: the lines' ids are
    /// `line-{key}-{number}`.
    key: &'static str,
    name: &'static str,
    lines: Vec<ListedLine>,
}

struct ListedLine {
    number: usize,
    text: String,
    marked: bool,
}

impl EditPage {
    fn new(
        chrome: Chrome,
        id: String,
        from: Option<u32>,
        system: String,
        user: String,
        messages: String,
    ) -> EditPage {
        EditPage {
            csrf: chrome.csrf.clone(),
            chrome: Some(chrome),
            id,
            from,
            system,
            user,
            messages,
            message: String::new(),
            notice: None,
            refusal: None,
            checked: false,
            errors: Vec::new(),
            warnings: Vec::new(),
            renders: Vec::new(),
            listings: Vec::new(),
            exchange: None,
            exchange_of: "the draft".to_string(),
        }
    }

    /// Links each diagnostic that points at a line of `system.md`,
    /// `user.md` or `messages.md` to that line, and lists each such file as
    /// numbered lines.
    fn number_lines(&mut self) {
        let mut marked: [Vec<usize>; 3] = [Vec::new(), Vec::new(), Vec::new()];
        // The draft's own files, not a snippet's that happens to share a
        // name: `templates/{id}/system.md`.
        let own = [
            format!("{}/system.md", self.id),
            format!("{}/user.md", self.id),
            format!("{}/messages.md", self.id),
        ];
        for d in self.errors.iter_mut().chain(self.warnings.iter_mut()) {
            let Some(index) = own
                .iter()
                .position(|file| d.path == *file || d.path.ends_with(&format!("/{file}")))
            else {
                continue;
            };
            if d.line == 0 {
                continue;
            }
            d.anchor = Some(format!(
                "line-{}-{}",
                ["system", "user", "messages"][index],
                d.line
            ));
            marked[index].push(d.line);
        }
        let texts = [&self.system, &self.user, &self.messages];
        self.listings = [
            ("system", "system.md"),
            ("user", "user.md"),
            ("messages", "messages.md"),
        ]
        .into_iter()
        .zip(texts)
        .zip(&marked)
        .filter(|(_, marked)| !marked.is_empty())
        .map(|(((key, name), text), marked)| {
            let mut lines: Vec<ListedLine> = text
                .split('\n')
                .enumerate()
                .map(|(at, line)| ListedLine {
                    number: at + 1,
                    text: line.to_string(),
                    marked: marked.contains(&(at + 1)),
                })
                .collect();
            // The text's final line break ends a line; it starts none,
            // unless a diagnostic points there (the end of the file).
            if lines.len() > 1
                && lines
                    .last()
                    .is_some_and(|last| last.text.is_empty() && !last.marked)
            {
                lines.pop();
            }
            Listing { key, name, lines }
        })
        .collect();
    }
}

#[derive(Deserialize)]
pub(crate) struct From {
    from: Option<u32>,
}

pub(crate) async fn form(
    State(state): State<Arc<AppState>>,
    user: PageUser,
    Path(id): Path<String>,
    Query(From { from }): Query<From>,
) -> PageResult {
    let chrome = may(&user, Action::Publish)?;
    let selector = from.map_or(Selector::Latest, Selector::Version);
    let wanted = id.clone();
    let start = state
        .catalog
        .run(&user.user.name, move |catalog| {
            match catalog.get(&wanted, &selector) {
                Ok(version) => Ok(Some(version)),
                // A new prompt starts empty; its first publish creates it.
                Err(e) if e.code() == ErrorCode::NotFound && selector == Selector::Latest => {
                    Ok(None)
                }
                Err(e) => Err(e),
            }
        })
        .await
        .or_page(&chrome)?;
    let (from, system, user_text, messages) = match start {
        Some(version) => (
            Some(version.version),
            version.system,
            version.user.unwrap_or_default(),
            version.messages.unwrap_or_default(),
        ),
        None => (None, String::new(), String::new(), String::new()),
    };
    Ok(html(&EditPage::new(
        chrome, id, from, system, user_text, messages,
    )))
}

#[derive(Deserialize)]
pub(crate) struct Submitted {
    #[serde(default)]
    csrf: String,
    from: Option<String>,
    system: String,
    #[serde(default)]
    user: String,
    #[serde(default)]
    messages: String,
    #[serde(default)]
    message: String,
    action: String,
}

pub(crate) async fn submit(
    State(state): State<Arc<AppState>>,
    user: PageUser,
    Path(id): Path<String>,
    Form(form): Form<Submitted>,
) -> PageResult {
    let chrome = may_send(&user, &form.csrf, Action::Publish)?;
    let from = form.from.as_deref().and_then(|f| f.parse().ok());
    let (system, user_text) = (form_text(&form.system), form_text(&form.user));
    let messages = form_text(&form.messages);
    let mut page = EditPage::new(
        chrome.clone(),
        id.clone(),
        from,
        system.clone(),
        user_text.clone(),
        messages.clone(),
    );
    page.message = form.message.clone();
    let draft_of = move |syntax| Draft {
        system,
        user: Some(user_text).filter(|u| !u.trim().is_empty()),
        // Empty is none, as for user.md: both given is the compiler's to
        // refuse (`invalid_message`), located at the file.
        messages: Some(messages).filter(|m| !m.trim().is_empty()),
        message: form.message,
        syntax,
    };
    let wanted = id.clone();
    match form.action.as_str() {
        "publish" => {
            let published = state
                .catalog
                .run(&user.user.name, move |catalog| {
                    let draft = draft_of(syntax_of(catalog, &wanted)?);
                    catalog.publish_or_create(&wanted, &draft, None)
                })
                .await;
            match published {
                Ok((version, _)) => Ok(Redirect::to(&format!(
                    "/prompts/{id}?published={}",
                    version.version
                ))
                .into_response()),
                Err(error) => {
                    page.refusal = Some(Refusal::of(&error));
                    page.checked = true;
                    page.errors = DiagnosticView::all(error.diagnostics(), Severity::Error)
                        .into_iter()
                        .filter(|d| !d.place.is_empty())
                        .collect();
                    page.number_lines();
                    Ok(html_with_status(Failure::from(error).status, &page))
                }
            }
        }
        "check" | "preview" => {
            let preview = form.action == "preview";
            let bound = state.max_render_bytes;
            let checked = state
                .catalog
                .run(&user.user.name, move |catalog| {
                    let draft = draft_of(syntax_of(catalog, &wanted)?);
                    crate::preview::check_draft(catalog, &wanted, &draft, bound)
                })
                .await
                .or_page(&chrome)?;
            page.checked = true;
            page.errors = DiagnosticView::all(&checked.errors, Severity::Error);
            page.warnings = DiagnosticView::all(&checked.warnings, Severity::Warning);
            page.number_lines();
            page.exchange = checked
                .library
                .as_ref()
                .map(|library| Exchange::of(library.front_matter(&id)))
                .filter(|exchange| !exchange.is_empty());
            if preview && let Some(library) = &checked.library {
                page.renders = examples(library, &id)
                    .iter()
                    .map(|e| RenderView::of(&state, &e.name, &e.rendered))
                    .collect();
                if page.renders.is_empty() {
                    page.notice = Some("The draft declares no examples to render.".to_string());
                }
            }
            Ok(html(&page))
        }
        other => Err(Failure::bad_request(format!(
            "unknown action `{other}`: check, preview or publish"
        )))
        .or_page(&chrome),
    }
}

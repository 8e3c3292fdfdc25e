//! `/prompts/{id}`: a prompt's versions, labels, label history and the
//! builds that serve it; delete, restore and the snippet upgrade.

use super::exchange::Exchange;
use super::list::arms_text;
use super::prose::Prose;
use super::shared::{Chrome, CsrfForm, OrPage, PageResult, html, may_send, short_hash};
use super::when::When;
use crate::action::Action;
use crate::auth::PageUser;
use crate::builds::{BuildView, builds_of};
use crate::preview::library_of;
use crate::state::AppState;
use crate::verdicts::Verdicts;
use askama::Template;
use axum::Form;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Redirect};
use promptpack_catalog::{Catalog, Error, ErrorCode, History, Selector};
use serde::Deserialize;
use std::sync::Arc;

struct VersionRow {
    number: u32,
    author: String,
    message: Prose,
    at: When,
    short_hash: String,
    pins: String,
}

struct LabelRow {
    name: String,
    serves: String,
    protected: bool,
    movable: bool,
}

struct MoveRow {
    at: When,
    author: String,
    what: String,
}

#[derive(Template)]
#[template(path = "prompt.html")]
struct PromptPage {
    chrome: Option<Chrome>,
    csrf: String,
    id: String,
    description: Prose,
    flash: Option<String>,
    deleted: bool,
    /// What the user's role may do here, each as the role table says.
    can_publish: bool,
    can_set_label: bool,
    can_upgrade: bool,
    can_delete: bool,
    can_restore: bool,
    latest: u32,
    previous: u32,
    upgrade: Option<String>,
    versions: Vec<VersionRow>,
    labels: Vec<LabelRow>,
    moves: Vec<MoveRow>,
    builds: Vec<BuildView>,
    /// The newest version's tools and response (none for a prompt without
    /// versions, or deleted).
    exchange: Option<Exchange>,
    /// What declares them: `v3`.
    exchange_of: String,
    /// Why the newest version could not be compiled to show them.
    exchange_refused: Option<String>,
}

/// What the page reads, in one call to the catalog.
struct Read {
    history: History,
    arms: Vec<(String, Vec<promptpack_catalog::Arm>)>,
    pins: String,
    behind: Option<String>,
    builds: Vec<BuildView>,
    exchange: Option<Exchange>,
    exchange_refused: Option<String>,
}

fn read(
    catalog: &mut Catalog,
    verdicts: &Verdicts,
    id: &str,
    max_render_bytes: usize,
) -> Result<Read, Error> {
    let history = catalog.history(id)?;
    let mut arms = Vec::new();
    for (label, version) in &history.labels {
        // A deleted prompt's labels cannot be read as arms (it serves
        // nothing); its board shows where each pointed.
        if label == "latest" || history.prompt.deleted {
            arms.push((
                label.clone(),
                vec![promptpack_catalog::Arm {
                    version: *version,
                    weight: 1,
                }],
            ));
        } else {
            arms.push((label.clone(), catalog.label_arms(id, label)?));
        }
    }
    let (mut pins, mut behind, mut builds) = (String::new(), None, Vec::new());
    let (mut exchange, mut exchange_refused) = (None, None);
    if !history.prompt.deleted && history.prompt.latest_version > 0 {
        let newest = catalog.get(id, &Selector::Latest)?;
        let current = catalog.snippets()?;
        let stale: Vec<String> = newest
            .pins
            .iter()
            .filter_map(|pin| {
                let now = current.iter().find(|s| s.name == pin.snippet)?;
                (now.revision > pin.revision)
                    .then(|| format!("{} r{} → r{}", pin.snippet, pin.revision, now.revision))
            })
            .collect();
        behind = (!stale.is_empty()).then(|| stale.join(", "));
        pins = pin_text(&newest.pins);
        builds = builds_of(catalog, verdicts, id, &arms)?;
        // What the newest version declares of its exchange with the
        // model, from the version compiled as a live handle compiles it.
        match library_of(catalog, &newest, max_render_bytes) {
            Ok(library) => exchange = Some(Exchange::of(library.front_matter(id))),
            // The store failing is the page's failure; a version that does
            // not compile is said beside the rest.
            Err(e) if matches!(e.code(), ErrorCode::Unavailable | ErrorCode::Io) => {
                return Err(e);
            }
            Err(e) => exchange_refused = Some(format!("v{} does not compile: {e}", newest.version)),
        }
    }
    Ok(Read {
        history,
        arms,
        pins,
        behind,
        builds,
        exchange,
        exchange_refused,
    })
}

fn pin_text(pins: &[promptpack_catalog::Pin]) -> String {
    pins.iter()
        .map(|p| format!("{} r{}", p.snippet, p.revision))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What the page is told by where the user came from: `published=N`
/// after the edit page published version N.
#[derive(Deserialize)]
pub(crate) struct Landed {
    published: Option<String>,
}

pub(crate) async fn page(
    State(state): State<Arc<AppState>>,
    user: PageUser,
    Path(id): Path<String>,
    Query(landed): Query<Landed>,
) -> PageResult {
    let chrome = Chrome::of(&user);
    let wanted = id.clone();
    let verdicts = Arc::clone(&state.verdicts);
    let bound = state.max_render_bytes;
    let read = state
        .catalog
        .run(&user.user.name, move |catalog| {
            read(catalog, &verdicts, &wanted, bound)
        })
        .await
        .or_page(&chrome)?;
    let Read {
        history,
        arms,
        pins,
        behind,
        builds,
        exchange,
        exchange_refused,
    } = read;
    let latest = history.prompt.latest_version;
    let versions = history
        .versions
        .iter()
        .map(|v| VersionRow {
            number: v.version,
            author: v.author.clone(),
            message: Prose::of(&v.message),
            at: When::of(v.created_at),
            short_hash: short_hash(&v.content_hash),
            // Only the newest version's pins are read: older ones are in
            // its diff.
            pins: if v.version == latest {
                pins.clone()
            } else {
                String::new()
            },
        })
        .collect();
    let labels = arms
        .iter()
        .map(|(name, arms)| LabelRow {
            serves: arms_text(arms),
            protected: state.is_protected(name),
            movable: name != "latest" && Action::move_label(&state, name).allows(&user.user),
            name: name.clone(),
        })
        .collect();
    let moves = history
        .audit
        .iter()
        .rev()
        .map(|entry| MoveRow {
            at: When::of(entry.created_at),
            author: entry.author.clone(),
            what: audit_text(entry),
        })
        .collect();
    // Said only of a version the prompt has: a link made up, or kept from
    // before a catalog was restored, says nothing.
    let flash = landed
        .published
        .and_then(|n| n.parse::<u32>().ok())
        .filter(|n| history.versions.iter().any(|v| v.version == *n))
        .map(|n| format!("Published {id} v{n}."));
    Ok(html(&PromptPage {
        csrf: chrome.csrf.clone(),
        chrome: Some(chrome),
        description: Prose::of(&history.prompt.description),
        flash,
        deleted: history.prompt.deleted,
        can_publish: Action::Publish.allows(&user.user),
        // A label not named yet: the move page checks its name, protected
        // or not.
        can_set_label: Action::MoveLabel("").allows(&user.user),
        can_upgrade: Action::UpgradeSnippets.allows(&user.user),
        can_delete: Action::Delete.allows(&user.user),
        can_restore: Action::Restore.allows(&user.user),
        latest,
        previous: latest.saturating_sub(1).max(1),
        upgrade: behind,
        versions,
        labels,
        moves,
        builds,
        exchange: exchange.filter(|e| !e.is_empty()),
        exchange_of: format!("v{latest}"),
        exchange_refused,
        id,
    }))
}

/// An audit entry in words: `production: v2 → v3`.
fn audit_text(entry: &promptpack_catalog::AuditEntry) -> String {
    let version = |v: Option<u32>| v.map(|v| format!("v{v}")).unwrap_or_else(|| "-".into());
    match (entry.action.as_str(), &entry.label) {
        ("label", Some(label)) => format!(
            "{label}: {} → {}",
            version(entry.from_version),
            version(entry.to_version)
        ),
        ("split", Some(label)) => {
            let arms: Vec<String> = entry
                .arms
                .iter()
                .map(|a| format!("v{} {}", a.version, a.weight))
                .collect();
            format!("{label}: split {}", arms.join(" / "))
        }
        (action, _) => action.to_string(),
    }
}

/// A POST of the prompt page's buttons: the CSRF token checked and the
/// action's role required, then `act` as the user, then back to the prompt.
async fn act(
    state: Arc<AppState>,
    user: PageUser,
    id: String,
    form: CsrfForm,
    action: Action<'static>,
    act: impl FnOnce(&mut Catalog, &str) -> Result<(), Error> + Send + 'static,
) -> PageResult {
    let chrome = may_send(&user, &form.csrf, action)?;
    let target = id.clone();
    state
        .catalog
        .run(&user.user.name, move |catalog| act(catalog, &target))
        .await
        .or_page(&chrome)?;
    Ok(Redirect::to(&format!("/prompts/{id}")).into_response())
}

pub(crate) async fn delete(
    State(state): State<Arc<AppState>>,
    user: PageUser,
    Path(id): Path<String>,
    Form(form): Form<CsrfForm>,
) -> PageResult {
    act(state, user, id, form, Action::Delete, |c, id| c.delete(id)).await
}

pub(crate) async fn restore(
    State(state): State<Arc<AppState>>,
    user: PageUser,
    Path(id): Path<String>,
    Form(form): Form<CsrfForm>,
) -> PageResult {
    act(state, user, id, form, Action::Restore, |c, id| {
        c.restore(id)
    })
    .await
}

pub(crate) async fn upgrade(
    State(state): State<Arc<AppState>>,
    user: PageUser,
    Path(id): Path<String>,
    Form(form): Form<CsrfForm>,
) -> PageResult {
    act(state, user, id, form, Action::UpgradeSnippets, |c, id| {
        c.upgrade(id, None).map(|_| ())
    })
    .await
}

//! `/prompts/{id}/move`: moving a label to a version, or splitting it
//! across versions, behind a confirmation that shows the diff from what the
//! label serves now and which registered builds would refuse the target.

use super::diff::as_text;
use super::list::arms_text;
use super::prose::Prose;
use super::shared::{Chrome, OrPage, PageResult, html, may, may_send};
use super::when::When;
use crate::action::Action;
use crate::auth::PageUser;
use crate::builds::{is_stale, refusal, registered};
use crate::failure::Failure;
use crate::preview::{examples, library_of};
use crate::state::AppState;
use crate::verdicts::Verdicts;
use crate::word_diff::{Budget, DEFAULT_STEPS, Row, compare};
use askama::Template;
use axum::Form;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Redirect};
use promptpack_catalog::{Arm, Catalog, Error, ErrorCode, Selector, Timestamp};
use serde::Deserialize;
use std::sync::Arc;

/// Where a label goes: one version, or weighted arms.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    Version(u32),
    Split(Vec<Arm>),
}

impl Target {
    /// `3`, or `3:90,4:10` for a split.
    fn parse(text: &str) -> Result<Target, Failure> {
        let text = text.trim().trim_start_matches('v');
        if let Ok(version) = text.parse() {
            return Ok(Target::Version(version));
        }
        let arms: Option<Vec<Arm>> = text
            .split(',')
            .map(|arm| {
                let (version, weight) = arm.trim().split_once(':')?;
                Some(Arm {
                    version: version.trim().trim_start_matches('v').parse().ok()?,
                    weight: weight.trim().parse().ok()?,
                })
            })
            .collect();
        match arms {
            Some(arms) if arms.len() > 1 => Ok(Target::Split(arms)),
            _ => Err(Failure::bad_request(format!(
                "`{text}` is neither a version (3) nor a split (3:90,4:10)"
            ))),
        }
    }

    fn param(&self) -> String {
        match self {
            Target::Version(v) => v.to_string(),
            Target::Split(arms) => arms
                .iter()
                .map(|a| format!("{}:{}", a.version, a.weight))
                .collect::<Vec<_>>()
                .join(","),
        }
    }

    fn versions(&self) -> Vec<u32> {
        match self {
            Target::Version(v) => vec![*v],
            Target::Split(arms) => arms.iter().map(|a| a.version).collect(),
        }
    }

    fn describe(&self) -> String {
        match self {
            Target::Version(v) => format!("v{v}"),
            Target::Split(arms) => arms_text(arms),
        }
    }
}

#[derive(Deserialize)]
pub(crate) struct MoveParams {
    label: String,
    version: Option<String>,
    arms: Option<String>,
}

struct Refusing {
    process: String,
    reason: Prose,
}

/// A registration gone stale: not counted either way.
struct Stale {
    process: String,
    last_seen: When,
}

#[derive(Template)]
#[template(path = "move.html")]
struct MovePage {
    chrome: Option<Chrome>,
    csrf: String,
    id: String,
    label: String,
    protected: bool,
    target: String,
    target_param: String,
    current: String,
    rows: Vec<Row>,
    refusals: Vec<Refusing>,
    accepting: Vec<String>,
    stale: Vec<Stale>,
}

/// What the confirmation reads: what the label serves now and the diff to
/// the target's (heaviest arm's) text, and the builds' verdicts.
struct Read {
    current: String,
    rows: Vec<Row>,
    refusals: Vec<Refusing>,
    accepting: Vec<String>,
    stale: Vec<Stale>,
}

fn read(
    catalog: &mut Catalog,
    verdicts: &Verdicts,
    id: &str,
    label: &str,
    target: &Target,
    bound: usize,
) -> Result<Read, Error> {
    let arms = match catalog.label_arms(id, label) {
        Ok(arms) => arms,
        Err(e) if e.code() == ErrorCode::NotFound => Vec::new(),
        Err(e) => return Err(e),
    };
    let now = arms.iter().max_by_key(|a| a.weight).map(|a| a.version);
    let to = match target {
        Target::Version(v) => *v,
        Target::Split(arms) => arms
            .iter()
            .max_by_key(|a| a.weight)
            .map_or(0, |a| a.version),
    };
    let text_of = |catalog: &mut Catalog, version: Option<u32>| -> Result<String, Error> {
        let Some(version) = version else {
            return Ok(String::new());
        };
        let version = catalog.get(id, &Selector::Version(version))?;
        let mut text = version.resolved_system.clone();
        if let Some(user) = &version.resolved_user {
            text.push_str("\n--- user ---\n");
            text.push_str(user);
        }
        // The examples' renders show what the change does to real output.
        let library = library_of(catalog, &version, bound)?;
        for example in examples(&library, id) {
            text.push_str(&format!("\n--- example {} ---\n", example.name));
            text.push_str(&as_text(&example.rendered));
        }
        Ok(text)
    };
    let before = text_of(catalog, now)?;
    let after = text_of(catalog, Some(to))?;
    // Bounded by its budget (a few milliseconds at most), so it needs no
    // cancellation: without a flag it always finishes.
    let rows = if before == after {
        Vec::new()
    } else {
        compare(&before, &after, &mut Budget::new(DEFAULT_STEPS, None))
            .map(|compared| compared.rows)
            .unwrap_or_default()
    };
    let (mut refusals, mut accepting, mut stale) = (Vec::new(), Vec::new(), Vec::new());
    let now = Timestamp::now();
    for build in registered(catalog, id)?
        .into_iter()
        .filter(|b| b.label == label)
    {
        if is_stale(&build, now) {
            stale.push(Stale {
                last_seen: When::of(build.last_seen),
                process: build.process,
            });
            continue;
        }
        let mut reasons = Vec::new();
        for version in target.versions() {
            if let Some(reason) = refusal(catalog, verdicts, id, version, &build)? {
                reasons.push(format!("v{version}: {reason}"));
            }
        }
        if reasons.is_empty() {
            accepting.push(build.process);
        } else {
            refusals.push(Refusing {
                process: build.process,
                reason: Prose::of(&reasons.join("; ")),
            });
        }
    }
    Ok(Read {
        current: if arms.is_empty() {
            "nothing (a new label)".to_string()
        } else {
            arms_text(&arms)
        },
        rows,
        refusals,
        accepting,
        stale,
    })
}

pub(crate) async fn confirm(
    State(state): State<Arc<AppState>>,
    user: PageUser,
    Path(id): Path<String>,
    Query(params): Query<MoveParams>,
) -> PageResult {
    let MoveParams {
        label,
        version,
        arms,
    } = params;
    let chrome = may(&user, Action::move_label(&state, &label))?;
    let target =
        Target::parse(arms.as_deref().or(version.as_deref()).unwrap_or("")).or_page(&chrome)?;
    let (wanted, wanted_label, wanted_target) = (id.clone(), label.clone(), target.clone());
    let verdicts = Arc::clone(&state.verdicts);
    let bound = state.max_render_bytes;
    let read = state
        .catalog
        .run(&user.user.name, move |catalog| {
            read(
                catalog,
                &verdicts,
                &wanted,
                &wanted_label,
                &wanted_target,
                bound,
            )
        })
        .await
        .or_page(&chrome)?;
    Ok(html(&MovePage {
        csrf: chrome.csrf.clone(),
        chrome: Some(chrome),
        protected: state.is_protected(&label),
        target: target.describe(),
        target_param: target.param(),
        current: read.current,
        rows: read.rows,
        refusals: read.refusals,
        accepting: read.accepting,
        stale: read.stale,
        id,
        label,
    }))
}

#[derive(Deserialize)]
pub(crate) struct Apply {
    #[serde(default)]
    csrf: String,
    label: String,
    target: String,
}

pub(crate) async fn apply(
    State(state): State<Arc<AppState>>,
    user: PageUser,
    Path(id): Path<String>,
    Form(form): Form<Apply>,
) -> PageResult {
    let chrome = may_send(&user, &form.csrf, Action::move_label(&state, &form.label))?;
    let target = Target::parse(&form.target).or_page(&chrome)?;
    let wanted = id.clone();
    state
        .catalog
        .run(&user.user.name, move |catalog| match &target {
            Target::Version(v) => catalog.set_label(&wanted, &form.label, *v),
            Target::Split(arms) => catalog.split_label(&wanted, &form.label, arms),
        })
        .await
        .or_page(&chrome)?;
    Ok(Redirect::to(&format!("/prompts/{id}")).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_target_is_a_version_or_a_split() {
        assert_eq!(Target::parse("3").unwrap(), Target::Version(3));
        assert_eq!(Target::parse("v3").unwrap(), Target::Version(3));
        let split = Target::parse("3:90, 4:10").unwrap();
        assert_eq!(split.param(), "3:90,4:10");
        assert_eq!(split.versions(), [3, 4]);
        assert!(Target::parse("3:90").is_err());
        assert!(Target::parse("three").is_err());
        assert!(Target::parse("").is_err());
    }
}

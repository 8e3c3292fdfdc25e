//! `/prompts/{id}/preview`: a version rendered with a declared example,
//! with values from a form made from its variables, or with pasted JSON.

use super::diagnostics::RenderView;
use super::prose::Prose;
use super::shared::{Chrome, OrPage, PageResult, html};
use crate::auth::PageUser;
use crate::failure::Failure;
use crate::preview::{examples, library_of, render};
use crate::state::AppState;
use askama::Template;
use axum::extract::{Path, Query, State};
use promptpack::{Library, VarKind};
use promptpack_catalog::Selector;
use serde_json::{Map, Value};
use std::sync::Arc;

/// An input of the values form.
pub(crate) struct Field {
    name: String,
    kind: &'static str,
    optional: bool,
    choices: Vec<String>,
    value: String,
    description: Prose,
}

#[derive(Template)]
#[template(path = "preview.html")]
struct PreviewPage {
    chrome: Option<Chrome>,
    id: String,
    version: u32,
    numbers: Vec<u32>,
    from: String,
    example: String,
    example_names: Vec<String>,
    fields: Vec<Field>,
    json: String,
    renders: Vec<RenderView>,
    coverage: Vec<Coverage>,
}

/// A branch and whether an example reaches it.
pub(crate) struct Coverage {
    text: String,
    reached: bool,
}

fn kind_name(kind: VarKind) -> (&'static str, bool) {
    match kind {
        VarKind::Text => ("text", false),
        VarKind::Flag => ("flag", false),
        VarKind::Optional => ("optional", true),
        VarKind::Choice => ("choice", false),
        VarKind::OptionalChoice => ("optional choice", true),
        VarKind::Messages => ("history", true),
    }
}

/// The form's inputs, filled with `values`.
fn fields(library: &Library, id: &str, values: &Map<String, Value>) -> Vec<Field> {
    let Some(prompt) = promptpack::house::resolved(library, id) else {
        return Vec::new();
    };
    let declared = prompt.front_matter.vars.clone().unwrap_or_default();
    prompt
        .vars
        .iter()
        .map(|var| {
            let (kind, optional) = kind_name(var.kind());
            let value = match values.get(&var.name) {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Null) | None => String::new(),
                Some(other) => other.to_string(),
            };
            Field {
                name: var.name.clone(),
                kind,
                optional,
                choices: var.choices.clone(),
                value,
                description: Prose::of(
                    declared
                        .iter()
                        .find(|d| d.name == var.name)
                        .and_then(|d| d.description.as_deref())
                        .unwrap_or_default(),
                ),
            }
        })
        .collect()
}

/// The values of the form's `var.NAME` inputs, typed by the variables'
/// kinds: a flag is whether its box is checked, an empty optional is absent.
fn form_values(library: &Library, id: &str, pairs: &[(String, String)]) -> Map<String, Value> {
    let mut values = Map::new();
    let Some(prompt) = promptpack::house::resolved(library, id) else {
        return values;
    };
    for var in &prompt.vars {
        let given = pairs
            .iter()
            .rev()
            .find(|(key, _)| key.strip_prefix("var.") == Some(var.name.as_str()))
            .map(|(_, value)| value.clone());
        let (_, optional) = kind_name(var.kind());
        let value = match (var.kind(), given) {
            (VarKind::Flag, given) => Some(Value::Bool(given.is_some())),
            // A history is a JSON array of messages; text that is not JSON
            // is given as it is, for the render to refuse with its reason.
            (VarKind::Messages, Some(text)) if !text.trim().is_empty() => {
                Some(serde_json::from_str(&text).unwrap_or(Value::String(text)))
            }
            (_, Some(text)) if text.is_empty() && optional => None,
            (_, Some(text)) => Some(Value::String(text)),
            (_, None) => None,
        };
        if let Some(value) = value {
            values.insert(var.name.clone(), value);
        }
    }
    values
}

fn param<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs
        .iter()
        .rev()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.as_str())
}

pub(crate) async fn page(
    State(state): State<Arc<AppState>>,
    user: PageUser,
    Path(id): Path<String>,
    Query(pairs): Query<Vec<(String, String)>>,
) -> PageResult {
    let chrome = Chrome::of(&user);
    let selector = match param(&pairs, "version").map(str::parse::<u32>) {
        None => Selector::Latest,
        Some(Ok(n)) => Selector::Version(n),
        Some(Err(_)) => {
            return Err(Failure::bad_request("`version` is a number")).or_page(&chrome);
        }
    };
    let wanted = id.clone();
    let bound = state.max_render_bytes;
    let (version, library, numbers) = state
        .catalog
        .run(&user.user.name, move |catalog| {
            let version = catalog.get(&wanted, &selector)?;
            let library = library_of(catalog, &version, bound)?;
            let numbers: Vec<u32> = catalog
                .history(&wanted)?
                .versions
                .iter()
                .map(|v| v.version)
                .collect();
            Ok((version, library, numbers))
        })
        .await
        .or_page(&chrome)?;
    let all_examples = examples(&library, &id);
    let example_names: Vec<String> = all_examples.iter().map(|e| e.name.clone()).collect();
    // The form sends `from` always: without it the page was opened, not
    // submitted, and values not yet given are no error to show.
    let submitted = param(&pairs, "from").is_some();
    let from = param(&pairs, "from")
        .unwrap_or(if all_examples.is_empty() {
            "form"
        } else {
            "example"
        })
        .to_string();
    let example = param(&pairs, "example")
        .map(str::to_string)
        .or_else(|| example_names.first().cloned())
        .unwrap_or_default();
    let json = param(&pairs, "json").unwrap_or("{}").to_string();
    let (values, renders) = match from.as_str() {
        "json" => match serde_json::from_str::<Map<String, Value>>(&json) {
            Ok(values) => {
                let rendered = render(&library, &id, &values);
                (values, vec![RenderView::of(&state, "values", &rendered)])
            }
            Err(e) => {
                let error = promptpack::Error::new(
                    promptpack::ErrorCode::InvalidVars,
                    format!("the JSON is not an object of values: {e}"),
                );
                (
                    Map::new(),
                    vec![RenderView::of(&state, "values", &Err(error))],
                )
            }
        },
        "form" => {
            let values = form_values(&library, &id, &pairs);
            let asks = promptpack::house::resolved(&library, &id)
                .is_some_and(|prompt| !prompt.vars.is_empty());
            if submitted || !asks {
                let rendered = render(&library, &id, &values);
                (values, vec![RenderView::of(&state, "values", &rendered)])
            } else {
                (values, Vec::new())
            }
        }
        _ => match all_examples.iter().find(|e| e.name == example) {
            Some(chosen) => (
                chosen.values.clone(),
                vec![RenderView::of(&state, &chosen.name, &chosen.rendered)],
            ),
            None => (Map::new(), Vec::new()),
        },
    };
    let coverage = crate::coverage::branches(&library, &id, &all_examples)
        .into_iter()
        .map(|(text, reached)| Coverage { text, reached })
        .collect();
    Ok(html(&PreviewPage {
        chrome: Some(chrome),
        version: version.version,
        numbers,
        fields: fields(&library, &id, &values),
        from,
        example,
        example_names,
        json,
        renders,
        coverage,
        id,
    }))
}

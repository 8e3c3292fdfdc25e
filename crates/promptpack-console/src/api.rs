//! The JSON API under `/api/v1`: the catalog's operations for services in
//! any language, each as the user of the bearer token. `openapi.json`
//! describes every route; the tests hold the server to it.

use crate::action::Action;
use crate::auth::ApiUser;
use crate::failure::{ApiFailure, Failure};
use crate::preview::{library_chosen_by, render};
use crate::reads::{snippet_revisions, syntax_of};
use crate::state::AppState;
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::{get, post, put};
use axum::{Json, Router};
use promptpack_catalog::{Arm, Contract, Draft, ListQuery, Selector};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::sync::Arc;

type Shared = State<Arc<AppState>>;
type ApiResult = Result<axum::response::Response, ApiFailure>;

pub(crate) fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/openapi.json", get(openapi))
        .route("/me", get(me))
        .route("/prompts", get(list))
        .route("/prompts/{id}", get(prompt).delete(delete))
        .route("/prompts/{id}/history", get(history))
        .route("/prompts/{id}/diff", get(diff))
        .route("/prompts/{id}/render", post(render_prompt))
        .route("/prompts/{id}/parse", post(parse_answer))
        .route("/prompts/{id}/versions", post(publish))
        .route("/prompts/{id}/labels/{label}", put(set_label))
        .route("/prompts/{id}/restore", post(restore))
        .route("/prompts/{id}/upgrade", post(upgrade))
        .route("/snippets", get(snippets))
        .route("/snippets/{name}", get(snippet))
        .fallback(unknown_route)
}

/// A JSON body, or the API's own error for one that is not.
fn body<T>(given: Result<Json<T>, JsonRejection>) -> Result<T, ApiFailure> {
    given.map(|Json(value)| value).map_err(|e| {
        let code = if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            "too_large"
        } else {
            "invalid_request"
        };
        ApiFailure(Failure::new(e.status(), code, e.body_text()))
    })
}

fn query<T>(given: Result<Query<T>, QueryRejection>) -> Result<T, ApiFailure> {
    given
        .map(|Query(value)| value)
        .map_err(|e| ApiFailure(Failure::bad_request(e.body_text())))
}

fn ok(value: impl serde::Serialize) -> ApiResult {
    Ok(Json(value).into_response())
}

async fn openapi() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "application/json")], crate::OPENAPI)
}

async fn unknown_route() -> ApiFailure {
    ApiFailure(Failure::new(
        StatusCode::NOT_FOUND,
        "not_found",
        "no such route: see /api/v1/openapi.json",
    ))
}

async fn me(ApiUser(user): ApiUser) -> ApiResult {
    ok(user)
}

#[derive(Deserialize)]
struct ListParams {
    limit: Option<u32>,
    cursor: Option<String>,
    q: Option<String>,
}

async fn list(
    State(state): Shared,
    ApiUser(user): ApiUser,
    params: Result<Query<ListParams>, QueryRejection>,
) -> ApiResult {
    let params = query(params)?;
    let page = state
        .catalog
        .run(&user.name, move |catalog| {
            catalog.search(&ListQuery {
                limit: params.limit.unwrap_or(100),
                cursor: params.cursor.as_deref(),
                text: params.q.as_deref(),
            })
        })
        .await?;
    ok(page)
}

/// `?version=N` or `?label=L` (the newest version without either).
#[derive(Deserialize)]
struct Which {
    version: Option<u32>,
    label: Option<String>,
}

impl Which {
    fn selector(self) -> Result<Selector, Failure> {
        match (self.version, self.label) {
            (Some(_), Some(_)) => Err(Failure::bad_request("give a version or a label, not both")),
            (Some(n), None) => Ok(Selector::Version(n)),
            (None, Some(label)) => Ok(Selector::Label(label)),
            (None, None) => Ok(Selector::Latest),
        }
    }
}

async fn prompt(
    State(state): Shared,
    ApiUser(user): ApiUser,
    Path(id): Path<String>,
    which: Result<Query<Which>, QueryRejection>,
) -> ApiResult {
    let selector = query(which)?.selector()?;
    let version = state
        .catalog
        .run(&user.name, move |catalog| catalog.get(&id, &selector))
        .await?;
    ok(version)
}

async fn history(
    State(state): Shared,
    ApiUser(user): ApiUser,
    Path(id): Path<String>,
) -> ApiResult {
    let history = state
        .catalog
        .run(&user.name, move |catalog| catalog.history(&id))
        .await?;
    ok(history)
}

#[derive(Deserialize)]
struct DiffParams {
    from: u32,
    to: u32,
}

async fn diff(
    State(state): Shared,
    ApiUser(user): ApiUser,
    Path(id): Path<String>,
    params: Result<Query<DiffParams>, QueryRejection>,
) -> ApiResult {
    let DiffParams { from, to } = query(params)?;
    let diff = state
        .catalog
        .run(&user.name, move |catalog| {
            catalog.diff(&id, &Selector::Version(from), &Selector::Version(to))
        })
        .await?;
    ok(json!({ "from": from, "to": to, "diff": diff }))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RenderBody {
    version: Option<u32>,
    label: Option<String>,
    #[serde(default)]
    vars: Map<String, Value>,
}

async fn render_prompt(
    State(state): Shared,
    ApiUser(user): ApiUser,
    Path(id): Path<String>,
    given: Result<Json<RenderBody>, JsonRejection>,
) -> ApiResult {
    let RenderBody {
        version,
        label,
        vars,
    } = body(given)?;
    let selector = Which { version, label }.selector()?;
    let bound = state.max_render_bytes;
    let rendered = state
        .catalog
        .run(&user.name, move |catalog| {
            let version = catalog.get(&id, &selector)?;
            let library = library_chosen_by(catalog, &version, &selector, bound)?;
            let prompt = render(&library, &id, &vars)?;
            // Every message to send, the system message first: `system`
            // then `user` for two files, or a conversation's messages.
            // Each as a chat API's message (`MessageRef`'s serialization:
            // `name` and `id` only when the message has them).
            let messages: Vec<promptpack::MessageRef<'_>> = prompt.messages().collect();
            let mut rendered = json!({
                "system": prompt.system,
                "user": prompt.user,
                "messages": messages,
                // What the request sends beside the messages, as the chat
                // API takes it (`promptpack render --json` gives the same):
                // the tools the model may call (none: empty), and the
                // response format when the version declares a response.
                "tools": library.tools(&id).unwrap_or_else(|| json!([])),
                "version": version.version,
                "content_hash": version.content_hash,
            });
            if let Some(format) = library.response_format(&id) {
                rendered["response_format"] = format;
            }
            Ok(rendered)
        })
        .await?;
    ok(rendered)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ParseBody {
    /// The model's answer, as it sent it.
    answer: String,
    version: Option<u32>,
    label: Option<String>,
}

/// A model's answer read against the response a version declares, for a
/// service in any language: the validated JSON, or the answer's error
/// located in its text (`answer_not_json`, `answer_mismatch`). A read: any
/// user may, and it is not audited.
async fn parse_answer(
    State(state): Shared,
    ApiUser(user): ApiUser,
    Path(id): Path<String>,
    given: Result<Json<ParseBody>, JsonRejection>,
) -> ApiResult {
    let ParseBody {
        answer,
        version,
        label,
    } = body(given)?;
    let selector = Which { version, label }.selector()?;
    let bound = state.max_render_bytes;
    let wanted = id.clone();
    let (number, content_hash, library) = state
        .catalog
        .run(&user.name, move |catalog| {
            let version = catalog.get(&wanted, &selector)?;
            let library = library_chosen_by(catalog, &version, &selector, bound)?;
            Ok((version.version, version.content_hash, library))
        })
        .await?;
    let declares_response = library
        .front_matter(&id)
        .is_some_and(|f| f.response.is_some());
    if !declares_response {
        return Err(Failure::new(
            StatusCode::CONFLICT,
            "no_response",
            format!(
                "v{number} of `{id}` declares no `response`: there is no shape to read its answers as"
            ),
        )
        .into());
    };
    // Off the runtime's threads: an answer may be megabytes of JSON. Read
    // through the version's library, as a service's `Library` reads it, so
    // that the read has its span (promptpack's `tracing`).
    let value = tokio::task::spawn_blocking(move || library.parse_response(&id, &answer))
        .await
        .map_err(|e| {
            Failure::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                format!("the answer could not be read: {e}"),
            )
        })??;
    ok(json!({ "value": value, "version": number, "content_hash": content_hash }))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PublishBody {
    system: String,
    user: Option<String>,
    /// `messages.md`, for a conversation (never beside `user`).
    messages: Option<String>,
    message: String,
    /// A contract (`promptpack contract`'s JSON) the version must keep.
    contract: Option<Value>,
}

async fn publish(
    State(state): Shared,
    ApiUser(user): ApiUser,
    Path(id): Path<String>,
    given: Result<Json<PublishBody>, JsonRejection>,
) -> ApiResult {
    Action::Publish.check(&user)?;
    let PublishBody {
        system,
        user: user_part,
        messages,
        message,
        contract,
    } = body(given)?;
    let contract = contract
        .map(|value| Contract::from_json("contract", &value.to_string()))
        .transpose()?;
    let (version, created) = state
        .catalog
        .run(&user.name, move |catalog| {
            let syntax = syntax_of(catalog, &id)?;
            let draft = Draft {
                system,
                user: user_part,
                messages,
                message,
                syntax,
            };
            catalog.publish_or_create(&id, &draft, contract.as_ref())
        })
        .await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(version)).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LabelBody {
    version: Option<u32>,
    arms: Option<Vec<(u32, u32)>>,
}

async fn set_label(
    State(state): Shared,
    ApiUser(user): ApiUser,
    Path((id, label)): Path<(String, String)>,
    given: Result<Json<LabelBody>, JsonRejection>,
) -> ApiResult {
    Action::move_label(&state, &label).check(&user)?;
    let LabelBody { version, arms } = body(given)?;
    let entry = match (version, arms) {
        (Some(version), None) => {
            state
                .catalog
                .run(&user.name, move |catalog| {
                    catalog.set_label(&id, &label, version)
                })
                .await?
        }
        (None, Some(arms)) => {
            let arms: Vec<Arm> = arms
                .into_iter()
                .map(|(version, weight)| Arm { version, weight })
                .collect();
            state
                .catalog
                .run(&user.name, move |catalog| {
                    catalog.split_label(&id, &label, &arms)
                })
                .await?
        }
        _ => {
            return Err(Failure::bad_request(
                "give `version` (a label on one version) or `arms` (a split: [[version, weight], …])",
            )
            .into());
        }
    };
    ok(entry)
}

async fn delete(State(state): Shared, ApiUser(user): ApiUser, Path(id): Path<String>) -> ApiResult {
    Action::Delete.check(&user)?;
    state
        .catalog
        .run(&user.name, move |catalog| catalog.delete(&id))
        .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

async fn restore(
    State(state): Shared,
    ApiUser(user): ApiUser,
    Path(id): Path<String>,
) -> ApiResult {
    Action::Restore.check(&user)?;
    state
        .catalog
        .run(&user.name, move |catalog| catalog.restore(&id))
        .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

async fn upgrade(
    State(state): Shared,
    ApiUser(user): ApiUser,
    Path(id): Path<String>,
) -> ApiResult {
    Action::UpgradeSnippets.check(&user)?;
    let version = state
        .catalog
        .run(&user.name, move |catalog| catalog.upgrade(&id, None))
        .await?;
    ok(version)
}

async fn snippets(State(state): Shared, ApiUser(user): ApiUser) -> ApiResult {
    let snippets = state
        .catalog
        .run(&user.name, |catalog| catalog.snippets())
        .await?;
    ok(snippets)
}

/// A snippet's revisions, newest first, and every version of a live prompt
/// that pins it, with the revision it pins: what its page shows.
async fn snippet(
    State(state): Shared,
    ApiUser(user): ApiUser,
    Path(name): Path<String>,
) -> ApiResult {
    let (revisions, uses) = state
        .catalog
        .run(&user.name, move |catalog| {
            let revisions = snippet_revisions(catalog, &name)?;
            Ok((revisions, catalog.snippet_uses(&name)?))
        })
        .await?;
    let uses: Vec<Value> = uses
        .into_iter()
        .map(|pin| json!({"prompt": pin.prompt_id, "version": pin.version, "revision": pin.revision}))
        .collect();
    ok(json!({ "revisions": revisions, "uses": uses }))
}

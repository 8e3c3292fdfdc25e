//! The pages: server-side HTML, one module per page, and the routes to
//! them. Every value from the catalog goes through askama's HTML escaping;
//! forms that write carry the session's CSRF token; nothing needs
//! JavaScript. What the pages share is in `shared` (the header, rendering,
//! escaping, the prologue of a form that writes), `diagnostics` (checks and
//! renders as a page shows them) and `error` (the error page).

mod diagnostics;
mod diff;
mod edit;
pub(crate) mod error;
mod exchange;
mod labels;
mod list;
mod login;
mod preview;
mod prompt;
mod snippet;
mod snippet_edit;

pub(crate) mod prose;
mod shared;
pub(crate) mod when;

use crate::auth::{NoPageUser, PageUser};
use crate::failure::Failure;
use crate::state::AppState;
use axum::Router;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use error::failure_page;
use shared::Chrome;
use std::sync::Arc;

pub(crate) fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/", get(list::page))
        .route("/login", get(login::form).post(login::sign_in))
        .route("/logout", axum::routing::post(login::sign_out))
        .route("/assets/style.css", get(style))
        .route("/prompts/{id}", get(prompt::page))
        .route("/prompts/{id}/delete", axum::routing::post(prompt::delete))
        .route(
            "/prompts/{id}/restore",
            axum::routing::post(prompt::restore),
        )
        .route(
            "/prompts/{id}/upgrade",
            axum::routing::post(prompt::upgrade),
        )
        .route("/prompts/{id}/diff", get(diff::page))
        .route("/prompts/{id}/preview", get(preview::page))
        .route("/prompts/{id}/edit", get(edit::form).post(edit::submit))
        .route(
            "/prompts/{id}/move",
            get(labels::confirm).post(labels::apply),
        )
        .route("/snippets/{name}", get(snippet::page))
        .route("/snippets/{name}/diff", get(snippet::diff))
        .route(
            "/snippets/{name}/edit",
            get(snippet_edit::form).post(snippet_edit::submit),
        )
        .route(
            "/snippets/{name}/upgrade",
            axum::routing::post(snippet::upgrade),
        )
}

async fn style() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/css; charset=utf-8")],
        include_str!("../../assets/style.css"),
    )
}

/// The page of a path that is no page (nor API route): a 404 with the
/// header of whoever is signed in.
pub(crate) async fn not_found(user: Result<PageUser, NoPageUser>) -> Response {
    let chrome = user.ok().map(|user| Chrome::of(&user));
    failure_page(
        Failure::new(StatusCode::NOT_FOUND, "not_found", "there is no such page"),
        chrome,
    )
}

//! What wraps every request: a bound on the time its body takes to
//! arrive, the console's own error body for answers made outside its
//! handlers, the protective headers, and its line in the request log.
//!
//! The body gets a deadline ([`crate::body_deadline`]): one trickled past
//! it is answered 408 and its connection freed. The handler itself is not
//! cut short: its catalog calls have bounds of their own, and dropping it
//! mid-write would leave a write done whose request was told it failed.

use crate::body_deadline::with_deadline;
use crate::failure::{ApiFailure, Failure};
use crate::protective_headers::protect;
use crate::request_log::{self, Peer, RequestUser};
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The most of a plain-text error body kept as the message of the page
/// that replaces it (an extractor's rejection is a line or two).
const MAX_MESSAGE_BYTES: usize = 4 << 10;

/// What the middleware is told by the server it wraps.
#[derive(Debug, Clone, Copy)]
pub(crate) struct GuardSettings {
    /// How long a request's body may take to arrive once its headers are
    /// in.
    pub(crate) request_timeout: Duration,
    /// Every route answers JSON (the relay), not only those under
    /// `/api/v1`: an error made outside a handler is JSON too.
    pub(crate) all_json: bool,
}

/// The middleware: the request timeout bounds how long the body may take
/// to arrive once the headers are in.
pub(crate) async fn guard(
    State(settings): State<GuardSettings>,
    request: Request,
    next: Next,
) -> Response {
    let started = Instant::now();
    let request_timeout = settings.request_timeout;
    let user = RequestUser::default();
    let expired = Arc::new(AtomicBool::new(false));
    let (mut parts, body) = request.into_parts();
    parts.extensions.insert(user.clone());
    let body = with_deadline(body, request_timeout, Arc::clone(&expired));
    let request = Request::from_parts(parts, body);
    let peer = request.extensions().get::<Peer>().copied();
    let method = request.method().clone();
    let path = request.uri().path().to_string();
    let api = settings.all_json || path == "/api/v1" || path.starts_with("/api/v1/");
    let response = next.run(request).await;
    let mut response = if expired.load(Ordering::SeqCst) {
        answer(
            Failure::new(
                StatusCode::REQUEST_TIMEOUT,
                "request_timeout",
                format!(
                    "the request's body did not arrive within {} s",
                    request_timeout.as_secs_f64()
                ),
            ),
            api,
        )
    } else {
        own_error_body(response, api).await
    };
    protect(response.headers_mut());
    request_log::request(
        peer,
        &method,
        &path,
        response.status(),
        started.elapsed(),
        &user,
    );
    response
}

/// A failure as the API (JSON) or the pages (HTML) show it.
fn answer(failure: Failure, api: bool) -> Response {
    if api {
        ApiFailure(failure).into_response()
    } else {
        crate::pages::error::failure_page(failure, None)
    }
}

/// `response`, or for an error answered in another form than the
/// console's own (an extractor's plain-text rejection: a form with a field
/// twice, a query that does not parse, a body too large; an empty 405),
/// the console's error page or JSON error saying the same.
async fn own_error_body(response: Response, api: bool) -> Response {
    let status = response.status();
    let own_type = if api { "application/json" } else { "text/html" };
    let is_own = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with(own_type));
    if !(status.is_client_error() || status.is_server_error()) || is_own {
        return response;
    }
    let body = axum::body::to_bytes(response.into_body(), MAX_MESSAGE_BYTES)
        .await
        .unwrap_or_default();
    let said = String::from_utf8_lossy(&body).trim().to_string();
    let message = if said.is_empty() {
        status
            .canonical_reason()
            .unwrap_or("the request failed")
            .to_lowercase()
    } else {
        said
    };
    // An extractor answers 422 for a form or query that does not
    // deserialize; the console keeps 422 for content it refuses, and a
    // form it cannot read is a bad request.
    let (status, code) = match status {
        StatusCode::UNPROCESSABLE_ENTITY | StatusCode::BAD_REQUEST => {
            (StatusCode::BAD_REQUEST, "invalid_request")
        }
        StatusCode::NOT_FOUND => (status, "not_found"),
        StatusCode::METHOD_NOT_ALLOWED => (status, "method_not_allowed"),
        StatusCode::PAYLOAD_TOO_LARGE => (status, "too_large"),
        status if status.is_client_error() => (status, "invalid_request"),
        status => (status, "internal"),
    };
    answer(Failure::new(status, code, message), api)
}

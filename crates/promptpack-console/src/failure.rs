//! Why a request failed, and the HTTP status and JSON body that say so. The
//! codes are the catalog's ([`ErrorCode`]) and the console's own:
//! `unauthenticated` (no user), `forbidden` (a user whose role may not),
//! `csrf` (a form without its token, or a sign-in posted by another site),
//! `request_timeout` (a request not sent and answered in time),
//! `not_found` and `method_not_allowed` (no such route), `no_response` (an
//! answer to read against a version that declares no `response`), and
//! `internal`.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use promptpack_catalog::{Error, ErrorCode};
use serde_json::json;

/// A failed request: a stable code, a message, and for errors of a text
/// every diagnostic with its location.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) status: StatusCode,
    pub(crate) code: String,
    pub(crate) message: String,
    /// The catalog's error, kept for its diagnostics (line and column).
    pub(crate) error: Option<Error>,
}

impl Failure {
    pub(crate) fn new(status: StatusCode, code: &str, message: impl Into<String>) -> Failure {
        Failure {
            status,
            code: code.to_string(),
            message: message.into(),
            error: None,
        }
    }

    pub(crate) fn unauthenticated() -> Failure {
        Failure::new(
            StatusCode::UNAUTHORIZED,
            "unauthenticated",
            "sign in, or send `Authorization: Bearer TOKEN`",
        )
    }

    pub(crate) fn forbidden(message: impl Into<String>) -> Failure {
        Failure::new(StatusCode::FORBIDDEN, "forbidden", message)
    }

    pub(crate) fn bad_request(message: impl Into<String>) -> Failure {
        Failure::new(StatusCode::BAD_REQUEST, "invalid_request", message)
    }

    /// What a client not known yet learns of a catalog that failed while
    /// its user was looked up: only that the catalog is unavailable. The
    /// error itself, which may name the catalog's host, port, database and
    /// user, goes to the log.
    pub(crate) fn to_stranger(error: &Error) -> Failure {
        log::error!(
            target: "promptpack_console::catalog",
            "the catalog failed while a request's user was looked up: {error}"
        );
        Failure::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "unavailable",
            "the catalog is unavailable: try again shortly",
        )
    }
}

impl From<Error> for Failure {
    fn from(error: Error) -> Failure {
        let code = error.code();
        Failure {
            status: status_of(code),
            code: code.as_str().to_string(),
            message: error.to_string(),
            error: Some(error),
        }
    }
}

/// The HTTP status of a catalog error.
fn status_of(code: ErrorCode) -> StatusCode {
    match code {
        ErrorCode::NotFound | ErrorCode::UnknownPrompt | ErrorCode::SnippetNotFound => {
            StatusCode::NOT_FOUND
        }
        ErrorCode::AlreadyExists | ErrorCode::PinsCurrent | ErrorCode::ContractViolation => {
            StatusCode::CONFLICT
        }
        ErrorCode::InvalidRequest | ErrorCode::InvalidVars | ErrorCode::WrongVars => {
            StatusCode::BAD_REQUEST
        }
        ErrorCode::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
        ErrorCode::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        ErrorCode::NotConfigured | ErrorCode::Damaged | ErrorCode::Io => {
            StatusCode::INTERNAL_SERVER_ERROR
        }
        // The rest are errors of a prompt's text or of the values a render
        // was given (`missing_var`, parse errors, front matter): the
        // request was well formed, its content is refused.
        _ => StatusCode::UNPROCESSABLE_ENTITY,
    }
}

/// A failure of the JSON API: `{"error": {"code", "message", "diagnostics"?}}`.
pub(crate) struct ApiFailure(pub(crate) Failure);

impl<E: Into<Failure>> From<E> for ApiFailure {
    fn from(error: E) -> ApiFailure {
        ApiFailure(error.into())
    }
}

impl IntoResponse for ApiFailure {
    fn into_response(self) -> Response {
        let Failure {
            status,
            code,
            message,
            error,
        } = self.0;
        let mut body = json!({ "code": code, "message": message });
        if let Some(error) = error
            && error.diagnostics().iter().any(|d| d.location.is_some())
        {
            body["diagnostics"] = diagnostics_json(&error);
        }
        (status, Json(json!({ "error": body }))).into_response()
    }
}

/// Each diagnostic of `error` with its place, as the API returns them.
fn diagnostics_json(error: &Error) -> serde_json::Value {
    error
        .diagnostics()
        .iter()
        .map(|d| {
            let mut entry = json!({ "code": d.code.as_str(), "message": d.message });
            if let Some(at) = &d.location {
                entry["path"] = json!(at.path());
                entry["line"] = json!(at.line());
                entry["column"] = json!(at.column());
            }
            entry
        })
        .collect()
}

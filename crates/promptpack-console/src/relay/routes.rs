//! The relay's routes under [`RELAY_PREFIX`] (docs/relay.md): snapshots,
//! streams, versions, earlier versions, build registrations and the user.

use super::RelayShared;
use super::auth::RelayUser;
use super::catalog_feed::Command;
use super::state::Opened;
use crate::failure::{ApiFailure, Failure};
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use promptpack_catalog::relay::{Earlier, RELAY_PREFIX, WireBuild};
use promptpack_catalog::{Error, ErrorCode};
use serde::Deserialize;
use serde_json::json;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::sync::{broadcast, mpsc};

/// The routes, nested under [`RELAY_PREFIX`], and a JSON 404 for any other
/// path.
pub(crate) fn routes() -> Router<Arc<RelayShared>> {
    let relay = Router::new()
        .route("/labels/{label}", get(snapshot))
        .route("/labels/{label}/events", get(events))
        .route("/labels/{label}/earlier/{prompt}", get(earlier))
        .route("/versions/{prompt}/{version}", get(version))
        .route("/builds", post(register).delete(unregister))
        .route("/me", get(me));
    Router::new().nest(RELAY_PREFIX, relay).fallback(not_found)
}

async fn not_found() -> ApiFailure {
    Failure::new(
        StatusCode::NOT_FOUND,
        "not_found",
        format!("no such route: the relay's routes are under {RELAY_PREFIX}"),
    )
    .into()
}

/// Refuses a label that cannot be one (the catalog's names), before it is
/// followed.
fn check_label(label: &str) -> Result<(), Failure> {
    if label.len() <= 200 && promptpack_core::syntax::is_snippet_name(label) {
        Ok(())
    } else {
        Err(Failure::bad_request(
            "a label is up to 200 letters, digits, `_` and `-`, not starting with `-`",
        ))
    }
}

/// Follows `label` unless it is followed already.
async fn follow(shared: &RelayShared, label: &str) -> Result<(), Failure> {
    check_label(label)?;
    if shared.state.is_followed(label) {
        return Ok(());
    }
    let label = label.to_string();
    shared
        .feed
        .ask(|reply| Command::Follow { label, reply })
        .await
        .map_err(Failure::from)
}

fn json_response(status: StatusCode, json: impl Into<Body>) -> Response {
    let mut response = (status, json.into()).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// `GET /labels/{label}`: the snapshot, `304` for an `If-None-Match` that
/// is still current.
async fn snapshot(
    State(shared): State<Arc<RelayShared>>,
    _user: RelayUser,
    Path(label): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiFailure> {
    follow(&shared, &label).await?;
    let Some((id, json)) = shared.state.snapshot(&label) else {
        return Err(Failure::from(Error::new(
            ErrorCode::Unavailable,
            "the label is not followed",
        ))
        .into());
    };
    let etag = format!("\"{id}\"");
    let current = headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .any(|tag| {
            let tag = tag.trim();
            tag == etag || tag.strip_prefix("W/") == Some(etag.as_str()) || tag == "*"
        });
    let mut response = if current {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        json_response(StatusCode::OK, Bytes::from(json.to_string()))
    };
    if let Ok(value) = HeaderValue::from_str(&etag) {
        response.headers_mut().insert(header::ETAG, value);
    }
    // Revalidated by its ETag; kept by no shared cache (it is a user's).
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, no-cache"),
    );
    Ok(response)
}

/// The query of a stream, for clients that cannot set `Last-Event-ID`.
#[derive(Deserialize)]
struct EventsQuery {
    last_event_id: Option<String>,
}

/// `GET /labels/{label}/events`: the stream.
async fn events(
    State(shared): State<Arc<RelayShared>>,
    _user: RelayUser,
    Path(label): Path<String>,
    Query(query): Query<EventsQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiFailure> {
    follow(&shared, &label).await?;
    let last = headers
        .get("last-event-id")
        .and_then(|value| value.to_str().ok())
        .map(str::to_string)
        .or(query.last_event_id);
    let Some(opened) = shared.state.open(&label, last.as_deref()) else {
        return Err(Failure::from(Error::new(
            ErrorCode::Unavailable,
            "the label is not followed",
        ))
        .into());
    };
    let (sender, receiver) = mpsc::channel(16);
    tokio::spawn(stream(
        Arc::clone(&shared),
        Arc::from(label.as_str()),
        opened,
        sender,
    ));
    let mut response = Response::new(Body::new(EventBody(receiver)));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    // A proxy in front (nginx) must pass events on as they come.
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    Ok(response)
}

/// One follower's stream: `retry`, what it starts with, then every change
/// of its label and a ping every heartbeat, until the follower goes, the
/// relay stops, or the follower falls behind the broadcast (it is ended
/// then: it reconnects with its last event id and is replayed what it
/// missed, or sent a snapshot, never left to miss a change silently).
async fn stream(
    shared: Arc<RelayShared>,
    label: Arc<str>,
    opened: Opened,
    sender: mpsc::Sender<Bytes>,
) {
    let Opened { first, mut events } = opened;
    let mut stop = shared.stop.clone();
    if sender
        .send(Bytes::from_static(b"retry: 1000\n\n"))
        .await
        .is_err()
    {
        return;
    }
    for frame in first {
        if sender.send(frame).await.is_err() {
            return;
        }
    }
    let mut heartbeat = tokio::time::interval(shared.heartbeat);
    heartbeat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // The first tick is at once: the stream has just said something.
    heartbeat.tick().await;
    loop {
        let frame = tokio::select! {
            _ = stop.changed() => return,
            () = sender.closed() => return,
            _ = heartbeat.tick() => Bytes::from_static(b": ping\n\n"),
            event = events.recv() => match event {
                Ok(event) if event.label == label => event.frame.clone(),
                Ok(_) => continue,
                Err(broadcast::error::RecvError::Lagged(_) | broadcast::error::RecvError::Closed) => return,
            },
        };
        if sender.send(frame).await.is_err() {
            return;
        }
    }
}

/// A stream's body: the frames its task sends, until the task ends.
struct EventBody(mpsc::Receiver<Bytes>);

impl http_body::Body for EventBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        self.0
            .poll_recv(cx)
            .map(|frame| frame.map(|bytes| Ok(http_body::Frame::data(bytes))))
    }
}

/// `GET /versions/{prompt}/{version}`: a version, whole; it never changes.
async fn version(
    State(shared): State<Arc<RelayShared>>,
    _user: RelayUser,
    Path((prompt, version)): Path<(String, String)>,
) -> Result<Response, ApiFailure> {
    let Ok(version) = version.parse::<u32>() else {
        return Err(Failure::new(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("`{}` is not a version number", version.escape_debug()),
        )
        .into());
    };
    let cached = match shared.state.version(&prompt, version) {
        Some(cached) => cached,
        None => {
            shared
                .feed
                .ask(|reply| Command::Version {
                    prompt,
                    version,
                    reply,
                })
                .await?
        }
    };
    let mut response = json_response(StatusCode::OK, Bytes::from(cached.json.to_string()));
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, max-age=31536000, immutable"),
    );
    Ok(response)
}

/// `GET /labels/{label}/earlier/{prompt}`.
async fn earlier(
    State(shared): State<Arc<RelayShared>>,
    _user: RelayUser,
    Path((label, prompt)): Path<(String, String)>,
) -> Result<axum::Json<Earlier>, ApiFailure> {
    check_label(&label)?;
    let versions = shared
        .feed
        .ask(|reply| Command::Earlier {
            prompt,
            label,
            reply,
        })
        .await?;
    Ok(axum::Json(Earlier { versions }))
}

/// `POST /builds`: a build registered.
async fn register(
    State(shared): State<Arc<RelayShared>>,
    _user: RelayUser,
    axum::Json(build): axum::Json<WireBuild>,
) -> Result<StatusCode, ApiFailure> {
    let build = build.into();
    shared
        .feed
        .ask(|reply| Command::Register { build, reply })
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `DELETE /builds`: a build's registration taken away.
async fn unregister(
    State(shared): State<Arc<RelayShared>>,
    _user: RelayUser,
    axum::Json(build): axum::Json<WireBuild>,
) -> Result<StatusCode, ApiFailure> {
    let build = build.into();
    shared
        .feed
        .ask(|reply| Command::Unregister { build, reply })
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `GET /me`: the user the token names.
async fn me(RelayUser(user): RelayUser) -> axum::Json<serde_json::Value> {
    axum::Json(json!({ "name": user.name, "role": user.role.as_str() }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::relay::auth::AuthCache;
    use crate::relay::catalog_feed::Feed;
    use crate::relay::state::{EVENT_LOG, PromptArms, RelayState, Scope};
    use promptpack_catalog::relay::WireArm;
    use std::time::Duration;

    fn arms(version: u32) -> Vec<PromptArms> {
        vec![PromptArms {
            prompt: "greet".to_string(),
            arms: vec![WireArm {
                version,
                weight: 1,
                content_hash: format!("h{version}"),
            }],
            versions: Vec::new(),
            unreadable: false,
        }]
    }

    /// A follower that fell further behind than the broadcast holds has
    /// its stream ended, never a change skipped: it reconnects with its
    /// last id.
    #[test]
    fn a_follower_that_lags_is_ended() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let state = Arc::new(RelayState::new());
        state.update("production", Scope::Whole, arms(1));
        let (_stop, stopped) = tokio::sync::watch::channel(false);
        let shared = Arc::new(RelayShared {
            state: Arc::clone(&state),
            feed: Feed::detached(),
            auth: Arc::new(AuthCache::default()),
            heartbeat: Duration::from_secs(3600),
            stop: stopped,
        });
        let opened = state.open("production", None).expect("followed");
        // More changes than the broadcast keeps, before the stream reads one.
        for version in 2..(EVENT_LOG as u32 + 10) {
            state.update("production", Scope::Whole, arms(version));
        }
        let (sender, mut receiver) = mpsc::channel(16);
        let frames = runtime.block_on(async move {
            let task = tokio::spawn(stream(shared, Arc::from("production"), opened, sender));
            let mut frames = Vec::new();
            while let Some(frame) = receiver.recv().await {
                frames.push(String::from_utf8_lossy(&frame).into_owned());
            }
            let _ = task.await;
            frames
        });
        // `retry`, the snapshot, and the end: no change after a gap.
        assert_eq!(frames.len(), 2, "{frames:?}");
        assert!(frames[0].starts_with("retry: 1000"));
        assert!(frames[1].starts_with("event: snapshot"));
    }
}

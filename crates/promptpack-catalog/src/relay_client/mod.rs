//! The client of a relay (`promptpack relay`, docs/relay.md): a label's
//! snapshot, its stream of changes, the versions they name, the earlier
//! versions of a label, and build registrations, over HTTP/1.1.
//!
//! [`RelayClient`] is async, on tokio (a relay that follows another relay
//! uses it); [`BlockingRelayClient`] makes the same calls from a std
//! thread, on a current-thread runtime it owns (a live handle's thread
//! does). Every wait is bounded by [`Timeouts`]: `connect` to open the
//! TCP connection, `io` for a whole request (its answer read to the end),
//! or, on the event stream, for its answer's head; then the stream's
//! reader says how long a silence it takes for a stall.
//!
//! Plain HTTP only: a relay is reached on a private network, and TLS, when
//! needed, is terminated in front of it (a sidecar or a load balancer).
//! An `https://` URL is refused rather than sent in clear text. Each
//! request opens its own connection: a follower asks for little besides
//! its one long stream.
//!
//! Errors: `not_configured` for a token the relay does not accept (401 or
//! 403: the follower's setting is wrong, and retrying will not help until
//! it changes), `not_found` for a 404, `invalid_request` for another 4xx
//! or a URL that is not a relay's, and `unavailable` (retryable) for a 5xx,
//! a connection that fails and every bound that runs out.

mod blocking;
pub mod sse;

pub use blocking::{BlockingEventStream, BlockingRelayClient};

use crate::relay::{
    CHANGE_EVENT, Change, Earlier, RELAY_PREFIX, SNAPSHOT_EVENT, Snapshot, WireBuild, WireVersion,
};
use crate::{Error, ErrorCode, Timeouts};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::{
    ACCEPT, AUTHORIZATION, CONTENT_TYPE, HOST, HeaderValue, IF_NONE_MATCH, USER_AGENT,
};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use sse::{MAX_EVENT_BYTES, SseEvent, SseParser};
use std::collections::VecDeque;
use std::time::Duration;
use tokio::net::TcpStream;
use tokio::time::{Instant, timeout, timeout_at};

/// The most bytes an answer of the relay (other than the event stream) may
/// have: a snapshot names versions by number and hash, and a version is
/// bounded by the catalog's file limit many times over.
const MAX_ANSWER_BYTES: usize = MAX_EVENT_BYTES;

/// The header a resumed stream names the last event it applied with.
const LAST_EVENT_ID: &str = "last-event-id";

/// A relay's client: where the relay is, the token it is asked with, and
/// the bounds of each wait. Cheap to clone.
#[derive(Clone)]
pub struct RelayClient {
    target: Target,
    token: String,
    timeouts: Timeouts,
}

impl std::fmt::Debug for RelayClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the token.
        f.debug_struct("RelayClient")
            .field("url", &self.target.url.as_str())
            .field("timeouts", &self.timeouts)
            .finish_non_exhaustive()
    }
}

/// Where the relay listens.
#[derive(Debug, Clone)]
struct Target {
    /// The base URL, its path ending without `/`.
    url: url::Url,
    /// `host:port`, to connect to (an IPv6 address in brackets).
    address: String,
    /// `host:port` for the `Host` header.
    authority: String,
}

/// The user a token names (`GET /me`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct RelayUser {
    /// The user's name.
    pub name: String,
    /// Their role (`viewer`, `editor`, `admin`).
    pub role: String,
}

/// What a relay's event stream brings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamItem {
    /// The whole label: the stream could not resume where its reader left
    /// it (no id, a relay that restarted, an id too old).
    Snapshot {
        /// The event's id: the one to resume from once it is applied.
        id: String,
        /// The label.
        snapshot: Snapshot,
    },
    /// One prompt's arms of the label changed.
    Change {
        /// The event's id: the one to resume from once it is applied.
        id: String,
        /// The change.
        change: Change,
    },
}

impl RelayClient {
    /// A client of the relay at `base_url` (`http://host:port`, with a
    /// path prefix when a proxy serves the relay under one), asking with
    /// `token` (a catalog user's, any role). Connects to nothing yet.
    ///
    /// # Errors
    /// `invalid_request` for a URL that is not `http://` with a host
    /// (`https://` included: TLS is terminated in front of a relay), or an
    /// empty token.
    pub fn new(
        base_url: &str,
        token: impl Into<String>,
        timeouts: Timeouts,
    ) -> Result<RelayClient, Error> {
        let token = token.into();
        if token.is_empty() || HeaderValue::from_str(&format!("Bearer {token}")).is_err() {
            return Err(Error::new(
                ErrorCode::InvalidRequest,
                "a relay needs the token of a catalog user (non-empty, printable)",
            ));
        }
        Ok(RelayClient {
            target: Target::parse(base_url)?,
            token,
            timeouts,
        })
    }

    /// The relay's URL, as given (it holds no secret: the token is sent
    /// in a header).
    pub fn url(&self) -> &str {
        self.target.url.as_str()
    }

    /// Every prompt that has `label` (`GET /labels/{label}`), or `None`
    /// when `if_none_match` (a snapshot's event id) is still current.
    ///
    /// # Errors
    /// As the module says.
    pub async fn snapshot(
        &self,
        label: &str,
        if_none_match: Option<&str>,
    ) -> Result<Option<Snapshot>, Error> {
        let mut request = self.request(Method::GET, &["labels", label], None)?;
        if let Some(event_id) = if_none_match {
            let tag = HeaderValue::from_str(&format!("\"{event_id}\"")).map_err(|_| {
                Error::new(ErrorCode::InvalidRequest, "an event id that is no header")
            })?;
            request.headers_mut().insert(IF_NONE_MATCH, tag);
        }
        let what = format!("the snapshot of label `{label}`");
        let deadline = Instant::now() + self.timeouts.io;
        let (status, body) = self.exchange(request, deadline, &what).await?;
        if status == StatusCode::NOT_MODIFIED {
            return Ok(None);
        }
        // The ETag is the snapshot's event id, which its body holds too.
        json(&body, &what).map(Some)
    }

    /// Version `version` of prompt `prompt` with the snippet texts it pins
    /// (`GET /versions/{prompt}/{version}`).
    ///
    /// # Errors
    /// `not_found` when the relay's catalog has no such version; else as
    /// the module says.
    pub async fn version(&self, prompt: &str, version: u32) -> Result<WireVersion, Error> {
        let request = self.request(
            Method::GET,
            &["versions", prompt, &version.to_string()],
            None,
        )?;
        self.json(request, &format!("version {version} of `{prompt}`"))
            .await
    }

    /// The versions `label` of `prompt` pointed at before, newest first
    /// (`GET /labels/{label}/earlier/{prompt}`).
    ///
    /// # Errors
    /// As the module says.
    pub async fn earlier(&self, label: &str, prompt: &str) -> Result<Earlier, Error> {
        let request = self.request(Method::GET, &["labels", label, "earlier", prompt], None)?;
        self.json(
            request,
            &format!("the earlier versions of `{prompt}` under label `{label}`"),
        )
        .await
    }

    /// Registers `build` (`POST /builds`).
    ///
    /// # Errors
    /// As the module says.
    pub async fn register(&self, build: &WireBuild) -> Result<(), Error> {
        self.build_call(Method::POST, build, "registering this build")
            .await
    }

    /// Takes `build`'s registration away (`DELETE /builds`).
    ///
    /// # Errors
    /// As the module says.
    pub async fn unregister(&self, build: &WireBuild) -> Result<(), Error> {
        self.build_call(Method::DELETE, build, "unregistering this build")
            .await
    }

    /// The user the token names (`GET /me`).
    ///
    /// # Errors
    /// As the module says.
    pub async fn me(&self) -> Result<RelayUser, Error> {
        let request = self.request(Method::GET, &["me"], None)?;
        self.json(request, "the token's user").await
    }

    /// The stream of `label`'s changes (`GET /labels/{label}/events`),
    /// resumed after `last_event_id` when given. Connecting and the
    /// answer's head are bounded by the timeouts; what follows, by the
    /// reader's stall bound ([`EventStream::next`]).
    ///
    /// # Errors
    /// As the module says.
    pub async fn events(
        &self,
        label: &str,
        last_event_id: Option<&str>,
    ) -> Result<EventStream, Error> {
        let mut request = self.request(Method::GET, &["labels", label, "events"], None)?;
        request
            .headers_mut()
            .insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        if let Some(id) = last_event_id {
            let id = HeaderValue::from_str(id).map_err(|_| {
                Error::new(ErrorCode::InvalidRequest, "an event id that is no header")
            })?;
            request.headers_mut().insert(LAST_EVENT_ID, id);
        }
        let what = format!("the events of label `{label}`");
        let deadline = Instant::now() + self.timeouts.io;
        let (response, connection) = self.send(request, deadline, &what).await?;
        let status = response.status();
        if !status.is_success() {
            let body = timeout_at(deadline, read_body(response.into_body(), &what))
                .await
                .unwrap_or_else(|_| Ok(Bytes::new()))
                .unwrap_or_default();
            return Err(status_error(status, &body, &what));
        }
        Ok(EventStream {
            body: response.into_body(),
            parser: SseParser::new(),
            ready: VecDeque::new(),
            heard: Instant::now(),
            what,
            _connection: connection,
        })
    }

    /// A request of the route made of `segments` under the relay's prefix.
    fn request(
        &self,
        method: Method,
        segments: &[&str],
        body: Option<Vec<u8>>,
    ) -> Result<Request<Full<Bytes>>, Error> {
        let mut url = self.target.url.clone();
        {
            let mut path = url.path_segments_mut().map_err(|()| {
                Error::new(
                    ErrorCode::InvalidRequest,
                    "a relay URL that cannot have a path",
                )
            })?;
            path.pop_if_empty();
            path.extend(RELAY_PREFIX.trim_start_matches('/').split('/'));
            path.extend(segments);
        }
        let mut builder = Request::builder()
            .method(method)
            .uri(url.path())
            .header(HOST, &self.target.authority)
            .header(AUTHORIZATION, format!("Bearer {}", self.token))
            .header(
                USER_AGENT,
                concat!("promptpack/", env!("CARGO_PKG_VERSION")),
            );
        if body.is_some() {
            builder = builder.header(CONTENT_TYPE, "application/json");
        }
        builder
            .body(Full::new(Bytes::from(body.unwrap_or_default())))
            .map_err(|error| {
                Error::new(
                    ErrorCode::InvalidRequest,
                    format!("cannot make a request of the relay: {error}"),
                )
            })
    }

    /// Opens a connection, sends `request` and reads its answer's head,
    /// connecting within the connect bound and the rest by `deadline`.
    async fn send(
        &self,
        request: Request<Full<Bytes>>,
        deadline: Instant,
        what: &str,
    ) -> Result<(Response<Incoming>, Connection), Error> {
        let url = self.target.url.as_str();
        let bound = self.timeouts.connect;
        let stream = timeout(bound, TcpStream::connect(&self.target.address))
            .await
            .map_err(|_| {
                unavailable(format!(
                    "{what}: cannot connect to the relay at {url} within {} s",
                    bound.as_secs_f64()
                ))
            })?
            .map_err(|error| {
                unavailable(format!(
                    "{what}: cannot connect to the relay at {url}: {error}"
                ))
                .caused_by(error)
            })?;
        // Small requests and events: sent at once, not held for more.
        let _ = stream.set_nodelay(true);
        let exchange = async {
            let (mut sender, connection) =
                hyper::client::conn::http1::handshake(TokioIo::new(stream))
                    .await
                    .map_err(|error| hyper_error(what, url, error))?;
            let connection = Connection(tokio::spawn(async move {
                // Its failure shows as the request's.
                let _ = connection.await;
            }));
            let response = sender
                .send_request(request)
                .await
                .map_err(|error| hyper_error(what, url, error))?;
            Ok::<_, Error>((response, connection))
        };
        timeout_at(deadline, exchange)
            .await
            .map_err(|_| timed_out(what, url, self.timeouts.io))?
    }

    /// Sends `request` and reads its whole answer by `deadline`: its
    /// status (a success or 304) and body.
    async fn exchange(
        &self,
        request: Request<Full<Bytes>>,
        deadline: Instant,
        what: &str,
    ) -> Result<(StatusCode, Bytes), Error> {
        let (response, _connection) = self.send(request, deadline, what).await?;
        let (head, body) = response.into_parts();
        let body = timeout_at(deadline, read_body(body, what))
            .await
            .map_err(|_| timed_out(what, self.url(), self.timeouts.io))??;
        if head.status.is_success() || head.status == StatusCode::NOT_MODIFIED {
            Ok((head.status, body))
        } else {
            Err(status_error(head.status, &body, what))
        }
    }

    /// `request`'s answer, read as JSON.
    async fn json<T: DeserializeOwned>(
        &self,
        request: Request<Full<Bytes>>,
        what: &str,
    ) -> Result<T, Error> {
        let deadline = Instant::now() + self.timeouts.io;
        let (_, body) = self.exchange(request, deadline, what).await?;
        json(&body, what)
    }

    async fn build_call(&self, method: Method, build: &WireBuild, what: &str) -> Result<(), Error> {
        let body = serde_json::to_vec(build).map_err(|error| {
            Error::new(
                ErrorCode::InvalidRequest,
                format!("{what}: cannot write the registration: {error}"),
            )
        })?;
        let request = self.request(method, &["builds"], Some(body))?;
        let deadline = Instant::now() + self.timeouts.io;
        self.exchange(request, deadline, what).await.map(|_| ())
    }
}

impl Target {
    fn parse(base_url: &str) -> Result<Target, Error> {
        let invalid = |why: &str| {
            Error::new(
                ErrorCode::InvalidRequest,
                format!("`{base_url}` is not a relay's URL: {why}"),
            )
        };
        let url = url::Url::parse(base_url).map_err(|error| invalid(&error.to_string()))?;
        match url.scheme() {
            "http" => {}
            "https" => {
                return Err(invalid(
                    "a relay is reached over plain HTTP on a private network (`http://host:port`); \
                     terminate TLS in front of it",
                ));
            }
            _ => return Err(invalid("it needs `http://host:port`")),
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(invalid(
                "credentials go in the token, never in the URL, which logs show",
            ));
        }
        if url.query().is_some() || url.fragment().is_some() {
            return Err(invalid("a relay URL has no query or fragment"));
        }
        let host = url.host_str().ok_or_else(|| invalid("it names no host"))?;
        let port = url.port_or_known_default().unwrap_or(80);
        let authority = format!("{host}:{port}");
        Ok(Target {
            address: authority.clone(),
            authority,
            url,
        })
    }
}

/// The task driving one connection, stopped when its request's answer or
/// stream is dropped, so that nothing of it outlives its reader.
struct Connection(tokio::task::JoinHandle<()>);

impl Drop for Connection {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A relay's stream of a label's events, read by [`EventStream::next`].
/// Dropping it closes the connection.
pub struct EventStream {
    body: Incoming,
    parser: SseParser,
    /// Events read and not yet returned.
    ready: VecDeque<SseEvent>,
    /// When the stream last sent a byte (an event or a comment).
    heard: Instant,
    what: String,
    _connection: Connection,
}

impl std::fmt::Debug for EventStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventStream")
            .field("what", &self.what)
            .finish_non_exhaustive()
    }
}

impl EventStream {
    /// The next snapshot or change. Events of other types are skipped (a
    /// newer relay's), and so are comments, which only show the stream is
    /// alive.
    ///
    /// # Errors
    /// `unavailable` when the stream sends nothing, not even a comment,
    /// for `stall` (the relay is stalled or the network lost), when it
    /// ends, or when an event cannot be read (the stream is then of no
    /// further use: reconnect).
    pub async fn next(&mut self, stall: Duration) -> Result<StreamItem, Error> {
        loop {
            if let Some(item) = self.next_within(stall, stall).await? {
                return Ok(item);
            }
        }
    }

    /// Like [`EventStream::next`], returning `None` when nothing came for
    /// `wait` (less than `stall`), so that a reader can look up between
    /// two waits. The stall is counted from the last byte the stream sent,
    /// across calls.
    ///
    /// # Errors
    /// As [`EventStream::next`].
    pub async fn next_within(
        &mut self,
        wait: Duration,
        stall: Duration,
    ) -> Result<Option<StreamItem>, Error> {
        let until = Instant::now() + wait;
        loop {
            while let Some(event) = self.ready.pop_front() {
                if let Some(item) = item_of(event, &self.what)? {
                    return Ok(Some(item));
                }
            }
            let stalled_at = self.heard + stall;
            let frame = match timeout_at(until.min(stalled_at), self.body.frame()).await {
                Ok(frame) => frame,
                Err(_) if Instant::now() >= stalled_at => {
                    return Err(unavailable(format!(
                        "{}: the relay sent nothing for {} s (not even a ping): stalled or unreachable",
                        self.what,
                        stall.as_secs_f64()
                    )));
                }
                Err(_) => return Ok(None),
            };
            let frame = match frame {
                None => {
                    return Err(unavailable(format!(
                        "{}: the relay ended the stream",
                        self.what
                    )));
                }
                Some(Err(error)) => {
                    return Err(
                        unavailable(format!("{}: the stream broke: {error}", self.what))
                            .caused_by(error),
                    );
                }
                Some(Ok(frame)) => frame,
            };
            if let Ok(data) = frame.into_data()
                && !data.is_empty()
            {
                self.heard = Instant::now();
                self.ready.extend(self.parser.feed(&data)?);
            }
        }
    }
}

/// The item an event carries, `None` for an event of another type.
fn item_of(event: SseEvent, what: &str) -> Result<Option<StreamItem>, Error> {
    let unreadable =
        |why: String| unavailable(format!("{what}: an event that cannot be read: {why}"));
    let id = || {
        event
            .id
            .clone()
            .filter(|id| !id.is_empty())
            .ok_or_else(|| unreadable(format!("a `{}` event without an id", event.event)))
    };
    match event.event.as_str() {
        SNAPSHOT_EVENT => Ok(Some(StreamItem::Snapshot {
            id: id()?,
            snapshot: serde_json::from_str(&event.data)
                .map_err(|error| unreadable(error.to_string()))?,
        })),
        CHANGE_EVENT => Ok(Some(StreamItem::Change {
            id: id()?,
            change: serde_json::from_str(&event.data)
                .map_err(|error| unreadable(error.to_string()))?,
        })),
        _ => Ok(None),
    }
}

/// `body`, whole, up to [`MAX_ANSWER_BYTES`].
async fn read_body(body: Incoming, what: &str) -> Result<Bytes, Error> {
    Limited::new(body, MAX_ANSWER_BYTES)
        .collect()
        .await
        .map(http_body_util::Collected::to_bytes)
        .map_err(|error| unavailable(format!("{what}: cannot read the relay's answer: {error}")))
}

/// `body` read as a `T`.
fn json<T: DeserializeOwned>(body: &[u8], what: &str) -> Result<T, Error> {
    serde_json::from_slice(body).map_err(|error| {
        Error::new(
            ErrorCode::Unavailable,
            format!("{what}: the relay's answer is not what a relay sends: {error}"),
        )
        .caused_by(error)
    })
}

/// The error body of the relay's API.
#[derive(Deserialize)]
struct ErrorBody {
    error: ErrorDetail,
}

#[derive(Deserialize)]
struct ErrorDetail {
    code: String,
    message: String,
}

/// The error an answer with `status` (not a success) is, its `body`
/// (the API's `{"error": {"code", "message"}}`, when it is) saying why.
fn status_error(status: StatusCode, body: &[u8], what: &str) -> Error {
    let said = serde_json::from_slice::<ErrorBody>(body)
        .map(|body| format!(": {} ({})", body.error.message, body.error.code))
        .unwrap_or_default();
    let code = status.as_u16();
    match code {
        401 | 403 => Error::new(
            // A setting of the follower (its token), not the relay's
            // state: no retry helps until the token changes, which
            // `not_configured` says and `unavailable` would not.
            ErrorCode::NotConfigured,
            format!(
                "{what}: the relay does not accept the token (HTTP {code}){said}; \
                 a relay needs the token of a catalog user (any role)"
            ),
        ),
        404 => Error::new(
            ErrorCode::NotFound,
            format!("{what}: the relay has none (HTTP 404){said}"),
        ),
        408 | 429 => unavailable(format!("{what}: the relay is busy (HTTP {code}){said}")),
        400..=499 => Error::new(
            ErrorCode::InvalidRequest,
            format!("{what}: the relay refused the request (HTTP {code}){said}"),
        ),
        _ => unavailable(format!("{what}: the relay answered HTTP {code}{said}")),
    }
}

fn unavailable(message: String) -> Error {
    Error::new(ErrorCode::Unavailable, message)
}

fn hyper_error(what: &str, url: &str, error: hyper::Error) -> Error {
    unavailable(format!("{what}: the relay at {url} failed: {error}")).caused_by(error)
}

fn timed_out(what: &str, url: &str, bound: Duration) -> Error {
    unavailable(format!(
        "{what}: no answer from the relay at {url} within {} s: stalled, overloaded or unreachable",
        bound.as_secs_f64()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_map_to_codes() {
        let body = br#"{"error": {"code": "unauthenticated", "message": "no such token"}}"#;
        let cases = [
            (401, ErrorCode::NotConfigured),
            (403, ErrorCode::NotConfigured),
            (404, ErrorCode::NotFound),
            (400, ErrorCode::InvalidRequest),
            (422, ErrorCode::InvalidRequest),
            (408, ErrorCode::Unavailable),
            (429, ErrorCode::Unavailable),
            (500, ErrorCode::Unavailable),
            (502, ErrorCode::Unavailable),
            (503, ErrorCode::Unavailable),
        ];
        for (status, code) in cases {
            let status = StatusCode::from_u16(status).expect("a status");
            let error = status_error(status, body, "the snapshot");
            assert_eq!(error.code(), code, "{status}");
            assert!(error.to_string().contains("no such token"), "{error}");
        }
        let error = status_error(StatusCode::UNAUTHORIZED, b"not json", "the snapshot");
        assert!(error.to_string().contains("token"), "{error}");
        assert!(!error.is_retryable());
        assert!(status_error(StatusCode::BAD_GATEWAY, b"", "x").is_retryable());
    }

    #[test]
    fn urls() {
        let client = |url: &str| RelayClient::new(url, "t", Timeouts::DEFAULT);
        let ok = client("http://relay:7879").expect("a relay URL");
        assert_eq!(ok.target.address, "relay:7879");
        let request = ok
            .request(Method::GET, &["labels", "pro duction"], None)
            .expect("a request");
        assert_eq!(request.uri().path(), "/relay/v1/labels/pro%20duction");
        let prefixed = client("http://relay/prefix/").expect("a relay URL");
        assert_eq!(prefixed.target.address, "relay:80");
        let request = prefixed
            .request(Method::GET, &["me"], None)
            .expect("a request");
        assert_eq!(request.uri().path(), "/prefix/relay/v1/me");
        let v6 = client("http://[::1]:7879").expect("a relay URL");
        assert_eq!(v6.target.address, "[::1]:7879");
        for bad in [
            "https://relay:7879",
            "sqlite:x.db",
            "http://user:pw@relay",
            "http://relay?x=1",
            "relay:7879",
        ] {
            let error = client(bad).expect_err(bad);
            assert_eq!(error.code(), ErrorCode::InvalidRequest, "{bad}");
        }
        let https = client("https://relay").expect_err("https");
        assert!(https.to_string().contains("TLS"), "{https}");
        let error = RelayClient::new("http://relay", "", Timeouts::DEFAULT).expect_err("no token");
        assert_eq!(error.code(), ErrorCode::InvalidRequest);
    }

    #[test]
    fn events_become_items() {
        let event = |event: &str, data: &str, id: Option<&str>| SseEvent {
            event: event.into(),
            data: data.into(),
            id: id.map(str::to_string),
        };
        let snapshot = r#"{"label":"production","event_id":"e-1","prompts":[]}"#;
        let item = item_of(event("snapshot", snapshot, Some("e-1")), "x").expect("reads");
        assert!(matches!(item, Some(StreamItem::Snapshot { id, .. }) if id == "e-1"));
        let change = r#"{"prompt":"p","arms":[],"versions":[]}"#;
        let item = item_of(event("change", change, Some("e-2")), "x").expect("reads");
        assert!(
            matches!(item, Some(StreamItem::Change { id, change }) if id == "e-2" && change.labelled.prompt == "p")
        );
        assert_eq!(
            item_of(event("other", "{}", Some("e-3")), "x").expect("reads"),
            None
        );
        let error = item_of(event("change", "{", Some("e-4")), "x").expect_err("not JSON");
        assert_eq!(error.code(), ErrorCode::Unavailable);
        item_of(event("change", change, None), "x").expect_err("no id");
    }
}

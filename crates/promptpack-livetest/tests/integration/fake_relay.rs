//! A stand-in for a relay (docs/relay.md), small enough to steer: the
//! routes a live handle uses, served over plain HTTP/1.1 on loopback by
//! std threads, its label moved by the test, its stream cut, stalled or
//! restarted at will. The real relay (`promptpack relay`) is tested by the
//! console's own tests; this one tests the follower alone.

use promptpack_catalog::Catalog;
use promptpack_catalog::relay::{Change, LabelledArms, Snapshot, WireArm, WireVersion};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// The token the fake relay accepts.
pub const TOKEN: &str = "test-token";
/// How often it sends a comment on its streams.
const HEARTBEAT: Duration = Duration::from_millis(200);

pub struct FakeRelay {
    url: String,
    state: Arc<Mutex<State>>,
    ended: Arc<AtomicBool>,
}

#[derive(Default)]
struct State {
    epoch: u32,
    seq: u64,
    label: String,
    arms: HashMap<String, Vec<WireArm>>,
    versions: HashMap<(String, u32), WireVersion>,
    earlier: HashMap<String, Vec<u32>>,
    /// Every change of this epoch, by sequence number.
    log: Vec<(u64, Change)>,
    streams: Vec<TcpStream>,
    /// Connections are closed unanswered, streams cut.
    down: bool,
    /// Streams get nothing, not even a ping.
    stalled: bool,
    /// Build registrations received: (method, body).
    builds: Vec<(String, String)>,
}

impl State {
    fn id(&self) -> String {
        format!("{}-{}", self.epoch, self.seq)
    }

    fn snapshot(&self) -> Snapshot {
        let mut prompts: Vec<LabelledArms> = self
            .arms
            .iter()
            .filter(|(_, arms)| !arms.is_empty())
            .map(|(prompt, arms)| LabelledArms {
                prompt: prompt.clone(),
                arms: arms.clone(),
            })
            .collect();
        prompts.sort_by(|a, b| a.prompt.cmp(&b.prompt));
        Snapshot {
            label: self.label.clone(),
            event_id: self.id(),
            prompts,
        }
    }

    /// Writes `text` to every stream (unless stalled), dropping those
    /// that are gone.
    fn broadcast(&mut self, text: &str) {
        if self.stalled {
            return;
        }
        self.streams
            .retain_mut(|stream| stream.write_all(text.as_bytes()).is_ok());
    }
}

fn event(kind: &str, id: &str, data: &str) -> String {
    format!("event: {kind}\nid: {id}\ndata: {data}\n\n")
}

impl FakeRelay {
    /// Listens on a free loopback port for label `label`.
    pub fn start(label: &str) -> FakeRelay {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let url = format!("http://{}", listener.local_addr().expect("an address"));
        let state = Arc::new(Mutex::new(State {
            epoch: 1,
            label: label.to_string(),
            ..State::default()
        }));
        let ended = Arc::new(AtomicBool::new(false));
        {
            let state = Arc::clone(&state);
            let ended = Arc::clone(&ended);
            std::thread::spawn(move || {
                for connection in listener.incoming() {
                    if ended.load(Ordering::Acquire) {
                        return;
                    }
                    let Ok(connection) = connection else { continue };
                    let state = Arc::clone(&state);
                    std::thread::spawn(move || serve(connection, &state));
                }
            });
        }
        {
            let state = Arc::clone(&state);
            let ended = Arc::clone(&ended);
            std::thread::spawn(move || {
                while !ended.load(Ordering::Acquire) {
                    std::thread::sleep(HEARTBEAT);
                    lock(&state).broadcast(": ping\n\n");
                }
            });
        }
        FakeRelay { url, state, ended }
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// Points the label of `prompt` at `versions` (weight 1 each, read
    /// from `catalog`), or takes it away (none), and says so on the
    /// streams.
    pub fn point(&self, catalog: &mut Catalog, prompt: &str, versions: &[u32]) {
        let wanted: Vec<(String, u32)> =
            versions.iter().map(|v| (prompt.to_string(), *v)).collect();
        let wire: Vec<WireVersion> = catalog
            .versions_with_sources(&wanted)
            .expect("reads the versions")
            .into_iter()
            .map(|fetched| {
                let (version, sources) = fetched.expect("a version");
                WireVersion::new(version, &sources)
            })
            .collect();
        let arms: Vec<WireArm> = wire
            .iter()
            .map(|wire| WireArm {
                version: wire.version.version,
                weight: 1,
                content_hash: wire.version.content_hash.clone(),
            })
            .collect();
        let mut guard = lock(&self.state);
        let state = &mut *guard;
        for wire in &wire {
            state
                .versions
                .insert((prompt.to_string(), wire.version.version), wire.clone());
        }
        let earlier = state.earlier.entry(prompt.to_string()).or_default();
        for arm in state.arms.get(prompt).into_iter().flatten() {
            earlier.retain(|v| *v != arm.version);
            earlier.insert(0, arm.version);
        }
        state.arms.insert(prompt.to_string(), arms.clone());
        state.seq += 1;
        let change = Change {
            labelled: LabelledArms {
                prompt: prompt.to_string(),
                arms,
            },
            versions: wire,
        };
        let seq = state.seq;
        state.log.push((seq, change.clone()));
        let text = event("change", &state.id(), &json(&change));
        state.broadcast(&text);
    }

    /// The versions the label pointed at before, as the `earlier` route
    /// answers them (newest first).
    pub fn set_earlier(&self, prompt: &str, versions: &[u32]) {
        lock(&self.state)
            .earlier
            .insert(prompt.to_string(), versions.to_vec());
    }

    /// Cuts every stream and closes every new connection unanswered.
    pub fn go_down(&self) {
        let mut state = lock(&self.state);
        state.down = true;
        for stream in state.streams.drain(..) {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }

    /// Answers again, as a relay restarted: a new epoch, so that a
    /// follower's last event id is another epoch's.
    pub fn come_back(&self) {
        let mut state = lock(&self.state);
        state.down = false;
        state.epoch += 1;
        state.log.clear();
    }

    /// Sends nothing more on the streams, not even pings, until
    /// [`FakeRelay::resume`].
    pub fn stall(&self) {
        lock(&self.state).stalled = true;
    }

    pub fn resume(&self) {
        lock(&self.state).stalled = false;
    }

    /// The registrations received: (method, body).
    pub fn builds(&self) -> Vec<(String, String)> {
        lock(&self.state).builds.clone()
    }
}

impl Drop for FakeRelay {
    fn drop(&mut self) {
        self.ended.store(true, Ordering::Release);
        self.go_down();
    }
}

fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

fn json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("JSON")
}

/// One connection: one request, answered, then closed (a stream stays
/// open, written to by [`State::broadcast`]).
fn serve(connection: TcpStream, state: &Mutex<State>) {
    if lock(state).down {
        let _ = connection.shutdown(Shutdown::Both);
        return;
    }
    let Ok(reader) = connection.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(reader);
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_string();
    let path = parts.next().unwrap_or_default().to_string();
    let mut headers = HashMap::new();
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).unwrap_or(0) == 0 {
            return;
        }
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            headers.insert(name.trim().to_ascii_lowercase(), value.trim().to_string());
        }
    }
    let length: usize = headers
        .get("content-length")
        .and_then(|l| l.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let mut connection = connection;
    if headers.get("authorization").map(String::as_str) != Some(&format!("Bearer {TOKEN}")) {
        answer(
            &mut connection,
            "401 Unauthorized",
            r#"{"error": {"code": "unauthenticated", "message": "no such token"}}"#,
        );
        return;
    }
    let segments: Vec<&str> = path
        .strip_prefix("/relay/v1/")
        .unwrap_or_default()
        .split('/')
        .collect();
    let mut state = lock(state);
    match (method.as_str(), segments.as_slice()) {
        ("GET", ["labels", label]) if *label == state.label => {
            let tag = format!("\"{}\"", state.id());
            if headers.get("if-none-match") == Some(&tag) {
                let _ =
                    connection.write_all(b"HTTP/1.1 304 Not Modified\r\nConnection: close\r\n\r\n");
            } else {
                answer(&mut connection, "200 OK", &json(&state.snapshot()));
            }
        }
        ("GET", ["labels", label, "events"]) if *label == state.label => {
            let mut text = String::from(
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\nretry: 1000\n\n",
            );
            let resumed = headers
                .get("last-event-id")
                .and_then(|id| id.split_once('-'))
                .filter(|(epoch, _)| epoch.parse() == Ok(state.epoch))
                .and_then(|(_, seq)| seq.parse::<u64>().ok())
                .filter(|seq| *seq <= state.seq);
            match resumed {
                Some(after) => {
                    for (seq, change) in state.log.iter().filter(|(seq, _)| *seq > after) {
                        let id = format!("{}-{seq}", state.epoch);
                        text.push_str(&event("change", &id, &json(change)));
                    }
                }
                None => {
                    text.push_str(&event("snapshot", &state.id(), &json(&state.snapshot())));
                }
            }
            if !state.stalled && connection.write_all(text.as_bytes()).is_ok() {
                state.streams.push(connection);
            }
        }
        ("GET", ["versions", prompt, version]) => {
            let key = (prompt.to_string(), version.parse().unwrap_or(0));
            match state.versions.get(&key) {
                Some(wire) => answer(&mut connection, "200 OK", &json(wire)),
                None => answer(
                    &mut connection,
                    "404 Not Found",
                    r#"{"error": {"code": "not_found", "message": "no such version"}}"#,
                ),
            }
        }
        ("GET", ["labels", _, "earlier", prompt]) => {
            let versions = state.earlier.get(*prompt).cloned().unwrap_or_default();
            answer(
                &mut connection,
                "200 OK",
                &json(&serde_json::json!({ "versions": versions })),
            );
        }
        ("POST" | "DELETE", ["builds"]) => {
            state
                .builds
                .push((method.clone(), String::from_utf8_lossy(&body).into_owned()));
            let _ = connection.write_all(b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n");
        }
        _ => answer(
            &mut connection,
            "404 Not Found",
            r#"{"error": {"code": "not_found", "message": "no such route"}}"#,
        ),
    }
}

fn answer(connection: &mut TcpStream, status: &str, body: &str) {
    let _ = write!(
        connection,
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
}

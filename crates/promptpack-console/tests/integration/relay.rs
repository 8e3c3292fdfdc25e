//! The relay (docs/relay.md), over real HTTP on loopback, against a real
//! SQLite file and a real PostgreSQL database: its routes, its stream of
//! changes, resuming by event id, and the connections it holds.
//!
//! No timing is asserted: a wait for something the relay does in the
//! background (a change seen by the poll or a notification) is bounded
//! (a count of attempts, [`ATTEMPTS`] and [`QUIET_READS`]) and fails only when it
//! never comes.

use crate::support;

use promptpack_console::relay::{Relay, RelaySettings, RunningRelay, Upstream};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;
use support::{Answer, Auth, Console, Store};

/// How many times something the relay does in the background is looked
/// for (50 ms apart) before the test gives up: a guard against a hang,
/// counted in attempts, so that nothing here depends on how fast the
/// machine is.
const ATTEMPTS: u32 = 200;

/// How many reads of a stream in a row may come back empty (each waits
/// for the socket's read timeout, 200 ms) before it is taken as silent: a
/// hang guard too.
const QUIET_READS: u32 = 50;

/// A relay over a fresh catalog (the consoles' own: users `ada`, `ed`,
/// `vi`; `greet` v1 labelled `production`), and a client of it.
struct Fixture {
    catalog: Console,
    relay: Option<RunningRelay>,
    /// `http://127.0.0.1:PORT`, in the shape the console tests' client
    /// takes.
    client: Console,
}

impl Fixture {
    fn start(store: Store, name: &str) -> Fixture {
        Fixture::start_with(store, name, |settings| settings)
    }

    fn start_with(
        store: Store,
        name: &str,
        configure: impl FnOnce(RelaySettings) -> RelaySettings,
    ) -> Fixture {
        let catalog = Console::catalog_only(store, name);
        let relay = spawn(&catalog.db, "127.0.0.1:0", configure);
        let client = client_of(&catalog, &relay);
        Fixture {
            catalog,
            relay: Some(relay),
            client,
        }
    }

    fn addr(&self) -> String {
        self.relay
            .as_ref()
            .map(|relay| relay.local_addr().to_string())
            .unwrap_or_default()
    }

    fn get(&self, path: &str) -> Answer {
        self.client.get(path, Auth::Bearer(&self.catalog.viewer))
    }

    /// The label's snapshot once `done` holds of it (bounded).
    fn snapshot_when(&self, label: &str, done: impl Fn(&Value) -> bool) -> Value {
        let mut snapshot = Value::Null;
        for _ in 0..ATTEMPTS {
            let answer = self.get(&format!("/relay/v1/labels/{label}"));
            assert_eq!(answer.status, 200, "{}", answer.body);
            snapshot = answer.json();
            if done(&snapshot) {
                return snapshot;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("the relay never showed the change: {snapshot}");
    }

    fn stream(&self, label: &str, last: Option<&str>) -> Stream {
        Stream::open(&self.addr(), label, &self.catalog.viewer, last)
    }
}

fn spawn(
    db: &str,
    listen: &str,
    configure: impl FnOnce(RelaySettings) -> RelaySettings,
) -> RunningRelay {
    let settings = configure(
        RelaySettings::new(Upstream::Catalog(db.to_string()))
            .listen(listen.parse().expect("an address"))
            .heartbeat(Duration::from_millis(300)),
    );
    Relay::bind(settings)
        .expect("the relay binds")
        .spawn()
        .expect("the relay serves")
}

fn client_of(catalog: &Console, relay: &RunningRelay) -> Console {
    catalog.client_at(format!("http://{}", relay.local_addr()))
}

/// The arms of `prompt` in a snapshot, as (version, weight).
fn arms_of(snapshot: &Value, prompt: &str) -> Vec<(u64, u64)> {
    snapshot["prompts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| p["prompt"] == prompt)
        .flat_map(|p| p["arms"].as_array().cloned().unwrap_or_default())
        .map(|arm| {
            (
                arm["version"].as_u64().unwrap_or(0),
                arm["weight"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

/// One server-sent event.
#[derive(Debug, Clone)]
struct Event {
    event: String,
    id: String,
    data: String,
}

impl Event {
    fn json(&self) -> Value {
        serde_json::from_str(&self.data).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.data))
    }
}

/// A stream read over a raw socket: the chunked body decoded, its events
/// parsed; `retry:` and comments counted.
struct Stream {
    reader: BufReader<TcpStream>,
    text: String,
    retry: Option<String>,
    pings: usize,
    ended: bool,
}

impl Stream {
    fn open(addr: &str, label: &str, token: &str, last: Option<&str>) -> Stream {
        Stream::open_path(
            addr,
            &format!("/relay/v1/labels/{label}/events"),
            token,
            last,
        )
    }

    fn open_path(addr: &str, path: &str, token: &str, last: Option<&str>) -> Stream {
        let mut socket = TcpStream::connect(addr).expect("the relay accepts");
        socket
            .set_read_timeout(Some(Duration::from_millis(200)))
            .expect("a read timeout");
        let last = last.map_or(String::new(), |id| format!("Last-Event-ID: {id}\r\n"));
        write!(
            socket,
            "GET {path} HTTP/1.1\r\nHost: relay\r\nAuthorization: Bearer {token}\r\n{last}\r\n"
        )
        .expect("the request is sent");
        let mut reader = BufReader::new(socket);
        let mut head = String::new();
        let mut quiet = 0;
        while !head.ends_with("\r\n\r\n") {
            let mut line = String::new();
            match reader.read_line(&mut line) {
                Ok(0) => panic!("the relay closed before its headers: {head}"),
                Ok(_) => head.push_str(&line),
                Err(_) => {
                    quiet += 1;
                    assert!(quiet < QUIET_READS, "no headers: {head}");
                }
            }
        }
        let lower = head.to_ascii_lowercase();
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
        assert!(lower.contains("content-type: text/event-stream"), "{head}");
        assert!(lower.contains("transfer-encoding: chunked"), "{head}");
        Stream {
            reader,
            text: String::new(),
            retry: None,
            pings: 0,
            ended: false,
        }
    }

    /// Reads one chunk into `text`; false when none came yet.
    fn read_chunk(&mut self) -> bool {
        let mut size = String::new();
        match self.reader.read_line(&mut size) {
            Ok(0) => {
                self.ended = true;
                return false;
            }
            Ok(_) => {}
            Err(_) => return false,
        }
        // A read timeout mid-line leaves part of it read: keep reading.
        while !size.ends_with("\r\n") {
            let mut more = String::new();
            match self.reader.read_line(&mut more) {
                Ok(0) => {
                    self.ended = true;
                    return false;
                }
                Ok(_) => size.push_str(&more),
                Err(_) => {}
            }
        }
        let size = usize::from_str_radix(size.trim(), 16).expect("a chunk size");
        if size == 0 {
            self.ended = true;
            return false;
        }
        let mut chunk = vec![0; size + 2];
        let mut read = 0;
        while read < chunk.len() {
            match self.reader.read(&mut chunk[read..]) {
                Ok(0) => {
                    self.ended = true;
                    return false;
                }
                Ok(n) => read += n,
                Err(_) => {}
            }
        }
        self.text.push_str(&String::from_utf8_lossy(&chunk[..size]));
        true
    }

    /// The next event, within [`QUIET_READS`] empty reads; `None` when the
    /// stream ended or nothing came.
    fn next(&mut self) -> Option<Event> {
        let mut quiet = 0;
        loop {
            while let Some(end) = self.text.find("\n\n") {
                let block: String = self.text.drain(..end + 2).collect();
                let mut event = Event {
                    event: "message".to_string(),
                    id: String::new(),
                    data: String::new(),
                };
                let mut any = false;
                for line in block.lines() {
                    if let Some(value) = line.strip_prefix("retry: ") {
                        self.retry = Some(value.to_string());
                    } else if line.starts_with(':') {
                        self.pings += 1;
                    } else if let Some(value) = line.strip_prefix("event: ") {
                        event.event = value.to_string();
                        any = true;
                    } else if let Some(value) = line.strip_prefix("id: ") {
                        event.id = value.to_string();
                    } else if let Some(value) = line.strip_prefix("data: ") {
                        event.data.push_str(value);
                    }
                }
                if any {
                    return Some(event);
                }
            }
            if self.ended || quiet >= QUIET_READS {
                return None;
            }
            if !self.read_chunk() {
                quiet += 1;
            }
        }
    }

    /// The next event that is not a ping, which must be `kind`.
    fn expect(&mut self, kind: &str) -> Event {
        let event = self
            .next()
            .unwrap_or_else(|| panic!("no `{kind}` event came"));
        assert_eq!(event.event, kind, "{event:?}");
        event
    }

    /// Whether a `: ping` comes within [`QUIET_READS`] reads.
    fn heard_ping(&mut self) -> bool {
        for _ in 0..QUIET_READS {
            if self.pings > 0 || self.text.contains(": ping") {
                return true;
            }
            if self.ended {
                return false;
            }
            self.read_chunk();
        }
        false
    }

    /// Whether the stream ends (the relay closed it) before it is silent,
    /// events before the end skipped.
    fn ends(&mut self) -> bool {
        while self.next().is_some() {}
        self.ended
    }
}

/// One case, run against both stores.
macro_rules! on_every_store {
    ($($name:ident => $body:expr;)*) => {
        mod sqlite { use super::*; $( #[test] fn $name() { ($body)(Fixture::start(Store::Sqlite, stringify!($name))); } )* }
        mod postgres { use super::*; $( #[test] fn $name() { ($body)(Fixture::start(Store::Postgres, stringify!($name))); } )* }
    };
}

on_every_store! {
    every_route_needs_a_user => |f: Fixture| {
        let routes = [
            "/relay/v1/labels/production",
            "/relay/v1/labels/production/events",
            "/relay/v1/labels/production/earlier/greet",
            "/relay/v1/versions/greet/1",
            "/relay/v1/me",
        ];
        for path in routes {
            for auth in [Auth::None, Auth::Bearer("pp_not-a-token")] {
                let answer = f.client.get(path, auth);
                assert_eq!((answer.status, answer.code().as_str()), (401, "unauthenticated"), "{path}: {}", answer.body);
                assert!(!answer.body.contains("Hello"), "{path} leaked data");
            }
        }
        for method in ["POST", "DELETE"] {
            let answer = f.client.send(method, "/relay/v1/builds", Auth::None, &json!({}));
            assert_eq!(answer.status, 401, "{method}: {}", answer.body);
        }
        // A token known since: let in (a bad one is remembered only briefly).
        let me = f.get("/relay/v1/me");
        assert_eq!(me.status, 200, "{}", me.body);
        assert_eq!(me.json(), json!({"name": "vi", "role": "viewer"}));
        let admin = f.client.get("/relay/v1/me", Auth::Bearer(&f.catalog.admin)).json();
        assert_eq!(admin, json!({"name": "ada", "role": "admin"}));
    };

    unknown_routes_are_json_404s => |f: Fixture| {
        for path in ["/relay/v1/nope", "/relay/v2/labels/production", "/", "/api/v1/prompts"] {
            let answer = f.get(path);
            assert_eq!((answer.status, answer.code().as_str()), (404, "not_found"), "{path}: {}", answer.body);
            assert!(answer.content_type.starts_with("application/json"), "{path}: {}", answer.content_type);
        }
        let bad = f.get("/relay/v1/labels/-no");
        assert_eq!((bad.status, bad.code().as_str()), (400, "invalid_request"), "{}", bad.body);
    };

    snapshot_with_etag => |f: Fixture| {
        let answer = f.get("/relay/v1/labels/production");
        assert_eq!(answer.status, 200, "{}", answer.body);
        assert!(answer.content_type.starts_with("application/json"));
        let snapshot = answer.json();
        assert_eq!(snapshot["label"], "production");
        assert_eq!(arms_of(&snapshot, "greet"), vec![(1, 1)]);
        assert_eq!(snapshot["prompts"].as_array().map(Vec::len), Some(1), "{snapshot}");
        let hash = f.catalog.catalog().get("greet", &promptpack_catalog::Selector::Version(1)).expect("v1").content_hash;
        assert_eq!(snapshot["prompts"][0]["arms"][0]["content_hash"], hash.as_str());
        let id = snapshot["event_id"].as_str().expect("an event id").to_string();
        let etag = format!("\"{id}\"");
        assert_eq!(answer.header("etag"), Some(etag.as_str()));
        // Still current: 304, no body.
        let agent = ureq::Agent::config_builder().http_status_as_error(false).build();
        let agent: ureq::Agent = agent.into();
        let again = agent
            .get(format!("{}/relay/v1/labels/production", f.client.base))
            .header("authorization", format!("Bearer {}", f.catalog.viewer))
            .header("if-none-match", &etag)
            .call()
            .expect("an answer");
        assert_eq!(again.status().as_u16(), 304);
        // Moved: the old tag is no longer current.
        f.catalog.catalog().set_label("greet", "production", 2).expect("moved");
        let moved = f.snapshot_when("production", |s| arms_of(s, "greet") == vec![(2, 1)]);
        assert_ne!(moved["event_id"].as_str(), Some(id.as_str()));
        let stale = agent
            .get(format!("{}/relay/v1/labels/production", f.client.base))
            .header("authorization", format!("Bearer {}", f.catalog.viewer))
            .header("if-none-match", &etag)
            .call()
            .expect("an answer");
        assert_eq!(stale.status().as_u16(), 200);
        // An empty label is followed too: no prompts.
        let empty = f.get("/relay/v1/labels/staging").json();
        assert_eq!(empty["prompts"], json!([]));
    };

    changes_arrive_with_their_versions => |f: Fixture| {
        let mut stream = f.stream("production", None);
        let snapshot = stream.expect("snapshot");
        assert_eq!(stream.retry.as_deref(), Some("1000"));
        assert_eq!(snapshot.json()["event_id"].as_str(), Some(snapshot.id.as_str()));
        assert_eq!(arms_of(&snapshot.json(), "greet"), vec![(1, 1)]);
        f.catalog.catalog().set_label("greet", "production", 2).expect("moved");
        let change = stream.expect("change");
        let data = change.json();
        assert_eq!(data["prompt"], "greet");
        assert_eq!(data["arms"].as_array().map(Vec::len), Some(1), "{data}");
        assert_eq!(data["arms"][0]["version"], 2);
        assert_eq!(data["versions"][0]["version"]["version"], 2);
        assert_eq!(data["versions"][0]["version"]["system"], support::GREET_V2);
        assert_eq!(data["versions"][0]["version"]["content_hash"], data["arms"][0]["content_hash"]);
        // The wire version reads back as the catalog's.
        let wire: promptpack_catalog::relay::Change = serde_json::from_str(&change.data).expect("a Change");
        assert_eq!(wire.versions[0].version.version, 2);
        // A pinned snippet travels with its text.
        f.catalog.catalog().set_label("letter", "production", 1).expect("labelled");
        let letter = stream.expect("change").json();
        assert_eq!(letter["prompt"], "letter");
        assert_eq!(letter["versions"][0]["snippets"], json!([{"name": "sign-off", "revision": 1, "text": "Regards.\n"}]));
        // Deleted: the label is taken away, an empty change.
        f.catalog.catalog().delete("letter").expect("deleted");
        let gone = stream.expect("change").json();
        assert_eq!(gone["prompt"], "letter");
        assert_eq!(gone["arms"], json!([]));
        assert_eq!(gone["versions"], json!([]));
        // Pings come while nothing changes.
        assert!(stream.heard_ping(), "no ping came");
    };

    resume_replays_exactly_what_was_missed => |f: Fixture| {
        let mut stream = f.stream("production", None);
        let snapshot = stream.expect("snapshot");
        drop(stream);
        let mut catalog = f.catalog.catalog();
        catalog.set_label("greet", "production", 2).expect("moved");
        catalog.set_label("letter", "production", 1).expect("labelled");
        f.snapshot_when("production", |s| arms_of(s, "greet") == vec![(2, 1)] && arms_of(s, "letter") == vec![(1, 1)]);
        let mut resumed = f.stream("production", Some(&snapshot.id));
        let first = resumed.expect("change");
        let second = resumed.expect("change");
        let mut prompts = [first.json()["prompt"].clone(), second.json()["prompt"].clone()];
        prompts.sort_by_key(Value::to_string);
        assert_eq!(prompts, [json!("greet"), json!("letter")]);
        // Nothing more was replayed: the next event is the next change.
        catalog.set_label("greet", "production", 1).expect("back");
        let third = resumed.expect("change");
        assert_eq!((third.json()["prompt"].clone(), third.json()["arms"][0]["version"].clone()), (json!("greet"), json!(1)));
        // Resumed from the second: only the third.
        let mut again = f.stream("production", Some(&second.id));
        let only = again.expect("change");
        assert_eq!(only.id, third.id);
        // By query too, for clients that cannot set headers.
        let mut by_query = Stream::open_path(&f.addr(), &format!("/relay/v1/labels/production/events?last_event_id={}", second.id), &f.catalog.viewer, None);
        assert_eq!(by_query.expect("change").id, third.id);
        // Another epoch, a number the relay never gave, or garbage: a snapshot.
        let epoch = snapshot.id.split_once('-').map(|(epoch, _)| epoch.to_string()).unwrap_or_default();
        let other_epoch = if epoch == "00000000" { "11111111-1" } else { "00000000-1" };
        for last in [other_epoch.to_string(), format!("{epoch}-999999"), "nonsense".to_string()] {
            let mut fresh = f.stream("production", Some(&last));
            let snapshot = fresh.expect("snapshot").json();
            assert_eq!(arms_of(&snapshot, "greet"), vec![(1, 1)], "{last}");
        }
    };

    versions_route => |f: Fixture| {
        let answer = f.get("/relay/v1/versions/greet/2");
        assert_eq!(answer.status, 200, "{}", answer.body);
        assert!(answer.header("cache-control").is_some_and(|v| v.contains("immutable")), "{:?}", answer.headers);
        let wire: promptpack_catalog::relay::WireVersion = serde_json::from_str(&answer.body).expect("a WireVersion");
        assert_eq!((wire.version.prompt_id.as_str(), wire.version.version), ("greet", 2));
        let (version, sources) = wire.into_fetched().expect("its sources");
        assert!(matches!(promptpack_catalog::judge_fetched(Ok((version, sources)), None), Ok(promptpack_catalog::Verdict::Serve(_))));
        let letter: Value = f.get("/relay/v1/versions/letter/1").json();
        assert_eq!(letter["snippets"][0]["text"], "Regards.\n");
        for path in ["/relay/v1/versions/greet/99", "/relay/v1/versions/nope/1", "/relay/v1/versions/greet/two"] {
            let missing = f.get(path);
            assert_eq!((missing.status, missing.code().as_str()), (404, "not_found"), "{path}: {}", missing.body);
        }
    };

    earlier_route => |f: Fixture| {
        let cases: [(&str, &str, Value); 3] = [
            ("production", "greet", json!([1])),
            ("latest", "greet", json!([2, 1])),
            ("production", "nope", json!([])),
        ];
        for (label, prompt, versions) in cases {
            let answer = f.get(&format!("/relay/v1/labels/{label}/earlier/{prompt}"));
            assert_eq!(answer.status, 200, "{}", answer.body);
            assert_eq!(answer.json(), json!({"versions": versions}), "{label} {prompt}");
        }
        f.catalog.catalog().set_label("greet", "production", 2).expect("moved");
        let moved = f.get("/relay/v1/labels/production/earlier/greet").json();
        assert_eq!(moved, json!({"versions": [2, 1]}));
    };

    builds_register_and_unregister => |f: Fixture| {
        let contract: Value = serde_json::from_str(r#"{"format": 1, "prompts": {"greet": {"variables": [{"name": "name", "kind": "text"}]}}}"#).expect("JSON");
        let build = json!({"process": "checkout-7", "label": "production", "contract": contract});
        let seen = |f: &Fixture| {
            f.catalog.catalog().builds(Duration::from_secs(3600)).expect("builds")
                .iter().any(|b| b.process == "checkout-7" && b.label == "production")
        };
        for _ in 0..2 {
            // The second within 30 s is not written again; both answer 204.
            let answer = f.client.send("POST", "/relay/v1/builds", Auth::Bearer(&f.catalog.viewer), &build);
            assert_eq!(answer.status, 204, "{}", answer.body);
        }
        assert!(seen(&f));
        let answer = delete_with_body(&f, &build);
        assert_eq!(answer, 204);
        assert!(!seen(&f));
        // Registered again after it was taken away: written again.
        let answer = f.client.send("POST", "/relay/v1/builds", Auth::Bearer(&f.catalog.viewer), &build);
        assert_eq!(answer.status, 204, "{}", answer.body);
        assert!(seen(&f));
        let bad = f.client.send("POST", "/relay/v1/builds", Auth::Bearer(&f.catalog.viewer), &json!({"process": "x"}));
        assert_eq!((bad.status, bad.code().as_str()), (400, "invalid_request"), "{}", bad.body);
        let bad_label = f.client.send("POST", "/relay/v1/builds", Auth::Bearer(&f.catalog.viewer), &json!({"process": "x", "label": "no label", "contract": contract}));
        assert_eq!((bad_label.status, bad_label.code().as_str()), (400, "invalid_request"), "{}", bad_label.body);
    };

    stop_ends_streams_and_frees_the_port => |mut f: Fixture| {
        let addr = f.addr();
        let mut stream = f.stream("production", None);
        stream.expect("snapshot");
        if let Some(relay) = f.relay.take() {
            relay.stop();
        }
        assert!(stream.ends(), "the stream outlived the relay");
        // Restarted on the same port: a new epoch, so the old id gets a
        // snapshot.
        let relay = spawn(&f.catalog.db, &addr, |s| s);
        f.relay = Some(relay);
        let mut fresh = f.stream("production", None);
        let snapshot = fresh.expect("snapshot");
        let mut resumed = f.stream("production", Some(&snapshot.id));
        f.catalog.catalog().set_label("greet", "production", 2).expect("moved");
        assert_eq!(resumed.expect("change").json()["prompt"], "greet");
    };
}

/// `DELETE /relay/v1/builds` with a JSON body (the tests' client sends
/// none with DELETE): its status.
fn delete_with_body(f: &Fixture, body: &Value) -> u16 {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    agent
        .delete(format!("{}/relay/v1/builds", f.client.base))
        .header("authorization", format!("Bearer {}", f.catalog.viewer))
        .force_send_body()
        .content_type("application/json")
        .send(body.to_string())
        .expect("an answer")
        .status()
        .as_u16()
}

/// The connections to database `db` other than the one asking, by
/// `psql` (the tests have no PostgreSQL client library of their own).
fn connections_to(db: &str) -> Option<usize> {
    psql(db, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")?
        .trim()
        .parse()
        .ok()
}

/// What `psql` answers to `sql` on database `db`, unaligned.
fn psql(db: &str, sql: &str) -> Option<String> {
    let psql = ["/usr/bin/psql"]
        .into_iter()
        .map(std::path::PathBuf::from)
        .chain(
            promptpack_pgtest::shared()
                .ok()
                .and_then(|s| s.cluster())
                .map(|c| c.bin_dir().join("psql")),
        )
        .find(|path| path.exists())?;
    let output = std::process::Command::new(psql)
        .args([db, "-Atc", sql])
        .output()
        .ok()?;
    Some(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// The relay's connections cut by the server (as a failover or a proxy
/// restart does): it serves from memory meanwhile, connects again, reads
/// every label again and sends what changed while it was away.
#[test]
fn postgres_connections_lost_and_back() {
    let f = Fixture::start(Store::Postgres, "relay_reconnects");
    let mut stream = f.stream("production", None);
    stream.expect("snapshot");
    psql(
        &f.catalog.db,
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()",
    )
    .expect("psql cuts the connections");
    // Served from memory whatever the catalog's state.
    assert_eq!(f.get("/relay/v1/labels/production").status, 200);
    f.catalog
        .catalog()
        .set_label("greet", "production", 2)
        .expect("moved");
    let change = stream.expect("change").json();
    assert_eq!(
        (
            change["prompt"].clone(),
            change["arms"][0]["version"].clone()
        ),
        (json!("greet"), json!(2))
    );
    // Back to its two connections.
    let mut count = connections_to(&f.catalog.db);
    for _ in 0..ATTEMPTS {
        if count == Some(2) {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
        count = connections_to(&f.catalog.db);
    }
    assert_eq!(count, Some(2));
}

/// The connections a relay holds once it has followed a label, with and
/// without `LISTEN`.
#[test]
fn postgres_connections_held() {
    for (poll_only, expected) in [(false, 2), (true, 1)] {
        let f = Fixture::start_with(Store::Postgres, "relay_connections", |s| {
            s.poll_only(poll_only)
        });
        // A label followed, a version and a registration: all through the
        // one connection.
        f.snapshot_when("production", |s| arms_of(s, "greet") == vec![(1, 1)]);
        assert_eq!(f.get("/relay/v1/versions/greet/2").status, 200);
        let mut stream = f.stream("production", None);
        stream.expect("snapshot");
        // The listening thread connects on its own: wait until it has.
        let mut count = connections_to(&f.catalog.db).expect("psql counts the connections");
        for _ in 0..ATTEMPTS {
            if count == expected {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
            count = connections_to(&f.catalog.db).expect("psql counts the connections");
        }
        assert_eq!(count, expected, "poll_only: {poll_only}");
        drop(stream);
        drop(f);
    }
}

/// Behind pgbouncer in transaction mode there is no `LISTEN`: the poll
/// alone still delivers every change.
#[test]
fn postgres_poll_only_delivers_changes() {
    let f = Fixture::start_with(Store::Postgres, "relay_poll_only", |s| s.poll_only(true));
    let mut stream = f.stream("production", None);
    stream.expect("snapshot");
    f.catalog
        .catalog()
        .set_label("greet", "production", 2)
        .expect("moved");
    let change = stream.expect("change").json();
    assert_eq!(
        (
            change["prompt"].clone(),
            change["arms"][0]["version"].clone()
        ),
        (json!("greet"), json!(2))
    );
}

/// Behind a real pgbouncer in transaction mode (CI's, from
/// scripts/pgbouncer.sh): the relay's one connection goes through it, and
/// the poll alone delivers every change.
#[test]
fn postgres_poll_only_through_pgbouncer() {
    let Ok(pooler) = std::env::var("PROMPTPACK_TEST_PGBOUNCER_URL") else {
        assert!(
            std::env::var_os("CI").is_none(),
            "PROMPTPACK_TEST_PGBOUNCER_URL is not set, and CI starts a pgbouncer"
        );
        eprintln!("PROMPTPACK_TEST_PGBOUNCER_URL is not set: no pgbouncer to test through");
        return;
    };
    let catalog = Console::catalog_only(Store::Postgres, "relay_pgbouncer");
    let database = catalog.db.rsplit('/').next().expect("a database name");
    let server = pooler.rsplit_once('/').expect("a URL with a path").0;
    let through = format!("{server}/{database}");
    let relay = spawn(&through, "127.0.0.1:0", |s| s.poll_only(true));
    let mut stream = Stream::open(
        &relay.local_addr().to_string(),
        "production",
        &catalog.viewer,
        None,
    );
    let snapshot = stream.expect("snapshot").json();
    assert_eq!(arms_of(&snapshot, "greet"), vec![(1, 1)], "{snapshot}");
    catalog
        .catalog()
        .set_label("greet", "production", 2)
        .expect("moved");
    let change = stream.expect("change").json();
    assert_eq!(
        (
            change["prompt"].clone(),
            change["arms"][0]["version"].clone()
        ),
        (json!("greet"), json!(2)),
        "{change}"
    );
}

/// A relay that follows the fixture's relay (`Upstream::Relay`), with the
/// catalog's viewer token as its own.
fn chained(f: &Fixture, listen: &str) -> RunningRelay {
    let settings = RelaySettings::new(Upstream::Relay {
        url: format!("http://{}", f.addr()),
        token: f.catalog.viewer.clone(),
    })
    .listen(listen.parse().expect("an address"))
    .heartbeat(Duration::from_millis(300));
    Relay::bind(settings)
        .expect("the chained relay binds")
        .spawn()
        .expect("the chained relay serves")
}

/// Relays chain: a relay that follows a relay serves the same snapshot,
/// passes each change on with its version, answers versions, earlier
/// versions and `/me` from upstream, registers builds through it, and
/// checks a follower's token by asking it.
#[test]
fn a_relay_follows_a_relay() {
    let f = Fixture::start(Store::Sqlite, "relay_chain");
    let second = chained(&f, "127.0.0.1:0");
    let addr = second.local_addr().to_string();
    let client = f.catalog.client_at(format!("http://{addr}"));
    let get = |path: &str| client.get(path, Auth::Bearer(&f.catalog.viewer));

    let mut stream = Stream::open(&addr, "production", &f.catalog.viewer, None);
    let snapshot = stream.expect("snapshot").json();
    assert_eq!(arms_of(&snapshot, "greet"), vec![(1, 1)], "{snapshot}");

    let mut catalog = f.catalog.catalog();
    catalog.set_label("greet", "production", 2).expect("moved");
    let change = stream.expect("change").json();
    assert_eq!(change["prompt"], json!("greet"), "{change}");
    assert_eq!(change["arms"][0]["version"], json!(2), "{change}");
    assert_eq!(
        change["versions"][0]["version"]["version"],
        json!(2),
        "{change}"
    );

    assert_eq!(get("/relay/v1/versions/greet/1").status, 200);
    assert_eq!(get("/relay/v1/versions/greet/99").status, 404);
    let earlier = get("/relay/v1/labels/production/earlier/greet");
    assert_eq!(earlier.status, 200, "{}", earlier.body);
    assert_eq!(
        earlier.json()["versions"],
        json!([2, 1]),
        "{}",
        earlier.body
    );
    let me = get("/relay/v1/me");
    assert_eq!(me.json()["name"], json!("vi"), "{}", me.body);
    let stranger = client.get("/relay/v1/me", Auth::Bearer("pp_not_a_user"));
    assert_eq!(stranger.status, 401, "{}", stranger.body);

    let build = json!({"process": "chained-1", "label": "production", "contract": {"format": 1, "prompts": {}}});
    let registered = client.send(
        "POST",
        "/relay/v1/builds",
        Auth::Bearer(&f.catalog.viewer),
        &build,
    );
    assert_eq!(registered.status, 204, "{}", registered.body);
    let builds = catalog.builds(Duration::from_secs(600)).expect("builds");
    assert!(
        builds.iter().any(|b| b.process == "chained-1"),
        "{builds:?}"
    );
}

/// The first relay restarts on its port while the label moves: the
/// second one resyncs from its snapshot and passes the move on to its own
/// followers, whose stream never broke.
#[test]
fn a_chained_relay_resyncs_after_its_upstream_restarts() {
    let mut f = Fixture::start(Store::Sqlite, "relay_chain_restart");
    let first_addr = f.addr();
    let second = chained(&f, "127.0.0.1:0");
    let mut stream = Stream::open(
        &second.local_addr().to_string(),
        "production",
        &f.catalog.viewer,
        None,
    );
    stream.expect("snapshot");
    if let Some(first) = f.relay.take() {
        first.stop();
    }
    f.catalog
        .catalog()
        .set_label("greet", "production", 2)
        .expect("moved while the first relay is away");
    f.relay = Some(spawn(&f.catalog.db, &first_addr, |settings| settings));
    let change = stream.expect("change").json();
    assert_eq!(
        (
            change["prompt"].clone(),
            change["arms"][0]["version"].clone()
        ),
        (json!("greet"), json!(2)),
        "{change}"
    );
}

/// An upstream relay that does not take the token: the relay does not
/// start, and says why.
#[test]
fn a_relay_refused_by_its_upstream_does_not_start() {
    let f = Fixture::start(Store::Sqlite, "relay_chain_refused");
    let settings = RelaySettings::new(Upstream::Relay {
        url: format!("http://{}", f.addr()),
        token: "pp_not_a_user".to_string(),
    })
    .listen("127.0.0.1:0".parse().expect("an address"));
    let error = Relay::bind(settings).expect_err("refused");
    assert_eq!(
        error.code(),
        promptpack_catalog::ErrorCode::NotConfigured,
        "{error}"
    );
    assert!(error.to_string().contains("token"), "{error}");
}

/// Beyond loopback only once the catalog has an admin (the consoles'
/// catalog has one; a catalog without is refused).
#[test]
fn beyond_loopback_needs_an_admin() {
    let dir = tempfile::tempdir().expect("a folder");
    let db = format!("sqlite:{}", dir.path().join("c.db").display());
    promptpack_catalog::Catalog::open(&db).expect("a catalog");
    let settings =
        RelaySettings::new(Upstream::Catalog(db)).listen("0.0.0.0:0".parse().expect("an address"));
    let error = Relay::bind(settings).expect_err("refused");
    assert_eq!(error.code(), promptpack_catalog::ErrorCode::InvalidRequest);
    assert!(error.to_string().contains("admin"), "{error}");
}

/// A SQLite catalog restored from a backup (a file moved over the one the
/// relay reads) is opened anew and read again whole: what differs is sent
/// as changes, as after any reconnect.
#[test]
fn sqlite_file_replaced_is_read_anew() {
    let f = Fixture::start(Store::Sqlite, "relay_file_replaced");
    let path = std::path::PathBuf::from(f.catalog.db.strip_prefix("sqlite:").expect("SQLite"));
    let folder = path.parent().expect("a folder").to_path_buf();
    let mut stream = f.stream("production", None);
    assert_eq!(
        arms_of(&stream.expect("snapshot").json(), "greet"),
        vec![(1, 1)]
    );
    // A backup in which the label moved to v2.
    let backup = folder.join("backup.db");
    rusqlite::Connection::open(&path)
        .expect("opens the file")
        .execute("VACUUM INTO ?1", [backup.display().to_string()])
        .expect("backs up");
    promptpack_catalog::Catalog::connect_with(
        &format!("sqlite:{}", backup.display()),
        promptpack_catalog::Access::Write,
        &promptpack_catalog::Timeouts::DEFAULT,
    )
    .expect("the backup")
    .with_author("setup")
    .set_label("greet", "production", 2)
    .expect("moved in the backup");
    // Restored: the file's log folded in, a copy moved over it in one
    // rename.
    rusqlite::Connection::open(&path)
        .expect("opens the file")
        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .expect("checkpoints");
    let copy = folder.join("restore.tmp");
    std::fs::copy(&backup, &copy).expect("copies the backup");
    std::fs::rename(&copy, &path).expect("moves the copy over the catalog");
    let change = stream.expect("change").json();
    assert_eq!(change["prompt"], "greet");
    assert_eq!(change["arms"][0]["version"], 2);
    assert_eq!(
        change["versions"][0]["version"]["system"],
        support::GREET_V2
    );
}

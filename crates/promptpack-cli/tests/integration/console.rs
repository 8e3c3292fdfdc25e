//! `promptpack console`: its users (a token printed once, only its hash
//! kept), and the server it starts, spoken to over loopback.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Output, Stdio};

use crate::support::BIN;

fn promptpack(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env_remove("PROMPTPACK_DB")
        .env("NO_COLOR", "1")
        .output()
        .expect("promptpack runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A new catalog in a temporary folder: its URL.
fn catalog(dir: &tempfile::TempDir) -> String {
    let db = format!("sqlite:{}", dir.path().join("c.db").display());
    let out = promptpack(&["catalog", "init", "--db", &db]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    db
}

/// `GET path` with a bearer token, over a plain TCP connection: the status
/// line and the body.
fn get(port: u16, path: &str, token: &str) -> String {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("the console listens");
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\nConnection: close\r\n\r\n"
    )
    .expect("a request");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("an answer");
    answer
}

#[test]
fn users_are_added_listed_and_removed_with_their_tokens_shown_once() {
    let dir = tempfile::tempdir().expect("a folder");
    let db = catalog(&dir);
    let added = promptpack(&[
        "console", "user", "add", "ada", "--role", "admin", "--db", &db,
    ]);
    assert!(added.status.success(), "{}", text(&added.stderr));
    let token = text(&added.stdout).trim().to_string();
    assert!(token.starts_with("pp_") && token.len() == 67, "{token}");
    assert!(text(&added.stderr).contains("added admin `ada`"));
    let stored = std::fs::read(dir.path().join("c.db")).expect("the catalog file");
    let tail = token.trim_start_matches("pp_").as_bytes();
    assert!(
        !stored.windows(tail.len()).any(|w| w == tail),
        "the token itself is stored"
    );

    let again = promptpack(&[
        "console", "user", "add", "ada", "--role", "viewer", "--db", &db,
    ]);
    assert_eq!(again.status.code(), Some(1));
    assert!(
        text(&again.stderr).contains("already_exists"),
        "{}",
        text(&again.stderr)
    );
    let bad_role = promptpack(&[
        "console", "user", "add", "bo", "--role", "boss", "--db", &db,
    ]);
    assert_eq!(bad_role.status.code(), Some(2));
    assert!(
        text(&bad_role.stderr).contains("viewer"),
        "{}",
        text(&bad_role.stderr)
    );

    let listed = text(&promptpack(&["console", "user", "list", "--db", &db]).stdout);
    assert!(listed.starts_with("ada\tadmin\t"), "{listed}");
    let removed = promptpack(&["console", "user", "remove", "ada", "--db", &db]);
    assert!(removed.status.success());
    assert_eq!(
        text(&promptpack(&["console", "user", "list", "--db", &db]).stdout),
        ""
    );
    let missing = promptpack(&["console", "user", "remove", "ada", "--db", &db]);
    assert_eq!(missing.status.code(), Some(1));
    // The add and the remove, not the refused ones, with who made them.
    let history = text(&promptpack(&["console", "user", "history", "--db", &db]).stdout);
    let changes: Vec<&str> = history
        .lines()
        .map(|line| line.split_once('\t').map_or(line, |(_, change)| change))
        .collect();
    assert_eq!(changes.len(), 2, "{history}");
    assert!(changes[0].starts_with("add ada\tadmin\tby "), "{history}");
    assert!(
        changes[1].starts_with("remove ada\tadmin\tby "),
        "{history}"
    );
}

#[test]
fn the_console_serves_its_users_and_refuses_everyone_else() {
    let dir = tempfile::tempdir().expect("a folder");
    let db = catalog(&dir);
    let added = promptpack(&[
        "console", "user", "add", "vi", "--role", "viewer", "--db", &db,
    ]);
    let token = text(&added.stdout).trim().to_string();
    let mut child = Command::new(BIN)
        .args(["console", "--db", &db, "--listen", "127.0.0.1:0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the console starts");
    // It says where it listens once it does: read, not polled, so nothing
    // here depends on how fast the machine is.
    let stderr = child.stderr.take().expect("its stderr");
    let mut line = String::new();
    BufReader::new(stderr)
        .read_line(&mut line)
        .expect("the console's first line");
    let port: u16 = line
        .split("http://127.0.0.1:")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no listening address in {line:?}"));
    let me = get(port, "/api/v1/me", &token);
    let refused = get(port, "/api/v1/prompts", "pp_wrong");
    let _ = child.kill();
    let _ = child.wait();
    assert!(me.starts_with("HTTP/1.1 200"), "{me}");
    assert!(
        me.contains("\"name\":\"vi\"") && me.contains("\"role\":\"viewer\""),
        "{me}"
    );
    assert!(refused.starts_with("HTTP/1.1 401"), "{refused}");
    assert!(refused.contains("unauthenticated"));
}

#[test]
fn beyond_loopback_the_console_wants_an_admin_first() {
    let dir = tempfile::tempdir().expect("a folder");
    let db = catalog(&dir);
    let out = promptpack(&["console", "--db", &db, "--listen", "0.0.0.0:0"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("invalid_request") && stderr.contains("console user add NAME --role admin"),
        "{stderr}"
    );
}

#[test]
fn a_session_cap_of_zero_is_refused_before_listening() {
    let dir = tempfile::tempdir().expect("a folder");
    let db = catalog(&dir);
    let out = promptpack(&[
        "console",
        "--db",
        &db,
        "--listen",
        "127.0.0.1:0",
        "--max-sessions",
        "0",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("invalid_request") && stderr.contains("session cap"),
        "{stderr}"
    );
}

#[test]
fn the_console_takes_its_limits_and_logs_requests_without_tokens() {
    let dir = tempfile::tempdir().expect("a folder");
    let db = catalog(&dir);
    let added = promptpack(&[
        "console", "user", "add", "vi", "--role", "viewer", "--db", &db,
    ]);
    let token = text(&added.stdout).trim().to_string();
    let mut child = Command::new(BIN)
        .args([
            "console",
            "--db",
            &db,
            "--listen",
            "127.0.0.1:0",
            "--header-timeout",
            "0.3",
            "--request-timeout",
            "5",
            "--max-connections",
            "4",
            "--pool-size",
            "2",
            "--log",
            "info",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the console starts");
    let mut stderr = BufReader::new(child.stderr.take().expect("its stderr"));
    let mut line = String::new();
    stderr
        .read_line(&mut line)
        .expect("the console's first line");
    let port: u16 = line
        .split("http://127.0.0.1:")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no listening address in {line:?}"));
    let me = get(port, "/api/v1/me", &token);
    let refused = get(port, "/api/v1/prompts", "pp_wrong_token");
    // A connection that sends nothing is closed by the header timeout: the
    // read ends instead of waiting.
    let mut idle = TcpStream::connect(("127.0.0.1", port)).expect("a connection");
    let mut nothing = String::new();
    let ended = idle.read_to_string(&mut nothing);
    let _ = child.kill();
    let _ = child.wait();
    let mut log = String::new();
    let _ = stderr.read_to_string(&mut log);
    assert!(me.starts_with("HTTP/1.1 200"), "{me}");
    assert!(refused.starts_with("HTTP/1.1 401"), "{refused}");
    assert!(ended.is_ok() && nothing.is_empty(), "{ended:?} {nothing:?}");
    assert!(
        log.lines()
            .any(|l| l.contains("INFO") && l.contains("GET /api/v1/me 200") && l.contains(" vi")),
        "{log}"
    );
    assert!(log.contains("GET /api/v1/prompts 401"), "{log}");
    assert!(
        !log.contains(&token) && !log.contains("pp_wrong_token"),
        "{log}"
    );
}

#[test]
fn the_relay_says_where_it_listens_and_serves_catalog_users() {
    let dir = tempfile::tempdir().expect("a folder");
    let db = catalog(&dir);
    let added = promptpack(&[
        "console", "user", "add", "vi", "--role", "viewer", "--db", &db,
    ]);
    let token = text(&added.stdout).trim().to_string();
    let mut child = Command::new(BIN)
        .args([
            "relay",
            "--db",
            &db,
            "--listen",
            "127.0.0.1:0",
            "--poll",
            "250ms",
            "--heartbeat",
            "5s",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the relay starts");
    // Its first line says where it listens, once it does.
    let stderr = child.stderr.take().expect("its stderr");
    let mut line = String::new();
    BufReader::new(stderr)
        .read_line(&mut line)
        .expect("the relay's first line");
    let port: u16 = line
        .strip_prefix("relay listening on http://127.0.0.1:")
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no listening address in {line:?}"));
    let me = get(port, "/relay/v1/me", &token);
    let refused = get(port, "/relay/v1/labels/production", "pp_wrong");
    let _ = child.kill();
    let _ = child.wait();
    assert!(me.starts_with("HTTP/1.1 200"), "{me}");
    assert!(
        me.contains("\"name\":\"vi\"") && me.contains("\"role\":\"viewer\""),
        "{me}"
    );
    assert!(refused.starts_with("HTTP/1.1 401"), "{refused}");
    assert!(refused.contains("unauthenticated"));
}

#[test]
fn beyond_loopback_the_relay_wants_an_admin_first() {
    let dir = tempfile::tempdir().expect("a folder");
    let db = catalog(&dir);
    let out = promptpack(&["relay", "--db", &db, "--listen", "0.0.0.0:0"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("invalid_request") && stderr.contains("console user add NAME --role admin"),
        "{stderr}"
    );
    let slow = promptpack(&["relay", "--db", &db, "--poll", "soon"]);
    assert_eq!(slow.status.code(), Some(2), "{}", text(&slow.stderr));
}

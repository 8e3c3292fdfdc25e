//! Every wait on PostgreSQL is bounded: a server that accepts TCP and never
//! answers, and a server stopped (SIGSTOP) under an open connection, end in
//! `unavailable` instead of a hang; once the server runs again, a new
//! connection works. Passwords in the URL never show in the errors.
//!
//! No test measures time. What fails them is a hang: each bounded call runs
//! under a guard that ends the process after a generous [`GUARD`].

use crate::support;

use promptpack_catalog::{Access, Catalog, Error, ErrorCode, Listener, Selector, Timeouts};
use promptpack_testkit::net::black_hole;
use std::path::Path;
use std::process::Command;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;
use support::draft;

/// Far beyond any bound these tests set: reaching it means a wait was not
/// bounded.
const GUARD: Duration = Duration::from_secs(180);

/// The short bounds the tests set.
fn short() -> Timeouts {
    Timeouts::DEFAULT
        .with_connect(Duration::from_secs(1))
        .with_io(Duration::from_secs(1))
}

/// Runs `case`, failing the whole test process when it has not returned
/// after [`GUARD`] (after `on_hang`, which undoes what would outlive it).
fn guarded<T>(what: &str, on_hang: impl FnOnce() + Send + 'static, case: impl FnOnce() -> T) -> T {
    let (done, finished) = mpsc::channel::<()>();
    let what = what.to_string();
    let guard = std::thread::spawn(move || {
        if let Err(RecvTimeoutError::Timeout) = finished.recv_timeout(GUARD) {
            eprintln!("{what}: still waiting after {GUARD:?}, a wait is not bounded");
            on_hang();
            std::process::exit(101);
        }
    });
    let value = case();
    drop(done);
    guard.join().expect("the guard");
    value
}

/// `error` is `unavailable`, may be retried, keeps its cause, and does not
/// show the password of the URL.
fn assert_unavailable(error: &Error, password: &str) {
    assert_eq!(error.code(), ErrorCode::Unavailable, "{error}");
    assert!(error.is_retryable(), "{error}");
    assert!(
        std::error::Error::source(error).is_some(),
        "{error} keeps no cause"
    );
    assert!(!error.to_string().contains(password), "{error}");
}

#[test]
fn a_server_that_accepts_and_never_answers_is_unavailable() {
    let url = black_hole();
    guarded(
        "a server that never answers",
        || {},
        || {
            let error =
                Catalog::connect_with(&url, Access::Create, &short()).expect_err("no answer");
            assert_unavailable(&error, "black-hole-pw");
            let error = Catalog::connect_with(&url, Access::Read, &short()).expect_err("no answer");
            assert_unavailable(&error, "black-hole-pw");
            let error = Listener::connect_with(&url, &short()).expect_err("no answer");
            assert_unavailable(&error, "black-hole-pw");
        },
    );
}

#[test]
fn a_connect_timeout_in_the_url_wins() {
    let url = format!("{}?connect_timeout=1", black_hole());
    let patient = Timeouts::DEFAULT.with_connect(Duration::from_secs(3600));
    guarded(
        "a URL's connect_timeout",
        || {},
        || {
            let error =
                Catalog::connect_with(&url, Access::Create, &patient).expect_err("no answer");
            assert_unavailable(&error, "black-hole-pw");
            let error = Listener::connect_with(&url, &patient).expect_err("no answer");
            assert_unavailable(&error, "black-hole-pw");
        },
    );
}

#[test]
fn passwords_in_the_url_never_show_in_errors() {
    // Port 1 on loopback: nothing listens there.
    let cases = [
        // (url, its password as written)
        ("postgres://ada:pw-user-part@127.0.0.1:1/x", "pw-user-part"),
        (
            "postgres://ada@127.0.0.1:1/x?password=pw-parameter",
            "pw-parameter",
        ),
        (
            "postgres://ada@127.0.0.1:1/x?sslmode=disable&password=pw-parameter",
            "pw-parameter",
        ),
        (
            "postgresql://ada:pw%40encoded@127.0.0.1:1/x",
            "pw%40encoded",
        ),
    ];
    for (url, password) in cases {
        for error in [
            Catalog::open(url).expect_err("no server"),
            Catalog::connect(url).expect_err("no server"),
            Listener::connect(url).expect_err("no server"),
        ] {
            assert_unavailable(&error, password);
            assert!(error.to_string().contains("127.0.0.1:1"), "{error}");
            assert!(!error.to_string().contains("pw-"), "{error}");
        }
    }
    // A URL the driver refuses is shown without its password too.
    let error =
        Catalog::open("postgres://ada:pw-in-bad-url@h/x?sslmode=bogus").expect_err("a bad URL");
    assert_eq!(error.code(), ErrorCode::InvalidRequest, "{error}");
    assert!(!error.to_string().contains("pw-in-bad-url"), "{error}");
}

/// The processes of the cluster in `dir`: the postmaster, then every
/// process it started (stopping the postmaster first keeps it from
/// starting more).
fn server_processes(dir: &Path) -> Vec<u32> {
    let pid_file = dir.join("data/postmaster.pid");
    let text = std::fs::read_to_string(&pid_file).expect("postmaster.pid");
    let postmaster: u32 = text
        .lines()
        .next()
        .and_then(|line| line.trim().parse().ok())
        .expect("the postmaster's pid");
    let mut pids = vec![postmaster];
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        // `pid (comm) state ppid …`: the command may hold spaces and `)`.
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let parent = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|ppid| ppid.parse::<u32>().ok());
        if parent == Some(postmaster) {
            pids.push(pid);
        }
    }
    pids
}

/// Sends the signal `name` to `pids`; whether `kill` did.
fn signal(name: &str, pids: &[u32]) -> bool {
    Command::new("kill")
        .arg(format!("-{name}"))
        .args(pids.iter().map(u32::to_string))
        .status()
        .is_ok_and(|status| status.success())
}

/// The cluster in a folder, stopped (SIGSTOP) until this is dropped, also
/// when a test fails: a stopped server could not be shut down.
struct Stalled(Vec<u32>);

impl Stalled {
    fn stall(dir: &Path) -> Stalled {
        // The postmaster first, so that it starts no process meanwhile.
        assert!(signal("STOP", &server_processes(dir)[..1]), "SIGSTOP");
        let stopped = Stalled(server_processes(dir));
        assert!(signal("STOP", &stopped.0), "SIGSTOP {:?}", stopped.0);
        stopped
    }
}

impl Drop for Stalled {
    fn drop(&mut self) {
        signal("CONT", &self.0);
    }
}

#[test]
fn a_stalled_server_is_unavailable_and_a_new_connection_works_once_it_runs() {
    // A server of its own: this test stops it.
    let cluster = promptpack_pgtest::Cluster::start().expect("a PostgreSQL cluster");
    let url = cluster.url();
    let mut catalog = Catalog::connect_with(&url, Access::Create, &short())
        .expect("open")
        .with_author("test");
    catalog.create("p", None, None).expect("create");
    catalog.publish("p", &draft("one"), None).expect("v1");

    // SIGSTOP: the kernel still acknowledges TCP, the server says nothing.
    let stalled = Stalled::stall(cluster.dir());
    let resume = stalled.0.clone();
    guarded(
        "a stalled server",
        move || {
            signal("CONT", &resume);
        },
        || {
            let error = catalog
                .get("p", &Selector::Latest)
                .expect_err("the server is stalled");
            assert_unavailable(&error, "no password");
            // The next call connects again, which the stall bounds too.
            let error = catalog
                .get("p", &Selector::Latest)
                .expect_err("the server is stalled");
            assert_unavailable(&error, "no password");
            let error = Catalog::connect_with(&url, Access::Read, &short()).expect_err("stalled");
            assert_unavailable(&error, "no password");
            let error = Listener::connect_with(&url, &short()).expect_err("stalled");
            assert_unavailable(&error, "no password");
        },
    );

    drop(stalled);
    let mut fresh =
        Catalog::connect_with(&url, Access::Read, &Timeouts::DEFAULT).expect("connect again");
    assert_eq!(fresh.get("p", &Selector::Latest).expect("v1").system, "one");
    // The catalog that saw the stall connects again on its own.
    assert_eq!(
        catalog.get("p", &Selector::Latest).expect("v1").system,
        "one"
    );
    let mut listener = Listener::connect_with(&url, &Timeouts::DEFAULT).expect("listen");
    catalog.publish("p", &draft("two"), None).expect("v2");
    let change = guarded(
        "the change notification",
        || {},
        || loop {
            if let Some(change) = listener.wait(Duration::from_secs(1)).expect("a change") {
                break change;
            }
        },
    );
    assert_eq!(change.prompt_id, "p");
}

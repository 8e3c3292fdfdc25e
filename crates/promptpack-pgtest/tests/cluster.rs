//! Real servers: these tests need PostgreSQL installed and fail, with the
//! reason, when it is not.

use promptpack_pgtest::{Cluster, shared};
use std::io::ErrorKind;
use std::net::TcpStream;
use std::path::Path;
use std::process::Command;

fn start() -> Cluster {
    Cluster::start().unwrap_or_else(|e| panic!("{e}"))
}

fn accepts(port: u16) -> bool {
    match TcpStream::connect(("127.0.0.1", port)) {
        Ok(_) => true,
        Err(e) if e.kind() == ErrorKind::ConnectionRefused => false,
        Err(e) => panic!("connecting to 127.0.0.1:{port}: {e}"),
    }
}

/// `psql -c query` at `url`; its output, or a panic with its error.
fn psql(bin: &Path, url: &str, query: &str) -> String {
    let output = Command::new(bin.join("psql"))
        .args([
            "-X",
            "-A",
            "-t",
            "-v",
            "ON_ERROR_STOP=1",
            "-d",
            url,
            "-c",
            query,
        ])
        .output()
        .expect("run psql");
    assert!(
        output.status.success(),
        "psql {url} -c {query:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

#[test]
fn serves_stops_and_restarts_on_the_same_port() {
    let cluster = start();
    let port = cluster.port();
    assert_eq!(
        cluster.url(),
        format!("postgres://postgres@127.0.0.1:{port}/postgres")
    );
    assert!(accepts(port));
    assert_eq!(psql(cluster.bin_dir(), &cluster.url(), "select 1"), "1");
    // The settings the tests of the workspace rely on.
    assert_eq!(
        psql(cluster.bin_dir(), &cluster.url(), "show max_connections"),
        "200"
    );
    assert_eq!(psql(cluster.bin_dir(), &cluster.url(), "show fsync"), "off");

    cluster.stop().unwrap();
    assert!(!accepts(port), "still listening after stop");
    assert!(cluster.dir().join("data").is_dir());

    // With the port taken, the error says why, from the server's log.
    let squatter = std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
    let error = cluster.restart().unwrap_err();
    assert!(error.contains("server.log"), "{error}");
    assert!(error.contains("could not bind"), "{error}");
    drop(squatter);

    cluster.restart().unwrap();
    assert_eq!(cluster.port(), port);
    assert!(accepts(port));
    assert_eq!(psql(cluster.bin_dir(), &cluster.url(), "select 1"), "1");
}

#[test]
fn creates_databases_of_their_own() {
    let cluster = start();
    let a = cluster.create_database("suite_a").unwrap();
    let b = cluster.create_database("suite_b").unwrap();
    assert_eq!(
        a,
        format!("postgres://postgres@127.0.0.1:{}/suite_a", cluster.port())
    );
    psql(cluster.bin_dir(), &a, "create table t (x int)");
    // Each database has its own tables.
    assert_eq!(
        psql(
            cluster.bin_dir(),
            &b,
            "select count(*) from pg_tables where tablename = 't'"
        ),
        "0"
    );
    assert_eq!(
        psql(cluster.bin_dir(), &b, "select current_database()"),
        "suite_b"
    );

    let duplicate = cluster.create_database("suite_a").unwrap_err();
    assert!(duplicate.contains("already exists"), "{duplicate}");
    let invalid = cluster.create_database("Suite; drop").unwrap_err();
    assert!(invalid.contains("invalid database name"), "{invalid}");
}

#[test]
fn drop_stops_the_server_and_deletes_the_folder() {
    let cluster = start();
    let dir = cluster.dir().to_path_buf();
    let port = cluster.port();
    assert!(dir.join("data").is_dir());
    drop(cluster);
    assert!(!dir.exists(), "{} still exists", dir.display());
    assert!(!accepts(port), "still listening after drop");
}

#[test]
fn the_binary_starts_a_cluster_that_outlives_it() {
    let dir = tempfile::tempdir().unwrap();
    // `output()` returns only once stdout is closed: this also checks that
    // the server does not hold it, which would hang `$(… start DIR)` in CI.
    let output = Command::new(env!("CARGO_BIN_EXE_promptpack-pgtest"))
        .arg("start")
        .arg(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let url = String::from_utf8(output.stdout).unwrap();
    let url = url.trim_end();
    let port: u16 = url
        .strip_prefix("postgres://postgres@127.0.0.1:")
        .and_then(|rest| rest.strip_suffix("/postgres"))
        .and_then(|port| port.parse().ok())
        .unwrap_or_else(|| panic!("unexpected output {url:?}"));
    assert!(accepts(port));

    // A second start in the same folder is refused.
    let again = Command::new(env!("CARGO_BIN_EXE_promptpack-pgtest"))
        .arg("start")
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains("already holds a cluster"));

    let stop = Command::new(env!("CARGO_BIN_EXE_promptpack-pgtest"))
        .arg("stop")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        stop.status.success(),
        "{}",
        String::from_utf8_lossy(&stop.stderr)
    );
    assert!(!accepts(port), "still listening after stop");
    assert!(dir.path().join("data").is_dir(), "the folder must stay");

    let usage = Command::new(env!("CARGO_BIN_EXE_promptpack-pgtest"))
        .arg("begin")
        .output()
        .unwrap();
    assert_eq!(usage.status.code(), Some(2));
}

#[test]
fn start_in_and_stop_dir() {
    let dir = tempfile::tempdir().unwrap();
    let cluster = Cluster::start_in(dir.path()).unwrap_or_else(|e| panic!("{e}"));
    let port = cluster.port();
    drop(cluster);
    // The handle is gone, the server is not.
    assert!(accepts(port));
    Cluster::stop_dir(dir.path()).unwrap();
    assert!(!accepts(port));
    let error = Cluster::stop_dir(dir.path()).unwrap_err();
    assert!(error.contains("pg_ctl"), "{error}");
}

#[test]
fn shared_server_gives_each_caller_a_database() {
    let server = shared().unwrap_or_else(|e| panic!("{e}"));
    assert!(std::ptr::eq(server, shared().unwrap()));
    // Concurrently, as tests do.
    let urls: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..8)
            .map(|_| scope.spawn(|| server.unique_database("pgtest_shared")))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap().unwrap_or_else(|e| panic!("{e}")))
            .collect()
    });
    let mut distinct = urls.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), urls.len());
    if let Some(cluster) = server.cluster() {
        for url in &urls {
            psql(cluster.bin_dir(), url, "select 1");
        }
    }
}

//! Faults: a publisher killed (SIGKILL) inside its write transaction leaves
//! no trace; a stopped PostgreSQL is `unavailable` and nothing is written;
//! a file that is not a database is refused with a clear error; a catalog
//! file moved over or removed under open catalogs is neither read nor
//! written through them.
//!
//! Its own `main` (no libtest harness): the killed publisher is this same
//! binary, started with `child-publish URL`, which publishes with a hook
//! that announces it is inside the transaction and then waits to be killed.

mod support;

use promptpack_catalog::{Catalog, ErrorCode, Selector};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use support::{Kind, TestStore, draft, with_tone};

const CHILD: &str = "child-publish";
const INSIDE: &str = "inside the write transaction";

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some(CHILD) {
        child_publish(args.get(2).map_or("", String::as_str));
        return;
    }
    let cases: [(&str, fn()); 6] = [
        ("sqlite_publisher_killed_mid_publish_leaves_nothing", || {
            killed_mid_publish(Kind::Sqlite)
        }),
        (
            "postgres_publisher_killed_mid_publish_leaves_nothing",
            || killed_mid_publish(Kind::Postgres),
        ),
        (
            "publishing_while_postgres_is_stopped_is_unavailable",
            stopped_postgres,
        ),
        ("a_file_that_is_not_a_database_is_refused", not_a_database),
        ("a_folder_or_an_unreachable_server_is_refused", unreachable),
        (
            "a_catalog_file_moved_over_or_removed_is_not_read_or_written",
            moved_over_or_removed,
        ),
    ];
    let filter = args.iter().skip(1).find(|a| !a.starts_with('-'));
    let mut failed = Vec::new();
    let mut ran = 0;
    for (name, case) in cases {
        if filter.is_some_and(|f| !name.contains(f.as_str())) {
            continue;
        }
        ran += 1;
        match std::panic::catch_unwind(case) {
            Ok(()) => println!("test {name} ... ok"),
            Err(_) => {
                println!("test {name} ... FAILED");
                failed.push(name);
            }
        }
    }
    println!(
        "\nfaults: {} passed, {} failed",
        ran - failed.len(),
        failed.len()
    );
    if !failed.is_empty() {
        std::process::exit(1);
    }
}

/// The child: publishes version 2, and inside the transaction, after every
/// write, says so and waits for the parent's SIGKILL.
fn child_publish(url: &str) {
    let mut catalog = Catalog::open(url).expect("open").with_author("child");
    catalog.before_commit(Box::new(|| {
        println!("{INSIDE}");
        let _ = std::io::stdout().flush();
        std::thread::sleep(std::time::Duration::from_secs(600));
    }));
    let text = "{{snippet:tone}} killed before commit";
    let _ = catalog.publish("p", &draft(text), None);
    // Reaching here means nobody killed us: the parent fails on its own.
    std::process::exit(3);
}

fn killed_mid_publish(kind: Kind) {
    let store = TestStore::of(kind, "killed");
    let _catalog = with_tone(&store, "p", "{{snippet:tone}} one");
    let before = store.footprint();

    let mut child = Command::new(std::env::current_exe().expect("this binary"))
        .args([CHILD, &store.url])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the child starts");
    let stdout = child.stdout.take().expect("its stdout");
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).expect("a line");
    assert_eq!(line.trim(), INSIDE, "the child did not reach the commit");
    // The version row, its pins and the counter are written, not committed.
    child.kill().expect("SIGKILL");
    let status = child.wait().expect("the child ends");
    assert!(!status.success());

    // Nothing of it is left, and the next publish gets the next number.
    let mut catalog = store.open();
    assert_eq!(store.footprint(), before);
    assert_eq!(
        catalog.get("p", &Selector::Latest).expect("latest").version,
        1
    );
    let next = catalog
        .publish("p", &draft("{{snippet:tone}} two"), None)
        .expect("v2");
    assert_eq!(next.version, 2);
    assert_eq!(store.count("SELECT COUNT(*) FROM version_pins"), 2);
}

fn stopped_postgres() {
    // A server of its own: this case stops it.
    let cluster = promptpack_pgtest::Cluster::start().expect("a PostgreSQL cluster");
    let url = cluster.url();
    let mut catalog = Catalog::open(&url).expect("open").with_author("test");
    catalog.create("p", None, None).expect("create");
    catalog.publish("p", &draft("one"), None).expect("v1");

    cluster.stop().expect("stop");
    let error = catalog
        .publish("p", &draft("two"), None)
        .expect_err("the server is down");
    assert_eq!(error.code(), ErrorCode::Unavailable, "{error}");
    let error = Catalog::open(&url).expect_err("the server is down");
    assert_eq!(error.code(), ErrorCode::Unavailable, "{error}");
    assert!(!error.to_string().is_empty());

    cluster.restart().expect("restart");
    let mut catalog = Catalog::open(&url).expect("open again");
    let history = catalog.history("p").expect("history");
    assert_eq!(history.versions.len(), 1);
    assert_eq!(
        catalog.get("p", &Selector::Latest).expect("v1").system,
        "one"
    );
    assert_eq!(
        catalog
            .publish("p", &draft("two"), None)
            .expect("v2")
            .version,
        2
    );
}

fn not_a_database() {
    let dir = tempfile::tempdir().expect("a folder");
    let path = dir.path().join("catalog.db");
    let garbage: Vec<u8> = (0..8192u32)
        .map(|n| (n.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(&path, &garbage).expect("garbage");
    let url = format!("sqlite:{}", path.display());
    for result in [Catalog::open(&url), Catalog::connect(&url)] {
        let error = result.expect_err("not a database");
        assert_eq!(error.code(), ErrorCode::NotConfigured, "{error}");
        assert!(error.to_string().contains("not a database"), "{error}");
    }
    assert_eq!(
        std::fs::read(&path).expect("the file"),
        garbage,
        "the file is untouched"
    );
}

fn unreachable() {
    let dir = tempfile::tempdir().expect("a folder");
    let error = Catalog::open(&format!("sqlite:{}", dir.path().display())).expect_err("a folder");
    assert_eq!(error.code(), ErrorCode::Unavailable, "{error}");
    // Port 1 on loopback: nothing listens there.
    let error = Catalog::open("postgres://postgres@127.0.0.1:1/none").expect_err("no server");
    assert_eq!(error.code(), ErrorCode::Unavailable, "{error}");
    assert!(error.to_string().contains("127.0.0.1:1"), "{error}");
}

/// A writer and a reader open on a catalog file; another catalog moved over
/// it (a backup restored with `mv`); then a catalog file removed under a
/// writer. Neither reads the old, unlinked file or writes into it, where a
/// write would be lost: each is refused, and nothing is made in a removed
/// file's place.
fn moved_over_or_removed() {
    let dir = tempfile::tempdir().expect("a folder");
    let path = dir.path().join("catalog.db");
    let url = format!("sqlite:{}", path.display());
    let mut writer = Catalog::open(&url).expect("a catalog").with_author("w");
    writer.create("greeter", None, None).expect("create");
    writer.publish("greeter", &draft("one"), None).expect("v1");
    let mut reader = Catalog::connect(&url).expect("a reader");
    let latest = |catalog: &mut Catalog| {
        catalog
            .get("greeter", &Selector::Latest)
            .map(|version| version.system)
    };
    assert_eq!(latest(&mut reader).expect("v1"), "one");

    let backup = dir.path().join("backup.db");
    let mut other = Catalog::open(&format!("sqlite:{}", backup.display()))
        .expect("another catalog")
        .with_author("b");
    other.create("greeter", None, None).expect("create");
    other.publish("greeter", &draft("two"), None).expect("v1");
    drop(other);
    std::fs::rename(&backup, &path).expect("moved over");
    let refused = [
        latest(&mut reader).expect_err("the old file is not read"),
        writer
            .publish("greeter", &draft("three"), None)
            .expect_err("nor written"),
    ];
    for error in refused {
        assert_eq!(error.code(), ErrorCode::Unavailable, "{error}");
        assert!(error.to_string().contains("replaced or removed"), "{error}");
    }

    let path = dir.path().join("removed.db");
    let url = format!("sqlite:{}", path.display());
    let mut writer = Catalog::open(&url).expect("a catalog").with_author("w");
    writer.create("greeter", None, None).expect("create");
    for suffix in ["", "-wal", "-shm"] {
        let file = format!("{}{suffix}", path.display());
        if std::path::Path::new(&file).exists() {
            std::fs::remove_file(file).expect("removed");
        }
    }
    let error = writer
        .publish("greeter", &draft("one"), None)
        .expect_err("a removed file is not written");
    assert_eq!(error.code(), ErrorCode::Unavailable, "{error}");
    assert!(!path.exists(), "nothing made in its place");
}

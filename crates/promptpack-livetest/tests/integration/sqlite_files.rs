//! A SQLite catalog as operators handle its file: a backup moved over it
//! is followed (the handle opens the new file, and reads every version
//! from it again), and a catalog the service may only read (file and
//! folder read-only) is followed without a write.

use crate::support;

use promptpack::live::LiveEvent;
use promptpack_catalog::Selector;
use promptpack_livetest::before;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;
use support::{
    Store, greet_ada, greeter_v1_in_production, publish_labelled, registered, serves, wait_for,
};

fn sqlite_path(store: &Store) -> PathBuf {
    PathBuf::from(store.url.strip_prefix("sqlite:").expect("a SQLite URL"))
}

/// Folds the write-ahead log into the file, so that the file alone is the
/// catalog (what an operator's backup tool does).
fn checkpoint(path: &Path) {
    let db = rusqlite::Connection::open(path).expect("opens the file");
    db.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .expect("checkpoints");
}

#[test]
fn a_backup_moved_over_the_catalog_file_is_followed() {
    let store = Store::sqlite();
    let path = sqlite_path(&store);
    let folder = path.parent().expect("a folder").to_path_buf();
    let mut catalog = store.open();
    let v1 = greeter_v1_in_production(&mut catalog);
    let backup = folder.join("backup.db");
    rusqlite::Connection::open(&path)
        .expect("opens the file")
        .execute("VACUUM INTO ?1", [backup.display().to_string()])
        .expect("backs up");
    let v2 = publish_labelled(
        &mut catalog,
        "greeter",
        "production",
        "v2 greets {{name}}.",
        None,
    );
    drop(catalog);

    let mut builder = before::Prompts::connect(&store.url)
        .label("production")
        .poll_every(Duration::from_millis(20));
    let events = builder.subscribe();
    let prompts = builder.start().expect("starts");
    wait_for(&events, "greeter v2", |e| serves(e, "greeter", v2));
    // The handle writes once at its start (its build's registration, on
    // its own thread), then not for a minute: a file moved over a catalog
    // while something writes to it loses that write into a stale WAL, as
    // with any SQLite file, so the restore waits for that write.
    registered(&mut store.open(), 1);

    // The backup restored: a copy moved over the file in one rename.
    checkpoint(&path);
    let copy = folder.join("restore.tmp");
    std::fs::copy(&backup, &copy).expect("copies the backup");
    std::fs::rename(&copy, &path).expect("moves the copy over the catalog");
    // The restored catalog knows no v2: a new one, with other text under
    // the same number, and the label moved to it.
    let mut restored = store.open();
    let again = publish_labelled(
        &mut restored,
        "greeter",
        "production",
        "restored v2 greets {{name}}.",
        None,
    );
    assert_eq!(again, v2, "the backup ends at v1");
    let hash = restored
        .get("greeter", &Selector::Version(again))
        .expect("reads v2")
        .content_hash;
    let seen = wait_for(&events, "the restored v2", |e| {
        matches!(e, LiveEvent::Updated { prompt, versions }
            if prompt == "greeter" && versions.len() == 1 && *versions[0].content_hash == *hash)
    });
    assert!(
        !seen
            .iter()
            .any(|e| matches!(e, LiveEvent::StoreDown { .. })),
        "a replaced file is not a store down: {seen:#?}"
    );
    let greeting = greet_ada(&prompts);
    assert_eq!(greeting.system, "restored v2 greets Ada.");
    let _ = v1;
}

/// The service binary, running as a user that may only read the catalog;
/// killed with the test.
struct Service {
    child: Child,
    lines: Receiver<String>,
}

impl Service {
    /// `live-serve URL production before`: as `nobody` when the test runs
    /// as root (root writes whatever the permissions say), else as the
    /// test's own user.
    fn start(url: &str) -> Service {
        let mut command = Command::new(env!("CARGO_BIN_EXE_live-serve"));
        command
            .args([url, "production", "before"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if is_root() {
            use std::os::unix::process::CommandExt;
            command.uid(NOBODY).gid(NOBODY);
        }
        let mut child = command.spawn().expect("starts live-serve");
        let (sender, lines) = channel();
        for output in [
            child
                .stdout
                .take()
                .map(|o| Box::new(o) as Box<dyn std::io::Read + Send>),
            child
                .stderr
                .take()
                .map(|o| Box::new(o) as Box<dyn std::io::Read + Send>),
        ]
        .into_iter()
        .flatten()
        {
            let sender = sender.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(output).lines().map_while(Result::ok) {
                    if sender.send(line).is_err() {
                        return;
                    }
                }
            });
        }
        Service { child, lines }
    }

    /// Waits for a line containing `wanted`; fails when the service ends
    /// first, or (a hang guard, never a timing assertion) when no line
    /// comes for many minutes.
    fn wait_for(&self, wanted: &str) -> Vec<String> {
        let what = format!("a line of the service containing `{wanted}`");
        promptpack_testkit::wait::recv_until(&self.lines, &what, |line| line.contains(wanted))
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `nobody`'s user and group id on Linux.
const NOBODY: u32 = 65534;

fn is_root() -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().nth(1))
        == Some("0")
}

/// Sets `path`'s permission bits.
fn chmod(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .unwrap_or_else(|e| panic!("chmod {}: {e}", path.display()));
}

/// Every file of `folder` with its bytes.
fn snapshot(folder: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files: Vec<_> = std::fs::read_dir(folder)
        .expect("lists the folder")
        .flatten()
        .map(|entry| {
            let bytes = std::fs::read(entry.path()).expect("reads a file");
            (entry.path(), bytes)
        })
        .collect();
    files.sort();
    files
}

#[test]
fn a_catalog_the_service_may_only_read_is_served_and_left_as_it_was() {
    let store = Store::sqlite();
    let path = sqlite_path(&store);
    let folder = path.parent().expect("a folder").to_path_buf();
    let mut catalog = store.open();
    let v1 = greeter_v1_in_production(&mut catalog);
    drop(catalog);
    checkpoint(&path);
    // Readable by all, writable by none: the file and its folder.
    chmod(&path, 0o444);
    chmod(&folder, 0o555);
    let before = snapshot(&folder);

    let service = Service::start(&store.url);
    let seen = service.wait_for(&format!("serving catalog greeter v{v1} label=production"));
    assert!(
        !seen.iter().any(|line| line.contains("catalog down")),
        "{seen:#?}"
    );
    assert_eq!(
        snapshot(&folder),
        before,
        "the service wrote to a catalog it may only read"
    );

    // The operator (who may write) moves the label: the service follows.
    let mut catalog = store.open();
    let v2 = publish_labelled(
        &mut catalog,
        "greeter",
        "production",
        "v2 greets {{name}}.",
        None,
    );
    drop(catalog);
    let seen = service.wait_for(&format!("serving catalog greeter v{v2} label=production"));
    // The handle tried to register when it connected, before this poll:
    // refused by the file, it registered nothing and said nothing of it.
    assert!(
        !seen.iter().any(|line| line.contains("event: catalog")),
        "{seen:#?}"
    );
    let mut reader = promptpack_catalog::Catalog::connect(&store.url).expect("a reader");
    assert_eq!(
        reader
            .builds(Duration::from_secs(24 * 60 * 60))
            .expect("builds"),
        []
    );
    drop(service);
    // The temporary folder goes with the test: writable again.
    chmod(&folder, 0o755);
}

#[test]
fn the_read_only_test_runs_the_service_as_a_user_who_cannot_write() {
    // The read-only case means something only if the service's user is
    // refused writes: as root, the service runs as `nobody`.
    let store = Store::sqlite();
    let folder = sqlite_path(&store)
        .parent()
        .expect("a folder")
        .to_path_buf();
    chmod(&folder, 0o555);
    let probe = folder.join("probe");
    let mut command = Command::new("touch");
    command.arg(&probe);
    if is_root() {
        use std::os::unix::process::CommandExt;
        command.uid(NOBODY).gid(NOBODY);
    }
    let status = command.status().expect("runs touch");
    chmod(&folder, 0o755);
    assert!(!status.success(), "the service's user could write");
    assert!(!probe.exists());
}

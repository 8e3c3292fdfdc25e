//! A PostgreSQL server that stops answering (its processes stopped with
//! SIGSTOP: connections stay open, nothing comes back) is reported within
//! the handle's bound, renders keep serving what was loaded, dropping the
//! handle returns whatever the network does, and the server coming back
//! is seen. And what the handle reports of its store never shows a
//! password.

use crate::support;

use promptpack::ErrorCode;
use promptpack::live::LiveEvent;
use promptpack_livetest::after::{GreeterVars, PromptId, Prompts};
use promptpack_pgtest::Cluster;
use std::path::Path;
use std::process::Command;
use std::sync::mpsc::channel;
use std::time::Duration;
use support::{own_cluster_with_greeter, serves, version_of, wait_for};

fn greet(prompts: &Prompts) -> promptpack::Prompt<PromptId> {
    prompts
        .build_prompt(
            PromptId::Greeter,
            GreeterVars {
                name: "Ada",
                tone: "calm",
            },
        )
        .expect("a render never fails")
}

/// Every process of a cluster (the postmaster and its children), stopped
/// with SIGSTOP until [`Stalled`] is dropped, which continues them.
struct Stalled {
    pids: Vec<String>,
}

impl Stalled {
    fn stall(data: &Path) -> Stalled {
        let pid_file = std::fs::read_to_string(data.join("postmaster.pid")).expect("a pid file");
        let postmaster = pid_file.lines().next().expect("a pid").trim().to_string();
        let mut pids = vec![postmaster.clone()];
        for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                continue;
            };
            // pid (comm) state ppid …: the comm may hold spaces.
            let parent = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1));
            if parent == Some(postmaster.as_str()) {
                pids.push(name);
            }
        }
        signal("-STOP", &pids);
        Stalled { pids }
    }
}

impl Drop for Stalled {
    fn drop(&mut self) {
        // One by one, and a process that is gone is not an error: a
        // backend listed while it was exiting needs no continuing (seen on
        // a loaded machine, where `kill -CONT` of the whole list failed).
        for pid in &self.pids {
            let _ = Command::new("kill").args(["-CONT", pid]).status();
        }
    }
}

fn signal(which: &str, pids: &[String]) {
    let status = Command::new("kill")
        .arg(which)
        .args(pids)
        .status()
        .expect("runs kill");
    assert!(status.success(), "kill {which} {pids:?}");
}

/// Drops `prompts` on another thread and waits for the drop to return,
/// failing only when it hangs.
fn drop_returns(prompts: Prompts) {
    let (dropped, returned) = channel();
    std::thread::spawn(move || {
        drop(prompts);
        let _ = dropped.send(());
    });
    // No deadline: a drop that never returns is a hang, the test
    // runner's to report.
    returned.recv().expect("dropping the handle returned");
}

/// A cluster of its own with `greeter` v1 labelled `production`, and a
/// handle on it with `timeouts`, serving v1.
fn serving_v1(
    name: &str,
    (connect, io): (Duration, Duration),
) -> (Cluster, Prompts, std::sync::mpsc::Receiver<LiveEvent>, u32) {
    let (cluster, url, v1) = own_cluster_with_greeter(name);
    let mut builder = Prompts::connect(&url)
        .poll_every(Duration::from_millis(50))
        .timeouts(connect, io);
    let events = builder.subscribe();
    let prompts = builder.start().expect("starts");
    wait_for(&events, "greeter v1 at start", |e| serves(e, "greeter", v1));
    (cluster, prompts, events, v1)
}

#[test]
fn a_stalled_server_is_reported_and_comes_back() {
    let timeouts = (Duration::from_secs(1), Duration::from_secs(1));
    let (cluster, prompts, events, v1) = serving_v1("live_stall", timeouts);

    // Stalled: said within the bound, and v1 keeps serving.
    let stalled = Stalled::stall(&cluster.dir().join("data"));
    let seen = wait_for(&events, "the store down", |e| {
        matches!(e, LiveEvent::StoreDown { .. })
    });
    let Some(LiveEvent::StoreDown { error }) = seen.last() else {
        unreachable!()
    };
    assert_eq!(error.code(), ErrorCode::Unavailable, "{error}");
    let during = greet(&prompts);
    assert_eq!(during.system, "v1 Ada, calm.");
    assert_eq!(version_of(&during.provenance), v1);

    // Answering again: back, and still v1.
    drop(stalled);
    wait_for(&events, "the store back", |e| *e == LiveEvent::StoreBack);
    assert!(prompts.is_connected());
    assert_eq!(greet(&prompts).system, "v1 Ada, calm.");
    drop_returns(prompts);
}

#[test]
fn dropping_the_handle_never_waits_on_a_stalled_server() {
    // A bound far beyond the drop's: the thread is still waiting on the
    // server when the handle goes.
    let timeouts = (Duration::from_secs(10), Duration::from_secs(600));
    let (cluster, prompts, _events, v1) = serving_v1("live_stall_drop", timeouts);
    let stalled = Stalled::stall(&cluster.dir().join("data"));
    // Long enough for the next poll (every 50 ms) to be waiting on the
    // server; the outcome asserted holds either way.
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(version_of(&greet(&prompts).provenance), v1);
    drop_returns(prompts);
    drop(stalled);
}

#[test]
fn what_a_handle_says_of_its_store_never_shows_a_password() {
    // Nothing listens on port 1: the connection is refused at once.
    for url in [
        "postgres://ada:s3cret@127.0.0.1:1/catalog",
        "postgres://ada@127.0.0.1:1/catalog?password=s3cret",
    ] {
        let mut builder = Prompts::connect(url);
        assert!(!format!("{builder:?}").contains("s3cret"), "{builder:?}");
        let events = builder.subscribe();
        let prompts = builder.start().expect("starts with the store down");
        assert!(!format!("{prompts:?}").contains("s3cret"), "{prompts:?}");
        let Ok(LiveEvent::StoreDown { error }) = events.try_recv() else {
            panic!("the start did not say the store is down");
        };
        let event = LiveEvent::StoreDown { error };
        for shown in [event.to_string(), format!("{event:?}")] {
            assert!(!shown.contains("s3cret"), "{url}: {shown}");
        }
    }
}

//! Eight service processes follow one label of a real PostgreSQL catalog:
//! a publish plus a label move reaches every one of them.

mod support;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Instant;
use support::{HANG, Store, publish_labelled};

const PROCESSES: usize = 8;

/// The service binary, running; killed with the test.
struct Service {
    child: Child,
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `PROCESSES` services on `url`; their stdout lines arrive on the
/// receiver as (process, line).
fn start_services(url: &str) -> (Vec<Service>, Receiver<(usize, String)>) {
    let (lines, received) = channel();
    let services = (0..PROCESSES)
        .map(|index| {
            let mut child = Command::new(env!("CARGO_BIN_EXE_live-serve"))
                .args([url, "production", "before"])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .expect("starts live-serve");
            let stdout = child.stdout.take().expect("stdout");
            let lines = lines.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                    if lines.send((index, line)).is_err() {
                        return;
                    }
                }
            });
            Service { child }
        })
        .collect();
    (services, received)
}

/// Waits until every process has printed a line containing `wanted`.
fn wait_all(received: &Receiver<(usize, String)>, wanted: &str) -> Vec<std::time::Duration> {
    let start = Instant::now();
    let mut seen: Vec<Option<std::time::Duration>> = vec![None; PROCESSES];
    while seen.iter().any(Option::is_none) {
        let left = HANG.saturating_sub(start.elapsed());
        match received.recv_timeout(left) {
            Ok((index, line)) if line.contains(wanted) => {
                seen[index].get_or_insert(start.elapsed());
            }
            Ok(_) => {}
            Err(_) => panic!("not every process showed `{wanted}` within {HANG:?}: {seen:?}"),
        }
    }
    seen.into_iter().flatten().collect()
}

#[test]
fn eight_processes_follow_one_label() {
    let store = Store::postgres("eight_processes");
    let mut catalog = store.open();
    let v1 = publish_labelled(
        &mut catalog,
        "greeter",
        "production",
        "One greets {{name}}.",
        None,
    );
    let (mut services, received) = start_services(&store.url);
    wait_all(
        &received,
        &format!("serving catalog greeter v{v1} label=production"),
    );

    let v2 = publish_labelled(
        &mut catalog,
        "greeter",
        "production",
        "Two greets {{name}}.",
        None,
    );
    let took = wait_all(
        &received,
        &format!("serving catalog greeter v{v2} label=production"),
    );
    eprintln!("publish + label move seen by all {PROCESSES} processes after {took:?}");

    // Rolled back, they all follow again.
    catalog
        .set_label("greeter", "production", v1)
        .expect("rolls back");
    wait_all(
        &received,
        &format!("serving catalog greeter v{v1} label=production"),
    );

    for service in &mut services {
        // Closing stdin is how a service is told to go.
        drop(service.child.stdin.take());
        let status = service.child.wait().expect("exits");
        assert!(status.success(), "a service failed: {status}");
    }
}

//! Eight service processes follow one label of a real PostgreSQL catalog:
//! a publish plus a label move reaches every one of them.

use crate::support;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use support::{Store, publish_labelled};

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

/// Waits until every process has printed a line containing `wanted`. No
/// deadline (how fast is the bench's to measure): the wait fails only when
/// every process's output has ended first.
fn wait_all(received: &Receiver<(usize, String)>, wanted: &str) {
    let mut seen = [false; PROCESSES];
    while seen.contains(&false) {
        match received.recv() {
            Ok((index, line)) if line.contains(wanted) => seen[index] = true,
            Ok(_) => {}
            Err(_) => panic!("the services ended before all showed `{wanted}`: {seen:?}"),
        }
    }
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
    wait_all(
        &received,
        &format!("serving catalog greeter v{v2} label=production"),
    );

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

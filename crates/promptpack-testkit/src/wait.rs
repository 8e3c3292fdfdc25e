//! Waiting for something that happens on another thread or in another process: a file watcher's
//! reload, a live handle's event, a line from a child process.
//!
//! How long it takes is never asserted (the machine is shared: that is the bench's to measure).
//! The bound is a hang guard: a count of checks, [`CHECKS`] of them [`PAUSE`] apart (at least ten
//! minutes, far past any healthy wait), after which the wait panics naming what never happened,
//! so that a stuck test fails with a message instead of hanging the run.

use std::fmt::Debug;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

/// The pause between two checks of [`until`], and the longest a [`recv_until`] receive waits.
pub const PAUSE: Duration = Duration::from_millis(5);

/// How many checks (or receives that found nothing) a wait makes before it panics:
/// 120,000 × [`PAUSE`] is at least ten minutes.
pub const CHECKS: u32 = 120_000;

/// Polls `check` until it holds; panics naming `what` when it still does not after [`CHECKS`]
/// checks.
///
/// `what` says what is awaited, as the failure should read: "the library serves v2".
pub fn until(what: &str, check: impl FnMut() -> bool) {
    until_within(CHECKS, what, check);
}

/// [`until`] with its own bound: `checks` checks, [`PAUSE`] apart.
pub fn until_within(checks: u32, what: &str, mut check: impl FnMut() -> bool) {
    for _ in 0..checks {
        if check() {
            return;
        }
        std::thread::sleep(PAUSE);
    }
    if !check() {
        panic!("never happened: {what} (checked {checks} times, {PAUSE:?} apart)");
    }
}

/// Receives until a message matches `wanted`: every message received, the match last.
///
/// Panics naming `what` (and listing what came) when the sender goes away first, or when
/// [`CHECKS`] receives in a row found nothing.
pub fn recv_until<T: Debug>(
    messages: &Receiver<T>,
    what: &str,
    wanted: impl Fn(&T) -> bool,
) -> Vec<T> {
    recv_until_within(CHECKS, messages, what, wanted)
}

/// [`recv_until`] with its own bound: `checks` empty receives in a row.
pub fn recv_until_within<T: Debug>(
    checks: u32,
    messages: &Receiver<T>,
    what: &str,
    wanted: impl Fn(&T) -> bool,
) -> Vec<T> {
    let mut seen = Vec::new();
    let mut empty = 0;
    while empty < checks {
        match messages.recv_timeout(PAUSE) {
            Ok(message) => {
                empty = 0;
                let done = wanted(&message);
                seen.push(message);
                if done {
                    return seen;
                }
            }
            Err(RecvTimeoutError::Timeout) => empty += 1,
            Err(RecvTimeoutError::Disconnected) => {
                panic!("the sender went away before {what}; received {seen:#?}")
            }
        }
    }
    panic!(
        "never happened: {what} ({checks} receives of {PAUSE:?} found nothing); received {seen:#?}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::channel;

    #[test]
    fn until_returns_once_the_check_holds() {
        let mut calls = 0;
        until("the third call", || {
            calls += 1;
            calls == 3
        });
        assert_eq!(calls, 3);
    }

    #[test]
    #[should_panic(expected = "never happened: the flag is set (checked 3 times")]
    fn until_names_what_never_happened() {
        until_within(3, "the flag is set", || false);
    }

    #[test]
    fn recv_until_returns_everything_up_to_the_match() {
        let (tx, rx) = channel();
        for n in [1, 2, 3, 4] {
            tx.send(n).expect("send");
        }
        assert_eq!(recv_until(&rx, "a 3", |&n| n == 3), [1, 2, 3]);
    }

    #[test]
    #[should_panic(expected = "the sender went away before a 9; received [\n    1,\n]")]
    fn recv_until_fails_when_the_sender_goes_away() {
        let (tx, rx) = channel();
        tx.send(1).expect("send");
        drop(tx);
        recv_until(&rx, "a 9", |&n| n == 9);
    }

    #[test]
    #[should_panic(expected = "never happened: a 9 (2 receives")]
    fn recv_until_names_what_never_came() {
        let (tx, rx) = channel::<i32>();
        recv_until_within(2, &rx, "a 9", |&n| n == 9);
        drop(tx);
    }
}

//! How long a live handle waits before it tries its store again: a random
//! time up to 1 s before the first attempt, then a ceiling doubling up to
//! 5 s, each wait drawn between half and all of it (docs/relay.md), so that
//! the processes of a fleet whose store or relay comes back return spread
//! over seconds, not in one instant.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The ceiling of the first wait.
const FIRST: Duration = Duration::from_secs(1);
/// The highest ceiling.
const MAX: Duration = Duration::from_secs(5);

/// The waits between attempts; [`Backoff::reset`] after one succeeds.
#[derive(Debug)]
pub(super) struct Backoff {
    /// The ceiling of the next wait; `None` before the first.
    ceiling: Option<Duration>,
    /// A xorshift generator's state: jitter needs no better randomness,
    /// only processes that differ from each other.
    state: u64,
}

impl Backoff {
    pub(super) fn new() -> Backoff {
        Backoff {
            ceiling: None,
            state: seed(),
        }
    }

    /// The next wait: up to 1 s the first time, then between half and all
    /// of a ceiling that doubles up to 5 s.
    pub(super) fn next(&mut self) -> Duration {
        let fraction = self.fraction();
        match self.ceiling {
            None => {
                self.ceiling = Some(FIRST);
                FIRST.mul_f64(fraction)
            }
            Some(ceiling) => {
                let ceiling = (ceiling * 2).min(MAX);
                self.ceiling = Some(ceiling);
                ceiling.mul_f64(0.5 + fraction / 2.0)
            }
        }
    }

    /// An attempt succeeded: the next wait is a first one again.
    pub(super) fn reset(&mut self) {
        self.ceiling = None;
    }

    /// A number in [0, 1).
    fn fraction(&mut self) -> f64 {
        let mut x = self.state;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.state = x;
        // The top 53 bits: every value an f64 holds exactly.
        (x >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A seed that differs between processes and between handles of one: std's
/// per-process random hasher keys, the time and the process id, with no
/// random-number crate.
fn seed() -> u64 {
    let mut hasher = RandomState::new().build_hasher();
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    hasher.write_u128(now.as_nanos());
    hasher.write_u32(std::process::id());
    // Xorshift never leaves zero.
    hasher.finish() | 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_stay_in_their_bounds() {
        let mut backoff = Backoff::new();
        for _ in 0..3 {
            assert!(backoff.next() <= FIRST);
            let bounds = [
                (1_000, 2_000),
                (2_000, 4_000),
                (2_500, 5_000),
                (2_500, 5_000),
            ];
            for (low, high) in bounds {
                let wait = backoff.next();
                assert!(
                    wait >= Duration::from_millis(low) && wait <= Duration::from_millis(high),
                    "{wait:?}"
                );
            }
            backoff.reset();
        }
    }

    #[test]
    fn waits_differ() {
        let mut backoff = Backoff::new();
        let waits: std::collections::HashSet<Duration> = (0..8)
            .map(|_| {
                backoff.reset();
                backoff.next()
            })
            .collect();
        assert!(waits.len() > 1);
    }
}

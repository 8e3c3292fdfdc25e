//! Timing: calibrated batches, interleaved rounds, and the statistics the tables print.

use super::Mode;
use super::contender::{Contender, State};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Picks a batch size so that one batch takes about `target`.
pub fn calibrate(run: &mut dyn FnMut(u64) -> usize, target: Duration) -> u64 {
    let mut n = 1u64;
    loop {
        let start = Instant::now();
        black_box(run(n));
        let took = start.elapsed();
        if took >= target / 4 || n >= 1 << 30 {
            let per = took.as_secs_f64() / n as f64;
            return ((target.as_secs_f64() / per.max(1e-12)) as u64).max(1);
        }
        n *= 2;
    }
}

/// The median of `samples` (sorts them); NaN when there are none.
pub fn median(samples: &mut [f64]) -> f64 {
    if samples.is_empty() {
        return f64::NAN;
    }
    samples.sort_by(f64::total_cmp);
    let mid = samples.len() / 2;
    if samples.len() % 2 == 1 {
        samples[mid]
    } else {
        (samples[mid - 1] + samples[mid]) / 2.0
    }
}

/// Median and p95 (nearest rank) of `samples` (sorts them).
pub fn summary(samples: &mut [f64]) -> (f64, f64) {
    let mid = median(samples); // sorts
    let rank = ((samples.len() as f64 * 0.95).ceil() as usize).clamp(1, samples.len().max(1));
    (mid, samples.get(rank - 1).copied().unwrap_or(f64::NAN))
}

/// Times every ready contender in interleaved rounds (the starting contender
/// rotates each round), one batch each per round; samples are ns/render.
pub fn time_all(list: &mut [Contender<'_>], mode: &Mode) {
    for c in list.iter_mut() {
        if let State::Ready(run) = &mut c.state {
            c.batch = calibrate(run.as_mut(), mode.batch_target);
        }
    }
    let len = list.len();
    for round in 0..mode.rounds {
        for i in 0..len {
            let c = &mut list[(i + round) % len];
            if let State::Ready(run) = &mut c.state {
                let start = Instant::now();
                black_box(run(c.batch));
                let ns = start.elapsed().as_nanos() as f64 / c.batch as f64;
                c.samples.push(ns);
            }
        }
    }
}

/// Milliseconds `f` takes: the median of `samples` runs.
pub fn time_ms(samples: usize, mut f: impl FnMut()) -> f64 {
    let mut ms: Vec<f64> = (0..samples.max(1))
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    median(&mut ms)
}

/// Runs `n` renders of one contender. Not inlined, so that callgrind can
/// count exactly this: `--toggle-collect='*profile_batch*'`.
#[inline(never)]
pub fn profile_batch(run: &mut dyn FnMut(u64) -> usize, n: u64) -> usize {
    run(n)
}

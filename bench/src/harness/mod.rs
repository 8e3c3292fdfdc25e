//! The harness every section shares: what the run asked for ([`Mode`]), the contenders of the
//! render tables and their checks, timing, the counting allocator, and the report's text.
//!
//! Sections build on it and never on each other's internals, except the `live` section, which
//! reuses the render section's rows (its workload, lower bound and typed vars).

mod alloc;
mod contender;
mod report;
mod timing;

pub use alloc::{allocations, measure_memory};
#[cfg_attr(
    all(promptpack_typed, promptpack_choice, promptpack_conversation),
    allow(unused_imports)
)]
pub use contender::skipped;
pub use contender::{Contender, State, checked, contender, lower_bound, try_contender};
pub use report::{err, escape_cell, first_difference, rows_against_baselines, table_row};
pub use timing::{calibrate, median, profile_batch, summary, time_all, time_ms};

use std::time::Duration;

/// What the command line asked for: how long to time, and which sections.
pub struct Mode {
    /// `--quick`: fewer rounds and samples everywhere.
    pub quick: bool,
    /// Interleaved rounds of the render tables.
    pub rounds: usize,
    /// How long one batch of a render contender should take.
    pub batch_target: Duration,
    /// Loads of the conformance corpus timed.
    pub load_samples: usize,
    /// `--only`: the sections to run; all when `None`.
    pub only: Option<Vec<String>>,
}

impl Mode {
    /// A run of every section (or of `only`), quick or full.
    pub fn new(quick: bool, only: Option<Vec<String>>) -> Mode {
        Mode {
            quick,
            rounds: if quick { 10 } else { 100 },
            batch_target: Duration::from_millis(if quick { 2 } else { 20 }),
            load_samples: if quick { 5 } else { 30 },
            only,
        }
    }

    /// Whether `--only` names `section`: for a section that runs only when asked for.
    pub fn named(&self, section: &str) -> bool {
        self.only
            .as_ref()
            .is_some_and(|only| only.iter().any(|s| s == section))
    }

    /// Whether `section` runs.
    pub fn wants(&self, section: &str) -> bool {
        self.only
            .as_ref()
            .is_none_or(|only| only.iter().any(|s| s == section))
    }
}

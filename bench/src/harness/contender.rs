//! A row of the render tables: a contender whose output is checked byte for byte before it is
//! timed, and which is then only ever timed (a contender that errs or differs is `Failed`).

use super::report::first_difference;
use std::hint::black_box;

/// Runs a contender `n` times; returns the bytes rendered (kept, so that nothing is optimized
/// away).
pub type Runner<'a> = Box<dyn FnMut(u64) -> usize + 'a>;

/// Whether a contender is timed, and why not.
pub enum State<'a> {
    /// Checked: its output equals the expected one.
    Ready(Runner<'a>),
    /// It erred, differed or could not be set up: never timed.
    Failed(String),
    /// Not built (the typed contenders when `build.rs` could not compile their prompts).
    #[cfg_attr(
        all(promptpack_typed, promptpack_choice, promptpack_conversation),
        allow(dead_code)
    )]
    Skipped(String),
}

/// A row of a render table and its samples.
pub struct Contender<'a> {
    /// The row's name (`--profile` matches on it).
    pub name: &'static str,
    /// The notes column.
    pub note: &'static str,
    /// Whether it is timed.
    pub state: State<'a>,
    /// ns per render, one per round.
    pub samples: Vec<f64>,
    /// Renders per timed batch, from calibration.
    pub batch: u64,
}

impl<'a> Contender<'a> {
    fn new(name: &'static str, note: &'static str, state: State<'a>) -> Contender<'a> {
        Contender {
            name,
            note,
            state,
            samples: Vec::new(),
            batch: 0,
        }
    }

    /// A contender that could not be set up or checked: shown `FAILED` with `why`.
    pub fn failed(name: &'static str, note: &'static str, why: impl Into<String>) -> Contender<'a> {
        Contender::new(name, note, State::Failed(why.into()))
    }
}

/// For the typed contenders when they are not built.
#[cfg_attr(
    all(promptpack_typed, promptpack_choice, promptpack_conversation),
    allow(dead_code)
)]
pub fn skipped<'a>(
    name: &'static str,
    note: &'static str,
    why: impl Into<String>,
) -> Contender<'a> {
    Contender::new(name, note, State::Skipped(why.into()))
}

/// A contender whose output has been checked against `expected`; `Failed`
/// when it errs or differs, and then never timed.
pub fn contender<'a, F>(
    name: &'static str,
    note: &'static str,
    expected: &str,
    mut render: F,
) -> Contender<'a>
where
    F: FnMut() -> Result<String, String> + 'a,
{
    let state = match render() {
        Err(e) => State::Failed(e),
        Ok(out) if out != expected => State::Failed(first_difference(&out, expected)),
        Ok(_) => State::Ready(Box::new(move |n| {
            let mut bytes = 0;
            for _ in 0..n {
                match render() {
                    Ok(out) => bytes += black_box(out).len(),
                    Err(e) => panic!("{name} failed while timed: {e}"),
                }
            }
            bytes
        })),
    };
    Contender::new(name, note, state)
}

/// Builds a contender from a setup that may fail (a template that does not
/// compile is a failed contender, not a crash).
pub fn try_contender<'a, F>(
    name: &'static str,
    note: &'static str,
    expected: &str,
    setup: Result<F, String>,
) -> Contender<'a>
where
    F: FnMut() -> Result<String, String> + 'a,
{
    match setup {
        Ok(render) => contender(name, note, expected, render),
        Err(e) => Contender::failed(name, note, e),
    }
}

/// The lower bound's render: precomputed pieces pushed into a `String` of
/// exact capacity.
pub fn lower_bound<E>(pieces: Vec<String>) -> impl FnMut() -> Result<String, E> {
    let capacity = pieces.iter().map(String::len).sum();
    move || {
        let mut out = String::with_capacity(capacity);
        for p in &pieces {
            out.push_str(p);
        }
        Ok(out)
    }
}

/// A contender whose output is not one string (a conversation's messages, in the engine's own
/// type): `check` compares its first output with the expected one (an `Err` says where they
/// part: the contender is then `Failed` and never timed), and `size` gives the bytes an output
/// holds (summed and kept while timed, so that nothing is optimized away).
pub fn checked<'a, T: 'a, F>(
    name: &'static str,
    note: &'static str,
    check: impl FnOnce(&T) -> Result<(), String>,
    size: fn(&T) -> usize,
    mut render: F,
) -> Contender<'a>
where
    F: FnMut() -> Result<T, String> + 'a,
{
    let state = match render().and_then(|out| check(&out)) {
        Err(e) => State::Failed(e),
        Ok(()) => State::Ready(Box::new(move |n| {
            let mut bytes = 0;
            for _ in 0..n {
                match render() {
                    Ok(out) => bytes += size(black_box(&out)),
                    Err(e) => panic!("{name} failed while timed: {e}"),
                }
            }
            bytes
        })),
    };
    Contender::new(name, note, state)
}

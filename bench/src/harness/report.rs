//! The report's text: table rows, cells, and what a failure says.

use super::contender::{Contender, State};
use super::timing::median;

/// A row of the render tables: name, median, median / `lower`, min, notes.
pub fn table_row(c: &mut Contender<'_>, lower: f64) -> String {
    match &c.state {
        State::Ready(_) => {
            let min = c.samples.iter().copied().fold(f64::INFINITY, f64::min);
            let med = median(&mut c.samples);
            format!(
                "| {} | {:.0} | {:.2} | {:.0} | {} |",
                c.name,
                med,
                med / lower,
                min,
                c.note
            )
        }
        State::Failed(why) => format!("| {} | FAILED | – | – | {} |", c.name, escape_cell(why)),
        State::Skipped(why) => {
            format!("| {} | skipped | – | – | {} |", c.name, escape_cell(why))
        }
    }
}

/// `s` as one Markdown table cell.
pub fn escape_cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

pub use promptpack_testkit::corpus::first_difference;

/// An error as the report's text.
pub fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// The Markdown rows of a table whose ratios are to baseline rows of the same run: row `i` is
/// `list[i]`, `allocs[i]` its allocator calls per run (if counted), and `bases[i]` the name of
/// the row its ratio is to. `| name | median | ratio | min | allocs | note |`, a line each.
pub fn rows_against_baselines(
    list: &mut [Contender<'_>],
    allocs: &[Option<f64>],
    bases: &[&str],
) -> String {
    let base_medians: Vec<f64> = bases
        .iter()
        .map(|base| {
            list.iter()
                .find(|c| c.name == *base && matches!(c.state, State::Ready(_)))
                .map_or(f64::NAN, |c| median(&mut c.samples.clone()))
        })
        .collect();
    let mut out = String::new();
    for ((c, allocs), lower) in list.iter_mut().zip(allocs).zip(base_medians) {
        let row = match &c.state {
            State::Ready(_) => {
                let min = c.samples.iter().copied().fold(f64::INFINITY, f64::min);
                let med = median(&mut c.samples);
                let ratio = if lower.is_finite() {
                    format!("{:.2}", med / lower)
                } else {
                    "–".to_owned()
                };
                format!(
                    "| {} | {med:.0} | {ratio} | {min:.0} | {} | {} |",
                    c.name,
                    allocs.map_or("–".to_owned(), |a| format!("{a:.0}")),
                    c.note
                )
            }
            State::Failed(why) => {
                format!("| {} | FAILED | – | – | – | {} |", c.name, escape_cell(why))
            }
            State::Skipped(why) => {
                format!("| {} | skipped | – | – | – | {} |", c.name, escape_cell(why))
            }
        };
        out.push_str(&row);
        out.push('\n');
    }
    out
}

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

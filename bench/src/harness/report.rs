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

/// Where `got` first differs from `want`, with 30 bytes around it on each side.
pub fn first_difference(got: &str, want: &str) -> String {
    let at = got
        .bytes()
        .zip(want.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    let around = |s: &str| {
        let mut start = at.saturating_sub(30);
        while !s.is_char_boundary(start) {
            start -= 1;
        }
        let mut end = (at + 30).min(s.len());
        while !s.is_char_boundary(end) {
            end += 1;
        }
        format!("{:?}", &s[start..end])
    };
    format!(
        "output differs at byte {at} (got {} bytes, want {}): got {} want {}",
        got.len(),
        want.len(),
        around(got),
        around(want)
    )
}

/// An error as the report's text.
pub fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

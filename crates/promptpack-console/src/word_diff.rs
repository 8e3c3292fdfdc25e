//! Two texts side by side, line against line, with the words that changed
//! inside a changed line marked: what the diff page shows.

use similar::{ChangeTag, TextDiff};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A piece of a line: its text, and whether it is a changed word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Piece {
    pub(crate) text: String,
    pub(crate) changed: bool,
}

/// One side of a row: a line number and its pieces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Side {
    pub(crate) number: usize,
    pub(crate) pieces: Vec<Piece>,
}

/// A row of the side-by-side view: the old line, the new line, or both.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Row {
    pub(crate) old: Option<Side>,
    pub(crate) new: Option<Side>,
    /// `same`, `changed`, `removed` or `added`: the row's CSS class.
    pub(crate) kind: &'static str,
}

/// Past this many lines on both sides together, or [`WORD_MARKS_MAX_BYTES`],
/// a diff is compared line by line without word marks: the word diff
/// costs the product of the two sides.
pub(crate) const WORD_MARKS_MAX_LINES: usize = 1_000;

/// Past this many bytes on both sides together, a diff is compared line by
/// line (see [`WORD_MARKS_MAX_LINES`]).
pub(crate) const WORD_MARKS_MAX_BYTES: usize = 64 * 1024;

/// The steps a page's line-level diffs may take in all (see [`Budget`]):
/// a few milliseconds of work, enough to align texts of 60,000 lines that
/// differ in up to ~1,400 lines; past it, the lines between the common start
/// and end are shown as replaced.
pub(crate) const DEFAULT_STEPS: u64 = 2_000_000;

/// The work a request's diffs may do, counted in steps (a line hashed,
/// compared or moved past, a diagonal searched), and the flag that says
/// its client has gone.
///
/// The search of a line-level diff stops once the budget is spent (the
/// rest is shown replaced); the linear passes (reading the lines, the
/// common start and end, the rows) are counted but always finish, so a
/// diff costs at most the budget plus a few steps per line. A set flag
/// stops everything at the next step.
#[derive(Debug)]
pub(crate) struct Budget {
    limit: u64,
    used: u64,
    cancel: Option<Arc<AtomicBool>>,
}

/// A diff stopped because the request it worked for was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cancelled;

impl Budget {
    /// `limit` steps, stopped early when `cancel` is set.
    pub(crate) fn new(limit: u64, cancel: Option<Arc<AtomicBool>>) -> Budget {
        Budget {
            limit,
            used: 0,
            cancel,
        }
    }

    /// The steps taken so far.
    #[cfg(test)]
    pub(crate) fn used(&self) -> u64 {
        self.used
    }

    fn spent(&self) -> bool {
        self.used >= self.limit
    }

    /// Counts `steps`; `Cancelled` once the flag is set.
    fn spend(&mut self, steps: u64) -> Result<(), Cancelled> {
        self.used = self.used.saturating_add(steps);
        match &self.cancel {
            Some(flag) if flag.load(Ordering::Relaxed) => Err(Cancelled),
            _ => Ok(()),
        }
    }
}

/// A diff's rows, and whether they were compared line by line only (too
/// large for word marks, or past the budget).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Compared {
    pub(crate) rows: Vec<Row>,
    /// `None` for word marks; else why there are none.
    pub(crate) coarse: Option<&'static str>,
}

/// `old` and `new` side by side with a budget of its own and no
/// cancellation: for tests.
#[cfg(test)]
pub(crate) fn side_by_side(old: &str, new: &str) -> Vec<Row> {
    let mut budget = Budget::new(DEFAULT_STEPS, None);
    match compare(old, new, &mut budget) {
        Ok(compared) => compared.rows,
        Err(Cancelled) => Vec::new(),
    }
}

/// `old` and `new` side by side. A removed line and the added line after
/// it share a row; small texts get their changed words marked, larger ones
/// a line-level diff whose search stops when `budget` is spent.
///
/// # Errors
/// `Cancelled` as soon as the budget's flag is set.
pub(crate) fn compare(old: &str, new: &str, budget: &mut Budget) -> Result<Compared, Cancelled> {
    budget.spend(0)?;
    let lines = old.lines().count() + new.lines().count();
    if lines <= WORD_MARKS_MAX_LINES && old.len() + new.len() <= WORD_MARKS_MAX_BYTES {
        // Bounded by the two limits: at most a million line comparisons.
        budget.spend(lines as u64)?;
        return Ok(Compared {
            rows: with_word_marks(old, new),
            coarse: None,
        });
    }
    line_level(old, new, budget)
}

/// The word-marked diff of two small texts.
fn with_word_marks(old: &str, new: &str) -> Vec<Row> {
    let diff = TextDiff::from_lines(old, new);
    let mut rows = Vec::new();
    for op in diff.ops() {
        let mut removed = Vec::new();
        let mut added = Vec::new();
        for change in diff.iter_inline_changes(op) {
            let pieces: Vec<Piece> = change
                .iter_strings_lossy()
                .map(|(emphasized, text)| Piece {
                    text: text.trim_end_matches('\n').to_string(),
                    changed: emphasized,
                })
                .filter(|piece| !piece.text.is_empty())
                .collect();
            match change.tag() {
                ChangeTag::Equal => rows.push(Row {
                    old: change.old_index().map(|i| side(i, pieces.clone())),
                    new: change.new_index().map(|i| side(i, pieces)),
                    kind: "same",
                }),
                ChangeTag::Delete => removed.push(side(change.old_index().unwrap_or(0), pieces)),
                ChangeTag::Insert => added.push(side(change.new_index().unwrap_or(0), pieces)),
            }
        }
        pair(removed, added, &mut rows);
    }
    rows
}

/// Removed and added lines of one change, paired into rows.
fn pair(removed: Vec<Side>, added: Vec<Side>, rows: &mut Vec<Row>) {
    let pairs = removed.len().max(added.len());
    let mut removed = removed.into_iter();
    let mut added = added.into_iter();
    for _ in 0..pairs {
        let (old, new) = (removed.next(), added.next());
        let kind = match (&old, &new) {
            (Some(_), Some(_)) => "changed",
            (Some(_), None) => "removed",
            _ => "added",
        };
        rows.push(Row { old, new, kind });
    }
}

/// One run of a line-level edit script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Edit {
    Same(usize),
    Removed(usize),
    Added(usize),
}

/// The line-level diff: the common start and end, and between them a
/// shortest edit script (Myers) while the budget lasts, else all of it
/// replaced.
fn line_level(old: &str, new: &str, budget: &mut Budget) -> Result<Compared, Cancelled> {
    let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
    let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
    // Lines as numbers, so that the search compares integers.
    let mut ids: HashMap<&str, u32> = HashMap::new();
    let a = intern(&old_lines, &mut ids, budget)?;
    let b = intern(&new_lines, &mut ids, budget)?;
    let start = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let end = a[start..]
        .iter()
        .rev()
        .zip(b[start..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    budget.spend((start + end) as u64)?;
    let (middle_a, middle_b) = (&a[start..a.len() - end], &b[start..b.len() - end]);
    let searched = shortest_edits(middle_a, middle_b, budget)?;
    let coarse = match &searched {
        Some(_) => "the texts are too large for word marks: compared line by line",
        None => {
            "the texts differ too much to align within the diff's budget: the lines between their common start and end are shown replaced"
        }
    };
    let mut script = vec![Edit::Same(start)];
    script.extend(
        searched
            .unwrap_or_else(|| vec![Edit::Removed(middle_a.len()), Edit::Added(middle_b.len())]),
    );
    script.push(Edit::Same(end));
    let rows = rows_of(&script, &old_lines, &new_lines, budget)?;
    Ok(Compared {
        rows,
        coarse: Some(coarse),
    })
}

/// `lines` as numbers, equal lines equal numbers.
fn intern<'t>(
    lines: &[&'t str],
    ids: &mut HashMap<&'t str, u32>,
    budget: &mut Budget,
) -> Result<Vec<u32>, Cancelled> {
    let mut out = Vec::with_capacity(lines.len());
    for chunk in lines.chunks(1024) {
        budget.spend(chunk.len() as u64)?;
        for line in chunk {
            let next = u32::try_from(ids.len()).unwrap_or(u32::MAX);
            out.push(*ids.entry(line.trim_end_matches('\n')).or_insert(next));
        }
    }
    Ok(out)
}

/// A shortest edit script from `a` to `b` (Myers' greedy search, keeping
/// the diagonals of each round to walk back), or `None` once the budget
/// is spent. Each round `d` costs at least `2d + 1` steps and keeps as
/// many numbers, so what it holds is bounded by the budget too.
fn shortest_edits(
    a: &[u32],
    b: &[u32],
    budget: &mut Budget,
) -> Result<Option<Vec<Edit>>, Cancelled> {
    let (n, m) = (a.len() as isize, b.len() as isize);
    if n == 0 || m == 0 {
        return Ok(Some(vec![Edit::Removed(a.len()), Edit::Added(b.len())]));
    }
    let max = n + m;
    let offset = max;
    let mut v = vec![0isize; (2 * max + 2) as usize];
    let mut trace: Vec<Vec<isize>> = Vec::new();
    for d in 0..=max {
        if budget.spent() {
            return Ok(None);
        }
        budget.spend((2 * d + 1) as u64)?;
        let mut k = -d;
        while k <= d {
            let at = (offset + k) as usize;
            let mut x = if k == -d || (k != d && v[at - 1] < v[at + 1]) {
                v[at + 1]
            } else {
                v[at - 1] + 1
            };
            let mut y = x - k;
            let from = x;
            while x < n && y < m && a[x as usize] == b[y as usize] {
                x += 1;
                y += 1;
            }
            budget.spend((x - from) as u64)?;
            v[at] = x;
            if x >= n && y >= m {
                trace.push(v[(offset - d) as usize..=(offset + d) as usize].to_vec());
                return Ok(Some(walk_back(&trace, n, m)));
            }
            // Within a round too: a round's snakes may be long.
            if budget.spent() {
                return Ok(None);
            }
            k += 2;
        }
        trace.push(v[(offset - d) as usize..=(offset + d) as usize].to_vec());
    }
    Ok(None)
}

/// The edit script the search's rounds lead to, from the end back.
fn walk_back(trace: &[Vec<isize>], n: isize, m: isize) -> Vec<Edit> {
    let mut reversed = Vec::new();
    let (mut x, mut y) = (n, m);
    for d in (0..trace.len() as isize).rev() {
        let k = x - y;
        if d == 0 {
            reversed.push(Edit::Same(x as usize));
            break;
        }
        let previous = &trace[(d - 1) as usize];
        let get = |k: isize| previous[(k + d - 1) as usize];
        let down = k == -d || (k != d && get(k - 1) < get(k + 1));
        let before_k = if down { k + 1 } else { k - 1 };
        let before_x = get(before_k);
        let before_y = before_x - before_k;
        let (mid_x, _) = if down {
            (before_x, before_y + 1)
        } else {
            (before_x + 1, before_y)
        };
        reversed.push(Edit::Same((x - mid_x) as usize));
        reversed.push(if down {
            Edit::Added(1)
        } else {
            Edit::Removed(1)
        });
        x = before_x;
        y = before_y;
    }
    reversed.reverse();
    reversed
}

/// The rows of an edit script: equal lines alone, the removed and added
/// lines between two equal runs paired.
fn rows_of(
    script: &[Edit],
    old_lines: &[&str],
    new_lines: &[&str],
    budget: &mut Budget,
) -> Result<Vec<Row>, Cancelled> {
    let plain = |lines: &[&str], index: usize| {
        let text = lines
            .get(index)
            .map_or("", |line| line.trim_end_matches('\n'));
        let pieces = if text.is_empty() {
            Vec::new()
        } else {
            vec![Piece {
                text: text.to_string(),
                changed: false,
            }]
        };
        side(index, pieces)
    };
    let (mut i, mut j) = (0, 0);
    let mut rows = Vec::new();
    let (mut removed, mut added) = (Vec::new(), Vec::new());
    for edit in script {
        match *edit {
            Edit::Same(0) => {}
            Edit::Same(len) => {
                pair(
                    std::mem::take(&mut removed),
                    std::mem::take(&mut added),
                    &mut rows,
                );
                for _ in 0..len {
                    rows.push(Row {
                        old: Some(plain(old_lines, i)),
                        new: Some(plain(new_lines, j)),
                        kind: "same",
                    });
                    i += 1;
                    j += 1;
                }
                budget.spend(len as u64)?;
            }
            Edit::Removed(len) => {
                removed.extend((i..i + len).map(|index| plain(old_lines, index)));
                i += len;
                budget.spend(len as u64)?;
            }
            Edit::Added(len) => {
                added.extend((j..j + len).map(|index| plain(new_lines, index)));
                j += len;
                budget.spend(len as u64)?;
            }
        }
    }
    pair(removed, added, &mut rows);
    Ok(rows)
}

fn side(index: usize, pieces: Vec<Piece>) -> Side {
    Side {
        number: index + 1,
        pieces,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marked(side: &Side) -> String {
        side.pieces
            .iter()
            .map(|p| {
                if p.changed {
                    format!("[{}]", p.text)
                } else {
                    p.text.clone()
                }
            })
            .collect()
    }

    #[test]
    fn a_changed_word_is_marked_on_both_sides_of_one_row() {
        let rows = side_by_side("Hello there\nkeep\n", "Hello world\nkeep\n");
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].kind, "changed");
        assert_eq!(marked(rows[0].old.as_ref().unwrap()), "Hello [there]");
        assert_eq!(marked(rows[0].new.as_ref().unwrap()), "Hello [world]");
        assert_eq!(rows[1].kind, "same");
        assert_eq!(rows[1].new.as_ref().unwrap().number, 2);
    }

    #[test]
    fn lines_only_on_one_side_are_added_or_removed() {
        let rows = side_by_side("a\n", "a\nb\nc\n");
        let kinds: Vec<&str> = rows.iter().map(|r| r.kind).collect();
        assert_eq!(kinds, ["same", "added", "added"]);
        assert!(rows[1].old.is_none());
        let rows = side_by_side("a\nb\n", "b\n");
        assert_eq!(rows[0].kind, "removed");
        assert!(rows[0].new.is_none());
    }

    /// `lines` numbered lines `PREFIX i`.
    fn numbered(prefix: &str, lines: usize) -> String {
        (0..lines).map(|i| format!("{prefix} {i}\n")).collect()
    }

    /// The lines of one side of `rows`, in order, as the text they came from.
    fn side_text(rows: &[Row], old: bool) -> String {
        rows.iter()
            .filter_map(|r| if old { r.old.as_ref() } else { r.new.as_ref() })
            .map(|s| {
                format!(
                    "{}\n",
                    s.pieces.iter().map(|p| p.text.as_str()).collect::<String>()
                )
            })
            .collect()
    }

    /// The steps the linear passes may add to the budget: reading both
    /// sides, the common start and end, and the rows.
    fn linear(old: &str, new: &str) -> u64 {
        4 * (old.lines().count() + new.lines().count()) as u64
    }

    #[test]
    fn ten_thousand_distinct_lines_take_a_bounded_number_of_steps() {
        let (old, new) = (numbered("old line", 12_000), numbered("new line", 12_000));
        let mut budget = Budget::new(DEFAULT_STEPS, None);
        let compared = compare(&old, &new, &mut budget).expect("not cancelled");
        assert!(
            budget.used() <= DEFAULT_STEPS + linear(&old, &new),
            "{} steps",
            budget.used()
        );
        assert_eq!(compared.rows.len(), 12_000);
        assert!(compared.rows.iter().all(|r| r.kind == "changed"));
        assert!(compared.coarse.is_some());
        assert_eq!(side_text(&compared.rows, true), old);
        assert_eq!(side_text(&compared.rows, false), new);
    }

    #[test]
    fn a_large_diff_with_few_changes_is_aligned_line_by_line() {
        let old = numbered("line", 5_000);
        let mut lines: Vec<String> = old.lines().map(str::to_string).collect();
        lines[100] = "line 100 changed".to_string();
        lines.remove(4_000);
        lines.insert(3_000, "a new line".to_string());
        let new: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let mut budget = Budget::new(DEFAULT_STEPS, None);
        let compared = compare(&old, &new, &mut budget).expect("not cancelled");
        let count = |kind: &str| compared.rows.iter().filter(|r| r.kind == kind).count();
        assert_eq!(
            (count("changed"), count("added"), count("removed")),
            (1, 1, 1)
        );
        assert_eq!(count("same"), 4_998);
        let changed = compared.rows.iter().find(|r| r.kind == "changed").unwrap();
        assert_eq!(changed.old.as_ref().unwrap().number, 101);
        assert_eq!(changed.new.as_ref().unwrap().number, 101);
        let added = compared.rows.iter().find(|r| r.kind == "added").unwrap();
        assert_eq!(added.new.as_ref().unwrap().number, 3_001);
        assert_eq!(side_text(&compared.rows, true), old);
        assert_eq!(side_text(&compared.rows, false), new);
        assert_eq!(
            compared.coarse,
            Some("the texts are too large for word marks: compared line by line")
        );
        assert!(budget.used() <= 100_000, "{} steps", budget.used());
    }

    #[test]
    fn past_its_budget_a_diff_shows_the_middle_replaced() {
        // Every tenth line changed: thousands of edits, more than 5,000
        // steps can align.
        let old = numbered("line", 4_000);
        let new: String = old
            .lines()
            .enumerate()
            .map(|(i, l)| {
                if i % 10 == 5 {
                    format!("{l} edited\n")
                } else {
                    format!("{l}\n")
                }
            })
            .collect();
        let limit = 5_000;
        let mut budget = Budget::new(limit, None);
        let compared = compare(&old, &new, &mut budget).expect("not cancelled");
        assert!(
            budget.used() <= limit + linear(&old, &new) + 8_000,
            "{} steps",
            budget.used()
        );
        // The common start (lines 0-4) and end (3996-3999) stay; the rest
        // is one change.
        let kinds: Vec<&str> = compared.rows.iter().map(|r| r.kind).collect();
        assert_eq!(kinds[..5], ["same"; 5]);
        assert!(kinds[5..kinds.len() - 4].iter().all(|k| *k == "changed"));
        assert!(compared.coarse.is_some_and(|why| why.contains("budget")));
        assert_eq!(side_text(&compared.rows, true), old);
        assert_eq!(side_text(&compared.rows, false), new);
    }

    #[test]
    fn a_cancelled_diff_stops_at_once() {
        let (old, new) = (numbered("old line", 60_000), numbered("new line", 60_000));
        let flag = Arc::new(AtomicBool::new(false));
        flag.store(true, Ordering::Relaxed);
        let mut budget = Budget::new(DEFAULT_STEPS, Some(Arc::clone(&flag)));
        assert_eq!(compare(&old, &new, &mut budget), Err(Cancelled));
        assert_eq!(budget.used(), 0, "work done after the flag was set");
        // Small texts too.
        let mut budget = Budget::new(DEFAULT_STEPS, Some(flag));
        assert_eq!(compare("a\n", "b\n", &mut budget), Err(Cancelled));
    }

    #[test]
    fn small_texts_keep_their_word_marks_within_a_budget() {
        let mut budget = Budget::new(DEFAULT_STEPS, None);
        let compared = compare("Hello there\nkeep\n", "Hello world\nkeep\n", &mut budget)
            .expect("not cancelled");
        assert_eq!(compared.coarse, None);
        assert_eq!(
            compared.rows,
            side_by_side("Hello there\nkeep\n", "Hello world\nkeep\n")
        );
        assert_eq!(
            marked(compared.rows[0].new.as_ref().unwrap()),
            "Hello [world]"
        );
    }

    #[test]
    fn equal_texts_are_all_same() {
        assert!(
            side_by_side("x\ny", "x\ny")
                .iter()
                .all(|r| r.kind == "same")
        );
        assert!(side_by_side("", "").is_empty());
    }
}

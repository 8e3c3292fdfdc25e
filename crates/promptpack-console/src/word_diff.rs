//! Two texts side by side, line against line, with the words that changed
//! inside a changed line marked: what the diff page shows.

use similar::{ChangeTag, TextDiff};

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

/// `old` and `new` side by side. A removed line and the added line after
/// it share a row, their changed words marked.
pub(crate) fn side_by_side(old: &str, new: &str) -> Vec<Row> {
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
    rows
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

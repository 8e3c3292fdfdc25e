//! Where the JSON is in what a model sends. Models asked for JSON answer
//! with the bare value most of the time, and otherwise wrap it the few ways
//! chat habits teach them: a Markdown code fence, a sentence before it, a
//! remark after it. Only those wrappings are tolerated; the value itself is
//! never repaired.

/// The part of an answer the JSON value is read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Found {
    /// The byte where the value starts: a `{` (or a `[`, see [`find`]).
    pub start: usize,
    /// Where the reading stops: the end of the text, or the closing line
    /// of the code fence the value is in, so that a value cut short inside
    /// a fence is reported as cut short at the fence, not as a stray
    /// backtick.
    pub end: usize,
}

/// Where the JSON value of `text` starts, in this order:
///
/// 1. the whole text, when it starts with `{` or `[` once trimmed;
/// 2. else the content of the first Markdown code fence (```` ``` ```` or
///    `~~~`, with any info string: `json` most often) whose content starts
///    with `{` or `[`;
/// 3. else from the first `{` (prose before it).
///
/// A list is taken where it is plainly the answer (rules 1 and 2), so that
/// a model that sends a list where an object is wanted is told so, rather
/// than having the first object inside the list read in its place. In
/// prose (rule 3) only a `{` starts the value: brackets are common in
/// sentences.
///
/// `None` when there is no `{` at all (and no list by rules 1 and 2).
pub(crate) fn find(text: &str) -> Option<Found> {
    let trimmed = text.trim_start_matches(is_json_whitespace_or_other);
    let start = text.len() - trimmed.len();
    if trimmed.starts_with(['{', '[']) {
        return Some(Found {
            start,
            end: text.len(),
        });
    }
    if let Some(found) = in_fence(text) {
        return Some(found);
    }
    text.find('{').map(|start| Found {
        start,
        end: text.len(),
    })
}

/// Leading whitespace of an answer: JSON's and any other Unicode
/// whitespace (a model may start with a non-breaking space or a byte order
/// mark).
fn is_json_whitespace_or_other(c: char) -> bool {
    c.is_whitespace() || c == '\u{FEFF}'
}

/// The first code fence whose content starts with `{` or `[`.
fn in_fence(text: &str) -> Option<Found> {
    let mut lines = Lines { text, at: 0 };
    while let Some((line_start, line)) = lines.next() {
        let Some((mark, width)) = fence_open(line) else {
            continue;
        };
        let content_start = line_start + line.len();
        // The content runs to the closing line, or to the end of the text
        // when the fence is never closed (an answer cut short).
        let mut content_end = text.len();
        for (close_start, close) in lines.by_ref() {
            if fence_closes(close, mark, width) {
                content_end = close_start;
                break;
            }
        }
        let content = &text[content_start..content_end];
        let trimmed = content.trim_start_matches(is_json_whitespace_or_other);
        if trimmed.starts_with(['{', '[']) {
            return Some(Found {
                start: content_end - trimmed.len(),
                end: content_end,
            });
        }
    }
    None
}

/// The lines of a text with their byte offsets, line endings included.
struct Lines<'t> {
    text: &'t str,
    at: usize,
}

impl<'t> Iterator for Lines<'t> {
    type Item = (usize, &'t str);

    fn next(&mut self) -> Option<(usize, &'t str)> {
        let rest = self.text.get(self.at..).filter(|r| !r.is_empty())?;
        let len = rest.find('\n').map_or(rest.len(), |i| i + 1);
        let start = self.at;
        self.at += len;
        Some((start, &rest[..len]))
    }
}

/// A fence's opening line (CommonMark: up to three spaces, then three or
/// more backticks or tildes, then an info string, which for backticks has
/// no backtick): its character and its width.
fn fence_open(line: &str) -> Option<(char, usize)> {
    let (mark, width, rest) = fence_mark(line)?;
    if mark == '`' && rest.contains('`') {
        return None;
    }
    Some((mark, width))
}

/// Whether `line` closes a fence of `mark` at least `width` wide: the same
/// character, as many or more, and nothing but whitespace after.
fn fence_closes(line: &str, mark: char, width: usize) -> bool {
    fence_mark(line).is_some_and(|(m, w, rest)| m == mark && w >= width && rest.trim().is_empty())
}

/// The run of three or more backticks or tildes a line starts with (after
/// up to three spaces), its width and what follows it.
fn fence_mark(line: &str) -> Option<(char, usize, &str)> {
    let indented = line.trim_start_matches(' ');
    if line.len() - indented.len() > 3 {
        return None;
    }
    let mark = indented.chars().next().filter(|c| matches!(c, '`' | '~'))?;
    let rest = indented.trim_start_matches(mark);
    // The mark is one byte, so bytes are characters here.
    let width = indented.len() - rest.len();
    (width >= 3).then_some((mark, width, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start(text: &str) -> Option<&str> {
        find(text).map(|f| &text[f.start..f.end])
    }

    #[test]
    fn the_wrappings_models_add() {
        assert_eq!(start(" {\"a\": 1} "), Some("{\"a\": 1} "));
        assert_eq!(start("```json\n{\"a\": 1}\n```\n"), Some("{\"a\": 1}\n"));
        assert_eq!(start("~~~\n {}\n~~~"), Some("{}\n"));
        assert_eq!(start("Here:\n```\n[1]\n```"), Some("[1]\n"));
        assert_eq!(start("Sure: {\"a\": 1}. Done"), Some("{\"a\": 1}. Done"));
        assert_eq!(
            start("```python\nx = 1\n```\n```json\n{}\n```"),
            Some("{}\n"),
            "the first fence whose content is JSON"
        );
        assert_eq!(
            start("```json\n{\"a\": "),
            Some("{\"a\": "),
            "an unclosed fence runs to the end"
        );
        assert_eq!(
            start("````\n{}\n```\n````"),
            Some("{}\n```\n"),
            "a shorter run does not close a fence"
        );
        assert_eq!(start("no json [1, 2]"), None);
        assert_eq!(start(""), None);
        assert_eq!(
            start("    ```\n{}\n```"),
            Some("{}\n```"),
            "indented code is no fence"
        );
    }
}

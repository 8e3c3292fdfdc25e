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
///
/// Fence lines are found by searching for their marks (```` ``` ````,
/// `~~~`), not by reading the text line by line: the JSON between the
/// fences is most of the text, and is searched at memchr speed.
fn in_fence(text: &str) -> Option<Found> {
    let mut from = 0;
    while let Some((open_start, open, (mark, width))) =
        fence_line(text, from, &['`', '~'], fence_open)
    {
        let content_start = open_start + open.len();
        // The content runs to the closing line, or to the end of the text
        // when the fence is never closed (an answer cut short).
        let close = fence_line(text, content_start, &[mark], |line| {
            fence_closes(line, mark, width).then_some(())
        });
        let content_end = close.map_or(text.len(), |(start, _, ())| start);
        let content = &text[content_start..content_end];
        let trimmed = content.trim_start_matches(is_json_whitespace_or_other);
        if trimmed.starts_with(['{', '[']) {
            return Some(Found {
                start: content_end - trimmed.len(),
                end: content_end,
            });
        }
        from = close.map_or(text.len(), |(start, line, ())| start + line.len());
    }
    None
}

/// The first line starting at or after `from` (a line start) that holds
/// three of one of `marks` in a row and that `accept` takes: its start,
/// the line (its line ending included) and what `accept` made of it.
fn fence_line<'t, T>(
    text: &'t str,
    from: usize,
    marks: &[char],
    accept: impl Fn(&str) -> Option<T>,
) -> Option<(usize, &'t str, T)> {
    let mut search = from;
    let mut ticks = Next::new('`', marks);
    let mut tildes = Next::new('~', marks);
    loop {
        let at = match (ticks.at(text, search), tildes.at(text, search)) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => return None,
        };
        let line_start = text[..at].rfind('\n').map_or(0, |n| n + 1).max(from);
        let line_end = text[at..].find('\n').map_or(text.len(), |n| at + n + 1);
        let line = &text[line_start..line_end];
        if text[line_start..at].bytes().all(|b| b == b' ')
            && let Some(made) = accept(line)
        {
            return Some((line_start, line, made));
        }
        search = line_end;
    }
}

/// The next run of three of a mark, remembered: a text with many
/// backticks and no tilde is searched for tildes once, not once per
/// backtick. The search is for the character (memchr), then its two
/// neighbours: a substring search costs several times as much per byte.
struct Next {
    mark: char,
    /// `None` before the first search; `Some(None)` when the run is not in
    /// the rest of the text (or this mark is not searched for).
    found: Option<Option<usize>>,
}

impl Next {
    fn new(mark: char, searched: &[char]) -> Next {
        let found = if searched.contains(&mark) {
            None
        } else {
            Some(None)
        };
        Next { mark, found }
    }

    /// The first run of three of the mark at or after `from`.
    fn at(&mut self, text: &str, from: usize) -> Option<usize> {
        match self.found {
            Some(None) => None,
            Some(Some(at)) if at >= from => Some(at),
            _ => {
                let found = run_of_three(text, from, self.mark);
                self.found = Some(found);
                found
            }
        }
    }
}

/// The first place at or after `from` where `mark` (an ASCII character)
/// is written three times in a row.
fn run_of_three(text: &str, mut from: usize, mark: char) -> Option<usize> {
    let three = [mark as u8; 3];
    loop {
        let at = from + text.get(from..)?.find(mark)?;
        if text.as_bytes()[at..].starts_with(&three) {
            return Some(at);
        }
        from = at + 1;
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
        assert_eq!(
            start("a ``` b\n~~~\n{}\n~~~"),
            Some("{}\n"),
            "a mark inside a line is no fence"
        );
        // Many marks inside lines and no fence: one search per kind of
        // mark, not one per mark, or this would take minutes.
        let many = format!("{}{{}}", "x ```\n".repeat(200_000));
        assert_eq!(find(&many).map(|f| f.start), Some(many.len() - 2));
    }
}

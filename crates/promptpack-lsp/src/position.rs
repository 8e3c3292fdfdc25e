//! Positions as the protocol counts them (0-based lines, UTF-16 code units)
//! and as the text holds them (byte offsets), both ways. A position past
//! the end of its line or of the text is clamped to it, as the protocol
//! asks; one inside a character lands at its start.

use lsp_types::{Position, Range};
use promptpack_core::error::Location;

/// Byte offset of `position` in `text`.
pub(crate) fn offset(text: &str, position: Position) -> usize {
    let Some(line_start) = line_start(text, position.line as usize) else {
        return text.len();
    };
    let line = line_of(text, line_start);
    let mut units = 0;
    for (i, c) in line.char_indices() {
        if units >= position.character as usize {
            return line_start + i;
        }
        units += c.len_utf16();
        if units > position.character as usize {
            // Inside a surrogate pair: the character's start.
            return line_start + i;
        }
    }
    line_start + line.len()
}

/// The protocol's position of byte `offset` of `text` (clamped to the text
/// and to a character boundary).
pub(crate) fn position(text: &str, offset: usize) -> Position {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count();
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let character: usize = text[line_start..offset].chars().map(char::len_utf16).sum();
    Position::new(as_u32(line), as_u32(character))
}

/// The protocol's range of bytes `start..end` of `text`.
pub(crate) fn range(text: &str, start: usize, end: usize) -> Range {
    Range::new(position(text, start), position(text, end))
}

/// The protocol's range of a diagnostic's location: its line, from its
/// column for its length, within the line. A whole-file location is the
/// file's first character.
pub(crate) fn location_range(location: &Location) -> Range {
    if location.is_whole_file() {
        return Range::new(Position::new(0, 0), Position::new(0, 0));
    }
    let line = as_u32(location.line().saturating_sub(1));
    let text = location.line_text();
    let units =
        |chars: usize| -> u32 { as_u32(text.chars().take(chars).map(char::len_utf16).sum()) };
    let start = location.column().saturating_sub(1);
    Range::new(
        Position::new(line, units(start)),
        Position::new(line, units(start + location.len().max(1))),
    )
}

/// Byte offset where line `line` (0-based) starts, if the text has it.
fn line_start(text: &str, line: usize) -> Option<usize> {
    if line == 0 {
        return Some(0);
    }
    text.match_indices('\n').nth(line - 1).map(|(i, _)| i + 1)
}

/// The line starting at `start`, without its line ending.
fn line_of(text: &str, start: usize) -> &str {
    let rest = &text[start..];
    let line = rest.find('\n').map_or(rest, |end| &rest[..end]);
    line.strip_suffix('\r').unwrap_or(line)
}

/// A count the protocol carries as `u32`, saturated: no text the server
/// accepts is that long, but a count must not wrap.
fn as_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_and_positions_agree_on_astral_characters_and_crlf() {
        let text = "a😀b\r\nsecond\n";
        assert_eq!(position(text, 1), Position::new(0, 1));
        assert_eq!(position(text, 5), Position::new(0, 3));
        assert_eq!(offset(text, Position::new(0, 3)), 5);
        // Inside the surrogate pair: the emoji's start.
        assert_eq!(offset(text, Position::new(0, 2)), 1);
        // Past the end of a line: its end, before the CR.
        assert_eq!(offset(text, Position::new(0, 99)), 6);
        assert_eq!(offset(text, Position::new(1, 2)), 10);
        // Past the last line: the end of the text.
        assert_eq!(offset(text, Position::new(9, 0)), text.len());
        assert_eq!(position(text, 999), Position::new(2, 0));
    }
}

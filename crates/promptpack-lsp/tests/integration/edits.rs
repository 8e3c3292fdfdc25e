//! For every sequence of edits an editor may send, the server answers
//! without failing, and what it shows is what `promptpack check` says of
//! the same text saved.

use crate::support;

use proptest::prelude::*;
use support::{Editor, check_on_disk};

const FILES: [&str; 6] = [
    "templates/tutor/system.md",
    "templates/tutor/user.md",
    "templates/greet/system.md",
    "templates/plain/system.md",
    "snippets/rules.md",
    "snippets/outer.md",
];

/// Pieces that make and break the language: tokens whole and half, blocks,
/// includes, front matter lines, fences, characters of two and four bytes.
const PIECES: [&str; 26] = [
    "{{snippet:outer}}",
    "{{topic}}",
    "{{",
    "}}",
    "{{subject}}",
    "{{name}}",
    "{{ name }}",
    "{{#if level == \"expert\"}}",
    "{{#if subject}}",
    "{{else}}",
    "{{/if}}",
    "{{snippet:rules}}",
    "{{snippet:style#tone}}",
    "{{snippet:style#nope}}",
    "{{snippet:nope}}",
    "---\n",
    "vars:\n",
    "  extra: {kind: flag}\n",
    "descripton: x\n",
    "```\n",
    "\n",
    "é",
    "😀",
    "# Heading\n",
    "x",
    " ",
];

#[derive(Debug, Clone)]
struct Edit {
    file: usize,
    /// Where, as a fraction of the text.
    at: f64,
    /// How many characters to delete from there.
    delete: usize,
    insert: String,
}

fn edit() -> impl Strategy<Value = Edit> {
    (
        0..FILES.len(),
        0.0..=1.0f64,
        0..12usize,
        prop::collection::vec(0..PIECES.len(), 0..3),
    )
        .prop_map(|(file, at, delete, pieces)| Edit {
            file,
            at,
            delete,
            insert: pieces.into_iter().map(|i| PIECES[i]).collect(),
        })
}

/// The protocol's position (line, UTF-16 column) of byte `offset`.
fn position(text: &str, offset: usize) -> (u32, u32) {
    let before = &text[..offset];
    let line = before.matches('\n').count();
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    let column: usize = text[start..offset].chars().map(char::len_utf16).sum();
    (line as u32, column as u32)
}

fn floor_boundary(text: &str, mut offset: usize) -> usize {
    offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn diagnostics_equal_check_on_the_same_text(edits in prop::collection::vec(edit(), 1..10)) {
        let mut editor = Editor::start("tree");
        let mut texts: Vec<String> = FILES
            .iter()
            .map(|f| std::fs::read_to_string(editor.root.join(f)).expect("a fixture file"))
            .collect();
        for (file, text) in FILES.iter().zip(&texts) {
            editor.open_text(file, text);
        }
        for edit in &edits {
            let text = &mut texts[edit.file];
            let start = floor_boundary(text, (text.len() as f64 * edit.at) as usize);
            let end = text[start..].char_indices().nth(edit.delete).map_or(text.len(), |(i, _)| start + i);
            let (from, to) = (position(text, start), position(text, end));
            editor.edit(FILES[edit.file], from, to, &edit.insert);
            text.replace_range(start..end, &edit.insert);
            // Requests at the edit answer, whatever the text is now.
            for method in ["textDocument/hover", "textDocument/completion", "textDocument/definition"] {
                let answer = editor.at(method, FILES[edit.file], from.0, from.1, serde_json::json!({}));
                prop_assert!(answer.is_ok(), "{method}: {answer:?}");
            }
        }
        let shown = editor.shown();
        for (file, text) in FILES.iter().zip(&texts) {
            std::fs::write(editor.root.join(file), text).expect("the buffer saved");
        }
        prop_assert_eq!(shown, check_on_disk(&editor.root));
        // The server checked prompt by prompt, and the parts added up.
        prop_assert!(editor.parts_added_up(), "the parts did not add up to the whole check");
        editor.shutdown();
    }
}

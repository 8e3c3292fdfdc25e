//! The buffers the editor has open: their text as edited, unsaved.

use crate::position::offset;
use lsp_types::{TextDocumentContentChangeEvent, Uri};
use std::collections::HashMap;

/// Open buffers by URI.
#[derive(Debug, Default)]
pub(crate) struct Documents {
    open: HashMap<String, String>,
    /// Counts the changes to the buffers, so that what is made of them
    /// (the tree with the buffers laid over it) is made once per change.
    generation: u64,
}

impl Documents {
    /// Opens (or reopens) a buffer with `text`.
    pub(crate) fn open(&mut self, uri: &Uri, text: String) {
        self.open.insert(uri.as_str().to_string(), text);
        self.generation += 1;
    }

    /// Forgets a buffer: the file on disk speaks for it again.
    pub(crate) fn close(&mut self, uri: &Uri) {
        self.open.remove(uri.as_str());
        self.generation += 1;
    }

    /// Applies the editor's changes in order. A change to a buffer that is
    /// not open is ignored (an editor that sent no `didOpen` has nothing to
    /// edit); a range past the end is clamped to it, and one whose ends are
    /// swapped is read the right way round. Returns whether the buffer is
    /// open.
    pub(crate) fn change(
        &mut self,
        uri: &Uri,
        changes: Vec<TextDocumentContentChangeEvent>,
    ) -> bool {
        let Some(text) = self.open.get_mut(uri.as_str()) else {
            return false;
        };
        self.generation += 1;
        for change in changes {
            match change.range {
                None => *text = change.text,
                Some(range) => {
                    let (a, b) = (offset(text, range.start), offset(text, range.end));
                    text.replace_range(a.min(b)..a.max(b), &change.text);
                }
            }
        }
        true
    }

    /// The text of an open buffer.
    #[cfg(test)]
    pub(crate) fn get(&self, uri: &str) -> Option<&str> {
        self.open.get(uri).map(String::as_str)
    }

    /// Which state of the buffers this is: it changes with every edit.
    pub(crate) fn generation(&self) -> u64 {
        self.generation
    }

    /// Every open buffer: URI and text.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.open
            .iter()
            .map(|(uri, text)| (uri.as_str(), text.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::{Position, Range};
    use std::str::FromStr;

    fn edit(range: ((u32, u32), (u32, u32)), text: &str) -> TextDocumentContentChangeEvent {
        let (a, b) = range;
        TextDocumentContentChangeEvent {
            range: Some(Range::new(Position::new(a.0, a.1), Position::new(b.0, b.1))),
            range_length: None,
            text: text.to_string(),
        }
    }

    #[test]
    fn edits_apply_in_order_and_clamp_past_the_end() {
        let uri = Uri::from_str("file:///p/templates/a/system.md").expect("a URI");
        let mut docs = Documents::default();
        docs.open(&uri, "Hello {{name}}\n".to_string());
        assert!(docs.change(
            &uri,
            vec![edit(((0, 8), (0, 12)), "who"), edit(((7, 0), (9, 9)), "!")]
        ));
        assert_eq!(docs.get(uri.as_str()), Some("Hello {{who}}\n!"));
        // Swapped ends.
        assert!(docs.change(&uri, vec![edit(((0, 5), (0, 0)), "Bye")]));
        assert_eq!(docs.get(uri.as_str()), Some("Bye {{who}}\n!"));
        let other = Uri::from_str("file:///p/x.md").expect("a URI");
        assert!(!docs.change(&other, vec![edit(((0, 0), (0, 0)), "x")]));
    }
}

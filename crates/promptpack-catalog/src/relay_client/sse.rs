//! A server-sent events parser (the `text/event-stream` format of the
//! HTML standard, §9.2.6): bytes in, in chunks of any size, events out.
//! Pure: it reads no socket and keeps no clock, so that every split of a
//! stream into chunks is tested to give the same events.

use crate::{Error, ErrorCode};

/// The most bytes one event (its lines and their data) may hold before the
/// stream is refused: a relay's largest event is a change carrying a few
/// whole versions, far below this; a stream that never ends a line is
/// broken, and is not buffered without bound.
pub const MAX_EVENT_BYTES: usize = 64 * 1024 * 1024;

/// One event of the stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// Its type (`event:`), `message` when it names none.
    pub event: String,
    /// Its `data:` lines, joined by `\n`.
    pub data: String,
    /// The last event id the stream set (`id:`), at this event or before,
    /// as the standard keeps it: what a reconnection sends as
    /// `Last-Event-ID`.
    pub id: Option<String>,
}

/// The parser's state between two chunks.
#[derive(Debug, Clone)]
pub struct SseParser {
    /// The line begun and not yet ended.
    line: Vec<u8>,
    /// The last byte was a CR: an LF right after it ends no second line.
    after_cr: bool,
    /// No line was read yet: a byte order mark at its start is dropped.
    first_line: bool,
    event: String,
    /// The data lines so far, each followed by `\n`.
    data: String,
    /// Whether a `data:` line came since the last event.
    has_data: bool,
    last_id: Option<String>,
    retry: Option<u64>,
    comments: u64,
    /// Bytes held for the event begun: its lines so far and the one begun.
    held: usize,
}

impl Default for SseParser {
    fn default() -> SseParser {
        SseParser::new()
    }
}

impl SseParser {
    /// A parser at the start of a stream.
    pub fn new() -> SseParser {
        SseParser {
            line: Vec::new(),
            after_cr: false,
            first_line: true,
            event: String::new(),
            data: String::new(),
            has_data: false,
            last_id: None,
            retry: None,
            comments: 0,
            held: 0,
        }
    }

    /// Reads `bytes`, the next chunk of the stream, and returns the events
    /// it completes, in order.
    ///
    /// # Errors
    /// `unavailable` when one event grows past [`MAX_EVENT_BYTES`]: the
    /// stream is broken, and its reader should drop it and reconnect.
    pub fn feed(&mut self, bytes: &[u8]) -> Result<Vec<SseEvent>, Error> {
        let mut events = Vec::new();
        for &byte in bytes {
            let after_cr = std::mem::replace(&mut self.after_cr, false);
            match byte {
                b'\n' if after_cr => {}
                b'\n' => self.end_line(&mut events),
                b'\r' => {
                    self.after_cr = true;
                    self.end_line(&mut events);
                }
                _ => {
                    self.held += 1;
                    if self.held > MAX_EVENT_BYTES {
                        return Err(Error::new(
                            ErrorCode::Unavailable,
                            format!(
                                "the relay's event stream sent an event of more than {MAX_EVENT_BYTES} bytes"
                            ),
                        ));
                    }
                    self.line.push(byte);
                }
            }
        }
        Ok(events)
    }

    /// The reconnection time the stream asked for (`retry:`), in
    /// milliseconds, if it did.
    pub fn retry(&self) -> Option<u64> {
        self.retry
    }

    /// How many comment lines (`: ping`) the stream sent: a stream that
    /// sends only those is alive, though nothing changes.
    pub fn comments(&self) -> u64 {
        self.comments
    }

    /// The last event id the stream set, dispatched or not.
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_id.as_deref()
    }

    fn end_line(&mut self, events: &mut Vec<SseEvent>) {
        let bytes = std::mem::take(&mut self.line);
        let mut line = String::from_utf8_lossy(&bytes).into_owned();
        if std::mem::replace(&mut self.first_line, false) && line.starts_with('\u{feff}') {
            line.remove(0);
        }
        if line.is_empty() {
            self.dispatch(events);
            return;
        }
        if line.starts_with(':') {
            self.comments += 1;
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line.as_str(), ""),
        };
        match field {
            "event" => value.clone_into(&mut self.event),
            "data" => {
                self.data.push_str(value);
                self.data.push('\n');
                self.has_data = true;
            }
            // An id with a NUL is ignored, as the standard says.
            "id" if !value.contains('\0') => self.last_id = Some(value.to_string()),
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                self.retry = value.parse().ok();
            }
            _ => {}
        }
    }

    /// An empty line: the event read so far, if it has data.
    fn dispatch(&mut self, events: &mut Vec<SseEvent>) {
        self.held = 0;
        let event = std::mem::take(&mut self.event);
        let mut data = std::mem::take(&mut self.data);
        if !std::mem::replace(&mut self.has_data, false) {
            return;
        }
        data.pop();
        events.push(SseEvent {
            event: if event.is_empty() {
                "message".to_string()
            } else {
                event
            },
            data,
            id: self.last_id.clone(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn event(event: &str, data: &str, id: Option<&str>) -> SseEvent {
        SseEvent {
            event: event.to_string(),
            data: data.to_string(),
            id: id.map(str::to_string),
        }
    }

    #[test]
    fn table() {
        let cases: &[(&str, &[u8], Vec<SseEvent>)] = &[
            ("nothing", b"", vec![]),
            ("no blank line yet", b"data: a", vec![]),
            ("one", b"data: a\n\n", vec![event("message", "a", None)]),
            (
                "typed with id",
                b"event: change\nid: e-1\ndata: {}\n\n",
                vec![event("change", "{}", Some("e-1"))],
            ),
            (
                "multi-line data",
                b"data: a\ndata:b\ndata:  c\n\n",
                vec![event("message", "a\nb\n c", None)],
            ),
            (
                "CRLF",
                b"data: a\r\n\r\n",
                vec![event("message", "a", None)],
            ),
            (
                "CR",
                b"data: a\r\rdata: b\r\r",
                vec![event("message", "a", None), event("message", "b", None)],
            ),
            (
                "comments are no events",
                b": ping\n\n: ping\ndata: a\n\n",
                vec![event("message", "a", None)],
            ),
            ("no data, no event", b"event: change\nid: 3\n\n", vec![]),
            (
                "the id stays for later events",
                b"id: 3\n\ndata: a\n\n",
                vec![event("message", "a", Some("3"))],
            ),
            ("empty data", b"data\n\n", vec![event("message", "", None)]),
            (
                "unknown field",
                b"foo: bar\ndata: a\n\n",
                vec![event("message", "a", None)],
            ),
            (
                "id with a NUL",
                b"id: a\0b\ndata: x\n\n",
                vec![event("message", "x", None)],
            ),
            (
                "a byte order mark",
                b"\xef\xbb\xbfdata: a\n\n",
                vec![event("message", "a", None)],
            ),
            (
                "event type reset after each event",
                b"event: change\ndata: a\n\ndata: b\n\n",
                vec![event("change", "a", None), event("message", "b", None)],
            ),
        ];
        for (name, input, expected) in cases {
            let mut parser = SseParser::new();
            let events = parser.feed(input).expect(name);
            assert_eq!(&events, expected, "{name}");
        }
    }

    #[test]
    fn retry_and_comments() {
        let mut parser = SseParser::new();
        parser
            .feed(b"retry: 1000\n\n: ping\n:\nretry: x\n")
            .expect("parses");
        assert_eq!(parser.retry(), Some(1000));
        assert_eq!(parser.comments(), 2);
    }

    #[test]
    fn an_endless_line_is_refused() {
        let mut parser = SseParser::new();
        let chunk = vec![b'a'; 1024 * 1024];
        let mut failed = None;
        for _ in 0..=MAX_EVENT_BYTES / chunk.len() {
            if let Err(error) = parser.feed(&chunk) {
                failed = Some(error);
                break;
            }
        }
        let error = failed.expect("refused");
        assert_eq!(error.code(), ErrorCode::Unavailable);
    }

    fn stream() -> impl Strategy<Value = Vec<u8>> {
        let line = prop_oneof![
            Just(b"data: a".to_vec()),
            Just(b"data: {\"x\": \"\xc3\xa9\"}".to_vec()),
            Just(b"data".to_vec()),
            Just(b"event: change".to_vec()),
            Just(b"id: 3f-1".to_vec()),
            Just(b": ping".to_vec()),
            Just(b"retry: 1000".to_vec()),
            Just(Vec::new()),
        ];
        let end = prop_oneof![
            Just(b"\n".to_vec()),
            Just(b"\r".to_vec()),
            Just(b"\r\n".to_vec())
        ];
        proptest::collection::vec((line, end), 0..40).prop_map(|lines| {
            lines
                .into_iter()
                .flat_map(|(mut line, end)| {
                    line.extend(end);
                    line
                })
                .collect()
        })
    }

    proptest! {
        #[test]
        fn any_split_gives_the_same_events(
            bytes in stream(),
            cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..12),
        ) {
            let whole = SseParser::new().feed(&bytes).expect("parses");
            let mut at: Vec<usize> = cuts.iter().map(|cut| cut.index(bytes.len() + 1)).collect();
            at.sort_unstable();
            let mut parser = SseParser::new();
            let mut split = Vec::new();
            let mut start = 0;
            for end in at.into_iter().chain([bytes.len()]) {
                split.extend(parser.feed(&bytes[start..end]).expect("parses"));
                start = end;
            }
            prop_assert_eq!(whole, split);
        }
    }
}

//! JSON-RPC over stdio, framed by `Content-Length` headers. A frame whose
//! body is not a message (not UTF-8, not JSON, not JSON-RPC, over
//! [`MAX_MESSAGE_BYTES`]) is answered with an error and skipped: the stream
//! stays in step, and the server goes on. Only a broken header ends it.

use crate::MAX_MESSAGE_BYTES;
use crossbeam_channel::{Receiver, Sender, bounded, unbounded};
use lsp_server::{Connection, ErrorCode, Message, Notification, RequestId, Response};
use lsp_types::notification::{LogMessage, Notification as _};
use lsp_types::{LogMessageParams, MessageType};
use std::io::{self, BufRead, Read, Write};
use std::thread::JoinHandle;

/// The threads that move messages between stdio and the connection.
pub(crate) struct Threads {
    reader: JoinHandle<io::Result<()>>,
    writer: JoinHandle<io::Result<()>>,
}

impl Threads {
    /// Waits for both: the reader ends at the end of input or an `exit`,
    /// the writer when the connection's sender is dropped.
    pub(crate) fn join(self) -> io::Result<()> {
        let reader = self
            .reader
            .join()
            .map_err(|_| io::Error::other("the reader thread failed"))?;
        let writer = self
            .writer
            .join()
            .map_err(|_| io::Error::other("the writer thread failed"))?;
        reader.and(writer)
    }
}

/// A connection over this process's stdin and stdout.
pub(crate) fn stdio() -> io::Result<(Connection, Threads)> {
    let (to_writer, from_server) = bounded::<Message>(0);
    // Unbounded, so that the server sees what waits (an edit behind the
    // one it handles) and checks once after a burst, not once per edit.
    let (to_server, from_reader) = unbounded::<Message>();
    let writer = std::thread::Builder::new()
        .name("lsp-writer".to_string())
        .spawn(move || write_all(&from_server, &mut io::stdout().lock()))?;
    let answers = to_writer.clone();
    let reader = std::thread::Builder::new()
        .name("lsp-reader".to_string())
        .spawn(move || read_all(&mut io::stdin().lock(), &to_server, &answers))?;
    let connection = Connection {
        sender: to_writer,
        receiver: from_reader,
    };
    Ok((connection, Threads { reader, writer }))
}

fn write_all(messages: &Receiver<Message>, out: &mut impl Write) -> io::Result<()> {
    for message in messages {
        message.write(out)?;
    }
    Ok(())
}

/// Reads frames until the end of input or an `exit` notification: each
/// message goes to the server, each frame that is none is answered.
pub(crate) fn read_all(
    input: &mut impl BufRead,
    server: &Sender<Message>,
    answers: &Sender<Message>,
) -> io::Result<()> {
    while let Some(body) = read_frame(input)? {
        match parse(body) {
            Parsed::Message(message) => {
                let exit = matches!(&message, Message::Notification(n) if n.method == "exit");
                if server.send(message).is_err() || exit {
                    break;
                }
            }
            Parsed::Refused(answer) => {
                if answers.send(answer).is_err() {
                    break;
                }
            }
        }
    }
    Ok(())
}

/// One frame's body: `Ok(None)` at the end of input, `Err` for a header
/// that is not one (the stream cannot be followed past it).
fn read_frame(input: &mut impl BufRead) -> io::Result<Option<Result<Vec<u8>, usize>>> {
    let mut length = None;
    let mut headers = 0;
    let mut line = Vec::new();
    loop {
        line.clear();
        // A header line longer than this is no header.
        let read = input.by_ref().take(8 * 1024).read_until(b'\n', &mut line)?;
        if read == 0 {
            return if headers == 0 {
                Ok(None)
            } else {
                Err(broken("the input ended inside a message's headers"))
            };
        }
        let Some(text) = line
            .strip_suffix(b"\r\n")
            .or_else(|| line.strip_suffix(b"\n"))
        else {
            return Err(broken("a header line too long or not ended"));
        };
        if text.is_empty() {
            if headers == 0 {
                // Blank lines between frames are tolerated.
                continue;
            }
            break;
        }
        headers += 1;
        let text = std::str::from_utf8(text).map_err(|_| broken("a header that is not UTF-8"))?;
        let Some((name, value)) = text.split_once(':') else {
            return Err(broken("a header without `:`"));
        };
        if name.trim().eq_ignore_ascii_case("content-length") {
            let value = value
                .trim()
                .parse::<usize>()
                .map_err(|_| broken("a Content-Length that is not a number"))?;
            length = Some(value);
        }
    }
    let Some(length) = length else {
        return Err(broken("a message without Content-Length"));
    };
    if length > MAX_MESSAGE_BYTES {
        let skipped = io::copy(&mut input.by_ref().take(length as u64), &mut io::sink())?;
        if skipped < length as u64 {
            return Err(broken("the input ended inside a message"));
        }
        return Ok(Some(Err(length)));
    }
    let mut body = vec![0; length];
    input.read_exact(&mut body)?;
    Ok(Some(Ok(body)))
}

/// What a frame holds.
enum Parsed {
    /// A message for the server.
    Message(Message),
    /// Not one: the answer to give for it.
    Refused(Message),
}

/// A frame's body as a message, or the answer to give for it.
fn parse(body: Result<Vec<u8>, usize>) -> Parsed {
    let body = match body {
        Ok(body) => body,
        Err(length) => {
            return Parsed::Refused(log(format!(
                "a message of {length} bytes was skipped: the server reads at most {MAX_MESSAGE_BYTES}"
            )));
        }
    };
    let text = match String::from_utf8(body) {
        Ok(text) => text,
        Err(e) => {
            // Its id, if the rest reads, so the sender gets its answer.
            let lossy = String::from_utf8_lossy(e.as_bytes()).into_owned();
            let reason = format!(
                "the message is not UTF-8 (byte {})",
                e.utf8_error().valid_up_to()
            );
            return Parsed::Refused(refusal(&lossy, ErrorCode::ParseError, reason));
        }
    };
    match serde_json::from_str::<Message>(&text) {
        Ok(message) => Parsed::Message(message),
        Err(e) => {
            let code = if serde_json::from_str::<serde_json::Value>(&text).is_ok() {
                ErrorCode::InvalidRequest
            } else {
                ErrorCode::ParseError
            };
            Parsed::Refused(refusal(
                &text,
                code,
                format!("the message is not JSON-RPC: {e}"),
            ))
        }
    }
}

/// An error answer to the request `text` holds, when its id can be read;
/// otherwise a log message (an answer needs an id).
fn refusal(text: &str, code: ErrorCode, reason: String) -> Message {
    let id = serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|v| serde_json::from_value::<RequestId>(v.get("id")?.clone()).ok());
    match id {
        Some(id) => Response::new_err(id, code as i32, reason).into(),
        None => log(reason),
    }
}

fn log(message: String) -> Message {
    let params = LogMessageParams {
        typ: MessageType::ERROR,
        message,
    };
    Notification::new(LogMessage::METHOD.to_string(), params).into()
}

fn broken(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("the editor's stream broke: {what}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(parts: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::new();
        for body in parts {
            out.extend(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
            out.extend(*body);
        }
        out
    }

    #[test]
    fn a_broken_body_is_answered_and_the_stream_goes_on() {
        let input = frames(&[
            b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"x\",\"params\":\"\xff\"}",
            b"not json",
            b"42",
            b"{\"jsonrpc\":\"2.0\",\"method\":\"exit\"}",
        ]);
        let (to_server, server) = crossbeam_channel::unbounded();
        let (to_answers, answers) = crossbeam_channel::unbounded();
        read_all(&mut &input[..], &to_server, &to_answers).expect("the stream reads");
        let answers: Vec<String> = answers
            .try_iter()
            .map(|m| serde_json::to_string(&m).unwrap_or_default())
            .collect();
        assert_eq!(answers.len(), 3, "{answers:?}");
        assert!(
            answers[0].contains("\"id\":7") && answers[0].contains("not UTF-8"),
            "{}",
            answers[0]
        );
        assert!(answers[1].contains("window/logMessage"), "{}", answers[1]);
        assert!(answers[2].contains("not JSON-RPC"), "{}", answers[2]);
        let delivered: Vec<Message> = server.try_iter().collect();
        assert!(matches!(&delivered[..], [Message::Notification(n)] if n.method == "exit"));
    }

    #[test]
    fn an_oversized_frame_is_skipped_without_being_read_into_memory() {
        let mut input = format!("Content-Length: {}\r\n\r\n", MAX_MESSAGE_BYTES + 1).into_bytes();
        input.resize(input.len() + MAX_MESSAGE_BYTES + 1, b' ');
        let (to_server, _server) = crossbeam_channel::unbounded();
        let (to_answers, answers) = crossbeam_channel::unbounded();
        read_all(&mut &input[..], &to_server, &to_answers).expect("the stream reads");
        let answer =
            serde_json::to_string(&answers.try_recv().expect("an answer")).unwrap_or_default();
        assert!(answer.contains("skipped"), "{answer}");
    }

    #[test]
    fn a_broken_header_ends_the_stream_with_an_error() {
        let (to_server, _server) = crossbeam_channel::unbounded();
        let (to_answers, _answers) = crossbeam_channel::unbounded();
        let error = read_all(
            &mut &b"Content-Length: x\r\n\r\n"[..],
            &to_server,
            &to_answers,
        )
        .expect_err("a broken header");
        assert_eq!(error.kind(), io::ErrorKind::InvalidData);
    }
}

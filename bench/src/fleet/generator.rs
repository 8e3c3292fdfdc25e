//! The load generator: many followers of one relay label in this process, each a raw
//! HTTP/1.1 event stream (`GET /relay/v1/labels/{label}/events`) on a tokio TCP socket, as a
//! follower in another language would hold it (docs/relay.md): the response's chunked body
//! decoded by hand, the events split on blank lines, the last event id remembered, and on a
//! stream that ends or stalls, a reconnect with `Last-Event-ID` after the protocol's jittered
//! backoff (up to 1 s, then doubling to 5 s, each wait between half and all of it).
//!
//! Nothing here is timed: each follower reports what it saw, stamped when it saw it, on a
//! channel the section reads ([`Seen`]).

use serde::Deserialize;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::sync::Semaphore;

/// The relay pings every 5 s; three missed pings and the stream is stalled.
const STALL: Duration = Duration::from_secs(15);
/// The backoff of docs/relay.md.
const FIRST_WAIT: Duration = Duration::from_secs(1);
const MOST_WAIT: Duration = Duration::from_secs(5);
/// Connections being opened at once (until the response's headers are in): 10,000 SYNs in
/// the same instant would overflow the relay's accept queue and wait out TCP's 1 s retry,
/// which measures the kernel, not the relay.
const OPENING_AT_ONCE: usize = 256;

/// What one follower saw.
#[derive(Debug)]
pub struct Seen {
    pub follower: usize,
    pub at: Instant,
    /// The epoch of the event's id (`EPOCH-SEQ`).
    pub epoch: String,
    pub snapshot: bool,
    /// The versions the followed prompt's arms name after the event (none: not under the
    /// label). Changes of other prompts are not reported.
    pub versions: Vec<u32>,
}

/// The followers: started at once, stopped on drop.
pub struct Generator {
    runtime: Option<tokio::runtime::Runtime>,
    shared: Arc<Shared>,
}

struct Shared {
    addr: SocketAddr,
    request_path: String,
    token: String,
    prompt: String,
    stop: AtomicBool,
    opening: Semaphore,
    /// Streams that ended or failed, and the last failure's text (for a report that says
    /// why followers never caught up).
    reconnects: AtomicU64,
    last_error: Mutex<Option<String>>,
}

impl Generator {
    /// `followers` followers of `label` on the relay at `addr`, each reporting to `seen`
    /// what it sees of `prompt`. The runtime has two worker threads: the machine's cores are
    /// the relay's too.
    pub fn start(
        addr: SocketAddr,
        label: &str,
        prompt: &str,
        token: &str,
        followers: usize,
        seen: &Sender<Seen>,
    ) -> Result<Generator, String> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| format!("a tokio runtime: {e}"))?;
        let shared = Arc::new(Shared {
            addr,
            request_path: format!("/relay/v1/labels/{label}/events"),
            token: token.to_string(),
            prompt: prompt.to_string(),
            stop: AtomicBool::new(false),
            opening: Semaphore::new(OPENING_AT_ONCE),
            reconnects: AtomicU64::new(0),
            last_error: Mutex::new(None),
        });
        for follower in 0..followers {
            let shared = shared.clone();
            let seen = seen.clone();
            runtime.spawn(follow(follower, shared, seen));
        }
        Ok(Generator {
            runtime: Some(runtime),
            shared,
        })
    }

    /// Streams that ended or failed so far.
    pub fn reconnects(&self) -> u64 {
        self.shared.reconnects.load(Ordering::Relaxed)
    }

    /// The last reason a stream ended or failed.
    pub fn last_error(&self) -> Option<String> {
        self.shared.last_error.lock().unwrap().clone()
    }
}

impl Drop for Generator {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        if let Some(runtime) = self.runtime.take() {
            // Closes every socket without waiting for the tasks.
            runtime.shutdown_background();
        }
    }
}

/// A small xorshift generator per follower: the jitter needs spread, not quality.
struct Jitter(u64);

impl Jitter {
    fn new(seed: usize) -> Jitter {
        Jitter((seed as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// A number in [0, 1).
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }

    /// The wait before reconnect attempt `attempt` (0 for the first after a healthy stream).
    fn wait(&mut self, attempt: u32) -> Duration {
        let ceiling = FIRST_WAIT
            .saturating_mul(1 << attempt.min(8))
            .min(MOST_WAIT);
        if attempt == 0 {
            ceiling.mul_f64(self.unit())
        } else {
            ceiling.mul_f64(0.5 + self.unit() / 2.0)
        }
    }
}

async fn follow(follower: usize, shared: Arc<Shared>, seen: Sender<Seen>) {
    let mut last_id: Option<String> = None;
    let mut jitter = Jitter::new(follower + 1);
    let mut attempt = 0;
    while !shared.stop.load(Ordering::Relaxed) {
        let mut heard = false;
        let outcome = stream(follower, &shared, &seen, &mut last_id, &mut heard).await;
        if shared.stop.load(Ordering::Relaxed) {
            return;
        }
        shared.reconnects.fetch_add(1, Ordering::Relaxed);
        let why = match outcome {
            Ok(()) => "the stream ended".to_string(),
            Err(e) => e,
        };
        *shared.last_error.lock().unwrap() = Some(format!("follower {follower}: {why}"));
        if heard {
            attempt = 0;
        }
        tokio::time::sleep(jitter.wait(attempt)).await;
        attempt += 1;
    }
}

#[derive(Deserialize)]
struct Data {
    #[serde(default)]
    prompt: Option<String>,
    #[serde(default)]
    arms: Vec<Arm>,
    #[serde(default)]
    prompts: Vec<PromptArms>,
}

#[derive(Deserialize)]
struct PromptArms {
    prompt: String,
    arms: Vec<Arm>,
}

#[derive(Deserialize)]
struct Arm {
    version: u32,
}

/// One connection, until it ends (`Ok`) or fails. `heard` is set once an event arrived.
async fn stream(
    follower: usize,
    shared: &Shared,
    seen: &Sender<Seen>,
    last_id: &mut Option<String>,
    heard: &mut bool,
) -> Result<(), String> {
    let permit = shared.opening.acquire().await.map_err(|e| e.to_string())?;
    let socket = within(TcpStream::connect(shared.addr))
        .await?
        .map_err(|e| format!("connect: {e}"))?;
    socket.set_nodelay(true).map_err(|e| e.to_string())?;
    let mut socket = BufReader::with_capacity(4096, socket);
    let mut request = format!(
        "GET {} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\nAccept: text/event-stream\r\n",
        shared.request_path, shared.addr, shared.token
    );
    if let Some(id) = last_id {
        request.push_str(&format!("Last-Event-ID: {id}\r\n"));
    }
    request.push_str("\r\n");
    within(socket.get_mut().write_all(request.as_bytes()))
        .await?
        .map_err(|e| format!("request: {e}"))?;

    // The response's head.
    let mut line = String::new();
    within(socket.read_line(&mut line))
        .await?
        .map_err(|e| format!("status line: {e}"))?;
    let status = line.split_whitespace().nth(1).unwrap_or("").to_string();
    let mut chunked = false;
    loop {
        line.clear();
        let n = within(socket.read_line(&mut line))
            .await?
            .map_err(|e| format!("headers: {e}"))?;
        if n == 0 {
            return Err("the relay closed the connection in the headers".into());
        }
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.eq_ignore_ascii_case("transfer-encoding")
            && value.trim().eq_ignore_ascii_case("chunked")
        {
            chunked = true;
        }
    }
    drop(permit);
    if status != "200" {
        let mut body = vec![0; 512];
        let n = within(socket.read(&mut body)).await?.unwrap_or(0);
        return Err(format!(
            "HTTP {status}: {}",
            String::from_utf8_lossy(&body[..n]).trim()
        ));
    }

    let mut events = EventSplitter::default();
    let mut chunk = Vec::new();
    loop {
        // The next piece of the body: a chunk, or what a read gives without chunking.
        chunk.clear();
        if chunked {
            line.clear();
            let n = within(socket.read_line(&mut line))
                .await?
                .map_err(|e| format!("chunk size: {e}"))?;
            if n == 0 {
                return Ok(());
            }
            let size_text = line.trim().split(';').next().unwrap_or("");
            let size = usize::from_str_radix(size_text, 16)
                .map_err(|_| format!("bad chunk size {size_text:?}"))?;
            if size == 0 {
                return Ok(());
            }
            chunk.resize(size + 2, 0);
            within(socket.read_exact(&mut chunk))
                .await?
                .map_err(|e| format!("chunk: {e}"))?;
            chunk.truncate(size);
        } else {
            chunk.resize(4096, 0);
            let n = within(socket.read(&mut chunk))
                .await?
                .map_err(|e| format!("body: {e}"))?;
            if n == 0 {
                return Ok(());
            }
            chunk.truncate(n);
        }
        for event in events.feed(&chunk) {
            let at = Instant::now();
            *heard = true;
            if let Some(id) = &event.id {
                *last_id = Some(id.clone());
            }
            let snapshot = match event.name.as_str() {
                "snapshot" => true,
                "change" => false,
                _ => continue,
            };
            let data: Data = serde_json::from_str(&event.data)
                .map_err(|e| format!("{} event: {e}", event.name))?;
            let versions: Vec<u32> = if snapshot {
                data.prompts
                    .iter()
                    .find(|p| p.prompt == shared.prompt)
                    .map(|p| p.arms.iter().map(|a| a.version).collect())
                    .unwrap_or_default()
            } else if data.prompt.as_deref() == Some(shared.prompt.as_str()) {
                data.arms.iter().map(|a| a.version).collect()
            } else {
                continue;
            };
            let epoch = event
                .id
                .as_deref()
                .and_then(|id| id.rsplit_once('-'))
                .map(|(epoch, _)| epoch.to_string())
                .unwrap_or_default();
            let _ = seen.send(Seen {
                follower,
                at,
                epoch,
                snapshot,
                versions,
            });
        }
    }
}

/// `future`, or an error after [`STALL`] (no event, ping or header in that time).
async fn within<F: Future>(future: F) -> Result<F::Output, String> {
    tokio::time::timeout(STALL, future)
        .await
        .map_err(|_| "nothing heard for 15 s: stalled".to_string())
}

#[derive(Debug, Default, PartialEq)]
struct Event {
    name: String,
    id: Option<String>,
    data: String,
}

/// Splits a `text/event-stream` body, fed in pieces of any size, into events.
#[derive(Default)]
struct EventSplitter {
    pending: Vec<u8>,
    name: String,
    id: Option<String>,
    data: Vec<String>,
}

impl EventSplitter {
    fn feed(&mut self, bytes: &[u8]) -> Vec<Event> {
        self.pending.extend_from_slice(bytes);
        let mut events = Vec::new();
        let mut start = 0;
        while let Some(end) = self.pending[start..].iter().position(|&b| b == b'\n') {
            let line = &self.pending[start..start + end];
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let line = String::from_utf8_lossy(line).into_owned();
            start += end + 1;
            if line.is_empty() {
                if !self.data.is_empty() {
                    events.push(Event {
                        name: std::mem::take(&mut self.name),
                        id: self.id.clone(),
                        data: std::mem::take(&mut self.data).join("\n"),
                    });
                }
                self.name.clear();
                continue;
            }
            if line.starts_with(':') {
                continue;
            }
            let (field, value) = line.split_once(':').unwrap_or((&line, ""));
            let value = value.strip_prefix(' ').unwrap_or(value);
            match field {
                "event" => self.name = value.to_string(),
                "id" => self.id = Some(value.to_string()),
                "data" => self.data.push(value.to_string()),
                _ => {}
            }
        }
        self.pending.drain(..start);
        events
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_split_across_pieces() {
        let body = "retry: 1000\n\nevent: snapshot\nid: e1-1\ndata: {\"a\":1}\n\n: ping\n\nevent: change\nid: e1-2\ndata: x\ndata: y\n\n";
        let mut splitter = EventSplitter::default();
        let mut events = Vec::new();
        for piece in body.as_bytes().chunks(7) {
            events.extend(splitter.feed(piece));
        }
        assert_eq!(
            events,
            [
                Event {
                    name: "snapshot".into(),
                    id: Some("e1-1".into()),
                    data: "{\"a\":1}".into()
                },
                Event {
                    name: "change".into(),
                    id: Some("e1-2".into()),
                    data: "x\ny".into()
                },
            ]
        );
    }

    #[test]
    fn waits_double_to_five_seconds_within_half_and_all() {
        let mut jitter = Jitter::new(7);
        for _ in 0..100 {
            assert!(jitter.wait(0) <= FIRST_WAIT);
            let second = jitter.wait(1);
            assert!(second >= Duration::from_secs(1) && second <= Duration::from_secs(2));
            let late = jitter.wait(6);
            assert!(late >= Duration::from_millis(2500) && late <= MOST_WAIT);
        }
    }
}

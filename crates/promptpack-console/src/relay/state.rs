//! What a relay holds in memory and every stream shares: the labels it
//! follows (prompt → arms), the versions it has read (each serialized
//! once), the log of its last events and the broadcast that carries each
//! new one to every stream.
//!
//! This is the one interface through which an upstream hands the relay
//! what it read ([`RelayState::update`], [`RelayState::cache_version`]):
//! the catalog's thread does today, a client of another relay would
//! tomorrow. Every change is applied, logged and broadcast under one lock,
//! so a stream that subscribes under it misses nothing and sees nothing
//! twice.

use axum::body::Bytes;
use promptpack_catalog::relay::{
    CHANGE_EVENT, LabelledArms, SNAPSHOT_EVENT, Snapshot, WireArm, WireVersion,
};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::broadcast;

/// How many events a relay keeps for followers that resume: its last
/// 1,024 (docs/relay.md).
pub(crate) const EVENT_LOG: usize = 1024;

/// How many labels a relay follows at most: each is read at every change
/// of the catalog, and a client may name any.
pub(crate) const MAX_LABELS: usize = 10_000;

/// A version as read once and kept: its content hash (for the arms that
/// name it) and its JSON ([`WireVersion`]), written once and shared by
/// every change and answer that carries it.
#[derive(Debug)]
pub(crate) struct CachedVersion {
    pub(crate) content_hash: String,
    pub(crate) json: Arc<str>,
}

impl CachedVersion {
    /// `wire`, serialized.
    pub(crate) fn new(wire: &WireVersion) -> CachedVersion {
        // A WireVersion is plain data (strings, numbers, maps with string
        // keys): serializing it cannot fail.
        let json = serde_json::to_string(wire).unwrap_or_else(|_| "null".to_string());
        CachedVersion {
            content_hash: wire.version.content_hash.clone(),
            json: Arc::from(json),
        }
    }
}

/// One prompt of a label as an upstream read it: its arms (none: the
/// label was taken away, or the prompt deleted) and the version of each.
#[derive(Debug)]
pub(crate) struct PromptArms {
    pub(crate) prompt: String,
    pub(crate) arms: Vec<WireArm>,
    pub(crate) versions: Vec<Arc<CachedVersion>>,
    /// A version it names could not be read this time: the prompt is left
    /// as it was, and read again at the next poll.
    pub(crate) unreadable: bool,
}

/// What a read covers: the whole label (a prompt missing has lost it) or
/// one prompt (a notification named it).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Scope<'a> {
    Whole,
    Prompt(&'a str),
}

/// An event of the log: a change of one prompt of one label, its
/// server-sent frame written once.
#[derive(Debug)]
pub(crate) struct Event {
    pub(crate) seq: u64,
    pub(crate) label: Arc<str>,
    pub(crate) frame: Bytes,
}

/// A label followed.
#[derive(Debug, Default)]
struct LabelFeed {
    /// Its prompts and their arms, by id.
    prompts: BTreeMap<String, Vec<WireArm>>,
    /// The sequence number it was followed at: an event id before it
    /// cannot be resumed on this label.
    followed_at: u64,
    /// The sequence number of its last event (`followed_at` before one):
    /// its snapshot's id and ETag.
    last_seq: u64,
    /// The newest of its events dropped from the log: an id before it
    /// cannot be resumed.
    evicted_upto: u64,
    /// Its snapshot at `last_seq`, written once for every reader: the
    /// JSON, and the server-sent frame that carries it (ten thousand
    /// followers reconnecting share one).
    snapshot: Option<CachedSnapshot>,
}

#[derive(Debug)]
struct CachedSnapshot {
    seq: u64,
    json: Arc<str>,
    frame: Bytes,
}

struct Inner {
    seq: u64,
    log: VecDeque<Arc<Event>>,
    labels: HashMap<String, LabelFeed>,
}

/// The relay's memory.
pub(crate) struct RelayState {
    epoch: String,
    inner: Mutex<Inner>,
    versions: Mutex<HashMap<(String, u32), Arc<CachedVersion>>>,
    events: broadcast::Sender<Arc<Event>>,
}

/// How a stream starts.
pub(crate) struct Opened {
    /// The first frames: the changes after the id it resumes from, or a
    /// snapshot.
    pub(crate) first: Vec<Bytes>,
    /// Every later event (of every label: the stream keeps its own).
    pub(crate) events: broadcast::Receiver<Arc<Event>>,
}

impl RelayState {
    /// An empty relay with a new random epoch.
    pub(crate) fn new() -> RelayState {
        let mut bytes = [0u8; 4];
        // Without randomness two runs could share an epoch and a follower
        // resume on events it never saw; the clock's nanoseconds are the
        // fallback then, different across restarts.
        if getrandom::fill(&mut bytes).is_err() {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos());
            bytes = nanos.to_le_bytes();
        }
        let epoch = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let (events, _) = broadcast::channel(EVENT_LOG);
        RelayState {
            epoch,
            inner: Mutex::new(Inner {
                seq: 0,
                log: VecDeque::with_capacity(EVENT_LOG),
                labels: HashMap::new(),
            }),
            versions: Mutex::new(HashMap::new()),
            events,
        }
    }

    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn id(&self, seq: u64) -> String {
        format!("{}-{seq}", self.epoch)
    }

    /// Whether `label` is followed already.
    pub(crate) fn is_followed(&self, label: &str) -> bool {
        self.inner().labels.contains_key(label)
    }

    /// How many labels are followed.
    pub(crate) fn followed_count(&self) -> usize {
        self.inner().labels.len()
    }

    /// Every label followed.
    pub(crate) fn followed(&self) -> Vec<String> {
        self.inner().labels.keys().cloned().collect()
    }

    /// The version kept for `prompt` `version`, if read already.
    pub(crate) fn version(&self, prompt: &str, version: u32) -> Option<Arc<CachedVersion>> {
        self.versions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&(prompt.to_string(), version))
            .cloned()
    }

    /// Keeps `wire` (a version never changes: kept until the upstream is
    /// reconnected), giving what is kept.
    pub(crate) fn cache_version(&self, wire: &WireVersion) -> Arc<CachedVersion> {
        let cached = Arc::new(CachedVersion::new(wire));
        let key = (wire.version.prompt_id.clone(), wire.version.version);
        self.versions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key, Arc::clone(&cached));
        cached
    }

    /// Forgets every version read: after a reconnect the upstream may be
    /// another store (a backup restored), with other text under a number.
    pub(crate) fn clear_versions(&self) {
        self.versions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    /// Applies what an upstream read of `label` (`scope`: all of it, or
    /// one prompt): a label not followed yet is followed from now on, with
    /// no event; for one followed, a `change` event for each prompt whose
    /// arms differ, in the log and to every stream.
    pub(crate) fn update(&self, label: &str, scope: Scope<'_>, read: Vec<PromptArms>) {
        let mut inner = self.inner();
        let seq_now = inner.seq;
        let Some(feed) = inner.labels.get_mut(label) else {
            let prompts = read
                .into_iter()
                .filter(|p| !p.arms.is_empty() && !p.unreadable)
                .map(|p| (p.prompt, p.arms))
                .collect();
            inner.labels.insert(
                label.to_string(),
                LabelFeed {
                    prompts,
                    followed_at: seq_now,
                    last_seq: seq_now,
                    ..LabelFeed::default()
                },
            );
            return;
        };
        let mut changes: Vec<PromptArms> = Vec::new();
        if matches!(scope, Scope::Whole) {
            for prompt in feed.prompts.keys() {
                if !read.iter().any(|p| &p.prompt == prompt) {
                    changes.push(PromptArms {
                        prompt: prompt.clone(),
                        arms: Vec::new(),
                        versions: Vec::new(),
                        unreadable: false,
                    });
                }
            }
        }
        if let Scope::Prompt(id) = scope
            && !read.iter().any(|p| p.prompt == id)
            && feed.prompts.contains_key(id)
        {
            changes.push(PromptArms {
                prompt: id.to_string(),
                arms: Vec::new(),
                versions: Vec::new(),
                unreadable: false,
            });
        }
        for prompt in read {
            if prompt.unreadable {
                continue;
            }
            let before = feed.prompts.get(&prompt.prompt);
            let same = match before {
                Some(arms) => *arms == prompt.arms,
                None => prompt.arms.is_empty(),
            };
            if !same {
                changes.push(prompt);
            }
        }
        if changes.is_empty() {
            return;
        }
        let label: Arc<str> = Arc::from(label);
        let mut events = Vec::with_capacity(changes.len());
        for change in changes {
            if change.arms.is_empty() {
                feed.prompts.remove(&change.prompt);
            } else {
                feed.prompts
                    .insert(change.prompt.clone(), change.arms.clone());
            }
            events.push(change);
        }
        let mut seq = seq_now;
        let mut frames = Vec::with_capacity(events.len());
        for change in events {
            seq += 1;
            frames.push(Arc::new(Event {
                seq,
                label: Arc::clone(&label),
                frame: frame(CHANGE_EVENT, &self.id(seq), &change_json(&change)),
            }));
        }
        feed.last_seq = seq;
        feed.snapshot = None;
        inner.seq = seq;
        for event in frames {
            if inner.log.len() == EVENT_LOG
                && let Some(old) = inner.log.pop_front()
                && let Some(feed) = inner.labels.get_mut(&*old.label)
            {
                feed.evicted_upto = old.seq;
            }
            inner.log.push_back(Arc::clone(&event));
            // No receiver is no error: no stream is open.
            let _ = self.events.send(event);
        }
    }

    /// `label`'s snapshot JSON and its ETag (its event id), `None` for a
    /// label not followed.
    pub(crate) fn snapshot(&self, label: &str) -> Option<(String, Arc<str>)> {
        let mut inner = self.inner();
        let epoch = self.epoch.clone();
        let feed = inner.labels.get_mut(label)?;
        let (id, cached) = snapshot_of(&epoch, label, feed);
        Some((id, Arc::clone(&cached.json)))
    }

    /// Opens a stream of `label` resuming after event `last` when the
    /// relay still has every event of the label after it, else starting
    /// with a snapshot; `None` for a label not followed.
    pub(crate) fn open(&self, label: &str, last: Option<&str>) -> Option<Opened> {
        let mut inner = self.inner();
        let events = self.events.subscribe();
        let seq_now = inner.seq;
        let epoch = self.epoch.clone();
        let feed = inner.labels.get_mut(label)?;
        let resumed = last
            .and_then(|id| id.split_once('-'))
            .filter(|(epoch, _)| *epoch == self.epoch)
            .and_then(|(_, seq)| seq.parse::<u64>().ok())
            .filter(|&seq| seq >= feed.followed_at && seq >= feed.evicted_upto && seq <= seq_now);
        let first = match resumed {
            Some(after) => inner
                .log
                .iter()
                .filter(|event| event.seq > after && &*event.label == label)
                .map(|event| event.frame.clone())
                .collect(),
            None => vec![snapshot_of(&epoch, label, feed).1.frame.clone()],
        };
        Some(Opened { first, events })
    }
}

/// The snapshot of `feed` and its id (written once per event of the
/// label).
fn snapshot_of<'a>(
    epoch: &str,
    label: &str,
    feed: &'a mut LabelFeed,
) -> (String, &'a CachedSnapshot) {
    let id = format!("{epoch}-{}", feed.last_seq);
    let cached = match feed.snapshot.take() {
        Some(cached) if cached.seq == feed.last_seq => cached,
        _ => {
            let snapshot = Snapshot {
                label: label.to_string(),
                event_id: id.clone(),
                prompts: feed
                    .prompts
                    .iter()
                    .map(|(prompt, arms)| LabelledArms {
                        prompt: prompt.clone(),
                        arms: arms.clone(),
                    })
                    .collect(),
            };
            // Plain data: serializing cannot fail.
            let json = serde_json::to_string(&snapshot).unwrap_or_default();
            CachedSnapshot {
                seq: feed.last_seq,
                frame: frame(SNAPSHOT_EVENT, &id, &json),
                json: Arc::from(json),
            }
        }
    };
    (id, feed.snapshot.insert(cached))
}

/// A [`Change`](promptpack_catalog::relay::Change)'s JSON, the versions'
/// JSON spliced in as kept rather than serialized again.
fn change_json(change: &PromptArms) -> String {
    let prompt = serde_json::to_string(&change.prompt).unwrap_or_default();
    let arms = serde_json::to_string(&change.arms).unwrap_or_default();
    let mut json = format!("{{\"prompt\":{prompt},\"arms\":{arms},\"versions\":[");
    for (i, version) in change.versions.iter().enumerate() {
        if i > 0 {
            json.push(',');
        }
        json.push_str(&version.json);
    }
    json.push_str("]}");
    json
}

/// One server-sent event: its name, id and one line of data (JSON has no
/// raw newline).
pub(crate) fn frame(event: &str, id: &str, data: &str) -> Bytes {
    Bytes::from(format!("event: {event}\nid: {id}\ndata: {data}\n\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arms(prompt: &str, version: u32) -> PromptArms {
        PromptArms {
            prompt: prompt.to_string(),
            arms: vec![WireArm {
                version,
                weight: 1,
                content_hash: format!("h{version}"),
            }],
            versions: Vec::new(),
            unreadable: false,
        }
    }

    /// The kinds of the frames a stream opened after `last` starts with.
    fn first(state: &RelayState, label: &str, last: Option<&str>) -> Vec<String> {
        let opened = state.open(label, last).expect("followed");
        opened
            .first
            .iter()
            .map(|frame| {
                let text = String::from_utf8_lossy(frame);
                let kind = text.lines().next().unwrap_or("").to_string();
                let id = text.lines().nth(1).unwrap_or("").to_string();
                format!("{kind} {id}")
            })
            .collect()
    }

    #[test]
    fn resume_or_snapshot() {
        let state = RelayState::new();
        state.update("production", Scope::Whole, vec![arms("greet", 1)]);
        let (start, _) = state.snapshot("production").expect("followed");
        state.update("production", Scope::Whole, vec![arms("greet", 2)]);
        let (after_one, _) = state.snapshot("production").expect("followed");
        state.update("production", Scope::Whole, vec![arms("greet", 3)]);
        let epoch = state.epoch.clone();
        let cases: [(Option<String>, Vec<String>); 7] = [
            (
                Some(start.clone()),
                vec![
                    format!("event: change id: {epoch}-1"),
                    format!("event: change id: {epoch}-2"),
                ],
            ),
            (
                Some(after_one.clone()),
                vec![format!("event: change id: {epoch}-2")],
            ),
            (Some(format!("{epoch}-2")), Vec::new()),
            (None, vec![format!("event: snapshot id: {epoch}-2")]),
            (
                Some("0000000g-1".to_string()),
                vec![format!("event: snapshot id: {epoch}-2")],
            ),
            (
                Some(format!("{epoch}-3")),
                vec![format!("event: snapshot id: {epoch}-2")],
            ),
            (
                Some("garbage".to_string()),
                vec![format!("event: snapshot id: {epoch}-2")],
            ),
        ];
        for (last, expected) in cases {
            assert_eq!(
                first(&state, "production", last.as_deref()),
                expected,
                "{last:?}"
            );
        }
        assert!(state.open("staging", None).is_none());
    }

    #[test]
    fn a_label_whose_events_left_the_log_gets_a_snapshot() {
        let state = RelayState::new();
        state.update("busy", Scope::Whole, vec![arms("a", 1)]);
        state.update("quiet", Scope::Whole, vec![arms("b", 1)]);
        let (busy_start, _) = state.snapshot("busy").expect("followed");
        let (quiet_start, _) = state.snapshot("quiet").expect("followed");
        for version in 2..(EVENT_LOG as u32 + 10) {
            state.update("busy", Scope::Whole, vec![arms("a", version)]);
        }
        // The busy label lost events after its id; the quiet one none.
        let busy = first(&state, "busy", Some(&busy_start));
        assert_eq!(busy.len(), 1);
        assert!(busy[0].starts_with("event: snapshot"), "{busy:?}");
        assert!(first(&state, "quiet", Some(&quiet_start)).is_empty());
    }

    #[test]
    fn what_a_read_changes() {
        let state = RelayState::new();
        state.update(
            "production",
            Scope::Whole,
            vec![arms("a", 1), arms("b", 1), arms("c", 1)],
        );
        let mut events = state.open("production", None).expect("followed").events;
        // The same read: nothing. One prompt read and gone: its removal.
        state.update(
            "production",
            Scope::Whole,
            vec![arms("a", 1), arms("b", 1), arms("c", 1)],
        );
        state.update("production", Scope::Prompt("b"), Vec::new());
        let removed = events.try_recv().expect("an event");
        let text = String::from_utf8_lossy(&removed.frame).into_owned();
        assert!(
            text.contains(r#"data: {"prompt":"b","arms":[],"versions":[]}"#),
            "{text}"
        );
        // A prompt whose version could not be read is left as it was; one
        // missing from a whole read is removed.
        let mut unreadable = arms("a", 2);
        unreadable.unreadable = true;
        state.update("production", Scope::Whole, vec![unreadable]);
        let gone = events.try_recv().expect("an event");
        assert!(String::from_utf8_lossy(&gone.frame).contains(r#""prompt":"c","arms":[]"#));
        assert!(events.try_recv().is_err(), "a was changed");
        let (_, snapshot) = state.snapshot("production").expect("followed");
        let snapshot: Snapshot = serde_json::from_str(&snapshot).expect("a snapshot");
        assert_eq!(snapshot.prompts.len(), 1);
        assert_eq!(snapshot.prompts[0].prompt, "a");
        assert_eq!(snapshot.prompts[0].arms[0].version, 1);
    }
}

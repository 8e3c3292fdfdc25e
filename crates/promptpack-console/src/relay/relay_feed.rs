//! A relay that follows another relay: the same commands as
//! `catalog_feed` answered over HTTP (`promptpack_catalog::relay_client`)
//! instead of from a catalog, so that relays chain (a region's relay
//! follows the one beside the catalog) and still hold no database
//! connection.
//!
//! One thread takes the routes' commands: versions, earlier versions and
//! build registrations are asked of the upstream with the relay's own
//! token, a follower's token is checked by asking the upstream who it
//! names (`GET /me`, remembered as the catalog's answer is). Each label
//! followed has a thread of its own reading the upstream's stream of that
//! label; it resumes from the last event it applied, so a cut or a
//! restart upstream costs a resync (a snapshot, differences sent on as
//! changes), never a change missed.

use super::auth::AuthCache;
use super::catalog_feed::{Command, FeedThreads, spawn};
use super::state::{CachedVersion, MAX_LABELS, PromptArms, RelayState, Scope};
use promptpack_catalog::relay::{LabelledArms, WireVersion};
use promptpack_catalog::relay_client::{BlockingRelayClient, StreamItem};
use promptpack_catalog::{Error, ErrorCode, Role, Timeouts, Timestamp, User, token_hash};
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// The first wait before reading a lost stream again; it doubles up to
/// [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(100);
/// The longest wait between two attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// How long one wait for the upstream's stream lasts before its thread
/// looks whether the relay stopped: the bound on how long stopping takes.
const SLICE: Duration = Duration::from_millis(200);
/// An upstream stream silent (not even a ping) this many of its
/// heartbeats is stalled: read it again.
const STALL_HEARTBEATS: u32 = 3;

/// How the upstream relay is followed.
pub(crate) struct RelayFeedSettings {
    pub(crate) url: String,
    pub(crate) token: String,
    pub(crate) timeouts: Timeouts,
    /// The upstream's heartbeat, as this relay's own: a stream silent for
    /// three of them is stalled.
    pub(crate) heartbeat: Duration,
}

/// Starts the command thread (after checking that the upstream answers
/// and takes the token, so that a relay that cannot follow fails to
/// start).
pub(crate) fn start(
    settings: RelayFeedSettings,
    state: Arc<RelayState>,
    auth: Arc<AuthCache>,
) -> Result<FeedThreads, Error> {
    let client = BlockingRelayClient::new(&settings.url, &settings.token, settings.timeouts)?;
    client.me()?;
    let (commands, receiver) = std::sync::mpsc::channel();
    let stop = Arc::new(AtomicBool::new(false));
    let feed = RelayFeed {
        settings: Arc::new(settings),
        client,
        state,
        auth,
        followed: Arc::new(Mutex::new(HashSet::new())),
        stop: Arc::clone(&stop),
        commands: receiver,
    };
    let thread = spawn("promptpack-relay-upstream", move || feed.run())?;
    Ok(FeedThreads::from_parts(commands, stop, vec![thread]))
}

/// The command thread.
struct RelayFeed {
    settings: Arc<RelayFeedSettings>,
    client: BlockingRelayClient,
    state: Arc<RelayState>,
    auth: Arc<AuthCache>,
    /// The labels a thread reads the upstream's stream of.
    followed: Arc<Mutex<HashSet<String>>>,
    stop: Arc<AtomicBool>,
    commands: Receiver<Command>,
}

impl RelayFeed {
    fn run(self) {
        loop {
            match self.commands.recv_timeout(SLICE) {
                Ok(Command::Stop) | Err(RecvTimeoutError::Disconnected) => return,
                Ok(command) => self.handle(command),
                Err(RecvTimeoutError::Timeout) => {}
            }
            if self.stop.load(Ordering::SeqCst) {
                return;
            }
        }
    }

    fn handle(&self, command: Command) {
        match command {
            Command::Follow { label, reply } => self.follow(label, reply),
            Command::Version {
                prompt,
                version,
                reply,
            } => {
                let answer = match self.state.version(&prompt, version) {
                    Some(cached) => Ok(cached),
                    None => self
                        .client
                        .version(&prompt, version)
                        .map(|wire| self.state.cache_version(&wire)),
                };
                let _ = reply.send(answer);
            }
            Command::Earlier {
                prompt,
                label,
                reply,
            } => {
                let answer = self
                    .client
                    .earlier(&label, &prompt)
                    .map(|earlier| earlier.versions);
                let _ = reply.send(answer);
            }
            Command::Register { build, reply } => {
                let _ = reply.send(self.client.register(&build.into()));
            }
            Command::Unregister { build, reply } => {
                let _ = reply.send(self.client.unregister(&build.into()));
            }
            Command::Authenticate { token, reply } => {
                let _ = reply.send(self.authenticate(&token));
            }
            // A catalog's notifications: never sent to this feed.
            Command::Notified(_) | Command::Resync | Command::Stop => {}
        }
    }

    /// The user `token` names, as the upstream says; `None` for a token
    /// it refuses.
    fn authenticate(&self, token: &str) -> Result<Option<User>, Error> {
        let hash = token_hash(token);
        if let Some(user) = self.auth.get(&hash) {
            return Ok(user);
        }
        let asked = BlockingRelayClient::new(&self.settings.url, token, self.settings.timeouts)
            .and_then(|client| client.me());
        let user = match asked {
            Ok(user) => Some(User {
                role: user.role.parse::<Role>().unwrap_or(Role::Viewer),
                name: user.name,
                // Not said by the upstream, and not shown by a relay.
                created_by: String::new(),
                created_at: Timestamp(0),
            }),
            Err(error) if refused(&error) => None,
            Err(error) => return Err(error),
        };
        self.auth.put(&hash, user.clone());
        Ok(user)
    }

    /// Starts reading the upstream's stream of `label` on a thread of its
    /// own; `reply` is answered once its first snapshot is applied (or
    /// the first attempt failed: the label is then not followed).
    fn follow(&self, label: String, reply: oneshot::Sender<Result<(), Error>>) {
        let mut followed = self.followed.lock().unwrap_or_else(PoisonError::into_inner);
        if followed.contains(&label) || self.state.is_followed(&label) {
            drop(followed);
            let _ = reply.send(Ok(()));
            return;
        }
        if followed.len() >= MAX_LABELS {
            let _ = reply.send(Err(Error::new(
                ErrorCode::Unavailable,
                format!("the relay follows {MAX_LABELS} labels already"),
            )));
            return;
        }
        followed.insert(label.clone());
        drop(followed);
        let reader = LabelReader {
            settings: Arc::clone(&self.settings),
            state: Arc::clone(&self.state),
            stop: Arc::clone(&self.stop),
            label: label.clone(),
        };
        let all = Arc::clone(&self.followed);
        let started = spawn("promptpack-relay-label", move || {
            if !reader.run(reply) {
                all.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .remove(&reader.label);
            }
        });
        if let Err(error) = started {
            log::warn!(target: "promptpack_console::relay", "{error}");
            self.followed
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&label);
        }
    }
}

/// Whether `error` is the upstream refusing a token (as opposed to being
/// away).
fn refused(error: &Error) -> bool {
    matches!(
        error.code(),
        ErrorCode::NotConfigured | ErrorCode::InvalidRequest
    )
}

/// The thread that reads one label's stream from the upstream.
struct LabelReader {
    settings: Arc<RelayFeedSettings>,
    state: Arc<RelayState>,
    stop: Arc<AtomicBool>,
    label: String,
}

impl LabelReader {
    /// Reads the stream until the relay stops, reconnecting with backoff
    /// and resuming from the last event applied. `false` when the first
    /// attempt failed (said through `reply`): the label is not followed.
    fn run(&self, reply: oneshot::Sender<Result<(), Error>>) -> bool {
        let client = match BlockingRelayClient::new(
            &self.settings.url,
            &self.settings.token,
            self.settings.timeouts,
        ) {
            Ok(client) => client,
            Err(error) => {
                let _ = reply.send(Err(error));
                return false;
            }
        };
        let stall = self.settings.heartbeat * STALL_HEARTBEATS;
        let mut reply = Some(reply);
        let mut last: Option<String> = None;
        let mut backoff = FIRST_BACKOFF;
        let mut down = false;
        while !self.stop.load(Ordering::SeqCst) {
            let read = client
                .events(&self.label, last.as_deref())
                .and_then(|mut stream| {
                    loop {
                        if self.stop.load(Ordering::SeqCst) {
                            return Ok(());
                        }
                        let Some(item) = stream.next_within(SLICE, stall)? else {
                            continue;
                        };
                        let (id, complete) = self.apply(&client, item);
                        if !complete {
                            // A version the upstream could not give now:
                            // read the label whole again, after a wait.
                            last = None;
                            return Err(Error::new(
                                ErrorCode::Unavailable,
                                format!("a version of label `{}` could not be read from the upstream relay", self.label),
                            ));
                        }
                        last = Some(id);
                        if let Some(reply) = reply.take() {
                            let _ = reply.send(Ok(()));
                        }
                        if down {
                            down = false;
                            log::info!(
                                target: "promptpack_console::relay",
                                "following label `{}` of {} again",
                                self.label,
                                self.settings.url
                            );
                        }
                        backoff = FIRST_BACKOFF;
                    }
                });
            if let Err(error) = read {
                if let Some(reply) = reply.take() {
                    let _ = reply.send(Err(error));
                    return false;
                }
                if !down {
                    down = true;
                    log::warn!(
                        target: "promptpack_console::relay",
                        "{error}; serving label `{}` as it was until the upstream relay is back",
                        self.label
                    );
                }
            }
            let until = Instant::now() + backoff;
            while Instant::now() < until {
                if self.stop.load(Ordering::SeqCst) {
                    return true;
                }
                std::thread::sleep(SLICE.min(until.saturating_duration_since(Instant::now())));
            }
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
        true
    }

    /// Applies one event of the upstream's stream to the relay's memory
    /// (its own events follow from the differences): the event's id, and
    /// whether every version it names could be read (a prompt with one
    /// that could not is left as it was).
    fn apply(&self, client: &BlockingRelayClient, item: StreamItem) -> (String, bool) {
        match item {
            StreamItem::Snapshot { id, snapshot } => {
                let read: Vec<PromptArms> = snapshot
                    .prompts
                    .into_iter()
                    .map(|prompt| self.arms_of(client, prompt, Vec::new()))
                    .collect();
                let complete = read.iter().all(|prompt| !prompt.unreadable);
                self.state.update(&self.label, Scope::Whole, read);
                (id, complete)
            }
            StreamItem::Change { id, change } => {
                let prompt = change.labelled.prompt.clone();
                let read = if change.labelled.arms.is_empty() {
                    Vec::new()
                } else {
                    vec![self.arms_of(client, change.labelled, change.versions)]
                };
                let complete = read.iter().all(|prompt| !prompt.unreadable);
                self.state.update(&self.label, Scope::Prompt(&prompt), read);
                (id, complete)
            }
        }
    }

    /// A prompt's arms with their versions: those `sent` with them, those
    /// the relay holds under the same hash, and the rest asked of the
    /// upstream. A version it cannot give now leaves the prompt as it was
    /// (`unreadable`), and the label is read whole again.
    fn arms_of(
        &self,
        client: &BlockingRelayClient,
        labelled: LabelledArms,
        sent: Vec<WireVersion>,
    ) -> PromptArms {
        let mut versions: Vec<Arc<CachedVersion>> = Vec::with_capacity(labelled.arms.len());
        let mut unreadable = false;
        for arm in &labelled.arms {
            let held = self
                .state
                .version(&labelled.prompt, arm.version)
                .filter(|cached| cached.content_hash == arm.content_hash);
            let cached = match held {
                Some(cached) => cached,
                None => {
                    let wire = match sent.iter().find(|wire| {
                        wire.version.prompt_id == labelled.prompt
                            && wire.version.version == arm.version
                    }) {
                        Some(wire) => Ok(wire.clone()),
                        None => client.version(&labelled.prompt, arm.version),
                    };
                    match wire {
                        Ok(wire) => self.state.cache_version(&wire),
                        Err(error) => {
                            log::warn!(
                                target: "promptpack_console::relay",
                                "version {} of `{}` cannot be read from the upstream relay: {error}",
                                arm.version,
                                labelled.prompt
                            );
                            unreadable = true;
                            continue;
                        }
                    }
                }
            };
            versions.push(cached);
        }
        PromptArms {
            prompt: labelled.prompt,
            arms: labelled.arms,
            versions,
            unreadable,
        }
    }
}

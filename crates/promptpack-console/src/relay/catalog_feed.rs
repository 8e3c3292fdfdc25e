//! The relay's one connection to its catalog, owned by one thread that
//! does every read and write the relay needs, one at a time, on commands
//! from the routes; and on PostgreSQL the second connection, `LISTEN`, on
//! a thread of its own that turns each notification into a command.
//!
//! A relay serves thousands of followers from memory: the catalog sees one
//! read per label change, not one per follower. The thread polls the
//! catalog's change marker every `poll` as the safety net for
//! notifications lost (and as the only way on SQLite or behind pgbouncer);
//! a connection lost is retried with backoff while serving goes on from
//! memory, and once back every label followed is read again and the
//! differences sent as changes.

use super::auth::AuthCache;
use super::state::{CachedVersion, MAX_LABELS, PromptArms, RelayState, Scope};
use promptpack_catalog::relay::{WireArm, WireVersion};
use promptpack_catalog::{
    Access, BuildRegistration, Catalog, ChangeMarker, Error, ErrorCode, FileIdentity, Timeouts,
    User, redact_url, token_hash,
};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// The first wait before reconnecting; it doubles up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(100);
/// The longest wait between two attempts to reconnect.
const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// How long one wait for a notification lasts before the listening thread
/// looks whether the relay stopped: the bound on how long stopping takes.
const LISTEN_SLICE: Duration = Duration::from_millis(200);
/// A build registered again within this long is not written again: ten
/// thousand followers of a fleet that restarts register once each.
const REGISTER_DEDUPE: Duration = Duration::from_secs(30);

/// What the routes (and the listening thread) ask of the catalog's thread.
pub(crate) enum Command {
    /// Read `label` and follow it from now on.
    Follow {
        label: String,
        reply: oneshot::Sender<Result<(), Error>>,
    },
    /// A version, whole.
    Version {
        prompt: String,
        version: u32,
        reply: oneshot::Sender<Result<Arc<CachedVersion>, Error>>,
    },
    /// The versions a label pointed at before.
    Earlier {
        prompt: String,
        label: String,
        reply: oneshot::Sender<Result<Vec<u32>, Error>>,
    },
    /// A build registered.
    Register {
        build: BuildRegistration,
        reply: oneshot::Sender<Result<(), Error>>,
    },
    /// A build's registration taken away.
    Unregister {
        build: BuildRegistration,
        reply: oneshot::Sender<Result<(), Error>>,
    },
    /// The user of a token (a catalog looks up its hash; an upstream
    /// relay is asked with the token itself).
    Authenticate {
        token: String,
        reply: oneshot::Sender<Result<Option<User>, Error>>,
    },
    /// A notification named this prompt.
    Notified(String),
    /// The listener connected again: notifications may have been lost.
    Resync,
    /// The relay stops.
    Stop,
}

/// Where the routes send their commands: the upstream as the routes see
/// it. Following another relay would answer the same commands.
#[derive(Clone)]
pub(crate) struct Feed {
    commands: Sender<Command>,
}

impl Feed {
    /// A feed no thread answers, for tests of what needs no catalog.
    #[cfg(test)]
    pub(crate) fn detached() -> Feed {
        Feed {
            commands: std::sync::mpsc::channel().0,
        }
    }

    /// Sends the command `make` builds around a reply channel and waits
    /// for the reply.
    pub(crate) async fn ask<T>(
        &self,
        make: impl FnOnce(oneshot::Sender<Result<T, Error>>) -> Command,
    ) -> Result<T, Error> {
        let (reply, answer) = oneshot::channel();
        self.commands.send(make(reply)).map_err(|_| stopped())?;
        answer.await.map_err(|_| stopped())?
    }
}

fn stopped() -> Error {
    Error::new(ErrorCode::Unavailable, "the relay is stopping")
}

fn unavailable() -> Error {
    Error::new(
        ErrorCode::Unavailable,
        "the relay's catalog is unavailable: try again shortly",
    )
}

/// The threads that hold the catalog's connections; stopped and joined on
/// drop.
pub(crate) struct FeedThreads {
    feed: Feed,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl FeedThreads {
    /// The threads of a feed whose commands arrive on `commands`'s
    /// receiver, stopped through `stop` (and a [`Command::Stop`]).
    pub(crate) fn from_parts(
        commands: Sender<Command>,
        stop: Arc<AtomicBool>,
        threads: Vec<JoinHandle<()>>,
    ) -> FeedThreads {
        FeedThreads {
            feed: Feed { commands },
            stop,
            threads,
        }
    }

    /// The routes' side.
    pub(crate) fn feed(&self) -> Feed {
        self.feed.clone()
    }
}

impl Drop for FeedThreads {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = self.feed.commands.send(Command::Stop);
        for thread in self.threads.drain(..) {
            // A thread that panicked has nothing left to clean up.
            let _ = thread.join();
        }
    }
}

/// How the catalog is followed.
pub(crate) struct FeedSettings {
    pub(crate) url: String,
    pub(crate) timeouts: Timeouts,
    pub(crate) poll: Duration,
    /// `LISTEN` on a second connection (PostgreSQL without `poll_only`).
    pub(crate) listen: bool,
}

/// Starts the threads over `catalog` (connected already, so that a relay
/// that cannot reach its catalog fails to start).
pub(crate) fn start(
    settings: FeedSettings,
    catalog: Catalog,
    state: Arc<RelayState>,
    auth: Arc<AuthCache>,
) -> Result<FeedThreads, Error> {
    let (commands, receiver) = std::sync::mpsc::channel();
    let stop = Arc::new(AtomicBool::new(false));
    let mut threads = Vec::new();
    let file = Catalog::sqlite_file(&settings.url);
    let identity = file.as_deref().and_then(FileIdentity::of);
    let worker = CatalogFeed {
        url: settings.url.clone(),
        timeouts: settings.timeouts,
        poll: settings.poll,
        state,
        auth,
        catalog: Some(catalog),
        marker: None,
        retry: false,
        file,
        identity,
        backoff: FIRST_BACKOFF,
        next_attempt: Instant::now(),
        down: false,
        registered: Mutex::new(HashMap::new()),
        commands: receiver,
    };
    threads.push(spawn("promptpack-relay-catalog", move || worker.run())?);
    if settings.listen {
        let (url, timeouts) = (settings.url, settings.timeouts);
        let (commands, stop) = (commands.clone(), Arc::clone(&stop));
        threads.push(spawn("promptpack-relay-listen", move || {
            listen(&url, &timeouts, &commands, &stop);
        })?);
    }
    Ok(FeedThreads {
        feed: Feed { commands },
        stop,
        threads,
    })
}

pub(crate) fn spawn(
    name: &str,
    run: impl FnOnce() + Send + 'static,
) -> Result<JoinHandle<()>, Error> {
    std::thread::Builder::new()
        .name(name.to_string())
        .spawn(run)
        .map_err(|e| {
            Error::new(
                ErrorCode::Io,
                format!("cannot start the relay's thread: {e}"),
            )
        })
}

/// The listening thread: each notification a command; a connection lost
/// is connected again with backoff, and the catalog's thread told to read
/// everything again (notifications sent meanwhile are gone).
fn listen(url: &str, timeouts: &Timeouts, commands: &Sender<Command>, stop: &AtomicBool) {
    let mut backoff = FIRST_BACKOFF;
    let mut down = false;
    while !stop.load(Ordering::SeqCst) {
        match promptpack_catalog::Listener::connect_with(url, timeouts) {
            Ok(mut listener) => {
                backoff = FIRST_BACKOFF;
                down = false;
                if commands.send(Command::Resync).is_err() {
                    return;
                }
                loop {
                    if stop.load(Ordering::SeqCst) {
                        return;
                    }
                    match listener.wait(LISTEN_SLICE) {
                        Ok(Some(change)) => {
                            if commands.send(Command::Notified(change.prompt_id)).is_err() {
                                return;
                            }
                        }
                        Ok(None) => {}
                        Err(error) => {
                            log::warn!(target: "promptpack_console::relay", "{error}; polling until it is back");
                            break;
                        }
                    }
                }
            }
            Err(error) => {
                if !down {
                    log::warn!(target: "promptpack_console::relay", "{error}; polling until it is back");
                    down = true;
                }
            }
        }
        let until = Instant::now() + backoff;
        while Instant::now() < until {
            if stop.load(Ordering::SeqCst) {
                return;
            }
            std::thread::sleep(LISTEN_SLICE.min(until.saturating_duration_since(Instant::now())));
        }
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

/// The catalog's thread.
struct CatalogFeed {
    url: String,
    timeouts: Timeouts,
    poll: Duration,
    state: Arc<RelayState>,
    auth: Arc<AuthCache>,
    catalog: Option<Catalog>,
    /// The change marker when every label was last read whole.
    marker: Option<ChangeMarker>,
    /// A version could not be read: the next poll reads every label.
    retry: bool,
    /// A SQLite catalog's file and its identity when opened: a file moved
    /// over it (a backup restored) is opened anew.
    file: Option<PathBuf>,
    identity: Option<FileIdentity>,
    backoff: Duration,
    /// No attempt to reconnect before this.
    next_attempt: Instant,
    /// The loss was logged and the catalog is not back yet.
    down: bool,
    /// The builds registered lately, by process, label and contract.
    registered: Mutex<HashMap<(String, String, String), Instant>>,
    commands: Receiver<Command>,
}

impl CatalogFeed {
    fn run(mut self) {
        let mut next_poll = Instant::now() + self.poll;
        loop {
            let wait = next_poll.saturating_duration_since(Instant::now());
            match self.commands.recv_timeout(wait) {
                Ok(Command::Stop) | Err(RecvTimeoutError::Disconnected) => return,
                Ok(command) => self.handle(command),
                Err(RecvTimeoutError::Timeout) => {}
            }
            if Instant::now() >= next_poll {
                self.poll_marker();
                next_poll = Instant::now() + self.poll;
            }
        }
    }

    fn handle(&mut self, command: Command) {
        match command {
            Command::Follow { label, reply } => {
                let _ = reply.send(self.follow(&label));
            }
            Command::Version {
                prompt,
                version,
                reply,
            } => {
                let _ = reply.send(self.version(&prompt, version));
            }
            Command::Earlier {
                prompt,
                label,
                reply,
            } => {
                let answer = self.with_catalog(|catalog| catalog.earlier_versions(&prompt, &label));
                let _ = reply.send(answer);
            }
            Command::Register { build, reply } => {
                let _ = reply.send(self.register(&build));
            }
            Command::Unregister { build, reply } => {
                self.registered
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .retain(|(process, label, _), _| {
                        !(*process == build.process && *label == build.label)
                    });
                let answer =
                    self.with_catalog(|catalog| catalog.unregister_build(&build).map(drop));
                let _ = reply.send(answer);
            }
            Command::Authenticate { token, reply } => {
                let hash = token_hash(&token);
                // Asked by many followers at once: the first answer is
                // remembered, the others read it here.
                let answer = match self.auth.get(&hash) {
                    Some(user) => Ok(user),
                    None => self
                        .with_catalog(|catalog| catalog.user_by_token_hash(&hash))
                        .inspect(|user| self.auth.put(&hash, user.clone())),
                };
                let _ = reply.send(answer);
            }
            Command::Notified(prompt) => self.notified(&prompt),
            Command::Resync => {
                self.marker = None;
                self.read_everything();
            }
            Command::Stop => {}
        }
    }

    /// Runs `work` on the connection, connecting first when it is lost
    /// (at most as often as the backoff allows); a store lost on the way
    /// is `unavailable`.
    fn with_catalog<T>(
        &mut self,
        work: impl FnOnce(&mut Catalog) -> Result<T, Error>,
    ) -> Result<T, Error> {
        if self.catalog.is_none() {
            self.reconnect();
        }
        let Some(catalog) = &mut self.catalog else {
            return Err(unavailable());
        };
        let answer = work(catalog);
        if let Err(error) = &answer
            && error.code() == ErrorCode::Unavailable
        {
            self.lost(error);
            return Err(unavailable());
        }
        answer
    }

    /// The connection failed: drop it and say so, once until it is back.
    fn lost(&mut self, error: &Error) {
        self.catalog = None;
        self.marker = None;
        self.next_attempt = Instant::now() + self.backoff;
        self.backoff = (self.backoff * 2).min(MAX_BACKOFF);
        if !self.down {
            self.down = true;
            log::warn!(
                target: "promptpack_console::relay",
                "{error}; serving what the relay holds until the catalog is back"
            );
        }
    }

    /// Connects again when the backoff allows, and reads every label
    /// followed again: the store may be another one now (a backup
    /// restored), so every version is read again too.
    fn reconnect(&mut self) {
        if Instant::now() < self.next_attempt {
            return;
        }
        self.identity = self.file.as_deref().and_then(FileIdentity::of);
        match Catalog::connect_with(&self.url, Access::Write, &self.timeouts) {
            Ok(catalog) => {
                self.catalog = Some(catalog);
                self.backoff = FIRST_BACKOFF;
                if self.down {
                    self.down = false;
                    log::info!(
                        target: "promptpack_console::relay",
                        "the catalog {} is reachable again",
                        redact_url(&self.url)
                    );
                }
                self.state.clear_versions();
                self.marker = None;
                self.read_everything();
            }
            Err(error) => self.lost(&error),
        }
    }

    /// The marker's poll: every label read again when it moved (or a read
    /// failed before); a SQLite file replaced is opened anew.
    fn poll_marker(&mut self) {
        if self.catalog.is_none() {
            self.reconnect();
            return;
        }
        if let Some(file) = &self.file
            && FileIdentity::of(file) != self.identity
        {
            log::info!(
                target: "promptpack_console::relay",
                "the catalog's file was replaced; reading the new one"
            );
            self.catalog = None;
            self.next_attempt = Instant::now();
            self.reconnect();
            return;
        }
        let Ok(marker) = self.with_catalog(Catalog::change_marker) else {
            return;
        };
        if self.marker != Some(marker) || self.retry {
            self.read_everything();
        }
    }

    /// Reads every label followed and sends what changed; the marker first,
    /// so that a change made while they are read shows at the next poll.
    fn read_everything(&mut self) {
        let Ok(marker) = self.with_catalog(Catalog::change_marker) else {
            return;
        };
        self.retry = false;
        for label in self.state.followed() {
            match self.read_label(&label, None) {
                Ok(read) => self.state.update(&label, Scope::Whole, read),
                Err(_) => return,
            }
        }
        self.marker = (!self.retry).then_some(marker);
    }

    /// A notification named `prompt`: its arms of every label followed,
    /// read again. The marker moves on too: every other change up to it
    /// has a notification of its own on the way.
    fn notified(&mut self, prompt: &str) {
        if self.catalog.is_none() {
            return;
        }
        let Ok(marker) = self.with_catalog(Catalog::change_marker) else {
            return;
        };
        if !self.retry {
            self.marker = Some(marker);
        }
        for label in self.state.followed() {
            match self.read_label(&label, Some(prompt)) {
                Ok(read) => self.state.update(&label, Scope::Prompt(prompt), read),
                Err(_) => return,
            }
        }
    }

    /// Reads `label` (a label not followed is followed from now on).
    fn follow(&mut self, label: &str) -> Result<(), Error> {
        if self.state.is_followed(label) {
            return Ok(());
        }
        if self.state.followed_count() >= MAX_LABELS {
            return Err(Error::new(
                ErrorCode::Unavailable,
                format!("the relay follows {MAX_LABELS} labels already"),
            ));
        }
        let read = self.read_label(label, None)?;
        self.state.update(label, Scope::Whole, read);
        Ok(())
    }

    /// The arms of `label` (of prompt `only`), with every version they
    /// name that the relay does not hold yet, in one snapshot.
    fn read_label(&mut self, label: &str, only: Option<&str>) -> Result<Vec<PromptArms>, Error> {
        let state = Arc::clone(&self.state);
        let have = move |id: &str, version: u32| state.version(id, version).is_some();
        let labelled =
            self.with_catalog(|catalog| catalog.labelled_with_sources(label, only, &have))?;
        let mut read = Vec::with_capacity(labelled.len());
        for prompt in labelled {
            let mut arms = Vec::with_capacity(prompt.arms.len());
            let mut versions = Vec::with_capacity(prompt.arms.len());
            let mut unreadable = false;
            for (arm, fetched) in prompt.arms {
                let cached = match fetched {
                    None => self.state.version(&prompt.id, arm.version),
                    Some(Ok((version, sources))) => Some(
                        self.state
                            .cache_version(&WireVersion::new(version, &sources)),
                    ),
                    Some(Err(error)) => {
                        log::warn!(
                            target: "promptpack_console::relay",
                            "version {} of `{}` cannot be read: {error}",
                            arm.version,
                            prompt.id
                        );
                        None
                    }
                };
                let Some(cached) = cached else {
                    unreadable = true;
                    continue;
                };
                arms.push(WireArm {
                    version: arm.version,
                    weight: arm.weight,
                    content_hash: cached.content_hash.clone(),
                });
                versions.push(cached);
            }
            self.retry |= unreadable;
            read.push(PromptArms {
                prompt: prompt.id,
                arms,
                versions,
                unreadable,
            });
        }
        Ok(read)
    }

    /// Version `version` of `prompt`, from memory or read once.
    fn version(&mut self, prompt: &str, version: u32) -> Result<Arc<CachedVersion>, Error> {
        if let Some(cached) = self.state.version(prompt, version) {
            return Ok(cached);
        }
        let wanted = [(prompt.to_string(), version)];
        let fetched = self.with_catalog(|catalog| catalog.versions_with_sources(&wanted))?;
        match fetched.into_iter().next() {
            Some(Ok((version, sources))) => Ok(self
                .state
                .cache_version(&WireVersion::new(version, &sources))),
            Some(Err(error)) => Err(error),
            None => Err(Error::new(
                ErrorCode::NotFound,
                format!("version {version} of `{prompt}` was not read"),
            )),
        }
    }

    /// Registers `build` unless it was within [`REGISTER_DEDUPE`].
    fn register(&mut self, build: &BuildRegistration) -> Result<(), Error> {
        let contract = serde_json::to_string(&build.contract).unwrap_or_default();
        let key = (build.process.clone(), build.label.clone(), contract);
        {
            let mut registered = self
                .registered
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if registered
                .get(&key)
                .is_some_and(|at| at.elapsed() < REGISTER_DEDUPE)
            {
                return Ok(());
            }
            if registered.len() > 100_000 {
                registered.retain(|_, at| at.elapsed() < REGISTER_DEDUPE);
            }
        }
        self.with_catalog(|catalog| catalog.register_build(build))?;
        self.registered
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key, Instant::now());
        Ok(())
    }
}

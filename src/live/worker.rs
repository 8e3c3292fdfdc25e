//! The background thread of a live handle: connects, reads every label,
//! follows changes, and reconnects with backoff when the store goes away.
//! Renders never wait for it: it swaps a whole new set in.

use super::event::LiveEvent;
use super::fetch::{
    LabelState, StoreError, Verdict, earlier_versions, fetch_versions, judge, read_labels,
};
use super::served::{Served, ServedArm, ServedPrompt};
use crate::__private::{DevSource, PromptInfo};
use crate::provenance::Provenance;
use arc_swap::ArcSwap;
use promptpack_catalog::FileIdentity;
use promptpack_catalog::redact_url;
use promptpack_catalog::{Access, BuildRegistration, Catalog, ChangeMarker, Timeouts};
use promptpack_core::error::{Error, ErrorCode};
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The first wait before reconnecting; it doubles up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(100);
/// The longest wait between two attempts to reconnect.
const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// How long one wait for a notification lasts before the thread looks
/// whether its handle is gone: the bound on how long dropping it takes.
#[cfg(feature = "live-postgres")]
const LISTEN_SLICE: Duration = Duration::from_millis(200);
/// How often the handle registers its build in the catalog (refreshing
/// its `last_seen`), and so the least time between two attempts, failed or
/// not: a catalog this process may only read costs one refused attempt a
/// minute, never a storm.
const REGISTER_EVERY: Duration = Duration::from_secs(60);

/// What the handle and its thread share.
pub(super) struct Shared {
    pub(super) served: ArcSwap<Served>,
    pub(super) subscribers: Mutex<Vec<Sender<LiveEvent>>>,
    pub(super) connected: AtomicBool,
}

impl Shared {
    pub(super) fn new(prompts: usize, subscribers: Vec<Sender<LiveEvent>>) -> Shared {
        Shared {
            served: ArcSwap::from_pointee(Served::embedded(prompts)),
            subscribers: Mutex::new(subscribers),
            connected: AtomicBool::new(false),
        }
    }

    /// Sends `event` to every subscriber still listening.
    fn emit(&self, event: &LiveEvent) {
        let mut subscribers = self
            .subscribers
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        subscribers.retain(|subscriber| subscriber.send(event.clone()).is_ok());
    }
}

/// The thread's state: the connection, and what it has said.
pub(super) struct Worker {
    shared: Arc<Shared>,
    prompts: &'static [PromptInfo],
    /// The binary's render bound, which the versions it serves keep.
    max_render_bytes: usize,
    url: String,
    label: String,
    poll: Duration,
    timeouts: Timeouts,
    catalog: Option<Catalog>,
    /// The file of a SQLite catalog, and its identity when it was opened:
    /// a file moved over it (a backup restored) is opened anew.
    file: Option<PathBuf>,
    identity: Option<FileIdentity>,
    #[cfg(feature = "live-postgres")]
    listener: Option<promptpack_catalog::Listener>,
    marker: Option<ChangeMarker>,
    /// Versions refused already for their own content, by prompt index:
    /// said once, not fetched again.
    refused: HashSet<(usize, u32)>,
    /// Versions the catalog could not give at the last read (said once in
    /// the log until served): read again at the next poll.
    unreadable: HashSet<(usize, u32)>,
    /// A version was unreadable in this refresh: the next poll reads every
    /// label again, changed or not.
    retry: bool,
    /// `StoreDown` was said and `StoreBack` (or `StoreUp`) not yet.
    down: bool,
    /// The store was reached once: a reconnection is `StoreBack`, a first
    /// connection after a start without the store `StoreUp`.
    reached: bool,
    backoff: Duration,
    /// What the handle registers: its process, label and contract.
    registration: BuildRegistration,
    /// When it last tried to register; `None` before the first try.
    registered_at: Option<Instant>,
    stop: Receiver<()>,
}

/// What a wait for changes ended with.
enum Wake {
    /// The handle is gone.
    Stop,
    /// Prompt `id` changed (a notification).
    #[cfg(feature = "live-postgres")]
    Prompt(String),
    /// The SQLite file was replaced: open the new one.
    Replaced,
    /// Something may have changed: read every label.
    Everything,
    /// Nothing changed.
    Nothing,
}

impl Worker {
    pub(super) fn new(
        shared: Arc<Shared>,
        source: &'static DevSource,
        url: String,
        poll: Duration,
        timeouts: Timeouts,
        registration: BuildRegistration,
        stop: Receiver<()>,
    ) -> Worker {
        // The label followed is the one registered.
        let label = registration.label.clone();
        let file = Catalog::sqlite_file(&url);
        Worker {
            shared,
            prompts: source.prompts,
            max_render_bytes: source.max_render_bytes,
            url,
            label,
            poll,
            timeouts,
            catalog: None,
            file,
            identity: None,
            #[cfg(feature = "live-postgres")]
            listener: None,
            marker: None,
            refused: HashSet::new(),
            unreadable: HashSet::new(),
            retry: false,
            down: false,
            reached: false,
            backoff: FIRST_BACKOFF,
            registration,
            registered_at: None,
            stop,
        }
    }

    /// Connects and reads every label.
    pub(super) fn connect(&mut self) -> Result<(), StoreError> {
        // Before opening: a file replaced in between is opened anew at the
        // next poll, never missed.
        self.identity = self.file.as_deref().and_then(FileIdentity::of);
        let catalog =
            Catalog::connect_with(&self.url, Access::Read, &self.timeouts).map_err(StoreError)?;
        // Listening starts before the labels are read, so that a change
        // committed in between is announced, not missed.
        #[cfg(feature = "live-postgres")]
        if catalog.store_kind() == "postgres" {
            self.listener = Some(
                promptpack_catalog::Listener::connect_with(&self.url, &self.timeouts)
                    .map_err(StoreError)?,
            );
        }
        self.catalog = Some(catalog);
        // Every version read again: the store may have been restored from
        // a backup meanwhile, with other text under the same numbers.
        self.refresh_everything(true)?;
        self.backoff = FIRST_BACKOFF;
        self.shared.connected.store(true, Ordering::Release);
        if self.down {
            self.down = false;
            if self.reached {
                log::info!("promptpack: the prompt catalog is reachable again");
                self.shared.emit(&LiveEvent::StoreBack);
            } else {
                log::info!("promptpack: the prompt catalog is reachable");
                self.shared.emit(&LiveEvent::StoreUp);
            }
        }
        self.reached = true;
        Ok(())
    }

    /// The SQLite file was replaced: opens the new one and reads every
    /// label and version from it (what it holds under a number may differ,
    /// a refusal too); failing that, the store is lost.
    fn reopen(&mut self) -> Result<(), StoreError> {
        log::info!(
            "promptpack: the prompt catalog's file was replaced; reading the new one ({})",
            redact_url(&self.url)
        );
        self.catalog = None;
        self.marker = None;
        self.refused.clear();
        self.unreadable.clear();
        self.connect()
    }

    /// The store failed: drop the connection and say so, once until it is
    /// back.
    pub(super) fn lost(&mut self, StoreError(error): StoreError) {
        self.catalog = None;
        #[cfg(feature = "live-postgres")]
        {
            self.listener = None;
        }
        self.marker = None;
        self.shared.connected.store(false, Ordering::Release);
        if !self.down {
            self.down = true;
            log::warn!("promptpack: {error}; serving the prompts loaded so far");
            self.shared.emit(&LiveEvent::StoreDown { error });
        }
    }

    /// Follows changes until the handle is dropped, then says it stopped.
    pub(super) fn run(mut self) {
        self.follow();
        self.unregister();
    }

    /// Takes the build's registration away once the handle is dropped, so
    /// that a console does not count a process that ended (a `--once` run)
    /// among those serving the label. Only after it tried to register; a
    /// failure is logged at debug level, like a failed registration: the
    /// console shows a registration no longer refreshed as stale.
    fn unregister(&self) {
        if self.registered_at.is_none() {
            return;
        }
        let unregistered = Catalog::connect_with(&self.url, Access::Write, &self.timeouts)
            .and_then(|mut catalog| catalog.unregister_build(&self.registration));
        if let Err(error) = unregistered {
            log::debug!(
                "promptpack: this build's registration stays in the prompt catalog ({}): {error}",
                redact_url(&self.url)
            );
        }
    }

    /// Follows changes until the handle is dropped.
    fn follow(&mut self) {
        loop {
            if self.catalog.is_none() {
                if self.sleep(self.backoff) {
                    return;
                }
                if let Err(error) = self.connect() {
                    self.lost(error);
                    self.backoff = (self.backoff * 2).min(MAX_BACKOFF);
                }
                continue;
            }
            self.register_when_due();
            let done = match self.wait() {
                Ok(Wake::Stop) => return,
                #[cfg(feature = "live-postgres")]
                Ok(Wake::Prompt(id)) => self.refresh_one(&id),
                Ok(Wake::Replaced) => self.reopen(),
                Ok(Wake::Everything) => self.refresh_all(),
                Ok(Wake::Nothing) => Ok(()),
                Err(error) => Err(error),
            };
            if let Err(error) = done {
                self.lost(error);
            }
        }
    }

    /// Registers the build in the catalog when it has not tried for
    /// [`REGISTER_EVERY`], through a writable connection of its own that
    /// lives for this one write (the handle itself only reads). A catalog
    /// this process may not write (a read-only file or folder, a
    /// PostgreSQL role that may only read), or any other failure, leaves
    /// the build unregistered until the next try: logged at debug level,
    /// no event, and serving goes on as before.
    fn register_when_due(&mut self) {
        if self
            .registered_at
            .is_some_and(|at| at.elapsed() < REGISTER_EVERY)
        {
            return;
        }
        self.registered_at = Some(Instant::now());
        let registered = Catalog::connect_with(&self.url, Access::Write, &self.timeouts)
            .and_then(|mut catalog| catalog.register_build(&self.registration));
        if let Err(error) = registered {
            log::debug!(
                "promptpack: this build is not registered in the prompt catalog ({}): {error}",
                redact_url(&self.url)
            );
        }
    }

    /// Waits `duration` unless the handle goes first: `true` when it did.
    fn sleep(&self, duration: Duration) -> bool {
        !matches!(
            self.stop.recv_timeout(duration),
            Err(RecvTimeoutError::Timeout)
        )
    }

    fn stopped(&self) -> bool {
        !matches!(self.stop.try_recv(), Err(TryRecvError::Empty))
    }

    /// Waits for a notification (PostgreSQL) until the next poll, then
    /// polls the change marker.
    fn wait(&mut self) -> Result<Wake, StoreError> {
        let deadline = Instant::now() + self.poll;
        #[cfg(feature = "live-postgres")]
        if let Some(listener) = &mut self.listener {
            loop {
                if !matches!(self.stop.try_recv(), Err(TryRecvError::Empty)) {
                    return Ok(Wake::Stop);
                }
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                if let Some(change) = listener.wait(left.min(LISTEN_SLICE)).map_err(StoreError)? {
                    return Ok(Wake::Prompt(change.prompt_id));
                }
            }
        }
        if self.sleep(deadline.saturating_duration_since(Instant::now())) {
            return Ok(Wake::Stop);
        }
        if let Some(file) = &self.file
            && FileIdentity::of(file) != self.identity
        {
            return Ok(Wake::Replaced);
        }
        let Some(catalog) = &mut self.catalog else {
            return Ok(Wake::Nothing);
        };
        let marker = catalog.change_marker().map_err(StoreError)?;
        if self.marker == Some(marker) {
            return Ok(Wake::Nothing);
        }
        Ok(Wake::Everything)
    }

    /// Reads every label; the marker first, so that a change made while
    /// they are read shows at the next poll.
    fn refresh_all(&mut self) -> Result<(), StoreError> {
        self.refresh_everything(false)
    }

    /// Reads every label; `anew`: every version again, served or not (a
    /// store that may not be the one read before: a version serving keeps
    /// serving when its content hash is the same).
    fn refresh_everything(&mut self, anew: bool) -> Result<(), StoreError> {
        let Some(catalog) = &mut self.catalog else {
            return Ok(());
        };
        let marker = catalog.change_marker().map_err(StoreError)?;
        let states = self.read(None, anew)?;
        self.refresh(states, anew)?;
        self.marker = (!self.retry).then_some(marker);
        Ok(())
    }

    /// Reads the label of prompt `id`, when this binary has it, after a
    /// notification. The marker moves on too: every other change up to it
    /// has its own notification on the way (the listener stays connected;
    /// losing it is losing the store, and a reconnect reads everything),
    /// so the next poll need not read every label again.
    #[cfg(feature = "live-postgres")]
    fn refresh_one(&mut self, id: &str) -> Result<(), StoreError> {
        if let Some(catalog) = &mut self.catalog {
            self.marker = Some(catalog.change_marker().map_err(StoreError)?);
        }
        let Some(index) = self.prompts.iter().position(|prompt| prompt.id == id) else {
            return Ok(());
        };
        let states = self.read(Some(index), false)?;
        self.refresh(states, false)?;
        if self.retry {
            self.marker = None;
        }
        Ok(())
    }

    /// The label of every prompt (or of prompt `only`), with every version
    /// it names that is neither served (`anew`: even so) nor refused
    /// already, in one snapshot.
    fn read(
        &mut self,
        only: Option<usize>,
        anew: bool,
    ) -> Result<Vec<(usize, LabelState)>, StoreError> {
        let Some(catalog) = &mut self.catalog else {
            return Ok(Vec::new());
        };
        let current = self.shared.served.load();
        let refused = &self.refused;
        let have = |index: usize, version: u32| {
            let served = current
                .prompts
                .get(index)
                .and_then(Option::as_ref)
                .is_some_and(|served| served.version(version).is_some());
            (served && !anew) || refused.contains(&(index, version))
        };
        read_labels(catalog, self.prompts, &self.label, only, have)
    }

    /// Applies what the label says of each prompt (by index) and swaps in
    /// one new set with every change; the events go out after the swap, so
    /// a subscriber told of a version renders it. `anew`: nothing served
    /// now is reused (the store is another one).
    fn refresh(&mut self, states: Vec<(usize, LabelState)>, anew: bool) -> Result<(), StoreError> {
        self.retry = false;
        let current = self.shared.served.load_full();
        let mut next: Option<Served> = None;
        let mut events = Vec::new();
        for (index, state) in states {
            if self.stopped() {
                break;
            }
            let serving = current.prompts.get(index).and_then(Option::as_ref);
            let reusable = serving.filter(|_| !anew);
            if let Some(entry) = self.apply(serving, reusable, index, state, &mut events)? {
                let set = next.get_or_insert_with(|| Served::clone(&current));
                set.prompts[index] = entry;
            }
        }
        if let Some(set) = next {
            self.shared.served.store(Arc::new(set));
        }
        for event in &events {
            self.shared.emit(event);
        }
        Ok(())
    }

    /// The new entry of prompt `index` whose label is in `state`, or `None`
    /// to keep what serves (`serving`). Arms of `reusable` are kept as they
    /// are.
    fn apply(
        &mut self,
        serving: Option<&Arc<ServedPrompt>>,
        reusable: Option<&Arc<ServedPrompt>>,
        index: usize,
        state: LabelState,
        events: &mut Vec<LiveEvent>,
    ) -> Result<Option<Option<Arc<ServedPrompt>>>, StoreError> {
        let info = &self.prompts[index];
        let arms = match state {
            LabelState::Absent if serving.is_none() => return Ok(None),
            LabelState::Absent => {
                events.push(LiveEvent::Updated {
                    prompt: info.id.to_string(),
                    versions: Vec::new(),
                });
                return Ok(Some(None));
            }
            LabelState::Arms(arms) => arms,
        };
        let pairs: Vec<(u32, u32)> = arms.iter().map(|arm| (arm.version, arm.weight)).collect();
        if reusable.is_some_and(|served| served.is(&pairs)) {
            return Ok(None);
        }
        let mut judged = Vec::with_capacity(arms.len());
        for arm in arms {
            let (version, weight) = (arm.version, arm.weight);
            let same = |served: &&ServedArm| match (&arm.fetched, &served.provenance) {
                (Some(Ok((stored, _))), Provenance::Catalog(catalog)) => {
                    *catalog.content_hash == *stored.content_hash
                }
                _ => false,
            };
            let kept = match reusable {
                Some(served) => served.version(version),
                None => serving
                    .and_then(|served| served.version(version))
                    .filter(same),
            };
            if let Some(served) = kept {
                judged.push(ServedArm {
                    weight,
                    ..served.clone()
                });
                continue;
            }
            if self.refused.contains(&(index, version)) {
                return Ok(None);
            }
            let fetched = arm.fetched.unwrap_or_else(|| {
                Err(Error::new(
                    ErrorCode::Unavailable,
                    format!("version {version} of `{}` was not read", info.id),
                ))
            });
            match judge(info, self.max_render_bytes, &self.label, weight, fetched) {
                Verdict::Serve(arm) => {
                    self.unreadable.remove(&(index, version));
                    judged.push(arm);
                }
                Verdict::Refuse(error) => {
                    self.refuse(index, version, error, events);
                    return match serving {
                        // What served keeps serving.
                        Some(_) => Ok(None),
                        None => self.fall_back(index, events),
                    };
                }
                Verdict::Retry(error) => {
                    self.unreadable_now(index, version, &error);
                    return Ok(None);
                }
            }
        }
        let unchanged = serving.is_some_and(|served| {
            served.is(&pairs)
                && judged.iter().all(|arm| {
                    served
                        .version(arm.version)
                        .is_some_and(|old| Arc::ptr_eq(&old.library, &arm.library))
                })
        });
        if unchanged {
            return Ok(None);
        }
        let prompt = Arc::new(ServedPrompt::new(judged));
        events.push(LiveEvent::Updated {
            prompt: info.id.to_string(),
            versions: prompt.versions(),
        });
        Ok(Some(Some(prompt)))
    }

    /// Notes `version` of prompt `index` as refused and says so, once.
    fn refuse(&mut self, index: usize, version: u32, error: Error, events: &mut Vec<LiveEvent>) {
        let id = self.prompts[index].id;
        log::warn!(
            "promptpack: refused {id} v{version} (label {}): {error}",
            self.label
        );
        self.refused.insert((index, version));
        events.push(LiveEvent::Refused {
            prompt: id.to_string(),
            version,
            error,
        });
    }

    /// `version` of prompt `index` could not be read this time: what
    /// serves keeps serving, and the next poll reads the labels again.
    /// Logged once until it serves.
    fn unreadable_now(&mut self, index: usize, version: u32, error: &Error) {
        self.retry = true;
        if self.unreadable.insert((index, version)) {
            let id = self.prompts[index].id;
            log::warn!(
                "promptpack: cannot read {id} v{version} (label {}) yet, trying again: {error}",
                self.label
            );
        }
    }

    /// Nothing from the catalog serves prompt `index` and its label points
    /// at what this binary refuses: the newest version the label pointed at
    /// before that it can render, so that a process started now serves
    /// what one running all along would; the embedded text when there is
    /// none.
    fn fall_back(
        &mut self,
        index: usize,
        events: &mut Vec<LiveEvent>,
    ) -> Result<Option<Option<Arc<ServedPrompt>>>, StoreError> {
        let Some(catalog) = &mut self.catalog else {
            return Ok(None);
        };
        let info = &self.prompts[index];
        let candidates: Vec<u32> = earlier_versions(catalog, info.id, &self.label)?
            .into_iter()
            .filter(|version| !self.refused.contains(&(index, *version)))
            .collect();
        let fetched = fetch_versions(catalog, info, &candidates)?;
        for (version, fetched) in candidates.into_iter().zip(fetched) {
            match judge(info, self.max_render_bytes, &self.label, 1, fetched) {
                Verdict::Serve(arm) => {
                    let prompt = Arc::new(ServedPrompt::new(vec![arm]));
                    events.push(LiveEvent::Updated {
                        prompt: info.id.to_string(),
                        versions: prompt.versions(),
                    });
                    return Ok(Some(Some(prompt)));
                }
                Verdict::Refuse(error) => self.refuse(index, version, error, events),
                // Not an older one instead: the newest good one, read
                // again at the next poll.
                Verdict::Retry(error) => {
                    self.unreadable_now(index, version, &error);
                    return Ok(None);
                }
            }
        }
        Ok(None)
    }
}

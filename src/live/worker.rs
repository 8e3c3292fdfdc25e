//! The background thread of a live handle: opens its upstream (a catalog
//! or a relay, [`Upstream`]), reads every label, follows changes, and
//! reconnects with jittered backoff when the upstream goes away. Each
//! version is judged here, against the binary's contract, whatever
//! brought it. Renders never wait for it: it swaps a whole new set in.

use super::backoff::Backoff;
use super::event::LiveEvent;
use super::fetch::{LabelState, StoreError, Verdict, judge};
use super::served::{Served, ServedArm, ServedPrompt};
use super::upstream::{Held, Upstream, Wake};
use crate::__private::{DevSource, PromptInfo};
use crate::provenance::Provenance;
use arc_swap::ArcSwap;
use promptpack_catalog::BuildRegistration;
use promptpack_core::error::{Error, ErrorCode};
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How often the handle registers its build upstream (refreshing its
/// `last_seen`), and so the least time between two attempts, failed or
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

/// The thread's state: the upstream, and what it has said.
pub(super) struct Worker {
    shared: Arc<Shared>,
    prompts: &'static [PromptInfo],
    /// The binary's render bound, which the versions it serves keep.
    max_render_bytes: usize,
    label: String,
    upstream: Box<dyn Upstream>,
    /// Versions refused already for their own content, by prompt index:
    /// said once, not fetched again.
    refused: HashSet<(usize, u32)>,
    /// Versions the upstream could not give at the last read (said once
    /// in the log until served): read again at the next poll.
    unreadable: HashSet<(usize, u32)>,
    /// A version was unreadable in this refresh: the upstream reads it
    /// again ([`Upstream::applied`]).
    retry: bool,
    /// `StoreDown` was said and `StoreBack` (or `StoreUp`) not yet.
    down: bool,
    /// The store was reached once: a reconnection is `StoreBack`, a first
    /// connection after a start without the store `StoreUp`.
    reached: bool,
    backoff: Backoff,
    /// What the handle registers: its process, label and contract.
    registration: BuildRegistration,
    /// When it last tried to register; `None` before the first try.
    registered_at: Option<Instant>,
    stop: Receiver<()>,
}

/// What the handle holds of each version, as the upstream asks: what
/// `served` serves and what was `refused`.
fn held_in<'a>(
    served: &'a Served,
    refused: &'a HashSet<(usize, u32)>,
) -> impl Fn(usize, u32) -> Option<Held> + 'a {
    move |index, version| {
        if refused.contains(&(index, version)) {
            return Some(Held::Refused);
        }
        let arm = served.prompts.get(index)?.as_ref()?.version(version)?;
        match &arm.provenance {
            Provenance::Catalog(catalog) => Some(Held::Serving(Arc::clone(&catalog.content_hash))),
            _ => None,
        }
    }
}

impl Worker {
    pub(super) fn new(
        shared: Arc<Shared>,
        source: &'static DevSource,
        upstream: Box<dyn Upstream>,
        registration: BuildRegistration,
        stop: Receiver<()>,
    ) -> Worker {
        // The label followed is the one registered.
        let label = registration.label.clone();
        Worker {
            shared,
            prompts: source.prompts,
            max_render_bytes: source.max_render_bytes,
            label,
            upstream,
            refused: HashSet::new(),
            unreadable: HashSet::new(),
            retry: false,
            down: false,
            reached: false,
            backoff: Backoff::new(),
            registration,
            registered_at: None,
            stop,
        }
    }

    /// Opens the upstream and reads every label.
    pub(super) fn connect(&mut self) -> Result<(), StoreError> {
        let current = self.shared.served.load_full();
        let states = self.upstream.open(&held_in(&current, &self.refused))?;
        // Every version read again: the store may have been restored from
        // a backup meanwhile, with other text under the same numbers.
        self.apply_states(states, true)?;
        self.backoff.reset();
        self.shared.connected.store(true, Ordering::Release);
        if self.down {
            self.down = false;
            let kind = self.upstream.kind();
            if self.reached {
                log::info!("promptpack: the {kind} is reachable again");
                self.shared.emit(&LiveEvent::StoreBack);
            } else {
                log::info!("promptpack: the {kind} is reachable");
                self.shared.emit(&LiveEvent::StoreUp);
            }
        }
        self.reached = true;
        Ok(())
    }

    /// The store was replaced: opens the new one and reads every label and
    /// version from it (what it holds under a number may differ, a refusal
    /// too); failing that, the store is lost.
    fn reopen(&mut self) -> Result<(), StoreError> {
        self.upstream.close();
        self.refused.clear();
        self.unreadable.clear();
        self.connect()
    }

    /// The store failed: drop the connection and say so, once until it is
    /// back.
    pub(super) fn lost(&mut self, StoreError(error): StoreError) {
        self.upstream.close();
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
    fn unregister(&mut self) {
        if self.registered_at.is_none() {
            return;
        }
        if let Err(error) = self.upstream.unregister(&self.registration) {
            log::debug!(
                "promptpack: this build's registration stays in the {} ({}): {error}",
                self.upstream.kind(),
                self.upstream.describe()
            );
        }
    }

    /// Follows changes until the handle is dropped.
    fn follow(&mut self) {
        loop {
            if !self.upstream.is_open() {
                let wait = self.backoff.next();
                if self.sleep(wait) {
                    return;
                }
                if let Err(error) = self.connect() {
                    self.lost(error);
                }
                continue;
            }
            self.register_when_due();
            let current = self.shared.served.load_full();
            let woke = self
                .upstream
                .wait(&held_in(&current, &self.refused), &self.stop);
            let done = match woke {
                Ok(Wake::Stop) => return,
                Ok(Wake::Labels { states, anew }) => self.apply_states(states, anew),
                Ok(Wake::Reopen) => self.reopen(),
                Ok(Wake::Nothing) => Ok(()),
                Err(error) => Err(error),
            };
            if let Err(error) = done {
                self.lost(error);
            }
        }
    }

    /// Registers the build upstream when it has not tried for
    /// [`REGISTER_EVERY`]. An upstream this process may not write to (a
    /// read-only catalog file or folder, a PostgreSQL role that may only
    /// read), or any other failure, leaves the build unregistered until the
    /// next try: logged at debug level, no event, and serving goes on as
    /// before.
    fn register_when_due(&mut self) {
        if self
            .registered_at
            .is_some_and(|at| at.elapsed() < REGISTER_EVERY)
        {
            return;
        }
        self.registered_at = Some(Instant::now());
        if let Err(error) = self.upstream.register(&self.registration) {
            log::debug!(
                "promptpack: this build is not registered in the {} ({}): {error}",
                self.upstream.kind(),
                self.upstream.describe()
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

    /// Applies what the upstream read, then tells it whether every version
    /// it named could be read.
    fn apply_states(
        &mut self,
        states: Vec<(usize, LabelState)>,
        anew: bool,
    ) -> Result<(), StoreError> {
        self.refresh(states, anew)?;
        self.upstream.applied(!self.retry);
        Ok(())
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
            let hash = match &arm.fetched {
                Some(Ok((stored, _))) => Some(stored.content_hash.as_str()),
                _ => arm.content_hash.as_deref(),
            };
            let same = |served: &&ServedArm| match (hash, &served.provenance) {
                (Some(hash), Provenance::Catalog(catalog)) => *catalog.content_hash == *hash,
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
        let info = &self.prompts[index];
        let candidates: Vec<u32> = self
            .upstream
            .earlier(info.id)?
            .into_iter()
            .filter(|version| !self.refused.contains(&(index, *version)))
            .collect();
        let fetched = self.upstream.fetch(info.id, &candidates)?;
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

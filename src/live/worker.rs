//! The background thread of a live handle: connects, reads every label,
//! follows changes, and reconnects with backoff when the store goes away.
//! Renders never wait for it: it swaps a whole new set in.

use super::event::LiveEvent;
#[cfg(feature = "live-postgres")]
use super::fetch::label_state;
use super::fetch::{
    Fetched, LabelState, StoreError, earlier_versions, every_label, fetch_versions, judge,
    judge_version,
};
use super::served::{Served, ServedPrompt};
use crate::__private::PromptInfo;
use arc_swap::ArcSwap;
use promptpack_catalog::{Catalog, ChangeMarker};
use promptpack_core::error::Error;
use std::collections::{HashMap, HashSet};
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
    url: String,
    label: String,
    poll: Duration,
    catalog: Option<Catalog>,
    #[cfg(feature = "live-postgres")]
    listener: Option<promptpack_catalog::Listener>,
    marker: Option<ChangeMarker>,
    /// Versions refused already, by prompt index: said once, not fetched
    /// again.
    refused: HashSet<(usize, u32)>,
    /// `StoreDown` was said and `StoreBack` not yet.
    down: bool,
    backoff: Duration,
    stop: Receiver<()>,
}

/// What a wait for changes ended with.
enum Wake {
    /// The handle is gone.
    Stop,
    /// Prompt `id` changed (a notification).
    #[cfg(feature = "live-postgres")]
    Prompt(String),
    /// Something may have changed: read every label.
    Everything,
    /// Nothing changed.
    Nothing,
}

impl Worker {
    pub(super) fn new(
        shared: Arc<Shared>,
        prompts: &'static [PromptInfo],
        url: String,
        label: String,
        poll: Duration,
        stop: Receiver<()>,
    ) -> Worker {
        Worker {
            shared,
            prompts,
            url,
            label,
            poll,
            catalog: None,
            #[cfg(feature = "live-postgres")]
            listener: None,
            marker: None,
            refused: HashSet::new(),
            down: false,
            backoff: FIRST_BACKOFF,
            stop,
        }
    }

    /// Connects and reads every label.
    pub(super) fn connect(&mut self) -> Result<(), StoreError> {
        let catalog = Catalog::connect(&self.url).map_err(StoreError)?;
        // Listening starts before the labels are read, so that a change
        // committed in between is announced, not missed.
        #[cfg(feature = "live-postgres")]
        if catalog.store_kind() == "postgres" {
            self.listener =
                Some(promptpack_catalog::Listener::connect(&self.url).map_err(StoreError)?);
        }
        self.catalog = Some(catalog);
        self.refresh_all()?;
        self.backoff = FIRST_BACKOFF;
        self.shared.connected.store(true, Ordering::Release);
        if self.down {
            self.down = false;
            log::info!("promptpack: the prompt catalog is reachable again");
            self.shared.emit(&LiveEvent::StoreBack);
        }
        Ok(())
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

    /// Follows changes until the handle is dropped.
    pub(super) fn run(mut self) {
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
            let done = match self.wait() {
                Ok(Wake::Stop) => return,
                #[cfg(feature = "live-postgres")]
                Ok(Wake::Prompt(id)) => self.refresh_one(&id),
                Ok(Wake::Everything) => self.refresh_all(),
                Ok(Wake::Nothing) => Ok(()),
                Err(error) => Err(error),
            };
            if let Err(error) = done {
                self.lost(error);
            }
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
        let Some(catalog) = &mut self.catalog else {
            return Ok(());
        };
        let marker = catalog.change_marker().map_err(StoreError)?;
        let mut labelled = every_label(catalog, &self.label)?;
        let states = self
            .prompts
            .iter()
            .enumerate()
            .map(|(index, info)| {
                let state = match labelled.remove(info.id) {
                    Some(arms) => LabelState::Arms(arms),
                    None => LabelState::Absent,
                };
                (index, state)
            })
            .collect();
        self.refresh(states)?;
        self.marker = Some(marker);
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
        let Some(catalog) = &mut self.catalog else {
            return Ok(());
        };
        let state = label_state(catalog, id, &self.label)?;
        self.refresh(vec![(index, state)])
    }

    /// Applies what the label says of each prompt (by index) and swaps in
    /// one new set with every change; the events go out after the swap, so
    /// a subscriber told of a version renders it.
    fn refresh(&mut self, states: Vec<(usize, LabelState)>) -> Result<(), StoreError> {
        let current = self.shared.served.load_full();
        let mut fetched = self.fetch_new_versions(&current, &states)?;
        let mut next: Option<Served> = None;
        let mut events = Vec::new();
        for (index, state) in states {
            if self.stopped() {
                break;
            }
            if let Some(entry) = self.apply(&current, index, state, &mut fetched, &mut events)? {
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

    /// Every version the labels in `states` point at that is neither
    /// served nor refused already, in one read.
    fn fetch_new_versions(
        &mut self,
        current: &Served,
        states: &[(usize, LabelState)],
    ) -> Result<HashMap<(usize, u32), Fetched>, StoreError> {
        let Some(catalog) = &mut self.catalog else {
            return Ok(HashMap::new());
        };
        let mut wanted = Vec::new();
        for (index, state) in states {
            let LabelState::Arms(arms) = state else {
                continue;
            };
            let serving = current.prompts.get(*index).and_then(Option::as_ref);
            for &(version, _) in arms {
                let served = serving.is_some_and(|served| served.version(version).is_some());
                if !served && !self.refused.contains(&(*index, version)) {
                    wanted.push((*index, version));
                }
            }
        }
        fetch_versions(catalog, self.prompts, &wanted)
    }

    /// The new entry of prompt `index` whose label is in `state`, or `None`
    /// to keep what serves.
    fn apply(
        &mut self,
        current: &Served,
        index: usize,
        state: LabelState,
        fetched: &mut HashMap<(usize, u32), Fetched>,
        events: &mut Vec<LiveEvent>,
    ) -> Result<Option<Option<Arc<ServedPrompt>>>, StoreError> {
        let Some(catalog) = &mut self.catalog else {
            return Ok(None);
        };
        let info = &self.prompts[index];
        let serving = current.prompts.get(index).and_then(Option::as_ref);
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
        if serving.is_some_and(|served| served.is(&arms)) {
            return Ok(None);
        }
        let mut judged = Vec::with_capacity(arms.len());
        for &(version, weight) in &arms {
            if let Some(arm) = serving.and_then(|served| served.version(version)) {
                judged.push(super::served::ServedArm {
                    weight,
                    ..arm.clone()
                });
                continue;
            }
            if self.refused.contains(&(index, version)) {
                return Ok(None);
            }
            let verdict = match fetched.remove(&(index, version)) {
                Some(found) => judge(info, &self.label, version, weight, found),
                None => judge_version(catalog, info, &self.label, version, weight)?,
            };
            match verdict {
                Ok(arm) => judged.push(arm),
                Err(error) => {
                    self.refuse(index, version, error, events);
                    return match serving {
                        // What served keeps serving.
                        Some(_) => Ok(None),
                        None => self.fall_back(index, events),
                    };
                }
            }
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
        for version in earlier_versions(catalog, info.id, &self.label)? {
            if self.refused.contains(&(index, version)) {
                continue;
            }
            let Some(catalog) = &mut self.catalog else {
                return Ok(None);
            };
            match judge_version(catalog, info, &self.label, version, 1)? {
                Ok(arm) => {
                    let prompt = Arc::new(ServedPrompt::new(vec![arm]));
                    events.push(LiveEvent::Updated {
                        prompt: info.id.to_string(),
                        versions: prompt.versions(),
                    });
                    return Ok(Some(Some(prompt)));
                }
                Err(error) => self.refuse(index, version, error, events),
            }
        }
        Ok(None)
    }
}

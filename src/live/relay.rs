//! A relay as a live handle's upstream (`http://relay:7879`,
//! docs/relay.md): a snapshot of the label, then its stream of changes,
//! resumed from the last event applied. The relay sends text; the handle
//! judges each version against its own contract, as it does a catalog's.

use super::fetch::{Fetched, LabelArm, LabelState, StoreError};
use super::upstream::{Held, HeldBy, Upstream, Wake};
use crate::__private::PromptInfo;
use promptpack_catalog::relay::{Change, LabelledArms, Snapshot, WireBuild, WireVersion};
use promptpack_catalog::relay_client::{BlockingEventStream, BlockingRelayClient, StreamItem};
use promptpack_catalog::{BuildRegistration, Timeouts};
use promptpack_core::error::{Error, ErrorCode};
use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::{Duration, Instant};

/// How long one wait on the stream lasts before the thread looks whether
/// its handle is gone: the bound on how long dropping it takes.
const STREAM_SLICE: Duration = Duration::from_millis(200);

/// A relay followed.
pub(super) struct RelayUpstream {
    prompts: &'static [PromptInfo],
    label: String,
    client: BlockingRelayClient,
    /// How often the thread comes back from the stream (to register on
    /// time), and how soon a version the relay could not give is asked
    /// for again.
    poll: Duration,
    /// A stream silent this long (no event, no ping) is a stalled relay.
    stall: Duration,
    stream: Option<BlockingEventStream>,
    /// The id of the last event applied whole: where a stream resumes.
    applied: Option<String>,
    /// The id of the event just read, until it is applied.
    pending: Option<String>,
    /// A version could not be read since the last whole snapshot: no id
    /// is remembered (a resumed stream would not send that version again)
    /// until a whole snapshot is read again, at `resync_at`.
    dirty: bool,
    resync_at: Option<Instant>,
}

impl RelayUpstream {
    /// Follows `label` at the relay at `url`, asking with `token`.
    ///
    /// # Errors
    /// `invalid_request` for a URL that is not a relay's or an empty token.
    pub(super) fn new(
        prompts: &'static [PromptInfo],
        label: String,
        url: &str,
        token: String,
        timeouts: Timeouts,
        poll: Duration,
        stall: Duration,
    ) -> Result<RelayUpstream, Error> {
        Ok(RelayUpstream {
            prompts,
            label,
            client: BlockingRelayClient::new(url, token, timeouts)?,
            poll,
            stall,
            stream: None,
            applied: None,
            pending: None,
            dirty: false,
            resync_at: None,
        })
    }

    fn index_of(&self, id: &str) -> Option<usize> {
        self.prompts.iter().position(|prompt| prompt.id == id)
    }

    /// Every prompt's state in `snapshot`, each version it names that the
    /// handle holds neither (by number and content hash) nor refused read
    /// from the relay.
    fn snapshot_states(
        &self,
        snapshot: Snapshot,
        held: HeldBy<'_>,
    ) -> Result<Vec<(usize, LabelState)>, StoreError> {
        let mut states: Vec<(usize, LabelState)> = (0..self.prompts.len())
            .map(|index| (index, LabelState::Absent))
            .collect();
        for labelled in snapshot.prompts {
            let Some(index) = self.index_of(&labelled.prompt) else {
                continue;
            };
            states[index].1 = self.arms(index, labelled, &[], held)?;
        }
        Ok(states)
    }

    /// The state of the one prompt `change` names, when this binary has it.
    fn change_states(
        &self,
        change: Change,
        held: HeldBy<'_>,
    ) -> Result<Vec<(usize, LabelState)>, StoreError> {
        let Change { labelled, versions } = change;
        let Some(index) = self.index_of(&labelled.prompt) else {
            return Ok(Vec::new());
        };
        Ok(vec![(index, self.arms(index, labelled, &versions, held)?)])
    }

    /// The arms of prompt `index`: each version the handle lacks, taken
    /// from `sent` (a change's) or read from the relay.
    fn arms(
        &self,
        index: usize,
        labelled: LabelledArms,
        sent: &[WireVersion],
        held: HeldBy<'_>,
    ) -> Result<LabelState, StoreError> {
        if labelled.arms.is_empty() {
            return Ok(LabelState::Absent);
        }
        let mut arms = Vec::with_capacity(labelled.arms.len());
        for arm in labelled.arms {
            let holds = match held(index, arm.version) {
                Some(Held::Serving(hash)) => *hash == *arm.content_hash,
                Some(Held::Refused) => true,
                None => false,
            };
            let fetched = if holds {
                None
            } else {
                let wire = sent.iter().find(|wire| {
                    wire.version.prompt_id == labelled.prompt && wire.version.version == arm.version
                });
                Some(match wire {
                    Some(wire) => fetched(wire.clone(), &labelled.prompt, arm.version),
                    None => self.fetch_one(&labelled.prompt, arm.version)?,
                })
            };
            arms.push(LabelArm {
                version: arm.version,
                weight: arm.weight,
                content_hash: Some(arm.content_hash),
                fetched,
            });
        }
        Ok(LabelState::Arms(arms))
    }

    /// Version `version` of `id` from the relay: a version it does not
    /// have is read again later; a relay that fails is lost.
    fn fetch_one(&self, id: &str, version: u32) -> Result<Fetched, StoreError> {
        match self.client.version(id, version) {
            Ok(wire) => Ok(fetched(wire, id, version)),
            Err(error) if error.code() == ErrorCode::NotFound => Ok(Err(error)),
            Err(error) => Err(StoreError(error)),
        }
    }
}

/// `wire` as the judge takes it; `damaged` when it is not version
/// `version` of `id`, which the relay was asked for.
fn fetched(wire: WireVersion, id: &str, version: u32) -> Fetched {
    if wire.version.prompt_id != id || wire.version.version != version {
        return Err(Error::new(
            ErrorCode::Damaged,
            format!(
                "the relay sent version {} of `{}` for version {version} of `{id}`",
                wire.version.version, wire.version.prompt_id
            ),
        ));
    }
    wire.into_fetched()
}

impl Upstream for RelayUpstream {
    fn kind(&self) -> &'static str {
        "prompt relay"
    }

    fn describe(&self) -> String {
        self.client.client().url().to_string()
    }

    fn is_open(&self) -> bool {
        self.stream.is_some()
    }

    /// The label's snapshot (none when the last one applied is still
    /// current), then the stream from its event on: a change made in
    /// between is sent on the stream.
    fn open(&mut self, held: HeldBy<'_>) -> Result<Vec<(usize, LabelState)>, StoreError> {
        self.stream = None;
        let current = if self.dirty {
            None
        } else {
            self.applied.clone()
        };
        self.dirty = false;
        self.resync_at = None;
        let (states, id) = match self
            .client
            .snapshot(&self.label, current.as_deref())
            .map_err(StoreError)?
        {
            Some(snapshot) => {
                let id = snapshot.event_id.clone();
                (self.snapshot_states(snapshot, held)?, Some(id))
            }
            None => (Vec::new(), current),
        };
        self.stream = Some(
            self.client
                .events(&self.label, id.as_deref())
                .map_err(StoreError)?,
        );
        self.pending = id;
        Ok(states)
    }

    fn wait(&mut self, held: HeldBy<'_>, stop: &Receiver<()>) -> Result<Wake, StoreError> {
        let deadline = Instant::now() + self.poll;
        loop {
            if !matches!(stop.try_recv(), Err(TryRecvError::Empty)) {
                return Ok(Wake::Stop);
            }
            if self.resync_at.is_some_and(|at| Instant::now() >= at) {
                let states = self.open(held)?;
                return Ok(Wake::Labels { states, anew: true });
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(Wake::Nothing);
            }
            let Some(stream) = &mut self.stream else {
                return Ok(Wake::Nothing);
            };
            let item = stream
                .next_within(left.min(STREAM_SLICE), self.stall)
                .map_err(StoreError)?;
            let (id, states) = match item {
                None => continue,
                Some(StreamItem::Snapshot { id, snapshot }) => {
                    (id, self.snapshot_states(snapshot, held)?)
                }
                Some(StreamItem::Change { id, change }) => (id, self.change_states(change, held)?),
            };
            self.pending = Some(id);
            // Versions are judged by number and hash: a snapshot's or a
            // change's arms never reuse a served version whose text
            // changed.
            return Ok(Wake::Labels { states, anew: true });
        }
    }

    fn applied(&mut self, complete: bool) {
        let pending = self.pending.take();
        if !complete {
            self.dirty = true;
            self.resync_at
                .get_or_insert_with(|| Instant::now() + self.poll);
        } else if !self.dirty && pending.is_some() {
            self.applied = pending;
        }
    }

    fn close(&mut self) {
        self.stream = None;
        self.pending = None;
    }

    fn earlier(&mut self, id: &str) -> Result<Vec<u32>, StoreError> {
        match self.client.earlier(&self.label, id) {
            Ok(earlier) => Ok(earlier.versions),
            Err(error) if error.code() == ErrorCode::NotFound => Ok(Vec::new()),
            Err(error) => Err(StoreError(error)),
        }
    }

    fn fetch(&mut self, id: &str, versions: &[u32]) -> Result<Vec<Fetched>, StoreError> {
        versions
            .iter()
            .map(|&version| self.fetch_one(id, version))
            .collect()
    }

    fn register(&mut self, build: &BuildRegistration) -> Result<(), Error> {
        self.client.register(&WireBuild::from(build.clone()))
    }

    fn unregister(&mut self, build: &BuildRegistration) -> Result<(), Error> {
        self.client.unregister(&WireBuild::from(build.clone()))
    }
}

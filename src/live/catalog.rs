//! A catalog as a live handle's upstream: read through a read-only
//! connection, followed through `LISTEN` (PostgreSQL) and a poll of its
//! change marker, a SQLite file replaced under it opened anew.

use super::fetch::{
    Fetched, LabelState, StoreError, earlier_versions, fetch_versions, read_labels,
};
use super::upstream::{Held, HeldBy, Upstream, Wake};
use crate::__private::PromptInfo;
use promptpack_catalog::{
    Access, BuildRegistration, Catalog, ChangeMarker, FileIdentity, Timeouts, redact_url,
};
use promptpack_core::error::Error;
use std::path::PathBuf;
#[cfg(feature = "live-postgres")]
use std::sync::mpsc::TryRecvError;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// How long one wait for a notification lasts before the thread looks
/// whether its handle is gone: the bound on how long dropping it takes.
#[cfg(feature = "live-postgres")]
const LISTEN_SLICE: Duration = Duration::from_millis(200);

/// A catalog followed.
pub(super) struct CatalogUpstream {
    prompts: &'static [PromptInfo],
    label: String,
    url: String,
    poll: Duration,
    timeouts: Timeouts,
    catalog: Option<Catalog>,
    /// The file of a SQLite catalog, and its identity when it was opened:
    /// a file moved over it (a backup restored) is opened anew.
    file: Option<PathBuf>,
    identity: Option<FileIdentity>,
    #[cfg(feature = "live-postgres")]
    listener: Option<promptpack_catalog::Listener>,
    /// The change marker every label was last read complete at.
    marker: Option<ChangeMarker>,
    /// The marker read before the labels just read, until applied.
    pending: Option<ChangeMarker>,
}

impl CatalogUpstream {
    pub(super) fn new(
        prompts: &'static [PromptInfo],
        label: String,
        url: String,
        poll: Duration,
        timeouts: Timeouts,
    ) -> CatalogUpstream {
        let file = Catalog::sqlite_file(&url);
        CatalogUpstream {
            prompts,
            label,
            url,
            poll,
            timeouts,
            catalog: None,
            file,
            identity: None,
            #[cfg(feature = "live-postgres")]
            listener: None,
            marker: None,
            pending: None,
        }
    }

    /// The label of every prompt (or of prompt `only`), with every version
    /// it names that is neither served (`anew`: even so) nor refused
    /// already, in one snapshot; the change marker first, so that a change
    /// made while they are read shows at the next poll.
    fn read(
        &mut self,
        only: Option<usize>,
        anew: bool,
        held: HeldBy<'_>,
    ) -> Result<Vec<(usize, LabelState)>, StoreError> {
        let Some(catalog) = &mut self.catalog else {
            return Ok(Vec::new());
        };
        self.pending = Some(catalog.change_marker().map_err(StoreError)?);
        let have = |index: usize, version: u32| match held(index, version) {
            Some(Held::Refused) => true,
            Some(Held::Serving(_)) => !anew,
            None => false,
        };
        read_labels(catalog, self.prompts, &self.label, only, have)
    }

    /// Waits for a notification (PostgreSQL) until the next poll, then
    /// polls the change marker.
    fn changed(&mut self, stop: &Receiver<()>) -> Result<Change, StoreError> {
        let deadline = Instant::now() + self.poll;
        #[cfg(feature = "live-postgres")]
        if let Some(listener) = &mut self.listener {
            loop {
                if !matches!(stop.try_recv(), Err(TryRecvError::Empty)) {
                    return Ok(Change::Stop);
                }
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                if let Some(change) = listener.wait(left.min(LISTEN_SLICE)).map_err(StoreError)? {
                    return Ok(Change::Prompt(change.prompt_id));
                }
            }
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if !matches!(stop.recv_timeout(left), Err(RecvTimeoutError::Timeout)) {
            return Ok(Change::Stop);
        }
        if let Some(file) = &self.file
            && FileIdentity::of(file) != self.identity
        {
            return Ok(Change::Replaced);
        }
        let Some(catalog) = &mut self.catalog else {
            return Ok(Change::Nothing);
        };
        let marker = catalog.change_marker().map_err(StoreError)?;
        if self.marker == Some(marker) {
            return Ok(Change::Nothing);
        }
        Ok(Change::Everything)
    }
}

/// What the catalog says changed.
enum Change {
    Stop,
    /// Prompt `id` changed (a notification).
    #[cfg(feature = "live-postgres")]
    Prompt(String),
    Replaced,
    Everything,
    Nothing,
}

impl Upstream for CatalogUpstream {
    fn kind(&self) -> &'static str {
        "prompt catalog"
    }

    fn describe(&self) -> String {
        redact_url(&self.url)
    }

    fn is_open(&self) -> bool {
        self.catalog.is_some()
    }

    fn open(&mut self, held: HeldBy<'_>) -> Result<Vec<(usize, LabelState)>, StoreError> {
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
        self.read(None, true, held)
    }

    fn wait(&mut self, held: HeldBy<'_>, stop: &Receiver<()>) -> Result<Wake, StoreError> {
        match self.changed(stop)? {
            Change::Stop => Ok(Wake::Stop),
            // The marker moves on too: every other change up to it has its
            // own notification on the way (the listener stays connected;
            // losing it is losing the store, and a reconnect reads
            // everything), so the next poll need not read every label.
            #[cfg(feature = "live-postgres")]
            Change::Prompt(id) => {
                let Some(index) = self.prompts.iter().position(|prompt| prompt.id == id) else {
                    if let Some(catalog) = &mut self.catalog {
                        self.marker = Some(catalog.change_marker().map_err(StoreError)?);
                    }
                    return Ok(Wake::Nothing);
                };
                let states = self.read(Some(index), false, held)?;
                Ok(Wake::Labels {
                    states,
                    anew: false,
                })
            }
            Change::Replaced => {
                log::info!(
                    "promptpack: the prompt catalog's file was replaced; reading the new one ({})",
                    redact_url(&self.url)
                );
                Ok(Wake::Reopen)
            }
            Change::Everything => {
                let states = self.read(None, false, held)?;
                Ok(Wake::Labels {
                    states,
                    anew: false,
                })
            }
            Change::Nothing => Ok(Wake::Nothing),
        }
    }

    fn applied(&mut self, complete: bool) {
        // A version left unread: the next poll reads every label again,
        // changed or not.
        let pending = self.pending.take();
        self.marker = if complete { pending } else { None };
    }

    fn close(&mut self) {
        self.catalog = None;
        #[cfg(feature = "live-postgres")]
        {
            self.listener = None;
        }
        self.marker = None;
        self.pending = None;
    }

    fn earlier(&mut self, id: &str) -> Result<Vec<u32>, StoreError> {
        match &mut self.catalog {
            Some(catalog) => earlier_versions(catalog, id, &self.label),
            None => Ok(Vec::new()),
        }
    }

    fn fetch(&mut self, id: &str, versions: &[u32]) -> Result<Vec<Fetched>, StoreError> {
        match &mut self.catalog {
            Some(catalog) => fetch_versions(catalog, id, versions),
            None => Ok(Vec::new()),
        }
    }

    /// Through a writable connection of its own that lives for this one
    /// write (the handle itself only reads).
    fn register(&mut self, build: &BuildRegistration) -> Result<(), Error> {
        Catalog::connect_with(&self.url, Access::Write, &self.timeouts)
            .and_then(|mut catalog| catalog.register_build(build))
    }

    fn unregister(&mut self, build: &BuildRegistration) -> Result<(), Error> {
        Catalog::connect_with(&self.url, Access::Write, &self.timeouts)
            .and_then(|mut catalog| catalog.unregister_build(build))
            .map(|_| ())
    }
}

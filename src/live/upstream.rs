//! Where a live handle's thread reads its label from: one small interface
//! ([`Upstream`]) over a catalog (`sqlite:`, `postgres://`) and a relay
//! (`http://`). The thread judges, applies and reports what either gives
//! it alike: versions are checked against the binary's contract in the
//! handle, whatever brought their text.

use super::fetch::{Fetched, LabelState, StoreError};
use promptpack_catalog::BuildRegistration;
use promptpack_core::error::Error;
use std::sync::Arc;
use std::sync::mpsc::Receiver;

/// What the handle holds of one version of one prompt: an upstream reads
/// again none it holds (the catalog: unless it reads everything anew; a
/// relay: unless its content hash changed).
pub(super) enum Held {
    /// It serves, with this content hash (which only a relay compares: a
    /// catalog's reads judge by number, or read everything anew).
    Serving(#[cfg_attr(not(feature = "live-relay"), allow(dead_code))] Arc<str>),
    /// It was refused for its own content.
    Refused,
}

/// What the handle holds of version `.1` of prompt `.0` (by index).
pub(super) type HeldBy<'a> = &'a dyn Fn(usize, u32) -> Option<Held>;

/// What a wait for changes ended with.
pub(super) enum Wake {
    /// The handle is gone.
    Stop,
    /// Labels read: apply them (`anew`: no served version reused by its
    /// number alone).
    Labels {
        states: Vec<(usize, LabelState)>,
        anew: bool,
    },
    /// The store was replaced (a SQLite file moved over): forget what was
    /// refused and open it anew.
    Reopen,
    /// Nothing changed.
    Nothing,
}

/// A source of a label's versions.
pub(super) trait Upstream: Send {
    /// What it is, for logs: `prompt catalog` or `prompt relay`.
    fn kind(&self) -> &'static str;

    /// Where it is, for logs (no password).
    fn describe(&self) -> String;

    /// Whether it is open (connected, or following).
    fn is_open(&self) -> bool;

    /// Opens it (again) and reads every label, to apply anew.
    fn open(&mut self, held: HeldBy<'_>) -> Result<Vec<(usize, LabelState)>, StoreError>;

    /// Waits until something changed, the handle is gone (`stop`), or
    /// the poll interval passed.
    fn wait(&mut self, held: HeldBy<'_>, stop: &Receiver<()>) -> Result<Wake, StoreError>;

    /// What [`Upstream::open`] or [`Upstream::wait`] read was applied;
    /// `complete`: no version was left unread, so that what it read need
    /// not be read again.
    fn applied(&mut self, complete: bool);

    /// Drops the connections (the store failed).
    fn close(&mut self);

    /// The versions the label of prompt `id` pointed at before, newest
    /// first.
    fn earlier(&mut self, id: &str) -> Result<Vec<u32>, StoreError>;

    /// Versions `versions` of prompt `id`, in that order.
    fn fetch(&mut self, id: &str, versions: &[u32]) -> Result<Vec<Fetched>, StoreError>;

    /// Registers the build.
    fn register(&mut self, build: &BuildRegistration) -> Result<(), Error>;

    /// Takes the build's registration away.
    fn unregister(&mut self, build: &BuildRegistration) -> Result<(), Error>;
}

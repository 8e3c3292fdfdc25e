//! Live prompts: the generated, typed prompts served from a label of a
//! prompt catalog, so that a published version reaches running binaries
//! without a rebuild, and only when the binary can render it.
//!
//! ```no_run
//! # mod generated {
//! #     // What `promptpack::include_prompts!()` brings in.
//! #     pub type Prompts = promptpack::live::Prompts<PromptId>;
//! #     #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
//! #     pub enum PromptId { AgentSystem }
//! #     impl std::fmt::Display for PromptId {
//! #         fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result { f.write_str("agent-system") }
//! #     }
//! #     impl promptpack::live::GeneratedPrompts for PromptId {
//! #         fn __source() -> &'static promptpack::__private::DevSource { unimplemented!() }
//! #         fn __index(self) -> usize { 0 }
//! #     }
//! # }
//! # use generated::*;
//! # fn main() -> Result<(), promptpack::Error> {
//! let prompts = Prompts::connect("postgres://catalog.internal/prompts")
//!     .label("production")
//!     .start()?;
//! let events = prompts.subscribe();
//! std::thread::spawn(move || {
//!     for event in events {
//!         eprintln!("prompts: {event}");
//!     }
//! });
//! // Then, on every request, the same typed call as the free `build_prompt`:
//! // let prompt = prompts.build_prompt(PromptId::AgentSystem, AgentSystemVars { .. })?;
//! // log::info!("prompt {}", prompt.provenance);
//! # Ok(())
//! # }
//! ```
//!
//! - **Checked against the binary**: each labelled version is compiled and
//!   checked against the contract of the vars struct this binary was built
//!   with (its variables, their kinds, the values of its enums). A version
//!   that needs a variable the struct lacks, or uses one with another kind,
//!   is refused (`contract_violation`, or the template's own error code for
//!   text that does not compile), reported once as [`LiveEvent::Refused`],
//!   and the previous good version keeps serving. A process that starts
//!   while its label points at such a version serves the newest version
//!   the label pointed at before that it can render (up to 16 back), as a
//!   process running all along would, and the embedded text when there is
//!   none. So old and new binaries follow one label side by side.
//! - **Never waits**: versions are fetched and compiled on a background
//!   thread and swapped in atomically; a render reads the current set and
//!   interprets its compiled program. A store that is away never fails a
//!   render. Every wait of that thread on the store is bounded
//!   ([`Builder::timeouts`]): a server that stops answering is reported
//!   ([`LiveEvent::StoreDown`]) within the poll interval plus the
//!   statement bound (15 s by default on PostgreSQL), and dropping the
//!   last handle returns within about a second whatever the network does.
//! - **One snapshot**: a label and the versions it points at are read in
//!   one read transaction, and only what a version itself holds refuses it
//!   (it does not compile, it leaves the contract, the store holds it
//!   damaged). A version the catalog cannot give this time (deleted
//!   meanwhile, the store away) is read again at the next change or poll.
//! - **Follows changes**: PostgreSQL announces every change on a channel
//!   (`LISTEN`), with a poll of the catalog's change marker as the safety
//!   net; SQLite is polled, and a catalog file replaced under the handle
//!   (a backup moved over it) is noticed at the next poll and opened anew.
//!   A handle reads through a read-only connection: a catalog it may only
//!   read is followed too.
//! - **Registered**: the handle registers its build in the catalog (its
//!   process name, [`Builder::process_name`], the label and the binary's
//!   contract) when it connects and about every minute, through a short
//!   writable connection of its own; where it may not write, it serves
//!   unregistered, with no event, trying again a minute later.
//! - **Through a relay**: with the `live-relay` feature,
//!   `Prompts::connect("http://relay:7879")` follows a relay
//!   (`promptpack relay`, which holds the catalog connection of a whole
//!   fleet) instead of the catalog: a snapshot of the label, then its
//!   stream of changes, resumed where it left off. The relay sends text;
//!   the handle judges every version against its contract as above, and
//!   registers its build through the relay. It asks with the token of a
//!   catalog user ([`Builder::token`] or `$PROMPTPACK_RELAY_TOKEN`), over
//!   plain HTTP on a private network (TLS is terminated in front of a
//!   relay). A relay that sends nothing, not even its heartbeat, for
//!   [`Builder::relay_stall`] (15 s by default) is reported down.
//! - **Reconnects with jitter**: a lost store or relay is tried again
//!   after a random time up to 1 s, then up to 2, 4 and 5 s (each wait
//!   between half and all of that), so that a fleet comes back spread out.
//! - **Split labels**: [`Prompts::build_prompt_for`] picks a split label's
//!   arm by a stable hash of a caller's key, so one user sees one arm.
//! - **Provenance**: every [`Prompt`](crate::Prompt) says where its text came
//!   from ([`Provenance`](crate::Provenance)): the catalog's prompt, version,
//!   label, the arm's share and the content hash, or `embedded`.

mod backoff;
mod catalog;
mod event;
mod fetch;
mod handle;
#[cfg(feature = "live-relay")]
mod relay;
mod served;
mod split;
mod upstream;
mod worker;

pub use event::LiveEvent;
pub use handle::{Builder, Prompts, RELAY_TOKEN_VAR};
pub use split::arm_bucket;

/// The generated `PromptId` of a crate whose build script ran
/// `promptpack_build::compile()`: what a [`Prompts`] handle serves. It is
/// implemented by the generated code (when promptpack's `live` feature is
/// on), never by hand.
pub trait GeneratedPrompts:
    Copy + Eq + std::hash::Hash + std::fmt::Debug + std::fmt::Display + Send + Sync + 'static
{
    /// The compiled prompts: ids, contracts, syntax.
    #[doc(hidden)]
    fn __source() -> &'static crate::__private::DevSource;

    /// The position of this id in [`GeneratedPrompts::__source`]'s prompts.
    #[doc(hidden)]
    fn __index(self) -> usize;
}

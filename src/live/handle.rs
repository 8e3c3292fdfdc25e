//! The handle an application renders through: [`Prompts`], started by a
//! [`Builder`].

use super::GeneratedPrompts;
use super::catalog::CatalogUpstream;
use super::event::LiveEvent;
use super::fetch::StoreError;
use super::upstream::Upstream;
use super::worker::{Shared, Worker};
use crate::__private::wrong_vars;
use crate::prompt::Prompt;
use crate::provenance::Provenance;
use crate::typed::TypedVars;
use promptpack_catalog::Timeouts;
use promptpack_catalog::{BuildRegistration, Contract, check_process_name, redact_url};
use promptpack_core::error::{Error, ErrorCode, Result};
use promptpack_core::render::MissingVars;
use std::fmt;
use std::marker::PhantomData;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

/// How often a SQLite catalog is polled for changes by default.
const SQLITE_POLL: Duration = Duration::from_millis(500);
/// How often a PostgreSQL catalog is polled by default, as the safety net
/// under its notifications.
const POSTGRES_POLL: Duration = Duration::from_secs(5);
/// How often a relay's follower comes back from its stream by default: to
/// register on time, and to ask again for a version the relay could not
/// give.
const RELAY_POLL: Duration = Duration::from_secs(5);
/// How long a relay's stream may be silent (no event, not even its
/// heartbeat, every 5 s) before the relay is taken for stalled: three
/// heartbeats, as docs/relay.md says.
const RELAY_STALL: Duration = Duration::from_secs(15);
/// Where the token a relay is asked with comes from, when
/// [`Builder::token`] gives none.
pub const RELAY_TOKEN_VAR: &str = "PROMPTPACK_RELAY_TOKEN";
/// How long dropping the last handle waits for its thread to stop: a
/// thread blocked on the network longer is left to end by itself when its
/// wait (bounded by [`Builder::timeouts`]) ends.
const STOP_WAIT: Duration = Duration::from_secs(1);

/// The generated prompts, served from a label of a prompt catalog: the
/// same typed `build_prompt` as the generated free function, with text
/// that follows the catalog without a rebuild.
///
/// Cheap to clone (one reference count), `Send` and `Sync`: build one at
/// start-up and share it. The background thread stops when the last clone
/// is dropped. The generated code names it for its own `PromptId`:
/// `Prompts::connect(url)`.
pub struct Prompts<Id: GeneratedPrompts> {
    inner: Arc<Inner<Id>>,
}

struct Inner<Id> {
    shared: Arc<Shared>,
    label: String,
    stop: Option<Sender<()>>,
    /// Closed when the thread ends. In a mutex only to make the handle
    /// `Sync`: the drop alone reads it, through `get_mut`.
    ended: Mutex<Receiver<()>>,
    worker: Option<JoinHandle<()>>,
    id: PhantomData<fn() -> Id>,
}

impl<Id> Drop for Inner<Id> {
    fn drop(&mut self) {
        // Closing the channel wakes the thread; joining makes "dropped"
        // mean "stopped", unless the thread is blocked on a store that
        // does not answer: then it is left to end by itself when its wait
        // runs out, and the drop returns.
        drop(self.stop.take());
        let ended = self.ended.get_mut().unwrap_or_else(PoisonError::into_inner);
        let ended = !matches!(
            ended.recv_timeout(STOP_WAIT),
            Err(RecvTimeoutError::Timeout)
        );
        if let Some(worker) = self.worker.take()
            && ended
        {
            let _ = worker.join();
        }
    }
}

impl<Id: GeneratedPrompts> Clone for Prompts<Id> {
    fn clone(&self) -> Self {
        Prompts {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<Id: GeneratedPrompts> fmt::Debug for Prompts<Id> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Prompts")
            .field("label", &self.inner.label)
            .field("connected", &self.is_connected())
            .finish_non_exhaustive()
    }
}

/// How a [`Prompts`] handle follows its catalog; [`Builder::start`] starts
/// it.
#[must_use = "a builder does nothing until `start()`"]
pub struct Builder<Id> {
    url: String,
    label: String,
    poll: Option<Duration>,
    timeouts: Timeouts,
    process: Option<String>,
    token: Option<String>,
    relay_stall: Duration,
    subscribers: Vec<Sender<LiveEvent>>,
    id: PhantomData<fn() -> Id>,
}

impl<Id> fmt::Debug for Builder<Id> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Builder")
            .field("url", &redact_url(&self.url))
            .field("label", &self.label)
            .field("poll", &self.poll)
            .field("timeouts", &self.timeouts)
            .field("process", &self.process)
            .field("token", &self.token.as_ref().map(|_| "…"))
            .field("relay_stall", &self.relay_stall)
            .finish_non_exhaustive()
    }
}

impl<Id: GeneratedPrompts> Prompts<Id> {
    /// Follows the catalog at `url` (`sqlite:PATH`, or `postgres://…` with
    /// the `live-postgres` feature), or the relay at `url` (`http://host:port`
    /// with the `live-relay` feature, and a [`Builder::token`]): label
    /// `production` unless [`Builder::label`] says otherwise. The catalog is
    /// only read; its schema must exist (`promptpack catalog init`).
    pub fn connect(url: impl Into<String>) -> Builder<Id> {
        Builder {
            url: url.into(),
            label: "production".to_string(),
            poll: None,
            timeouts: Timeouts::DEFAULT,
            process: None,
            token: None,
            relay_stall: RELAY_STALL,
            subscribers: Vec::new(),
            id: PhantomData,
        }
    }

    /// Renders prompt `id` from the version its label serves (the heaviest
    /// arm of a split label), or from the embedded text when the catalog has
    /// none this binary can render. Never waits for the store and never
    /// fails because it is away.
    ///
    /// # Errors
    /// `wrong_vars` when `vars` belongs to another prompt than `id`, as the
    /// generated `build_prompt`; what the embedded path returns (in dev
    /// builds with hot reload, the files on disk).
    pub fn build_prompt<V>(&self, id: Id, vars: V) -> Result<Prompt<Id>>
    where
        V: TypedVars<Id = Id>,
    {
        self.render(None, id, &vars)
    }

    /// Like [`Prompts::build_prompt`], with the arm of a split label chosen
    /// by a stable hash of `key` (a user or session id): one key sees one
    /// arm, in every process and across restarts, while the weights stay
    /// ([`arm_bucket`](super::arm_bucket)). The prompt's provenance names
    /// the arm.
    ///
    /// # Errors
    /// As [`Prompts::build_prompt`].
    pub fn build_prompt_for<V>(&self, key: &str, id: Id, vars: V) -> Result<Prompt<Id>>
    where
        V: TypedVars<Id = Id>,
    {
        self.render(Some(key), id, &vars)
    }

    fn render<V>(&self, key: Option<&str>, id: Id, vars: &V) -> Result<Prompt<Id>>
    where
        V: TypedVars<Id = Id>,
    {
        if id != V::ID {
            return Err(wrong_vars(&id.to_string(), &V::ID.to_string()));
        }
        let served = self.inner.shared.served.load();
        let index = id.__index();
        let Some(prompt) = served.prompts.get(index).and_then(Option::as_ref) else {
            return vars.build();
        };
        let name = Id::__source().prompts[index].id;
        let Some(arm) = prompt.arm(name, key) else {
            return vars.build();
        };
        // A span of this render only on the catalog's path: the embedded
        // one above is the generated `build`'s, which has its own.
        crate::trace::render(name, || {
            let rendered = arm.library.render_typed(name, vars, MissingVars::Error)?;
            Ok(Prompt {
                id,
                system: rendered.system,
                user: rendered.user,
                messages: rendered.messages,
                hash: rendered.hash,
                provenance: arm.provenance.clone(),
                exchange: rendered.exchange,
            })
        })
    }

    /// Where prompt `id`'s text comes from now: the catalog version of its
    /// label's heaviest arm, or [`Provenance::Embedded`] when the catalog
    /// serves none (renders then take the free `build_prompt`'s path: the
    /// compiled-in text, or in a debug build with `hot-reload` the dev
    /// reload of the files, whose prompts say `loaded`).
    pub fn serving(&self, id: Id) -> Provenance {
        let served = self.inner.shared.served.load();
        served
            .prompts
            .get(id.__index())
            .and_then(Option::as_ref)
            .and_then(|prompt| prompt.arm("", None))
            .map_or(Provenance::Embedded, |arm| arm.provenance.clone())
    }

    /// The label this handle follows.
    pub fn label(&self) -> &str {
        &self.inner.label
    }

    /// Whether the catalog was reachable at the last read.
    pub fn is_connected(&self) -> bool {
        self.inner.shared.connected.load(Ordering::Acquire)
    }

    /// A channel of what happens from now on: versions served or refused,
    /// the store lost and back. Events before this call are not replayed:
    /// [`Builder::subscribe`] sees those of the start too.
    pub fn subscribe(&self) -> Receiver<LiveEvent> {
        let (sender, receiver) = channel();
        self.inner
            .shared
            .subscribers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(sender);
        receiver
    }
}

impl<Id: GeneratedPrompts> Builder<Id> {
    /// Follows `label` (`production` by default; `latest` follows every
    /// new version).
    pub fn label(mut self, label: impl Into<String>) -> Builder<Id> {
        self.label = label.into();
        self
    }

    /// Reads the catalog's change marker every `interval`: how a SQLite
    /// catalog's changes are found (every 500 ms by default), and the
    /// safety net under PostgreSQL's notifications (every 5 s by default).
    /// Following a relay, how soon a version it could not give is asked for
    /// again (5 s by default); its changes come on its stream.
    pub fn poll_every(mut self, interval: Duration) -> Builder<Id> {
        self.poll = Some(interval);
        self
    }

    /// How long the handle waits for its store: `connect` to connect
    /// (PostgreSQL: TCP and the server's start-up answer), `io` for each
    /// statement's answer and the start and end of each transaction (by
    /// default 10 s each). A server that stops answering is reported
    /// ([`LiveEvent::StoreDown`]) within the poll interval plus `io` (15 s
    /// by default on PostgreSQL), and the handle keeps serving what it
    /// loaded. Renders never wait for the store, and dropping the last
    /// handle returns within about a second whatever the bounds. A
    /// PostgreSQL URL's own `connect_timeout` wins over `connect`; SQLite
    /// waits on no network, and neither applies to it.
    pub fn timeouts(mut self, connect: Duration, io: Duration) -> Builder<Id> {
        self.timeouts = Timeouts::DEFAULT.with_connect(connect).with_io(io);
        self
    }

    /// The name this process registers its build under in the catalog
    /// (with the label it follows and the contract of its prompts, for a
    /// console to show what serves what): by default the executable's file
    /// name and the process id, `agent-service#1234`. 1 to 200 bytes, no
    /// control characters. A handle registers when it connects and about
    /// every minute while it runs, through a short writable connection of
    /// its own; a catalog it may only read is followed all the same,
    /// without a registration.
    pub fn process_name(mut self, name: impl Into<String>) -> Builder<Id> {
        self.process = Some(name.into());
        self
    }

    /// The token a relay is asked with (`Authorization: Bearer`): a catalog
    /// user's, of any role. Without it, `$PROMPTPACK_RELAY_TOKEN`. Only a
    /// relay (`http://…`) needs one; a catalog URL carries its own
    /// credentials.
    pub fn token(mut self, token: impl Into<String>) -> Builder<Id> {
        self.token = Some(token.into());
        self
    }

    /// How long a relay's stream may send nothing, not even its heartbeat
    /// (a comment every 5 s unless the relay's `--heartbeat` says
    /// otherwise), before the relay is taken for stalled: reported
    /// ([`LiveEvent::StoreDown`]) and reconnected. 15 s by default, three
    /// heartbeats. Requests to a relay are bounded by [`Builder::timeouts`].
    pub fn relay_stall(mut self, stall: Duration) -> Builder<Id> {
        self.relay_stall = stall;
        self
    }

    /// A channel of every event from the start on, including the start's
    /// own (the versions first served, a store that is down).
    pub fn subscribe(&mut self) -> Receiver<LiveEvent> {
        let (sender, receiver) = channel();
        self.subscribers.push(sender);
        receiver
    }

    /// Reads every label once, then follows changes on a background
    /// thread. The first read is this call's: a store that does not answer
    /// holds it as long as [`Builder::timeouts`] allow (connecting, then
    /// each answer), never longer. When the store cannot be reached, the handle serves the
    /// embedded text, says so once ([`LiveEvent::StoreDown`] and a log
    /// warning) and keeps trying with backoff.
    ///
    /// # Errors
    /// `invalid_request` for a URL that names no store (or one this build
    /// lacks: PostgreSQL needs the `live-postgres` feature, a relay
    /// `live-relay`), a relay URL without a token ([`Builder::token`], or
    /// `$PROMPTPACK_RELAY_TOKEN`) or with `https://`, an empty label or a
    /// [`Builder::process_name`] that is not one; `io` when the thread
    /// cannot start.
    pub fn start(self) -> Result<Prompts<Id>> {
        if self.label.is_empty() {
            return Err(Error::new(
                ErrorCode::InvalidRequest,
                "a live handle needs a label to follow",
            ));
        }
        let process = match self.process {
            Some(process) => {
                check_process_name(&process)?;
                process
            }
            None => default_process_name(),
        };
        let relay = is_relay_url(&self.url);
        let poll = self.poll.unwrap_or(if relay {
            RELAY_POLL
        } else if self.url.starts_with("postgres") {
            POSTGRES_POLL
        } else {
            SQLITE_POLL
        });
        let prompts = Id::__source().prompts;
        let registration = BuildRegistration {
            process,
            label: self.label.clone(),
            contract: Contract::new(
                prompts
                    .iter()
                    .map(|prompt| (prompt.id.to_string(), prompt.contract()))
                    .collect(),
            ),
        };
        let upstream: Box<dyn Upstream> = if relay {
            relay_upstream(
                prompts,
                &self.label,
                &self.url,
                self.token,
                self.timeouts,
                poll,
                self.relay_stall,
            )?
        } else {
            Box::new(CatalogUpstream::new(
                prompts,
                self.label.clone(),
                self.url,
                poll,
                self.timeouts,
            ))
        };
        let shared = Arc::new(Shared::new(prompts.len(), self.subscribers));
        let (stop, stopped) = channel();
        let mut worker = Worker::new(
            Arc::clone(&shared),
            Id::__source(),
            upstream,
            registration,
            stopped,
        );
        match worker.connect() {
            Ok(()) => {}
            Err(StoreError(error)) if error.code() == ErrorCode::InvalidRequest => {
                return Err(error);
            }
            Err(error) => worker.lost(error),
        }
        let (ending, ended) = channel::<()>();
        let thread = std::thread::Builder::new()
            .name("promptpack-live".into())
            .spawn(move || {
                // Dropped when the thread ends, even by a panic.
                let _ending = ending;
                worker.run();
            })
            .map_err(|error| {
                Error::new(
                    ErrorCode::Io,
                    format!("cannot start the live prompts' thread: {error}"),
                )
            })?;
        Ok(Prompts {
            inner: Arc::new(Inner {
                shared,
                label: self.label,
                stop: Some(stop),
                ended: Mutex::new(ended),
                worker: Some(thread),
                id: PhantomData,
            }),
        })
    }
}

/// Whether `url` names a relay (`http://`, `https://`) rather than a
/// catalog: the scheme decides.
fn is_relay_url(url: &str) -> bool {
    let scheme = url.split_once("://").map_or("", |(scheme, _)| scheme);
    scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https")
}

/// The upstream of a relay at `url`, asked with `token` or else
/// `$PROMPTPACK_RELAY_TOKEN`.
#[cfg(feature = "live-relay")]
fn relay_upstream(
    prompts: &'static [crate::__private::PromptInfo],
    label: &str,
    url: &str,
    token: Option<String>,
    timeouts: Timeouts,
    poll: Duration,
    stall: Duration,
) -> Result<Box<dyn Upstream>> {
    let token = token
        .or_else(|| std::env::var(RELAY_TOKEN_VAR).ok())
        .filter(|token| !token.is_empty())
        .ok_or_else(|| {
            Error::new(
                ErrorCode::InvalidRequest,
                format!(
                    "following the relay at {url} needs the token of a catalog user: \
                     `Builder::token` or ${RELAY_TOKEN_VAR}"
                ),
            )
        })?;
    let upstream = super::relay::RelayUpstream::new(
        prompts,
        label.to_string(),
        url,
        token,
        timeouts,
        poll,
        stall,
    )?;
    Ok(Box::new(upstream))
}

/// Without the `live-relay` feature: a relay URL is refused at start.
#[cfg(not(feature = "live-relay"))]
fn relay_upstream(
    _prompts: &'static [crate::__private::PromptInfo],
    _label: &str,
    url: &str,
    _token: Option<String>,
    _timeouts: Timeouts,
    _poll: Duration,
    _stall: Duration,
) -> Result<Box<dyn Upstream>> {
    Err(Error::new(
        ErrorCode::InvalidRequest,
        format!("`{url}` names a relay: following one needs promptpack's `live-relay` feature"),
    ))
}

/// The executable's file name and the process id (`agent-service#1234`),
/// made a valid process name whatever the file is called: control
/// characters replaced, cut to fit.
fn default_process_name() -> String {
    let executable = std::env::current_exe()
        .ok()
        .and_then(|path| {
            path.file_name()
                .map(|name| name.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "process".to_string());
    let mut name: String = executable
        .chars()
        .map(|c| if c.is_control() { '_' } else { c })
        .collect();
    let pid = format!("#{}", std::process::id());
    // 200 bytes in all, cut at a character boundary.
    while name.len() + pid.len() > 200 {
        name.pop();
    }
    name + &pid
}

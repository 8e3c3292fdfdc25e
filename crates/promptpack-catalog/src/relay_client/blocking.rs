//! [`BlockingRelayClient`]: the relay client's calls from a std thread
//! (a live handle's), each driven to its end on a current-thread tokio
//! runtime the client owns, as the PostgreSQL store drives its client.

use super::{EventStream, RelayClient, RelayUser, StreamItem};
use crate::relay::{Earlier, Snapshot, WireBuild, WireVersion};
use crate::{Error, ErrorCode, Timeouts};
use std::sync::Arc;
use std::time::Duration;

/// A relay's client for a thread that is not async: the calls of
/// [`RelayClient`], each returning when its answer came or its bound ran
/// out ([`Timeouts`]).
#[derive(Debug)]
pub struct BlockingRelayClient {
    client: RelayClient,
    runtime: Arc<Runtime>,
}

/// A current-thread runtime that waits for nothing when dropped: dropping
/// a client or a stream returns at once whatever the network does (a name
/// lookup may still run on its blocking thread).
#[derive(Debug)]
struct Runtime(Option<tokio::runtime::Runtime>);

impl Drop for Runtime {
    fn drop(&mut self) {
        if let Some(runtime) = self.0.take() {
            runtime.shutdown_background();
        }
    }
}

impl Runtime {
    fn block_on<F: Future>(&self, future: F) -> Result<F::Output, Error> {
        match &self.0 {
            Some(runtime) => Ok(runtime.block_on(future)),
            None => Err(Error::new(
                ErrorCode::Unavailable,
                "the relay client's runtime has stopped",
            )),
        }
    }
}

impl BlockingRelayClient {
    /// As [`RelayClient::new`], with a runtime of its own.
    ///
    /// # Errors
    /// As [`RelayClient::new`]; `unavailable` when the runtime cannot
    /// start.
    pub fn new(
        base_url: &str,
        token: impl Into<String>,
        timeouts: Timeouts,
    ) -> Result<BlockingRelayClient, Error> {
        let client = RelayClient::new(base_url, token, timeouts)?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|error| {
                Error::new(
                    ErrorCode::Unavailable,
                    format!("cannot start the relay client's runtime: {error}"),
                )
                .caused_by(error)
            })?;
        Ok(BlockingRelayClient {
            client,
            runtime: Arc::new(Runtime(Some(runtime))),
        })
    }

    /// The async client it drives.
    pub fn client(&self) -> &RelayClient {
        &self.client
    }

    /// [`RelayClient::snapshot`].
    ///
    /// # Errors
    /// As [`RelayClient::snapshot`].
    pub fn snapshot(
        &self,
        label: &str,
        if_none_match: Option<&str>,
    ) -> Result<Option<Snapshot>, Error> {
        self.runtime
            .block_on(self.client.snapshot(label, if_none_match))?
    }

    /// [`RelayClient::version`].
    ///
    /// # Errors
    /// As [`RelayClient::version`].
    pub fn version(&self, prompt: &str, version: u32) -> Result<WireVersion, Error> {
        self.runtime
            .block_on(self.client.version(prompt, version))?
    }

    /// [`RelayClient::earlier`].
    ///
    /// # Errors
    /// As [`RelayClient::earlier`].
    pub fn earlier(&self, label: &str, prompt: &str) -> Result<Earlier, Error> {
        self.runtime.block_on(self.client.earlier(label, prompt))?
    }

    /// [`RelayClient::register`].
    ///
    /// # Errors
    /// As [`RelayClient::register`].
    pub fn register(&self, build: &WireBuild) -> Result<(), Error> {
        self.runtime.block_on(self.client.register(build))?
    }

    /// [`RelayClient::unregister`].
    ///
    /// # Errors
    /// As [`RelayClient::unregister`].
    pub fn unregister(&self, build: &WireBuild) -> Result<(), Error> {
        self.runtime.block_on(self.client.unregister(build))?
    }

    /// [`RelayClient::me`].
    ///
    /// # Errors
    /// As [`RelayClient::me`].
    pub fn me(&self) -> Result<RelayUser, Error> {
        self.runtime.block_on(self.client.me())?
    }

    /// [`RelayClient::events`]: a stream read on this client's runtime.
    ///
    /// # Errors
    /// As [`RelayClient::events`].
    pub fn events(
        &self,
        label: &str,
        last_event_id: Option<&str>,
    ) -> Result<BlockingEventStream, Error> {
        let stream = self
            .runtime
            .block_on(self.client.events(label, last_event_id))??;
        Ok(BlockingEventStream {
            stream,
            runtime: Arc::clone(&self.runtime),
        })
    }
}

/// An [`EventStream`] read from a std thread.
#[derive(Debug)]
pub struct BlockingEventStream {
    /// First: the connection closes while its runtime still runs.
    stream: EventStream,
    runtime: Arc<Runtime>,
}

impl BlockingEventStream {
    /// [`EventStream::next`].
    ///
    /// # Errors
    /// As [`EventStream::next`].
    pub fn next(&mut self, stall: Duration) -> Result<StreamItem, Error> {
        self.runtime.block_on(self.stream.next(stall))?
    }

    /// [`EventStream::next_within`]: `None` when nothing came for `wait`.
    ///
    /// # Errors
    /// As [`EventStream::next`].
    pub fn next_within(
        &mut self,
        wait: Duration,
        stall: Duration,
    ) -> Result<Option<StreamItem>, Error> {
        self.runtime
            .block_on(self.stream.next_within(wait, stall))?
    }
}

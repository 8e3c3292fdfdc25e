//! Accepting connections with bounds: at most so many served at once, and
//! none held by a client that sends its headers slowly or never.
//!
//! `axum::serve` has neither bound, so a thousand connections trickling a
//! header line every few seconds held the process's open files until a
//! real user could not connect. Here a connection is accepted only with a
//! free slot (the others wait in the system's queue, not in the process),
//! and hyper closes one whose headers take longer than the header timeout,
//! which also bounds how long a kept-alive connection stays idle. A whole
//! request is bounded by [`crate::guard`].

use crate::request_log::{self, Peer};
use crate::server::io_error;
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tower_service::Service;

/// A multi-threaded runtime named `name` (`promptpack-console`,
/// `promptpack-relay`) and `addr` bound on it, with the address bound (the
/// port the system chose for port 0): what a console and a relay make
/// before they serve.
pub(crate) fn bind(
    addr: std::net::SocketAddr,
    name: &str,
) -> Result<(tokio::runtime::Runtime, TcpListener, std::net::SocketAddr), promptpack_catalog::Error>
{
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name(name)
        .build()
        .map_err(|e| io_error(&format!("cannot start {name}'s runtime"), &e))?;
    let listener = runtime
        .block_on(TcpListener::bind(addr))
        .map_err(|e| io_error(&format!("cannot listen on {addr}"), &e))?;
    let local_addr = listener
        .local_addr()
        .map_err(|e| io_error("cannot read the bound address", &e))?;
    Ok((runtime, listener, local_addr))
}

/// The bounds on connections.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ConnectionLimits {
    /// Connections served at once (at least one).
    pub(crate) max_connections: usize,
    /// How long a request's headers may take, and a connection stay idle.
    pub(crate) header_timeout: Duration,
}

/// Serves `router` on `listener` until the process ends.
pub(crate) async fn serve(listener: TcpListener, router: Router, limits: ConnectionLimits) {
    serve_until(listener, router, limits, std::future::pending()).await;
}

/// Serves `router` on `listener` until `stop` completes, then drops the
/// listener (the port is free again once the connections served end: the
/// relay's `stop` ends them by dropping its runtime).
pub(crate) async fn serve_until(
    listener: TcpListener,
    router: Router,
    limits: ConnectionLimits,
    stop: impl std::future::Future<Output = ()>,
) {
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    tokio::pin!(stop);
    loop {
        // The semaphore is never closed, so this waits and never fails.
        let slot = tokio::select! {
            () = &mut stop => return,
            slot = Arc::clone(&slots).acquire_owned() => slot,
        };
        let Ok(slot) = slot else {
            return;
        };
        let accepted = tokio::select! {
            () = &mut stop => return,
            accepted = listener.accept() => accepted,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(error) => {
                // Out of open files, or a connection reset before it was
                // accepted: both pass; retrying at once would spin.
                request_log::accept_failed(&error);
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let router = router.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
                let mut request = request.map(axum::body::Body::new);
                request.extensions_mut().insert(Peer(peer));
                router.clone().call(request)
            });
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header_timeout);
            // A connection that fails (reset, timed out, malformed) ends
            // here; the client has nothing left to be told.
            let _ = builder
                .serve_connection(TokioIo::new(stream), service)
                .await;
            drop(slot);
        });
    }
}

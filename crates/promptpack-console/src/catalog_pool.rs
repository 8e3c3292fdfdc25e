//! Connections to the catalog, reused across requests. The catalog's calls
//! block (each is one transaction), so they run on tokio's blocking pool,
//! never on the threads that serve requests.

use promptpack_catalog::{Catalog, Error, ErrorCode, Timeouts};
use std::sync::{Arc, Mutex};

/// Idle connections to one catalog, and how to open more.
pub(crate) struct CatalogPool {
    url: String,
    timeouts: Timeouts,
    idle: Mutex<Vec<Catalog>>,
}

/// How many idle connections are kept; more are opened under load and
/// closed after use.
const KEEP_IDLE: usize = 8;

impl CatalogPool {
    /// Connects once, so that a catalog that is missing, unreachable or of
    /// another application is refused before the server listens.
    pub(crate) fn connect(url: &str, timeouts: Timeouts) -> Result<CatalogPool, Error> {
        let first = Catalog::connect_writable(url, &timeouts)?;
        Ok(CatalogPool {
            url: url.to_string(),
            timeouts,
            idle: Mutex::new(vec![first]),
        })
    }

    /// Runs `job` on a connection whose writes are recorded as `author`'s.
    pub(crate) async fn run<T, F>(self: &Arc<Self>, author: &str, job: F) -> Result<T, Error>
    where
        T: Send + 'static,
        F: FnOnce(&mut Catalog) -> Result<T, Error> + Send + 'static,
    {
        let pool = Arc::clone(self);
        let author = author.to_string();
        tokio::task::spawn_blocking(move || pool.run_blocking(&author, job))
            .await
            .map_err(|e| Error::new(ErrorCode::Io, format!("a catalog call did not finish: {e}")))?
    }

    /// [`CatalogPool::run`] on the calling thread, for what runs before the
    /// server (the loopback check) and for the command line.
    pub(crate) fn run_blocking<T>(
        &self,
        author: &str,
        job: impl FnOnce(&mut Catalog) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let taken = self.idle.lock().map(|mut idle| idle.pop()).ok().flatten();
        let catalog = match taken {
            Some(catalog) => catalog,
            None => Catalog::connect_writable(&self.url, &self.timeouts)?,
        };
        let mut catalog = catalog.with_author(author);
        let result = job(&mut catalog);
        // A connection that failed to reach its store may be broken: the
        // next call opens a new one.
        let healthy = !matches!(&result, Err(e) if e.code() == ErrorCode::Unavailable);
        if healthy
            && let Ok(mut idle) = self.idle.lock()
            && idle.len() < KEEP_IDLE
        {
            idle.push(catalog);
        }
        result
    }
}

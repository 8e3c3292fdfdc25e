//! Connections to the catalog, reused across requests. The catalog's calls
//! block (each is one transaction), so they run on tokio's blocking pool,
//! never on the threads that serve requests.
//!
//! At most `size` connections exist at once: a call past them waits for
//! one to be free (at most the catalog's connect timeout) rather than
//! opening another, which on PostgreSQL costs a connection's start-up for
//! every request of a flood and a server process each.

use promptpack_catalog::{Access, Catalog, Error, ErrorCode, Timeouts};
use std::sync::{Arc, Mutex};
use tokio::sync::Semaphore;

/// Connections to one catalog, and how to open more.
pub(crate) struct CatalogPool {
    url: String,
    timeouts: Timeouts,
    idle: Mutex<Vec<Catalog>>,
    /// One permit for each connection that may be in use.
    slots: Arc<Semaphore>,
    size: usize,
    /// Connections opened in all, for the tests.
    #[cfg(test)]
    opened: std::sync::atomic::AtomicUsize,
}

impl CatalogPool {
    /// Connects once, so that a catalog that is missing, unreachable or of
    /// another application is refused before the server listens; `size`
    /// connections at most (at least one).
    pub(crate) fn connect(
        url: &str,
        timeouts: Timeouts,
        size: usize,
    ) -> Result<CatalogPool, Error> {
        let first = Catalog::connect_with(url, Access::Write, &timeouts)?;
        let size = size.max(1);
        Ok(CatalogPool {
            url: url.to_string(),
            timeouts,
            idle: Mutex::new(vec![first]),
            slots: Arc::new(Semaphore::new(size)),
            size,
            #[cfg(test)]
            opened: std::sync::atomic::AtomicUsize::new(1),
        })
    }

    /// Runs `job` on a connection whose writes are recorded as `author`'s,
    /// once one is free.
    ///
    /// # Errors
    /// `unavailable` when none is free within the connect timeout; the
    /// job's own.
    pub(crate) async fn run<T, F>(self: &Arc<Self>, author: &str, job: F) -> Result<T, Error>
    where
        T: Send + 'static,
        F: FnOnce(&mut Catalog) -> Result<T, Error> + Send + 'static,
    {
        let wait = self.timeouts.connect;
        let slot = match tokio::time::timeout(wait, Arc::clone(&self.slots).acquire_owned()).await {
            Ok(Ok(slot)) => slot,
            // The semaphore is never closed: only the wait can end it.
            _ => {
                return Err(Error::new(
                    ErrorCode::Unavailable,
                    format!(
                        "all {} connections to the catalog stayed busy for {:.1} s",
                        self.size,
                        wait.as_secs_f64()
                    ),
                ));
            }
        };
        let pool = Arc::clone(self);
        let author = author.to_string();
        tokio::task::spawn_blocking(move || {
            let result = pool.on_a_connection(&author, job);
            drop(slot);
            result
        })
        .await
        .map_err(|e| Error::new(ErrorCode::Io, format!("a catalog call did not finish: {e}")))?
    }

    /// [`CatalogPool::run`] on the calling thread, for what runs before the
    /// server serves (the loopback check), so with no call to wait for.
    pub(crate) fn run_blocking<T>(
        &self,
        author: &str,
        job: impl FnOnce(&mut Catalog) -> Result<T, Error>,
    ) -> Result<T, Error> {
        self.on_a_connection(author, job)
    }

    /// Runs `job` on an idle connection, or a new one.
    fn on_a_connection<T>(
        &self,
        author: &str,
        job: impl FnOnce(&mut Catalog) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let taken = self.idle.lock().map(|mut idle| idle.pop()).ok().flatten();
        let catalog = match taken {
            Some(catalog) => catalog,
            None => {
                #[cfg(test)]
                self.opened
                    .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                Catalog::connect_with(&self.url, Access::Write, &self.timeouts)?
            }
        };
        let mut catalog = catalog.with_author(author);
        let result = job(&mut catalog);
        // A connection that failed to reach its store may be broken: the
        // next call opens a new one.
        let healthy = !matches!(&result, Err(e) if e.code() == ErrorCode::Unavailable);
        if healthy
            && let Ok(mut idle) = self.idle.lock()
            && idle.len() < self.size
        {
            idle.push(catalog);
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pool of `size` over a new SQLite catalog, and its folder.
    fn new_pool(size: Option<usize>) -> (Arc<CatalogPool>, tempfile::TempDir) {
        let dir = tempfile::tempdir().expect("a folder");
        let url = format!("sqlite:{}", dir.path().join("catalog.db").display());
        (pool_at(&url, size), dir)
    }

    /// A pool of `size` over a new catalog at `url`.
    fn pool_at(url: &str, size: Option<usize>) -> Arc<CatalogPool> {
        Catalog::open(url).expect("a catalog");
        let pool = match size {
            Some(size) => CatalogPool::connect(url, Timeouts::DEFAULT, size),
            None => CatalogPool::connect(url, Timeouts::DEFAULT, crate::server::DEFAULT_POOL_SIZE),
        };
        Arc::new(pool.expect("the pool"))
    }

    /// Runs `jobs` calls at once, each holding its connection a while:
    /// how many connections the pool opened for them.
    fn flood(pool: &Arc<CatalogPool>, jobs: usize) -> usize {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a runtime");
        runtime.block_on(async {
            let calls: Vec<_> = (0..jobs)
                .map(|_| {
                    let pool = Arc::clone(pool);
                    tokio::spawn(async move {
                        pool.run("test", |catalog| {
                            std::thread::sleep(std::time::Duration::from_millis(20));
                            catalog.users()
                        })
                        .await
                    })
                })
                .collect();
            for call in calls {
                let users = call.await.expect("the task ends");
                assert!(users.is_ok(), "{users:?}");
            }
        });
        pool.opened.load(std::sync::atomic::Ordering::SeqCst)
    }

    #[test]
    fn calls_past_the_pool_size_wait_for_a_connection() {
        let (pool, _dir) = new_pool(None);
        let opened = flood(&pool, 48);
        assert!(opened <= 16, "{opened} connections for a pool of 16");
        for size in [1, 3] {
            let (pool, _dir) = new_pool(Some(size));
            let opened = flood(&pool, 24);
            assert!(opened <= size, "{opened} connections for a pool of {size}");
        }
    }

    #[test]
    fn on_postgresql_calls_wait_for_a_connection_too() {
        let shared = promptpack_pgtest::shared().unwrap_or_else(|e| panic!("PostgreSQL: {e}"));
        for size in [2, 5] {
            let url = shared
                .unique_database(&format!("pool{size}"))
                .unwrap_or_else(|e| panic!("a database: {e}"));
            let pool = pool_at(&url, Some(size));
            let opened = flood(&pool, 40);
            assert!(opened <= size, "{opened} connections for a pool of {size}");
        }
    }
}

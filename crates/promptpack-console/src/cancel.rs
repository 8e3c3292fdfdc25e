//! Work a request hands to the blocking pool that stops when its client
//! goes: dropping the request's future (hyper does when the connection
//! closes) sets a flag the work checks, so an abandoned diff burns no CPU.

use promptpack_catalog::{Error, ErrorCode};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Sets its flag when dropped, unless the work finished first.
struct CancelOnDrop {
    flag: Arc<AtomicBool>,
    armed: bool,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if self.armed {
            self.flag.store(true, Ordering::Relaxed);
        }
    }
}

/// Runs `job` on the blocking pool with a flag that is set as soon as the
/// future awaiting it is dropped: `job` checks it and returns early.
///
/// # Errors
/// `io` when the job panicked.
pub(crate) async fn cancellable<T, F>(job: F) -> Result<T, Error>
where
    T: Send + 'static,
    F: FnOnce(Arc<AtomicBool>) -> T + Send + 'static,
{
    let flag = Arc::new(AtomicBool::new(false));
    let mut guard = CancelOnDrop {
        flag: Arc::clone(&flag),
        armed: true,
    };
    let result = tokio::task::spawn_blocking(move || job(flag)).await;
    guard.armed = false;
    result.map_err(|e| Error::new(ErrorCode::Io, format!("a diff did not finish: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::Future;
    use std::sync::mpsc;
    use std::task::{Context, Poll, Waker};

    /// How many times the job below looks at its flag before giving up:
    /// far more than it needs once the flag is set, and finite.
    const LOOKS: u64 = 1 << 40;

    #[test]
    fn dropping_the_future_stops_its_job() {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .build()
            .expect("a runtime");
        let (started_tx, started) = mpsc::channel();
        let (done_tx, done) = mpsc::channel();
        let mut future = Box::pin(cancellable(move |flag: Arc<AtomicBool>| {
            let _ = started_tx.send(());
            let mut looks = 0u64;
            while !flag.load(Ordering::Relaxed) && looks < LOOKS {
                looks += 1;
                std::thread::yield_now();
            }
            let _ = done_tx.send(flag.load(Ordering::Relaxed));
        }));
        let _entered = runtime.enter();
        let mut context = Context::from_waker(Waker::noop());
        assert!(matches!(future.as_mut().poll(&mut context), Poll::Pending));
        started.recv().expect("the job starts");
        // The client goes: the request's future is dropped.
        drop(future);
        assert_eq!(done.recv(), Ok(true), "the job stopped on its flag");
    }

    #[test]
    fn a_job_that_finishes_is_not_cancelled_afterwards() {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .build()
            .expect("a runtime");
        let (flag_tx, flag_rx) = mpsc::channel();
        let answer = runtime.block_on(cancellable(move |flag: Arc<AtomicBool>| {
            let _ = flag_tx.send(Arc::clone(&flag));
            7
        }));
        assert_eq!(answer.ok(), Some(7));
        let flag = flag_rx.recv().expect("the flag");
        assert!(!flag.load(Ordering::Relaxed));
    }
}

//! A request body that ends in an error once its deadline passes, so that a
//! client trickling a body holds its connection no longer than that.
//!
//! The body is still read by whichever extractor wants it, after the user
//! is known (a stranger's body is never buffered), and the work a handler
//! does after reading it is not cut short: a write whose request was told
//! it timed out must not happen anyway.

use axum::body::{Body, Bytes};
use http_body::Frame;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::Sleep;

/// `body`, failing once `timeout` has passed before its end; `expired` is
/// set when it did, for the answer to say so.
pub(crate) fn with_deadline(body: Body, timeout: Duration, expired: Arc<AtomicBool>) -> Body {
    Body::new(Deadline {
        inner: body,
        sleep: Box::pin(tokio::time::sleep(timeout)),
        expired,
    })
}

struct Deadline {
    inner: Body,
    sleep: Pin<Box<Sleep>>,
    expired: Arc<AtomicBool>,
}

/// The error of a body past its deadline.
#[derive(Debug)]
struct TimedOut;

impl std::fmt::Display for TimedOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the request's body did not arrive in time")
    }
}

impl std::error::Error for TimedOut {}

impl http_body::Body for Deadline {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        if let Poll::Ready(frame) = Pin::new(&mut self.inner).poll_frame(cx) {
            return Poll::Ready(frame);
        }
        if self.sleep.as_mut().poll(cx).is_ready() {
            self.expired.store(true, Ordering::SeqCst);
            return Poll::Ready(Some(Err(axum::Error::new(TimedOut))));
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

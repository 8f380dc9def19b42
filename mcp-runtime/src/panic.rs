//! A panicking handler becomes an error response, never a dead server.

use std::any::Any;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll};

/// Polls a future, turning a panic during any poll into `Err(message)`.
pub(crate) struct CatchUnwind<F> {
    inner: F,
}

impl<F: Future + Unpin> CatchUnwind<F> {
    pub(crate) fn new(inner: F) -> Self {
        CatchUnwind { inner }
    }
}

impl<F: Future + Unpin> Future for CatchUnwind<F> {
    type Output = Result<F::Output, String>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = Pin::new(&mut self.inner);
        match catch_unwind(AssertUnwindSafe(|| inner.poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(v)) => Poll::Ready(Ok(v)),
            Err(payload) => Poll::Ready(Err(message_of(payload))),
        }
    }
}

/// The text of a panic payload, and the payload dropped where a panic of
/// its own `Drop` is caught too (and that one's payload forgotten): a
/// caught panic never becomes a second one.
pub(crate) fn message_of(payload: Box<dyn Any + Send>) -> String {
    let message = panic_message(payload.as_ref());
    if let Err(again) = catch_unwind(AssertUnwindSafe(move || drop(payload))) {
        std::mem::forget(again);
    }
    message
}

/// The text of a panic payload.
fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "handler panicked".to_owned()
    }
}

/// Starts a handler and drives its future, catching a panic in either: the
/// panic's message is the error.
pub(crate) async fn run_caught<F>(start: impl FnOnce() -> F) -> Result<F::Output, String>
where
    F: Future + Unpin,
{
    match catch_unwind(AssertUnwindSafe(start)) {
        Ok(future) => CatchUnwind::new(future).await,
        Err(payload) => Err(message_of(payload)),
    }
}

/// Calls a synchronous callback (a completion function, say), catching a
/// panic: the panic's message is the error.
pub(crate) fn call_caught<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(message_of)
}

#[cfg(test)]
mod tests {
    /// A panic payload whose own `Drop` panics.
    struct Bomb;

    impl Drop for Bomb {
        fn drop(&mut self) {
            panic!("the payload's drop");
        }
    }

    #[test]
    fn a_payload_whose_drop_panics_is_caught_too() {
        let caught = crate::panic::call_caught(|| std::panic::panic_any(Bomb));
        assert_eq!(caught, Err("handler panicked".to_owned()));
    }
}

//! Boxing a future where it is made.

/// `Box::pin(future)`, with the future written straight into its box.
///
/// `Box::pin(value)` makes the value first and then copies it whole into the
/// allocation. A request's future is 1 to 1.5 KiB, most of it not yet
/// written when it is made, and those copies were a tenth of the
/// instructions `memcpy` ran per request. Made after the allocation, the
/// value is built in place.
///
/// A macro, not a function taking a closure: a closure passed to a call that
/// is then awaited is a temporary that stays in the awaiting future's state
/// until the await ends, with everything it captured. Here the expression's
/// temporaries end with the statement that writes it.
macro_rules! boxed {
    ($future:expr) => {{
        let mut place = ::std::boxed::Box::new_uninit();
        place.write($future);
        // SAFETY: `place` was written on the line above.
        ::std::boxed::Box::into_pin(unsafe { place.assume_init() })
    }};
}
pub(crate) use boxed;

/// A future boxed behind `dyn`, for the entry points a server binary or an
/// embedder awaits (the transports' `serve`, `HttpServer::bind` and
/// `serve_until`, the test client's requests).
///
/// An `async fn` of this crate is compiled where its future is polled. Had
/// the entry points returned their futures unboxed, everything they poll
/// (the transports, the dispatcher, every request's future) would be
/// compiled again into each server binary, on each build of it: a megabyte
/// of machine code for a one-tool server, and ten seconds of every release
/// build. Boxed behind `dyn` in a function that is never inlined, it is
/// compiled here, once.
pub(crate) type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn the_boxed_future_runs_to_its_value() {
        let text = String::from("echo");
        let future = super::boxed!(async move { text.len() });
        assert_eq!(future.await, 4);
    }
}

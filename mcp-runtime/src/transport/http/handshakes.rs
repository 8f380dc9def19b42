//! Closing a listener without resetting a connection its client already
//! uses. The kernel completes handshakes on its own and queues them; when
//! the listener closes, every queued or half-completed connection is reset,
//! even one whose client (a load balancer, most often) has sent its request
//! on it. Draining the queue before the close narrows that to the moment
//! between the last look at the queue and the close, which a busy proxy still
//! hits now and then. So, first, new handshakes are ignored, left without
//! an answer: their client tries again a second later and finds the port
//! closed (or the replica's successor), which a proxy takes as a connection
//! error and sends elsewhere, and only the handshakes already under way go on
//! to complete into the queue. That wait is kept short (a millisecond):
//! every new request in it waits for its client's next try, while a
//! handshake under way from a load balancer on the same host or network
//! completes in far less. (Asking the kernel how many are under way, by
//! socket diagnostics, is no shorter: it walks its whole table of
//! connections, 8-18 ms on a host with 36,000 of them in `TIME_WAIT`.)

use std::net::TcpListener;

#[cfg(target_os = "linux")]
mod filter;

/// Makes `listener` ignore new connection requests from now on, while the
/// handshakes already under way still complete into its queue (and the
/// connections accepted from it work as before). Linux only: elsewhere it
/// fails with [`std::io::ErrorKind::Unsupported`], and the caller closes
/// after one last look at the queue.
#[cfg(target_os = "linux")]
pub(super) fn ignore_new(listener: &TcpListener) -> std::io::Result<()> {
    filter::drop_syn(listener)
}

/// Not available here: see the Linux version.
#[cfg(not(target_os = "linux"))]
pub(super) fn ignore_new(_listener: &TcpListener) -> std::io::Result<()> {
    Err(std::io::ErrorKind::Unsupported.into())
}

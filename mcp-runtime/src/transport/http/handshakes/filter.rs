//! The Linux socket filter that keeps a listener from answering new
//! connection requests.

use std::net::TcpListener;

/// Attaches to `listener` a classic BPF filter that drops every TCP
/// segment with SYN set and ACK clear.
pub(super) fn drop_syn(listener: &TcpListener) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    /// A classic BPF instruction.
    const fn op(code: u16, jt: u8, jf: u8, k: u32) -> libc::sock_filter {
        libc::sock_filter { code, jt, jf, k }
    }
    // Run on each segment the listener receives, from its TCP header: a
    // segment with SYN set and ACK clear (a new connection request) is
    // dropped, every other one (the handshakes' final ACKs) kept whole.
    let mut program = [
        op(0x30, 0, 0, 13),       // ldb [13]: the flags byte
        op(0x54, 0, 0, 0x12),     // and #(SYN | ACK)
        op(0x15, 0, 1, 0x02),     // jeq #SYN: the next instruction, else the one after
        op(0x06, 0, 0, 0),        // ret #0: dropped
        op(0x06, 0, 0, u32::MAX), // ret: kept
    ];
    let prog = libc::sock_fprog {
        len: 5,
        filter: program.as_mut_ptr(),
    };
    // SAFETY: `prog` points at `program`, both alive for the call; the
    // kernel copies the program and validates it; the descriptor is the
    // listener's, open while it is borrowed.
    let attached = unsafe {
        libc::setsockopt(
            listener.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_ATTACH_FILTER,
            (&prog as *const libc::sock_fprog).cast(),
            std::mem::size_of::<libc::sock_fprog>() as libc::socklen_t,
        )
    };
    if attached == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::time::Duration;

    /// On `listener`: a connection requested after the filter is not
    /// answered, while one already queued is served, its data both ways.
    fn ignores_the_new_and_serves_the_queued(listener: TcpListener) {
        let addr = listener.local_addr().unwrap();
        let mut queued = std::net::TcpStream::connect(addr).unwrap();
        queued.write_all(b"ping").unwrap();
        drop_syn(&listener).unwrap();
        let late = std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(200));
        assert!(
            late.as_ref().is_err_and(|e| e.kind() == std::io::ErrorKind::TimedOut),
            "a connection requested after is not answered: {late:?}"
        );
        let (mut accepted, _) = listener.accept().unwrap();
        let mut got = [0u8; 4];
        accepted.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"ping", "the queued connection carries its data");
        accepted.write_all(b"pong").unwrap();
        queued.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"pong", "and the answer reaches its client");
    }

    #[test]
    fn a_new_connection_is_ignored_while_one_already_queued_is_served() {
        ignores_the_new_and_serves_the_queued(TcpListener::bind("127.0.0.1:0").unwrap());
    }

    #[test]
    fn over_ipv6_too() {
        // Where the host has IPv6 loopback (not every container does).
        if let Ok(listener) = TcpListener::bind("[::1]:0") {
            ignores_the_new_and_serves_the_queued(listener);
        }
    }
}

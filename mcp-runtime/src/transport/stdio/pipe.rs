//! Non-blocking stdin/stdout for pipes and sockets, driven by the reactor
//! (tokio's own stdin goes through the blocking thread pool, which halves
//! the throughput of a pipelined client). The descriptor's flags are
//! restored when the handle is dropped, since they are shared with the
//! process on the other end.

use std::io;
use std::os::fd::RawFd;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

struct Fd {
    fd: RawFd,
    old_flags: libc::c_int,
}

impl std::os::fd::AsRawFd for Fd {
    fn as_raw_fd(&self) -> RawFd {
        self.fd
    }
}

impl Drop for Fd {
    fn drop(&mut self) {
        // SAFETY: fcntl on a descriptor this process owns for its lifetime.
        unsafe {
            libc::fcntl(self.fd, libc::F_SETFL, self.old_flags);
        }
    }
}

/// Stdin or stdout as a non-blocking pipe.
pub(crate) struct Pipe {
    inner: AsyncFd<Fd>,
}

impl Pipe {
    fn open(fd: RawFd) -> Option<Pipe> {
        // SAFETY: fstat and fcntl only read or set flags of an open descriptor;
        // stdin and stdout are never closed while the process runs.
        unsafe {
            let mut st: libc::stat = std::mem::zeroed();
            if libc::fstat(fd, &mut st) != 0 {
                return None;
            }
            let kind = st.st_mode & libc::S_IFMT;
            if kind != libc::S_IFIFO && kind != libc::S_IFSOCK {
                return None;
            }
            let old_flags = libc::fcntl(fd, libc::F_GETFL);
            if old_flags < 0 || libc::fcntl(fd, libc::F_SETFL, old_flags | libc::O_NONBLOCK) < 0 {
                return None;
            }
            // The descriptor stays open (it is the process's stdin or
            // stdout) for as long as the `AsyncFd` owns it.
            AsyncFd::register(Fd { fd, old_flags }).ok().map(|inner| Pipe { inner })
        }
    }

    /// Stdin, if it is a pipe or a socket.
    pub(crate) fn stdin() -> Option<Pipe> {
        Pipe::open(libc::STDIN_FILENO)
    }

    /// Stdout, if it is a pipe or a socket.
    pub(crate) fn stdout() -> Option<Pipe> {
        Pipe::open(libc::STDOUT_FILENO)
    }
}

impl AsyncRead for Pipe {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        loop {
            let mut guard = ready!(self.inner.poll_read_ready(cx))?;
            let unfilled = buf.initialize_unfilled();
            let result = guard.try_io(|fd| {
                // SAFETY: reads into the initialized, unfilled part of `buf`.
                let n = unsafe { libc::read(fd.get_ref().fd, unfilled.as_mut_ptr().cast(), unfilled.len()) };
                if n < 0 {
                    Err(io::Error::last_os_error())
                } else {
                    Ok(n as usize)
                }
            });
            match result {
                Ok(Ok(n)) => {
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Ok(Err(e)) => return Poll::Ready(Err(e)),
                Err(_would_block) => continue,
            }
        }
    }
}

impl AsyncWrite for Pipe {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        loop {
            let mut guard = ready!(self.inner.poll_write_ready(cx))?;
            let result = guard.try_io(|fd| {
                // SAFETY: writes from a valid slice.
                let n = unsafe { libc::write(fd.get_ref().fd, data.as_ptr().cast(), data.len()) };
                if n < 0 {
                    Err(io::Error::last_os_error())
                } else {
                    Ok(n as usize)
                }
            });
            match result {
                Ok(r) => return Poll::Ready(r),
                Err(_would_block) => continue,
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

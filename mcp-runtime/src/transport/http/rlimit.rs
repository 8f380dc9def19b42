//! The process's limit of open files, on unix (each connection is one).

/// The soft limit of open files (`getrlimit`), or `None` when unlimited or
/// unreadable.
pub(super) fn open_files() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given, which outlives the call.
    let read = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) };
    #[allow(clippy::unnecessary_cast)] // rlim_t is u64 on some unixes only
    let soft = limit.rlim_cur as u64;
    (read == 0 && limit.rlim_cur != libc::RLIM_INFINITY).then_some(soft)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_read_is_the_soft_one() {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit and setrlimit read or write the struct given, which outlives the calls.
        assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) }, 0);
        let was = limit.rlim_cur;
        if limit.rlim_max < 999 {
            return;
        }
        // A soft limit of its own for a moment (999 files is more than this process's tests hold).
        limit.rlim_cur = 999;
        assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) }, 0);
        let read = open_files();
        limit.rlim_cur = was;
        assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) }, 0);
        assert_eq!(read, Some(999));
    }
}

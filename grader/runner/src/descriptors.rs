//! What a started program inherits of its parent's open files: nothing it was not handed.
//!
//! A process inherits every descriptor its parent holds that is not close-on-exec. The
//! standard library opens all of its own that way, but the grader may itself have inherited
//! others from whatever started it (a shell's redirections, a `make` jobserver's pipe, a CI
//! wrapper's log): an open file is reachable whatever the sandbox says, since Landlock rules
//! only the opening of files. So a program that will run learner's code (a check's harness,
//! a runner) is started with every descriptor above the ones it is handed marked
//! close-on-exec first.

/// The most descriptors [`close_on_exec_from`] visits one by one where the kernel cannot
/// mark a range at once (before Linux 5.11, or a container's filter that refuses the call).
const ONE_BY_ONE: i32 = 65_536;

/// Marks every descriptor from `first` up close-on-exec, so that the program this process
/// runs next gets none of them (they stay open until then: a Landlock ruleset applied
/// before `exec` is still there to apply). Only system calls, no allocation: it may run
/// between `fork` and `exec`.
///
/// # Errors
///
/// The system call that failed, when a descriptor could not be marked.
pub fn close_on_exec_from(first: i32) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        let Ok(from) = u32::try_from(first) else {
            return Err(std::io::Error::from(std::io::ErrorKind::InvalidInput));
        };
        #[cfg(target_os = "linux")]
        // SAFETY: a plain system call; it changes flags of this process's descriptors only.
        unsafe {
            if libc::syscall(
                libc::SYS_close_range,
                from,
                u32::MAX,
                libc::CLOSE_RANGE_CLOEXEC,
            ) == 0
            {
                return Ok(());
            }
        }
        let _ = from;
        one_by_one(first)
    }
    #[cfg(not(unix))]
    {
        let _ = first;
        Ok(())
    }
}

/// [`close_on_exec_from`] where the kernel cannot mark a range: each descriptor below the
/// limit of open files (at most [`ONE_BY_ONE`]) that is open and not yet close-on-exec.
#[cfg(unix)]
fn one_by_one(first: i32) -> std::io::Result<()> {
    // SAFETY: plain system calls on this process's descriptor table and limits.
    unsafe {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        let last = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 {
            i32::try_from(limit.rlim_cur)
                .unwrap_or(i32::MAX)
                .min(ONE_BY_ONE)
        } else {
            ONE_BY_ONE
        };
        for fd in first..last {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            if flags >= 0
                && flags & libc::FD_CLOEXEC == 0
                && libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
        }
    }
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

    /// A descriptor open without close-on-exec (as a shell's redirection leaves one).
    fn inheritable() -> OwnedFd {
        let file = std::fs::File::open("/dev/null").expect("/dev/null opens");
        // SAFETY: plain system calls; the copy is owned from here.
        unsafe {
            let fd = libc::dup(file.as_raw_fd());
            assert!(fd >= 0, "{}", std::io::Error::last_os_error());
            assert_eq!(libc::fcntl(fd, libc::F_GETFD) & libc::FD_CLOEXEC, 0);
            OwnedFd::from_raw_fd(fd)
        }
    }

    fn close_on_exec(fd: &OwnedFd) -> bool {
        // SAFETY: a plain system call on a descriptor this test owns.
        unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFD) & libc::FD_CLOEXEC != 0 }
    }

    #[test]
    fn every_descriptor_from_the_first_is_marked_and_none_below_it() {
        for mark in [close_on_exec_from, one_by_one] {
            let (below, above) = (inheritable(), inheritable());
            let (low, high) = if below.as_raw_fd() < above.as_raw_fd() {
                (below, above)
            } else {
                (above, below)
            };
            mark(high.as_raw_fd()).expect("marked");
            assert!(close_on_exec(&high));
            assert!(!close_on_exec(&low));
        }
    }
}

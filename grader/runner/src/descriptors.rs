//! What a started program inherits of its parent's open files: nothing it was not handed.
//!
//! A process inherits every descriptor its parent holds that is not close-on-exec. The
//! standard library opens all of its own that way, but the grader may itself have inherited
//! others from whatever started it (a shell's redirections, a `make` jobserver's pipe, a CI
//! wrapper's log): an open file is reachable whatever the sandbox says, since Landlock rules
//! only the opening of files. So a program that will run learner's code (a check's harness,
//! a runner) is started with every descriptor above the ones it is handed marked
//! close-on-exec first.

/// The most descriptors [`each_from`] visits one by one where it can neither mark a range at
/// once nor list the open ones (no `/proc`): the larger of the two limits of open files, at
/// most this.
const ONE_BY_ONE: u64 = 1 << 20;

/// What is done to each descriptor: closed, or marked close-on-exec.
#[derive(Clone, Copy)]
enum Act {
    Close,
    CloseOnExec,
}

/// Marks every descriptor from `first` up close-on-exec, so that the program this process
/// runs next gets none of them (they stay open until then: a Landlock ruleset applied
/// before `exec` is still there to apply). Only system calls, no allocation: it may run
/// between `fork` and `exec`.
///
/// # Errors
///
/// The system call that failed, when a descriptor could not be marked.
pub fn close_on_exec_from(first: i32) -> std::io::Result<()> {
    each_from(first, Act::CloseOnExec)
}

/// Closes every descriptor from `first` up (a process that keeps only what it was handed,
/// as a fork server does as it starts). Only system calls, no allocation.
///
/// # Errors
///
/// The system call that failed, when a descriptor could not be closed.
pub fn close_from(first: i32) -> std::io::Result<()> {
    each_from(first, Act::Close)
}

/// Does `act` to every open descriptor from `first` up: at once where the kernel can
/// (`close_range`, Linux 5.9, 5.11 to mark), else to each descriptor `/proc/self/fd` lists
/// (a container's filter may refuse `close_range`), else to each below the limit of open
/// files.
fn each_from(first: i32, act: Act) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        let Ok(from) = u32::try_from(first) else {
            return Err(std::io::Error::from(std::io::ErrorKind::InvalidInput));
        };
        #[cfg(target_os = "linux")]
        {
            let flags = match act {
                Act::Close => 0,
                Act::CloseOnExec => libc::CLOSE_RANGE_CLOEXEC,
            };
            // SAFETY: a plain system call on this process's descriptors.
            if unsafe { libc::syscall(libc::SYS_close_range, from, u32::MAX, flags) } == 0 {
                return Ok(());
            }
            if let Some(done) = listed(first, act) {
                return done;
            }
        }
        let _ = from;
        one_by_one(first, act)
    }
    #[cfg(not(unix))]
    {
        let _ = (first, act);
        Ok(())
    }
}

/// Does `act` to one descriptor, when it is open.
#[cfg(unix)]
fn act_on(fd: i32, act: Act) -> std::io::Result<()> {
    // SAFETY: plain system calls on this process's descriptors.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFD);
        if flags < 0 {
            // Not open.
            return Ok(());
        }
        let done = match act {
            Act::Close => libc::close(fd) == 0,
            Act::CloseOnExec => {
                flags & libc::FD_CLOEXEC != 0
                    || libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC) == 0
            }
        };
        if done {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    }
}

/// [`each_from`] over what `/proc/self/fd` lists, read with `getdents64` into a buffer on
/// the stack; `None` when it cannot be read.
#[cfg(target_os = "linux")]
fn listed(first: i32, act: Act) -> Option<std::io::Result<()>> {
    // SAFETY: plain system calls; the buffer is this frame's, and every entry read from it
    // lies within the length the kernel returned (each entry's own length steps to the next).
    unsafe {
        let dir = libc::open(
            c"/proc/self/fd".as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        );
        if dir < 0 {
            return None;
        }
        let mut buffer = [0u8; 4096];
        let mut result = Ok(());
        loop {
            let read = libc::syscall(libc::SYS_getdents64, dir, buffer.as_mut_ptr(), buffer.len());
            let Ok(read) = usize::try_from(read) else {
                libc::close(dir);
                return None;
            };
            if read == 0 {
                break;
            }
            let mut at = 0;
            while at < read {
                let entry = buffer.as_ptr().add(at).cast::<libc::dirent64>();
                let length = usize::from(std::ptr::addr_of!((*entry).d_reclen).read_unaligned());
                if length == 0 {
                    break;
                }
                let name = std::ptr::addr_of!((*entry).d_name).cast::<u8>();
                if let Some(fd) = number(name, buffer.as_ptr().add(read)) {
                    if fd >= first && fd != dir && result.is_ok() {
                        result = act_on(fd, act);
                    }
                }
                at += length;
            }
        }
        libc::close(dir);
        Some(result)
    }
}

/// The descriptor number a `/proc/self/fd` entry's name spells (digits up to a NUL, read no
/// further than `end`); `None` for `.` and `..`.
///
/// # Safety
///
/// `name` and `end` point into one buffer, `name` before `end`.
#[cfg(target_os = "linux")]
unsafe fn number(name: *const u8, end: *const u8) -> Option<i32> {
    let mut value: i32 = 0;
    let mut at = name;
    let mut digits = 0;
    while at < end {
        let byte = at.read();
        if byte == 0 {
            break;
        }
        if !byte.is_ascii_digit() {
            return None;
        }
        value = value.checked_mul(10)?.checked_add(i32::from(byte - b'0'))?;
        digits += 1;
        at = at.add(1);
    }
    (digits > 0).then_some(value)
}

/// [`each_from`] over every descriptor below the larger limit of open files (at most
/// [`ONE_BY_ONE`]).
#[cfg(unix)]
fn one_by_one(first: i32, act: Act) -> std::io::Result<()> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: a plain system call writing into `limit`.
    let known = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0;
    // `rlim_t` is `u64` here, not on every system.
    #[allow(clippy::useless_conversion)]
    let last = if known {
        u64::try_from(limit.rlim_cur.max(limit.rlim_max))
            .unwrap_or(ONE_BY_ONE)
            .min(ONE_BY_ONE)
    } else {
        ONE_BY_ONE
    };
    let last = i32::try_from(last).unwrap_or(i32::MAX);
    for fd in first..last {
        act_on(fd, act)?;
    }
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

    /// A descriptor open without close-on-exec (as a shell's redirection leaves one), at
    /// `at` or above: high, clear of the other tests' descriptors in this process.
    fn inheritable(at: i32) -> OwnedFd {
        let file = std::fs::File::open("/dev/null").expect("/dev/null opens");
        // SAFETY: plain system calls; the copy is owned from here.
        unsafe {
            let fd = libc::fcntl(file.as_raw_fd(), libc::F_DUPFD, at);
            assert!(fd >= 0, "{}", std::io::Error::last_os_error());
            assert_eq!(libc::fcntl(fd, libc::F_GETFD) & libc::FD_CLOEXEC, 0);
            OwnedFd::from_raw_fd(fd)
        }
    }

    fn close_on_exec(fd: i32) -> bool {
        // SAFETY: a plain system call on a descriptor this test owns.
        unsafe { libc::fcntl(fd, libc::F_GETFD) & libc::FD_CLOEXEC != 0 }
    }

    fn open(fd: i32) -> bool {
        // SAFETY: a plain system call.
        unsafe { libc::fcntl(fd, libc::F_GETFD) >= 0 }
    }

    /// Each way of [`each_from`], on descriptors of its own far above the rest.
    #[test]
    fn every_descriptor_from_the_first_is_acted_on_and_none_below_it() {
        type Way = fn(i32, Act) -> std::io::Result<()>;
        let ways: Vec<(&str, Way)> = vec![
            ("at once", each_from),
            ("one by one", one_by_one),
            #[cfg(target_os = "linux")]
            ("listed", |first, act| {
                listed(first, act).expect("/proc/self/fd is readable")
            }),
        ];
        for (i, (way, each)) in (0..).zip(ways) {
            let at = 500 + 50 * i;
            let low = inheritable(at);
            // Closed below, by the way under test.
            let high = std::os::fd::IntoRawFd::into_raw_fd(inheritable(at + 10));
            each(high, Act::CloseOnExec).expect("marked");
            assert!(close_on_exec(high), "{way}");
            assert!(!close_on_exec(low.as_raw_fd()), "{way}");
            each(high, Act::Close).expect("closed");
            assert!(!open(high), "{way}");
            assert!(open(low.as_raw_fd()), "{way}");
        }
    }
}

//! The judge's end of a runner: starts the runner process for a check, asks it, and reads
//! what it says without trusting it.
//!
//! The runner is the judge's child, in the judge's process group (the grader ends the
//! group with the check), and ends when the judge does (its parent-death signal). When it
//! ends before it answers — it crashed, it exited, it was killed for a limit — the judge
//! ends the same way ([`Runner::ask`]), so that the grader names what happened exactly as it
//! names a check process that ended so: the learner's code did it, whichever process it
//! was in. Bytes that are not an answer are a panic of the learner's ([`Reported`]), never a
//! pass and never the kit's fault.

use crate::panics::Reported;
use crate::setup::SetupError;
use crate::wire;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The variable that names the runner program a judge starts, for a harness built to start
/// one.
pub const PROGRAM_VAR: &str = "KIT_RUNNER_PROGRAM";

/// Every runner this process started and has not yet reaped: ended at once by
/// [`end_runners`].
static STARTED: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// Kills every runner this process started and waits for each, so that none is left when
/// the judge ends (the grader would find it running, and call it a process the learner's
/// code left behind). Call it before the judge writes its report and ends.
pub fn end_runners() {
    ENDING.store(true, std::sync::atomic::Ordering::SeqCst);
    let pids = std::mem::take(&mut *STARTED.lock().unwrap_or_else(|e| e.into_inner()));
    #[cfg(unix)]
    for pid in pids {
        let Ok(pid) = i32::try_from(pid) else {
            continue;
        };
        // SAFETY: plain system calls on a child of this process, not yet reaped (so its
        // id is still its own).
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            let mut status = 0;
            while libc::waitpid(pid, &mut status, 0) < 0
                && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
            {
            }
        }
    }
}

/// Set once [`end_runners`] has run: the judge is ending, and a runner that went away was
/// ended by it, not by the learner's code.
static ENDING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// A started runner.
#[derive(Debug)]
pub struct Runner {
    link: Mutex<Link>,
    /// The page the runner marks the cases it is running on, shared with it.
    marks: Option<Marks>,
}

/// A page of [`MARKS`](crate::cases::MARKS) case numbers shared with the runner (a memfd
/// mapped on both sides): the runner stores the number of the case each of its threads
/// runs, without a system call, and the judge reads them to name a case that never ends.
/// What it reads is the runner's word, used only to name that case.
#[derive(Debug)]
struct Marks {
    page: std::ptr::NonNull<std::sync::atomic::AtomicU64>,
    fd: std::os::fd::OwnedFd,
}

// SAFETY: the page is only ever read through atomics, and stays mapped while the value lives.
unsafe impl Send for Marks {}
// SAFETY: as above.
unsafe impl Sync for Marks {}

impl Marks {
    #[cfg(target_os = "linux")]
    fn new() -> Option<Marks> {
        use std::os::fd::FromRawFd;
        let size = crate::cases::MARKS_SIZE;
        // SAFETY: plain system calls; the mapping is checked before use.
        unsafe {
            let fd = libc::memfd_create(c"kit-runner-marks".as_ptr(), libc::MFD_CLOEXEC);
            if fd < 0 {
                return None;
            }
            let fd = std::os::fd::OwnedFd::from_raw_fd(fd);
            use std::os::fd::AsRawFd;
            if libc::ftruncate(fd.as_raw_fd(), size as libc::off_t) != 0 {
                return None;
            }
            let page = libc::mmap(
                std::ptr::null_mut(),
                size,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            );
            if page == libc::MAP_FAILED {
                return None;
            }
            let page = std::ptr::NonNull::new(page.cast())?;
            Some(Marks { page, fd })
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn new() -> Option<Marks> {
        None
    }

    fn read(&self) -> [u64; crate::cases::MARKS] {
        // SAFETY: the page holds MARKS atomics and is mapped while self lives.
        std::array::from_fn(|i| unsafe {
            (*self.page.as_ptr().add(i * crate::cases::MARK_STRIDE))
                .load(std::sync::atomic::Ordering::Relaxed)
        })
    }
}

impl Drop for Marks {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, of that size.
        #[cfg(unix)]
        unsafe {
            libc::munmap(self.page.as_ptr().cast(), crate::cases::MARKS_SIZE);
        }
    }
}

#[derive(Debug)]
struct Link {
    #[cfg(unix)]
    socket: std::os::unix::net::UnixStream,
    child: std::process::Child,
}

/// The environment variables a runner is given, of its judge's: its limits, the learner's
/// library, and whether a panic shows a backtrace. Nothing else of the grader's
/// environment reaches the learner's code.
pub(crate) const RUNNER_ENV: [&str; 4] = [
    crate::limits::LIMITS_VAR,
    crate::library::LIBRARY_VAR,
    "RUST_BACKTRACE",
    "RUST_LIB_BACKTRACE",
];

/// The prefix of the variables the kit's own tests set for the test program that stands in
/// for a runner (which implementation it runs): passed on too, and read by no runner the
/// grader builds.
const TEST_HOOKS_PREFIX: &str = "GRADER_TEST_";

impl Runner {
    /// Starts the runner [`PROGRAM_VAR`] names, for `lesson`.
    pub fn from_env(lesson: &str) -> Result<Runner, SetupError> {
        let program =
            std::env::var_os(PROGRAM_VAR)
                .map(PathBuf::from)
                .ok_or(SetupError::Unset {
                    var: PROGRAM_VAR,
                    what: "runner program",
                })?;
        Runner::start(&program, lesson)
    }

    /// Starts `program` as the runner of `lesson`: its standard input closed, its
    /// output and error this process's, the socket as `SOCKET_FD`,
    /// and no other descriptor (the standard library opens every file close-on-exec).
    #[cfg(unix)]
    pub fn start(program: &Path, lesson: &str) -> Result<Runner, SetupError> {
        use std::os::fd::AsRawFd;
        use std::os::unix::process::CommandExt;
        let (ours, theirs) = std::os::unix::net::UnixStream::pair().map_err(SetupError::Socket)?;
        let fd = theirs.as_raw_fd();
        let marks = Marks::new();
        let marks_fd = marks
            .as_ref()
            .map(|m| std::os::fd::AsRawFd::as_raw_fd(&m.fd));
        // The judge holds the checks' expectations (the reference's digests among them): no
        // process of its user without the power to trace any process may read its memory or
        // its descriptors (`/proc/PID/mem`), whatever the sandbox gives. The runner drops that
        // power, root's too (`runner::drop_capabilities`).
        #[cfg(target_os = "linux")]
        // SAFETY: a plain system call on this process.
        unsafe {
            libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
        }
        let mut command = std::process::Command::new(program);
        command.arg(lesson).stdin(std::process::Stdio::null());
        // Only what a runner reads of its environment: the grader's may hold secrets (a
        // platform's token), and the learner's code must not see them.
        command
            .env_clear()
            .envs(std::env::vars_os().filter(|(name, _)| {
                name.to_str().is_some_and(|name| {
                    RUNNER_ENV.contains(&name) || name.starts_with(TEST_HOOKS_PREFIX)
                })
            }));
        // SAFETY: only async-signal-safe system calls between fork and exec.
        unsafe {
            command.pre_exec(move || {
                let target = crate::runner::SOCKET_FD;
                if fd == target {
                    // Already in place: only its close-on-exec flag must go.
                    if libc::fcntl(fd, libc::F_SETFD, 0) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                } else if libc::dup2(fd, target) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if let Some(marks) = marks_fd {
                    // Above the socket, so that the socket's move cannot close it first.
                    if libc::dup2(marks, crate::cases::MARKS_FD) < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                #[cfg(target_os = "linux")]
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
                Ok(())
            });
        }
        let child = command.spawn().map_err(|source| SetupError::Start {
            program: program.to_path_buf(),
            source,
        })?;
        STARTED
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(child.id());
        drop(theirs);
        Ok(Runner {
            link: Mutex::new(Link {
                socket: ours,
                child,
            }),
            marks,
        })
    }

    /// Starts a runner: only on Unix.
    #[cfg(not(unix))]
    pub(crate) fn start(program: &Path, lesson: &str) -> Result<Runner, SetupError> {
        let _ = lesson;
        Err(SetupError::RunnerNeedsUnix(program.to_path_buf()))
    }

    /// The case numbers the runner's threads say they are running (0: none), if it shares
    /// its marks.
    pub fn marks(&self) -> Option<[u64; crate::cases::MARKS]> {
        self.marks.as_ref().map(Marks::read)
    }

    /// Sends `ask` and returns the runner's answer, decoded by `read`. When the runner ends
    /// without an answer, this process ends as it did (and never returns); when the answer
    /// does not decode, this panics with a [`Reported`] panic of the learner's.
    pub fn ask<T>(&self, ask: &[u8], read: impl FnOnce(&[u8]) -> Option<T>) -> T {
        let mut link = self.link.lock().unwrap_or_else(|e| e.into_inner());
        let answer = exchange(&mut link, ask);
        let Some(bytes) = answer else { link.ended() };
        drop(link);
        match read(&bytes) {
            Some(value) => value,
            None => std::panic::panic_any(Reported {
                message: "the process that ran your code sent an answer the check cannot \
                          read: it was not a report of what your function did"
                    .to_string(),
                location: None,
                frames: Vec::new(),
            }),
        }
    }
}

#[cfg(unix)]
fn exchange(link: &mut Link, ask: &[u8]) -> Option<Vec<u8>> {
    wire::write_frame(&mut link.socket, ask).ok()?;
    wire::read_frame(&mut link.socket).ok().flatten()
}

#[cfg(not(unix))]
fn exchange(_: &mut Link, _: &[u8]) -> Option<Vec<u8>> {
    None
}

/// Takes `pid` off the runners [`end_runners`] ends: it is being reaped here.
fn reaping(pid: u32) {
    STARTED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|p| *p != pid);
}

impl Link {
    /// The runner is gone or going: wait for it, and end this process the way it ended.
    fn ended(&mut self) -> ! {
        if ENDING.load(std::sync::atomic::Ordering::SeqCst) {
            // The judge ended its runners to end itself: the thread that did ends the
            // process; this one waits for it.
            loop {
                std::thread::park();
            }
        }
        reaping(self.child.id());
        let status = self.child.wait();
        #[cfg(unix)]
        if let Ok(status) = &status {
            use std::os::unix::process::ExitStatusExt;
            if let Some(signal) = status.signal() {
                use std::io::Write;
                let _ = std::io::stdout().flush();
                let _ = std::io::stderr().flush();
                // SAFETY: plain system calls; the process is meant to end here.
                unsafe {
                    libc::signal(signal, libc::SIG_DFL);
                    libc::raise(signal);
                }
                crate::runner::end_now(128 + signal);
            }
        }
        let code = status.ok().and_then(|s| s.code()).unwrap_or(101);
        crate::runner::end_now(code)
    }
}

impl Drop for Runner {
    fn drop(&mut self) {
        let link = self.link.get_mut().unwrap_or_else(|e| e.into_inner());
        reaping(link.child.id());
        let _ = link.child.kill();
        let _ = link.child.wait();
    }
}

//! The judge's end of a runner: gets the runner process for a check, asks it, and reads
//! what it says without trusting it.
//!
//! The runner is forked by the runner zygote its judge's fork server started (`zygote`), or,
//! without one, started by the judge as a program. Either way it is in the judge's process
//! group (the grader ends the group with the check), and ends when the judge does (a
//! started runner by its parent-death signal; a forked one is ended by the zygote, which
//! watches the judge, and by the end of the judge's socket). When it
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

/// The variable that gives a judges' fork server the limits of its checks (a
/// [`LIMITS_VAR`](crate::limits::LIMITS_VAR) value), so that it starts its runner zygote as
/// it starts, rather than at its first check ([`start_zygote`]).
pub const ZYGOTE_LIMITS_VAR: &str = "KIT_ZYGOTE_LIMITS";

/// Every runner this process started and has not yet reaped: ended at once by
/// [`end_runners`].
static STARTED: Mutex<Vec<Process>> = Mutex::new(Vec::new());

/// A runner's process, as its judge holds it: a child it started, or one a zygote forked.
#[derive(Debug)]
enum Process {
    /// Started as a program: this process's child, by its id (the `Child` is the link's).
    Started(u32),
    /// Forked by the zygote ([`crate::zygote`]).
    #[cfg(target_os = "linux")]
    Forked(from_zygote::Forked),
}

impl Process {
    fn id(&self) -> u32 {
        match self {
            Process::Started(pid) => *pid,
            #[cfg(target_os = "linux")]
            Process::Forked(forked) => forked.id(),
        }
    }
}

/// Kills every runner this process started and waits for each, so that none is left when
/// the judge ends (the grader would find it running, and call it a process the learner's
/// code left behind). Call it before the judge writes its report and ends.
pub fn end_runners() {
    ENDING.store(true, std::sync::atomic::Ordering::SeqCst);
    let started = std::mem::take(&mut *STARTED.lock().unwrap_or_else(|e| e.into_inner()));
    #[cfg(unix)]
    for process in started {
        let pid = match process {
            Process::Started(pid) => pid,
            #[cfg(target_os = "linux")]
            Process::Forked(forked) => {
                forked.kill();
                forked.wait();
                continue;
            }
        };
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
    child: Child,
}

/// The runner's process, as its link holds it.
#[derive(Debug)]
enum Child {
    Started(std::process::Child),
    #[cfg(target_os = "linux")]
    Forked(from_zygote::Forked),
}

impl Child {
    fn id(&self) -> u32 {
        match self {
            Child::Started(child) => child.id(),
            #[cfg(target_os = "linux")]
            Child::Forked(forked) => forked.id(),
        }
    }

    fn kill(&mut self) {
        match self {
            Child::Started(child) => {
                let _ = child.kill();
            }
            #[cfg(target_os = "linux")]
            Child::Forked(forked) => forked.kill(),
        }
    }

    /// Waits for the runner's end.
    fn wait(&mut self) -> std::io::Result<std::process::ExitStatus> {
        match self {
            Child::Started(child) => child.wait(),
            #[cfg(target_os = "linux")]
            Child::Forked(forked) => {
                use std::os::unix::process::ExitStatusExt;
                Ok(std::process::ExitStatus::from_raw(forked.wait()))
            }
        }
    }
}

/// The variables a runner gets of this process's environment ([`RUNNER_ENV`], and the kit's
/// own tests' hooks).
pub(crate) fn runner_env() -> impl Iterator<Item = (std::ffi::OsString, std::ffi::OsString)> {
    std::env::vars_os().filter(|(name, _)| {
        name.to_str()
            .is_some_and(|name| RUNNER_ENV.contains(&name) || name.starts_with(TEST_HOOKS_PREFIX))
    })
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
    /// output and error this process's, the socket as `SOCKET_FD` (and the marks page as
    /// `MARKS_FD`), and no other descriptor: not even one this process inherited
    /// ([`crate::descriptors`]).
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
        #[cfg(target_os = "linux")]
        {
            let marks_fd = marks.as_ref().map(|m| std::os::fd::AsFd::as_fd(&m.fd));
            let theirs_fd = std::os::fd::AsFd::as_fd(&theirs);
            if let Some(forked) = from_zygote::fork_runner(lesson, theirs_fd, marks_fd) {
                drop(theirs);
                STARTED
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(Process::Forked(forked.clone()));
                return Ok(Runner {
                    link: Mutex::new(Link {
                        socket: ours,
                        child: Child::Forked(forked),
                    }),
                    marks,
                });
            }
        }
        let mut command = std::process::Command::new(program);
        command.arg(lesson).stdin(std::process::Stdio::null());
        // Only what a runner reads of its environment: the grader's may hold secrets (a
        // platform's token), and the learner's code must not see them.
        command.env_clear().envs(runner_env());
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
                let mut handed = target;
                if let Some(marks) = marks_fd {
                    // Above the socket, so that the socket's move cannot close it first.
                    if libc::dup2(marks, crate::cases::MARKS_FD) < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    handed = crate::cases::MARKS_FD;
                }
                crate::descriptors::close_on_exec_from(handed + 1)?;
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
            .push(Process::Started(child.id()));
        drop(theirs);
        Ok(Runner {
            link: Mutex::new(Link {
                socket: ours,
                child: Child::Started(child),
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
        self.ask_ticking(ask, std::time::Duration::MAX, || {}, read)
    }

    /// [`Runner::ask`], calling `tick` every `every` while the runner works on the answer:
    /// a judge watches the runner's [marks](Runner::marks) this way, without a thread.
    pub fn ask_ticking<T>(
        &self,
        ask: &[u8],
        every: std::time::Duration,
        tick: impl FnMut(),
        read: impl FnOnce(&[u8]) -> Option<T>,
    ) -> T {
        let mut link = self.link.lock().unwrap_or_else(|e| e.into_inner());
        let answer = exchange(&mut link, ask, every, tick);
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
fn exchange(
    link: &mut Link,
    ask: &[u8],
    every: std::time::Duration,
    mut tick: impl FnMut(),
) -> Option<Vec<u8>> {
    wire::write_frame(&mut link.socket, ask).ok()?;
    if every != std::time::Duration::MAX {
        let timeout = rustix::event::Timespec {
            tv_sec: every.as_secs().try_into().unwrap_or(i64::MAX),
            tv_nsec: every.subsec_nanos().into(),
        };
        // Until the answer starts (a runner writes it whole once it has it), or the runner
        // is gone (readable too: at its end).
        loop {
            let mut polled = [rustix::event::PollFd::new(
                &link.socket,
                rustix::event::PollFlags::IN,
            )];
            match rustix::event::poll(&mut polled, Some(&timeout)) {
                Ok(0) => tick(),
                Err(rustix::io::Errno::INTR) => {}
                Ok(_) | Err(_) => break,
            }
        }
    }
    wire::read_frame(&mut link.socket).ok().flatten()
}

#[cfg(not(unix))]
fn exchange(_: &mut Link, _: &[u8], _: std::time::Duration, _: impl FnMut()) -> Option<Vec<u8>> {
    None
}

/// Takes `pid` off the runners [`end_runners`] ends: it is being reaped here.
fn reaping(pid: u32) {
    STARTED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|p| p.id() != pid);
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
        link.child.kill();
        let _ = link.child.wait();
    }
}

/// The judge's side of the runner zygote ([`crate::zygote`]): its fork server starts one, and
/// each judge forked from that server asks it for its runner.
#[cfg(target_os = "linux")]
mod from_zygote {
    use crate::limits::{Limits, LIMITS_VAR};
    use crate::zygote::Reply;
    use rustix::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
    use rustix::net::{
        recvmsg, sendmsg, socketpair, AddressFamily, RecvAncillaryBuffer, RecvAncillaryMessage,
        RecvFlags, SendAncillaryBuffer, SendAncillaryMessage, SendFlags, SocketFlags, SocketType,
    };
    use std::io::{IoSlice, IoSliceMut};
    use std::mem::MaybeUninit;
    use std::os::unix::process::CommandExt;
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    /// The zygote this process started (in a judge's fork server) and every judge forked from
    /// it inherits: the socket to it, and the limits it was started with.
    struct Zygote {
        socket: OwnedFd,
        limits: Limits,
    }

    static ZYGOTE: Mutex<Option<Zygote>> = Mutex::new(None);

    /// How long a judge waits for the zygote to fork its runner before starting the program.
    const ANSWER_WITHIN: Duration = Duration::from_secs(5);

    /// Starts the zygote, unless one is running: the runner program [`PROGRAM_VAR`] names,
    /// with `limits` (a check's [`LIMITS_VAR`] value) and the variables a runner gets. Called
    /// by a judge's fork server, single-threaded, before it forks a judge; does nothing when
    /// this harness starts no runners. The socket to the zygote is kept open across the
    /// fork: `keep` lists it for the forked judge, which closes every other descriptor.
    ///
    /// [`PROGRAM_VAR`]: super::PROGRAM_VAR
    pub fn start(limits: Option<&str>) -> Option<i32> {
        let mut zygote = ZYGOTE.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(z) = zygote.as_ref() {
            return Some(z.socket.as_raw_fd());
        }
        let program = std::env::var_os(super::PROGRAM_VAR)?;
        let limits = Limits::decode(limits?)?;
        let (ours, theirs) = socketpair(
            AddressFamily::UNIX,
            SocketType::SEQPACKET,
            SocketFlags::CLOEXEC,
            None,
        )
        .ok()?;
        let fd = theirs.as_raw_fd();
        let mut command = std::process::Command::new(program);
        command
            .arg(crate::zygote::ZYGOTE_ARG)
            .stdin(std::process::Stdio::null())
            .env_clear()
            .envs(super::runner_env())
            .env(LIMITS_VAR, limits.encode());
        // SAFETY: only async-signal-safe system calls between fork and exec.
        unsafe {
            command.pre_exec(move || {
                let target = crate::runner::SOCKET_FD;
                if fd == target {
                    if libc::fcntl(fd, libc::F_SETFD, 0) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                } else if libc::dup2(fd, target) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
                Ok(())
            });
        }
        // Never waited for: it ends with this server (its parent-death signal, and the
        // socket's close), and the server reaps what ends.
        let _child = command.spawn().ok()?;
        drop(theirs);
        let raw = ours.as_raw_fd();
        *zygote = Some(Zygote {
            socket: ours,
            limits,
        });
        Some(raw)
    }

    /// A runner forked by the zygote, as its judge holds it.
    #[derive(Debug, Clone)]
    pub(crate) struct Forked {
        pid: i32,
        pidfd: Arc<OwnedFd>,
        reply: Arc<OwnedFd>,
        /// Its wait status, once the zygote has said it.
        status: Arc<Mutex<Option<i32>>>,
    }

    impl Forked {
        /// The runner's process id.
        pub(crate) fn id(&self) -> u32 {
            self.pid as u32
        }

        /// Kills the runner (a signal through its pidfd names it and no later process).
        pub(crate) fn kill(&self) {
            let _ = rustix::process::pidfd_send_signal(
                self.pidfd.as_fd(),
                rustix::process::Signal::KILL,
            );
        }

        /// Waits until the zygote says the runner ended, and returns its raw wait status
        /// (`SIGKILL`'s when the zygote is gone: the runner went with it).
        pub(crate) fn wait(&self) -> i32 {
            let mut status = self.status.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(status) = *status {
                return status;
            }
            let ended = loop {
                let mut buffer = [0u8; 16];
                match rustix::net::recv(&*self.reply, &mut buffer, RecvFlags::empty()) {
                    Ok((n, _)) => match Reply::decode(&buffer[..n.min(buffer.len())]) {
                        Some(Reply::Exited(status)) => break status,
                        Some(_) => continue,
                        None => break libc::SIGKILL,
                    },
                    Err(rustix::io::Errno::INTR) => continue,
                    Err(_) => break libc::SIGKILL,
                }
            };
            *status = Some(ended);
            ended
        }
    }

    /// Asks the zygote, if this judge has one with the same limits, for a runner of
    /// `lesson` that answers on `socket` (the runner's end) and marks its cases on `marks`.
    /// `None` when there is none to be had: the caller starts the runner program.
    pub(crate) fn fork_runner(
        lesson: &str,
        socket: BorrowedFd<'_>,
        marks: Option<BorrowedFd<'_>>,
    ) -> Option<Forked> {
        let limits_text = std::env::var(LIMITS_VAR).ok()?;
        let limits = Limits::decode(&limits_text)?;
        let zygote = ZYGOTE.lock().unwrap_or_else(|e| e.into_inner());
        let zygote = zygote.as_ref()?;
        if !same_but_cpu(&zygote.limits, &limits) {
            return None;
        }
        let (ours, theirs) = socketpair(
            AddressFamily::UNIX,
            SocketType::SEQPACKET,
            SocketFlags::CLOEXEC,
            None,
        )
        .ok()?;
        let group = rustix::process::getpgrp();
        let text = format!("{lesson}\n{limits_text}\n{}", group.as_raw_nonzero());
        let stdout = rustix::stdio::stdout();
        let stderr = rustix::stdio::stderr();
        let judge = rustix::process::pidfd_open(
            rustix::process::getpid(),
            rustix::process::PidfdFlags::empty(),
        )
        .ok()?;
        // Where the runner works: where a started runner would (this process's folder).
        let folder = rustix::fs::open(
            ".",
            rustix::fs::OFlags::PATH | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )
        .ok()?;
        let mut fds: Vec<BorrowedFd<'_>> = vec![
            socket,
            theirs.as_fd(),
            stdout,
            stderr,
            judge.as_fd(),
            folder.as_fd(),
        ];
        fds.extend(marks);
        let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(7))];
        let mut control = SendAncillaryBuffer::new(&mut space);
        if !control.push(SendAncillaryMessage::ScmRights(&fds)) {
            return None;
        }
        sendmsg(
            &zygote.socket,
            &[IoSlice::new(text.as_bytes())],
            &mut control,
            SendFlags::NOSIGNAL,
        )
        .ok()?;
        drop(theirs);
        // The answer, within a bound: a zygote that hangs must not hold up the check.
        let timeout = rustix::net::sockopt::set_socket_timeout(
            &ours,
            rustix::net::sockopt::Timeout::Recv,
            Some(ANSWER_WITHIN),
        );
        timeout.ok()?;
        let mut buffer = [0u8; 16];
        let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
        let mut control = RecvAncillaryBuffer::new(&mut space);
        let received = recvmsg(
            &ours,
            &mut [IoSliceMut::new(&mut buffer)],
            &mut control,
            RecvFlags::CMSG_CLOEXEC,
        )
        .ok()?;
        let mut pidfd = None;
        for message in control.drain() {
            if let RecvAncillaryMessage::ScmRights(mut received) = message {
                pidfd = pidfd.or(received.next());
            }
        }
        let Some(Reply::Started(pid)) = Reply::decode(&buffer[..received.bytes.min(16)]) else {
            return None;
        };
        let pidfd = pidfd?;
        // From here the reply socket is read without a bound: the zygote says the runner's
        // end when it reaps it, however long the check takes.
        let _ = rustix::net::sockopt::set_socket_timeout(
            &ours,
            rustix::net::sockopt::Timeout::Recv,
            None,
        );
        Some(Forked {
            pid,
            pidfd: Arc::new(pidfd),
            reply: Arc::new(ours),
            status: Arc::new(Mutex::new(None)),
        })
    }

    /// Whether a runner with limits `b` may be forked from a zygote with limits `a`: all the
    /// same but CPU time, which each runner sets for itself.
    fn same_but_cpu(a: &Limits, b: &Limits) -> bool {
        Limits {
            cpu_secs: b.cpu_secs,
            ..*a
        } == *b
    }
}

#[cfg(target_os = "linux")]
pub use from_zygote::start as start_zygote;

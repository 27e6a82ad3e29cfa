//! The fork server: one harness process that starts each check by forking itself.
//!
//! Starting a program per check costs about a millisecond of CPU (exec, the dynamic loader,
//! the runtime's start), most of a small check's cost. So on Linux each thread of a grader
//! run starts one harness in this mode, and asks it for each check; the server forks, and
//! the child runs the job exactly as a started harness would (`serve::main`),
//! in a process group of its own, under its own limits, with its own standard input, output
//! and error, which the grader made and passed with the request. Isolation is the same: the
//! server itself never runs code under test, and each check's process is a fresh copy of it.
//! That is why the grader starts a fork server only from a harness with no learner's code in
//! it (the one that loads the learner's library, which a child does after its limits are
//! set; or the reference), never from one with the learner's crate linked in, whose code
//! could run before `main`. A child holds its three streams and no other descriptor (then
//! its job opens its report).
//!
//! The protocol, over a `SOCK_SEQPACKET` socket that is the server's standard input:
//! - server → grader, once: [`Reply::Ready`];
//! - grader → server: a [`Request`] (JSON) with three descriptors attached (`SCM_RIGHTS`):
//!   the check's standard input, output and error;
//! - server → grader: [`Reply::Started`] with the child's id (or [`Reply::Refused`]), then
//!   [`Reply::Exited`] with its wait status once it has ended. One check at a time.
//!
//! The server ends when the grader closes its end, or when the thread that started it ends
//! (its parent-death signal).
//!
//! A server whose checks start runners (a judge's) also starts one runner zygote, with its
//! first check's limits, before it forks that check (`kit_runner::remote::start_zygote`):
//! each check it forks keeps the socket to the zygote, and asks it for its runner.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The argument that starts a harness as a fork server, in place of a job.
pub const SERVER_ARG: &str = "__fork-server";

/// One check to start: the job's arguments as a started harness takes them, its working
/// folder, and environment variables to set for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Request {
    /// `LESSON check NAME REPORT-PATH` or `LESSON scenario FILE REPORT-PATH`.
    pub args: Vec<String>,
    /// The child's working folder.
    pub cwd: PathBuf,
    /// Set in the child before the job starts.
    pub env: Vec<(String, String)>,
}

/// What the server says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    /// The server is up and waits for requests.
    Ready,
    /// The check's process was started, with this id; it leads its own process group.
    Started(i32),
    /// The check could not be started (an errno, or 0 for a malformed request).
    Refused(i32),
    /// The check's process (this id) ended with this wait status.
    Exited(i32, i32),
}

impl Reply {
    /// The largest encoded reply, in bytes.
    pub const SIZE: usize = 9;

    /// The reply as bytes: a kind, then two numbers.
    pub(crate) fn encode(self) -> [u8; Reply::SIZE] {
        let (kind, a, b) = match self {
            Reply::Ready => (b'R', 0, 0),
            Reply::Started(pid) => (b'S', pid, 0),
            Reply::Refused(errno) => (b'F', errno, 0),
            Reply::Exited(pid, status) => (b'E', pid, status),
        };
        let mut bytes = [0; Reply::SIZE];
        bytes[0] = kind;
        bytes[1..5].copy_from_slice(&a.to_le_bytes());
        bytes[5..9].copy_from_slice(&b.to_le_bytes());
        bytes
    }

    /// Reads `Reply::encode`'s bytes; `None` for anything else.
    pub fn decode(bytes: &[u8]) -> Option<Reply> {
        let bytes: &[u8; Reply::SIZE] = bytes.try_into().ok()?;
        let a = i32::from_le_bytes(bytes[1..5].try_into().ok()?);
        let b = i32::from_le_bytes(bytes[5..9].try_into().ok()?);
        Some(match bytes[0] {
            b'R' => Reply::Ready,
            b'S' => Reply::Started(a),
            b'F' => Reply::Refused(a),
            b'E' => Reply::Exited(a, b),
            _ => return None,
        })
    }
}

#[cfg(target_os = "linux")]
pub(crate) use server::serve;

#[cfg(target_os = "linux")]
mod server {
    use super::{Reply, Request};
    use crate::serve::Served;
    use rustix::fd::{AsFd, OwnedFd};
    use rustix::net::{
        recvmsg, send, RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendFlags,
    };
    use std::io::IoSliceMut;
    use std::mem::MaybeUninit;

    /// The largest request the server reads (a request is a few hundred bytes).
    const MAX_REQUEST: usize = 64 * 1024;

    /// Runs the server until the grader closes the socket; returns the exit status.
    ///
    /// The server stays single-threaded, so that a fork copies a process in a known state:
    /// nothing here starts a thread, and nothing the checks use is touched before a fork.
    pub(crate) fn serve(served: Served) -> u8 {
        // Nothing but the standard streams is inherited on purpose: close the rest, so no
        // check forked from here can reach what the grader left open by mistake.
        // Where even that fails, a check's process and its runner still mark every
        // descriptor close-on-exec as they start.
        let _ = kit_runner::descriptors::close_from(3);
        let Ok(socket) = rustix::io::fcntl_dupfd_cloexec(rustix::stdio::stdin(), 3) else {
            return 3;
        };
        // Standard input is the socket: nothing but this loop may read it.
        if let Ok(null) = std::fs::File::open("/dev/null") {
            let _ = rustix::stdio::dup2_stdin(&null);
        }
        // Ends with the grader's thread that started it (and so with the grader).
        let _ =
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL));
        // A check's runner outlives its judge by a moment when the grader ends the check's
        // group: it then becomes this server's child, reaped here at once (the system's init
        // may take long, and the grader waits for the group to be empty).
        // SAFETY: a plain system call on this process.
        unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
        // The runner zygote, started now when the grader gave its checks' limits (it may
        // start this server while the learner's library is still being compiled: the zygote
        // is confined at its first request); otherwise at the first check, with its limits.
        if let Some(limits) = std::env::var_os(kit_runner::remote::ZYGOTE_LIMITS_VAR) {
            // Not the judges' to see. SAFETY: this process is single-threaded.
            unsafe { std::env::remove_var(kit_runner::remote::ZYGOTE_LIMITS_VAR) };
            let _ = kit_runner::remote::start_zygote(limits.to_str());
        }
        if !reply(&socket, Reply::Ready) {
            return 3;
        }
        let server = rustix::process::getpid();
        let mut buffer = vec![0u8; MAX_REQUEST];
        loop {
            let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(3))];
            let mut control = RecvAncillaryBuffer::new(&mut space);
            let received = match recvmsg(
                &socket,
                &mut [IoSliceMut::new(&mut buffer)],
                &mut control,
                RecvFlags::CMSG_CLOEXEC,
            ) {
                Ok(received) => received,
                Err(rustix::io::Errno::INTR) => continue,
                Err(_) => return 0,
            };
            if received.bytes == 0 {
                return 0; // the grader is done
            }
            reap_orphans();
            let mut fds: Vec<OwnedFd> = Vec::new();
            for message in control.drain() {
                if let RecvAncillaryMessage::ScmRights(received) = message {
                    fds.extend(received);
                }
            }
            let request = serde_json::from_slice::<Request>(&buffer[..received.bytes]);
            let (Ok(request), [stdin, stdout, stderr]) = (request, fds.as_slice()) else {
                if !reply(&socket, Reply::Refused(0)) {
                    return 3;
                }
                continue;
            };
            // Opened here, so that a folder the check cannot enter refuses the request
            // rather than ending the check in a way that would look like its own doing.
            let folder =
                rustix::fs::access(&request.cwd, rustix::fs::Access::EXEC_OK).and_then(|()| {
                    rustix::fs::open(
                        &request.cwd,
                        rustix::fs::OFlags::PATH
                            | rustix::fs::OFlags::DIRECTORY
                            | rustix::fs::OFlags::CLOEXEC,
                        rustix::fs::Mode::empty(),
                    )
                });
            let folder = match folder {
                Ok(folder) => folder,
                Err(e) => {
                    if !reply(&socket, Reply::Refused(e.raw_os_error())) {
                        return 3;
                    }
                    continue;
                }
            };
            // A judge that starts runners gets them from the runner zygote, started once,
            // with this first check's limits, before the first fork (kit_runner::zygote).
            // (A fork server runs only with the grader's fork fast path on, and the zygote
            // is part of it: `GRADER_FAST_PATHS=off` turns both off.)
            let zygote = kit_runner::remote::start_zygote(
                request
                    .env
                    .iter()
                    .find(|(k, _)| k == crate::limits::LIMITS_VAR)
                    .map(|(_, v)| v.as_str()),
            );
            // SAFETY: this process is single-threaded (see above), so the child is a
            // complete copy of it; the child never returns into this loop.
            match unsafe { libc::fork() } {
                -1 => {
                    let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
                    if !reply(&socket, Reply::Refused(errno)) {
                        return 3;
                    }
                }
                0 => child(
                    server,
                    socket,
                    [stdin, stdout, stderr],
                    &folder,
                    zygote,
                    &request,
                    served,
                ),
                pid => {
                    // Also set in the child: whichever runs first, the group exists before
                    // the grader hears of the child.
                    // SAFETY: plain system calls on the child just forked.
                    unsafe { libc::setpgid(pid, pid) };
                    drop(fds);
                    drop(folder);
                    if !reply(&socket, Reply::Started(pid)) {
                        return 3;
                    }
                    let status = wait(pid);
                    if !reply(&socket, Reply::Exited(pid, status)) {
                        return 3;
                    }
                }
            }
        }
    }

    /// Waits for child `pid` to end and returns its raw wait status. A stop is not an end: a
    /// child that asked to be traced (`PTRACE_TRACEME`) reports its stops here too.
    ///
    /// Any other child that ends meanwhile (a runner its judge left: see the subreaper in
    /// [`serve`]) is reaped too.
    fn wait(pid: i32) -> i32 {
        let mut status = 0;
        loop {
            // SAFETY: `status` is a valid place for the status.
            let waited = unsafe { libc::waitpid(-1, &mut status, 0) };
            if waited == pid {
                if libc::WIFEXITED(status) || libc::WIFSIGNALED(status) {
                    reap_group(pid);
                    return status;
                }
            } else if waited > 0 {
                // An orphan: reaped, nothing more.
            } else if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
                // Not this server's child any more: say it was killed.
                return libc::SIGKILL;
            }
        }
    }

    /// Reaps the children of this server left in the check's process group `pgid` (its
    /// runner, when the grader ended the group, ends a moment after its judge), waiting a
    /// little for them, so that the group is empty when the grader next looks; then reaps any
    /// other child. It never waits long: a process still running there is the learner's
    /// leftover, which the grader finds, names and stops.
    fn reap_group(pgid: i32) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_millis(20);
        let mut status = 0;
        loop {
            // SAFETY: `status` is a valid place for the status.
            let waited = unsafe { libc::waitpid(-pgid, &mut status, libc::WNOHANG) };
            if waited > 0 {
                continue;
            }
            if waited < 0
                && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted
            {
                // None of this server's children left in the group; a runner the zygote
                // forked is the zygote's, which ends it with its judge and reaps it: wait
                // for the group to be empty all the same.
                // SAFETY: a plain system call that signals nothing (signal 0).
                if unsafe { libc::kill(-pgid, 0) } != 0 || std::time::Instant::now() >= deadline {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(1));
                continue;
            }
            if waited == 0 && std::time::Instant::now() >= deadline {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        reap_orphans();
    }

    /// Reaps every child that has ended, without waiting for any.
    fn reap_orphans() {
        let mut status = 0;
        // SAFETY: `status` is a valid place for the status.
        while unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) } > 0 {}
    }

    fn reply(socket: &OwnedFd, what: Reply) -> bool {
        send(socket, &what.encode(), SendFlags::NOSIGNAL).is_ok()
    }

    /// The forked child: becomes the check's process, runs the job, exits.
    fn child(
        server: rustix::process::Pid,
        socket: OwnedFd,
        [stdin, stdout, stderr]: [&OwnedFd; 3],
        folder: &OwnedFd,
        zygote: Option<i32>,
        request: &Request,
        served: Served,
    ) -> ! {
        // Ends with the server (and so with the grader), even before its limits are set; a
        // server already gone by now would never say so.
        let _ =
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL));
        if rustix::process::getppid() != Some(server) {
            std::process::exit(i32::from(crate::serve::EXIT_USAGE));
        }
        // The code under test must not reach the server (closed again below, with the rest).
        drop(socket);
        // SAFETY: a plain system call on this process.
        unsafe { libc::setpgid(0, 0) };
        let ready = rustix::stdio::dup2_stdin(stdin.as_fd())
            .and_then(|()| rustix::stdio::dup2_stdout(stdout.as_fd()))
            .and_then(|()| rustix::stdio::dup2_stderr(stderr.as_fd()))
            .and_then(|()| rustix::process::fchdir(folder));
        if ready.is_err() {
            std::process::exit(i32::from(crate::serve::EXIT_USAGE));
        }
        // The check holds its standard streams and nothing else: not the socket, nor the
        // copies of what it received (so its output ends when it and what it starts end);
        // only the socket to the runner zygote, if there is one (close-on-exec: no program
        // the check starts gets it).
        let closed = match zygote {
            Some(keep) if keep >= 3 => {
                for fd in 3..keep {
                    // SAFETY: this process never returns to where these are owned: it exits.
                    unsafe { libc::close(fd) };
                }
                kit_runner::descriptors::close_from(keep + 1).is_ok()
            }
            _ => kit_runner::descriptors::close_from(3).is_ok(),
        };
        if !closed {
            use rustix::fd::AsRawFd;
            for fd in [stdin, stdout, stderr, folder] {
                // SAFETY: this process never returns to where these are owned: it exits.
                unsafe { libc::close(fd.as_raw_fd()) };
            }
        }
        for (key, value) in &request.env {
            std::env::set_var(key, value);
        }
        let code = std::panic::catch_unwind(|| crate::serve::run_job_args(&request.args, served))
            .unwrap_or(101);
        std::process::exit(i32::from(code))
    }
}

#[cfg(test)]
mod doc_examples {
    /// What the item's documentation once showed as an example.
    #[test]
    fn a_reply_survives_encoding() {
        use crate::forks::Reply;
        let reply = Reply::Exited(42, 9);
        assert_eq!(Reply::decode(&reply.encode()), Some(reply));
    }
}

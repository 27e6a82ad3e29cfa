//! The runner zygote: one runner process, confined once, that forks a fresh runner for
//! each check instead of the judge starting the runner program anew (Linux; the fork fast
//! path of `grader/src/fast.rs`, off with it).
//!
//! Starting a runner program costs a few milliseconds of CPU per check — `exec`, the dynamic
//! loader relocating the standard library, limits, Landlock — most of a small check's cost.
//! A judge's fork server ([`grader_checks`'s `forks`]) starts one zygote, with the first
//! check's limits, before it forks that check; each judge it forks then asks the zygote
//! for its runner. Isolation is the same as a started runner's:
//! - the zygote never loads the learner's library: each runner forked from it loads it
//!   afresh, after its own seccomp filter (which names its own process id) and its thread
//!   refusal, so a check's runner starts from the same state whatever ran before it, and
//!   the learner's constructors run confined;
//! - the zygote holds no expectation of any check (it is the runner program: `kit-types`
//!   and this crate), and its Landlock ruleset, lack of capabilities and the part of the
//!   seccomp filter that names no process (every refused call but those about processes,
//!   which the zygote makes for its runners), taken before it serves, are every runner's;
//!   each runner adds the rest of the filter, so it is filtered exactly as a started runner
//!   is, while the kernel compiles the large part once per zygote;
//! - a runner joins its judge's process group (the grader ends the group with the check,
//!   and counts its tasks there) and is ended by its judge through a pidfd; the zygote, its
//!   parent, reaps it and tells the judge how it ended, which the judge then mirrors as it
//!   does for a runner it started.
//!
//! A judge uses the zygote only when its limits are the zygote's (CPU time aside, which each
//! runner sets for itself); otherwise, or when the zygote is gone or does not answer, it
//! starts the runner program as before.
//!
//! The protocol, over `SOCK_SEQPACKET` sockets:
//! - judge → zygote, on the zygote's socket: `LESSON \n LIMITS \n PGID` with, attached, the
//!   runner's end of the judge's socket, the reply socket's far end, the check's output
//!   and error, a pidfd of the judge (the zygote ends the runner when the judge ends, as a
//!   started runner's parent-death signal would), the judge's working folder, and the page
//!   of marks when there is one;
//! - zygote → judge, on the reply socket: [`Reply::Started`] with a pidfd of the runner
//!   attached (or [`Reply::Refused`]), then [`Reply::Exited`] with its wait status once the
//!   zygote has reaped it.

/// The argument that starts the runner program as a zygote, in place of a lesson's name.
pub(crate) const ZYGOTE_ARG: &str = "__zygote";

/// What the zygote says on a request's reply socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reply {
    /// The runner was forked, with this id (its pidfd is attached).
    Started(i32),
    /// It could not be (an errno, or 0 for a malformed request).
    Refused(i32),
    /// It ended, with this wait status.
    Exited(i32),
}

impl Reply {
    pub(crate) const SIZE: usize = 5;

    pub(crate) fn encode(self) -> [u8; Reply::SIZE] {
        let (kind, n) = match self {
            Reply::Started(pid) => (b'S', pid),
            Reply::Refused(errno) => (b'F', errno),
            Reply::Exited(status) => (b'E', status),
        };
        let mut bytes = [0; Reply::SIZE];
        bytes[0] = kind;
        bytes[1..].copy_from_slice(&n.to_le_bytes());
        bytes
    }

    pub(crate) fn decode(bytes: &[u8]) -> Option<Reply> {
        let bytes: &[u8; Reply::SIZE] = bytes.try_into().ok()?;
        let n = i32::from_le_bytes(bytes[1..].try_into().ok()?);
        Some(match bytes[0] {
            b'S' => Reply::Started(n),
            b'F' => Reply::Refused(n),
            b'E' => Reply::Exited(n),
            _ => return None,
        })
    }
}

#[cfg(target_os = "linux")]
pub(crate) use linux::serve;

#[cfg(target_os = "linux")]
mod linux {
    use super::Reply;
    use crate::limits::{Limits, LIMITS_VAR};
    use crate::runner::Function;
    use crate::sandbox::{Calls, Mode};
    use rustix::fd::{AsFd, OwnedFd};
    use rustix::net::{
        recvmsg, sendmsg, RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags,
        SendAncillaryBuffer, SendAncillaryMessage, SendFlags,
    };
    use std::io::{IoSlice, IoSliceMut};
    use std::mem::MaybeUninit;

    /// One runner forked and not yet reaped: its pidfd, where to say how it ended, and its
    /// judge's pidfd (`None` once the runner was ended for the judge's end).
    struct Child {
        pid: i32,
        pidfd: OwnedFd,
        reply: OwnedFd,
        judge: Option<OwnedFd>,
    }

    /// The zygote's `main`, after the runner's own start: limits (all but CPU time), the
    /// quiet panic hook and capabilities dropped there; before its first fork, the first half
    /// of the sandbox (Landlock: the learner's library, readable; nothing else) and the
    /// lasting part of the system-call filter; then it forks a runner per request until its
    /// fork server closes the socket.
    pub(crate) fn serve(load: fn(&str) -> Result<Function, crate::setup::SetupError>) -> ! {
        use crate::runner::end_now;
        let limits = std::env::var(LIMITS_VAR)
            .ok()
            .and_then(|text| Limits::decode(&text));
        let Some(limits) = limits else {
            end_now(i32::from(crate::runner::EXIT_USAGE));
        };
        // CPU time is each runner's own (a zygote lives as long as its server).
        let lasting = Limits {
            cpu_secs: u64::MAX,
            ..limits
        };
        // (A system whose hard CPU limit is lower keeps it: each runner sets its own below.)
        if lasting
            .apply_to_self()
            .iter()
            .any(|missed| !missed.starts_with("CPU time"))
        {
            // A runner started as a program says what was not applied; this one cannot: its
            // judges start the program.
            end_now(i32::from(crate::runner::EXIT_USAGE));
        }
        crate::runner::prepare();
        // Not dumpable, as a judge is not: where Landlock is missing, a runner of the same
        // user would otherwise read or write the zygote's memory (`/proc/PID/mem`), and fork
        // its successors. (A forked runner inherits this; it only keeps others out of it.)
        // SAFETY: a plain system call on this process.
        unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) };
        // Confined before its first fork, not at its start: a zygote may start while the
        // learner's library is still being compiled (its fork server starts it at once), and
        // its Landlock rule names that file, which must exist then. Until its first request
        // it runs nothing but this loop. `Some(lasting_calls)` once confined: whether it
        // holds the lasting part of the system-call filter, which its runners then inherit.
        let mut confined: Option<bool> = None;
        let mut confine = || {
            let mut lasting_calls = false;
            if limits.sandbox != Mode::Off {
                let missing = crate::sandbox::confine_files(&crate::runner::readable());
                if limits.sandbox == Mode::Required && !missing.is_empty() {
                    // Each judge then starts the program, which says what is missing.
                    end_now(i32::from(crate::sandbox::EXIT_UNCONFINED));
                }
                // Where it cannot be had, each runner installs the whole filter (and says so).
                lasting_calls = crate::sandbox::confine_calls(Calls::Lasting).is_empty();
            }
            lasting_calls
        };
        // SAFETY: the server passes the socket as this descriptor and nothing else owns it.
        let socket =
            unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(crate::runner::SOCKET_FD) };
        let me = rustix::process::getpid();
        let mut children: Vec<Child> = Vec::new();
        loop {
            let mut polled: Vec<rustix::event::PollFd<'_>> = vec![rustix::event::PollFd::new(
                &socket,
                rustix::event::PollFlags::IN,
            )];
            for child in &children {
                polled.push(rustix::event::PollFd::new(
                    &child.pidfd,
                    rustix::event::PollFlags::IN,
                ));
            }
            // A judge that ended without ending its runner (it ends them before it reports,
            // so only a judge that crashed): the runner goes too.
            let judges: Vec<usize> = (0..children.len())
                .filter(|i| children[*i].judge.is_some())
                .collect();
            for i in &judges {
                if let Some(judge) = &children[*i].judge {
                    polled.push(rustix::event::PollFd::new(
                        judge,
                        rustix::event::PollFlags::IN,
                    ));
                }
            }
            match rustix::event::poll(&mut polled, None) {
                Ok(_) | Err(rustix::io::Errno::INTR) => {}
                Err(_) => end_now(0),
            }
            let request = polled[0].revents();
            let ended: Vec<bool> = polled[1..=children.len()]
                .iter()
                .map(|p| !p.revents().is_empty())
                .collect();
            let judged: Vec<usize> = judges
                .iter()
                .zip(&polled[children.len() + 1..])
                .filter(|(_, p)| !p.revents().is_empty())
                .map(|(i, _)| *i)
                .collect();
            drop(polled);
            for i in judged {
                let child = &mut children[i];
                let _ =
                    rustix::process::pidfd_send_signal(&child.pidfd, rustix::process::Signal::KILL);
                child.judge = None;
            }
            // Runners that ended: reaped, and their judges told.
            let mut i = 0;
            children.retain(|child| {
                let done = ended.get(i).copied().unwrap_or(false);
                i += 1;
                if !done {
                    return true;
                }
                let mut status = 0;
                // SAFETY: a plain wait for this process's own child.
                let waited = unsafe { libc::waitpid(child.pid, &mut status, libc::WNOHANG) };
                if waited == 0 {
                    return true; // readable but not yet reapable: next round
                }
                let status = if waited == child.pid {
                    status
                } else {
                    libc::SIGKILL
                };
                let _ = rustix::net::send(
                    &child.reply,
                    &Reply::Exited(status).encode(),
                    SendFlags::NOSIGNAL,
                );
                false
            });
            if request.is_empty() {
                continue;
            }
            if request.intersects(rustix::event::PollFlags::HUP | rustix::event::PollFlags::ERR)
                && !request.contains(rustix::event::PollFlags::IN)
            {
                end_now(0);
            }
            match take_request(&socket) {
                Taken::Closed => end_now(0),
                Taken::Malformed => {}
                Taken::Request(request) => {
                    let lasting_calls = *confined.get_or_insert_with(&mut confine);
                    if let Some(child) = fork(me, request, lasting_calls, load) {
                        children.push(child);
                    }
                }
            }
        }
    }

    /// A request, read.
    struct Request {
        lesson: String,
        limits: Limits,
        limits_text: String,
        group: i32,
        socket: OwnedFd,
        reply: OwnedFd,
        stdout: OwnedFd,
        stderr: OwnedFd,
        judge: OwnedFd,
        /// The judge's working folder (`O_PATH`): the runner's too.
        folder: OwnedFd,
        marks: Option<OwnedFd>,
    }

    enum Taken {
        Request(Request),
        Malformed,
        Closed,
    }

    fn take_request(socket: &OwnedFd) -> Taken {
        let mut buffer = [0u8; 1024];
        let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(7))];
        let mut control = RecvAncillaryBuffer::new(&mut space);
        let received = match recvmsg(
            socket,
            &mut [IoSliceMut::new(&mut buffer)],
            &mut control,
            RecvFlags::CMSG_CLOEXEC,
        ) {
            Ok(received) => received,
            Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => return Taken::Malformed,
            Err(_) => return Taken::Closed,
        };
        if received.bytes == 0 {
            return Taken::Closed;
        }
        let mut fds: Vec<OwnedFd> = Vec::new();
        for message in control.drain() {
            if let RecvAncillaryMessage::ScmRights(received) = message {
                fds.extend(received);
            }
        }
        let text = String::from_utf8_lossy(&buffer[..received.bytes.min(buffer.len())]);
        let mut lines = text.lines();
        let (Some(lesson), Some(limits_text), Some(group)) =
            (lines.next(), lines.next(), lines.next())
        else {
            return Taken::Malformed;
        };
        let (Some(limits), Ok(group)) = (Limits::decode(limits_text), group.parse::<i32>()) else {
            return Taken::Malformed;
        };
        let mut fds = fds.into_iter();
        let (
            Some(runner_socket),
            Some(reply),
            Some(stdout),
            Some(stderr),
            Some(judge),
            Some(folder),
        ) = (
            fds.next(),
            fds.next(),
            fds.next(),
            fds.next(),
            fds.next(),
            fds.next(),
        )
        else {
            return Taken::Malformed;
        };
        Taken::Request(Request {
            lesson: lesson.to_string(),
            limits,
            limits_text: limits_text.to_string(),
            group,
            socket: runner_socket,
            reply,
            stdout,
            stderr,
            judge,
            folder,
            marks: fds.next(),
        })
    }

    /// Forks the runner `request` asks for; the parent's side. `None` when it was refused
    /// (and the judge told so). `lasting_calls`: the zygote holds the lasting part of the
    /// system-call filter (the runner adds its own part).
    fn fork(
        me: rustix::process::Pid,
        request: Request,
        lasting_calls: bool,
        load: fn(&str) -> Result<Function, crate::setup::SetupError>,
    ) -> Option<Child> {
        let refuse = |reply: &OwnedFd, errno: i32| {
            let _ = rustix::net::send(reply, &Reply::Refused(errno).encode(), SendFlags::NOSIGNAL);
        };
        if request.group <= 0 {
            refuse(&request.reply, 0);
            return None;
        }
        // SAFETY: this process is single-threaded (it starts no thread), so the child is a
        // complete copy of it; the child never returns into the loop.
        match unsafe { libc::fork() } {
            -1 => {
                refuse(
                    &request.reply,
                    std::io::Error::last_os_error().raw_os_error().unwrap_or(0),
                );
                None
            }
            0 => runner(me, request, lasting_calls, load),
            pid => {
                // Also done in the child: whichever runs first, the runner is in its
                // judge's group before the judge hears of it, so the grader's end of the
                // check's group ends it too.
                // SAFETY: a plain system call on the child just forked.
                let joined = unsafe { libc::setpgid(pid, request.group) } == 0
                    // It may have joined already (and so can no longer be moved).
                    || rustix::process::getpgid(rustix::process::Pid::from_raw(pid))
                        .is_ok_and(|g| g.as_raw_nonzero().get() == request.group);
                let pidfd = rustix::process::Pid::from_raw(pid).and_then(|p| {
                    rustix::process::pidfd_open(p, rustix::process::PidfdFlags::empty()).ok()
                });
                let (true, Some(pidfd)) = (joined, pidfd) else {
                    // SAFETY: plain system calls on this process's own child.
                    unsafe {
                        libc::kill(pid, libc::SIGKILL);
                        libc::waitpid(pid, std::ptr::null_mut(), 0);
                    }
                    refuse(&request.reply, libc::EPERM);
                    return None;
                };
                let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
                let mut control = SendAncillaryBuffer::new(&mut space);
                let fds = [pidfd.as_fd()];
                let _ = control.push(SendAncillaryMessage::ScmRights(&fds));
                let sent = sendmsg(
                    &request.reply,
                    &[IoSlice::new(&Reply::Started(pid).encode())],
                    &mut control,
                    SendFlags::NOSIGNAL,
                );
                if sent.is_err() {
                    // The judge is gone: so is the runner's purpose.
                    // SAFETY: plain system calls on this process's own child.
                    unsafe {
                        libc::kill(pid, libc::SIGKILL);
                        libc::waitpid(pid, std::ptr::null_mut(), 0);
                    }
                    return None;
                }
                Some(Child {
                    pid,
                    pidfd,
                    reply: request.reply,
                    judge: Some(request.judge),
                })
            }
        }
    }

    /// The forked runner: takes its judge's group, streams and limits, confines itself the
    /// rest of the way, then loads the learner's function and serves, as a started runner
    /// does.
    fn runner(
        zygote: rustix::process::Pid,
        request: Request,
        lasting_calls: bool,
        load: fn(&str) -> Result<Function, crate::setup::SetupError>,
    ) -> ! {
        use crate::runner::end_now;
        // Ends with the zygote (which ends with its server, and so with the grader).
        let _ =
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL));
        if rustix::process::getppid() != Some(zygote) {
            end_now(i32::from(crate::runner::EXIT_USAGE));
        }
        // SAFETY: a plain system call on this process.
        if unsafe { libc::setpgid(0, request.group) } != 0
            && rustix::process::getpgrp().as_raw_nonzero().get() != request.group
        {
            end_now(i32::from(crate::runner::EXIT_USAGE));
        }
        if rustix::process::fchdir(&request.folder).is_err() {
            end_now(i32::from(crate::runner::EXIT_USAGE));
        }
        // The descriptors in place: output, error, the socket, the marks; then nothing else
        // (not the zygote's socket, nor another runner's reply socket or pidfd).
        let placed = place(&request);
        if !placed {
            end_now(i32::from(crate::runner::EXIT_USAGE));
        }
        // SAFETY: this process is single-threaded; setting a variable is safe here.
        unsafe { std::env::set_var(LIMITS_VAR, &request.limits_text) };
        for missed in request.limits.apply_to_self() {
            eprintln!("limit not applied: {missed}");
        }
        if request.marks.is_some() {
            crate::cases::map_marks();
        }
        let mode = request.limits.sandbox;
        if mode != Mode::Off {
            // A Landlock domain of its own, inside the zygote's (the same rules): its signal
            // scoping keeps the zygote and the other runners, each in a domain of its own,
            // out of its reach, whatever route a signal takes.
            let mut missing = crate::sandbox::confine_files(&crate::runner::readable());
            // The system-call filter: the part the zygote holds, inherited, and this
            // runner's own; or, where the zygote holds none, all of it.
            missing.extend(crate::sandbox::confine_calls(if lasting_calls {
                Calls::Own
            } else {
                Calls::Whole
            }));
            if mode == Mode::Required && !missing.is_empty() {
                eprintln!("the sandbox could not be set up: {}", missing.join("; "));
                end_now(i32::from(crate::sandbox::EXIT_UNCONFINED));
            }
        }
        crate::runner::run(&request.lesson, mode, load)
    }

    /// Puts the request's descriptors where a runner has them, with a standard input of its
    /// own, and closes every other one. False when a call failed.
    fn place(request: &Request) -> bool {
        // Standard input: an empty pipe of its own, at its end at once, as `/dev/null` reads.
        // Not the zygote's `/dev/null`: its flags would be shared with every later runner (a
        // red team kept state from one check to the next in them).
        let Ok((input, writer)) = std::io::pipe() else {
            return false;
        };
        drop(writer);
        let input = OwnedFd::from(input);
        // First out of the way, above anything the targets could be: then the moves into
        // place cannot close one another.
        let high = |fd: &OwnedFd| {
            rustix::io::fcntl_dupfd_cloexec(fd, 100)
                .ok()
                .map(std::os::fd::IntoRawFd::into_raw_fd)
        };
        let Some(input) = high(&input) else {
            return false;
        };
        let (Some(out), Some(err), Some(socket)) = (
            high(&request.stdout),
            high(&request.stderr),
            high(&request.socket),
        ) else {
            return false;
        };
        let marks = request.marks.as_ref().map(high);
        // SAFETY: plain system calls on descriptors this process holds; the runner owns
        // what ends in place, and never returns to where the rest are owned (it exits).
        unsafe {
            if libc::dup2(input, 0) < 0 || libc::dup2(out, 1) < 0 || libc::dup2(err, 2) < 0 {
                return false;
            }
            if libc::dup2(socket, crate::runner::SOCKET_FD) < 0 {
                return false;
            }
            let mut last = crate::runner::SOCKET_FD;
            if let Some(marks) = marks {
                let Some(marks) = marks else { return false };
                if libc::dup2(marks, crate::cases::MARKS_FD) < 0 {
                    return false;
                }
                last = crate::cases::MARKS_FD;
            }
            crate::descriptors::close_from(last + 1).is_ok()
        }
    }
}

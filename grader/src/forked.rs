//! The grader's side of a fork server ([`grader_checks::forks`]): start one, ask it to start
//! a check, and hear when that check ended. Linux only; [`crate::child`] decides when to use
//! one and falls back to starting a program per check.

use grader_checks::forks::{Reply, Request, SERVER_ARG};
use rustix::fd::{AsFd, OwnedFd};
use rustix::net::{
    recv, sendmsg, socketpair, AddressFamily, RecvFlags, SendAncillaryBuffer, SendAncillaryMessage,
    SendFlags, SocketFlags, SocketType,
};
use std::ffi::OsString;
use std::io::{self, IoSlice};
use std::mem::MaybeUninit;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::Duration;

/// A running fork server, and the socket to it. Dropping it stops the server.
#[derive(Debug)]
pub(crate) struct Server {
    process: Child,
    socket: OwnedFd,
}

/// What became of the check a server started.
pub(crate) enum Ended {
    /// It ended with this status.
    Exited(ExitStatus),
    /// Not yet.
    Running,
    /// The server is gone (killed by the code under test, which it then took down), or said
    /// something it should not have.
    Lost,
}

impl Server {
    /// Starts `program` with `args` then [`SERVER_ARG`], with `envs` set, and waits up to
    /// `ready_within` for it to say it is ready. `None` when it does not (a harness without
    /// the mode, or one that hangs at start): the caller then starts a program per check.
    pub(crate) fn start(
        program: &Path,
        args: &[OsString],
        envs: &[(OsString, OsString)],
        ready_within: Duration,
    ) -> Option<Server> {
        let mut server = Server::spawn(program, args, envs)?;
        server.ready(ready_within).then_some(server)
    }

    /// [`Server::start`] without the wait: the server starts while the caller goes on, and
    /// [`Server::ready`] hears that it did.
    pub(crate) fn spawn(
        program: &Path,
        args: &[OsString],
        envs: &[(OsString, OsString)],
    ) -> Option<Server> {
        let (ours, theirs) = socketpair(
            AddressFamily::UNIX,
            SocketType::SEQPACKET,
            SocketFlags::CLOEXEC,
            None,
        )
        .ok()?;
        let process = Command::new(program)
            .args(args)
            .arg(SERVER_ARG)
            .envs(envs.iter().map(|(k, v)| (k, v)))
            // glibc reserves 64 MiB of address space per malloc arena, and reads this once,
            // in the server: keep a few threads from using up a check's memory limit with
            // reservations alone.
            .env("MALLOC_ARENA_MAX", "2")
            .stdin(Stdio::from(theirs))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        Some(Server {
            process,
            socket: ours,
        })
    }

    /// Whether a server just spawned says it is ready within `within` (one that does not
    /// is of no use: drop it, which stops it).
    pub(crate) fn ready(&mut self, within: Duration) -> bool {
        matches!(self.next(within), Ok(Some(Reply::Ready)))
    }

    /// Asks the server to start the check `request` with these standard streams; returns
    /// its process id.
    pub(crate) fn start_check(
        &mut self,
        request: &Request,
        stdio: [&OwnedFd; 3],
        answer_within: Duration,
    ) -> io::Result<u32> {
        let text = serde_json::to_vec(request).map_err(io::Error::other)?;
        let fds = stdio.map(|fd| fd.as_fd());
        let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(3))];
        let mut control = SendAncillaryBuffer::new(&mut space);
        if !control.push(SendAncillaryMessage::ScmRights(&fds)) {
            return Err(io::Error::other("the descriptors do not fit the message"));
        }
        // An idle server has room for a request: a full socket means it is stuck.
        sendmsg(
            &self.socket,
            &[IoSlice::new(&text)],
            &mut control,
            SendFlags::NOSIGNAL | SendFlags::DONTWAIT,
        )?;
        match self.next(answer_within) {
            Ok(Some(Reply::Started(pid))) => u32::try_from(pid).map_err(io::Error::other),
            Ok(Some(Reply::Refused(0))) => Err(io::Error::other("the fork server refused")),
            Ok(Some(Reply::Refused(errno))) => Err(io::Error::from_raw_os_error(errno)),
            _ => Err(io::Error::other("the fork server did not answer")),
        }
    }

    /// Whether check `pid`, the one the server started last, has ended, waiting up to
    /// `within` for it (not at all for `Duration::ZERO`).
    pub(crate) fn ended(&mut self, pid: u32, within: Duration) -> Ended {
        match self.next(within) {
            Ok(Some(Reply::Exited(ended, status))) if u32::try_from(ended) == Ok(pid) => {
                use std::os::unix::process::ExitStatusExt;
                Ended::Exited(ExitStatus::from_raw(status))
            }
            Ok(None) => Ended::Running,
            // Gone, or out of step: either way nothing it says can be trusted now.
            _ => Ended::Lost,
        }
    }

    /// The descriptor that becomes readable when the server has something to say.
    pub(crate) fn socket(&self) -> &OwnedFd {
        &self.socket
    }

    /// The next reply, waiting up to `within`: `Ok(None)` when there is
    /// none by then, `Err(Gone)` when the server closed the socket or said something else.
    fn next(&mut self, within: Duration) -> Result<Option<Reply>, Gone> {
        use rustix::event::{poll, PollFd, PollFlags, Timespec};
        let timeout = Timespec {
            tv_sec: within.as_secs() as i64,
            tv_nsec: i64::from(within.subsec_nanos()),
        };
        let mut fds = [PollFd::new(&self.socket, PollFlags::IN)];
        match poll(&mut fds, Some(&timeout)) {
            Ok(0) | Err(rustix::io::Errno::INTR) => return Ok(None),
            Ok(_) => {}
            Err(_) => return Err(Gone),
        }
        let mut buffer = [0u8; Reply::SIZE];
        match recv(&self.socket, &mut buffer, RecvFlags::DONTWAIT) {
            Ok((n, _)) => Reply::decode(&buffer[..n]).map(Some).ok_or(Gone),
            Err(rustix::io::Errno::AGAIN | rustix::io::Errno::INTR) => Ok(None),
            Err(_) => Err(Gone),
        }
    }
}

/// The server closed its socket (it died), or broke the protocol.
struct Gone;

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

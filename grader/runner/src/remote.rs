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
use crate::wire;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The variable that names the runner program a judge starts, for a harness built to start
/// one.
pub const PROGRAM_VAR: &str = "KIT_RUNNER_PROGRAM";

/// A started runner.
#[derive(Debug)]
pub struct Runner {
    link: Mutex<Link>,
}

#[derive(Debug)]
struct Link {
    #[cfg(unix)]
    socket: std::os::unix::net::UnixStream,
    child: std::process::Child,
}

impl Runner {
    /// Starts the runner [`PROGRAM_VAR`] names, for lesson `group`.
    pub fn from_env(group: &str) -> Result<Runner, String> {
        let program = std::env::var_os(PROGRAM_VAR)
            .map(PathBuf::from)
            .ok_or_else(|| format!("{PROGRAM_VAR} names no runner program"))?;
        Runner::start(&program, group)
    }

    /// Starts `program` as the runner of lesson `group`: its standard input closed, its
    /// output and error this process's, the socket as [`SOCKET_FD`](crate::runner::SOCKET_FD),
    /// and no other descriptor (the standard library opens every file close-on-exec).
    #[cfg(unix)]
    pub fn start(program: &Path, group: &str) -> Result<Runner, String> {
        use std::os::fd::AsRawFd;
        use std::os::unix::process::CommandExt;
        let (ours, theirs) = std::os::unix::net::UnixStream::pair()
            .map_err(|e| format!("no socket for the runner: {e}"))?;
        let fd = theirs.as_raw_fd();
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
        command.arg(group).stdin(std::process::Stdio::null());
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
                #[cfg(target_os = "linux")]
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
                Ok(())
            });
        }
        let child = command
            .spawn()
            .map_err(|e| format!("cannot start the runner {}: {e}", program.display()))?;
        drop(theirs);
        Ok(Runner {
            link: Mutex::new(Link {
                socket: ours,
                child,
            }),
        })
    }

    /// Starts a runner: only on Unix.
    #[cfg(not(unix))]
    pub fn start(program: &Path, group: &str) -> Result<Runner, String> {
        let _ = group;
        Err(format!(
            "cannot start the runner {}: runners need Unix",
            program.display()
        ))
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

impl Link {
    /// The runner is gone or going: wait for it, and end this process the way it ended.
    fn ended(&mut self) -> ! {
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
        let _ = link.child.kill();
        let _ = link.child.wait();
    }
}

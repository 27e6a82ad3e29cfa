//! The parent side: start a harness process for one job (or, in a [`Session`], have a fork
//! server start it: see [`crate::forked`]), watch it, stop it and everything it started, and
//! read its report.
//!
//! In the manner of nextest: each child runs in a process group of its own. When its time
//! runs out, or it starts too many threads or processes, the whole group gets SIGTERM, a
//! short grace, then SIGKILL, so no grandchild survives it. A child that exits while a
//! process it started is still running (or still holds its output open) has leaked: the
//! group is stopped the same way and the check fails, naming what was left. The child
//! applies its own memory, file-size and CPU limits before any code under test runs
//! ([`Limits`]).

use grader_checks::limits::{bytes, Limits, LIMITS_VAR};
#[cfg(target_os = "linux")]
use grader_checks::sandbox::{BeforeExec, Mode};
use grader_checks::serve::{Sealed, STALL_VAR};
use grader_checks::{FailureKind, Outcome, Report};
use std::ffi::{OsStr, OsString};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// How much of a child's output is kept for the failure message.
const OUTPUT_KEPT: usize = 4 * 1024;

/// How long a stopped group gets between SIGTERM and SIGKILL.
const GRACE: Duration = Duration::from_millis(100);

/// How long to wait for a child's output to close once the child and its group are gone.
const OUTPUT_CLOSE: Duration = Duration::from_millis(500);

/// How to start a harness process: a program, the arguments before the job's own, extra
/// environment, and the limits it runs under.
#[derive(Debug, Clone)]
pub struct Launcher {
    /// The executable.
    pub program: PathBuf,
    /// Arguments placed before the job's own.
    pub args: Vec<OsString>,
    /// Environment variables set for the child.
    pub envs: Vec<(OsString, OsString)>,
    /// The limits each child runs under.
    pub limits: Limits,
    /// What a check is handed on standard input after the token, by lesson and check name:
    /// [`check_input::for_check`](crate::check_input::for_check) unless a test says otherwise.
    pub input: fn(&str, &str) -> &'static [u8],
    /// When set (by `Launcher::cancel_with`) and raised, every child is stopped at once and
    /// no check starts: a watch does this when a newer save or `q` makes its run moot.
    pub cancel: Option<Arc<AtomicBool>>,
    /// Whether a `Session` may start the program as a fork server (a fast path: off with
    /// `GRADER_FAST_PATHS=off`). Never for a program with [`Launcher::learner_linked`] set.
    pub fork: bool,
    /// Whether the learner's crate is linked into the program (cargo's harness), so that
    /// its code could run before `main`: each check's process is then confined from `exec`
    /// on (the layer of [`BeforeExec`]), and the program never serves forks (its code would
    /// run in the server, outside every limit and watch). A program that runs the learner's
    /// code only in a runner it starts (the grader's judge) needs neither, and must be
    /// free to start that runner.
    pub learner_linked: bool,
}

/// How a harness process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobEnd {
    /// It wrote its report and exited normally.
    Reported {
        /// The report.
        report: Report,
        /// What the code under test printed (may be empty).
        output: String,
        /// It left a process running, which was stopped: what it was.
        leaked: Option<String>,
    },
    /// It crashed, exited early, went over a limit or was stopped.
    Failed {
        /// What kind of failure.
        kind: FailureKind,
        /// What happened.
        message: String,
        /// What the code under test printed (may be empty).
        output: String,
    },
}

/// One check's end: how it ended, and what the code under test printed meanwhile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ran {
    /// How the check ended.
    pub outcome: Outcome,
    /// What the code under test printed on standard output and error (at most 4 KiB as
    /// captured), its control characters escaped.
    pub(crate) output: String,
}

/// `output` as a section to append to a message, or nothing when it is empty.
pub(crate) fn output_section(output: &str) -> String {
    let text = output.trim_end();
    if text.is_empty() {
        String::new()
    } else {
        format!("\n\n---- output of the code under test ----\n{text}")
    }
}

/// When a check's process is stopped, and what its learner is told then.
#[derive(Debug, Clone, Copy)]
pub struct Deadlines<'a> {
    /// How long a long check (an exhaustive one) may go without reporting progress.
    pub(crate) stall: Duration,
    /// How long the process may run in all.
    pub(crate) timeout: Duration,
    /// What a learner whose code never finished should look at (the lesson's
    /// `Lesson::stop_hint`).
    pub(crate) stop_hint: &'a str,
}

impl<'a> Deadlines<'a> {
    /// `timeout` both ways: a job with no progress to report.
    pub fn flat(timeout: Duration, stop_hint: &'a str) -> Self {
        Deadlines {
            stall: timeout,
            timeout,
            stop_hint,
        }
    }
}

impl Launcher {
    /// A launcher for `program` with no extra arguments and the default limits.
    pub fn new(program: impl Into<PathBuf>) -> Self {
        Launcher {
            program: program.into(),
            args: Vec::new(),
            envs: Vec::new(),
            limits: Limits::default(),
            input: crate::check_input::for_check,
            cancel: None,
            fork: crate::fast::FastPaths::from_env().fork,
            learner_linked: false,
        }
    }

    /// Whether a `Session` starts this program as a fork server: when the fast paths allow
    /// it and no code of the learner's could run in the server.
    pub(crate) fn serves_forks(&self) -> bool {
        self.fork && !self.learner_linked
    }

    /// Stops every child, and starts none, once `flag` is raised.
    pub(crate) fn cancel_with(mut self, flag: Arc<AtomicBool>) -> Self {
        self.cancel = Some(flag);
        self
    }

    /// Whether the run this launcher serves was cancelled (see [`Launcher::cancel_with`]).
    pub(crate) fn cancelled(&self) -> bool {
        self.cancel
            .as_ref()
            .is_some_and(|flag| flag.load(Ordering::SeqCst))
    }

    /// Adds an argument before the job's own.
    pub(crate) fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Sets an environment variable for every child.
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.envs.push((key.into(), value.into()));
        self
    }

    /// Sets the limits every child runs under.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Runs check `check` of `lesson` in a new process, stops it at `deadlines`, and
    /// turns what happened into an [`Outcome`]. `scratch` is a folder no other check uses
    /// meanwhile: the report is written there (any earlier one is removed first), and it is
    /// the child's working folder.
    ///
    /// Each call starts the harness program anew; a `Session` runs many checks faster.
    pub fn run(&self, lesson: &str, check: &str, scratch: &Path, deadlines: Deadlines<'_>) -> Ran {
        self.run_in(None, lesson, check, scratch, deadlines)
    }

    /// A session of this launcher, to run checks one after the other (see [`Session`]).
    pub(crate) fn session(&self) -> Session<'_> {
        Session {
            launcher: self,
            server: ServerSlot::Unstarted,
            _thread: std::marker::PhantomData,
        }
    }

    fn run_in(
        &self,
        server: Option<&mut ServerSlot>,
        lesson: &str,
        check: &str,
        scratch: &Path,
        deadlines: Deadlines<'_>,
    ) -> Ran {
        let job = [OsStr::new(lesson), OsStr::new("check"), OsStr::new(check)];
        let input = (self.input)(lesson, check);
        match self.run_job_in(server, &job, input, scratch, deadlines) {
            JobEnd::Reported {
                report,
                output,
                leaked,
            } => {
                let outcome = interpret(report);
                let outcome = match leaked {
                    None => outcome,
                    Some(what) => leak_failure(outcome, &what),
                };
                Ran { outcome, output }
            }
            JobEnd::Failed {
                kind,
                message,
                output,
            } => Ran {
                outcome: Outcome::Failed { kind, message },
                output,
            },
        }
    }

    /// Runs any job the harness understands (`job` then the report path as arguments, and
    /// `input` on standard input after the token) and returns its report, or how the process
    /// failed.
    pub(crate) fn run_job(
        &self,
        job: &[&OsStr],
        input: &'static [u8],
        scratch: &Path,
        deadlines: Deadlines<'_>,
    ) -> JobEnd {
        self.run_job_in(None, job, input, scratch, deadlines)
    }

    /// [`Launcher::run_job`], in `server` when there is one. Every text of the job's end
    /// is escaped here ([`crate::sanitise`]): what the code under test printed, the messages
    /// its process reported, and what the grader says of its process (a leftover's command
    /// line is the learner's too), so no later printer or report receives a raw control.
    fn run_job_in(
        &self,
        server: Option<&mut ServerSlot>,
        job: &[&OsStr],
        input: &'static [u8],
        scratch: &Path,
        deadlines: Deadlines<'_>,
    ) -> JobEnd {
        escape_end(self.run_job_raw(server, job, input, scratch, deadlines))
    }

    fn run_job_raw(
        &self,
        server: Option<&mut ServerSlot>,
        job: &[&OsStr],
        input: &'static [u8],
        scratch: &Path,
        deadlines: Deadlines<'_>,
    ) -> JobEnd {
        let Deadlines {
            stall,
            timeout,
            stop_hint,
        } = deadlines;
        let report_path = scratch.join(REPORT_FILE);
        let _ = std::fs::remove_file(&report_path);
        let token = new_token();
        let mut limits = self.limits;
        // The CPU backstop stops a child whose parent died; it must never cut a live run short.
        limits.cpu_secs = limits.cpu_secs.max(timeout.as_secs() * 2 + 10);
        let mut args: Vec<&OsStr> = job.to_vec();
        args.push(report_path.as_os_str());
        let envs = [
            (STALL_VAR, stall.as_secs_f64().to_string()),
            (LIMITS_VAR, limits.encode()),
        ];
        // Listed as running before anything reaches its standard input: until then it waits,
        // and runs no code under test.
        let started = match server {
            Some(slot) => slot.start(self, &args, &envs, scratch),
            None => self.spawn(&args, &envs, scratch),
        };
        let Started {
            mut process,
            group,
            stdin,
            outputs,
            slot,
        } = match started {
            Ok(started) => started,
            Err(e) => {
                return JobEnd::Failed {
                    kind: FailureKind::Crash,
                    message: format!("could not start {}: {e}", self.program.display()),
                    output: String::new(),
                }
            }
        };
        // The child reads its standard input to the end: this end closes with this block, or
        // with the writer below once the input is written.
        {
            let mut stdin = stdin;
            // A child that exits at once closes the pipe: its missing report says the rest.
            let _ = stdin.write_all(format!("{token}\n").as_bytes());
            if !input.is_empty() {
                // More than a pipe holds: written beside the watch, which stops the child
                // (and so ends the write) however it goes.
                std::thread::spawn(move || {
                    let _ = stdin.write_all(input);
                });
            }
        }
        let pipes = pipe_inodes(&outputs);
        let output = collect_output(outputs);
        let watched = watch(&mut process, &group, timeout, limits.tasks, || {
            self.cancelled()
        });
        // Whatever happened, nothing of this job may outlive it.
        let leaked = match &watched {
            Watched::Exited(_) => group.leftovers(),
            _ => None,
        };
        group.stop();
        let lost = process.lost();
        let silent = process.silent();
        if let Some(slot) = slot {
            slot.keep(process);
        }
        let mut captured = output.finish(OUTPUT_CLOSE);
        let mut held_open = None;
        if !captured.closed {
            // Something outside the group (it called setsid) still holds the output: find
            // it by the pipe it holds, and stop it too.
            let holders = stop_pipe_holders(&pipes);
            held_open = Some(if holders.is_empty() {
                "a process started by the code under test kept its output open".to_string()
            } else {
                holders.join(", ")
            });
            captured = captured.rest(OUTPUT_CLOSE);
        }
        let leaked = leaked.or(held_open);
        if lost && !matches!(watched, Watched::Cancelled) {
            // Whatever the check seemed to do, its end was not seen: no report counts.
            return JobEnd::Failed {
                kind: FailureKind::Crash,
                message: "crashed: the process that started the check was stopped while the \
                          check ran (by the code under test?), and the check went with it. \
                          The check did not finish."
                    .to_string(),
                output: captured.text,
            };
        }
        let status = match watched {
            Watched::Exited(status) => status,
            Watched::Cancelled => {
                return JobEnd::Failed {
                    kind: FailureKind::Timeout,
                    message: "stopped before it finished: the run was cancelled".to_string(),
                    output: captured.text,
                }
            }
            // Memory ran out first, and the process then never ended (a thread whose
            // allocation failed aborts while the others hold on): the limit is what it met,
            // and the message says so rather than guess a loop (seen with 500 threads).
            Watched::TimedOut if allocation_failed(&captured) => {
                return JobEnd::Failed {
                    kind: FailureKind::Limit,
                    message: format!(
                        "used more than {} of memory (the limit of a check), then never \
                         finished, and was stopped after {}. {MEMORY_CAUSES}",
                        bytes(self.limits.memory),
                        seconds(timeout)
                    ),
                    output: captured.text,
                }
            }
            Watched::TimedOut => {
                return JobEnd::Failed {
                    kind: FailureKind::Timeout,
                    message: format!(
                        "did not finish within {} and was stopped.\nA loop that never ends? {stop_hint}{}",
                        seconds(timeout),
                        if silent {
                            "\n(The process that started the check did not say how it ended: \
                             was it stopped by the code under test?)"
                        } else {
                            ""
                        },
                    ),
                    output: captured.text,
                }
            }
            Watched::TooManyTasks(n) => {
                return JobEnd::Failed {
                    kind: FailureKind::Limit,
                    message: format!(
                        "started {n} threads and processes, more than the limit of {}, and was \
                         stopped. A check needs a handful at most: is something spawned in a loop?",
                        limits.tasks,
                    ),
                    output: captured.text,
                }
            }
        };
        match read_report(&report_path, &token) {
            // A report counts only from a process that then exited normally; and no check
            // passes whose code printed a private detail (the grader read every byte).
            Some(report) if status.success() => JobEnd::Reported {
                report: match report {
                    Report::Passed if captured.private => Report::Failed {
                        message: grader_checks::report::PRIVATE_PRINTED.to_string(),
                    },
                    report => report,
                },
                output: captured.text,
                leaked,
            },
            _ => JobEnd::Failed {
                // Only a harness without the learner's crate starts a runner.
                kind: death_kind(status, &captured, !self.learner_linked),
                message: describe_death(status, &captured, &limits, !self.learner_linked),
                output: captured.text,
            },
        }
    }

    /// Starts the harness program for one job (`args`), with `envs` set and `scratch` as its
    /// working folder, in a process group of its own.
    fn spawn(
        &self,
        args: &[&OsStr],
        envs: &[(&str, String); 2],
        scratch: &Path,
    ) -> std::io::Result<Started<'static>> {
        let mut command = Command::new(&self.program);
        command
            .args(&self.args)
            .args(args)
            .envs(self.envs.iter().map(|(k, v)| (k, v)))
            .envs(envs.iter().map(|(k, v)| (k, v)))
            // glibc reserves 64 MiB of address space per malloc arena: keep a few threads
            // from using up the memory limit with reservations alone.
            .env("MALLOC_ARENA_MAX", "2")
            .current_dir(scratch)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        // Nothing but its standard streams: no file the grader itself inherited open reaches
        // the learner's code (first: the layer below may refuse the call once applied).
        #[cfg(unix)]
        // SAFETY: `close_on_exec_from` makes system calls only, as the time between fork
        // and exec requires.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut command, || {
                kit_runner::descriptors::close_on_exec_from(3)
            });
        }
        // A harness with the learner's crate linked in (one that may not serve forks) runs
        // its constructors before `main` confines it: this layer confines them. A harness
        // without it confines itself before it loads the learner's code.
        #[cfg(target_os = "linux")]
        if self.limits.sandbox != Mode::Off && self.learner_linked {
            // The one file the harness writes, made here so that the layer can name it.
            let report = scratch.join(REPORT_FILE);
            std::fs::File::create(&report)?;
            // A scenario job reads its file once confined: this layer must let it too.
            let readable: Vec<&Path> = match args {
                [_, kind, file, _] if *kind == "scenario" => vec![Path::new(file)],
                _ => Vec::new(),
            };
            let layer = BeforeExec::prepare(&self.program, &report, &readable);
            if self.limits.sandbox == Mode::Required && !layer.missing.is_empty() {
                return Err(std::io::Error::other(format!(
                    "{SANDBOX_REFUSED}: {}",
                    layer.missing.join("; ")
                )));
            }
            // SAFETY: `apply` makes system calls only, as the time between fork and exec
            // requires.
            unsafe {
                std::os::unix::process::CommandExt::pre_exec(&mut command, move || layer.apply())
            };
        }
        let mut child = command.spawn()?;
        let group = match ProcessGroup::register(child.id()) {
            Ok(group) => group,
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(e);
            }
        };
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(std::io::Error::other("the child's pipes were not made"));
        };
        Ok(Started {
            process: Process::Spawned(child),
            group,
            stdin: Box::new(stdin),
            outputs: [Stream::from(stdout), Stream::from(stderr)],
            slot: None,
        })
    }
}

/// Runs checks one after the other, faster than [`Launcher::run`] one by one: on Linux, the
/// first check starts the harness as a fork server ([`grader_checks::forks`]), and every
/// check then runs in a fork of it rather than in a program started anew. Each check still
/// has a process, a process group and limits of its own, and is watched and stopped the
/// same way. Elsewhere, or when the harness cannot serve, each check starts the program.
///
/// A session belongs to the thread that made it: the server ends with that thread.
pub struct Session<'a> {
    launcher: &'a Launcher,
    server: ServerSlot,
    /// Not `Send`: the server's parent-death signal follows the thread that started it.
    _thread: std::marker::PhantomData<*const ()>,
}

impl Session<'_> {
    /// [`Launcher::run`], in this session.
    pub(crate) fn run(
        &mut self,
        lesson: &str,
        check: &str,
        scratch: &Path,
        deadlines: Deadlines<'_>,
    ) -> Ran {
        self.launcher
            .run_in(Some(&mut self.server), lesson, check, scratch, deadlines)
    }
}

/// Fork servers started ahead of their checks ([`prestart`]), while the learner's library
/// is compiled: a run's checks then find their servers, and the servers' runner zygotes,
/// started and ready, rather than starting them when the compiler is done (most of the time
/// between the compile and the first checks' runners). Linux only, like the servers.
#[cfg(target_os = "linux")]
mod prestarted {
    use super::Launcher;
    use crate::forked::Server;
    use std::ffi::OsString;
    use std::sync::{mpsc, Mutex, PoisonError};

    /// The servers waiting for a session, each with the launcher it was started for.
    static WAITING: Mutex<Vec<(Launcher, Server)>> = Mutex::new(Vec::new());

    /// The environment of a fork server of `launcher`: its checks' variables, and their
    /// limits, so that the server starts its runner zygote as it starts.
    pub(super) fn server_envs(launcher: &Launcher) -> Vec<(OsString, OsString)> {
        let mut envs = launcher.envs.clone();
        envs.push((
            kit_runner::remote::ZYGOTE_LIMITS_VAR.into(),
            launcher.limits.encode().into(),
        ));
        envs
    }

    /// Whether a server started for `a` serves `b` as one started for `b` would.
    fn same(a: &Launcher, b: &Launcher) -> bool {
        a.program == b.program && a.args == b.args && a.envs == b.envs && a.limits == b.limits
    }

    /// A thread that started waiting servers: a server ends with the thread that started
    /// it, so it waits, doing nothing, until [`stop`] drops `keep`.
    struct Keeper {
        keep: mpsc::Sender<()>,
        thread: std::thread::JoinHandle<()>,
        /// How many servers it was to start.
        count: usize,
    }

    /// The keepers of the servers started so far.
    static KEEPERS: Mutex<Vec<Keeper>> = Mutex::new(Vec::new());

    /// Starts `count` fork servers of `launcher` on a thread of their own, so that the
    /// caller goes on at once (to start its compiler), in place of any still waiting.
    pub(crate) fn start(launcher: &Launcher, count: usize) {
        stop();
        if !launcher.serves_forks() || count == 0 {
            return;
        }
        let launcher = launcher.clone();
        let (keep, until) = mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            for _ in 0..count {
                let envs = server_envs(&launcher);
                let Some(server) = Server::spawn(&launcher.program, &launcher.args, &envs) else {
                    break;
                };
                WAITING
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push((launcher.clone(), server));
            }
            // Until `stop`: the servers end with this thread.
            let _ = until.recv();
        });
        KEEPERS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Keeper {
                keep,
                thread,
                count,
            });
    }

    /// A server started for a launcher like `launcher`, if one is waiting.
    pub(super) fn take(launcher: &Launcher) -> Option<Server> {
        let mut waiting = WAITING.lock().unwrap_or_else(PoisonError::into_inner);
        let i = waiting.iter().position(|(l, _)| same(l, launcher))?;
        Some(waiting.swap_remove(i).1)
    }

    /// Stops every server still waiting (a run whose checks took fewer, or none), then
    /// ends the threads that started them: call it once the sessions that took the others
    /// are done.
    pub(crate) fn stop() {
        let keepers = std::mem::take(&mut *KEEPERS.lock().unwrap_or_else(PoisonError::into_inner));
        let mut started = 0;
        for keeper in keepers {
            drop(keeper.keep);
            let _ = keeper.thread.join();
            started += keeper.count;
        }
        // After the threads: a server one was still starting is here too, and reaped.
        let waiting = std::mem::take(&mut *WAITING.lock().unwrap_or_else(PoisonError::into_inner));
        if started > 0 {
            crate::fast::taken(
                "prestart",
                &format!(
                    "{} of {started} fork servers started during the build served checks",
                    started.saturating_sub(waiting.len())
                ),
            );
        }
        drop(waiting);
    }
}

#[cfg(target_os = "linux")]
pub(crate) use prestarted::start as prestart;

/// [`prestart`] where there are no fork servers: nothing.
#[cfg(not(target_os = "linux"))]
pub(crate) fn prestart(_launcher: &Launcher, _count: usize) {}

/// Stops, when dropped, the fork servers [`prestart`] started that no session took: a run
/// holds one from before its build to after its checks, so that none outlives it.
pub(crate) struct PrestartedRun;

impl Drop for PrestartedRun {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        prestarted::stop();
    }
}

/// A session's fork server.
enum ServerSlot {
    /// None started yet.
    Unstarted,
    /// Running, and idle.
    #[cfg(target_os = "linux")]
    Idle(crate::forked::Server),
    /// Out for a check (see [`ServerSlot::keep`]), lost, or never to be had: each check
    /// starts the program.
    Unavailable,
}

/// How long a fork server may take to start, or to answer a request to start a check.
#[cfg(target_os = "linux")]
const SERVER_ANSWER: Duration = Duration::from_secs(10);

/// How long a fork server may take to report the end of a check stopped by the grader.
#[cfg(target_os = "linux")]
const SERVER_REAP: Duration = Duration::from_secs(2);

impl ServerSlot {
    /// Starts a job in a fork of this slot's server (starting the server first if needed),
    /// or, when there is none to be had, as a program.
    fn start(
        &mut self,
        launcher: &Launcher,
        args: &[&OsStr],
        envs: &[(&str, String); 2],
        scratch: &Path,
    ) -> std::io::Result<Started<'_>> {
        #[cfg(target_os = "linux")]
        {
            // A request carries its arguments and folder as text.
            let request = request(args, envs, scratch).filter(|_| launcher.serves_forks());
            let Some(request) = request else {
                crate::fast::not_taken(
                    "fork",
                    if launcher.learner_linked {
                        "the learner's crate is linked into the harness: its code could run in a server"
                    } else if launcher.fork {
                        "the check's arguments or folder are not text"
                    } else {
                        "forks are off for this run (GRADER_FAST_PATHS=off)"
                    },
                );
                return launcher.spawn(args, envs, scratch);
            };
            if matches!(self, ServerSlot::Unstarted) {
                let prestarted = prestarted::take(launcher)
                    .and_then(|mut server| server.ready(SERVER_ANSWER).then_some(server));
                let server = prestarted.or_else(|| {
                    crate::forked::Server::start(
                        &launcher.program,
                        &launcher.args,
                        &prestarted::server_envs(launcher),
                        SERVER_ANSWER,
                    )
                });
                *self = match server {
                    Some(server) => ServerSlot::Idle(server),
                    None => {
                        crate::fast::not_taken(
                            "fork",
                            "the fork server did not start: this thread's checks start the program",
                        );
                        ServerSlot::Unavailable
                    }
                };
            }
            if let ServerSlot::Idle(_) = self {
                let ServerSlot::Idle(server) = std::mem::replace(self, ServerSlot::Unavailable)
                else {
                    unreachable!("matched just above")
                };
                return match fork(server, &request) {
                    Ok(started) => Ok(Started {
                        slot: Some(self),
                        ..started
                    }),
                    // The server is dropped (stopped); this check, and the session's next
                    // ones, start the program.
                    Err(e) => {
                        crate::fast::not_taken(
                            "fork",
                            &format!("the fork server did not answer ({e})"),
                        );
                        launcher.spawn(args, envs, scratch)
                    }
                };
            }
        }
        launcher.spawn(args, envs, scratch)
    }

    /// Takes back the server a check was forked from, once the check's end was heard; a
    /// server that was lost, or did not report the end, is dropped (stopped), and the next
    /// check starts a new one.
    fn keep(&mut self, process: Process) {
        #[cfg(target_os = "linux")]
        {
            *self = match process {
                Process::Forked {
                    server,
                    status: Some(_),
                    lost: false,
                    silent: false,
                    ..
                } => ServerSlot::Idle(server),
                _ => ServerSlot::Unstarted,
            };
        }
        #[cfg(not(target_os = "linux"))]
        let _ = process;
    }
}

/// A fork server's request for a job: `None` when an argument or the folder is not
/// UTF-8 (a request carries them as text).
#[cfg(target_os = "linux")]
fn request(
    args: &[&OsStr],
    envs: &[(&str, String); 2],
    scratch: &Path,
) -> Option<grader_checks::forks::Request> {
    scratch.to_str()?;
    Some(grader_checks::forks::Request {
        args: args
            .iter()
            .map(|a| a.to_str().map(str::to_string))
            .collect::<Option<_>>()?,
        cwd: scratch.to_path_buf(),
        env: envs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect(),
    })
}

/// Asks `server` to start the job of `request`: makes its standard streams, passes them,
/// and lists its process group as running.
#[cfg(target_os = "linux")]
fn fork(
    mut server: crate::forked::Server,
    request: &grader_checks::forks::Request,
) -> std::io::Result<Started<'static>> {
    use rustix::fd::OwnedFd;
    let (stdin_read, stdin_write) = std::io::pipe()?;
    let (stdout_read, stdout_write) = std::io::pipe()?;
    let (stderr_read, stderr_write) = std::io::pipe()?;
    let theirs: [OwnedFd; 3] = [stdin_read.into(), stdout_write.into(), stderr_write.into()];
    // Asked outside the lock (a server that is slow to answer must not hold up Ctrl-C);
    // the check waits for its token before it runs anything, so listing it next is in time.
    let pid = server.start_check(request, [&theirs[0], &theirs[1], &theirs[2]], SERVER_ANSWER)?;
    // Opened before the check can end (it waits for its token), so it names this process
    // and no later one: the way to stop a check that left its process group.
    let pidfd = rustix::process::Pid::from_raw(pid as i32)
        .and_then(|p| rustix::process::pidfd_open(p, rustix::process::PidfdFlags::empty()).ok());
    let group = ProcessGroup::register(pid)?;
    // Only the check may hold its ends: their closing is how its output ends.
    drop(theirs);
    Ok(Started {
        process: Process::Forked {
            server,
            pid,
            pidfd,
            status: None,
            lost: false,
            silent: false,
        },
        group,
        stdin: Box::new(stdin_write),
        outputs: [Stream::from(stdout_read), Stream::from(stderr_read)],
        slot: None,
    })
}

/// A job's process once started, with the streams the grader holds.
struct Started<'s> {
    process: Process,
    group: ProcessGroup,
    stdin: Box<dyn Write + Send>,
    outputs: [Stream; 2],
    /// The session's slot the process's server goes back to.
    slot: Option<&'s mut ServerSlot>,
}

/// The read end of a job's standard output or error.
struct Stream {
    reader: Box<dyn Read + Send>,
    /// The pipe's inode (Linux), to find who else holds it.
    inode: Option<u64>,
}

impl<T: Read + Send + std::os::fd::AsFd + 'static> From<T> for Stream {
    fn from(reader: T) -> Self {
        #[cfg(target_os = "linux")]
        let inode = rustix::fs::fstat(&reader).ok().map(|s| s.st_ino);
        #[cfg(not(target_os = "linux"))]
        let inode = None;
        Stream {
            reader: Box::new(reader),
            inode,
        }
    }
}

/// A job's process: a program started for it, or a fork of a session's server.
enum Process {
    Spawned(Child),
    #[cfg(target_os = "linux")]
    Forked {
        server: crate::forked::Server,
        pid: u32,
        /// The process's pidfd, to kill it whatever group it is in.
        pidfd: Option<rustix::fd::OwnedFd>,
        /// Its end, once the server reported it.
        status: Option<ExitStatus>,
        /// The server is gone, and took the process with it (its parent-death signal).
        lost: bool,
        /// The server did not report the end of a check the grader stopped: it is not used
        /// again, and the check's end is taken to be the kill.
        silent: bool,
    },
}

impl Process {
    /// Whether the process's server was lost while it ran.
    fn lost(&self) -> bool {
        match self {
            Process::Spawned(_) => false,
            #[cfg(target_os = "linux")]
            Process::Forked { lost, .. } => *lost,
        }
    }

    /// Kills the process itself (SIGKILL), in case it left its process group, unless its end
    /// was already seen.
    fn kill(&mut self) {
        match self {
            Process::Spawned(child) => {
                let _ = child.kill();
            }
            #[cfg(target_os = "linux")]
            Process::Forked {
                pidfd: Some(pidfd),
                status: None,
                ..
            } => {
                let _ = rustix::process::pidfd_send_signal(pidfd, rustix::process::Signal::KILL);
            }
            #[cfg(target_os = "linux")]
            Process::Forked { .. } => {}
        }
    }

    /// Its end, if it has ended.
    fn try_wait(&mut self) -> std::io::Result<Option<ExitStatus>> {
        self.ended(Duration::ZERO)
    }

    /// Waits for its end (a stopped process ends at once).
    fn wait(&mut self) -> std::io::Result<ExitStatus> {
        match self {
            Process::Spawned(child) => child.wait(),
            #[cfg(target_os = "linux")]
            Process::Forked { .. } => match self.ended(SERVER_REAP)? {
                Some(status) => Ok(status),
                None => {
                    // The server does not answer (the code under test stopped it?): it is
                    // dropped, and the check, killed, counts as ended by the kill.
                    if let Process::Forked { status, silent, .. } = self {
                        *silent = true;
                        *status = Some(killed());
                    }
                    Ok(killed())
                }
            },
        }
    }

    fn ended(&mut self, within: Duration) -> std::io::Result<Option<ExitStatus>> {
        match self {
            Process::Spawned(child) => child.try_wait(),
            #[cfg(target_os = "linux")]
            Process::Forked {
                server,
                pid,
                status,
                lost,
                ..
            } => {
                use crate::forked::Ended;
                if status.is_none() && !*lost {
                    match server.ended(*pid, within) {
                        Ended::Exited(ended) => *status = Some(ended),
                        Ended::Running => {}
                        Ended::Lost => *lost = true,
                    }
                }
                Ok(if *lost { Some(killed()) } else { *status })
            }
        }
    }

    /// Whether the check's server did not report its end (see `silent`).
    fn silent(&self) -> bool {
        match self {
            Process::Spawned(_) => false,
            #[cfg(target_os = "linux")]
            Process::Forked { silent, .. } => *silent,
        }
    }
}

/// The status of a process killed by SIGKILL: what became of a check whose server was lost.
#[cfg(target_os = "linux")]
fn killed() -> ExitStatus {
    use std::os::unix::process::ExitStatusExt;
    ExitStatus::from_raw(9)
}

/// A token no code under test can guess: the report must carry it.
fn new_token() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    hasher.write_u32(std::process::id());
    format!("{:016x}", hasher.finish())
}

fn read_report(path: &Path, token: &str) -> Option<Report> {
    let text = std::fs::read_to_string(path).ok()?;
    let sealed: Sealed = serde_json::from_str(&text).ok()?;
    (sealed.token == token).then_some(sealed.report)
}

fn seconds(d: Duration) -> String {
    let secs = d.as_secs_f64();
    if secs == secs.trunc() {
        format!("{secs:.0} s")
    } else {
        format!("{secs} s")
    }
}

/// The inodes of a job's output pipes (Linux), to find who else holds them.
fn pipe_inodes(outputs: &[Stream; 2]) -> Vec<u64> {
    outputs.iter().filter_map(|s| s.inode).collect()
}

/// Kills every process holding one of `pipes` open (Linux) and names them.
fn stop_pipe_holders(pipes: &[u64]) -> Vec<String> {
    if pipes.is_empty() {
        return Vec::new();
    }
    let wanted: Vec<String> = pipes.iter().map(|i| format!("pipe:[{i}]")).collect();
    let mut named = Vec::new();
    for pid in proc_pids() {
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            continue;
        };
        let holds = fds.filter_map(Result::ok).any(|fd| {
            std::fs::read_link(fd.path())
                .is_ok_and(|target| wanted.iter().any(|w| target.as_os_str() == w.as_str()))
        });
        if holds && pid != std::process::id() {
            named.extend(describe_process(pid));
            #[cfg(unix)]
            if let Some(p) = rustix::process::Pid::from_raw(pid as i32) {
                let _ = rustix::process::kill_process(p, rustix::process::Signal::KILL);
            }
        }
    }
    named
}

fn interpret(report: Report) -> Outcome {
    match report {
        Report::Passed => Outcome::Passed,
        Report::Failed { message } => Outcome::Failed {
            kind: FailureKind::Mismatch,
            message,
        },
        Report::Stalled { message } => Outcome::Failed {
            kind: FailureKind::Timeout,
            message,
        },
        Report::Unfinished { message, location } => Outcome::Unfinished { location, message },
        Report::Panicked { message, .. } if message.starts_with("failed to spawn thread") => {
            // Refused outright (a runner starts no threads for the learner's code), or out
            // of threads or memory.
            let refused = message.contains("PermissionDenied");
            Outcome::Failed {
                kind: FailureKind::Limit,
                message: if refused {
                    format!(
                        "could not start a thread ({message}): your function runs on the \
                         threads the check gives it, and may start none. No lesson here needs \
                         one: a retry's callbacks run on the thread that called it, and where \
                         a rule is about concurrent lookups, the check runs them at once itself."
                    )
                } else {
                    format!(
                        "could not start another thread ({message}): the check's threads, or \
                         its memory, ran out. A check needs a handful at most: is something \
                         spawned in a loop?"
                    )
                },
            }
        }
        Report::Panicked { message, location } => Outcome::Failed {
            kind: FailureKind::Panic,
            message: format!(
                "panicked{}: {message}",
                location.map(|l| format!(" at {l}")).unwrap_or_default(),
            ),
        },
        Report::KitBug { message, location } => Outcome::KitBug {
            message: format!(
                "{message}{}",
                location.map(|l| format!(" (at {l})")).unwrap_or_default()
            ),
        },
        Report::Scenario { .. } => Outcome::KitBug {
            message: "a check reported a scenario run".into(),
        },
    }
}

/// `end` with every text escaped ([`crate::sanitise::escape_controls`]).
fn escape_end(end: JobEnd) -> JobEnd {
    use crate::sanitise::escape_string as esc;
    match end {
        JobEnd::Reported {
            report,
            output,
            leaked,
        } => JobEnd::Reported {
            report: escape_report(report),
            output: esc(output),
            leaked: leaked.map(esc),
        },
        JobEnd::Failed {
            kind,
            message,
            output,
        } => JobEnd::Failed {
            kind,
            message: esc(message),
            output: esc(output),
        },
    }
}

/// `report` with every text escaped: its messages and locations, and a scenario run's
/// fields (the learner's function chose the values they show).
fn escape_report(report: Report) -> Report {
    use crate::sanitise::escape_string as esc;
    match report {
        Report::Passed => Report::Passed,
        Report::Failed { message } => Report::Failed {
            message: esc(message),
        },
        Report::Stalled { message } => Report::Stalled {
            message: esc(message),
        },
        Report::Unfinished { message, location } => Report::Unfinished {
            message: esc(message),
            location: location.map(esc),
        },
        Report::Panicked { message, location } => Report::Panicked {
            message: esc(message),
            location: location.map(esc),
        },
        Report::KitBug { message, location } => Report::KitBug {
            message: esc(message),
            location: location.map(esc),
        },
        Report::Scenario { run } => Report::Scenario {
            run: grader_checks::view::ScenarioRun {
                fields: run
                    .fields
                    .into_iter()
                    .map(|field| grader_checks::view::Field {
                        name: esc(field.name),
                        lines: field.lines.into_iter().map(esc).collect(),
                        block: field.block,
                    })
                    .collect(),
                ending: esc(run.ending),
                finished: run.finished,
            },
        },
    }
}

/// A check that left a process running fails, whatever else it saw.
fn leak_failure(outcome: Outcome, what: &str) -> Outcome {
    let note = format!(
        "the code under test left a process running after the check ({what}); it was \
         stopped. A retry loop has no reason to start processes."
    );
    match outcome {
        Outcome::Passed | Outcome::Unfinished { .. } => Outcome::Failed {
            kind: FailureKind::Leak,
            message: note,
        },
        Outcome::Failed { kind, message } => Outcome::Failed {
            kind,
            message: format!("{message}\n\nAlso: {note}"),
        },
        bug @ Outcome::KitBug { .. } => bug,
    }
}

/// How watching a child ended.
enum Watched {
    Exited(ExitStatus),
    TimedOut,
    TooManyTasks(u32),
    Cancelled,
}

/// Polls the child until it exits, its time runs out, it runs too many tasks, or the run is
/// `cancelled`.
fn watch(
    child: &mut Process,
    group: &ProcessGroup,
    timeout: Duration,
    max_tasks: u32,
    cancelled: impl Fn() -> bool,
) -> Watched {
    let start = Instant::now();
    let exit = ExitWait::new(child);
    let mut pause = Duration::from_micros(200);
    let mut next_count = Duration::from_millis(20);
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Watched::Exited(status),
            Ok(None) => {}
            Err(_) => {
                stop(group, child);
                return match child.wait() {
                    Ok(status) => Watched::Exited(status),
                    Err(_) => Watched::TimedOut,
                };
            }
        }
        if cancelled() {
            stop(group, child);
            let _ = child.wait();
            return Watched::Cancelled;
        }
        let elapsed = start.elapsed();
        if elapsed >= timeout {
            stop(group, child);
            let _ = child.wait();
            return Watched::TimedOut;
        }
        // Most checks end within milliseconds; count tasks only in those that do not.
        if elapsed >= next_count {
            next_count =
                elapsed + Duration::from_millis(if elapsed.as_millis() < 200 { 20 } else { 100 });
            let tasks = group.tasks();
            if tasks > max_tasks {
                stop(group, child);
                let _ = child.wait();
                return Watched::TooManyTasks(tasks);
            }
        }
        exit.pause(pause.min(timeout - elapsed));
        pause = (pause * 2).min(Duration::from_millis(10));
    }
}

/// Stops the child's group, and the child itself in case it left the group (it may join
/// another one): then it ends, and waiting for it cannot hang.
fn stop(group: &ProcessGroup, child: &mut Process) {
    group.stop();
    child.kill();
}

/// Waits for a child's exit, for at most a pause: on Linux the child's pidfd wakes the
/// wait the moment it exits (most checks take a millisecond or two, and a sleep that
/// overshoots their end leaves a core idle); elsewhere, or on a kernel without pidfds, a
/// plain sleep.
struct ExitWait {
    #[cfg(target_os = "linux")]
    pidfd: Option<rustix::fd::OwnedFd>,
}

impl ExitWait {
    fn new(process: &Process) -> ExitWait {
        #[cfg(target_os = "linux")]
        {
            use rustix::process::{pidfd_open, Pid, PidfdFlags};
            let fd = match process {
                Process::Spawned(child) => {
                    pidfd_open(Pid::from_child(child), PidfdFlags::empty()).ok()
                }
                // The server says when the check ended.
                Process::Forked { server, .. } => {
                    rustix::io::fcntl_dupfd_cloexec(server.socket(), 0).ok()
                }
            };
            ExitWait { pidfd: fd }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = process;
            ExitWait {}
        }
    }

    /// Returns when the child has exited, or after `pause`.
    fn pause(&self, pause: Duration) {
        #[cfg(target_os = "linux")]
        if let Some(pidfd) = &self.pidfd {
            use rustix::event::{poll, PollFd, PollFlags, Timespec};
            let timeout = Timespec {
                tv_sec: pause.as_secs() as i64,
                tv_nsec: i64::from(pause.subsec_nanos()),
            };
            let mut fds = [PollFd::new(pidfd, PollFlags::IN)];
            if poll(&mut fds, Some(&timeout)).is_ok() {
                return;
            }
        }
        thread::sleep(pause);
    }
}

/// The checks running now, for [`stop_running_checks`].
static RUNNING: Mutex<Running> = Mutex::new(Running {
    leaders: Vec::new(),
    stopped: false,
});

/// The process groups of the checks running now (their leaders' ids), and whether
/// [`stop_running_checks`] has run: no check starts after it.
struct Running {
    leaders: Vec<u32>,
    stopped: bool,
}

/// [`RUNNING`], also after a thread panicked while holding it (the list stays sound).
fn running() -> std::sync::MutexGuard<'static, Running> {
    RUNNING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Stops the process group of every check running now, at once (SIGKILL), and lets no
/// other check start. For the grader's handling of Ctrl-C and the other signals that end
/// it, which exits next: a check's own process would die with the grader anyway (its
/// parent-death signal), but what the code under test started in its group would go on
/// running.
pub(crate) fn stop_running_checks() {
    let mut running = running();
    running.stopped = true;
    #[cfg(unix)]
    for pgid in &running.leaders {
        if let Some(pgid) = rustix::process::Pid::from_raw(*pgid as i32) {
            let _ = rustix::process::kill_process_group(pgid, rustix::process::Signal::KILL);
        }
    }
}

/// A child's process group (Unix), or the child alone elsewhere; listed in [`RUNNING`]
/// while this value lives (see [`ProcessGroup::spawn`]).
struct ProcessGroup {
    #[cfg(unix)]
    pgid: Option<rustix::process::Pid>,
    pid: u32,
}

impl ProcessGroup {
    /// Lists the group led by `pid`, a process just started that waits for its standard
    /// input before it runs anything, in [`RUNNING`]; once [`stop_running_checks`] has run,
    /// stops the group instead (Unix). Either way the lock orders it with
    /// [`stop_running_checks`]: that sees the group, or the group is refused.
    fn register(pid: u32) -> std::io::Result<Self> {
        let mut running = running();
        let group = ProcessGroup {
            #[cfg(unix)]
            pgid: rustix::process::Pid::from_raw(pid as i32),
            pid,
        };
        if running.stopped {
            #[cfg(unix)]
            if let Some(pgid) = group.pgid {
                let _ = rustix::process::kill_process_group(pgid, rustix::process::Signal::KILL);
            }
            return Err(std::io::Error::other("the grader is stopping"));
        }
        running.leaders.push(pid);
        Ok(group)
    }

    /// SIGTERM to the whole group, a short grace, then SIGKILL (Unix).
    fn stop(&self) {
        #[cfg(unix)]
        if let Some(pgid) = self.pgid {
            use rustix::process::{kill_process_group, test_kill_process_group, Signal};
            if kill_process_group(pgid, Signal::TERM).is_err() {
                return; // nothing left in the group
            }
            let deadline = Instant::now() + GRACE;
            while Instant::now() < deadline {
                if test_kill_process_group(pgid).is_err() {
                    return;
                }
                thread::sleep(Duration::from_millis(5));
            }
            let _ = kill_process_group(pgid, Signal::KILL);
        }
    }

    /// What is still running in the group after its leader exited, if anything.
    fn leftovers(&self) -> Option<String> {
        #[cfg(unix)]
        if let Some(pgid) = self.pgid {
            if rustix::process::test_kill_process_group(pgid).is_ok() {
                let names = group_members(self.pid);
                return Some(if names.is_empty() {
                    "a process".to_string()
                } else {
                    names.join(", ")
                });
            }
        }
        None
    }

    /// Threads and processes running in the group (Linux); the leader's alone elsewhere.
    fn tasks(&self) -> u32 {
        count_group_tasks(self.pid)
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        running().leaders.retain(|pid| *pid != self.pid);
    }
}

/// A process the grader starts for its own work on the learner's code (the compiler, for
/// one) in a process group of its own, listed with the running checks: Ctrl-C stops it too,
/// and [`Contained::stop`] (or dropping it) stops the whole group the way a check's group is
/// stopped, so no process it started outlives it.
pub(crate) struct Contained {
    child: Child,
    group: ProcessGroup,
    /// The group was stopped already: it is not signalled again.
    stopped: bool,
}

impl Contained {
    /// Starts `command` in a process group of its own.
    pub(crate) fn spawn(command: &mut Command) -> std::io::Result<Contained> {
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(command, 0);
        let mut child = command.spawn()?;
        match ProcessGroup::register(child.id()) {
            Ok(group) => Ok(Contained {
                child,
                group,
                stopped: false,
            }),
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                Err(e)
            }
        }
    }

    /// The process itself (its pipes, its end).
    pub(crate) fn child(&mut self) -> &mut Child {
        &mut self.child
    }

    /// Stops the whole group (SIGTERM, a short grace, SIGKILL) and the process itself, and
    /// waits for its end.
    pub(crate) fn stop(&mut self) -> std::io::Result<ExitStatus> {
        if !self.stopped {
            self.stopped = true;
            self.group.stop();
            let _ = self.child.kill();
        }
        self.child.wait()
    }
}

impl Drop for Contained {
    fn drop(&mut self) {
        // What the process started and left behind goes with it.
        let _ = self.stop();
    }
}

/// `pid N: command` for every process of group `pgid` (Linux).
fn group_members(pgid: u32) -> Vec<String> {
    group_pids(pgid).filter_map(describe_process).collect()
}

/// `pid N: command` (Linux).
fn describe_process(pid: u32) -> Option<String> {
    let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let cmd = String::from_utf8_lossy(&cmd)
        .split('\0')
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    Some(format!(
        "pid {pid}: `{}`",
        cmd.chars().take(80).collect::<String>()
    ))
}

fn count_group_tasks(pgid: u32) -> u32 {
    group_pids(pgid)
        .filter_map(|pid| std::fs::read_to_string(format!("/proc/{pid}/stat")).ok())
        // A member that ended since it was found no longer counts.
        .filter(|stat| stat_field(stat, 5) == Some(u64::from(pgid)))
        .map(|stat| stat_field(&stat, 20).unwrap_or(1) as u32)
        .sum()
}

/// Every process's id (Linux; nothing elsewhere).
fn proc_pids() -> impl Iterator<Item = u32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
}

/// The processes of group `pgid` (Linux; nothing elsewhere). Each process's group is asked of
/// the kernel (`getpgid`, the same value as field 5 of `/proc/N/stat`): reading every
/// process's `stat` file instead costs a read per process, per scan, and a check that runs
/// past the first count scans several times (figures: grader/benches/README.md).
fn group_pids(pgid: u32) -> impl Iterator<Item = u32> {
    proc_pids().filter(move |pid| {
        #[cfg(target_os = "linux")]
        {
            // The C library's own call: rustix's `getpgid` asserts a group above 0, and a
            // kernel thread's is 0.
            extern "C" {
                fn getpgid(pid: i32) -> i32;
            }
            let Ok(pid) = i32::try_from(*pid) else {
                return false;
            };
            // SAFETY: a plain system call that reads another process's group; -1 when it
            // has ended.
            let group = unsafe { getpgid(pid) };
            i64::from(group) == i64::from(pgid)
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = (pid, pgid);
            false
        }
    })
}

/// Field `n` (1-based, as `man proc` numbers them) of a stat line; the command name in
/// parentheses may hold spaces, so fields are counted after its closing parenthesis.
fn stat_field(stat: &str, n: usize) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(n.checked_sub(3)?)?.parse().ok()
}

/// Whether the C library or Rust's runtime aborted the process for want of memory: glibc's
/// `Fatal glibc error: failed to register TLS destructor: out of memory` (a new thread's
/// thread-local storage did not fit under the memory limit), or the runtime's `fatal
/// runtime error: failed to initiate panic`, which comes when unwinding finds no memory to
/// start (seen after a thread that could not be spawned made the code panic). Either way
/// the process went over a limit. Only a process that then died of SIGABRT, as both aborts
/// do: the line alone is text a learner's code can print.
fn aborted_for_memory(status: ExitStatus, output: &Captured) -> bool {
    died_of_abort(status)
        && output.text.lines().any(|l| {
            (l.starts_with("Fatal glibc error:") && l.contains("out of memory"))
                || l.starts_with("fatal runtime error: failed to initiate panic")
        })
}

/// Whether the process died of SIGABRT, as the allocator's and the C library's
/// out-of-memory aborts do (anywhere but Unix, whether it could have).
fn died_of_abort(status: ExitStatus) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        status.signal() == Some(6)
    }
    #[cfg(not(unix))]
    {
        let _ = status;
        true
    }
}

/// Whether the standard library's allocator said an allocation failed (`memory allocation
/// of N bytes failed`): the process met its memory limit. The line alone is text a
/// learner's code can print: a process that ended is believed only when it then died of
/// SIGABRT, as the allocator's abort does ([`died_of_abort`]); one that never ended (killed
/// at its timeout) can only be taken at its word, and either way it failed.
fn allocation_failed(output: &Captured) -> bool {
    output.text.contains("memory allocation of")
}

/// What meets the memory limit, in the words of each message that says it was met.
const MEMORY_CAUSES: &str = "Something that grows without end does this, as do many threads \
                             at once (each reserves a stack of its own).";

/// The kind of a check's death by `status`; `runner`: whether the check's process started a
/// runner (whose own ending it then takes on).
fn death_kind(status: ExitStatus, output: &Captured, runner: bool) -> FailureKind {
    if (allocation_failed(output) && died_of_abort(status)) || aborted_for_memory(status, output) {
        return FailureKind::Limit;
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if matches!(status.signal(), Some(25 | 24)) {
            return FailureKind::Limit;
        }
    }
    if runner && status.code() == Some(i32::from(kit_runner::runner::EXIT_ANSWER_TOO_LARGE)) {
        return FailureKind::Limit;
    }
    FailureKind::Crash
}

/// The name of a check's report in its working folder.
pub(crate) const REPORT_FILE: &str = "report.json";

/// How a check's process that could not be confined says so on its standard error.
const SANDBOX_REFUSED: &str = "the sandbox could not be set up";

/// What a learner is told of a check's death by `status` (`runner` as for [`death_kind`]).
fn describe_death(status: ExitStatus, output: &Captured, limits: &Limits, runner: bool) -> String {
    if allocation_failed(output) && died_of_abort(status) {
        return format!(
            "used more than {} of memory and was stopped (the limit of a check). {MEMORY_CAUSES}",
            bytes(limits.memory)
        );
    }
    if aborted_for_memory(status, output) {
        return format!(
            "ran out of memory under the limit of a check ({}) and was stopped. Many threads \
             at once do this (each reserves a stack of its own), as does something that grows \
             without end.",
            bytes(limits.memory)
        );
    }
    if output.text.contains("has overflowed its stack") {
        return "crashed: stack overflow (endless recursion?). The check did not finish.".into();
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return match signal {
                25 => format!(
                    "wrote a file larger than {} and was stopped (the limit of a check). A \
                     retry loop has no reason to write files.",
                    bytes(limits.file_size)
                ),
                24 => "used up its CPU time and was stopped.".to_string(),
                _ => {
                    let name = match signal {
                        6 => "SIGABRT: std::process::abort, or a panic while panicking",
                        9 => "SIGKILL",
                        11 => "SIGSEGV",
                        15 => "SIGTERM",
                        _ => "a signal",
                    };
                    format!(
                        "crashed: killed by signal {signal} ({name}). The check did not finish."
                    )
                }
            };
        }
    }
    match status.code() {
        Some(0) => "crashed: the process exited with status 0 before the check finished \
                    (std::process::exit in the code under test?). Nothing was passed."
            .into(),
        // Said by the check's process before any code under test ran, or by that code
        // itself (it may exit with any status and print anything): either way no verdict
        // was seen, so it stays a failure, never a pass nor the kit's fault.
        Some(code) if code == i32::from(grader_checks::sandbox::EXIT_UNCONFINED) => {
            let said = output
                .text
                .lines()
                .find(|line| line.starts_with(SANDBOX_REFUSED))
                .unwrap_or(SANDBOX_REFUSED);
            format!(
                "did not run: the process exited with status {code} before the check started, \
                 as a check does when {said} (or the code under test called \
                 std::process::exit({code})). No check ran without its sandbox."
            )
        }
        // Said by a runner whose answer was too large to send (or by the code under test,
        // which may exit with any status): no verdict was seen either way.
        Some(code) if runner && code == i32::from(kit_runner::runner::EXIT_ANSWER_TOO_LARGE) => {
            format!(
                "ended: what your function did for one request of this check (its calls, \
                 waits, events and results; for the exhaustive check, a batch of cases) came \
                 to more than {}, more than a check reads (the limit of a check; or the code \
                 under test called std::process::exit({code})). Does something your function \
                 returns (an error's detail, say) grow without end?",
                bytes(kit_runner::runner::MAX_ANSWER as u64)
            )
        }
        Some(code) => format!(
            "crashed: the process exited with status {code} before the check finished \
             (std::process::exit in the code under test?)."
        ),
        None => "crashed: the process ended without a status.".into(),
    }
}

/// The child's output, read on threads so a chatty child never blocks on a full pipe.
struct OutputReaders {
    done: mpsc::Receiver<(Vec<u8>, bool)>,
    expected: usize,
}

struct Captured {
    text: String,
    /// A stream held [`grader_checks::report::PRIVATE_MARKER`] somewhere, kept or not.
    private: bool,
    /// Every stream reached its end.
    closed: bool,
    bytes: Vec<u8>,
    /// The streams still open, if any.
    pending: Option<OutputReaders>,
}

impl Captured {}

fn collect_output(outputs: [Stream; 2]) -> OutputReaders {
    let (tx, done) = mpsc::channel();
    let mut expected = 0;
    let streams = outputs.map(|s| Some(s.reader));
    for stream in streams.into_iter().flatten() {
        expected += 1;
        readers::read((stream, tx.clone()));
    }
    OutputReaders { done, expected }
}

/// The threads that read checks' output streams, each kept for a later stream once its
/// stream has closed: starting two threads for every check was a noticeable part of the
/// grader's own time. A thread whose stream never closes (a process that outlived its check
/// holds it) is never reused; another is started.
mod readers {
    use std::io::Read;
    use std::sync::{mpsc, Mutex, PoisonError};

    /// A stream to read to its end, and where to send what was kept of it and whether the
    /// private mark was in it.
    pub(super) type Job = (Box<dyn Read + Send>, mpsc::Sender<(Vec<u8>, bool)>);

    /// The threads waiting for a stream.
    static IDLE: Mutex<Vec<mpsc::Sender<Job>>> = Mutex::new(Vec::new());

    /// Reads `job`'s stream on an idle thread, or on a new one.
    pub(super) fn read(job: Job) {
        let idle = IDLE.lock().unwrap_or_else(PoisonError::into_inner).pop();
        let job = match idle {
            Some(thread) => match thread.send(job) {
                Ok(()) => return,
                Err(mpsc::SendError(job)) => job,
            },
            None => job,
        };
        let (give, take) = mpsc::channel::<Job>();
        std::thread::spawn(move || {
            let mut next = Some(job);
            while let Some((stream, tx)) = next.take() {
                let read = super::read_to_end(stream);
                // Idle again before it answers: the check's next one may come at once.
                IDLE.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(give.clone());
                let _ = tx.send(read);
                next = take.recv().ok();
            }
        });
    }
}

/// A check's output stream read to its end: its first [`OUTPUT_KEPT`] bytes, and whether
/// the private mark was anywhere in it.
fn read_to_end(mut stream: Box<dyn Read + Send>) -> (Vec<u8>, bool) {
    let mut kept = Vec::new();
    let mut buf = [0u8; 8192];
    // Every byte is searched for the private mark, also past what is kept: the end of what
    // was read so far, so that a mark split between two reads is found.
    let mark = grader_checks::report::PRIVATE_MARKER.as_bytes();
    let mut tail: Vec<u8> = Vec::new();
    let mut private = false;
    while let Ok(n) = stream.read(&mut buf) {
        if n == 0 {
            break;
        }
        let room = OUTPUT_KEPT.saturating_sub(kept.len());
        kept.extend_from_slice(&buf[..n.min(room)]);
        if !private {
            tail.extend_from_slice(&buf[..n]);
            private = tail.windows(mark.len()).any(|w| w == mark);
            let keep = tail.len().min(mark.len() - 1);
            tail.drain(..tail.len() - keep);
        }
    }
    (kept, private)
}

impl OutputReaders {
    /// Waits up to `limit` in all for the streams to close.
    fn finish(self, limit: Duration) -> Captured {
        let mut captured = Captured {
            text: String::new(),
            private: false,
            closed: false,
            bytes: Vec::new(),
            pending: Some(self),
        };
        captured = captured.rest(limit);
        captured
    }
}

impl Captured {
    /// Waits up to `limit` more for the streams that had not closed.
    fn rest(mut self, limit: Duration) -> Captured {
        let Some(mut readers) = self.pending.take() else {
            return self;
        };
        let deadline = Instant::now() + limit;
        while readers.expected > 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            match readers.done.recv_timeout(left) {
                Ok((part, private)) => {
                    self.bytes.extend(part);
                    self.private |= private;
                    readers.expected -= 1;
                }
                Err(_) => break,
            }
        }
        self.closed = readers.expected == 0;
        if !self.closed {
            self.pending = Some(readers);
        }
        self.text = String::from_utf8_lossy(&self.bytes).into_owned();
        if self.bytes.len() >= OUTPUT_KEPT {
            self.text.push_str("\n[output cut]");
        }
        self
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    fn captured(text: &str) -> Captured {
        Captured {
            text: text.to_string(),
            private: false,
            closed: true,
            bytes: text.as_bytes().to_vec(),
            pending: None,
        }
    }

    #[test]
    fn an_allocation_failure_printed_by_code_that_then_segfaults_is_a_crash() {
        // The line is text a learner can print; only the allocator's abort is believed.
        let out = captured("memory allocation of 41 bytes failed\n");
        assert_eq!(death_kind(segv_status(), &out, true), FailureKind::Crash);
        assert!(!describe_death(segv_status(), &out, &Limits::default(), true).contains("memory"));
    }

    #[test]
    fn an_allocation_that_failed_names_both_realistic_causes() {
        // Seen from code that grows without end, and from 500 threads under the limit (the
        // allocator, not the C library, then reports the failure).
        let abort = ExitStatus::from_raw(6);
        let out = captured("memory allocation of 41 bytes failed\n");
        assert_eq!(death_kind(abort, &out, true), FailureKind::Limit);
        let said = describe_death(abort, &out, &Limits::default(), true);
        assert!(
            said.contains("used more than 1 GiB of memory")
                && said.contains("grows without end")
                && said.contains("threads"),
            "{said}"
        );
    }

    fn segv_status() -> ExitStatus {
        ExitStatus::from_raw(11)
    }

    #[test]
    fn the_c_librarys_out_of_memory_abort_is_a_limit_not_a_crash() {
        // What glibc prints when a thread's thread-local storage does not fit under
        // RLIMIT_AS, then SIGABRT: seen with 500 threads under the 1 GiB limit.
        let abort = ExitStatus::from_raw(6);
        let out = captured("Fatal glibc error: failed to register TLS destructor: out of memory\n");
        assert_eq!(death_kind(abort, &out, true), FailureKind::Limit);
        let said = describe_death(abort, &out, &Limits::default(), true);
        assert!(
            said.contains("ran out of memory") && said.contains("threads"),
            "{said}"
        );
        // Rust's runtime, when a panic cannot start for want of memory (seen with 500
        // threads under the limit: the spawn that failed made the code panic).
        let runtime =
            captured("fatal runtime error: failed to initiate panic, error 5, aborting\n");
        assert_eq!(death_kind(abort, &runtime, true), FailureKind::Limit);
        assert!(
            describe_death(abort, &runtime, &Limits::default(), true).contains("ran out of memory")
        );
        assert_eq!(
            death_kind(segv_status(), &runtime, true),
            FailureKind::Crash
        );
        // An abort of any other kind stays a crash.
        let other = captured("thread panicked while processing panic. aborting.\n");
        assert_eq!(death_kind(abort, &other, true), FailureKind::Crash);
        // The line printed by code that then dies otherwise (a segfault) is not believed.
        let segv = ExitStatus::from_raw(11);
        assert_eq!(death_kind(segv, &out, true), FailureKind::Crash);
        assert!(!describe_death(segv, &out, &Limits::default(), true).contains("ran out of memory"));
    }

    #[test]
    fn status_5_is_an_answer_too_large_only_from_a_check_that_started_a_runner() {
        let five = ExitStatus::from_raw(5 << 8);
        let out = captured("");
        assert_eq!(death_kind(five, &out, true), FailureKind::Limit);
        let said = describe_death(five, &out, &Limits::default(), true);
        assert!(said.contains("more than 64 MiB"), "{said}");
        // In cargo's harness the learner's code runs in the check's own process: a 5 is its
        // own exit.
        assert_eq!(death_kind(five, &out, false), FailureKind::Crash);
        let said = describe_death(five, &out, &Limits::default(), false);
        assert!(said.contains("exited with status 5"), "{said}");
    }

    /// What the item's documentation once showed as an example.
    #[test]
    fn a_launcher_keeps_its_arguments() {
        let launcher = Launcher::new("/path/to/harness").arg("__check");
        assert_eq!(launcher.args.len(), 1);
    }
}

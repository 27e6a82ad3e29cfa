//! The parent side: start a harness process for one check, watch it, and read its report.

use crate::outcome::{FailureKind, Outcome, Report};
use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// How much of a child's output is kept for the failure message.
const OUTPUT_KEPT: usize = 4 * 1024;

/// How to start a harness process: a program, the arguments before `GROUP CHECK REPORT`,
/// and extra environment.
///
/// ```
/// use grader::Launcher;
/// let launcher = Launcher::new("/path/to/harness").arg("__check");
/// assert_eq!(launcher.args.len(), 1);
/// ```
#[derive(Debug, Clone)]
pub struct Launcher {
    /// The executable.
    pub program: PathBuf,
    /// Arguments placed before the check's own.
    pub args: Vec<OsString>,
    /// Environment variables set for the child.
    pub envs: Vec<(OsString, OsString)>,
}

impl Launcher {
    /// A launcher for `program` with no extra arguments.
    pub fn new(program: impl Into<PathBuf>) -> Self {
        Launcher {
            program: program.into(),
            args: Vec::new(),
            envs: Vec::new(),
        }
    }

    /// Adds an argument before the check's own.
    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Sets an environment variable for every child.
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.envs.push((key.into(), value.into()));
        self
    }

    /// Runs `check` of `group` in a new process, kills it after `timeout`, and turns what
    /// happened into an [`Outcome`]. `report` is a path the child may create; `stall` is
    /// how long a long check may go without progress (see [`crate::harness::watch_progress`]).
    pub fn run(
        &self,
        group: &str,
        check: &str,
        report: &Path,
        stall: Duration,
        timeout: Duration,
    ) -> Outcome {
        let job = [OsStr::new(group), OsStr::new(check)];
        match self.run_job(&job, report, stall, timeout) {
            JobEnd::Reported { text, output } => interpret(&text, &output),
            JobEnd::Failed { kind, message } => Outcome::Failed { kind, message },
        }
    }

    /// Runs any job the harness understands (`job` then the report path as arguments) and
    /// returns the report's text, or how the process failed.
    pub fn run_job(
        &self,
        job: &[&OsStr],
        report: &Path,
        stall: Duration,
        timeout: Duration,
    ) -> JobEnd {
        let _ = std::fs::remove_file(report);
        let spawned = Command::new(&self.program)
            .args(&self.args)
            .args(job)
            .arg(report)
            .envs(self.envs.iter().map(|(k, v)| (k, v)))
            .env(crate::harness::STALL_VAR, stall.as_secs_f64().to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn();
        let mut child = match spawned {
            Ok(child) => child,
            Err(e) => {
                return JobEnd::Failed {
                    kind: FailureKind::Crash,
                    message: format!("could not start {}: {e}", self.program.display()),
                }
            }
        };
        let output = collect_output(&mut child);
        let ended = wait_with_timeout(&mut child, timeout);
        let output = output.finish();
        let Some(status) = ended else {
            return JobEnd::Failed {
                kind: FailureKind::Timeout,
                message: format!(
                    "did not finish within {} s and was stopped.\n\
                     A loop that never ends? Every loop needs explicit stops: at most \
                     max_attempts calls, and a stop when the server's wait exceeds max_delay.{}",
                    timeout.as_secs_f64(),
                    output.section()
                ),
            };
        };
        // A report counts only from a process that then exited normally: one that died
        // after writing it did not finish cleanly.
        match std::fs::read_to_string(report) {
            Ok(text) if status.success() => JobEnd::Reported {
                text,
                output: output.section(),
            },
            _ => JobEnd::Failed {
                kind: FailureKind::Crash,
                message: format!("{}{}", describe_death(status, &output), output.section()),
            },
        }
    }
}

/// How a harness process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobEnd {
    /// It wrote its report and exited normally.
    Reported {
        /// The report file's text.
        text: String,
        /// What the code under test printed, as a message section (may be empty).
        output: String,
    },
    /// It crashed, exited early or was stopped.
    Failed {
        /// Crash or timeout.
        kind: FailureKind,
        /// What happened, with the process's output.
        message: String,
    },
}

fn interpret(text: &str, output: &str) -> Outcome {
    let report = match serde_json::from_str::<Report>(text) {
        Ok(report) => report,
        Err(e) => {
            return Outcome::Failed {
                kind: FailureKind::Crash,
                message: format!("the check's report could not be read ({e}){output}"),
            }
        }
    };
    match report {
        Report::Passed => Outcome::Passed,
        Report::Failed { message } => Outcome::Failed {
            kind: FailureKind::Mismatch,
            message: format!("{message}{output}"),
        },
        Report::Unfinished { message, location } => Outcome::Unfinished { location, message },
        Report::Panicked { message, location } => Outcome::Failed {
            kind: FailureKind::Panic,
            message: format!(
                "panicked{}: {message}{output}",
                location.map(|l| format!(" at {l}")).unwrap_or_default(),
            ),
        },
    }
}

fn describe_death(status: ExitStatus, output: &Captured) -> String {
    if output.text.contains("has overflowed its stack") {
        return "crashed: stack overflow (endless recursion?). The check did not finish.".into();
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            let name = match signal {
                6 => "SIGABRT: std::process::abort, or a panic while panicking",
                9 => "SIGKILL",
                11 => "SIGSEGV",
                _ => "a signal",
            };
            return format!(
                "crashed: killed by signal {signal} ({name}). The check did not finish."
            );
        }
    }
    match status.code() {
        Some(0) => "crashed: the process exited with status 0 before the check finished \
                    (std::process::exit in the code under test?). Nothing was passed."
            .into(),
        Some(code) => format!(
            "crashed: the process exited with status {code} before the check finished \
             (std::process::exit in the code under test?)."
        ),
        None => "crashed: the process ended without a status.".into(),
    }
}

/// Polls the child until it exits or `timeout` passes; on timeout kills it and returns `None`.
fn wait_with_timeout(child: &mut Child, timeout: Duration) -> Option<ExitStatus> {
    let start = Instant::now();
    let mut pause = Duration::from_micros(200);
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if start.elapsed() >= timeout => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            Ok(None) => {
                thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(10));
            }
            Err(_) => {
                let _ = child.kill();
                return child.wait().ok();
            }
        }
    }
}

/// The child's output, read on threads so a chatty child never blocks on a full pipe.
struct OutputReaders {
    done: mpsc::Receiver<Vec<u8>>,
    expected: usize,
}

struct Captured {
    text: String,
}

impl Captured {
    /// The output as a message section, or nothing when there was none.
    fn section(&self) -> String {
        let text = self.text.trim_end();
        if text.is_empty() {
            String::new()
        } else {
            format!("\n\n---- output of the code under test ----\n{text}")
        }
    }
}

fn collect_output(child: &mut Child) -> OutputReaders {
    let (tx, done) = mpsc::channel();
    let mut expected = 0;
    let streams: [Option<Box<dyn Read + Send>>; 2] = [
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    ];
    for mut stream in streams.into_iter().flatten() {
        expected += 1;
        let tx = tx.clone();
        thread::spawn(move || {
            let mut kept = Vec::new();
            let mut buf = [0u8; 8192];
            while let Ok(n) = stream.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let room = OUTPUT_KEPT.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
            let _ = tx.send(kept);
        });
    }
    OutputReaders { done, expected }
}

impl OutputReaders {
    fn finish(self) -> Captured {
        let mut all = Vec::new();
        for _ in 0..self.expected {
            // A grandchild may hold the pipe open: do not wait for it for long.
            match self.done.recv_timeout(Duration::from_secs(1)) {
                Ok(part) => all.extend(part),
                Err(_) => break,
            }
        }
        let mut text = String::from_utf8_lossy(&all).into_owned();
        if all.len() >= OUTPUT_KEPT {
            text.push_str("\n[output cut]");
        }
        Captured { text }
    }
}

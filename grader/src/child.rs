//! The parent side: start a harness process for one check, watch it, and read its report.

use crate::outcome::{FailureKind, Outcome, Report};
use std::ffi::OsString;
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
    /// happened into an [`Outcome`]. `report` is a path the child may create.
    pub fn run(&self, group: &str, check: &str, report: &Path, timeout: Duration) -> Outcome {
        let _ = std::fs::remove_file(report);
        let spawned = Command::new(&self.program)
            .args(&self.args)
            .arg(group)
            .arg(check)
            .arg(report)
            .envs(self.envs.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn();
        let mut child = match spawned {
            Ok(child) => child,
            Err(e) => {
                return Outcome::Failed {
                    kind: FailureKind::Crash,
                    message: format!("could not start {}: {e}", self.program.display()),
                }
            }
        };
        let output = collect_output(&mut child);
        let ended = wait_with_timeout(&mut child, timeout);
        let output = output.finish();
        match ended {
            None => Outcome::Failed {
                kind: FailureKind::Timeout,
                message: format!(
                    "did not finish within {} s and was stopped.\n\
                     A loop that never ends? Every loop needs explicit stops: at most \
                     max_attempts calls, and a stop when the server's wait exceeds max_delay.{}",
                    timeout.as_secs_f64(),
                    output.section()
                ),
            },
            Some(status) => interpret(status, read_report(report), &output),
        }
    }
}

fn read_report(path: &Path) -> Option<Result<Report, String>> {
    let text = std::fs::read_to_string(path).ok()?;
    Some(serde_json::from_str(&text).map_err(|e| format!("unreadable report ({e})")))
}

fn interpret(
    status: ExitStatus,
    report: Option<Result<Report, String>>,
    output: &Captured,
) -> Outcome {
    let crash = |message: String| Outcome::Failed {
        kind: FailureKind::Crash,
        message: format!("{message}{}", output.section()),
    };
    let report = match report {
        Some(Ok(report)) if status.success() => report,
        Some(Ok(_)) | Some(Err(_)) | None => return crash(describe_death(status, output)),
    };
    match report {
        Report::Passed => Outcome::Passed,
        Report::Failed { message } => Outcome::Failed {
            kind: FailureKind::Mismatch,
            message: format!("{message}{}", output.section()),
        },
        Report::Unfinished { message, location } => Outcome::Unfinished { location, message },
        Report::Panicked { message, location } => Outcome::Failed {
            kind: FailureKind::Panic,
            message: format!(
                "panicked{}: {message}{}",
                location.map(|l| format!(" at {l}")).unwrap_or_default(),
                output.section()
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

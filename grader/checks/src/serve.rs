//! The child side: a harness process runs exactly one job and writes a [`Report`].
//!
//! The grader never runs code under test in its own process. Each check runs in a child so
//! that an endless loop, an abort, a stack overflow or `std::process::exit` ends only that
//! child; the grader sees a missing report and says so.
//!
//! The report is a file rather than standard output, so that nothing the code under test
//! prints can pass for one; and it carries a token the parent sends on standard input before
//! any code under test runs, so that a file the code under test writes cannot either.
//!
//! Arguments: `GROUP check NAME REPORT-PATH` or `GROUP scenario FILE REPORT-PATH`.

use crate::group::{Check, Job};
use crate::panics::{self, Caught};
use crate::report::Report;
use crate::scenario::Format;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Read};
use std::panic::{self, AssertUnwindSafe};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// The environment variable through which the grader says how long one step of a check
/// may make no progress (the `--timeout`).
pub const STALL_VAR: &str = "GRADER_STALL_SECS";

/// The exit status of a harness that was started wrongly (bad arguments, unknown group).
pub const EXIT_USAGE: u8 = 2;

/// Where this process writes its report, and the token it must carry.
static REPORT: OnceLock<(PathBuf, String)> = OnceLock::new();

/// What the parent wrote on standard input after the token: the data the grader computed
/// for this check ([`Group::check_input`](crate::Group::check_input)), or nothing.
static INPUT: OnceLock<Vec<u8>> = OnceLock::new();

/// The most input a harness reads (the largest, build3's digests, is about 2 MiB).
const MAX_INPUT: u64 = 64 << 20;

/// The data the grader handed this check on standard input, if any: see
/// [`Group::check_input`](crate::Group::check_input). `None` outside a harness process and
/// when the grader sent nothing; the check must then do without it, just more slowly.
pub fn check_input() -> Option<&'static [u8]> {
    INPUT.get().map(Vec::as_slice).filter(|b| !b.is_empty())
}

/// A report as written to the file: the parent's token, then the report.
#[derive(Debug, Serialize, Deserialize)]
pub struct Sealed {
    /// The token the parent sent on standard input.
    pub token: String,
    /// What happened.
    pub report: Report,
}

/// One job's `main`: reads the job from `args` (without the program name) and the token from
/// standard input, runs the job with `run` (which returns `None` for a group this harness
/// does not serve), writes the report and exits. A harness calls it through
/// [`harness_main`](crate::harness_main), which also serves forks.
///
/// `run` is a plain function pointer, so that all of this is compiled once, here, and the
/// harness — rebuilt after every edit of the learner's file — compiles almost nothing.
pub fn main(args: &[String], run: fn(&str, &Job) -> Option<Report>) -> ExitCode {
    ExitCode::from(run_job_args(args, run))
}

/// [`main`] for one job: returns the exit status when it does not exit itself.
pub(crate) fn run_job_args(args: &[String], run: fn(&str, &Job) -> Option<Report>) -> u8 {
    let [group, kind, what, report_path] = args else {
        eprintln!(
            "usage: GROUP check NAME REPORT-PATH | GROUP scenario FILE REPORT-PATH\n\
             This program is started by the grader: run `cargo run -p grader -- --help`."
        );
        return EXIT_USAGE;
    };
    let job = match kind.as_str() {
        "check" => Job::Check(what.clone()),
        "scenario" => Job::Scenario(PathBuf::from(what)),
        other => {
            eprintln!("unknown job {other:?}: expected `check` or `scenario`");
            return EXIT_USAGE;
        }
    };
    if let Some(limits) = std::env::var(crate::limits::LIMITS_VAR)
        .ok()
        .and_then(|text| crate::limits::Limits::decode(&text))
    {
        for missed in limits.apply_to_self() {
            eprintln!("limit not applied: {missed}");
        }
    }
    // The parent writes the token, a newline, the check's input if it has one (see
    // [`check_input`]), and closes the pipe; a harness run by hand reads nothing. All of it
    // is read before any code under test runs.
    let mut stdin = std::io::stdin().lock();
    let mut token = Vec::new();
    let _ = (&mut stdin).take(256).read_until(b'\n', &mut token);
    let mut input = Vec::new();
    let _ = stdin.take(MAX_INPUT).read_to_end(&mut input);
    let _ = INPUT.set(input);
    let token = String::from_utf8_lossy(&token).trim().to_string();
    let _ = REPORT.set((PathBuf::from(report_path), token));
    panics::install_quiet_hook();
    match run(group, &job) {
        Some(report) => finish(&report),
        None => {
            eprintln!("this harness does not serve group {group:?}");
            EXIT_USAGE
        }
    }
}

/// Runs the check called `name` from `checks` against `learner`, and turns what happened into
/// a report. Panics are sorted by [`panics::classify`].
pub fn run_check<L>(checks: &[Check<L>], name: &str, learner: &L) -> Report {
    let Some(check) = checks.iter().find(|c| c.info.name == name) else {
        return Report::KitBug {
            message: format!("the grader asked for a check {name:?} that this group does not have"),
            location: None,
        };
    };
    match panic::catch_unwind(AssertUnwindSafe(|| (check.run)(learner))) {
        Ok(Ok(())) => Report::Passed,
        Ok(Err(message)) => Report::Failed { message },
        Err(payload) => from_panic(payload.as_ref()),
    }
}

/// Runs one job of a group against `learner`, in this process: the check of that name among
/// `checks`, or a scenario file of the group's format `S`.
pub fn run_job<S: Format>(checks: &[Check<S::Learner>], job: &Job, learner: &S::Learner) -> Report {
    match job {
        Job::Check(name) => run_check(checks, name, learner),
        Job::Scenario(path) => match S::load(path) {
            Ok(scenario) => Report::Scenario {
                run: scenario.run(learner),
            },
            Err(e) => Report::Failed {
                message: e.to_string(),
            },
        },
    }
}

/// The report for a panic that escaped a check.
pub fn from_panic(payload: &(dyn std::any::Any + Send)) -> Report {
    match panics::classify(payload) {
        Caught::Verdict(message) => Report::Failed { message },
        Caught::Unfinished { message, location } => Report::Unfinished { message, location },
        Caught::Learner { message, location } => Report::Panicked { message, location },
        Caught::Kit { message, location } => Report::KitBug { message, location },
    }
}

/// Writes `report` and ends the process: threads the code under test may have left running
/// must not keep the check alive.
fn finish(report: &Report) -> ! {
    let written = REPORT
        .get()
        .ok_or_else(|| "no report path".to_string())
        .and_then(|(path, token)| {
            let sealed = Sealed {
                token: token.clone(),
                report: report.clone(),
            };
            let text = serde_json::to_string(&sealed).map_err(|e| e.to_string())?;
            std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
        });
    match written {
        Ok(()) => std::process::exit(0),
        Err(e) => {
            eprintln!("could not write the report: {e}");
            std::process::exit(3)
        }
    }
}

/// For checks that run many cases: when `progress` stays the same for longer than the
/// grader's `--timeout`, end the check as [`Report::Stalled`] with `describe(progress)`
/// (which can name the case that never finished) instead of waiting for the grader to stop
/// the whole process.
///
/// Outside a harness process (in the kit's own unit tests) this does nothing.
pub fn watch_progress(
    progress: Arc<AtomicUsize>,
    describe: impl Fn(usize) -> String + Send + 'static,
) {
    if REPORT.get().is_none() {
        return;
    }
    let stall = std::env::var(STALL_VAR)
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .map_or(Duration::from_secs(3), Duration::from_secs_f64);
    std::thread::spawn(move || {
        let mut seen = progress.load(Ordering::SeqCst);
        let mut since = Instant::now();
        loop {
            std::thread::sleep(Duration::from_millis(20));
            let now = progress.load(Ordering::SeqCst);
            if now != seen {
                (seen, since) = (now, Instant::now());
            } else if since.elapsed() >= stall {
                finish(&Report::Stalled {
                    message: describe(now),
                });
            }
        }
    });
}

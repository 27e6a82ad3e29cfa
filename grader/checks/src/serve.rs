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
//! Arguments: `LESSON check NAME REPORT-PATH` or `LESSON scenario FILE REPORT-PATH`.

use crate::lesson::{Check, Job};
use crate::panics::{self, Caught};
use crate::report::Report;
use crate::scenario::Format;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Read};
use std::panic::{self, AssertUnwindSafe};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The environment variable through which the grader says how long one step of a check
/// may make no progress (the `--timeout`).
pub const STALL_VAR: &str = "GRADER_STALL_SECS";

/// The exit status of a harness that was started wrongly (bad arguments, unknown lesson).
pub(crate) const EXIT_USAGE: u8 = 2;

/// Where this process writes its report, and the token it must carry.
static REPORT: OnceLock<ReportFile> = OnceLock::new();

/// The report's file, opened before the job starts: once the process is confined
/// ([`crate::sandbox`]) it can open no file for writing, so this is the one it writes.
#[derive(Debug)]
struct ReportFile {
    path: PathBuf,
    token: String,
    /// Taken by the first [`finish`]: a report is written once.
    file: Mutex<Option<std::io::Result<std::fs::File>>>,
}

/// What the parent wrote on standard input after the token: the data the grader computed
/// for this check ([`Lesson::check_input`](crate::Lesson::check_input)), or nothing.
static INPUT: OnceLock<Vec<u8>> = OnceLock::new();

/// The most input a harness reads (the largest, build3's digests, is about 2 MiB).
const MAX_INPUT: u64 = 64 << 20;

/// The data the grader handed this check on standard input, if any: see
/// [`Lesson::check_input`](crate::Lesson::check_input). `None` outside a harness process and
/// when the grader sent nothing; the check must then do without it, just more slowly.
pub(crate) fn check_input() -> Option<&'static [u8]> {
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

/// What a harness serves, and where the learner's code of each lesson runs.
#[derive(Debug, Clone, Copy)]
pub struct Served {
    /// Runs a job of a lesson on the code under test; `None` for a lesson this harness does
    /// not serve.
    pub run: fn(&str, &Job) -> Option<Report>,
    /// Whether the learner's code of a lesson runs in a runner the job starts
    /// ([`kit_runner::remote`]). Then this process is the judge: it runs only the kit's code,
    /// and is not confined (it starts the runner, which confines itself). Otherwise the
    /// learner's code runs here, and this process is confined before it does.
    pub in_runner: fn(&str) -> bool,
}

/// `main` for a harness some of whose lessons run the learner's code in a runner.
pub fn main_with(args: &[String], served: Served) -> ExitCode {
    ExitCode::from(run_job_args(args, served))
}

/// [`main`] for one job: returns the exit status when it does not exit itself.
pub(crate) fn run_job_args(args: &[String], served: Served) -> u8 {
    let Served { run, in_runner } = served;
    let [lesson, kind, what, report_path] = args else {
        eprintln!(
            "usage: LESSON check NAME REPORT-PATH | LESSON scenario FILE REPORT-PATH\n\
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
    let limits = std::env::var(crate::limits::LIMITS_VAR)
        .ok()
        .and_then(|text| crate::limits::Limits::decode(&text));
    if let Some(limits) = limits {
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
    let file = std::fs::File::create(report_path);
    let _ = REPORT.set(ReportFile {
        path: PathBuf::from(report_path),
        token,
        file: Mutex::new(Some(file)),
    });
    panics::install_quiet_hook();
    // The last step before any code under test runs (the learner's library is loaded by
    // `run`): from here on this process reads, writes and starts nothing it was not given.
    let mode = limits.map_or(crate::sandbox::Mode::default(), |l| l.sandbox);
    if mode != crate::sandbox::Mode::Off && !in_runner(lesson) {
        // What it may still read: the learner's library (which it loads, and which a
        // backtrace reads for the learner's file and line) and a scenario job's file. Not
        // its own program: the symbol table there leads to the reference's functions,
        // linked in for the checks.
        let mut readable: Vec<PathBuf> = std::env::var_os(crate::library::LIBRARY_VAR)
            .map(PathBuf::from)
            .into_iter()
            .collect();
        if let Job::Scenario(file) = &job {
            readable.push(file.clone());
        }
        let missing = crate::sandbox::confine(&readable);
        if mode == crate::sandbox::Mode::Required && !missing.is_empty() {
            // The grader quotes this line (grader/src/child.rs).
            eprintln!("the sandbox could not be set up: {}", missing.join("; "));
            return crate::sandbox::EXIT_UNCONFINED;
        }
    }
    match run(lesson, &job) {
        Some(report) => finish(&report),
        None => {
            eprintln!("this harness does not serve lesson {lesson:?}");
            EXIT_USAGE
        }
    }
}

/// Runs the check called `name` from `checks` against `learner`, and turns what happened into
/// a report. Panics are sorted by [`panics::classify`].
pub(crate) fn run_check<L>(checks: &[Check<L>], name: &str, learner: &L) -> Report {
    let Some(check) = checks.iter().find(|c| c.info.name == name) else {
        return Report::KitBug {
            message: format!(
                "the grader asked for a check {name:?} that this lesson does not have"
            ),
            location: None,
        };
    };
    match panic::catch_unwind(AssertUnwindSafe(|| (check.run)(learner))) {
        Ok(Ok(())) => Report::Passed,
        Ok(Err(message)) => Report::Failed { message },
        Err(payload) => from_panic(payload.as_ref()),
    }
}

/// Runs one job of a lesson against `learner`, in this process: the check of that name among
/// `checks`, or a scenario file of the lesson's format `S`.
pub(crate) fn run_job<S: Format>(
    checks: &[Check<S::Learner>],
    job: &Job,
    learner: &S::Learner,
) -> Report {
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
pub(crate) fn from_panic(payload: &(dyn std::any::Any + Send)) -> Report {
    match panics::classify(payload) {
        Caught::Verdict(message) => Report::Failed { message },
        Caught::Unfinished { message, location } => Report::Unfinished { message, location },
        Caught::Learner { message, location } => Report::Panicked {
            message: format!(
                "{}{}{}",
                // Every further line of the learner's text is indented: it cannot pass for a
                // line of the grader's own (`check … ok`, a summary) at the start of a line.
                message.replace('\n', "\n    "),
                crate::feedback::panicked_input(),
                frames_section(payload)
            ),
            location,
        },
        Caught::Kit { message, location } => Report::KitBug { message, location },
    }
}

/// [`crate::feedback::note_panicked_input`] of `fields()` when `payload` is a panic of the learner's code, not
/// one of the kit's own (a check's verdict, its deliberate panic, a fake's loop guard).
pub(crate) fn note_if_learners(
    payload: &(dyn std::any::Any + Send),
    fields: impl FnOnce() -> Vec<crate::view::Field>,
) {
    use crate::panics::{CheckFailure, DeliberatePanic};
    let kits_own = payload.is::<CheckFailure>()
        || payload.is::<DeliberatePanic>()
        || payload.is::<kit_types::gateway::fakes::LoopGuard>();
    if !kits_own {
        crate::feedback::note_panicked_input(fields());
    }
}

/// The calls of the learner's code that led to a panic reported by a runner, innermost
/// first, when `RUST_BACKTRACE` asked for them; otherwise how to ask.
fn frames_section(payload: &(dyn std::any::Any + Send)) -> String {
    let frames = payload
        .downcast_ref::<crate::panics::Reported>()
        .map(|r| r.frames.as_slice())
        .unwrap_or_default();
    if frames.is_empty() {
        let asked = std::env::var("RUST_BACKTRACE").is_ok_and(|v| v != "0");
        return if asked {
            String::new()
        } else {
            "\n\nTo see the calls of your code that led here, run again with RUST_BACKTRACE=1."
                .to_string()
        };
    }
    let mut out = String::from("\n\nyour code's calls, innermost first (RUST_BACKTRACE):");
    for frame in frames {
        out.push_str("\n  ");
        out.push_str(frame);
    }
    out
}

/// Writes `report` and ends the process: threads the code under test may have left running
/// must not keep the check alive.
fn finish(report: &Report) -> ! {
    let Some(to) = REPORT.get() else {
        eprintln!("could not write the report: no report path");
        kit_runner::runner::end_now(3)
    };
    // Held until the process ends: a second report (a stall seen as the job returns) waits
    // here, and the first one stands.
    let mut slot = to.file.lock().unwrap_or_else(|e| e.into_inner());
    // No runner outlives its judge's report (a stall ends the judge with one running).
    kit_runner::remote::end_runners();
    let sealed = Sealed {
        token: to.token.clone(),
        report: report.clone().bounded(),
    };
    let written = serde_json::to_string(&sealed)
        .map_err(|e| e.to_string())
        .and_then(|text| {
            let file = slot.take().ok_or_else(|| "written already".to_string())?;
            let mut file = file.map_err(|e| format!("{}: {e}", to.path.display()))?;
            std::io::Write::write_all(&mut file, text.as_bytes())
                .map_err(|e| format!("{}: {e}", to.path.display()))
        });
    let code = match written {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("could not write the report: {e}");
            3
        }
    };
    kit_runner::runner::end_now(code)
}

/// For checks that run many cases: when `progress` stays the same for longer than the
/// grader's `--timeout`, end the check as [`Report::Stalled`] with `describe(progress)`
/// (which can name the case that never finished) instead of waiting for the grader to stop
/// the whole process.
///
/// Outside a harness process (in the kit's own unit tests) this does nothing.
pub(crate) fn watch_progress(
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

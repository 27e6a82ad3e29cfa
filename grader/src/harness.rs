//! The child side: a harness process runs exactly one check and writes a [`Report`].
//!
//! The grader never runs code under test in its own process. Each check runs in a child so
//! that an endless loop, an abort, a stack overflow or `std::process::exit` ends only that
//! child; the grader sees a missing report and says so. The report is a file rather than
//! standard output so that nothing the code under test prints can pass for one.

use crate::checks;
use crate::outcome::{is_stub_panic, Report};
use crate::recording::CheckFailure;
use crate::scenario::AnyScenario;
use crate::Implementation;
use std::any::Any;
use std::panic::{self, AssertUnwindSafe};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Where the last panic happened, captured by the quiet panic hook.
static LAST_PANIC: Mutex<Option<String>> = Mutex::new(None);

/// Where this process writes its report; set once [`serve`] has its arguments.
static REPORT_PATH: OnceLock<PathBuf> = OnceLock::new();

/// The environment variable through which the grader says how long one step of a check
/// may make no progress (the `--timeout`).
pub const STALL_VAR: &str = "GRADER_STALL_SECS";

/// Runs the check named by `args` (`GROUP CHECK REPORT-PATH`) against `imp` and writes its
/// report. Called from the `main` of every harness binary.
///
/// ```no_run
/// fn main() -> std::process::ExitCode {
///     let args: Vec<String> = std::env::args().skip(1).collect();
///     grader::harness::serve(grader::Implementation::reference(), &args)
/// }
/// ```
pub fn serve(imp: Implementation, args: &[String]) -> ExitCode {
    if let [job, file, report_path] = args {
        if job == SCENARIO_JOB {
            return serve_scenario(imp, file, report_path);
        }
    }
    let [group, check, report_path] = args else {
        eprintln!("usage: GROUP CHECK REPORT-PATH\nThis program is started by the grader: run `cargo run -p grader -- --help`.");
        return ExitCode::from(2);
    };
    let Some(check) = checks::group(group).and_then(|g| g.check(check)) else {
        eprintln!("no check {check:?} in group {group:?}");
        return ExitCode::from(2);
    };
    // The grader prints its own account of a panic; the default hook's text would only
    // clutter the captured output.
    panic::set_hook(Box::new(|info| {
        let location = info
            .location()
            .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()));
        if let Ok(mut last) = LAST_PANIC.lock() {
            *last = location;
        }
    }));
    let _ = REPORT_PATH.set(PathBuf::from(report_path));
    let report = match panic::catch_unwind(AssertUnwindSafe(|| (check.run)(&imp))) {
        Ok(Ok(())) => Report::Passed,
        Ok(Err(message)) => Report::Failed { message },
        Err(payload) => classify(payload),
    };
    finish(&report)
}

/// The first argument that asks for a scenario run (`scenario FILE REPORT-PATH`) instead of
/// a check. No group has this name.
pub const SCENARIO_JOB: &str = "scenario";

fn serve_scenario(imp: Implementation, file: &str, report_path: &str) -> ExitCode {
    let scenario = match AnyScenario::load(std::path::Path::new(file)) {
        Ok(scenario) => scenario,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    panic::set_hook(Box::new(|_| {}));
    let run = scenario.run(&imp);
    let written = serde_json::to_string(&run)
        .map_err(|e| e.to_string())
        .and_then(|text| std::fs::write(report_path, text).map_err(|e| e.to_string()));
    match written {
        Ok(()) => std::process::exit(0),
        Err(e) => {
            eprintln!("could not write the report to {report_path}: {e}");
            ExitCode::from(3)
        }
    }
}

/// Writes `report` and ends the process: threads the code under test may have left running
/// must not keep the check alive.
fn finish(report: &Report) -> ! {
    let written = REPORT_PATH
        .get()
        .ok_or_else(|| "no report path".to_string())
        .and_then(|path| {
            let text = serde_json::to_string(report).map_err(|e| e.to_string())?;
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
/// grader's `--timeout`, fail the check with `describe(progress)` (which can name the case
/// that never finished) instead of waiting for the grader to stop the whole process.
///
/// Outside a harness process (in the kit's own unit tests) this does nothing.
pub fn watch_progress(
    progress: Arc<AtomicUsize>,
    describe: impl Fn(usize) -> String + Send + 'static,
) {
    if REPORT_PATH.get().is_none() {
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
                finish(&Report::Failed {
                    message: describe(now),
                });
            }
        }
    });
}

fn classify(payload: Box<dyn Any + Send>) -> Report {
    if let Some(CheckFailure(message)) = payload.downcast_ref::<CheckFailure>() {
        return Report::Failed {
            message: message.clone(),
        };
    }
    let message = panic_message(payload.as_ref());
    let location = LAST_PANIC.lock().ok().and_then(|mut l| l.take());
    if is_stub_panic(&message) {
        Report::Unfinished { message, location }
    } else {
        Report::Panicked { message, location }
    }
}

/// The text of a panic payload, as `panic!` formats it.
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a non-text payload".to_string()
    }
}

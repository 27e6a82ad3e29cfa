//! The child side: a harness process runs exactly one check and writes a [`Report`].
//!
//! The grader never runs code under test in its own process. Each check runs in a child so
//! that an endless loop, an abort, a stack overflow or `std::process::exit` ends only that
//! child; the grader sees a missing report and says so. The report is a file rather than
//! standard output so that nothing the code under test prints can pass for one.

use crate::checks;
use crate::outcome::{is_stub_panic, Report};
use crate::recording::CheckFailure;
use crate::Implementation;
use std::any::Any;
use std::panic::{self, AssertUnwindSafe};
use std::process::ExitCode;
use std::sync::Mutex;

/// Where the last panic happened, captured by the quiet panic hook.
static LAST_PANIC: Mutex<Option<String>> = Mutex::new(None);

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
    let report = match panic::catch_unwind(AssertUnwindSafe(|| (check.run)(&imp))) {
        Ok(Ok(())) => Report::Passed,
        Ok(Err(message)) => Report::Failed { message },
        Err(payload) => classify(payload),
    };
    let text = match serde_json::to_string(&report) {
        Ok(text) => text,
        Err(e) => {
            eprintln!("could not encode the report: {e}");
            return ExitCode::from(3);
        }
    };
    if let Err(e) = std::fs::write(report_path, text) {
        eprintln!("could not write the report to {report_path}: {e}");
        return ExitCode::from(3);
    }
    // Threads the code under test may have left running must not keep the check alive.
    std::process::exit(0)
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

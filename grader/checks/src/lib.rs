#![warn(missing_docs)]
//! The grader's checks, one slice per lesson, and the child process that runs them.
//!
//! Everything here runs inside a child process, next to the code under test; the command
//! line that starts those processes and reads their reports is the `grader` crate.
//!
//! - [`lessons`]: the registry, and one module per lesson — its checks, its scenario format
//!   and runner, and its messages.
//! - [`serve`]: the child's side: run one job, write a report; [`forks`]: a harness that
//!   starts each job by forking itself; [`library`]: the learner's function loaded from a
//!   library the grader built.
//! - Leaves every lesson uses, which depend on nothing above them: [`panics`] (whose panic it
//!   was), [`report`] (how a job ended), [`view`] (what code did, as fields),
//!   [`feedback`] (a failure message's layout), [`scenario`] (what every scenario format
//!   shares), [`limits`] (what a child may use), [`sandbox`] (what it may still do) and
//!   [`lesson`] (what a lesson is).

pub(crate) mod digests;
pub mod feedback;
pub mod forks;
pub mod lesson;
pub mod lessons;
pub(crate) mod oracle;
pub mod report;
pub mod scenario;
pub mod serve;
pub mod view;

pub use kit_runner::{library, limits, panics, sandbox};

pub use lesson::{Check, CheckInfo, CheckInput, CheckResult, Job, Lesson};
pub use oracle::ANSWERS;

/// The state of the checks' and the reference's sources this crate was built from (a hash,
/// made by `build.rs`): what is computed from them alone, such as a lesson's check input, is
/// kept under this name.
pub const KIT_STATE: &str = env!("KIT_CHECKS_STATE");
pub use report::{FailureKind, Outcome, Report, Status};

/// A harness program's `main`: with the one argument
/// [`SERVER_ARG`](forks::SERVER_ARG) it is a fork server (Linux, see [`forks`]); otherwise
/// it runs the one job `args` name (`serve::main`). `run` runs a job of a lesson on the
/// code under test, and returns `None` for a lesson this harness does not serve.
///
/// ```no_run
/// fn main() -> std::process::ExitCode {
///     let args: Vec<String> = std::env::args().skip(1).collect();
///     grader_checks::harness_main(&args, grader_checks::lessons::run_reference)
/// }
/// ```
pub fn harness_main(
    args: &[String],
    run: fn(&str, &Job) -> Option<Report>,
) -> std::process::ExitCode {
    harness_main_with(
        args,
        serve::Served {
            run,
            in_runner: |_| false,
        },
    )
}

/// [`harness_main`] for a harness some of whose lessons run the learner's code in a runner
/// ([`serve::Served`]).
pub fn harness_main_with(args: &[String], served: serve::Served) -> std::process::ExitCode {
    #[cfg(target_os = "linux")]
    if let [only] = args {
        if only == forks::SERVER_ARG {
            return std::process::ExitCode::from(forks::serve(served));
        }
    }
    serve::main_with(args, served)
}

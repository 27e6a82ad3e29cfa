//! build3 · Retry transient failures: `retry_request`.
//!
//! - `checks`: every fixture of the lesson's table, then the edges between
//!   them, then an exhaustive comparison with the reference ([`exhaustive`]).
//! - [`recording`]: runs an implementation on a scripted request and records every callback.
//! - [`scenario`]: the build3 scenario format (a policy and `[[outcome]]`s) and its runner.

mod checks;
pub mod exhaustive;
pub mod recording;
pub mod scenario;
pub mod situations;

use crate::lesson::{self, CheckInput, Job, Lesson};
use crate::report::Report;

pub use checks::{CHECKS, CHECK_INFO};

/// `retry_request` with its generic parameters fixed ([`kit_types::graded`]), so one checker
/// serves every crate that implements it.
///
/// ```
/// use grader_checks::lessons::build3::RetryFn;
/// let f: RetryFn = |p, r, s, l| reference::retry_request(p, r, s, l);
/// # let _ = f;
/// ```
pub use kit_types::graded::{Reply, RetryFn};

/// The `retry_request` the checks judge, and where it runs.
pub type Learner = crate::lesson::Learner<RetryFn>;

/// The kit's finished `retry_request`.
#[cfg(feature = "answers")]
pub fn reference() -> Learner {
    Learner::Here(|p, r, s, l| reference::retry_request(p, r, s, l))
}

/// In a copy of the kit without the answers: a function that says so when called (the
/// grader refuses `--against reference` there before any of it runs).
#[cfg(not(feature = "answers"))]
pub fn reference() -> Learner {
    Learner::Here(|_, _, _, _| crate::lesson::without_answers())
}

/// The build3 lesson.
pub const LESSON: Lesson = Lesson {
    name: "build3",
    title: super::declared::build3::TITLE,
    function: super::declared::build3::FUNCTION,
    checks: CHECK_INFO,
    saved_case: Some(exhaustive::saved_case),
    scenario_shape: "optional [policy] settings and one [[outcome]] per call of request",
    stop_hint: "Every loop needs explicit stops: at most max_attempts calls of request, and a \
                stop when the server's wait exceeds max_delay.",
    parse_scenario: lesson::scenario_summary::<scenario::Scenario>,
    run_scenario_on_reference: |path, text| {
        lesson::run_scenario_text::<scenario::Scenario>(&reference(), path, text)
    },
    run_reference: |job| run(job, &reference()),
    check_input: Some(CheckInput {
        check: "exhaustive::matches_reference_on_every_case",
        make: exhaustive::reference_digests,
    }),
    situations: lesson::situation_ids::<scenario::Scenario>,
    oracle: Some(exhaustive::oracle),
    trials: None,
};

/// Runs one job of this lesson against `learner`, in this process.
pub fn run(job: &Job, learner: &Learner) -> Report {
    crate::serve::run_job::<scenario::Scenario>(CHECKS, job, learner)
}

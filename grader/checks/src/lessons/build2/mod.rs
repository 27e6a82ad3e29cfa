//! build2 · Declared transient HTTP failures: `fetch`, the GET fetcher.
//!
//! - `checks`: one named check per rule of the fetcher's table, then an
//!   exhaustive comparison with the reference (`exhaustive`).
//! - `call`: runs an implementation on one scripted exchange and records what it did.
//! - [`scenario`]: the build2 scenario format (a list of calls, each with a reply) and its
//!   runner.

pub(crate) mod call;
mod checks;
pub(crate) mod exhaustive;
pub mod scenario;
pub mod situations;

use crate::lesson::{self, Job, Lesson};
use crate::report::Report;

pub use checks::{CHECKS, CHECK_INFO};

/// `fetch` with its generic parameter fixed ([`kit_types::graded`]), so one checker serves
/// every crate.
///
/// ```
/// use grader_checks::lessons::build2::FetchFn;
/// let f: FetchFn = |m, u, t| reference::fetch(m, u, t);
/// # let _ = f;
/// ```
pub use kit_types::graded::{FetchFn, Transport};

/// The `fetch` the checks judge, and where it runs.
pub type Learner = crate::lesson::Learner<FetchFn>;

/// The kit's finished fetcher.
#[cfg(feature = "answers")]
pub fn reference() -> Learner {
    Learner::Here(|m, u, t| reference::fetch(m, u, t))
}

/// In a copy of the kit without the answers: a function that says so when called (the
/// grader refuses `--against reference` there before any of it runs).
#[cfg(not(feature = "answers"))]
pub fn reference() -> Learner {
    Learner::Here(|_, _, _| crate::lesson::without_answers())
}

/// The build2 lesson.
pub const LESSON: Lesson = Lesson {
    name: "build2",
    title: super::declared::build2::TITLE,
    function: super::declared::build2::FUNCTION,
    checks: CHECK_INFO,
    saved_case: Some(exhaustive::saved_case),
    scenario_shape: "one [[call]] per call of fetch, each with a reply or a transport failure",
    stop_hint: "fetch makes one exchange and returns: it has no loop of its own to stop.",
    parse_scenario: lesson::scenario_summary::<scenario::FetchScenario>,
    run_scenario_on_reference: |path, text| {
        lesson::run_scenario_text::<scenario::FetchScenario>(&reference(), path, text)
    },
    run_reference: |job| run(job, &reference()),
    check_input: None,
    situations: lesson::situation_ids::<scenario::FetchScenario>,
    oracle: Some(exhaustive::oracle),
    trials: None,
};

/// Runs one job of this lesson against `learner`, in this process.
pub fn run(job: &Job, learner: &Learner) -> Report {
    crate::serve::run_job::<scenario::FetchScenario>(CHECKS, job, learner)
}

//! narrow · Narrow exception handling: `handle_attempt`, one attempt's result handled
//! narrowly.
//!
//! - `checks`: one named check per rule of the lesson, then an exhaustive comparison with
//!   the reference (`exhaustive`).
//! - `attempt`: hands an implementation one attempt and records what it did, here or in
//!   the runner that holds the learner's code.
//! - `scenario`: the narrow scenario format (a list of attempts) and its runner;
//!   `situations`: what the lesson asks the learner's own scenarios to cover.

pub(crate) mod attempt;
mod checks;
pub(crate) mod exhaustive;
pub(crate) mod scenario;
mod situations;
#[doc(hidden)]
// The test implementations hold a correct handler: not in a copy without the answers.
#[cfg(feature = "answers")]
pub(crate) mod trials;

use crate::lesson::{self, Job, Lesson};
use crate::report::Report;

pub(crate) use checks::{CHECKS, CHECK_INFO};
pub(crate) use kit_types::narrow::AttemptFn;

/// The `handle_attempt` the checks judge, and where it runs.
pub type Learner = crate::lesson::Learner<AttemptFn>;

/// The kit's finished handler.
#[cfg(feature = "answers")]
pub fn reference() -> Learner {
    Learner::Here(|request| reference::handle_attempt(request))
}

/// In a copy of the kit without the answers: a function that says so when called (the
/// grader refuses `--against reference` there before any of it runs).
#[cfg(not(feature = "answers"))]
pub fn reference() -> Learner {
    Learner::Here(|_| crate::lesson::without_answers())
}

/// The narrow lesson.
pub(crate) const LESSON: Lesson = Lesson {
    name: "narrow",
    title: super::declared::narrow::TITLE,
    function: super::declared::narrow::FUNCTION,
    checks: CHECK_INFO,
    saved_case: Some(exhaustive::saved_case),
    scenario_shape: "one [[attempt]] per call of handle_attempt, each with what its request does",
    stop_hint:
        "handle_attempt calls its request once and returns: it has no loop of its own to stop.",
    parse_scenario: lesson::scenario_summary::<scenario::AttemptScenario>,
    run_scenario_on_reference: |path, text| {
        lesson::run_scenario_text::<scenario::AttemptScenario>(&reference(), path, text)
    },
    run_reference: |job| run(job, &reference()),
    check_input: None,
    situations: lesson::situation_ids::<scenario::AttemptScenario>,
    oracle: Some(exhaustive::oracle),
    #[cfg(feature = "answers")]
    trials: Some(trials::TRIALS),
    #[cfg(not(feature = "answers"))]
    trials: None,
};

/// Runs one job of this lesson against `learner`, in this process.
pub fn run(job: &Job, learner: &Learner) -> Report {
    crate::serve::run_job::<scenario::AttemptScenario>(CHECKS, job, learner)
}

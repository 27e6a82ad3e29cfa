//! stage8 · One lookup, one budget: `lookup_availability`.
//!
//! - `checks`: every fact the course fixes, and the kit's decisions; then an exhaustive
//!   comparison with the reference ([`exhaustive`]).
//! - [`gateway`]: a check's gateway and the learner's lookups on it, here or in a runner.
//! - `scenario`: the stage8 scenario format (a gateway config, lookups, a scripted
//!   provider) and its runner, and the rendering of what a gateway saw.

mod checks;
pub mod exhaustive;
pub mod gateway;
pub(crate) mod scenario;
pub(crate) mod situations;

use crate::lesson::{self, CheckInput, Job, Lesson};
use crate::report::Report;

pub(crate) use checks::{CHECKS, CHECK_INFO};

/// The gateway the checks build (a scripted provider and a fake clock), and
/// `lookup_availability` on it ([`kit_types::graded`]).
pub use kit_types::graded::{LookupFn, TestGateway};

/// The `lookup_availability` the checks judge, and where it runs.
pub type Learner = crate::lesson::Learner<LookupFn>;

/// The kit's finished `lookup_availability`.
#[cfg(feature = "answers")]
pub fn reference() -> Learner {
    Learner::Here(reference::lookup_availability)
}

/// In a copy of the kit without the answers: a function that says so when called (the
/// grader refuses `--against reference` there before any of it runs).
#[cfg(not(feature = "answers"))]
pub fn reference() -> Learner {
    Learner::Here(|_, _| crate::lesson::without_answers())
}

/// The stage8 lesson.
pub const LESSON: Lesson = Lesson {
    name: "stage8",
    title: super::declared::stage8::TITLE,
    function: super::declared::stage8::FUNCTION,
    checks: CHECK_INFO,
    saved_case: Some(exhaustive::saved_case),
    scenario_shape: "optional [gateway] settings, [[lookup]] tables for the lookups and one \
                     [[outcome]] per provider call",
    stop_hint: "Every loop needs explicit stops: at most max_attempts attempts per lookup, and \
                no sleep that would reach the deadline.",
    parse_scenario: lesson::scenario_summary::<scenario::GatewayScenario>,
    run_scenario_on_reference: |path, text| {
        lesson::run_scenario_text::<scenario::GatewayScenario>(&reference(), path, text)
    },
    run_reference: |job| run(job, &reference()),
    check_input: Some(CheckInput {
        check: "exhaustive::matches_reference_on_every_case",
        make: exhaustive::reference_digests,
    }),
    situations: lesson::situation_ids::<scenario::GatewayScenario>,
    oracle: Some(exhaustive::oracle),
    trials: None,
};

/// Every field of a gateway configuration, in one line: what a failure and a scenario run
/// show as the input.
fn config_line(c: &kit_types::GatewayConfig) -> String {
    format!(
        "deadline {:?}, max_attempts {}, attempt_timeout {:?}, base_delay {:?}, max_delay {:?}, \
         failure_threshold {}, open_for {:?}",
        c.deadline,
        c.max_attempts,
        c.attempt_timeout,
        c.base_delay,
        c.max_delay,
        c.failure_threshold,
        c.open_for
    )
}

/// Runs one job of this lesson against `learner`, in this process.
pub fn run(job: &Job, learner: &Learner) -> Report {
    crate::serve::run_job::<scenario::GatewayScenario>(CHECKS, job, learner)
}

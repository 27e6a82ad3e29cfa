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

use crate::group::{self, CheckInput, Group, Job};
use crate::report::Report;

pub use checks::{CHECKS, CHECK_INFO};

/// `retry_request` with its generic parameters fixed ([`kit_types::graded`]), so one checker
/// serves every crate that implements it.
///
/// ```
/// use grader_checks::groups::build3::RetryFn;
/// let f: RetryFn = |p, r, s, l| reference::retry_request(p, r, s, l);
/// # let _ = f;
/// ```
pub use kit_types::graded::{Reply, RetryFn};

/// The function a build3 learner writes, as a harness links it.
#[derive(Debug, Clone, Copy)]
pub struct Learner {
    /// `retry_request`.
    pub retry_request: RetryFn,
}

/// The kit's finished `retry_request`.
pub fn reference() -> Learner {
    Learner {
        retry_request: |p, r, s, l| reference::retry_request(p, r, s, l),
    }
}

/// The build3 group.
pub const GROUP: Group = Group {
    name: "build3",
    title: "Retry transient failures",
    function: "retry_request",
    checks: CHECK_INFO,
    stop_hint: "Every loop needs explicit stops: at most max_attempts calls of request, and a \
                stop when the server's wait exceeds max_delay.",
    parse_scenario: group::scenario_summary::<scenario::Scenario>,
    run_scenario_on_reference: |path, text| {
        group::run_scenario_text::<scenario::Scenario>(&reference(), path, text)
    },
    run_reference: |job| run(job, &reference()),
    check_input: Some(CheckInput {
        check: "exhaustive::matches_reference_on_every_case",
        make: exhaustive::reference_digests,
    }),
};

/// Runs one job of this group against `learner`, in this process.
pub fn run(job: &Job, learner: &Learner) -> Report {
    crate::serve::run_job::<scenario::Scenario>(CHECKS, job, learner)
}

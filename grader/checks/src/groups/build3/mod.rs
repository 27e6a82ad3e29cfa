//! build3 · Retry transient failures: `retry_request`.
//!
//! - [`checks`](self::checks): every fixture of the lesson's table, then the edges between
//!   them, then an exhaustive comparison with the reference ([`exhaustive`]).
//! - [`recording`]: runs an implementation on a scripted request and records every callback.
//! - [`scenario`]: the build3 scenario format (a policy and `[[outcome]]`s) and its runner.

mod checks;
pub mod exhaustive;
pub mod recording;
pub mod scenario;

use crate::group::{Group, Job, ScenarioSummary};
use crate::report::Report;
use crate::scenario::ScenarioError;
use crate::view::ScenarioRun;
use kit_types::{RequestError, RetryError, RetryEvent, RetryPolicy};
use std::path::Path;

pub use checks::{CHECKS, CHECK_INFO};

/// The value the checks' request callbacks return: JSON, so that scenarios can script any
/// reply and a check can tell the caller's own value from a made-up one.
pub type Reply = serde_json::Value;

/// `retry_request` with its generic parameters fixed, so one checker serves every crate
/// that implements it.
///
/// ```
/// use grader_checks::groups::build3::RetryFn;
/// let f: RetryFn = |p, r, s, l| reference::retry_request(p, r, s, l);
/// # let _ = f;
/// ```
pub type RetryFn = fn(
    &RetryPolicy,
    &mut dyn FnMut() -> Result<Reply, RequestError>,
    &mut dyn FnMut(f64),
    &mut dyn FnMut(RetryEvent),
) -> Result<Reply, RetryError>;

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
    parse_scenario,
    run_scenario_on_reference,
    run_reference: |job| run(job, &reference()),
};

/// Runs one job of this group against `learner`, in this process.
pub fn run(job: &Job, learner: &Learner) -> Report {
    match job {
        Job::Check(name) => crate::serve::run_check(CHECKS, name, learner),
        Job::Scenario(path) => match scenario::Scenario::load(path) {
            Ok(s) => Report::Scenario {
                run: scenario::run(learner, &s),
            },
            Err(e) => Report::Failed {
                message: e.to_string(),
            },
        },
    }
}

fn parse_scenario(path: &Path, text: &str) -> Result<ScenarioSummary, ScenarioError> {
    let s = scenario::Scenario::parse(path, text)?;
    Ok(ScenarioSummary {
        settings: s.settings(),
    })
}

fn run_scenario_on_reference(path: &Path, text: &str) -> Result<ScenarioRun, ScenarioError> {
    let s = scenario::Scenario::parse(path, text)?;
    Ok(scenario::run(&reference(), &s))
}

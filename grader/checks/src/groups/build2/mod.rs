//! build2 · Declared transient HTTP failures: `fetch`, the GET fetcher.
//!
//! - [`checks`](self::checks): one named check per rule of the fetcher's table, then an
//!   exhaustive comparison with the reference ([`exhaustive`]).
//! - [`call`]: runs an implementation on one scripted exchange and records what it did.
//! - [`scenario`]: the build2 scenario format (a list of calls, each with a reply) and its
//!   runner.

pub mod call;
mod checks;
pub mod exhaustive;
pub mod scenario;

use crate::group::{Group, Job, ScenarioSummary};
use crate::report::Report;
use crate::scenario::ScenarioError;
use crate::view::ScenarioRun;
use kit_types::{HttpReply, RequestError, TransportFailure};
use std::path::Path;

pub use checks::{CHECKS, CHECK_INFO};

/// The transport a fetcher is given: one exchange, at most once.
pub type Transport<'a> = Box<dyn FnOnce(&str) -> Result<HttpReply, TransportFailure> + 'a>;

/// `fetch` with its generic parameter fixed, so one checker serves every crate.
///
/// ```
/// use grader_checks::groups::build2::FetchFn;
/// let f: FetchFn = |m, u, t| reference::fetch(m, u, t);
/// # let _ = f;
/// ```
pub type FetchFn = for<'a> fn(&str, &str, Transport<'a>) -> Result<serde_json::Value, RequestError>;

/// The function a build2 learner writes, as a harness links it.
#[derive(Debug, Clone, Copy)]
pub struct Learner {
    /// `fetch`.
    pub fetch: FetchFn,
}

/// The kit's finished fetcher.
pub fn reference() -> Learner {
    Learner {
        fetch: |m, u, t| reference::fetch(m, u, t),
    }
}

/// The build2 group.
pub const GROUP: Group = Group {
    name: "build2",
    title: "Declared transient HTTP failures",
    function: "fetch",
    checks: CHECK_INFO,
    stop_hint: "fetch makes one exchange and returns: it has no loop of its own to stop.",
    parse_scenario,
    run_scenario_on_reference,
    run_reference: |job| run(job, &reference()),
};

/// Runs one job of this group against `learner`, in this process.
pub fn run(job: &Job, learner: &Learner) -> Report {
    match job {
        Job::Check(name) => crate::serve::run_check(CHECKS, name, learner),
        Job::Scenario(path) => match scenario::FetchScenario::load(path) {
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
    let s = scenario::FetchScenario::parse(path, text)?;
    Ok(ScenarioSummary {
        settings: s.settings(),
    })
}

fn run_scenario_on_reference(path: &Path, text: &str) -> Result<ScenarioRun, ScenarioError> {
    let s = scenario::FetchScenario::parse(path, text)?;
    Ok(scenario::run(&reference(), &s))
}

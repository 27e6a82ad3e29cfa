//! stage8 · One lookup, one budget: `lookup_availability`.
//!
//! - [`checks`](self::checks): every fact the course fixes, and the kit's decisions.
//! - [`scenario`]: the stage8 scenario format (a gateway config, lookups, a scripted
//!   provider) and its runner, and the rendering of what a gateway saw.

mod checks;
pub mod scenario;

use crate::group::{Group, Job, ScenarioSummary};
use crate::report::Report;
use crate::scenario::ScenarioError;
use crate::view::ScenarioRun;
use kit_types::gateway::fakes::{FakeClock, ScriptedProvider};
use kit_types::{Gateway, Lookup};
use std::path::Path;

pub use checks::{CHECKS, CHECK_INFO};

/// The gateway the checks build: a scripted provider and a fake clock.
pub type TestGateway = Gateway<ScriptedProvider, FakeClock>;

/// `lookup_availability` on the checks' gateway type.
pub type LookupFn = fn(&TestGateway, &str) -> Lookup;

/// The function a stage8 learner writes, as a harness links it.
#[derive(Debug, Clone, Copy)]
pub struct Learner {
    /// `lookup_availability`.
    pub lookup_availability: LookupFn,
}

/// The kit's finished `lookup_availability`.
pub fn reference() -> Learner {
    Learner {
        lookup_availability: |g, item| reference::lookup_availability(g, item),
    }
}

/// The stage8 group.
pub const GROUP: Group = Group {
    name: "stage8",
    title: "One lookup, one budget",
    function: "lookup_availability",
    checks: CHECK_INFO,
    stop_hint: "Every loop needs explicit stops: at most max_attempts attempts per lookup, and \
                no sleep that would reach the deadline.",
    parse_scenario,
    run_scenario_on_reference,
    run_reference: |job| run(job, &reference()),
};

/// Runs one job of this group against `learner`, in this process.
pub fn run(job: &Job, learner: &Learner) -> Report {
    match job {
        Job::Check(name) => crate::serve::run_check(CHECKS, name, learner),
        Job::Scenario(path) => match scenario::GatewayScenario::load(path) {
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
    let s = scenario::GatewayScenario::parse(path, text)?;
    Ok(ScenarioSummary {
        settings: s.settings(),
    })
}

fn run_scenario_on_reference(path: &Path, text: &str) -> Result<ScenarioRun, ScenarioError> {
    let s = scenario::GatewayScenario::parse(path, text)?;
    Ok(scenario::run(&reference(), &s))
}

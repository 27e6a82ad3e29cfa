//! stage8 · One lookup, one budget: `lookup_availability`.
//!
//! - `checks`: every fact the course fixes, and the kit's decisions.
//! - [`scenario`]: the stage8 scenario format (a gateway config, lookups, a scripted
//!   provider) and its runner, and the rendering of what a gateway saw.

mod checks;
pub mod scenario;

use crate::group::{self, Group, Job};
use crate::report::Report;

pub use checks::{CHECKS, CHECK_INFO};

/// The gateway the checks build (a scripted provider and a fake clock), and
/// `lookup_availability` on it ([`kit_types::graded`]).
pub use kit_types::graded::{LookupFn, TestGateway};

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
    parse_scenario: group::scenario_summary::<scenario::GatewayScenario>,
    run_scenario_on_reference: |path, text| {
        group::run_scenario_text::<scenario::GatewayScenario>(&reference(), path, text)
    },
    run_reference: |job| run(job, &reference()),
    check_input: None,
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

/// Runs one job of this group against `learner`, in this process.
pub fn run(job: &Job, learner: &Learner) -> Report {
    crate::serve::run_job::<scenario::GatewayScenario>(CHECKS, job, learner)
}

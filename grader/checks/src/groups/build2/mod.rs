//! build2 · Declared transient HTTP failures: `fetch`, the GET fetcher.
//!
//! - `checks`: one named check per rule of the fetcher's table, then an
//!   exhaustive comparison with the reference ([`exhaustive`]).
//! - [`call`]: runs an implementation on one scripted exchange and records what it did.
//! - [`scenario`]: the build2 scenario format (a list of calls, each with a reply) and its
//!   runner.

pub mod call;
mod checks;
pub mod exhaustive;
pub mod scenario;

use crate::group::{self, Group, Job};
use crate::report::Report;

pub use checks::{CHECKS, CHECK_INFO};

/// `fetch` with its generic parameter fixed ([`kit_types::graded`]), so one checker serves
/// every crate.
///
/// ```
/// use grader_checks::groups::build2::FetchFn;
/// let f: FetchFn = |m, u, t| reference::fetch(m, u, t);
/// # let _ = f;
/// ```
pub use kit_types::graded::{FetchFn, Transport};

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
    parse_scenario: group::scenario_summary::<scenario::FetchScenario>,
    run_scenario_on_reference: |path, text| {
        group::run_scenario_text::<scenario::FetchScenario>(&reference(), path, text)
    },
    run_reference: |job| run(job, &reference()),
    check_input: None,
};

/// Runs one job of this group against `learner`, in this process.
pub fn run(job: &Job, learner: &Learner) -> Report {
    crate::serve::run_job::<scenario::FetchScenario>(CHECKS, job, learner)
}

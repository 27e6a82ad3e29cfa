//! The registry: every group the grader knows, in course order. Adding a lesson adds one
//! module here and one line to [`GROUPS`]; everything the grader knows about a group lives
//! in its module.

pub mod build2;
pub mod build3;
pub mod stage8;

use crate::group::{Group, Job};
use crate::report::Report;
use crate::scenario::{exercise_key, ScenarioError};
use std::path::Path;

/// Every group, in course order.
pub const GROUPS: &[&Group] = &[&build2::GROUP, &build3::GROUP, &stage8::GROUP];

/// The group called `name`, if there is one.
///
/// ```
/// assert!(grader_checks::groups::group("build3").is_some());
/// assert!(grader_checks::groups::group("build9").is_none());
/// ```
pub fn group(name: &str) -> Option<&'static Group> {
    GROUPS.iter().copied().find(|g| g.name == name)
}

/// Runs `job` of group `name` on the reference, in this process; `None` for an unknown group.
/// This is what `--against reference` starts in its child processes.
pub fn run_reference(name: &str, job: &Job) -> Option<Report> {
    group(name).map(|g| (g.run_reference)(job))
}

/// The group a scenario file is for: the one its `exercise` key names, or build3 when it has
/// none (the first format the kit had).
///
/// ```
/// use std::path::Path;
/// use grader_checks::groups::scenario_group;
/// let g = scenario_group(Path::new("s.toml"), "exercise = \"stage8\"\n").unwrap();
/// assert_eq!(g.name, "stage8");
/// let e = scenario_group(Path::new("s.toml"), "exercise = \"stage9\"\n").unwrap_err();
/// assert!(e.to_string().starts_with("s.toml:1:12: exercise \"stage9\" has no scenarios"), "{e}");
/// ```
pub fn scenario_group(path: &Path, text: &str) -> Result<&'static Group, ScenarioError> {
    match exercise_key(path, text)? {
        None => Ok(&build3::GROUP),
        Some((name, span)) => group(&name).ok_or_else(|| {
            let names: Vec<String> = GROUPS.iter().map(|g| format!("{:?}", g.name)).collect();
            ScenarioError::at(
                path,
                text,
                span.start,
                format!(
                    "exercise {name:?} has no scenarios: use {}",
                    names.join(", ")
                ),
            )
        }),
    }
}

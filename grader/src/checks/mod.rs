//! The checks of every exercise group.
//!
//! A check is a plain function that runs one implementation and returns `Err(message)` when
//! what it observed differs from the lesson's rules. The harness runs each check in its own
//! process (see [`crate::harness`]), so a check may panic, loop or crash without taking the
//! grader with it.

pub mod build3;
pub mod stage8;

use crate::Implementation;

/// What a check returns: `Err` holds the message shown to the learner.
pub type CheckResult = Result<(), String>;

/// One named check.
#[derive(Debug, Clone, Copy)]
pub struct Check {
    /// A libtest-style path, e.g. `fixtures::third_attempt_success`.
    pub name: &'static str,
    /// Runs the check against one implementation.
    pub run: fn(&Implementation) -> CheckResult,
    /// The least time this check is given, whatever `--timeout` says: the exhaustive check
    /// runs hundreds of thousands of cases.
    pub min_timeout: std::time::Duration,
}

/// An exercise group's checks and the function they exercise.
#[derive(Debug, Clone, Copy)]
pub struct Group {
    /// The group's name on the command line, e.g. `build3`.
    pub name: &'static str,
    /// The learner's function the checks call.
    pub function: &'static str,
    /// The checks, in the order they are listed.
    pub checks: &'static [Check],
}

impl Group {
    /// The check called `name`, if there is one.
    pub fn check(&self, name: &str) -> Option<&'static Check> {
        self.checks.iter().find(|c| c.name == name)
    }
}

/// Every group the grader knows, in course order.
pub const GROUPS: &[Group] = &[build3::GROUP, stage8::GROUP];

/// The group called `name`, if there is one.
///
/// ```
/// assert!(grader::checks::group("build3").is_some());
/// assert!(grader::checks::group("build9").is_none());
/// ```
pub fn group(name: &str) -> Option<&'static Group> {
    GROUPS.iter().find(|g| g.name == name)
}

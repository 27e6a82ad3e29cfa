#![warn(missing_docs)]
//! The grader's checks, one slice per exercise group, and the child process that runs them.
//!
//! Everything here runs inside a child process, next to the code under test; the command
//! line that starts those processes and reads their reports is the `grader` crate.
//!
//! - [`groups`]: the registry, and one module per group — its checks, its scenario format
//!   and runner, and its messages.
//! - [`serve`]: the child's side: run one job, write a report; [`library`]: the learner's
//!   function loaded from a library the grader built.
//! - Leaves every group uses, which depend on nothing above them: [`panics`] (whose panic it
//!   was), [`report`] (how a job ended), [`view`] (what code did, as fields),
//!   [`feedback`] (a failure message's layout), [`scenario`] (what every scenario format
//!   shares), [`limits`] (what a child may use) and [`group`] (what a group is).

pub mod feedback;
pub mod group;
pub mod groups;
pub mod library;
pub mod limits;
pub mod panics;
pub mod report;
pub mod scenario;
pub mod serve;
pub mod view;

pub use group::{Check, CheckInfo, CheckInput, CheckResult, Group, Job};

/// The state of the checks' and the reference's sources this crate was built from (a hash,
/// made by `build.rs`): what is computed from them alone, such as a group's check input, is
/// kept under this name.
pub const KIT_STATE: &str = env!("KIT_CHECKS_STATE");
pub use report::{FailureKind, Outcome, Report, Status};

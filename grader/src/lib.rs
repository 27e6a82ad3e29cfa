#![warn(missing_docs)]
//! The kit's command line, as a library: runs an exercise group's checks against the
//! learner's `practice` crate or against the `reference`, each check in its own process.
//!
//! - [`Launcher`]: the parent side, which starts a child, times it out, and reads its report;
//!   a [`Session`] runs a thread's checks as forks of one harness process (Linux).
//! - [`suite`]: selects checks with libtest's arguments and prints results.
//! - [`compile`]: builds the learner's harness with cargo, one lesson at a time, and
//!   [`borrowed`] refuses a practice crate that reaches the kit's answers.
//! - [`guidance`]: the append-only guidance log; [`help`]: graded course help.
//! - [`reset`]: puts the pristine stub back, keeping a backup of the learner's file.
//! - [`kitcopy`]: copies of the kit as a fresh clone has it, for tests and for grading.
//! - [`sanitise`]: learner-controlled text with its control characters shown escaped.
//! - [`self_review`]: whether a learner's self-review answers each question.
//!
//! The groups themselves — their checks, scenario formats and messages — are in the
//! `grader-checks` crate, which runs inside the child processes. The project's own tests
//! drive all of this with test-only implementations; see `grader/tests/implementations.rs`.

pub mod authoring;
pub mod borrowed;
mod bounded;
pub mod bundle;
pub mod cache;
pub mod check_input;
mod child;
pub mod compile;
pub mod events;
pub mod exercise;
pub mod fast;
#[cfg(target_os = "linux")]
mod forked;
pub mod grade;
pub mod guidance;
pub mod help;
pub mod kitcopy;
pub mod printers;
pub mod replay;
pub mod reports;
pub mod reset;
pub mod sanitise;
pub mod scaffold;
pub mod scratch;
pub mod seed;
pub mod self_review;
pub mod suite;
pub mod toml_file;
pub mod wiring;
pub mod workspace;

pub use child::{output_section, stop_running_checks, Deadlines, JobEnd, Launcher, Ran, Session};
pub use exercise::Exercise;
pub use grader_checks::{groups, FailureKind, Group, Outcome, Status};

#![warn(missing_docs)]
//! The kit's grader: runs an exercise group's checks against the learner's `practice`
//! crate or against the `reference`, each check in its own process.
//!
//! - [`checks`]: the groups and their checks (plain functions over an [`Implementation`]).
//! - [`recording`]: runs an implementation on a scripted request and records every callback.
//! - [`harness`]: the child side, which runs one check and writes a report.
//! - [`Launcher`]: the parent side, which starts a child, times it out, and reads the report.
//! - [`suite`]: selects checks with libtest's arguments and prints results.
//! - [`compile`]: builds the learner's harness with cargo.
//! - [`guidance`]: the append-only guidance log; [`help`]: graded course help.
//! - [`reset`]: puts the pristine stub back, keeping a backup of the learner's file.
//!
//! The project's own tests drive all of this with test-only implementations; see
//! `grader/tests/implementations.rs`.

pub mod checks;
mod child;
pub mod compile;
pub mod exercise;
pub mod exhaustive;
pub mod guidance;
pub mod harness;
pub mod help;
mod implementation;
pub mod outcome;
pub mod recording;
pub mod reset;
pub mod scenario;
pub mod suite;
pub mod toml_file;
pub mod workspace;

pub use child::{JobEnd, Launcher};
pub use exercise::Exercise;
pub use implementation::{Implementation, LookupFn, Reply, RetryFn, TestGateway};
pub use outcome::{Outcome, Status};

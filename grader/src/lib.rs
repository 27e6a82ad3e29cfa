#![warn(missing_docs)]
//! The kit's command line, as a library: [`main`] is the whole `grader` program (its
//! `main.rs` only calls it), so the modules behind it stay private to this crate.
//!
//! What is public beyond [`main`] is what the kit's own tests and benchmarks drive directly
//! — each with test-only implementations, never a learner's code (see
//! `grader/tests/implementations.rs`):
//! - [`Launcher`] and [`Deadlines`]: starting one check's process and reading its report;
//! - [`suite`], [`events`], [`printers`] and [`reports`]: running a lesson's checks, the
//!   events a run sends, and the reporters that print them or write report files;
//! - [`compile`], [`seed`], [`cache`], [`check_input`] and [`fast`]: building a lesson's
//!   harness, the kit's cache, and the switch for the fast paths;
//! - [`guidance`]: the append-only guidance log; [`reset`]: putting a stub back;
//! - [`kitcopy`], [`grade`] and [`bundle`]: copies of the kit, grading a class, and
//!   platform bundles.
//!
//! The lessons themselves — their checks, scenario formats and messages — are in the
//! `grader-checks` crate, which runs inside the child processes.

mod authoring;
mod borrowed;
mod bounded;
pub mod bundle;
pub mod cache;
pub mod check_input;
mod child;
mod cli;
pub mod compile;
pub mod events;
pub mod fast;
#[cfg(target_os = "linux")]
mod forked;
pub mod grade;
pub mod guidance;
mod help;
pub mod kitcopy;
pub mod lesson_info;
pub mod printers;
mod replay;
pub mod reports;
pub mod reset;
mod sanitise;
mod saves;
mod scaffold;
mod scratch;
pub mod seed;
mod self_review;
pub mod suite;
mod toml_file;
mod wiring;
mod workspace;

pub(crate) use child::{output_section, stop_running_checks, JobEnd};
pub use child::{Deadlines, Launcher};
pub(crate) use grader_checks::Outcome;
pub use grader_checks::{lessons, FailureKind, Lesson, Status};
pub use lesson_info::LessonInfo;
pub use toml_file::TomlFileError;

pub use cli::main;

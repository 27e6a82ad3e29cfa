#![warn(missing_docs)]
//! The learner's side of a check.
//!
//! A check's verdict is computed in the judge (the `grader-checks` crate), a process the
//! learner's code cannot reach. The learner's function runs here, in a process of its own
//! that holds this crate, `kit-types` and the learner's code, never the reference answers
//! nor the checks' expectations: it runs the function on the inputs the judge sends and
//! reports what the function did (calls, waits, events, results, panics). What it reports
//! is observation, never a verdict, and the judge trusts none of it beyond that.
//!
//! - [`runner`]: the process's `main`: limits, confinement, the learner's function loaded,
//!   then requests served; [`remote`]: the judge's end, which starts a runner and asks it.
//! - [`build2`]: one call of a fetcher; [`build3`]: what a build3 run records, and the
//!   exhaustive check's space; [`stage8`]: a check's gateway, kept in the runner for the
//!   whole check, and the lookups run on it.
//! - [`wire`]: how requests and reports are written between the two; `cases`: the threads a
//!   runner runs cases on, and the marks it shares with its judge.
//! - Leaves: [`panics`] (whose panic it was), [`limits`] (what a process may use),
//!   [`sandbox`] (what it may still do), [`library`] (the learner's function loaded from the
//!   library the grader built).

pub mod build2;
pub mod build3;
mod cases;
pub mod library;
pub mod limits;
pub mod panics;
pub mod remote;
pub mod runner;
pub mod sandbox;
pub mod secs;
pub mod stage8;
pub mod wire;

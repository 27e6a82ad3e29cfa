//! The command line's tests from outside: one test binary, one module per file of this
//! folder (what each covers is in its own first lines).
//!
//! One binary rather than one per file: the library and its dependencies are linked once,
//! not once per file, and the tests of every file share the test threads, so a long test of
//! one file (a class graded end to end) runs beside the others' rather than holding a thread
//! of a binary that has nothing else left to run. `implementations.rs` stays its own binary:
//! it is also the program its tests run as a learner's process (`kit_runner::remote`).

#[path = "support/class.rs"]
mod class;
mod common;
mod platforms;

mod bundles;
mod cli;
mod fastpaths;
mod grade;
mod guidance;
mod instructor;
mod reports;
mod review;
mod robustness;
mod runner;
mod sandbox;
mod sanitise;
mod scenarios;
mod similarity;
mod slices;
mod stage8;
mod template;
mod watch;

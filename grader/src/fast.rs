//! The fast paths, behind one switch: compiling only the learner's crate after an edit (the
//! replayed compiler commands of [`crate::replay`]) and starting checks as forks of one
//! harness per thread ([`crate::Session`]). Each must give exactly what the slow path gives
//! (a test runs every lesson both ways); the switch turns both off, to compare, or where one
//! misbehaves.

/// The environment variable that turns the fast paths off: `off`. Anything else, or
/// nothing, leaves them on.
pub const FAST_PATHS_VAR: &str = "GRADER_FAST_PATHS";

/// Which fast paths a run may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FastPaths {
    /// After an edit, replay the compiler's commands for the learner's crate alone, loaded as
    /// a library by a harness built once; otherwise cargo builds a harness around it.
    pub replay: bool,
    /// Start each check as a fork of a fork server; otherwise as a program of its own.
    pub fork: bool,
}

impl FastPaths {
    /// What [`FAST_PATHS_VAR`] allows.
    pub fn from_env() -> FastPaths {
        let on = std::env::var(FAST_PATHS_VAR).map_or(true, |v| v.trim() != "off");
        FastPaths {
            replay: on,
            fork: on,
        }
    }
}

//! Why the runner's side of a check could not be set up: a runner that could not be
//! started, or a learner's library that could not be loaded or holds no lesson function.
//! Each is the kit's setup failing, never the learner's code: the judge reports it as a bug
//! of the kit's, and a runner that meets one says so and ends.

use std::path::PathBuf;

/// Why a runner could not be started, or could not reach the learner's function.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// A variable the grader sets for every check is not set.
    #[error("{var} names no {what}")]
    Unset {
        /// The variable.
        var: &'static str,
        /// What it should name.
        what: &'static str,
    },
    /// The socket between the judge and its runner could not be made.
    #[error("no socket for the runner: {0}")]
    Socket(std::io::Error),
    /// The runner program could not be started.
    #[error("cannot start the runner {}: {source}", program.display())]
    Start {
        /// The program.
        program: PathBuf,
        /// What the system said when it was started.
        source: std::io::Error,
    },
    /// Runners (processes that load a library) need Unix.
    #[error("cannot start the runner {}: runners need Unix", .0.display())]
    RunnerNeedsUnix(PathBuf),
    /// The library's path cannot be passed to the dynamic loader.
    #[error("{}: a path with a NUL byte", .0.display())]
    NulInPath(PathBuf),
    /// The dynamic loader refused the library.
    #[error("cannot load {}: {reason}", path.display())]
    Load {
        /// The library.
        path: PathBuf,
        /// What the loader said.
        reason: String,
    },
    /// Libraries are loaded only on Unix.
    #[error("cannot load {}: the kit loads libraries only on Unix", .0.display())]
    LibraryNeedsUnix(PathBuf),
    /// The library exports no function for the lesson.
    #[error(
        "{} exports no {symbol}: practice/src/root.rs exports each lesson's function for the \
         checks (was it changed?)",
        path.display()
    )]
    NoFunction {
        /// The library.
        path: PathBuf,
        /// The symbol looked for.
        symbol: String,
    },
    /// A lesson's name that no symbol can carry (it holds a NUL byte).
    #[error("no symbol can name lesson {0:?}")]
    BadLessonName(String),
    /// This runner serves no such lesson.
    #[error("this runner serves no lesson {0:?}")]
    UnknownLesson(String),
}

//! How a check ended: what the harness process reports and what the grader concludes.

use serde::{Deserialize, Serialize};
use std::fmt;

/// What a harness process writes to its report file once its check has returned.
///
/// A check whose process ends without writing one did not finish, whatever its exit status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Report {
    /// The check saw everything it demands.
    Passed,
    /// The check saw something the rules forbid.
    Failed {
        /// What was observed against what was expected.
        message: String,
    },
    /// The code under test reached `todo!()` or `unimplemented!()`.
    Unfinished {
        /// The macro's message.
        message: String,
        /// `file:line:column` of the macro, when known.
        location: Option<String>,
    },
    /// The code under test panicked where no panic was expected.
    Panicked {
        /// The panic's message.
        message: String,
        /// Where it panicked, when known.
        location: Option<String>,
    },
}

/// The three statuses a check can end with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Everything the check demands was seen.
    Passed,
    /// Something was wrong, or the code crashed or never finished.
    Failed,
    /// The learner's function is still a stub.
    Unfinished,
}

/// Why a check failed, for the one-word label after `FAILED`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FailureKind {
    /// The behaviour differed from the rules.
    Mismatch,
    /// An unexpected panic.
    Panic,
    /// The process died: abort, stack overflow, `exit`, a signal.
    Crash,
    /// The process was still running when its time ran out.
    Timeout,
}

/// How one check ended, as the grader reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Passed.
    Passed,
    /// Failed, with a message for the learner.
    Failed {
        /// Why.
        kind: FailureKind,
        /// What was observed against what was expected, and what to do.
        message: String,
    },
    /// The learner's function reached `todo!()`/`unimplemented!()`.
    Unfinished {
        /// `file:line:column` of the macro, when known.
        location: Option<String>,
        /// The macro's message.
        message: String,
    },
}

impl Outcome {
    /// The status this outcome counts as.
    pub fn status(&self) -> Status {
        match self {
            Outcome::Passed => Status::Passed,
            Outcome::Failed { .. } => Status::Failed,
            Outcome::Unfinished { .. } => Status::Unfinished,
        }
    }

    /// The failure's kind, if it failed.
    pub fn failure_kind(&self) -> Option<FailureKind> {
        match self {
            Outcome::Failed { kind, .. } => Some(*kind),
            _ => None,
        }
    }
}

impl fmt::Display for FailureKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FailureKind::Mismatch => "mismatch",
            FailureKind::Panic => "panicked",
            FailureKind::Crash => "crashed",
            FailureKind::Timeout => "did not finish",
        })
    }
}

/// Whether a panic message is the one `todo!()` or `unimplemented!()` produce.
///
/// ```
/// use grader::outcome::is_stub_panic;
/// assert!(is_stub_panic("not yet implemented"));
/// assert!(is_stub_panic("not implemented: write me"));
/// assert!(!is_stub_panic("index out of bounds"));
/// ```
pub fn is_stub_panic(message: &str) -> bool {
    ["not yet implemented", "not implemented"]
        .iter()
        .any(|m| message == *m || message.starts_with(&format!("{m}: ")))
}

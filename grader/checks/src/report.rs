//! How a job ended: what the child process reports, and what the grader concludes.

use crate::view::ScenarioRun;
use serde::{Deserialize, Serialize};
use std::fmt;

/// What a child process writes to its report file once its job has returned.
///
/// A job whose process ends without writing one did not finish, whatever its exit status.
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
    /// The code under test made no progress for longer than the grader's timeout: a check
    /// that runs many cases saw it stall (the case it was on is in `message`) before the
    /// grader had to stop the process. It is a "did not finish", like a stopped process.
    Stalled {
        /// Which case never finished, and how to replay it.
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
    /// The kit's own code (a check, a fake, the reference) panicked: a bug in the kit.
    KitBug {
        /// The panic's message.
        message: String,
        /// Where it panicked, when known.
        location: Option<String>,
    },
    /// A scenario ran; here is what it did.
    Scenario {
        /// The run, rendered.
        run: ScenarioRun,
    },
}

/// A mark inside the private `detail` text of the failures a privacy check scripts. The
/// grader reads everything the code under test prints, and a check whose output holds the
/// mark fails, however it reported: a detail may hold tokens and addresses, and it never
/// leaves the function (see [`PRIVATE_PRINTED`]).
pub const PRIVATE_MARKER: &str = "kit-private-5e1c";

/// The failure of a check whose code under test printed a failure's private detail.
pub const PRIVATE_PRINTED: &str = "your code printed a failure's private `detail` on standard \
output or error (the check's detail holds the mark kit-private-5e1c, shown in the output \
below). A detail may hold tokens, addresses and response bodies: it never leaves the function \
— not in an event, not in a message, not printed.\n\nwhy: print nothing of a failure, or \
only its declared fields (its reason or kind, its status, its wait): a `println!`, \
`eprintln!` or `dbg!` of the error's `{:?}` prints the detail too.";

/// The most bytes of a report's message (or location) kept: the learner's code chooses much
/// of what a message quotes (a panic's text, an item's name), and a report is written into
/// every report format of a grade. A screenful of explanation is a few KiB.
pub(crate) const MESSAGE_KEPT: usize = 64 * 1024;

impl Report {
    /// The report with every message and location cut to [`MESSAGE_KEPT`] bytes, saying how
    /// much was cut.
    pub(crate) fn bounded(self) -> Report {
        let cut = |text: String| crate::report::cut(text, MESSAGE_KEPT);
        let cut_at = |at: Option<String>| at.map(|a| crate::report::cut(a, 1024));
        match self {
            Report::Failed { message } => Report::Failed {
                message: cut(message),
            },
            Report::Stalled { message } => Report::Stalled {
                message: cut(message),
            },
            Report::Unfinished { message, location } => Report::Unfinished {
                message: cut(message),
                location: cut_at(location),
            },
            Report::Panicked { message, location } => Report::Panicked {
                message: cut(message),
                location: cut_at(location),
            },
            Report::KitBug { message, location } => Report::KitBug {
                message: cut(message),
                location: cut_at(location),
            },
            other => other,
        }
    }
}

/// `text` cut to at most `max` bytes on a character's boundary, with a note of what was cut.
pub(crate) fn cut(text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} more bytes cut)", &text[..end], text.len() - end)
}

/// The statuses a check can end with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Everything the check demands was seen.
    Passed,
    /// Something was wrong, or the code crashed or never finished.
    Failed,
    /// The learner's function is still a stub.
    Unfinished,
    /// The kit itself failed while checking: no verdict on the learner's code.
    KitBug,
}

/// Why a check failed, for the label after `FAILED`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// The behaviour differed from the rules.
    Mismatch,
    /// An unexpected panic.
    Panic,
    /// The process died: abort, stack overflow, `exit`, a signal.
    Crash,
    /// The process was still running when its time ran out.
    Timeout,
    /// The process went over a resource limit (memory, file size, processes).
    Limit,
    /// The code under test left a process running after the check.
    Leak,
}

impl FailureKind {
    /// The label shown after `FAILED`, e.g. `did not finish`.
    pub fn label(self) -> &'static str {
        match self {
            FailureKind::Mismatch => "mismatch",
            FailureKind::Panic => "panicked",
            FailureKind::Crash => "crashed",
            FailureKind::Timeout => "did not finish",
            FailureKind::Limit => "over a limit",
            FailureKind::Leak => "left a process running",
        }
    }
}

impl fmt::Display for FailureKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// How one check ended, as the grader reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Passed.
    Passed,
    /// Failed, with a message for the learner.
    Failed {
        /// What kind of failure: a mismatch with the rule, a timeout, a crash, a limit.
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
    /// The kit failed while running the check: no verdict.
    KitBug {
        /// What went wrong, and where.
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
            Outcome::KitBug { .. } => Status::KitBug,
        }
    }

    /// The failure's kind, if it failed.
    pub fn failure_kind(&self) -> Option<FailureKind> {
        match self {
            Outcome::Failed { kind, .. } => Some(*kind),
            _ => None,
        }
    }

    /// The failure's (or the kit bug's) message, if there is one.
    pub fn message(&self) -> Option<&str> {
        match self {
            Outcome::Failed { message, .. } | Outcome::KitBug { message } => Some(message),
            Outcome::Unfinished { message, .. } => Some(message),
            Outcome::Passed => None,
        }
    }
}

#[cfg(test)]
mod doc_examples {
    /// What the item's documentation once showed as an example.
    #[test]
    fn cut_keeps_short_text() {
        use crate::report::cut;
        assert_eq!(cut("short".into(), 10), "short");
        assert_eq!(cut("ééé".into(), 3), "é… (4 more bytes cut)");
    }
}

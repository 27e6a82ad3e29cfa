//! What a run of a lesson's checks tells whoever shows or keeps its results: one stream of
//! typed [`Event`]s, in a fixed order, and the [`Reporter`]s that consume it.
//!
//! The executor ([`crate::suite::run`]) starts the checks, stops them, and sends events; it
//! formats nothing. Every output is a reporter of the same stream: the terminal printers
//! ([`crate::printers`]: pretty, terse, JSON lines), the report files `--report` writes,
//! the standing `list` shows, watch's screen, and `grade`'s text and row. The order is the same from
//! run to run, whichever check's process finished first:
//!
//! 1. [`Event::Started`] (or [`Event::Listed`] for `--list`, and nothing more);
//! 2. [`Event::CheckStarted`] as each check's process starts (in the order they start: the
//!    one event whose order depends on the machine);
//! 3. [`Event::CheckFinished`] for each check that ran, in the lesson's order;
//! 4. [`Event::Finished`] with the whole [`Summary`] — unless the run was cancelled.

use grader_checks::{CheckInfo, Lesson, Outcome, Status};
use std::io;
use std::time::Duration;

/// One thing that happened in a run.
#[derive(Debug, Clone, Copy)]
pub enum Event<'a> {
    /// `--list`: the selected checks, and that nothing runs.
    Listed {
        /// The lesson.
        lesson: &'a Lesson,
        /// The checks selected, in the lesson's order.
        checks: &'a [&'static CheckInfo],
    },
    /// The run begins: `checks` of `lesson` will run against `settings.against`.
    Started {
        /// The lesson.
        lesson: &'a Lesson,
        /// The run's settings.
        settings: &'a RunSettings,
        /// How many checks were selected.
        checks: usize,
    },
    /// A check's process started.
    CheckStarted {
        /// The check's name.
        name: &'static str,
    },
    /// A check ended; sent in the lesson's order.
    CheckFinished {
        /// Its result.
        run: &'a CheckRun,
    },
    /// The run ended: every result, and how many checks `--fail-fast` left unrun.
    Finished {
        /// The lesson.
        lesson: &'a Lesson,
        /// The run's settings.
        settings: &'a RunSettings,
        /// The results.
        summary: &'a Summary,
    },
}

/// Something that consumes a run's events: shows them, or keeps what they say.
pub trait Reporter {
    /// Takes one event; an error ends the run (the output cannot be written).
    fn report(&mut self, event: &Event<'_>) -> io::Result<()>;
}

/// Sends each event to every one of its reporters, in order.
pub(crate) struct Tee<'r>(pub Vec<&'r mut dyn Reporter>);

impl Reporter for Tee<'_> {
    fn report(&mut self, event: &Event<'_>) -> io::Result<()> {
        for reporter in &mut self.0 {
            reporter.report(event)?;
        }
        Ok(())
    }
}

/// Calls a function at the end of a run with its summary: the reporter for what is kept
/// after a run (report files, the standing `list` shows).
pub(crate) struct OnFinished<F: FnMut(&Lesson, &Summary)>(pub F);

impl<F: FnMut(&Lesson, &Summary)> Reporter for OnFinished<F> {
    fn report(&mut self, event: &Event<'_>) -> io::Result<()> {
        if let Event::Finished {
            lesson, summary, ..
        } = event
        {
            (self.0)(lesson, summary);
        }
        Ok(())
    }
}

/// Settings of one run that libtest's arguments do not cover.
#[derive(Debug, Clone)]
pub struct RunSettings {
    /// What runs: `"practice"`, `"reference"`, or a test implementation's name.
    pub against: String,
    /// How long one check may run before it is stopped.
    pub timeout: Duration,
    /// What to tell a learner whose function is unfinished.
    pub unfinished_hint: String,
    /// Stop starting checks after the first failure.
    pub fail_fast: bool,
    /// Print every failure in full, not only the first.
    pub all_in_full: bool,
}

impl RunSettings {
    /// Settings for a run against `against` with a `timeout` per check and the rest default.
    pub fn new(against: impl Into<String>, timeout: Duration) -> Self {
        RunSettings {
            against: against.into(),
            timeout,
            unfinished_hint: String::new(),
            fail_fast: false,
            all_in_full: false,
        }
    }
}

/// One check's result.
#[derive(Debug, Clone)]
pub struct CheckRun {
    /// The check's name.
    pub name: &'static str,
    /// How it ended.
    pub outcome: Outcome,
    /// How long its process ran.
    pub(crate) duration: Duration,
    /// What the code under test printed meanwhile (at most 4 KiB).
    pub output: String,
}

/// The result of running a lesson.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    /// The checks that ran, in the lesson's order.
    pub runs: Vec<CheckRun>,
    /// How many checks the filter left out.
    pub(crate) filtered_out: usize,
    /// How many selected checks `--fail-fast` left unrun.
    pub not_run: usize,
    /// Whether this was only a listing.
    pub listed_only: bool,
    /// How long the whole run took.
    pub(crate) elapsed: Duration,
}

impl Summary {
    /// How many checks ended with `status`.
    pub fn count(&self, status: Status) -> usize {
        self.runs
            .iter()
            .filter(|r| r.outcome.status() == status)
            .count()
    }

    /// The outcome of the check called `name`, if it ran.
    pub fn outcome(&self, name: &str) -> Option<&Outcome> {
        self.runs
            .iter()
            .find(|r| r.name == name)
            .map(|r| &r.outcome)
    }

    /// True when at least one check ran, every selected check ran, and every one passed.
    pub fn all_passed(&self) -> bool {
        !self.runs.is_empty()
            && self.not_run == 0
            && self.runs.iter().all(|r| r.outcome == Outcome::Passed)
    }

    /// Whether the kit itself failed in any check.
    pub fn kit_bugs(&self) -> usize {
        self.count(Status::KitBug)
    }
}

//! Results that other tools read: the kit's own JSON, Exercism's `results.json` (version
//! 3), Gradescope's `results.json`, and JUnit XML.
//!
//! A run of a lesson becomes one [`RunReport`]; each [`ReportFormat`] renders it as text. The
//! renderers are pure functions, so the tests can hold each format to its platform's rules
//! (field names, allowed values, order, length limits, escaping of learner text).

mod exercism;
mod gradescope;
mod json;
mod junit;
pub mod weights;

use crate::guidance::{GuidanceLog, Kind};
use crate::suite::Summary;
use crate::{Lesson, LessonInfo};
use grader_checks::{FailureKind, Outcome, Status};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::SystemTime;

/// One run of a lesson, as every format reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct RunReport {
    /// The kit's version (`grader`'s package version).
    pub kit_version: String,
    /// The lesson, e.g. `build3`.
    pub lesson: String,
    /// The lesson's title.
    pub title: String,
    /// Whose code ran: `practice`, `reference`, or a submission's name.
    pub against: String,
    /// The learner's file: where the kit has it (`practice/src/lib.rs`), or — for a
    /// submission graded by `grade` — where the submission has it (`src/lib.rs`), which is
    /// also the path the report's messages use.
    pub learner_file: Option<String>,
    /// A hash of the learner file's content ([`content_hash`]), when there is one.
    pub learner_file_hash: Option<String>,
    /// Why no check ran, when the learner's code is why: it did not compile, or it was
    /// refused (it reaches the kit's answers, it is a link, it is past its bound).
    pub not_run: Option<NotRun>,
    /// Points possible on the lesson: the weights of all its checks, whether or not they
    /// ran (a file that did not compile is graded out of the lesson's full points).
    pub points_possible: f64,
    /// Every check that ran, in the lesson's order.
    pub checks: Vec<CheckReport>,
    /// The guidance recorded for the lesson.
    pub guidance: Guidance,
    /// When the run started (RFC 3339, UTC).
    pub started: String,
    /// How long the run took, in seconds.
    pub duration_secs: f64,
}

/// Why no check of a run ran, when the learner's code is why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotRun {
    /// The learner's file did not compile: the compiler's output.
    DoesNotCompile(String),
    /// The learner's file was refused: why (one line or a few).
    Refused(String),
}

impl NotRun {
    /// The compiler's output or the refusal.
    pub fn text(&self) -> &str {
        match self {
            NotRun::DoesNotCompile(text) | NotRun::Refused(text) => text,
        }
    }

    /// What happened, in a few words a learner reads first.
    pub fn headline(&self) -> &'static str {
        match self {
            NotRun::DoesNotCompile(_) => "Your code did not compile, so no check ran",
            NotRun::Refused(_) => "Your submission was refused, so no check ran",
        }
    }
}

/// One check's result.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckReport {
    /// Its name, e.g. `fixtures::third_attempt_success`.
    pub name: String,
    /// Passed, failed, unfinished, or a bug in the kit.
    pub status: Status,
    /// Why it failed, when it did.
    pub kind: Option<FailureKind>,
    /// The message a learner reads (none for a pass).
    pub message: Option<String>,
    /// Where the learner's function stopped (`file:line:column`), for an unfinished check.
    pub location: Option<String>,
    /// What the code under test printed (at most 4 KiB).
    pub output: String,
    /// How long the check's process ran, in seconds.
    pub duration_secs: f64,
    /// Its points in a grade (from `exercises/LESSON/grading.toml`; 1 by default).
    pub weight: f64,
}

/// The guidance a log holds for one lesson, by kind (`help`, `reference-run`, `note`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Guidance {
    /// Records of each kind.
    pub by_kind: BTreeMap<String, usize>,
    /// Whether the learner's log could be read at all.
    pub known: bool,
    /// Why the counts cannot be trusted, when `log --check` finds a problem with the log (a
    /// deleted or edited row, a missing header, text that is no log at all): its first
    /// problem, and how many more.
    pub unverified: Option<String>,
}

impl Guidance {
    /// How many records in all.
    pub(crate) fn total(&self) -> usize {
        self.by_kind.values().sum()
    }

    /// One sentence for a person: what a pass with this guidance means.
    pub fn sentence(&self) -> String {
        if !self.known {
            return "Guidance: unknown (no guidance log came with this run).".into();
        }
        if let Some(why) = &self.unverified {
            return format!(
                "Guidance: unverified — the guidance log fails `log --check` ({why}), so \
                 what it records cannot be counted."
            );
        }
        if self.total() == 0 {
            return "Guidance: none recorded.".into();
        }
        let parts: Vec<String> = self
            .by_kind
            .iter()
            .filter(|(_, n)| **n > 0)
            .map(|(k, n)| format!("{n} {k}"))
            .collect();
        format!(
            "Guidance recorded: {} — guided practice, not independent evidence.",
            parts.join(", ")
        )
    }
}

impl RunReport {
    /// How many checks ended with `status`.
    pub(crate) fn count(&self, status: Status) -> usize {
        self.checks.iter().filter(|c| c.status == status).count()
    }

    /// Points earned: the weights of the checks that passed.
    pub(crate) fn score(&self) -> f64 {
        self.checks
            .iter()
            .filter(|c| c.status == Status::Passed)
            .fold(0.0, |sum, c| sum + c.weight)
    }
}

impl RunReport {
    /// The report of a run of `lesson`'s checks against `against` in the kit at `root`: the
    /// checks of `summary`, or — when nothing ran — `not_run` says why.
    pub fn new(
        root: &Path,
        lesson: &Lesson,
        exercise: &LessonInfo,
        against: &str,
        summary: Option<&Summary>,
        not_run: Option<NotRun>,
        started: SystemTime,
    ) -> Result<RunReport, crate::toml_file::TomlFileError> {
        let weights = weights::load(&exercise.dir(root))?;
        let learner = std::fs::read(root.join(&exercise.file)).ok();
        let checks = summary
            .map(|s| {
                s.runs
                    .iter()
                    .map(|run| CheckReport {
                        name: run.name.to_string(),
                        status: run.outcome.status(),
                        kind: run.outcome.failure_kind(),
                        message: run.outcome.message().map(str::to_string),
                        location: match &run.outcome {
                            Outcome::Unfinished { location, .. } => location.clone(),
                            _ => None,
                        },
                        output: run.output.clone(),
                        duration_secs: run.duration.as_secs_f64(),
                        weight: weights.of(run.name),
                    })
                    .collect()
            })
            .unwrap_or_default();
        Ok(RunReport {
            kit_version: env!("CARGO_PKG_VERSION").to_string(),
            lesson: lesson.name.to_string(),
            title: lesson.title.to_string(),
            against: against.to_string(),
            learner_file: Some(exercise.file.display().to_string()),
            learner_file_hash: learner.map(|bytes| content_hash(&bytes)),
            not_run,
            points_possible: lesson
                .checks
                .iter()
                .fold(0.0, |sum, c| sum + weights.of(c.name)),
            checks,
            guidance: guidance(root, lesson.name),
            started: humantime::format_rfc3339_seconds(started).to_string(),
            duration_secs: started.elapsed().map_or(0.0, |d| d.as_secs_f64()),
        })
    }
}

/// The guidance the log of the kit at `root` holds for `lesson`.
pub(crate) fn guidance(root: &Path, lesson: &str) -> Guidance {
    match GuidanceLog::in_kit(root).read() {
        Ok(contents) => Guidance {
            by_kind: [Kind::Help, Kind::ReferenceRun, Kind::Note]
                .into_iter()
                .map(|k| (k.as_str().to_string(), contents.count(lesson, k)))
                .collect(),
            known: root.join(crate::guidance::LOG_FILE).is_file(),
            unverified: contents.problems.first().map(|first| {
                let more = match contents.problems.len() - 1 {
                    0 => String::new(),
                    n => format!(", and {n} more"),
                };
                let what = crate::sanitise::escape_string(first.what.clone());
                format!("line {}: {what}{more}", first.line)
            }),
        },
        Err(_) => Guidance::default(),
    }
}

/// One `--report FORMAT:PATH`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReportSpec {
    /// The format.
    pub(crate) format: ReportFormat,
    /// Where to write it.
    pub(crate) path: PathBuf,
}

impl FromStr for ReportSpec {
    type Err = String;
    /// `json:results.json`, `junit:out/junit.xml`…
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (format, path) = s
            .split_once(':')
            .ok_or_else(|| format!("{s:?}: write FORMAT:PATH, e.g. junit:results.xml"))?;
        if path.is_empty() {
            return Err(format!("{s:?}: the path is empty"));
        }
        Ok(ReportSpec {
            format: format.parse()?,
            path: PathBuf::from(path),
        })
    }
}

/// Writes `report` in every format of `specs`, creating folders as needed.
pub(crate) fn write_all(specs: &[ReportSpec], report: &RunReport) -> std::io::Result<()> {
    for spec in specs {
        if let Some(dir) = spec.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(&spec.path, spec.format.render(report))?;
    }
    Ok(())
}

/// A format a run can be reported in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReportFormat {
    /// The kit's own JSON (schema `retry-kit/report`, version 1).
    Json,
    /// Exercism's test runner `results.json`, version 3.
    Exercism,
    /// Gradescope's autograder `results.json`.
    Gradescope,
    /// JUnit XML, as CI servers read it.
    Junit,
}

impl ReportFormat {
    /// Every format, in the order `--help` lists them.
    pub const ALL: [ReportFormat; 4] = [
        ReportFormat::Json,
        ReportFormat::Exercism,
        ReportFormat::Gradescope,
        ReportFormat::Junit,
    ];

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            ReportFormat::Json => "json",
            ReportFormat::Exercism => "exercism",
            ReportFormat::Gradescope => "gradescope",
            ReportFormat::Junit => "junit",
        }
    }

    /// The end of a report file's name in this format, after the lesson: `build3.junit.xml`.
    pub(crate) fn file_suffix(self) -> &'static str {
        match self {
            ReportFormat::Json => "json",
            ReportFormat::Exercism => "exercism.json",
            ReportFormat::Gradescope => "gradescope.json",
            ReportFormat::Junit => "junit.xml",
        }
    }

    /// `report` in this format.
    pub fn render(self, report: &RunReport) -> String {
        match self {
            ReportFormat::Json => json::render(report),
            ReportFormat::Exercism => exercism::render(report),
            ReportFormat::Gradescope => gradescope::render(report),
            ReportFormat::Junit => junit::render(report),
        }
    }
}

impl fmt::Display for ReportFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ReportFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ReportFormat::ALL
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = ReportFormat::ALL.iter().map(|f| f.name()).collect();
                format!(
                    "unknown report format {s:?}: use one of {}",
                    names.join(", ")
                )
            })
    }
}

pub use crate::cache::content_hash;

//! The kit's own JSON report: schema `retry-kit/report`, version 1.
//!
//! Every field of the [`RunReport`] is kept, under stable names, so other tools can read a
//! run without knowing the platforms' formats. `docs/report-formats.md` documents each field;
//! the version rule: fields may be added within a version, and removing or changing one
//! bumps [`VERSION`].

use super::{CheckReport, NotRun, RunReport};
use grader_checks::{FailureKind, Status};
use serde::Serialize;
use std::collections::BTreeMap;

/// The schema's name, the value of the top-level `"schema"` field.
pub(crate) const SCHEMA: &str = "retry-kit/report";

/// The schema's version, the value of the top-level `"version"` field.
pub(crate) const VERSION: u32 = 1;

/// The top level, in the order the fields are written.
#[derive(Serialize)]
struct Doc<'a> {
    schema: &'static str,
    version: u32,
    kit_version: &'a str,
    #[serde(rename = "group")]
    lesson: &'a str,
    title: &'a str,
    against: &'a str,
    learner_file: Option<&'a str>,
    learner_file_hash: Option<&'a str>,
    compile_error: Option<&'a str>,
    refused: Option<&'a str>,
    summary: Summary,
    guidance: GuidanceDoc<'a>,
    checks: Vec<CheckDoc<'a>>,
    started: &'a str,
    duration_secs: f64,
}

#[derive(Serialize)]
struct Summary {
    total: usize,
    passed: usize,
    failed: usize,
    unfinished: usize,
    kit_bugs: usize,
    score: f64,
    max_score: f64,
}

#[derive(Serialize)]
struct GuidanceDoc<'a> {
    known: bool,
    total: usize,
    by_kind: &'a BTreeMap<String, usize>,
    unverified: Option<&'a str>,
    sentence: String,
}

#[derive(Serialize)]
struct CheckDoc<'a> {
    name: &'a str,
    status: &'static str,
    kind: Option<&'static str>,
    message: Option<&'a str>,
    location: Option<&'a str>,
    output: &'a str,
    duration_secs: f64,
    weight: f64,
}

/// The name a status has in this schema.
pub(super) fn status_name(status: Status) -> &'static str {
    match status {
        Status::Passed => "passed",
        Status::Failed => "failed",
        Status::Unfinished => "unfinished",
        Status::KitBug => "kit_bug",
    }
}

/// The name a failure kind has in this schema (and in JUnit's `type` attribute).
pub(super) fn kind_name(kind: FailureKind) -> &'static str {
    match kind {
        FailureKind::Mismatch => "mismatch",
        FailureKind::Panic => "panic",
        FailureKind::Crash => "crash",
        FailureKind::Timeout => "timeout",
        FailureKind::Limit => "limit",
        FailureKind::Leak => "leak",
    }
}

/// `x` when it is a finite number of at least 0, else 0: durations and weights a report was
/// built with by hand must not make a format invalid (JSON has no NaN or infinity).
pub(super) fn non_negative(x: f64) -> f64 {
    if x.is_finite() && x > 0.0 {
        x
    } else {
        0.0
    }
}

/// Points earned and possible, from the checks' (sanitized) weights; the score never
/// exceeds the maximum. (Folded from `0.0`: `Sum` of no `f64` is `-0.0`, which JSON would
/// show as `-0.0`.)
pub(super) fn points(report: &RunReport) -> (f64, f64) {
    let weight = |c: &CheckReport| non_negative(c.weight);
    let max = report.checks.iter().map(weight).fold(0.0, |a, b| a + b);
    let score = report
        .checks
        .iter()
        .filter(|c| c.status == Status::Passed)
        .map(weight)
        .fold(0.0, |a, b| a + b);
    (score.min(max), max)
}

fn check_doc(check: &CheckReport) -> CheckDoc<'_> {
    CheckDoc {
        name: &check.name,
        status: status_name(check.status),
        kind: check.kind.map(kind_name),
        message: check.message.as_deref(),
        location: check.location.as_deref(),
        output: &check.output,
        duration_secs: non_negative(check.duration_secs),
        weight: non_negative(check.weight),
    }
}

/// `report` as the kit's own JSON (pretty-printed, ending with a newline).
pub(crate) fn render(report: &RunReport) -> String {
    let (score, max_score) = match report.not_run {
        // No check ran: 0 of the lesson's points, as the gradebook has it.
        Some(_) => (0.0, non_negative(report.points_possible)),
        None => points(report),
    };
    let doc = Doc {
        schema: SCHEMA,
        version: VERSION,
        kit_version: &report.kit_version,
        lesson: &report.lesson,
        title: &report.title,
        against: &report.against,
        learner_file: report.learner_file.as_deref(),
        learner_file_hash: report.learner_file_hash.as_deref(),
        compile_error: match &report.not_run {
            Some(NotRun::DoesNotCompile(text)) => Some(text),
            _ => None,
        },
        refused: match &report.not_run {
            Some(NotRun::Refused(text)) => Some(text),
            _ => None,
        },
        summary: Summary {
            total: report.checks.len(),
            passed: report.count(Status::Passed),
            failed: report.count(Status::Failed),
            unfinished: report.count(Status::Unfinished),
            kit_bugs: report.count(Status::KitBug),
            score,
            max_score,
        },
        guidance: GuidanceDoc {
            known: report.guidance.known,
            total: report.guidance.total(),
            by_kind: &report.guidance.by_kind,
            unverified: report.guidance.unverified.as_deref(),
            sentence: report.guidance.sentence(),
        },
        checks: report.checks.iter().map(check_doc).collect(),
        started: &report.started,
        duration_secs: non_negative(report.duration_secs),
    };
    let mut text = serde_json::to_string_pretty(&doc).expect("a report always serializes");
    text.push('\n');
    text
}

// ---------- helpers the other writers share ----------

/// `text` cut to at most `max` bytes (at a character boundary), ending with `notice` when it
/// was cut. `notice` must be shorter than `max`.
pub(super) fn cut_bytes(text: &str, max: usize, notice: &str) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max.saturating_sub(notice.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{notice}", &text[..end])
}

/// `text` cut to at most `max` characters (Unicode scalar values), ending with `notice` when
/// it was cut. `notice` must be shorter than `max`.
pub(super) fn cut_chars(text: &str, max: usize, notice: &str) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let keep = max.saturating_sub(notice.chars().count());
    let mut cut: String = text.chars().take(keep).collect();
    cut.push_str(notice);
    cut
}

/// The module part of a check's name: everything before the last `::` (`fixtures` for
/// `fixtures::third_attempt_success`), or `""` for a name without one.
pub(super) fn module_of(name: &str) -> &str {
    name.rsplit_once("::").map_or("", |(module, _)| module)
}

/// For each check, in order: the 1-based number of its module in order of first appearance,
/// and its 1-based number within that module.
pub(super) fn module_numbers(checks: &[CheckReport]) -> Vec<(usize, usize)> {
    let mut modules: Vec<(&str, usize)> = Vec::new();
    checks
        .iter()
        .map(|check| {
            let module = module_of(&check.name);
            match modules.iter().position(|(m, _)| *m == module) {
                Some(i) => {
                    modules[i].1 += 1;
                    (i + 1, modules[i].1)
                }
                None => {
                    modules.push((module, 1));
                    (modules.len(), 1)
                }
            }
        })
        .collect()
}

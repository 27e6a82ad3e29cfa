//! Exercism's test runner `results.json`, version 3 (the interface in `exercism/docs`,
//! `building/tooling/test-runners/interface.md`).
//!
//! - `status` is `pass` when every check passed, `error` when no check ran (the learner's
//!   file did not compile, or the run had no checks), and `fail` otherwise.
//! - `message` is set only for `error`: the compiler's output, at most [`MESSAGE_LIMIT`]
//!   bytes (so at most that many characters, however the platform counts).
//! - `tests` lists the checks in the lesson's order (Exercism shows the first failure only);
//!   it is left out for `error`. A kit bug is a test `error`; an unfinished check is a `fail`
//!   whose message begins `unfinished: `.
//! - A test's `output` is at most [`OUTPUT_LIMIT`] characters, cut with Exercism's notice,
//!   and left out when the check printed nothing.
//! - No `task_id`: Exercism links a test to a task of a concept exercise's instructions
//!   (its `## 1. …` headings), and a lesson has no such tasks to name.
//! - The whole file stays under [`FILE_LIMIT`] bytes: long test messages are cut further
//!   until it does.

use super::json::{cut_bytes, cut_chars};
use super::{CheckReport, RunReport};
use grader_checks::Status;
use serde::Serialize;

/// The most bytes the top-level `message` holds (the interface says 65535 characters, and
/// that the limit is effectively lower with multibyte characters: a byte limit meets both).
pub(crate) const MESSAGE_LIMIT: usize = 65_535;

/// The most characters a test's `output` holds.
pub(crate) const OUTPUT_LIMIT: usize = 500;

/// What ends an `output` that was cut (the notice Exercism's own runners use).
pub(crate) const OUTPUT_NOTICE: &str = " [Output was truncated. Please limit to 500 chars]";

/// The most bytes `results.json` may have (500 KB; a larger file fails the run).
pub(crate) const FILE_LIMIT: usize = 500_000;

/// What ends a message that was cut.
const MESSAGE_NOTICE: &str = "\n[Message truncated: it was too long for results.json.]";

/// The fewest bytes a test message is cut to while the file is too large.
const MIN_TEST_MESSAGE: usize = 1024;

#[derive(Serialize)]
struct Results {
    version: u32,
    status: &'static str,
    message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tests: Option<Vec<Test>>,
}

#[derive(Serialize)]
struct Test {
    name: String,
    test_code: String,
    status: &'static str,
    message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    output: Option<String>,
}

/// The command that runs one check alone.
fn test_code(report: &RunReport, check: &CheckReport) -> String {
    let against = if report.against == "reference" {
        " --against reference"
    } else {
        ""
    };
    format!(
        "cargo run -p grader -- {} --exact {}{against}",
        report.lesson, check.name
    )
}

/// A test's message (never empty for `fail` and `error`), before any cut.
fn test_message(check: &CheckReport) -> Option<String> {
    let message = check.message.as_deref().unwrap_or("").trim_end();
    match check.status {
        Status::Passed => None,
        Status::Failed if message.is_empty() => Some(match check.kind {
            Some(kind) => format!("failed: {}", kind.label()),
            None => "failed".to_string(),
        }),
        Status::Failed => Some(message.to_string()),
        Status::Unfinished => {
            let what = if message.is_empty() {
                "the function still reaches todo!() or unimplemented!()"
            } else {
                message
            };
            Some(match &check.location {
                Some(at) => format!("unfinished: {what} (at {at})"),
                None => format!("unfinished: {what}"),
            })
        }
        Status::KitBug => {
            let what = if message.is_empty() {
                "the kit failed while running this check"
            } else {
                message
            };
            Some(format!("kit bug (no verdict on your code): {what}"))
        }
    }
}

fn test_status(status: Status) -> &'static str {
    match status {
        Status::Passed => "pass",
        Status::Failed | Status::Unfinished => "fail",
        Status::KitBug => "error",
    }
}

fn tests(report: &RunReport, message_limit: usize) -> Vec<Test> {
    report
        .checks
        .iter()
        .map(|check| Test {
            name: check.name.clone(),
            test_code: test_code(report, check),
            status: test_status(check.status),
            message: test_message(check).map(|m| cut_bytes(&m, message_limit, MESSAGE_NOTICE)),
            output: (!check.output.is_empty())
                .then(|| cut_chars(&check.output, OUTPUT_LIMIT, OUTPUT_NOTICE)),
        })
        .collect()
}

fn to_text(results: &Results) -> String {
    let mut text = serde_json::to_string_pretty(results).expect("results always serialize");
    text.push('\n');
    text
}

/// `report` as Exercism's `results.json` (version 3), ending with a newline.
pub(crate) fn render(report: &RunReport) -> String {
    if report.not_run.is_some() || report.checks.is_empty() {
        let message = match &report.not_run {
            Some(not_run) => match not_run.text().trim_end() {
                "" => format!("{} (the compiler printed nothing).", not_run.headline()),
                text => cut_bytes(
                    &format!("{}.\n\n{text}", not_run.headline()),
                    MESSAGE_LIMIT,
                    MESSAGE_NOTICE,
                ),
            },
            None => format!(
                "No check ran: lesson {} has no checks to run.",
                report.lesson
            ),
        };
        return to_text(&Results {
            version: 3,
            status: "error",
            message: Some(message),
            tests: None,
        });
    }
    let status = if report.checks.iter().all(|c| c.status == Status::Passed) {
        "pass"
    } else {
        "fail"
    };
    let mut limit = MESSAGE_LIMIT;
    loop {
        let text = to_text(&Results {
            version: 3,
            status,
            message: None,
            tests: Some(tests(report, limit)),
        });
        if text.len() <= FILE_LIMIT || limit <= MIN_TEST_MESSAGE {
            return text;
        }
        limit = (limit / 2).max(MIN_TEST_MESSAGE);
    }
}

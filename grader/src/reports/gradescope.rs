//! Gradescope's autograder `results.json` (`gradescope/autograder_samples`, `docs/specs.md`).
//!
//! - The top-level `score` is the sum of the passed checks' weights; Gradescope takes it as
//!   the grade (it overrides the tests' total). It never exceeds the weights' sum.
//! - One test per check, in the lesson's order, numbered `MODULE.CHECK` (`1.3`: the third
//!   check of the first module); `score` is the weight if the check passed, else 0, and
//!   `max_score` is the weight. Only a pass is `passed`: an unfinished check and a kit bug
//!   are `failed` (a kit bug says so, and that it is no verdict on the learner's code).
//! - When no check ran — the learner's file did not compile, or it was refused — there is
//!   one test, `compile` or `refused`, `failed`, score 0, worth the lesson's full points
//!   (so Gradescope shows 0 of the lesson's points, as the gradebook does), with its own
//!   wording. The top-level `score` is 0.
//! - `stdout_visibility` is `hidden`: the autograder's own log (what `run_autograder`
//!   prints) is for the course staff; the bundle's `--show-log` makes it `visible`.
//! - Every text is plain (`"text"` format) and at most [`TEXT_LIMIT`] bytes.

use super::json::{cut_bytes, module_numbers, non_negative, points};
use super::{CheckReport, NotRun, RunReport};
use grader_checks::Status;
use serde::Serialize;

/// The most bytes of one text (a test's output, the summary).
pub(crate) const TEXT_LIMIT: usize = 64 * 1024;

/// What ends a text that was cut.
const TEXT_NOTICE: &str = "\n[Truncated: this text was longer than 64 KiB.]";

#[derive(Serialize)]
struct Results {
    score: f64,
    execution_time: f64,
    output: String,
    output_format: &'static str,
    stdout_visibility: &'static str,
    tests: Vec<Test>,
}

#[derive(Serialize)]
struct Test {
    name: String,
    number: String,
    score: f64,
    max_score: f64,
    status: &'static str,
    output: String,
    output_format: &'static str,
    visibility: &'static str,
}

/// What unfinished means, for the summary.
const UNFINISHED_MEANS: &str = "An unfinished check is one where your function still \
reached todo!() or unimplemented!(): it scores 0 until you write that part.";

/// What a kit bug means, for the summary.
const KIT_BUG_MEANS: &str = "A kit bug means the kit itself failed while checking: it is \
no verdict on your code. Tell the course staff.";

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Points as a person reads them: `3`, `2.5`.
fn points_text(x: f64) -> String {
    format!("{x}")
}

fn summary(report: &RunReport, score: f64, max: f64) -> String {
    let mut lines = vec![format!(
        "{} — {} (checked against {}).",
        report.lesson, report.title, report.against
    )];
    if let Some(not_run) = &report.not_run {
        lines.push(format!(
            "{}: the score is 0 of {} points. {}",
            not_run.headline(),
            points_text(max),
            match not_run {
                NotRun::DoesNotCompile(_) =>
                    "The compiler's output is in the test called \"compile\".",
                NotRun::Refused(_) => "Why is in the test called \"refused\".",
            }
        ));
    } else {
        lines.push(format!(
            "{}: {} passed, {} failed, {} unfinished, {}.",
            plural(report.checks.len(), "check", "checks"),
            report.count(Status::Passed),
            report.count(Status::Failed),
            report.count(Status::Unfinished),
            plural(report.count(Status::KitBug), "kit bug", "kit bugs"),
        ));
        lines.push(format!(
            "Score: {} of {} points.",
            points_text(score),
            points_text(max)
        ));
    }
    lines.push(report.guidance.sentence());
    lines.push(UNFINISHED_MEANS.to_string());
    if report.count(Status::KitBug) > 0 {
        lines.push(KIT_BUG_MEANS.to_string());
    }
    cut_bytes(&lines.join("\n"), TEXT_LIMIT, TEXT_NOTICE)
}

/// A test's output: what happened, the check's message, and what the code printed.
fn test_output(check: &CheckReport) -> String {
    let message = check.message.as_deref().unwrap_or("").trim_end();
    let mut text = match check.status {
        Status::Passed => "Passed.".to_string(),
        Status::Failed => match check.kind {
            Some(kind) => format!("FAILED ({})", kind.label()),
            None => "FAILED".to_string(),
        },
        Status::Unfinished => match &check.location {
            Some(at) => format!("UNFINISHED: your function reached todo!() at {at}"),
            None => "UNFINISHED: your function reached todo!()".to_string(),
        },
        Status::KitBug => "KIT BUG: the kit failed while checking; no verdict on your code. \
                           Tell the course staff."
            .to_string(),
    };
    if !message.is_empty() {
        text.push('\n');
        text.push_str(message);
    }
    text.push_str(&crate::output_section(&check.output));
    cut_bytes(&text, TEXT_LIMIT, TEXT_NOTICE)
}

fn test(name: String, number: String, score: f64, max: f64, passed: bool, output: String) -> Test {
    Test {
        name,
        number,
        score,
        max_score: max,
        status: if passed { "passed" } else { "failed" },
        output,
        output_format: "text",
        visibility: "visible",
    }
}

/// `report` as Gradescope's `results.json`, ending with a newline.
pub(crate) fn render(report: &RunReport) -> String {
    let (score, max) = match &report.not_run {
        Some(_) => (0.0, non_negative(report.points_possible)),
        None => points(report),
    };
    let (score, tests) = match &report.not_run {
        Some(not_run) => {
            let name = match not_run {
                NotRun::DoesNotCompile(_) => "compile",
                NotRun::Refused(_) => "refused",
            };
            let output = format!("{}.\n\n{}", not_run.headline(), not_run.text().trim_end());
            let only = test(
                name.to_string(),
                "1".to_string(),
                0.0,
                max,
                false,
                cut_bytes(&output, TEXT_LIMIT, TEXT_NOTICE),
            );
            (0.0, vec![only])
        }
        None => {
            let tests = report
                .checks
                .iter()
                .zip(module_numbers(&report.checks))
                .map(|(check, (module, index))| {
                    let weight = non_negative(check.weight);
                    let passed = check.status == Status::Passed;
                    test(
                        check.name.clone(),
                        format!("{module}.{index}"),
                        if passed { weight } else { 0.0 },
                        weight,
                        passed,
                        test_output(check),
                    )
                })
                .collect();
            (score, tests)
        }
    };
    let results = Results {
        score,
        execution_time: non_negative(report.duration_secs),
        output: summary(report, score, max),
        output_format: "text",
        stdout_visibility: "hidden",
        tests,
    };
    let mut text = serde_json::to_string_pretty(&results).expect("results always serialize");
    text.push('\n');
    text
}

//! Every lesson's named checks (all but the `exhaustive::…` ones) pass on the reference, run
//! in this process: one test per lesson.
//!
//! This is also what `grader/benches/mutants.sh` judges each mutant of a reference with: it
//! copies this file next to a copy of the reference's sources, where `reference` names that
//! copy, so a mutant is killed exactly when some named check of its lesson fails. Set
//! `KIT_NAMED_CHECKS=build2` (or a comma-separated list) to run only those lessons; the
//! others then say that they were skipped.

use grader_checks::lessons::{build2, build3, stage8};
use grader_checks::{Job, Lesson, Report};

/// The named checks of `lesson` that fail on `run`, each with its report.
fn failures(lesson: &Lesson, run: impl Fn(&Job) -> Report) -> Vec<String> {
    let named: Vec<&str> = lesson
        .checks
        .iter()
        .map(|c| c.name)
        .filter(|name| !name.starts_with("exhaustive::"))
        .collect();
    assert!(!named.is_empty(), "{} has no named checks", lesson.name);
    named
        .into_iter()
        .filter_map(|name| match run(&Job::Check(name.to_string())) {
            Report::Passed => None,
            other => Some(format!("{name}: {other:?}")),
        })
        .collect()
}

/// Whether `KIT_NAMED_CHECKS` (unset: every lesson) selects `lesson`; says so when not.
fn selected(lesson: &str) -> bool {
    let Ok(list) = std::env::var("KIT_NAMED_CHECKS") else {
        return true;
    };
    let chosen = list.split(',').any(|name| name.trim() == lesson);
    if !chosen {
        eprintln!("skipped: KIT_NAMED_CHECKS={list:?} does not name {lesson}");
    }
    chosen
}

fn assert_all_pass(lesson: &Lesson, run: impl Fn(&Job) -> Report) {
    if !selected(lesson.name) {
        return;
    }
    let failed = failures(lesson, run);
    assert!(
        failed.is_empty(),
        "{} named check(s) of {} failed:\n{}",
        failed.len(),
        lesson.name,
        failed.join("\n")
    );
}

#[test]
fn build2_named_checks_pass() {
    let learner = build2::Learner::Here(|m, u, t| reference::fetch(m, u, t));
    assert_all_pass(&build2::LESSON, |job| build2::run(job, &learner));
}

#[test]
fn build3_named_checks_pass() {
    let learner = build3::Learner::Here(|p, r, s, l| reference::retry_request(p, r, s, l));
    assert_all_pass(&build3::LESSON, |job| build3::run(job, &learner));
}

#[test]
fn stage8_named_checks_pass() {
    let learner = stage8::Learner::Here(reference::lookup_availability);
    assert_all_pass(&stage8::LESSON, |job| stage8::run(job, &learner));
}

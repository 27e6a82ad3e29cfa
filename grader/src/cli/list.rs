//! `list`: every exercise with where this learner stands and how much guidance they used.
//!
//! Nothing is built or run: each lesson shows the last result the grader remembers for the
//! learner's file as it is now, or says that the file changed since.

use super::output::say;
use super::standing::remembered;
use super::{kit_root, load_exercise, Failure, Outcome};
use grader::groups::GROUPS;
use grader::guidance::GuidanceLog;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub fn list(root: Option<PathBuf>) -> Outcome {
    let root = kit_root(root)?;
    table(&root)?;
    say!(
        "\nRun one: `cargo run -p grader -- GROUP`; every lesson you started: `cargo run -p grader -- all`. \
         Lessons: exercises/<group>/lesson.md."
    );
    Ok(ExitCode::SUCCESS)
}

/// The table `list` prints (a watch's `l` too): each lesson, where the learner stands, and
/// the guidance used.
pub fn table(root: &Path) -> Result<(), Failure> {
    let guidance = GuidanceLog::in_kit(root).read().ok();
    say!(
        "{:<8} {:<34} {:<32} guidance",
        "group",
        "exercise",
        "status"
    );
    for group in GROUPS {
        let exercise = load_exercise(root, group)?;
        let standing = remembered(root, group, &exercise)?;
        let used = match &guidance {
            Some(contents) => contents
                .summary(group.name)
                .unwrap_or_else(|| "none".into()),
            None => "unknown (the log cannot be read)".into(),
        };
        say!(
            "{:<8} {:<34} {} {used}",
            group.name,
            exercise.title,
            standing.show(32)
        );
    }
    Ok(())
}

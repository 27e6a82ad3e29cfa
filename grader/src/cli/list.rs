//! `list`: every exercise with where this learner stands and how much guidance they used.
//!
//! Nothing is built or run: each lesson shows the last result the grader remembers for the
//! learner's file as it is now, or says that the file changed since.

use super::output::say;
use super::standing::{remembered, Standing};
use super::{kit_root, load_exercise, CommandError, CommandResult};
use crate::guidance::GuidanceLog;
use crate::lessons::LESSONS;
use crate::Lesson;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub(crate) fn list(root: Option<PathBuf>) -> CommandResult {
    let root = kit_root(root)?;
    let next = table(&root)?;
    match next {
        Some(lesson) => say!(
            "\nNext, in course order: `cargo run -p grader -- {}` (lesson: exercises/{}/lesson.md).",
            lesson.name,
            lesson.name
        ),
        None => say!("\nEvery lesson passes."),
    }
    say!(
        "\nRun one: `cargo run -p grader -- LESSON`; every lesson you started: `cargo run -p grader -- all`. \
         Lessons: exercises/LESSON/lesson.md."
    );
    Ok(ExitCode::SUCCESS)
}

/// The table `list` prints (a watch's `l` too): each lesson, where the learner stands, and
/// the guidance used. Returns the first lesson, in course order, that does not pass yet.
pub(crate) fn table(root: &Path) -> Result<Option<&'static Lesson>, CommandError> {
    let mut next = None;
    let guidance = GuidanceLog::in_kit(root).read().ok();
    say!("{:<8} {:<34} {:<32} guidance", "lesson", "title", "status");
    for lesson in LESSONS {
        let exercise = load_exercise(root, lesson)?;
        let standing = remembered(root, lesson, &exercise)?;
        if next.is_none() && !matches!(standing, Standing::Passing) {
            next = Some(*lesson);
        }
        let used = match &guidance {
            Some(contents) => {
                let before = contents
                    .summary(lesson.name)
                    .unwrap_or_else(|| "none".into());
                match contents.after_first_pass(lesson.name) {
                    Some(after) => format!("{before} (then {after} after the first pass)"),
                    None => before,
                }
            }
            None => "unknown (the log cannot be read)".into(),
        };
        say!(
            "{:<8} {:<34} {} {used}",
            lesson.name,
            exercise.title,
            standing.show(32)
        );
    }
    Ok(next)
}

//! Where a learner stands on one lesson, and the last result the grader remembers for it.

use super::CommandError;
use crate::cache::{self, LastResult};
use crate::reset::Resetter;
use crate::suite::{self, RunSettings, Summary};
use crate::{Lesson, LessonInfo, Status};
use colored::Colorize;
use std::path::Path;
use std::time::Duration;

/// Where a learner stands on one exercise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Standing {
    NotStarted,
    DoesNotCompile,
    Unfinished,
    Failing {
        failed: usize,
        total: usize,
    },
    Passing,
    /// The practice crate reaches the kit's answers: not graded.
    Refused,
    /// The file changed since the grader last ran its checks.
    Changed,
    /// The grader has no result for this file yet.
    NotRun,
}

impl Standing {
    /// From a run of every check of a lesson.
    pub(crate) fn of(summary: &Summary) -> Standing {
        let total = summary.runs.len();
        match (
            summary.count(Status::Failed) + summary.count(Status::KitBug),
            summary.count(Status::Unfinished),
        ) {
            _ if summary.all_passed() => Standing::Passing,
            (0, _) => Standing::Unfinished,
            (failed, _) => Standing::Failing { failed, total },
        }
    }

    /// The status, in words.
    pub(crate) fn label(&self) -> String {
        match self {
            Standing::NotStarted => "not started".to_string(),
            Standing::DoesNotCompile => "does not compile".to_string(),
            Standing::Unfinished => "unfinished".to_string(),
            Standing::Failing { failed, total } => format!("failing ({failed} of {total} checks)"),
            Standing::Passing => "passing".to_string(),
            Standing::Refused => "not graded (borrows an answer)".to_string(),
            Standing::Changed => "changed since last run: run it".to_string(),
            Standing::NotRun => "not run yet: run it".to_string(),
        }
    }

    /// The status, padded to `width` before it is coloured (colour codes have no width).
    pub(crate) fn show(&self, width: usize) -> String {
        let padded = format!("{:<width$}", self.label());
        match self {
            Standing::NotStarted | Standing::Changed | Standing::NotRun => {
                padded.dimmed().to_string()
            }
            Standing::DoesNotCompile | Standing::Failing { .. } | Standing::Refused => {
                padded.red().to_string()
            }
            Standing::Unfinished => padded.yellow().to_string(),
            Standing::Passing => padded.green().to_string(),
        }
    }

    /// Reads back [`Standing::label`] (for a remembered result).
    fn from_label(label: &str, counts: [usize; 3]) -> Standing {
        match label {
            "does not compile" => Standing::DoesNotCompile,
            "unfinished" => Standing::Unfinished,
            "passing" => Standing::Passing,
            "not graded (borrows an answer)" => Standing::Refused,
            _ => Standing::Failing {
                failed: counts[1],
                total: counts.iter().sum(),
            },
        }
    }
}

/// Whether the learner's file of `exercise` is still the pristine stub.
pub(crate) fn started(root: &Path, exercise: &LessonInfo) -> Result<bool, CommandError> {
    Resetter::new(root, exercise)
        .is_changed()
        .map_err(|e| CommandError::new(e.to_string()))
}

/// Remembers how a run of every check of `lesson` ended, for `list`.
pub(crate) fn remember(
    root: &Path,
    lesson: &Lesson,
    exercise: &LessonInfo,
    standing: &Standing,
    summary: Option<&Summary>,
) {
    let counts = summary.map_or([0; 3], |s| {
        [
            s.count(Status::Passed),
            s.count(Status::Failed) + s.count(Status::KitBug),
            s.count(Status::Unfinished),
        ]
    });
    let entry = LastResult {
        learner_hash: cache::learner_hash(root, &exercise.file),
        fingerprint: cache::fingerprint(root, lesson.name),
        standing: standing.label(),
        counts,
        at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
    };
    cache::store(&cache::dir(root), &cache::result_name(lesson.name), &entry);
}

/// Where the learner stands, from the last result the grader remembers: nothing is built
/// or run. A file changed since then says so.
pub(crate) fn remembered(
    root: &Path,
    lesson: &Lesson,
    exercise: &LessonInfo,
) -> Result<Standing, CommandError> {
    if !started(root, exercise)? {
        return Ok(Standing::NotStarted);
    }
    let Some(last) = cache::load::<LastResult>(&cache::dir(root), &cache::result_name(lesson.name))
    else {
        return Ok(Standing::NotRun);
    };
    if last.learner_hash != cache::learner_hash(root, &exercise.file)
        || last.fingerprint != cache::fingerprint(root, lesson.name)
    {
        return Ok(Standing::Changed);
    }
    Ok(Standing::from_label(&last.standing, last.counts))
}

/// Where the learner stands on `lesson`, found by building its lesson and running every check
/// quietly (and remembered). Not started when the file is the stub.
pub(crate) fn measure(
    root: &Path,
    lesson: &Lesson,
    exercise: &LessonInfo,
) -> Result<(Standing, Option<Summary>), CommandError> {
    if !started(root, exercise)? {
        return Ok((Standing::NotStarted, None));
    }
    let color = colored::control::SHOULD_COLORIZE.should_colorize();
    // The reference's runs that build3's exhaustive check compares with, made once and kept
    // (as a run of the lesson does): otherwise the check makes them itself, every time.
    crate::check_input::want(lesson.name);
    // The compiler's messages are not repeated here: running the lesson shows them.
    let Ok(built) = crate::compile::build_harness(root, lesson.name, color, &mut std::io::sink())
    else {
        remember(root, lesson, exercise, &Standing::DoesNotCompile, None);
        return Ok((Standing::DoesNotCompile, None));
    };
    if !crate::borrowed::inspect(root, built.practice_dep_info.as_deref())
        .map(|found| found.is_empty())
        .unwrap_or(false)
    {
        remember(root, lesson, exercise, &Standing::Refused, None);
        return Ok((Standing::Refused, None));
    }
    // What `list` shows next time is kept by a reporter of the run, as it ends.
    let mut keep = crate::events::OnFinished(|lesson: &Lesson, summary: &crate::suite::Summary| {
        remember(
            root,
            lesson,
            exercise,
            &Standing::of(summary),
            Some(summary),
        );
    });
    let summary = suite::run(
        lesson,
        &built.launcher(),
        &suite::Selection::default(),
        &RunSettings::new("practice", Duration::from_secs(3)),
        &mut keep,
    )
    .map_err(|e| CommandError::new(format!("could not run the checks: {e}")))?;
    Ok((Standing::of(&summary), Some(summary)))
}

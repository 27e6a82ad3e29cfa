//! `list`: every exercise with where this learner stands and how much guidance they used.

use super::output::say;
use super::{kit_root, load_exercise, Failure, Outcome};
use colored::Colorize;
use grader::groups::GROUPS;
use grader::guidance::GuidanceLog;
use grader::reset::Resetter;
use grader::suite::{self, RunSettings, Summary};
use grader::{Exercise, Group, Launcher, Status};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// Where a learner stands on one exercise.
pub enum Standing {
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
}

impl Standing {
    /// The status, padded to `width` before it is coloured (colour codes have no width).
    pub fn show(&self, width: usize) -> String {
        let plain = match self {
            Standing::NotStarted => "not started".to_string(),
            Standing::DoesNotCompile => "does not compile".to_string(),
            Standing::Unfinished => "unfinished".to_string(),
            Standing::Failing { failed, total } => format!("failing ({failed} of {total} checks)"),
            Standing::Passing => "passing".to_string(),
            Standing::Refused => "not graded (borrows an answer)".to_string(),
        };
        let padded = format!("{plain:<width$}");
        match self {
            Standing::NotStarted => padded.dimmed().to_string(),
            Standing::DoesNotCompile | Standing::Failing { .. } | Standing::Refused => {
                padded.red().to_string()
            }
            Standing::Unfinished => padded.yellow().to_string(),
            Standing::Passing => padded.green().to_string(),
        }
    }
}

impl Standing {
    /// From a run of every check of a group.
    pub fn of(summary: &Summary) -> Standing {
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
}

/// Where the learner stands on `group`: not started (the file is the stub), or the result of
/// building its lesson and running every check quietly.
pub fn standing(
    root: &Path,
    group: &Group,
    exercise: &Exercise,
) -> Result<(Standing, Option<Summary>), Failure> {
    let changed = Resetter::new(root, exercise)
        .is_changed()
        .map_err(|e| Failure::new(e.to_string()))?;
    if !changed {
        return Ok((Standing::NotStarted, None));
    }
    let color = colored::control::SHOULD_COLORIZE.should_colorize();
    // The compiler's messages are not repeated here: running the group shows them.
    let Ok(built) = grader::compile::build_harness(root, group.name, color, &mut std::io::sink())
    else {
        return Ok((Standing::DoesNotCompile, None));
    };
    if !grader::borrowed::inspect(root, built.practice_dep_info.as_deref())
        .map(|found| found.is_empty())
        .unwrap_or(false)
    {
        return Ok((Standing::Refused, None));
    }
    let summary = suite::run(
        group,
        &Launcher::new(&built.executable),
        &libtest_mimic::Arguments::default(),
        &RunSettings::new("practice", Duration::from_secs(3)),
        &mut std::io::sink(),
    )
    .map_err(|e| Failure::new(format!("could not run the checks: {e}")))?;
    Ok((Standing::of(&summary), Some(summary)))
}

pub fn list(root: Option<PathBuf>) -> Outcome {
    let root = kit_root(root)?;
    let log = GuidanceLog::in_kit(&root);
    let guidance = log.read().ok();
    say!(
        "{:<8} {:<28} {:<30} guidance",
        "group",
        "exercise",
        "status"
    );
    for group in GROUPS {
        let exercise = load_exercise(&root, group)?;
        let (standing, _) = standing(&root, group, &exercise)?;
        let used = match &guidance {
            Some(contents) => contents
                .summary(group.name)
                .unwrap_or_else(|| "none".into()),
            None => "unknown (the log cannot be read)".into(),
        };
        say!(
            "{:<8} {:<28} {} {used}",
            group.name,
            exercise.title,
            standing.show(30)
        );
    }
    say!("\nRun one: `cargo run -p grader -- GROUP`; all you started: `cargo run -p grader -- all`. Lessons: exercises/<group>/lesson.md.");
    Ok(ExitCode::SUCCESS)
}

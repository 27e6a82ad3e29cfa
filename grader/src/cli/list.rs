//! `list`: every exercise with where this learner stands and how much guidance they used.

use super::{kit_root, load_exercise, Failure, Outcome};
use colored::Colorize;
use grader::checks::GROUPS;
use grader::compile;
use grader::guidance::GuidanceLog;
use grader::reset::Resetter;
use grader::suite::{self, RunSettings};
use grader::{Launcher, Status};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Where a learner stands on one exercise.
enum Standing {
    NotStarted,
    DoesNotCompile,
    Unfinished,
    Failing { failed: usize, total: usize },
    Passing,
}

impl Standing {
    /// The status, padded to `width` before it is coloured (colour codes have no width).
    fn show(&self, width: usize) -> String {
        let plain = match self {
            Standing::NotStarted => "not started".to_string(),
            Standing::DoesNotCompile => "does not compile".to_string(),
            Standing::Unfinished => "unfinished".to_string(),
            Standing::Failing { failed, total } => format!("failing ({failed} of {total} checks)"),
            Standing::Passing => "passing".to_string(),
        };
        let padded = format!("{plain:<width$}");
        match self {
            Standing::NotStarted => padded.dimmed().to_string(),
            Standing::DoesNotCompile | Standing::Failing { .. } => padded.red().to_string(),
            Standing::Unfinished => padded.yellow().to_string(),
            Standing::Passing => padded.green().to_string(),
        }
    }
}

pub fn list(root: Option<PathBuf>) -> Outcome {
    let root = kit_root(root)?;
    let log = GuidanceLog::in_kit(&root);
    let guidance = log.read().ok();
    let mut harness: Option<Option<PathBuf>> = None;
    println!(
        "{:<8} {:<28} {:<30} guidance",
        "group", "exercise", "status"
    );
    for group in GROUPS {
        let exercise = load_exercise(&root, group)?;
        let changed = Resetter::new(&root, &exercise)
            .is_changed()
            .map_err(|e| Failure::new(e.to_string()))?;
        let standing = if !changed {
            Standing::NotStarted
        } else {
            // Built once, for every group that needs it; cargo prints its own progress.
            let exe = harness.get_or_insert_with(|| compile::build_practice_harness(&root).ok());
            match exe {
                None => Standing::DoesNotCompile,
                Some(exe) => {
                    let settings = RunSettings {
                        against: "practice".into(),
                        timeout: Duration::from_secs(3),
                        unfinished_hint: String::new(),
                    };
                    let summary = suite::run(
                        group,
                        &Launcher::new(exe.clone()),
                        &libtest_mimic::Arguments::default(),
                        &settings,
                        &mut std::io::sink(),
                    )
                    .map_err(|e| Failure::new(format!("could not run the checks: {e}")))?;
                    let total = summary.runs.len();
                    match (
                        summary.count(Status::Failed),
                        summary.count(Status::Unfinished),
                    ) {
                        _ if summary.all_passed() => Standing::Passing,
                        (0, _) => Standing::Unfinished,
                        (failed, _) => Standing::Failing { failed, total },
                    }
                }
            }
        };
        let used = match &guidance {
            Some(contents) => contents
                .summary(group.name)
                .unwrap_or_else(|| "none".into()),
            None => "unknown (the log cannot be read)".into(),
        };
        println!(
            "{:<8} {:<28} {} {used}",
            group.name,
            exercise.title,
            standing.show(30)
        );
    }
    println!("\nRun one: `cargo run -p grader -- build3` (or stage8). Lessons: exercises/<group>/lesson.md.");
    Ok(ExitCode::SUCCESS)
}

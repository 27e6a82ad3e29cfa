//! `all`: rerun every lesson the learner has started — the course's "rerun all implemented
//! builds" — with one line per lesson and a total.

use super::output::say;
use super::standing::{measure, Standing};
use super::{kit_root, load_exercise, CommandResult, EXIT_NOT_ALL_PASSED};
use crate::lessons::LESSONS;
use crate::Status;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub(crate) struct AllArgs {}

pub(crate) fn all(root: Option<PathBuf>, _args: AllArgs) -> CommandResult {
    let root = kit_root(root)?;
    let mut skipped = Vec::new();
    let (mut started, mut passing) = (0, 0);
    for lesson in LESSONS {
        let exercise = load_exercise(&root, lesson)?;
        let (standing, summary) = measure(&root, lesson, &exercise)?;
        if let Standing::NotStarted = standing {
            skipped.push(lesson.name);
            continue;
        }
        started += 1;
        if let Standing::Passing = standing {
            passing += 1;
        }
        let counts = match &summary {
            Some(s) => format!(
                "{} passed; {} failed; {} unfinished",
                s.count(Status::Passed),
                s.count(Status::Failed) + s.count(Status::KitBug),
                s.count(Status::Unfinished)
            ),
            None => format!(
                "nothing ran: `cargo run -p grader -- {}` shows why",
                lesson.name
            ),
        };
        say!("{:<8} {} {counts}", lesson.name, standing.show(30));
    }
    if started == 0 {
        say!(
            "No lesson started yet: every lesson's file is still its stub, so nothing was run. \
             Start with `cargo run -p grader -- {}`.",
            LESSONS.first().map_or("build3", |g| g.name)
        );
        return Ok(ExitCode::SUCCESS);
    }
    let skipped_line = if skipped.is_empty() {
        String::new()
    } else {
        format!("; skipped as not started: {}", skipped.join(", "))
    };
    say!("\ntotal: {passing} of {started} started lesson(s) passing{skipped_line}");
    Ok(if passing == started {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_NOT_ALL_PASSED)
    })
}

//! `help`, `note` and `log`: guidance, always recorded before it is shown.

use super::output::{say, tell};
use super::{
    kit_root, load_exercise, resolve_lesson, CommandError, CommandResult, EXIT_NOT_ALL_PASSED,
};
use crate::guidance::{GuidanceError, GuidanceLog, Kind};
use crate::help::Help;
use clap::Args;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub(crate) struct HelpArgs {
    /// The lesson, e.g. build3. Without it: the grader's own usage (not recorded).
    #[arg(value_name = "LESSON")]
    pub(crate) lesson: Option<String>,
    /// 1: a refresher of the ideas; 2: an approach; 3: repair advice for typical failures.
    #[arg(long, default_value_t = 1, value_name = "N")]
    level: usize,
}

#[derive(Args)]
pub(crate) struct NoteArgs {
    /// The lesson the guidance was for, e.g. build3.
    #[arg(value_name = "LESSON")]
    lesson: String,
    /// What you read or were told, e.g. "read reference/src/retry.rs".
    #[arg(required = true, num_args = 1.., trailing_var_arg = true, value_name = "TEXT")]
    text: Vec<String>,
}

#[derive(Args)]
pub(crate) struct LogArgs {
    /// Only this lesson.
    #[arg(long = "lesson", visible_alias = "group", value_name = "LESSON")]
    lesson: Option<String>,
    /// Check the log: report gaps in the numbering and lines that are not records, and
    /// exit with status 1 if there are any.
    #[arg(long)]
    check: bool,
}

fn record_failure(e: GuidanceError, what: &str) -> CommandError {
    CommandError::new(format!("{e}; {what}")).hint(
        "guidance is recorded before it is shown: make GUIDANCE_LOG.md a writable file, \
         or delete it and it is recreated",
    )
}

pub(crate) fn help(root: Option<PathBuf>, args: HelpArgs) -> CommandResult {
    let name = args.lesson.unwrap_or_default();
    let lesson = resolve_lesson(&name)?;
    let root = kit_root(root)?;
    let exercise = load_exercise(&root, lesson)?;
    let help = Help::load(&exercise.dir(&root)).map_err(|e| {
        CommandError::new(e.to_string()).hint(format!(
            "restore it from git: `git checkout -- exercises/{}`",
            lesson.name
        ))
    })?;
    let level = help
        .level(args.level)
        .map_err(|e| CommandError::new(e.to_string()))?;
    let record = GuidanceLog::in_kit(&root)
        .append(
            lesson.name,
            Kind::Help,
            &format!("level {}: {}", args.level, level.name),
        )
        .map_err(|e| record_failure(e, "no help was shown"))?;
    say!(
        "{} — help, level {} of {}: {}\n",
        exercise.title,
        args.level,
        help.levels.len(),
        level.name
    );
    say!("{}\n", level.text.trim_end());
    // The next level this copy of the kit holds (a copy without the answers withholds one).
    let next = (args.level + 1..=help.levels.len()).find(|n| help.level(*n).is_ok());
    let more = match next {
        Some(n) => format!(
            " More specific: `cargo run -p grader -- help {} --level {n}`.",
            lesson.name
        ),
        None => String::new(),
    };
    say!(
        "(Recorded as guidance #{} in GUIDANCE_LOG.md.{more})",
        record.seq
    );
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn note(root: Option<PathBuf>, args: NoteArgs) -> CommandResult {
    let lesson = resolve_lesson(&args.lesson)?;
    let text = args.text.join(" ");
    if text.trim().is_empty() {
        return Err(CommandError::new("the note is empty")
            .hint("say what guidance you used, e.g. \"read reference/src/retry.rs\""));
    }
    let root = kit_root(root)?;
    let record = GuidanceLog::in_kit(&root)
        .append(lesson.name, Kind::Note, text.trim())
        .map_err(|e| record_failure(e, "the note was not recorded"))?;
    say!(
        "Recorded note #{} for {} in GUIDANCE_LOG.md.",
        record.seq,
        lesson.name
    );
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn log(root: Option<PathBuf>, args: LogArgs) -> CommandResult {
    let only = args.lesson.as_deref().map(resolve_lesson).transpose()?;
    let root = kit_root(root)?;
    let log = GuidanceLog::in_kit(&root);
    let contents = log.read().map_err(|e| CommandError::new(e.to_string()))?;
    let shown = |lesson: &str| only.is_none_or(|g| g.name == lesson);
    let mut per_lesson: BTreeMap<&str, BTreeMap<Kind, usize>> = BTreeMap::new();
    for record in contents.records.iter().filter(|r| shown(&r.lesson)) {
        *per_lesson
            .entry(&record.lesson)
            .or_default()
            .entry(record.kind)
            .or_default() += 1;
    }
    if !args.check {
        if per_lesson.is_empty() {
            say!(
                "No guidance recorded{}.",
                only.map(|g| format!(" for {}", g.name)).unwrap_or_default()
            );
        }
        for (lesson, kinds) in &per_lesson {
            let parts: Vec<String> = kinds.iter().map(|(k, n)| k.counted(*n)).collect();
            let label = if *lesson == "-" {
                "(the log itself)"
            } else {
                lesson
            };
            say!("{label}: {}", parts.join(", "));
        }
    }
    let path = log.path().display();
    if contents.problems.is_empty() {
        if args.check {
            match contents.records.len() {
                0 => say!("{path}: no records yet; the header reads."),
                n => say!("{path}: {n} record(s), numbered 1..{n} without gaps; every line reads."),
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    for problem in &contents.problems {
        tell!("{path}:{}: {}", problem.line, problem.what);
    }
    tell!(
        "{} problem(s): the log is append-only, and these lines were changed or removed by hand.",
        contents.problems.len()
    );
    Ok(ExitCode::from(EXIT_NOT_ALL_PASSED))
}

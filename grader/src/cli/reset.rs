//! `reset`: put the pristine stub back, keeping a backup; list and restore backups.

use super::output::say;
use super::{kit_root, load_exercise, resolve_lesson, CommandError, CommandResult};
use crate::reset::{Done, ResetError, Resetter};
use clap::Args;
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args)]
pub(crate) struct ResetArgs {
    /// The lesson to reset, e.g. build3. Only that lesson's file is touched.
    #[arg(value_name = "LESSON")]
    lesson: String,
    /// Do not ask for confirmation.
    #[arg(long, short)]
    yes: bool,
    /// List this lesson's backups, oldest first, and change nothing.
    #[arg(long, conflicts_with = "restore")]
    list_backups: bool,
    /// Put a backup back (a name from --list-backups, or a path). Your current file is
    /// backed up first.
    #[arg(long, value_name = "BACKUP")]
    restore: Option<String>,
}

fn failure(e: ResetError, root: &Path) -> CommandError {
    let hint = match &e {
        ResetError::Backup { .. } => {
            "nothing was changed: make the backup folder writable and try again".to_string()
        }
        ResetError::NoBackup { .. } => {
            "`--list-backups` shows the names you can restore".to_string()
        }
        ResetError::Stub { .. } => {
            "restore the exercises/ folder from git: `git checkout -- exercises`".to_string()
        }
        ResetError::Practice { .. } => format!(
            "check the permissions of the files under {}",
            root.display()
        ),
    };
    CommandError::new(e.to_string()).hint(hint)
}

pub(crate) fn reset(root: Option<PathBuf>, args: ResetArgs) -> CommandResult {
    let lesson = resolve_lesson(&args.lesson)?;
    let root = kit_root(root)?;
    let exercise = load_exercise(&root, lesson)?;
    let resetter = Resetter::new(&root, &exercise);
    let file = exercise.file.display();

    if args.list_backups {
        let backups = resetter.backups().map_err(|e| failure(e, &root))?;
        if backups.is_empty() {
            say!("No backups of {file} yet.");
        }
        for b in &backups {
            say!("{}  ({} bytes)", b.name, b.bytes);
        }
        if let Some(last) = backups.last() {
            say!(
                "\nIn {}. Restore one with `cargo run -p grader -- reset {} --restore {}`.",
                resetter.backup_dir().display(),
                lesson.name,
                last.name
            );
        }
        return Ok(ExitCode::SUCCESS);
    }

    let question = match &args.restore {
        Some(name) => {
            format!("Replace {file} with the backup {name}? Your current file is backed up first.")
        }
        None => {
            if !resetter.is_changed().map_err(|e| failure(e, &root))? {
                say!("{file} is already the pristine stub: nothing to do.");
                return Ok(ExitCode::SUCCESS);
            }
            format!("Replace {file} with the pristine stub? Your current file is backed up first.")
        }
    };
    if !args.yes && std::io::stdin().is_terminal() && !confirm(&question) {
        say!("Nothing changed.");
        return Ok(ExitCode::SUCCESS);
    }
    let done = match &args.restore {
        Some(name) => resetter.restore(name),
        None => resetter.reset(),
    }
    .map_err(|e| failure(e, &root))?;
    match done {
        Done::Unchanged => say!("{file} already holds that text: nothing to do."),
        Done::Replaced { backup } => {
            if let Some(backup) = &backup {
                say!("Backed up your file to {}", backup.display());
            }
            match (&args.restore, &backup) {
                (Some(name), _) => say!("Restored {file} from {name}."),
                (None, Some(backup)) => say!(
                    "Restored {file} to the pristine stub. GUIDANCE_LOG.md is untouched.\n\
                     Bring your work back with `cargo run -p grader -- reset {} --restore {}`.",
                    lesson.name,
                    backup.file_name().map_or_else(
                        || backup.display().to_string(),
                        |n| n.to_string_lossy().into_owned()
                    )
                ),
                (None, None) => {
                    say!("Restored {file} to the pristine stub. GUIDANCE_LOG.md is untouched.")
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Asks on the terminal; anything but y/yes is a no.
fn confirm(question: &str) -> bool {
    print!("{question} [y/N] ");
    let _ = std::io::stdout().flush();
    let mut answer = String::new();
    if std::io::stdin().lock().read_line(&mut answer).is_err() {
        return false;
    }
    matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}

//! The command line: argument types, dispatch, and turning errors into one line plus a hint.

mod guide;
mod list;
mod reset;
mod run;
mod scenario;

use clap::{CommandFactory, Parser, Subcommand};
use colored::Colorize;
use grader::checks::{self, Group};
use grader::{Exercise, Implementation};
use std::path::PathBuf;
use std::process::ExitCode;

/// Exit status when a group ran and not every check passed (and for `log --check` problems).
const EXIT_NOT_ALL_PASSED: u8 = 1;
/// Exit status for bad input and anything that kept a command from doing its work.
const EXIT_ERROR: u8 = 2;

#[derive(Parser)]
#[command(
    name = "grader",
    about = "Checks your exercises against the lesson's rules.",
    long_about = "Checks your exercises against the lesson's rules.\n\n\
        Write the function of an exercise (build3: practice/src/lib.rs, stage8:\n\
        practice/src/gateway.rs), then run its group, e.g. `cargo run -p grader -- build3`.\n\
        Each check ends as ok, FAILED or unfinished (your function still reaches todo!()).\n\n\
        Help, notes and runs against the reference are guidance: they are recorded in\n\
        GUIDANCE_LOG.md before they are shown, and nothing erases that record.",
    after_help = "Exit status: 0 on success (every selected check passed); 1 when a check failed \
        or is unfinished, or `log --check` found a problem; 2 when the command could not do its \
        work (bad arguments, a file that does not compile, a log that cannot be written).",
    disable_help_subcommand = true
)]
struct Cli {
    /// The kit's folder (default: the nearest folder above the current one with exercises/).
    #[arg(long, global = true, value_name = "DIR")]
    root: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the build3 checks: retry_request (lesson: exercises/build3/lesson.md).
    Build3(run::GroupArgs),
    /// Run the stage8 checks: lookup_availability (lesson: exercises/stage8/lesson.md).
    Stage8(run::GroupArgs),
    /// List the exercises with your status on each and the guidance you used.
    List,
    /// Show course help for a group, one level at a time (recorded as guidance first).
    Help(guide::HelpArgs),
    /// Record guidance you got outside the kit (a book, a friend, the reference's source).
    Note(guide::NoteArgs),
    /// Summarise the guidance log, or check it for gaps and edited lines.
    Log(guide::LogArgs),
    /// Put a group's pristine stub back, after backing up your file; or restore a backup.
    Reset(reset::ResetArgs),
    /// Run a scenario file on your code: every call, wait and event, and the result.
    Scenario(scenario::ScenarioArgs),
    /// Run the lesson's worked example on the reference and show every step.
    Trace(scenario::TraceArgs),
    /// Internal: run one check against the reference (the grader starts this itself).
    #[command(name = "__check", hide = true)]
    Check {
        #[arg(num_args = 3)]
        args: Vec<String>,
    },
}

/// A failure of the command itself: one line, plus a hint.
struct Failure {
    message: String,
    hint: Option<String>,
}

impl Failure {
    fn new(message: impl Into<String>) -> Self {
        Failure {
            message: message.into(),
            hint: None,
        }
    }

    fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

type Outcome = Result<ExitCode, Failure>;

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    // Colour for errors and the commands that do not take --color.
    run::setup_color(None);
    let root = cli.root;
    let result = match cli.command {
        Command::Check { args } => {
            return grader::harness::serve(Implementation::reference(), &args)
        }
        Command::Build3(args) => run::run_group(root, &checks::build3::GROUP, args),
        Command::Stage8(args) => run::run_group(root, &checks::stage8::GROUP, args),
        Command::Help(args) => match args.group {
            Some(_) => guide::help(root, args),
            None => Cli::command()
                .print_long_help()
                .map(|()| ExitCode::SUCCESS)
                .map_err(|e| Failure::new(format!("cannot print the help: {e}"))),
        },
        Command::Note(args) => guide::note(root, args),
        Command::List => list::list(root),
        Command::Log(args) => guide::log(root, args),
        Command::Reset(args) => reset::reset(root, args),
        Command::Scenario(args) => scenario::scenario(root, args),
        Command::Trace(args) => scenario::trace(root, args),
    };
    match result {
        Ok(code) => code,
        Err(failure) => {
            eprintln!("{} {}", "error:".red().bold(), failure.message);
            if let Some(hint) = failure.hint {
                eprintln!("{} {hint}", "hint:".cyan().bold());
            }
            ExitCode::from(EXIT_ERROR)
        }
    }
}

fn kit_root(explicit: Option<PathBuf>) -> Result<PathBuf, Failure> {
    if let Some(root) = explicit {
        return if root.join("exercises").is_dir() {
            Ok(root)
        } else {
            Err(
                Failure::new(format!("{} has no exercises/ folder", root.display()))
                    .hint("--root names the kit's folder, the one with Cargo.toml and exercises/"),
            )
        };
    }
    let here = std::env::current_dir()
        .map_err(|e| Failure::new(format!("cannot read the current folder: {e}")))?;
    Ok(grader::workspace::find_root(&here).unwrap_or_else(grader::workspace::build_root))
}

/// The group called `name`, or an error that lists the groups and the nearest name.
fn resolve_group(name: &str) -> Result<&'static Group, Failure> {
    if let Some(group) = checks::group(name) {
        return Ok(group);
    }
    let names: Vec<&str> = checks::GROUPS.iter().map(|g| g.name).collect();
    let nearest = names
        .iter()
        .map(|n| (strsim::damerau_levenshtein(n, name), *n))
        .min()
        .filter(|(distance, _)| *distance <= 3)
        .map(|(_, n)| n);
    let mut failure = Failure::new(format!(
        "there is no group {name:?}; the groups are: {}",
        names.join(", ")
    ));
    if let Some(n) = nearest {
        failure = failure.hint(format!("did you mean {n}?"));
    }
    Err(failure)
}

fn load_exercise(root: &std::path::Path, group: &Group) -> Result<Exercise, Failure> {
    Exercise::load(root, group.name).map_err(|e| {
        Failure::new(e.to_string()).hint(format!(
            "restore the exercise folder from git: `git checkout -- exercises/{}`",
            group.name
        ))
    })
}

//! The command line: argument types, dispatch, and turning errors into one line plus a hint.
//!
//! The lessons are not written down here: each is a subcommand made from the registry
//! (`grader_checks::lessons::LESSONS`), so a new lesson needs no change to the command line.

mod all;
mod bundle;
mod dev;
mod grade;
mod guide;
mod list;
mod output;
mod reset;
mod review;
mod run;
mod scenario;
mod signals;
mod standing;
mod watch;

use crate::lessons::LESSONS;
use crate::{Lesson, LessonInfo};
use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use colored::Colorize;
use output::tell;
use std::path::PathBuf;
use std::process::ExitCode;

/// Exit status when a lesson ran and not every check passed (and for `log --check` problems).
const EXIT_NOT_ALL_PASSED: u8 = 1;
/// Exit status for bad input and anything that kept a command from doing its work.
const EXIT_ERROR: u8 = 2;

#[derive(Parser)]
#[command(
    name = "grader",
    // The program is `kit-grader`, which the launcher `cargo run -p grader` runs: usage
    // lines name the command people type.
    bin_name = "grader",
    about = "Checks your code against each lesson's rules.",
    long_about = "Checks your code against each lesson's rules.\n\n\
        Write a lesson's function, then run the lesson's checks, e.g.\n\
        `cargo run -p grader -- build3`. Each check ends as ok, FAILED or unfinished\n\
        (your function still reaches todo!()).\n\n\
        Help, notes and runs against the reference are guidance: they are recorded in\n\
        GUIDANCE_LOG.md before they are shown, and nothing erases that record.\n\n\
        With no command: where you stand on each lesson, and what to run next (`list`).",
    after_help = "Exit status: 0 on success (every selected check passed; `review`, a checklist, \
        exits 0 whatever it finds missing); 1 when a check failed \
        or is unfinished, or `log --check` found a problem; 2 when the command could not do its \
        work (bad arguments, a file that does not compile, a file that reaches the reference answers, a log that cannot \
        be written, a bug in the kit).",
    disable_help_subcommand = true
)]
struct Cli {
    #[command(flatten)]
    global: GlobalArgs,
    /// With none, where you stand: `list`.
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Args)]
struct GlobalArgs {
    /// The kit's folder (default: the nearest folder above the current one with exercises/).
    #[arg(long, global = true, value_name = "DIR")]
    root: Option<PathBuf>,
    /// For commands that build and run checks: say why a shortcut the kit takes to a
    /// verdict (recompiling only your file, starting checks from a ready process) was not
    /// taken. Results are the same either way; other commands ignore it.
    #[arg(short, long, global = true)]
    verbose: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Run every lesson you have started (its file is no longer the stub): one line each.
    All(all::AllArgs),
    /// List the lessons with your status on each and the guidance you used.
    List,
    /// Show course help for a lesson, one level at a time (recorded as guidance first).
    Help(guide::HelpArgs),
    /// Record guidance you got outside the kit (a book, a friend, the reference's source).
    Note(guide::NoteArgs),
    /// Summarise the guidance log, or check it for gaps and edited lines.
    Log(guide::LogArgs),
    /// Put a lesson's pristine stub back, after backing up your file; or restore a backup.
    Reset(reset::ResetArgs),
    /// Run a scenario file on your code: every call, wait and event, and the result.
    Scenario(scenario::ScenarioArgs),
    /// Run the lesson's worked example on the reference and show every step (it is part of the
    /// lesson: not recorded as guidance).
    Trace(scenario::TraceArgs),
    /// A lesson's checklist, not a grade: your own scenarios run and the situations they
    /// cover, and the self-review questions still unanswered (exit status 0 whatever is missing).
    Review(review::ReviewArgs),
    /// Re-run a lesson each time you save its file; keys: r run, h help (recorded as guidance), l
    /// list, q quit.
    Watch(watch::WatchArgs),
    /// For instructors: grade a folder of submissions, each in its own copy of the kit.
    Grade(grade::GradeArgs),
    /// For instructors: write a platform's autograder (gradescope, exercism, classroom).
    Bundle(bundle::BundleArgs),
    /// For lesson authors: `dev update` writes the wiring from exercises/lessons.toml, `dev
    /// check` checks every lesson, `dev new NAME` scaffolds one.
    Dev(dev::DevArgs),
    /// Internal: run one job on the reference (the grader starts this itself).
    #[command(name = "__check", hide = true)]
    Check {
        #[arg(num_args = 1..=4)]
        args: Vec<String>,
    },
}

/// A failure of the command itself: one line, plus a hint.
struct CommandError {
    message: String,
    hint: Option<String>,
}

impl CommandError {
    fn new(message: impl Into<String>) -> Self {
        CommandError {
            message: message.into(),
            hint: None,
        }
    }

    fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

type CommandResult = Result<ExitCode, CommandError>;

/// The command line with one subcommand per lesson of the registry, in course order.
fn command() -> clap::Command {
    let mut cmd = Cli::command();
    // The lessons come first in --help, in course order; the other commands after them.
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    for (j, name) in names.iter().enumerate() {
        cmd = cmd.mut_subcommand(name, |s| s.display_order(LESSONS.len() + j));
    }
    for (i, lesson) in LESSONS.iter().enumerate() {
        let about = format!(
            "Run the {} checks: {}, lesson \"{}\" (exercises/{}/lesson.md)",
            lesson.name, lesson.function, lesson.title, lesson.name
        );
        cmd = cmd.subcommand(
            run::LessonArgs::augment_args(clap::Command::new(lesson.name))
                .about(about)
                .display_order(i),
        );
    }
    cmd
}

/// Runs the command line on this process's arguments and gives the exit status: the whole
/// of the `grader` program (its `main` calls this).
pub fn main() -> ExitCode {
    // No program this one starts gets a file it was itself started with open (a shell's
    // redirection, a jobserver's pipe, a CI wrapper's log), only its standard streams:
    // before any thread, so that none starts a program in between. Each start of a program
    // that runs or compiles the learner's code marks them again (`kit_runner::descriptors`).
    let _ = kit_runner::descriptors::close_on_exec_from(3);
    let matches = match command().try_get_matches() {
        Ok(matches) => matches,
        Err(error) => return unknown_command(error),
    };
    // Not in `__check`, a check's own process: the grader stops its group as a whole.
    if matches.subcommand_name() != Some("__check") {
        signals::handle_ending_signals();
    }
    // Colour for errors and the commands that do not take --color.
    run::setup_color(None);
    let result = dispatch(&matches);
    match result {
        Ok(code) => code,
        Err(failure) => {
            tell!("{} {}", "error:".red().bold(), failure.message);
            if let Some(hint) = failure.hint {
                tell!("{} {hint}", "hint:".cyan().bold());
            }
            ExitCode::from(EXIT_ERROR)
        }
    }
}

fn dispatch(matches: &clap::ArgMatches) -> CommandResult {
    crate::fast::set_verbose(matches.get_flag("verbose"));
    let bad_args = |e: clap::Error| CommandError::new(e.to_string().trim().to_string());
    if let Some((name, sub)) = matches.subcommand() {
        if let Some(lesson) = crate::lessons::lesson(name) {
            let root = matches.get_one::<PathBuf>("root").cloned();
            let args = run::LessonArgs::from_arg_matches(sub).map_err(bad_args)?;
            return run::run_lesson(root, lesson, args);
        }
    }
    let cli = Cli::from_arg_matches(matches).map_err(bad_args)?;
    let root = cli.global.root;
    let Some(chosen) = cli.command else {
        // No command: where the learner stands, and the next command (what `list` says).
        return list::list(root);
    };
    match chosen {
        Command::Check { args } => Ok(grader_checks::harness_main(
            &args,
            grader_checks::lessons::run_reference,
        )),
        Command::All(args) => all::all(root, args),
        Command::Help(args) => match args.lesson {
            Some(_) => guide::help(root, args),
            None => {
                let mut out = output::Out;
                command()
                    .write_long_help(&mut out)
                    .map(|()| ExitCode::SUCCESS)
                    .map_err(|e| CommandError::new(format!("cannot print the help: {e}")))
            }
        },
        Command::Note(args) => guide::note(root, args),
        Command::List => list::list(root),
        Command::Log(args) => guide::log(root, args),
        Command::Reset(args) => reset::reset(root, args),
        Command::Scenario(args) => scenario::scenario(root, args),
        Command::Trace(args) => scenario::trace(root, args),
        Command::Review(args) => review::review(root, args),
        Command::Watch(args) => watch::watch(root, args),
        Command::Grade(args) => grade::grade(root, args),
        Command::Bundle(args) => bundle::bundle(root, args),
        Command::Dev(args) => dev::dev(root, args),
    }
}

fn kit_root(explicit: Option<PathBuf>) -> Result<PathBuf, CommandError> {
    if let Some(root) = explicit {
        return if root.join("exercises").is_dir() {
            Ok(root)
        } else {
            Err(
                CommandError::new(format!("{} has no exercises/ folder", root.display()))
                    .hint("--root names the kit's folder, the one with Cargo.toml and exercises/"),
            )
        };
    }
    let here = std::env::current_dir()
        .map_err(|e| CommandError::new(format!("cannot read the current folder: {e}")))?;
    Ok(crate::workspace::find_root(&here).unwrap_or_else(crate::workspace::build_root))
}

/// A command-line error from clap, said as clap says it; except a first word that is neither
/// a lesson nor a command (`cargo run -p grader -- bulid3`), which is said as every other
/// command says an unknown lesson: the lessons, and the nearest name.
fn unknown_command(error: clap::Error) -> ExitCode {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let invalid = match (error.kind(), error.get(ContextKind::InvalidSubcommand)) {
        (ErrorKind::InvalidSubcommand, Some(ContextValue::String(name))) => name.clone(),
        _ => error.exit(),
    };
    let failure = match resolve_lesson(&invalid) {
        Ok(_) => error.exit(),
        Err(failure) => failure,
    };
    tell!(
        "{} {}",
        "error:".red().bold(),
        failure
            .message
            .replacen("there is no lesson", "there is no lesson or command", 1)
    );
    let hint = failure.hint.map_or_else(
        || "`cargo run -p grader -- --help` lists the commands".to_string(),
        |h| format!("{h} (`cargo run -p grader -- --help` lists the commands)"),
    );
    tell!("{} {hint}", "hint:".cyan().bold());
    ExitCode::from(EXIT_ERROR)
}

/// Refuses `what` in a copy of the kit without the answers (`bundle classroom
/// --without-answers`), where there is no reference to run.
fn needs_answers(what: &str) -> Result<(), CommandError> {
    if grader_checks::ANSWERS {
        return Ok(());
    }
    Err(CommandError::new(format!(
        "{what} runs the kit's answers, and this copy of the kit holds none (it was made for a \
         course that grades them)"
    ))
    .hint(
        "the lesson, `help LESSON` and each check's message say what the rules ask; a failing \
         exhaustive check shows the reference's run of its case",
    ))
}

/// The lesson called `name`, or an error that lists the lessons and the nearest name (or,
/// for a command's name, where that command's help is).
fn resolve_lesson(name: &str) -> Result<&'static Lesson, CommandError> {
    if let Some(lesson) = crate::lessons::lesson(name) {
        return Ok(lesson);
    }
    let is_command = command()
        .get_subcommands()
        .any(|c| c.get_name() == name && !c.is_hide_set());
    if is_command {
        let names: Vec<&str> = LESSONS.iter().map(|g| g.name).collect();
        return Err(CommandError::new(format!(
            "{name:?} is a command, not a lesson; the lessons are: {}",
            names.join(", ")
        ))
        .hint(format!(
            "the help of a command is `cargo run -p grader -- {name} --help`"
        )));
    }
    let names: Vec<&str> = LESSONS.iter().map(|g| g.name).collect();
    let nearest = names
        .iter()
        .map(|n| (strsim::damerau_levenshtein(n, name), *n))
        .min()
        .filter(|(distance, _)| *distance <= 3)
        .map(|(_, n)| n);
    let mut failure = CommandError::new(format!(
        "there is no lesson {name:?}; the lessons are: {}",
        names.join(", ")
    ));
    if let Some(n) = nearest {
        failure = failure.hint(format!("did you mean {n}?"));
    }
    Err(failure)
}

fn load_exercise(root: &std::path::Path, lesson: &Lesson) -> Result<LessonInfo, CommandError> {
    LessonInfo::load(root, lesson.name).map_err(|e| {
        CommandError::new(e.to_string()).hint(format!(
            "restore the lesson's folder from git: `git checkout -- exercises/{}`",
            lesson.name
        ))
    })
}

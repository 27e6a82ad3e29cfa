//! `cargo run -p grader -- <command>`: the learner's and the instructor's entry point.

use clap::{Args, Parser, Subcommand, ValueEnum};
use grader::checks::{self, Group};
use grader::compile::{self, BuildError};
use grader::suite::{self, RunSettings};
use grader::{Exercise, Implementation, Launcher};
use libtest_mimic::ColorSetting;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Exit status when a group ran and not every check passed.
const EXIT_NOT_ALL_PASSED: u8 = 1;
/// Exit status for bad input and anything that kept the checks from running.
const EXIT_ERROR: u8 = 2;

#[derive(Parser)]
#[command(
    name = "grader",
    about = "Checks your exercises against the lesson's rules.",
    long_about = "Checks your exercises against the lesson's rules.\n\n\
        Write the function in practice/src/lib.rs, then run its group, e.g.\n\
        `cargo run -p grader -- build3`. Each check ends as ok, FAILED or unfinished\n\
        (your function still reaches todo!()).",
    after_help = "Exit status: 0 when every selected check passed, 1 when any failed or is \
        unfinished, 2 when the checks could not run (bad arguments, a file that does not compile)."
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
    Build3(GroupArgs),
    /// Internal: run one check against the reference (the grader starts this itself).
    #[command(name = "__check", hide = true)]
    Check {
        #[arg(num_args = 3)]
        args: Vec<String>,
    },
}

#[derive(Args)]
struct GroupArgs {
    /// Whose code the checks run against.
    #[arg(long, value_enum, default_value_t = Against::Practice)]
    against: Against,
    /// Seconds one check may run before it is stopped as "did not finish".
    #[arg(long, value_name = "SECS", default_value_t = 3.0, value_parser = parse_timeout)]
    timeout: f64,
    #[command(flatten)]
    libtest: LibtestArgs,
}

/// libtest's own arguments, described in the kit's words and handed on as
/// [`libtest_mimic::Arguments`].
#[derive(Args)]
struct LibtestArgs {
    /// Run only the checks whose names contain FILTER (e.g. `server_wait` or `fixtures::`).
    #[arg(value_name = "FILTER")]
    filter: Option<String>,
    /// Match FILTER and --skip against whole check names.
    #[arg(long)]
    exact: bool,
    /// Leave out checks whose names contain this (repeatable).
    #[arg(long, value_name = "FILTER")]
    skip: Vec<String>,
    /// List the checks without running anything.
    #[arg(long)]
    list: bool,
    /// pretty: a line per check; terse: a character per check; json: one JSON event per line.
    #[arg(
        long,
        value_enum,
        value_name = "pretty|terse|json",
        hide_possible_values = true
    )]
    format: Option<libtest_mimic::FormatSetting>,
    /// Same as --format terse.
    #[arg(short, long, conflicts_with = "format")]
    quiet: bool,
    /// How many checks run at once (default: twice the cores).
    #[arg(long, value_name = "N")]
    test_threads: Option<usize>,
    /// Colour: auto (on a terminal, unless NO_COLOR is set), always or never.
    #[arg(
        long,
        value_enum,
        value_name = "auto|always|never",
        hide_possible_values = true
    )]
    color: Option<ColorSetting>,
    /// Write the results to this file instead of the terminal.
    #[arg(long, value_name = "PATH")]
    logfile: Option<String>,
    /// Accepted so that libtest habits do not fail; the grader has nothing to ignore.
    #[arg(long, hide = true)]
    include_ignored: bool,
    /// Accepted for libtest compatibility; the grader shows a failing check's output anyway.
    #[arg(long, hide = true)]
    nocapture: bool,
}

impl LibtestArgs {
    fn into_arguments(self) -> libtest_mimic::Arguments {
        libtest_mimic::Arguments {
            filter: self.filter,
            exact: self.exact,
            skip: self.skip,
            list: self.list,
            format: self.format,
            quiet: self.quiet,
            test_threads: self.test_threads,
            color: self.color,
            logfile: self.logfile,
            include_ignored: self.include_ignored,
            nocapture: self.nocapture,
            ..libtest_mimic::Arguments::default()
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Against {
    /// Your code in practice/ (built with cargo first).
    Practice,
    /// The kit's finished implementation in reference/ (guidance, not your own work).
    Reference,
}

fn parse_timeout(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(secs) if secs.is_finite() && secs > 0.0 && secs <= 3600.0 => Ok(secs),
        _ => Err("expected a number of seconds above 0 and at most 3600".into()),
    }
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Check { args } => {
            return grader::harness::serve(Implementation::reference(), &args)
        }
        Command::Build3(args) => run_group(cli.root, &checks::build3::GROUP, args),
    };
    match result {
        Ok(code) => code,
        Err(failure) => {
            use colored::Colorize;
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

fn setup_color(setting: Option<ColorSetting>) {
    // An explicit --color wins; otherwise NO_COLOR (https://no-color.org) and the terminal decide.
    let on = match setting.unwrap_or(ColorSetting::Auto) {
        ColorSetting::Always => true,
        ColorSetting::Never => false,
        ColorSetting::Auto => {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::io::stdout().is_terminal()
        }
    };
    colored::control::set_override(on);
}

fn run_group(root: Option<PathBuf>, group: &Group, args: GroupArgs) -> Result<ExitCode, Failure> {
    let libtest = args.libtest.into_arguments();
    setup_color(libtest.color);
    let root = kit_root(root)?;
    let exercise = Exercise::load(&root, group.name).map_err(|e| {
        Failure::new(e.to_string()).hint(format!(
            "restore exercises/{}/ from git: `git checkout -- exercises/{}`",
            group.name, group.name
        ))
    })?;
    let launcher = if libtest.list {
        // Listing runs nothing: no build needed.
        Launcher::new("unused")
    } else {
        match args.against {
            Against::Reference => {
                let me = std::env::current_exe().map_err(|e| {
                    Failure::new(format!("cannot find the grader's own program: {e}"))
                })?;
                Launcher::new(me).arg("__check")
            }
            Against::Practice => Launcher::new(build_practice(&root, &exercise)?),
        }
    };
    let against = match args.against {
        Against::Practice => "practice",
        Against::Reference => "reference",
    };
    let settings = RunSettings {
        against: against.to_string(),
        timeout: Duration::from_secs_f64(args.timeout),
        unfinished_hint: format!(
            "Write its body in {} (lesson: exercises/{}/{}), then run `cargo run -p grader -- {}` again.",
            exercise.file.display(),
            exercise.group,
            exercise.lesson.display(),
            exercise.group
        ),
    };
    let mut out: Box<dyn Write> = match &libtest.logfile {
        Some(path) => Box::new(
            std::fs::File::create(path)
                .map_err(|e| Failure::new(format!("cannot write the log file {path}: {e}")))?,
        ),
        None => Box::new(std::io::stdout().lock()),
    };
    let summary = suite::run(group, &launcher, &libtest, &settings, &mut out)
        .map_err(|e| Failure::new(format!("could not run the checks: {e}")))?;
    out.flush()
        .map_err(|e| Failure::new(format!("could not write the results: {e}")))?;
    Ok(if summary.listed_only || summary.all_passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_NOT_ALL_PASSED)
    })
}

fn build_practice(root: &std::path::Path, exercise: &Exercise) -> Result<PathBuf, Failure> {
    compile::build_practice_harness(root).map_err(|e| match e {
        BuildError::Compile => Failure::new(format!(
            "{} does not compile: the compiler's messages are above.",
            exercise.file.display()
        ))
        .hint(format!(
            "fix the first error and run the checks again, or start over from the stub with \
             `cargo run -p grader -- reset {}` (your file is backed up first).",
            exercise.group
        )),
        other => Failure::new(other.to_string())
            .hint("is cargo on your PATH? `cargo --version` should answer"),
    })
}

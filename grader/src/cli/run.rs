//! `grader <group>`: build what is needed, run the checks, and report guidance.

use super::{kit_root, load_exercise, Failure, Outcome, EXIT_NOT_ALL_PASSED};
use clap::{Args, ValueEnum};
use colored::Colorize;
use grader::checks::Group;
use grader::compile::{self, BuildError};
use grader::guidance::{GuidanceLog, Kind};
use grader::suite::{self, RunSettings};
use grader::{Exercise, Launcher};
use libtest_mimic::{ColorSetting, FormatSetting};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args)]
pub struct GroupArgs {
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
    format: Option<FormatSetting>,
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
pub enum Against {
    /// Your code in practice/ (built with cargo first).
    Practice,
    /// The kit's finished implementation in reference/ (recorded as guidance).
    Reference,
}

pub fn parse_timeout(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(secs) if secs.is_finite() && secs > 0.0 && secs <= 3600.0 => Ok(secs),
        _ => Err("expected a number of seconds above 0 and at most 3600".into()),
    }
}

/// Colour on or off: an explicit `--color` wins; otherwise NO_COLOR (https://no-color.org)
/// and whether standard output is a terminal decide.
pub fn setup_color(setting: Option<ColorSetting>) {
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

pub fn run_group(root: Option<PathBuf>, group: &Group, args: GroupArgs) -> Outcome {
    let libtest = args.libtest.into_arguments();
    setup_color(libtest.color);
    let root = kit_root(root)?;
    let exercise = load_exercise(&root, group)?;
    let log = GuidanceLog::in_kit(&root);
    let launcher = if libtest.list {
        // Listing runs nothing: no build, and no guidance shown.
        Launcher::new("unused")
    } else {
        match args.against {
            Against::Reference => {
                let filter = libtest
                    .filter
                    .as_deref()
                    .map(|f| format!(" {f}"))
                    .unwrap_or_default();
                log.append(
                    group.name,
                    Kind::ReferenceRun,
                    &format!("{} --against reference{filter}", group.name),
                )
                .map_err(|e| {
                    Failure::new(format!("{e}; the reference was not run"))
                        .hint("guidance is recorded before it is shown: make the log writable")
                })?;
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
    if !summary.listed_only && libtest.format != Some(FormatSetting::Json) {
        guidance_line(&log, group, summary.all_passed(), &mut out)
            .map_err(|e| Failure::new(format!("could not write the results: {e}")))?;
    }
    out.flush()
        .map_err(|e| Failure::new(format!("could not write the results: {e}")))?;
    Ok(if summary.listed_only || summary.all_passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_NOT_ALL_PASSED)
    })
}

/// Says how much guidance the log holds for `group`, so a pass is read for what it is.
fn guidance_line(
    log: &GuidanceLog,
    group: &Group,
    passed: bool,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let recorded = match log.read() {
        Ok(contents) => contents.summary(group.name),
        Err(e) => {
            return writeln!(out, "{} {e}", "guidance: unknown:".yellow());
        }
    };
    match (recorded, passed) {
        (Some(what), true) => writeln!(
            out,
            "{} {what} — guided practice, not independent evidence.",
            "passed with guidance:".yellow()
        ),
        (Some(what), false) => writeln!(out, "guidance recorded for {}: {what}.", group.name),
        (None, true) => writeln!(out, "passed with no guidance recorded for {}.", group.name),
        (None, false) => Ok(()),
    }
}

/// ", `reset stage8` restores practice/src/gateway.rs" for every other group.
fn other_files(root: &Path, group: &str) -> String {
    grader::checks::GROUPS
        .iter()
        .filter(|g| g.name != group)
        .filter_map(|g| Exercise::load(root, g.name).ok())
        .map(|e| format!(", `reset {}` restores {}", e.group, e.file.display()))
        .collect()
}

pub fn build_practice(root: &Path, exercise: &Exercise) -> Result<PathBuf, Failure> {
    compile::build_practice_harness(root).map_err(|e| match e {
        BuildError::Compile => Failure::new(
            "the practice crate does not compile: the compiler's messages above name the file and line.",
        )
        .hint(format!(
            "fix the first error and run again, or start a file over from its stub (it is backed \
             up first): `cargo run -p grader -- reset {}` restores {}{}.",
            exercise.group,
            exercise.file.display(),
            other_files(root, &exercise.group),
        )),
        other => Failure::new(other.to_string())
            .hint("is cargo on your PATH? `cargo --version` should answer"),
    })
}

//! `grader <lesson>`: build what is needed, run the checks, and report guidance.

use super::output::Out;
use super::standing::{remember, Standing};
use super::{
    kit_root, load_exercise, CommandError, CommandResult, EXIT_ERROR, EXIT_NOT_ALL_PASSED,
};
use crate::borrowed;
use crate::compile::{self, BuildError, Built};
use crate::guidance::{GuidanceLog, Kind};
use crate::reports::{self, NotRun, ReportSpec, RunReport};
use crate::suite::{self, RunSettings, Summary};
use crate::{Launcher, Lesson, LessonInfo};
use clap::{Args, ValueEnum};
use colored::Colorize;
use grader_checks::limits::Limits;
use libtest_mimic::{ColorSetting, FormatSetting};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args)]
pub(crate) struct LessonArgs {
    /// Whose code the checks run against.
    #[arg(long, value_enum, default_value_t = Against::Practice)]
    against: Against,
    /// Seconds one check may run before it is stopped as "did not finish".
    #[arg(long, value_name = "SECS", default_value_t = 3.0, value_parser = parse_timeout)]
    timeout: f64,
    /// Stop starting checks after the first failure (the rest are counted as not run).
    #[arg(long)]
    fail_fast: bool,
    /// Print every failure in full (by default: the first in full, the others one line each).
    #[arg(long)]
    all_failures: bool,
    /// Where to save the case an exhaustive check found to differ (a scenario file you can
    /// replay); by default target/kit-cases/LESSON-difference.toml.
    #[arg(long, value_name = "PATH")]
    save_case: Option<PathBuf>,
    /// The most memory one check may use, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = 1024, value_parser = clap::value_parser!(u64).range(64..=65536))]
    memory_limit: u64,
    /// Also write the results as FORMAT (json, exercism, gradescope or junit) to PATH, e.g.
    /// `--report junit:results.xml` (repeatable). See docs/report-formats.md.
    #[arg(long = "report", value_name = "FORMAT:PATH")]
    reports: Vec<ReportSpec>,
    #[command(flatten)]
    libtest: LibtestArgs,
}

impl LessonArgs {
    /// The limits each check of this run gets.
    pub(crate) fn limits(&self) -> Limits {
        Limits {
            memory: self.memory_limit * 1024 * 1024,
            ..Limits::default()
        }
    }
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
    /// How many checks run at once (default: one more than the cores).
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

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Against {
    /// Your code in practice/ (built with cargo first).
    Practice,
    /// The kit's finished implementation in reference/ (recorded as guidance).
    Reference,
}

impl Against {
    /// How results name it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Against::Practice => "practice",
            Against::Reference => "reference",
        }
    }
}

pub(crate) fn parse_timeout(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(secs) if secs.is_finite() && secs > 0.0 && secs <= 3600.0 => Ok(secs),
        _ => Err("expected a number of seconds above 0 and at most 3600".into()),
    }
}

/// Colour on or off: an explicit `--color` wins; otherwise NO_COLOR (https://no-color.org)
/// and whether standard output is a terminal decide.
pub(crate) fn setup_color(setting: Option<ColorSetting>) {
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

/// Refuses `--report` where a report would not be a grade of the learner's whole work.
fn check_reports(args: &LessonArgs) -> Result<(), CommandError> {
    if args.reports.is_empty() {
        return Ok(());
    }
    let partial = [
        (args.against == Against::Reference, "--against reference"),
        (args.libtest.filter.is_some(), "a FILTER"),
        (!args.libtest.skip.is_empty(), "--skip"),
        (args.fail_fast, "--fail-fast"),
        (args.libtest.list, "--list"),
    ];
    match partial.iter().find(|(on, _)| *on) {
        Some((_, what)) => Err(CommandError::new(format!(
            "--report writes a grade of your own code on every check; it cannot go with {what}"
        ))
        .hint(format!("run once without {what} to write the report"))),
        None => Ok(()),
    }
}

/// Writes the reports `--report` asked for; `summary` is `None` when nothing ran, and `why`
/// says why (the compiler's errors, or the refusal).
fn write_reports(
    root: &Path,
    lesson: &Lesson,
    exercise: &LessonInfo,
    specs: &[ReportSpec],
    summary: Option<&Summary>,
    why: Option<NotRun>,
    started: std::time::SystemTime,
) -> Result<(), CommandError> {
    if specs.is_empty() {
        return Ok(());
    }
    let report = RunReport::new(root, lesson, exercise, "practice", summary, why, started)
        .map_err(|e| CommandError::new(format!("cannot write the reports: {e}")))?;
    reports::write_all(specs, &report).map_err(|e| {
        CommandError::new(format!("cannot write the reports: {e}"))
            .hint("check that each report's folder can be written")
    })
}

pub(crate) fn run_lesson(
    root: Option<PathBuf>,
    lesson: &Lesson,
    args: LessonArgs,
) -> CommandResult {
    check_reports(&args)?;
    if args.against == Against::Reference {
        super::needs_answers("--against reference")?;
    }
    let started = std::time::SystemTime::now();
    let limits = args.limits();
    let (fail_fast, all_in_full) = (args.fail_fast, args.all_failures);
    let specs = args.reports.clone();
    let libtest = args.libtest.into_arguments();
    setup_color(libtest.color);
    let root = kit_root(root)?;
    let exercise = load_exercise(&root, lesson)?;
    let log = GuidanceLog::in_kit(&root);
    let (selected, _) = suite::select(lesson, &(&libtest).into());
    if !libtest.list && limits.sandbox == grader_checks::sandbox::Mode::Off {
        eprintln!(
            "note: the sandbox is off (GRADER_SANDBOX=off): your code can reach the checks' \
             files and processes, so this run's verdict is not evidence of anything. Process \
             groups, limits and leak checks still stand."
        );
    }
    if !libtest.list && limits.sandbox != grader_checks::sandbox::Mode::Off {
        let off = grader_checks::sandbox::probe();
        if !off.is_empty() {
            eprintln!(
                "note: your code runs with part of its sandbox off on this system: {}. \
                 Process groups, limits and leak checks still stand in.",
                off.join("; ")
            );
        }
    }
    if let Some(input) = lesson.check_input {
        if !libtest.list && selected.iter().any(|c| c.name == input.check) {
            crate::check_input::want(lesson.name);
        }
    }
    // Kept alive until the checks are done: the harness is a private link inside it.
    let mut built: Option<Built> = None;
    // The fork servers started during the build that no check took stop with the run.
    let _prestarted = crate::child::PrestartedRun;
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
                    lesson.name,
                    Kind::ReferenceRun,
                    &format!("{} --against reference{filter}", lesson.name),
                )
                .map_err(|e| {
                    CommandError::new(format!("{e}; the reference was not run"))
                        .hint("guidance is recorded before it is shown: make the log writable")
                })?;
                let me = std::env::current_exe().map_err(|e| {
                    CommandError::new(format!("cannot find the grader's own program: {e}"))
                })?;
                Launcher::new(me).arg("__check")
            }
            Against::Practice => {
                let prestart = compile::Prestart {
                    servers: libtest
                        .test_threads
                        .unwrap_or_else(suite::default_threads)
                        .min(selected.len()),
                    limits,
                };
                let harness = match build_practice(&root, &exercise, Some(prestart)) {
                    Ok(harness) => harness,
                    Err(NotBuilt {
                        failure,
                        standing,
                        why,
                    }) => {
                        if libtest.filter.is_none() && libtest.skip.is_empty() {
                            remember(&root, lesson, &exercise, &standing, None);
                        }
                        if why.is_some() {
                            write_reports(&root, lesson, &exercise, &specs, None, why, started)?;
                        }
                        return Err(failure);
                    }
                };
                let launcher = harness.launcher();
                built = Some(harness);
                launcher
            }
        }
    }
    .limits(limits);
    let against = match args.against {
        Against::Practice => "practice",
        Against::Reference => "reference",
    };
    let settings = RunSettings {
        unfinished_hint: format!(
            "Write its body in {} (lesson: exercises/{}/{}), then run `cargo run -p grader -- {}` again.",
            exercise.file.display(),
            exercise.name,
            exercise.lesson.display(),
            exercise.name
        ),
        fail_fast,
        all_in_full,
        ..RunSettings::new(against, Duration::from_secs_f64(args.timeout))
    };
    let mut out: Box<dyn Write> = match &libtest.logfile {
        Some(path) => Box::new(
            std::fs::File::create(path)
                .map_err(|e| CommandError::new(format!("cannot write the log file {path}: {e}")))?,
        ),
        None => Box::new(Out),
    };
    // One stream, three reporters: the terminal's printer, the standing `list` shows next
    // time (a whole run of the learner's own code only), and the report files.
    let own = args.against == Against::Practice;
    let mut keep = crate::events::OnFinished(|lesson: &Lesson, summary: &Summary| {
        if own && !summary.listed_only && summary.filtered_out == 0 && summary.not_run == 0 {
            remember(
                &root,
                lesson,
                &exercise,
                &Standing::of(summary),
                Some(summary),
            );
        }
    });
    let mut reports_written: Result<(), CommandError> = Ok(());
    let mut report_files = crate::events::OnFinished(|lesson: &Lesson, summary: &Summary| {
        reports_written = write_reports(
            &root,
            lesson,
            &exercise,
            &specs,
            Some(summary),
            None,
            started,
        );
    });
    let summary = {
        let mut printer = crate::printers::for_args(&libtest, &mut out);
        let mut reporters = crate::events::Tee(vec![&mut *printer, &mut keep, &mut report_files]);
        suite::run(
            lesson,
            &launcher,
            &(&libtest).into(),
            &settings,
            &mut reporters,
        )
        .map_err(|e| CommandError::new(format!("could not run the checks: {e}")))?
    };
    drop(built);
    reports_written?;
    let json = libtest.format == Some(FormatSetting::Json);
    save_case(
        &root,
        lesson,
        &summary,
        args.save_case.as_deref(),
        json,
        &mut out,
    )
    .map_err(|e| CommandError::new(format!("could not write the results: {e}")))?;
    if !summary.listed_only && libtest.format != Some(FormatSetting::Json) {
        let full = args.against == Against::Practice && summary.filtered_out == 0;
        guidance_line(&log, lesson, summary.all_passed(), full, &mut out)
            .map_err(|e| CommandError::new(format!("could not write the results: {e}")))?;
        // A lesson whose every check is unfinished, while an earlier one in course order is
        // not started: a newcomer may have come in at the wrong end.
        if args.against == Against::Practice && Standing::of(&summary) == Standing::Unfinished {
            course_start(&root, lesson, &mut out)
                .map_err(|e| CommandError::new(format!("could not write the results: {e}")))?;
        }
        // The next steps follow a whole pass of the learner's own code.
        if args.against == Against::Practice && summary.all_passed() && summary.filtered_out == 0 {
            next_steps(&root, lesson, &exercise, &mut out)
                .map_err(|e| CommandError::new(format!("could not write the results: {e}")))?;
        }
    }
    out.flush()
        .map_err(|e| CommandError::new(format!("could not write the results: {e}")))?;
    Ok(exit_code(&summary))
}

/// Says where the course starts when `lesson` comes later in it and an earlier lesson is not
/// started yet (the learner's file there is still the stub).
fn course_start(root: &Path, lesson: &Lesson, out: &mut dyn Write) -> std::io::Result<()> {
    let Some(place) = crate::lessons::LESSONS
        .iter()
        .position(|g| g.name == lesson.name)
    else {
        return Ok(());
    };
    // Every earlier lesson not started, so that none is skipped when the message names them.
    let earlier: Vec<&str> = crate::lessons::LESSONS[..place]
        .iter()
        .filter(|g| {
            load_exercise(root, g).is_ok_and(|exercise| {
                matches!(
                    super::standing::remembered(root, g, &exercise),
                    Ok(Standing::NotStarted)
                )
            })
        })
        .map(|g| g.name)
        .collect();
    let Some(first) = earlier.first() else {
        return Ok(());
    };
    let (names, verb) = match earlier.as_slice() {
        [one] => (one.to_string(), "is"),
        [rest @ .., last] => (format!("{} and {last}", rest.join(", ")), "are"),
        [] => return Ok(()),
    };
    writeln!(
        out,
        "{} comes after {names} in the course, which {verb} not started yet: the course starts \
         at `cargo run -p grader -- {first}` (lesson: exercises/{first}/lesson.md). `cargo run \
         -p grader` shows every lesson in order.",
        lesson.name
    )
}

/// 0 when every selected check passed (or only a listing ran), 2 when the kit itself
/// failed, 1 otherwise.
fn exit_code(summary: &Summary) -> ExitCode {
    if summary.listed_only || summary.all_passed() {
        ExitCode::SUCCESS
    } else if summary.kit_bugs() > 0 {
        ExitCode::from(EXIT_ERROR)
    } else {
        ExitCode::from(EXIT_NOT_ALL_PASSED)
    }
}

/// Says how much guidance the log holds for `lesson`, so a pass is read for what it is. A
/// pass of every check of the learner's own code (`full`) marks the lesson's first pass in
/// the log, once: guidance after that row is said apart, and a pass counts only what came
/// before it.
pub(crate) fn guidance_line(
    log: &GuidanceLog,
    lesson: &Lesson,
    passed: bool,
    full: bool,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    if passed && full {
        if let Err(e) = log.mark_first_pass(lesson.name) {
            writeln!(out, "{} {e}", "guidance: first pass not recorded:".yellow())?;
        }
    }
    let (recorded, after) = match log.read() {
        Ok(contents) => (
            contents.summary(lesson.name),
            contents.after_first_pass(lesson.name),
        ),
        Err(e) => {
            return writeln!(out, "{} {e}", "guidance: unknown:".yellow());
        }
    };
    let after = after
        .map(|a| {
            format!(
                " Since the first pass: {a} (it does not change what the pass was reached with)."
            )
        })
        .unwrap_or_default();
    match (recorded, passed) {
        (Some(what), true) => writeln!(
            out,
            "{} {what} before the first pass — guided practice, not independent evidence.{after}",
            "passed with guidance:".yellow()
        ),
        (Some(what), false) => {
            writeln!(out, "guidance recorded for {}: {what}.{after}", lesson.name)
        }
        (None, true) => writeln!(
            out,
            "passed with no guidance recorded for {} before the first pass.{after}",
            lesson.name
        ),
        (None, false) if !after.is_empty() => {
            writeln!(out, "guidance recorded for {}:{after}", lesson.name)
        }
        (None, false) => Ok(()),
    }
}

/// Saves the differing case of an exhaustive check as a scenario file, and says where: a
/// sentence, or with `json` one more JSON event (`"type": "case"`), so that the standard
/// output of `--format json` stays JSON lines only.
pub(super) fn save_case(
    root: &Path,
    lesson: &Lesson,
    summary: &Summary,
    asked: Option<&Path>,
    json: bool,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let Some((name, case)) = summary.runs.iter().find_map(|r| {
        grader_checks::feedback::case_file(r.outcome.message()?).map(|c| (r.name, c))
    }) else {
        return Ok(());
    };
    let path = asked.map(Path::to_path_buf).unwrap_or_else(|| {
        crate::workspace::target_dir(root)
            .join("kit-cases")
            .join(format!("{}-difference.toml", lesson.name))
    });
    let written = path
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(&path, case));
    if json {
        let event = match &written {
            Ok(()) => serde_json::json!({"type": "case", "event": "saved", "name": name,
                "path": path.display().to_string()}),
            Err(e) => serde_json::json!({"type": "case", "event": "not_saved", "name": name,
                "path": path.display().to_string(), "error": e.to_string()}),
        };
        return writeln!(out, "{event}");
    }
    match written {
        Ok(()) if !grader_checks::ANSWERS => writeln!(
            out,
            "The case {name} found is saved in {}: replay your code on it with \
             `cargo run -p grader -- scenario {}` (the reference's run is in the check's \
             message: this copy of the kit holds no answers to run it again).",
            path.display(),
            path.display()
        ),
        Ok(()) => writeln!(
            out,
            "The case {name} found is saved in {}: replay it with \
             `cargo run -p grader -- scenario {} --compare` (your run beside the reference's; \
             for this file as saved that is not recorded as guidance, because the check's \
             message already compared the two runs), or without `--compare` (your code alone).",
            path.display(),
            path.display()
        ),
        Err(e) => writeln!(
            out,
            "The case {name} found could not be saved in {} ({e}); it is at the end of its \
             message above.",
            path.display()
        ),
    }
}

/// What follows a pass: the lesson's own scenario task, the self-review (handed out now),
/// and the next lesson in course order.
pub(crate) fn next_steps(
    root: &Path,
    lesson: &Lesson,
    exercise: &LessonInfo,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    writeln!(
        out,
        "\n{} Next:",
        format!("Every check of {} passes.", lesson.name).green()
    )?;
    writeln!(
        out,
        "  1. Show it works on new inputs: the task of that name in exercises/{}/{}, with \
         `cargo run -p grader -- scenario FILE`; `cargo run -p grader -- review {}` is the \
         checklist of this step and the next.",
        lesson.name,
        exercise.lesson.display(),
        lesson.name
    )?;
    let review = match exercise.hand_out_review(root) {
        Ok(Some(file)) => format!(
            "answer the questions in {} (your file; reset leaves it alone).",
            file.strip_prefix(root).unwrap_or(&file).display()
        ),
        Ok(None) => "look back at the lesson's rules and say each one in your own words.".into(),
        Err(e) => format!(
            "the questions are in exercises/{}/ (they could not be copied: {e}).",
            lesson.name
        ),
    };
    writeln!(out, "  2. Self-review: {review}")?;
    let lessons = crate::lessons::LESSONS;
    let next = lessons
        .iter()
        .position(|g| g.name == lesson.name)
        .and_then(|i| lessons.get(i + 1));
    match next {
        Some(next) => writeln!(
            out,
            "  3. The next lesson: {} — {} (exercises/{}/lesson.md): `cargo run -p grader -- {}`.",
            next.name, next.title, next.name, next.name
        ),
        None => writeln!(
            out,
            "  3. This was the kit's last lesson: `cargo run -p grader -- all` reruns every lesson \
             you started."
        ),
    }
}

/// Why the learner's harness is not there to run.
pub(crate) struct NotBuilt {
    /// The command's error.
    pub(crate) failure: CommandError,
    /// Where that leaves the learner (for `list`).
    pub(crate) standing: Standing,
    /// For a report: why no check ran, when it is the learner's code (the compiler's
    /// errors, or the refusal); `None` when the kit or cargo failed.
    pub(crate) why: Option<NotRun>,
}

/// Builds the harness for `exercise`'s lesson, then refuses a practice crate that reaches
/// the kit's answers. Compiler messages go to standard error.
/// With `prestart`, the checks' fork servers start while the compiler runs
/// ([`compile::Prestart`]); hold a [`crate::child::PrestartedRun`] over the build and the
/// checks.
pub(crate) fn build_practice(
    root: &Path,
    exercise: &LessonInfo,
    prestart: Option<compile::Prestart>,
) -> Result<Built, NotBuilt> {
    let color = colored::control::SHOULD_COLORIZE.should_colorize();
    // They quote the learner's source, and rustc shows C1 controls raw.
    let mut messages = crate::sanitise::EscapingWriter::new(super::output::ErrOut);
    let built = match prestart {
        Some(prestart) => {
            compile::build_harness_prestarting(root, &exercise.name, color, &mut messages, prestart)
        }
        None => compile::build_harness(root, &exercise.name, color, &mut messages),
    };
    let built = built.map_err(|e| match e {
        BuildError::Compile { errors } => NotBuilt {
            failure: compile_failure(root, exercise, &errors),
            standing: Standing::DoesNotCompile,
            // For the reports: the compiler quotes the learner's source.
            why: Some(NotRun::DoesNotCompile(crate::sanitise::escape_string(
                compile::errors_text(&errors),
            ))),
        },
        other => NotBuilt {
            failure: CommandError::new(other.to_string())
                .hint("is cargo on your PATH? `cargo --version` should answer"),
            standing: Standing::NotRun,
            why: None,
        },
    })?;
    let found =
        borrowed::inspect(root, built.practice_dep_info.as_deref()).map_err(|e| NotBuilt {
            failure: CommandError::new(format!(
                "cannot check what was compiled into the practice crate: {e}"
            ))
            .hint("nothing was run; build it again with `cargo build -p practice`"),
            standing: Standing::NotRun,
            why: None,
        })?;
    if let Some(first) = found.first() {
        let more: String = found[1..]
            .iter()
            .map(|b| format!("\n  also: {}; {}", b.what(), b.undo()))
            .collect();
        return Err(NotBuilt {
            failure: CommandError::new(format!(
                "nothing was run: {}. The checks grade your own code, and the kit's answers are \
                 out of the practice crate's reach on purpose.{more}",
                first.what()
            ))
            .hint(first.undo()),
            standing: Standing::Refused,
            why: Some(NotRun::Refused(format!(
                "refused: {}; nothing was run",
                first.what()
            ))),
        });
    }
    Ok(built)
}

/// `text` with each line indented by four spaces.
fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The failure for a file that does not compile, with the likeliest way out.
fn compile_failure(root: &Path, exercise: &LessonInfo, errors: &[String]) -> CommandError {
    let reaches_reference = errors.iter().any(|e| {
        e.contains("`reference`")
            && (e.contains("unresolved") || e.contains("undeclared") || e.contains("unlinked"))
    });
    let message = format!(
        "{} does not compile: the compiler's messages above name the line.",
        exercise.file.display()
    );
    if let Some(glue) = errors
        .iter()
        .find(|e| compile::is_glue_error(&compile::strip_ansi(e)))
    {
        let plain = compile::strip_ansi(glue);
        let first = plain.lines().next().unwrap_or_default().trim();
        let first = first.split_once("]: ").map_or(first, |(_, rest)| rest);
        let first = first.strip_prefix("error: ").unwrap_or(first);
        // The label under the call says what differs (`expected X, found Y`).
        let label = plain
            .lines()
            .filter_map(|l| Some(l.split_once('^')?.1.trim_start_matches(['^', ' '])))
            .find(|l| l.contains("expected"));
        let gist = match label {
            Some(label) => format!("{first}: {label}"),
            None => first.to_string(),
        };
        let signature = exercise
            .stub_signature(root)
            .map(|s| format!(":\n\n{}\n", indent(&s)))
            .unwrap_or_else(|| format!(" (exercises/{}/stub.rs)", exercise.name));
        return CommandError::new(format!(
            "{} compiles, but the checks cannot call `{}`: keep the stub's signature{signature}\n\
             (the compiler, on the kit's call of it: {gist})",
            exercise.file.display(),
            exercise.function
        ))
        .hint(format!(
            "change `{}` back to the stub's parameters and return type in {}; the body is \
             yours to write",
            exercise.function,
            exercise.file.display()
        ));
    }
    if reaches_reference {
        return CommandError::new(message).hint(
            "the practice crate cannot use `reference`: it holds the answers. The shared types \
             are in `kit_types` (e.g. `use kit_types::RetryPolicy;`); write the function yourself",
        );
    }
    CommandError::new(message).hint(format!(
        "fix the first error and run again, or start the file over from its stub (it is backed \
         up first): `cargo run -p grader -- reset {}`. Only {} is compiled for {}: your other \
         lessons' files do not matter here.",
        exercise.name,
        exercise.file.display(),
        exercise.name
    ))
}

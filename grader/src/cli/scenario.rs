//! `scenario` and `trace`: run one scripted case and show every step.

use super::output::say;
use super::EXIT_NOT_ALL_PASSED;
use super::{kit_root, load_exercise, run::build_practice, CommandError, CommandResult};
use crate::compile::Built;
use crate::guidance::{GuidanceLog, Kind};
use crate::{JobEnd, Lesson};
use clap::Args;
use grader_checks::lessons::{scenario_lesson, LESSONS};
use grader_checks::scenario::{exercise_key, ScenarioError};
use grader_checks::view::{side_by_side, ScenarioRun};
use grader_checks::Report;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args)]
pub(crate) struct ScenarioArgs {
    /// The scenario file (TOML): optional settings, then [[outcome]] entries in call order
    /// (the README shows the formats; examples in exercises/*/scenarios/).
    file: PathBuf,
    /// Whose code runs it.
    #[arg(long, value_enum, default_value_t = super::run::Against::Practice, conflicts_with = "compare")]
    against: super::run::Against,
    /// Run it on your code and on the reference, and show where they differ
    /// (shows the reference's behaviour, so it is recorded as guidance).
    #[arg(long)]
    compare: bool,
    /// Seconds your code may run before it is stopped as "did not finish".
    #[arg(long, value_name = "SECS", default_value_t = 3.0, value_parser = super::run::parse_timeout)]
    timeout: f64,
}

#[derive(Args)]
pub(crate) struct TraceArgs {
    /// The lesson whose worked example to trace, e.g. build3.
    #[arg(value_name = "LESSON")]
    lesson: String,
}

/// A scenario file, read and checked: its lesson, its text, its settings line, and the
/// lesson's situations it covers.
pub(super) struct Loaded {
    /// The lesson whose format it is (its `exercise` key).
    pub(crate) lesson: &'static Lesson,
    text: String,
    settings: String,
    /// The ids of the lesson's situations it covers.
    pub(crate) situations: Vec<&'static str>,
    /// It names its lesson with an `exercise` key (without one it is build3's).
    pub(crate) names_exercise: bool,
}

/// Reads and parses a scenario file; the error names its line and what to fix.
pub(super) fn load(path: &Path) -> Result<Loaded, ScenarioError> {
    let text = std::fs::read_to_string(path).map_err(|e| ScenarioError::unreadable(path, &e))?;
    let lesson = scenario_lesson(path, &text)?;
    let summary = (lesson.parse_scenario)(path, &text)?;
    let names_exercise = exercise_key(path, &text)?.is_some();
    Ok(Loaded {
        names_exercise,
        lesson,
        text,
        settings: summary.settings,
        situations: summary.situations,
    })
}

/// How a scenario file is laid out, for the lesson the file names when it can be read
/// (each format has tables of its own), or for every lesson.
fn shape_hint(path: &Path) -> String {
    let lesson = std::fs::read_to_string(path)
        .ok()
        .and_then(|text| scenario_lesson(path, &text).ok());
    match lesson {
        Some(lesson) => format!(
            "a {} scenario has {}; exercises/{}/scenarios/ has examples, and the lesson shows \
             the format",
            lesson.name, lesson.scenario_shape, lesson.name
        ),
        None => {
            let shapes: Vec<String> = LESSONS
                .iter()
                .map(|g| format!("{}: {}", g.name, g.scenario_shape))
                .collect();
            format!(
                "a scenario names its lesson (`exercise = \"build3\"`); {}. \
                 exercises/*/scenarios/ has examples",
                shapes.join("; ")
            )
        }
    }
}

fn show(title: &str, settings: &str, run: &ScenarioRun) {
    say!("{title}");
    say!("{settings}");
    for line in run.render() {
        say!("{line}");
    }
}

/// What the learner's own code printed during a scenario (their `eprintln!`s), shown as a
/// check's failure shows it, ended by a line of the kit's; nothing when it printed nothing.
fn show_printed(printed: &str) {
    let section = crate::output_section(printed);
    if !section.is_empty() {
        say!("{}", section.trim_start_matches('\n'));
        say!("---- end of the output; what follows is the kit's ----\n");
    }
}

/// Builds the learner's code of `lesson` into the harness that runs their scenarios.
pub(super) fn build_learner(root: &Path, lesson: &Lesson) -> Result<Built, CommandError> {
    let exercise = load_exercise(root, lesson)?;
    build_practice(root, &exercise, None).map_err(|e| e.failure)
}

/// Runs the scenario file on the learner's code built in `built`: in a harness process, whose
/// runner holds the learner's code in its sandbox, stopped after `timeout` seconds. `Err`
/// says how the run failed ("did not finish…", "crashed…"), with the run's output; `Ok`
/// holds the run and what the learner's code printed (their own `eprintln!`s).
pub(super) fn run_on_learner(
    built: &Built,
    lesson: &Lesson,
    file: &Path,
    timeout: f64,
) -> Result<(ScenarioRun, String), String> {
    let launcher = built.launcher();
    let scratch = tempfile::tempdir().map_err(|e| format!("cannot make a scratch folder: {e}"))?;
    // The child runs in the scratch folder: give it the file by its full path.
    let file = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf());
    let limit = Duration::from_secs_f64(timeout);
    let job = [
        OsStr::new(lesson.name),
        OsStr::new("scenario"),
        file.as_os_str(),
    ];
    let deadlines = crate::Deadlines::flat(limit, lesson.stop_hint);
    match launcher.run_job(&job, &[], scratch.path(), deadlines) {
        JobEnd::Reported {
            report: Report::Scenario { run },
            output,
            ..
        } => Ok((run, output)),
        JobEnd::Reported { report, .. } => Err(format!("the harness reported {report:?}")),
        // Each kind of failure names itself in its first words ("did not finish…", "crashed…").
        JobEnd::Failed {
            message, output, ..
        } => Err(format!("{message}{}", crate::output_section(&output))),
    }
}

/// Runs the scenario on the learner's code in a harness process.
fn run_practice(
    root: &Path,
    lesson: &Lesson,
    file: &Path,
    timeout: f64,
) -> Result<Result<(ScenarioRun, String), String>, CommandError> {
    let built = build_learner(root, lesson)?;
    Ok(run_on_learner(&built, lesson, file, timeout))
}

pub(crate) fn scenario(root: Option<PathBuf>, args: ScenarioArgs) -> CommandResult {
    let root = kit_root(root)?;
    let loaded = load(&args.file)
        .map_err(|e| CommandError::new(e.to_string()).hint(shape_hint(&args.file)))?;
    let lesson = loaded.lesson;
    let file = args.file.display();
    let shows_reference = args.compare || args.against == super::run::Against::Reference;
    if shows_reference {
        super::needs_answers(if args.compare {
            "scenario --compare"
        } else {
            "scenario --against reference"
        })?;
    }
    // The case an exhaustive check saved, as it saved it: its failure showed the reference's
    // run of it already, as every check shows what the rule expects. Replaying it beside the
    // reference shows nothing more, so it is not recorded; any other file is.
    // Only the file the last run saved, unchanged: any other case of the space, though the
    // kit's own input, is one the learner's code was not shown to fail on.
    let last_saved = crate::workspace::target_dir(&root)
        .join("kit-cases")
        .join(format!("{}-difference.toml", lesson.name));
    let saved = lesson
        .saved_case
        .and_then(|is_saved| is_saved(&loaded.text))
        .filter(|_| std::fs::read_to_string(&last_saved).is_ok_and(|t| t == loaded.text));
    // Guidance is recorded before the reference's run is shown, and only when it will be:
    // with --compare, once the learner's own run has ended in a run to set beside it (a
    // file that does not build, or a run that crashed or never finished, shows no
    // reference, and records nothing).
    let record = || -> Result<String, CommandError> {
        if let (true, Some(number)) = (args.compare, saved) {
            return Ok(format!(
                "\n(This is case {number} of {}'s exhaustive check, as the check saved it: its \
                 failure showed the reference's run already, so this is not recorded as \
                 guidance. Change the file and --compare is recorded.)",
                lesson.name
            ));
        }
        if !shows_reference {
            return Ok(String::new());
        }
        let how = if args.compare {
            "--compare"
        } else {
            "--against reference"
        };
        let record = GuidanceLog::in_kit(&root)
            .append(
                lesson.name,
                Kind::ReferenceRun,
                &format!("scenario {file} {how}"),
            )
            .map_err(|e| {
                CommandError::new(format!("{e}; the reference was not run"))
                    .hint("guidance is recorded before it is shown: make the log writable")
            })?;
        Ok(format!(
            "\n(The reference's run is recorded as guidance #{} in GUIDANCE_LOG.md.)",
            record.seq
        ))
    };
    let reference = || {
        (lesson.run_scenario_on_reference)(&args.file, &loaded.text)
            .map_err(|e| CommandError::new(e.to_string()))
    };
    if !args.compare && args.against == super::run::Against::Reference {
        let recorded = record()?;
        show(
            &format!("scenario {file} ({}) against reference", lesson.name),
            &loaded.settings,
            &reference()?,
        );
        say!("{recorded}");
        return Ok(ExitCode::SUCCESS);
    }
    let (yours, printed) = match run_practice(&root, lesson, &args.file, args.timeout)? {
        Ok(ran) => ran,
        Err(message) => {
            let unshown = if args.compare {
                "\n(The reference was not run, so nothing is recorded as guidance.)"
            } else {
                ""
            };
            say!(
                "scenario {file} ({}) against practice\n{message}{unshown}",
                lesson.name
            );
            return Ok(ExitCode::from(EXIT_NOT_ALL_PASSED));
        }
    };
    // What the learner's code printed comes first: everything after it is the kit's own, so
    // printed text cannot pass for the run or the verdict that follows.
    show_printed(&printed);
    if !args.compare {
        show(
            &format!("scenario {file} ({}) against practice", lesson.name),
            &loaded.settings,
            &yours,
        );
        return Ok(if yours.finished() {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(EXIT_NOT_ALL_PASSED)
        });
    }
    let recorded = record()?;
    let theirs = reference()?;
    say!(
        "scenario {file} ({}): your practice code next to the reference\n",
        lesson.name
    );
    say!("{}", loaded.settings);
    let text = side_by_side(("yours", &yours), ("reference", &theirs));
    say!("{}", text.trim_end());
    if yours == theirs {
        say!("\nSame on every line.{recorded}");
        Ok(ExitCode::SUCCESS)
    } else {
        say!("\nThey differ on the lines marked ≠.{recorded}");
        Ok(ExitCode::from(EXIT_NOT_ALL_PASSED))
    }
}

pub(crate) fn trace(root: Option<PathBuf>, args: TraceArgs) -> CommandResult {
    let lesson = super::resolve_lesson(&args.lesson)?;
    let root = kit_root(root)?;
    let exercise = load_exercise(&root, lesson)?;
    let Some(trace) = &exercise.trace else {
        return Err(CommandError::new(format!(
            "{} has no worked example to trace",
            lesson.name
        )));
    };
    let path = exercise.dir(&root).join(trace);
    let restore = || {
        format!(
            "restore it from git: `git checkout -- exercises/{}`",
            lesson.name
        )
    };
    let loaded = load(&path).map_err(|e| CommandError::new(e.to_string()).hint(restore()))?;
    // The lesson prints this trace in full, so running it is not guidance.
    let run = if grader_checks::ANSWERS {
        (lesson.run_scenario_on_reference)(&path, &loaded.text)
            .map_err(|e| CommandError::new(e.to_string()).hint(restore()))?
    } else {
        // A copy without the answers keeps the reference's run of the trace, made with it.
        let kept = root.join(crate::bundle::answers::trace_run_path(lesson.name));
        let read: Option<crate::bundle::answers::KeptTrace> = std::fs::read_to_string(&kept)
            .ok()
            .and_then(|json| serde_json::from_str(&json).ok());
        match read {
            Some(k) if k.trace == loaded.text => k.run,
            Some(_) => {
                return Err(CommandError::new(format!(
                    "{} is not the worked example this copy of the kit ran on the reference \
                     (it has no answers to run a changed one)",
                    path.strip_prefix(&root).unwrap_or(&path).display()
                ))
                .hint(restore()))
            }
            None => {
                return Err(CommandError::new(format!(
                    "{} is missing or unreadable: it holds the worked example's run in this \
                     copy of the kit, which has no answers to run it with",
                    kept.display()
                ))
                .hint("restore it from git: `git checkout -- grader/checks/oracle`"))
            }
        }
    };
    show(
        &format!(
            "The lesson's worked example ({}), run on the reference:",
            path.strip_prefix(&root).unwrap_or(&path).display()
        ),
        &loaded.settings,
        &run,
    );
    Ok(ExitCode::SUCCESS)
}

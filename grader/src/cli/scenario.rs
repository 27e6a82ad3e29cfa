//! `scenario` and `trace`: run one scripted case and show every call, wait and event.

use super::EXIT_NOT_ALL_PASSED;
use super::{kit_root, load_exercise, resolve_group, run::build_practice, Failure, Outcome};
use clap::Args;
use grader::guidance::{GuidanceLog, Kind};
use grader::harness::SCENARIO_JOB;
use grader::scenario::{side_by_side, AnyScenario, ScenarioRun};
use grader::{Implementation, JobEnd, Launcher};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args)]
pub struct ScenarioArgs {
    /// The scenario file (TOML): optional settings, then [[outcome]] entries in call order
    /// (the README shows both formats; examples in exercises/*/scenarios/).
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
pub struct TraceArgs {
    /// The group whose worked example to trace, e.g. build3.
    group: String,
}

fn show(title: &str, scenario: &AnyScenario, run: &ScenarioRun) {
    println!("{title}");
    println!("{}", scenario.settings());
    for line in run.render() {
        println!("{line}");
    }
}

/// Runs the scenario on the learner's code in a harness process.
fn run_practice(
    root: &Path,
    group: &str,
    file: &Path,
    timeout: f64,
) -> Result<Result<ScenarioRun, String>, Failure> {
    let exercise = load_exercise(root, resolve_group(group)?)?;
    let launcher = Launcher::new(build_practice(root, &exercise)?);
    let scratch = tempfile::tempdir()
        .map_err(|e| Failure::new(format!("cannot make a scratch folder: {e}")))?;
    let limit = Duration::from_secs_f64(timeout);
    let job = [OsStr::new(SCENARIO_JOB), file.as_os_str()];
    Ok(
        match launcher.run_job(&job, &scratch.path().join("run.json"), limit, limit) {
            JobEnd::Reported { text, .. } => serde_json::from_str(&text)
                .map_err(|e| format!("the harness's report could not be read: {e}")),
            JobEnd::Failed { kind, message } => Err(format!("{kind}: {message}")),
        },
    )
}

pub fn scenario(root: Option<PathBuf>, args: ScenarioArgs) -> Outcome {
    let root = kit_root(root)?;
    let scenario = AnyScenario::load(&args.file).map_err(|e| {
        Failure::new(e.to_string()).hint(
            "a scenario has optional settings and one [[outcome]] per call; \
             see exercises/build3/scenarios/ and exercises/stage8/scenarios/ for examples",
        )
    })?;
    let group = scenario.group();
    let file = args.file.display();
    let shows_reference = args.compare || args.against == super::run::Against::Reference;
    if shows_reference {
        let how = if args.compare {
            "--compare"
        } else {
            "--against reference"
        };
        GuidanceLog::in_kit(&root)
            .append(
                "build3",
                Kind::ReferenceRun,
                &format!("scenario {file} {how}"),
            )
            .map_err(|e| {
                Failure::new(format!("{e}; the reference was not run"))
                    .hint("guidance is recorded before it is shown: make the log writable")
            })?;
    }
    let reference = || scenario.run(&Implementation::reference());
    if !args.compare && args.against == super::run::Against::Reference {
        show(
            &format!("scenario {file} against reference"),
            &scenario,
            &reference(),
        );
        return Ok(ExitCode::SUCCESS);
    }
    let yours = match run_practice(&root, group, &args.file, args.timeout)? {
        Ok(run) => run,
        Err(message) => {
            println!("scenario {file} against practice\n{message}");
            return Ok(ExitCode::from(EXIT_NOT_ALL_PASSED));
        }
    };
    if !args.compare {
        show(
            &format!("scenario {file} against practice"),
            &scenario,
            &yours,
        );
        return Ok(if yours.finished() {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(EXIT_NOT_ALL_PASSED)
        });
    }
    let theirs = reference();
    println!("scenario {file}: your practice code next to the reference\n");
    print!(
        "{}",
        side_by_side(("yours", &yours), ("reference", &theirs))
    );
    if yours == theirs {
        println!("\nSame on every line.");
        Ok(ExitCode::SUCCESS)
    } else {
        println!("\nThey differ on the lines marked ≠.");
        Ok(ExitCode::from(EXIT_NOT_ALL_PASSED))
    }
}

pub fn trace(root: Option<PathBuf>, args: TraceArgs) -> Outcome {
    let group = resolve_group(&args.group)?;
    let root = kit_root(root)?;
    let exercise = load_exercise(&root, group)?;
    let Some(trace) = &exercise.trace else {
        return Err(Failure::new(format!(
            "{} has no worked example to trace",
            group.name
        )));
    };
    let path = exercise.dir(&root).join(trace);
    let scenario = AnyScenario::load(&path).map_err(|e| {
        Failure::new(e.to_string()).hint(format!(
            "restore it from git: `git checkout -- exercises/{}`",
            group.name
        ))
    })?;
    // The lesson prints this trace in full, so running it is not guidance.
    let run = scenario.run(&Implementation::reference());
    show(
        &format!(
            "The lesson's worked example ({}), run on the reference:",
            path.strip_prefix(&root).unwrap_or(&path).display()
        ),
        &scenario,
        &run,
    );
    Ok(ExitCode::SUCCESS)
}

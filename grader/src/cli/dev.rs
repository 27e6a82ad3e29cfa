//! `dev`: for lesson authors. `dev update` writes the wiring the lessons' list gives
//! (`crate::wiring`); `dev check` says what is wrong with each lesson and how to fix it
//! (`crate::authoring`), then runs each lesson in a scratch copy of the kit, with the fast
//! paths on and off; `dev new NAME` scaffolds a lesson's whole slice (`crate::scaffold`).

use super::output::say;
use super::{kit_root, CommandError, CommandResult, EXIT_NOT_ALL_PASSED};
use crate::authoring::Problem;
use crate::kitcopy::{self, Slot, Untracked};
use crate::wiring::{self, Applied};
use clap::{Args, Subcommand};
use colored::Colorize;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

/// `dev`'s arguments.
#[derive(Args)]
pub(crate) struct DevArgs {
    #[command(subcommand)]
    command: DevCommand,
}

#[derive(Subcommand)]
enum DevCommand {
    /// Write the files and blocks generated from exercises/lessons.toml.
    Update,
    /// Check every lesson (files, info.toml, points, rules, stubs, generated wiring), then run
    /// each in a scratch copy of the kit with the fast paths on and off.
    Check(CheckArgs),
    /// Scaffold a new lesson: every file of its slice (a runnable example lesson to replace
    /// piece by piece), its line of exercises/lessons.toml, and the wiring.
    New(NewArgs),
}

#[derive(Args)]
struct NewArgs {
    /// The lesson's name: lower-case letters and digits, e.g. `parse2`.
    name: String,
    /// Its title.
    #[arg(long, default_value = "A new lesson")]
    title: String,
    /// The function the learner writes (default: NAME_answer).
    #[arg(long)]
    function: Option<String>,
}

#[derive(Args)]
struct CheckArgs {
    /// Only the static checks: run no lesson.
    #[arg(long)]
    no_run: bool,
    /// Only this lesson (its static checks and its runs; the kit's wiring is checked too).
    lesson: Option<String>,
}

pub(crate) fn dev(root: Option<PathBuf>, args: DevArgs) -> CommandResult {
    super::needs_answers("dev")?;
    let root = kit_root(root)?;
    match args.command {
        DevCommand::Update => update(&root),
        DevCommand::Check(args) => check(&root, &args),
        DevCommand::New(args) => new(&root, args),
    }
}

/// Writes every generated file and block; says which changed.
pub(crate) fn update(root: &Path) -> CommandResult {
    let lessons = wiring::load(root).map_err(|e| {
        CommandError::new(e.to_string()).hint(format!("correct {}", wiring::LESSONS_FILE))
    })?;
    let mut written = 0;
    for generated in wiring::generate(root, &lessons) {
        match generated.apply(root) {
            Ok(Applied::Written) => {
                written += 1;
                say!("wrote {}", generated.describe());
            }
            Ok(Applied::Unchanged) => {}
            Err(e) => {
                return Err(CommandError::new(e.to_string())
                    .hint("`git diff` shows what changed; `git checkout -- FILE` puts it back"))
            }
        }
    }
    if written == 0 {
        say!(
            "every generated file is current ({} lessons)",
            lessons.len()
        );
    } else {
        say!(
            "{written} written; `cargo run -p grader -- dev check` checks the lessons (cargo \
             rebuilds the grader first)"
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn new(root: &Path, args: NewArgs) -> CommandResult {
    let lesson = crate::scaffold::NewLesson {
        function: args
            .function
            .unwrap_or_else(|| format!("{}_answer", args.name)),
        name: args.name,
        title: args.title,
    };
    let written = crate::scaffold::write(root, &lesson).map_err(|e| {
        let hint = match &e {
            crate::scaffold::ScaffoldError::Exists { .. } => {
                "choose another name, or go on with that lesson's files (`dev check NAME`)"
            }
            crate::scaffold::ScaffoldError::Name(_) => {
                "`cargo run -p grader -- dev new --help` says what a name may be"
            }
            crate::scaffold::ScaffoldError::Write { .. } => {
                "check that the kit's folders can be written"
            }
        };
        CommandError::new(e.to_string()).hint(hint)
    })?;
    for path in &written {
        say!("wrote {}", path.display());
    }
    say!(
        "{} files of the lesson written; now the wiring:",
        written.len()
    );
    update(root)?;
    say!(
        "next: `cargo run -p grader -- dev check {0}` (cargo builds the lesson in), then make the \
         lesson your own: exercises/{0}/lesson.md, the function's type in \
         reference/src/types/{0}.rs and its line in {1}, the checks in \
         grader/checks/src/lessons/{0}/",
        lesson.name,
        wiring::LESSONS_FILE
    );
    Ok(ExitCode::SUCCESS)
}

fn check(root: &Path, args: &CheckArgs) -> CommandResult {
    let mut problems: Vec<Problem> = crate::authoring::problems(root);
    if let Some(only) = &args.lesson {
        if crate::lessons::lesson(only).is_none() {
            return Err(super::resolve_lesson(only)
                .err()
                .unwrap_or_else(|| CommandError::new(format!("there is no lesson {only:?}"))));
        }
        problems.retain(|p| p.lesson.as_deref().is_none_or(|l| l == only));
    }
    let lessons: Vec<&crate::Lesson> = crate::lessons::LESSONS
        .iter()
        .copied()
        .filter(|g| args.lesson.as_deref().is_none_or(|l| l == g.name))
        .collect();
    for problem in &problems {
        show(problem);
    }
    // Not a problem (a scaffolded lesson runs), but not finished either.
    for lesson in &lessons {
        for (file, words) in scaffold_words(root, lesson.name) {
            say!(
                "{} {}: {file} still has the scaffold's words ({words:?}): replace them with the lesson's own",
                "note".yellow().bold(),
                lesson.name
            );
        }
    }
    if problems.is_empty() && !args.no_run {
        let runs = run_all(root, &lessons)?;
        for problem in &runs {
            show(problem);
        }
        problems.extend(runs);
    }
    if problems.is_empty() {
        let runs = if args.no_run { "" } else { ", and each runs" };
        say!(
            "{} {} lessons: every file present and consistent, the wiring current{runs}",
            "ok".green().bold(),
            lessons.len()
        );
        Ok(ExitCode::SUCCESS)
    } else {
        say!("{} problem(s)", problems.len());
        Ok(ExitCode::from(EXIT_NOT_ALL_PASSED))
    }
}

/// The files of lesson `name` that still hold text `dev new` wrote for the author to replace.
fn scaffold_words(root: &Path, name: &str) -> Vec<(String, &'static str)> {
    const LEFT: [(&str, &str); 2] = [
        (
            "lesson.md",
            "(Scaffolded by `cargo run -p grader -- dev new",
        ),
        ("info.toml", "the lesson's function in a few words"),
    ];
    LEFT.iter()
        .filter_map(|(file, words)| {
            let path = format!("exercises/{name}/{file}");
            let text = std::fs::read_to_string(root.join(&path)).ok()?;
            text.contains(words).then_some((path, *words))
        })
        .collect()
}

fn show(problem: &Problem) {
    let lesson = problem
        .lesson
        .as_deref()
        .map_or_else(|| "kit".to_string(), str::to_string);
    say!("{} {lesson}: {}", "problem".red().bold(), problem.what);
    say!("  {} {}", "fix:".cyan(), problem.fix);
}

/// Runs each lesson in a scratch copy of the kit as the author's working tree has it: the
/// stub with the fast paths on (cargo's build, then an edit replayed) and off, every check
/// unfinished and the same both ways; then against the reference, every check passing.
fn run_all(root: &Path, lessons: &[&crate::Lesson]) -> Result<Vec<Problem>, CommandError> {
    let files = kitcopy::fresh_files(root, Untracked::Taken)
        .map_err(|e| CommandError::new(format!("cannot read the kit's files: {e}")))?;
    let target = crate::workspace::target_dir(root);
    let slot = Slot::acquire(&target.join("kit-dev"), 1, &files)
        .map_err(|e| CommandError::new(format!("cannot make a scratch copy of the kit: {e}")))?;
    if !crate::seed::is_warm(slot.root()) && crate::seed::is_warm_target(&target) {
        let _lock = crate::compile::lock_builds(&target)
            .map_err(|e| CommandError::new(format!("cannot take the kit's build lock: {e}")))?;
        if crate::seed::seed(root, &target.join("debug"), slot.root(), &files).is_err() {
            let _ = std::fs::remove_dir_all(slot.root().join("target/debug"));
        }
    }
    let mut problems = Vec::new();
    for lesson in lessons {
        say!("running {} in {}", lesson.name, slot.root().display());
        if let Err(what) = run_lesson(slot.root(), lesson) {
            problems.push(Problem {
                lesson: Some(lesson.name.to_string()),
                what,
                fix: format!(
                    "run it yourself there: `cd {} && cargo run -p grader -- {}`",
                    slot.root().display(),
                    lesson.name
                ),
            });
        }
    }
    Ok(problems)
}

fn run_lesson(root: &Path, lesson: &crate::Lesson) -> Result<(), String> {
    let exercise = crate::LessonInfo::load(root, lesson.name).map_err(|e| e.to_string())?;
    let stub = std::fs::read_to_string(exercise.dir(root).join(&exercise.stub))
        .map_err(|e| e.to_string())?;
    let learner = root.join(&exercise.file);
    std::fs::write(&learner, &stub).map_err(|e| e.to_string())?;
    let first = checks_of(root, lesson.name, &[], true)?;
    std::fs::write(&learner, format!("{stub}\n// an edit\n")).map_err(|e| e.to_string())?;
    let fast = checks_of(root, lesson.name, &[], true)?;
    let slow = checks_of(root, lesson.name, &[], false)?;
    std::fs::write(&learner, &stub).map_err(|e| e.to_string())?;
    if fast != slow || first != slow {
        return Err(format!(
            "the stub's checks differ with the fast paths on and off:\non:  {fast}\noff: {slow}"
        ));
    }
    let not = |status: &str, checks: &Value| -> Vec<String> {
        checks
            .as_array()
            .into_iter()
            .flatten()
            .filter(|c| c[1] != status)
            .map(|c| format!("{} {}: {}", c[0], c[1], c[2]))
            .collect()
    };
    let odd = not("unfinished", &slow);
    if !odd.is_empty() {
        return Err(format!(
            "on the stub, not every check is unfinished: {odd:?}"
        ));
    }
    let reference = checks_of(root, lesson.name, &["--against", "reference"], true)?;
    let failed = not("ok", &reference);
    if !failed.is_empty() {
        return Err(format!(
            "on the reference, not every check passes: {failed:?}"
        ));
    }
    Ok(())
}

/// Runs `lesson` in the copy at `root` and returns its checks as `--format json` gives them:
/// name, event (`ok`, `failed`, `unfinished`, …), message.
fn checks_of(root: &Path, lesson: &str, extra: &[&str], fast: bool) -> Result<Value, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the grader: {e}"))?;
    let mut command = Command::new(exe);
    command
        .current_dir(root)
        .arg("--root")
        .arg(root)
        .arg(lesson)
        .args(extra)
        .args(["--format", "json"])
        .env("RUST_BACKTRACE", "0")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if !fast {
        command.env(crate::fast::FAST_PATHS_VAR, "off");
    }
    let out = command
        .output()
        .map_err(|e| format!("cannot run the grader: {e}"))?;
    let checks: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| event["type"] == "test")
        .map(|c| serde_json::json!([c["name"], c["event"], c["message"]]))
        .collect();
    if checks.is_empty() {
        return Err(format!(
            "the run reported no check ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(Value::Array(checks))
}

//! Runs a group's checks, each in its own harness process, and prints them the way
//! `cargo test` prints tests, with two more statuses: `unfinished` (the learner's function
//! still reaches `todo!()`) and `KIT BUG` (the kit itself failed; no verdict).
//!
//! The command line is libtest's (parsed into [`libtest_mimic::Arguments`]): a filter,
//! `--exact`, `--skip`, `--list`, `--format pretty|terse|json`, `--test-threads`, `--color`;
//! plus `--fail-fast`. libtest-mimic's own runner knows only ok, failed and ignored, so the
//! printing is done here.
//!
//! One mistake often fails many checks. The pretty output therefore prints the first
//! failure (in the group's order) in full, and each further one as a single line with the
//! command that shows it in full.

use crate::child::{output_section, Ran};
use crate::Launcher;
use colored::Colorize;
use grader_checks::{CheckInfo, FailureKind, Group, Outcome, Status};
use libtest_mimic::{Arguments, FormatSetting};
use serde_json::json;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use thiserror::Error;

/// Settings of one run that libtest's arguments do not cover.
#[derive(Debug, Clone)]
pub struct RunSettings {
    /// What runs: `"practice"`, `"reference"`, or a test implementation's name.
    pub against: String,
    /// How long one check may run before it is stopped.
    pub timeout: Duration,
    /// What to tell a learner whose function is unfinished.
    pub unfinished_hint: String,
    /// Stop starting checks after the first failure.
    pub fail_fast: bool,
    /// Print every failure in full, not only the first.
    pub all_in_full: bool,
}

impl RunSettings {
    /// Settings for a run against `against` with a `timeout` per check and the rest default.
    pub fn new(against: impl Into<String>, timeout: Duration) -> Self {
        RunSettings {
            against: against.into(),
            timeout,
            unfinished_hint: String::new(),
            fail_fast: false,
            all_in_full: false,
        }
    }
}

/// One check's result.
#[derive(Debug, Clone)]
pub struct CheckRun {
    /// The check's name.
    pub name: &'static str,
    /// How it ended.
    pub outcome: Outcome,
    /// How long its process ran.
    pub duration: Duration,
    /// What the code under test printed meanwhile (at most 4 KiB).
    pub output: String,
}

/// The result of running a group.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    /// The checks that ran, in the group's order.
    pub runs: Vec<CheckRun>,
    /// How many checks the filter left out.
    pub filtered_out: usize,
    /// How many selected checks `--fail-fast` left unrun.
    pub not_run: usize,
    /// Whether this was only a listing.
    pub listed_only: bool,
    /// How long the whole run took.
    pub elapsed: Duration,
}

impl Summary {
    /// How many checks ended with `status`.
    pub fn count(&self, status: Status) -> usize {
        self.runs
            .iter()
            .filter(|r| r.outcome.status() == status)
            .count()
    }

    /// The outcome of the check called `name`, if it ran.
    pub fn outcome(&self, name: &str) -> Option<&Outcome> {
        self.runs
            .iter()
            .find(|r| r.name == name)
            .map(|r| &r.outcome)
    }

    /// True when at least one check ran, every selected check ran, and every one passed.
    pub fn all_passed(&self) -> bool {
        !self.runs.is_empty()
            && self.not_run == 0
            && self.runs.iter().all(|r| r.outcome == Outcome::Passed)
    }

    /// Whether the kit itself failed in any check.
    pub fn kit_bugs(&self) -> usize {
        self.count(Status::KitBug)
    }
}

/// The checks of `group` that `args` selects, and how many it leaves out.
pub fn select(group: &Group, args: &Arguments) -> (Vec<&'static CheckInfo>, usize) {
    let matches = |name: &str, pattern: &str| {
        if args.exact {
            name == pattern
        } else {
            name.contains(pattern)
        }
    };
    let selected: Vec<&'static CheckInfo> = group
        .checks
        .iter()
        .filter(|c| args.filter.as_deref().is_none_or(|f| matches(c.name, f)))
        .filter(|c| !args.skip.iter().any(|s| matches(c.name, s)))
        .collect();
    let left_out = group.checks.len() - selected.len();
    (selected, left_out)
}

/// The number of checks run at once unless `--test-threads` says otherwise. Checks spend
/// most of their time starting a process, so a few more than the cores keeps them busy.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get()) * 2
}

/// A worker thread's working folder, for its checks one after the other: making a folder
/// costs about 0.35 ms on ext4, as much as a small check's own run, so one is kept while the
/// checks leave it as they found it. A check that leaves anything but its report there, or
/// makes the folder unusable (a `report.json` that is a folder, the folder removed or made
/// read-only), gets the next check a new folder: nothing of one check reaches another.
struct WorkFolder<'a> {
    scratch: &'a Path,
    thread: usize,
    current: Option<PathBuf>,
}

impl<'a> WorkFolder<'a> {
    fn new(scratch: &'a Path, thread: usize) -> Self {
        WorkFolder {
            scratch,
            thread,
            current: None,
        }
    }

    /// The folder for the next check: the current one while it is as a check found it, or
    /// a new one; a message when none can be made.
    fn ready(&mut self) -> Result<PathBuf, String> {
        if let Some(dir) = &self.current {
            if as_left(dir) {
                return Ok(dir.clone());
            }
        }
        // A name no check can take first (they can write here).
        let dir = tempfile::Builder::new()
            .prefix(&format!("thread-{}-", self.thread))
            .tempdir_in(self.scratch)
            .map_err(|e| {
                format!(
                    "cannot make a scratch folder in {}: {e}",
                    self.scratch.display()
                )
            })?
            .keep();
        self.current = Some(dir.clone());
        Ok(dir)
    }
}

/// Whether `dir` is still a writable folder (not a link) holding nothing but a check's
/// report, a plain file.
fn as_left(dir: &Path) -> bool {
    let usable = std::fs::symlink_metadata(dir).is_ok_and(|m| {
        #[cfg(unix)]
        let writable = {
            use std::os::unix::fs::PermissionsExt;
            m.permissions().mode() & 0o700 == 0o700
        };
        #[cfg(not(unix))]
        let writable = !m.permissions().readonly();
        m.is_dir() && writable
    });
    usable
        && std::fs::read_dir(dir).is_ok_and(|entries| {
            entries.into_iter().all(|entry| {
                entry.is_ok_and(|e| {
                    e.file_name() == crate::child::REPORT_FILE
                        && e.file_type().is_ok_and(|t| t.is_file())
                })
            })
        })
}

/// Why [`run`] gave no summary.
#[derive(Debug, Error)]
pub enum RunError {
    /// The launcher was cancelled ([`Launcher::cancel_with`]): the checks were stopped, not
    /// judged, and nothing more was printed.
    #[error("the run was cancelled before its checks finished")]
    Cancelled,
    /// The output could not be written, or a scratch folder made.
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// Runs the selected checks of `group` with `launcher`, printing to `out`.
pub fn run(
    group: &Group,
    launcher: &Launcher,
    args: &Arguments,
    settings: &RunSettings,
    out: &mut dyn Write,
) -> Result<Summary, RunError> {
    let (selected, filtered_out) = select(group, args);
    let format = if args.quiet {
        FormatSetting::Terse
    } else {
        args.format.unwrap_or(FormatSetting::Pretty)
    };
    if args.list {
        for check in &selected {
            writeln!(out, "{}: check", check.name)?;
        }
        if format != FormatSetting::Json {
            writeln!(out, "\n{} checks", selected.len())?;
        }
        return Ok(Summary {
            filtered_out,
            listed_only: true,
            ..Summary::default()
        });
    }
    let mut printer = Printer {
        out,
        format,
        terse_column: 0,
    };
    printer.start(group, settings, selected.len())?;
    let started = Instant::now();
    let scratch = crate::scratch::Scratch::new("grader-", None)?;
    let threads = args.test_threads.unwrap_or_else(default_threads).max(1);
    let mut results: Vec<Option<(Ran, Duration)>> = vec![None; selected.len()];
    // The checks that may run long (a longer minimum timeout: the exhaustive comparisons)
    // start first, so that the short ones fill the other cores meanwhile rather than leave
    // the long one running alone at the end. Results are still reported in the group's order.
    // Under --fail-fast the checks start in the group's order instead, so that every check
    // before the first failure has started (and is waited for) when it is found: the first
    // failure shown is the same from run to run.
    let mut launch: Vec<usize> = (0..selected.len()).collect();
    if !settings.fail_fast {
        launch.sort_by_key(|&i| std::cmp::Reverse(selected[i].min_timeout));
    }
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|scope| -> io::Result<()> {
        for thread in 0..threads.min(selected.len()) {
            let tx = tx.clone();
            let (next, stop, selected, launch) = (&next, &stop, &selected, &launch);
            let scratch = scratch.path();
            scope.spawn(move || {
                let mut folder = WorkFolder::new(scratch, thread);
                let mut session = launcher.session();
                loop {
                    if stop.load(Ordering::SeqCst) || launcher.cancelled() {
                        break;
                    }
                    let Some(&i) = launch.get(next.fetch_add(1, Ordering::SeqCst)) else {
                        break;
                    };
                    let check = &selected[i];
                    let timeout = settings.timeout.max(check.min_timeout);
                    let began = Instant::now();
                    let ran = match folder.ready() {
                        Ok(dir) => session.run(
                            group.name,
                            check.name,
                            &dir,
                            settings.timeout,
                            timeout,
                            group.stop_hint,
                        ),
                        Err(message) => Ran {
                            outcome: Outcome::KitBug { message },
                            output: String::new(),
                        },
                    };
                    if settings.fail_fast && ran.outcome != Outcome::Passed {
                        stop.store(true, Ordering::SeqCst);
                    }
                    if tx.send((i, ran, began.elapsed())).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        // Results are shown in the group's order: each as soon as every check before it is
        // shown, so the output is the same from run to run whatever finished first.
        let mut shown = 0;
        // Under --fail-fast: the first failure in the group's order so far. What finished
        // after it in that order is dropped (not run), so the run reads the same every time.
        let mut first_failure = usize::MAX;
        for (i, ran, duration) in rx {
            if settings.fail_fast && ran.outcome != Outcome::Passed {
                first_failure = first_failure.min(i);
            }
            results[i] = Some((ran, duration));
            // A cancelled run's checks were stopped, not judged: nothing of them is shown.
            while shown < results.len() && shown <= first_failure && !launcher.cancelled() {
                let Some((ran, _)) = &results[shown] else {
                    break;
                };
                printer.result(selected[shown].name, &ran.outcome)?;
                shown += 1;
            }
        }
        if first_failure != usize::MAX {
            for later in results.iter_mut().skip(first_failure + 1) {
                *later = None;
            }
        }
        Ok(())
    })?;
    if launcher.cancelled() {
        return Err(RunError::Cancelled);
    }
    let not_run = results.iter().filter(|r| r.is_none()).count();
    let runs: Vec<CheckRun> = selected
        .iter()
        .zip(results)
        .filter_map(|(check, result)| {
            result.map(|(ran, duration)| CheckRun {
                name: check.name,
                outcome: ran.outcome,
                duration,
                output: ran.output,
            })
        })
        .collect();
    let summary = Summary {
        runs,
        filtered_out,
        not_run,
        listed_only: false,
        elapsed: started.elapsed(),
    };
    printer.finish(group, settings, &summary)?;
    Ok(summary)
}

struct Printer<'o> {
    out: &'o mut dyn Write,
    format: FormatSetting,
    terse_column: usize,
}

/// The word after `check NAME ...` in the pretty format.
fn verdict_word(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Passed => "ok".green().to_string(),
        Outcome::Unfinished { .. } => "unfinished".yellow().to_string(),
        Outcome::Failed {
            kind: FailureKind::Mismatch,
            ..
        } => "FAILED".red().to_string(),
        Outcome::Failed { kind, .. } => format!("{} ({kind})", "FAILED".red()),
        Outcome::KitBug { .. } => "KIT BUG".magenta().bold().to_string(),
    }
}

/// The first line of a failure message, for the one-line list.
fn first_line(message: &str) -> &str {
    message.lines().next().unwrap_or("").trim()
}

impl Printer<'_> {
    /// A check's whole message, then what it printed, under its name.
    fn in_full(&mut self, run: &CheckRun) -> io::Result<()> {
        writeln!(
            self.out,
            "---- {} ----\n{}{}\n",
            run.name,
            run.outcome.message().unwrap_or_default(),
            output_section(&run.output)
        )
    }

    fn start(&mut self, group: &Group, settings: &RunSettings, count: usize) -> io::Result<()> {
        match self.format {
            FormatSetting::Json => writeln!(
                self.out,
                "{}",
                json!({"type": "suite", "event": "started", "group": group.name,
                       "against": settings.against, "test_count": count})
            ),
            _ => writeln!(
                self.out,
                "\nrunning {count} check{} of {} against {}",
                if count == 1 { "" } else { "s" },
                group.name,
                settings.against
            ),
        }
    }

    fn result(&mut self, name: &str, outcome: &Outcome) -> io::Result<()> {
        match self.format {
            FormatSetting::Pretty => {
                writeln!(self.out, "check {name} ... {}", verdict_word(outcome))
            }
            FormatSetting::Terse => {
                let mark = match outcome.status() {
                    Status::Passed => ".".green(),
                    Status::Failed => "F".red(),
                    Status::Unfinished => "u".yellow(),
                    Status::KitBug => "!".magenta(),
                };
                write!(self.out, "{mark}")?;
                self.terse_column += 1;
                if self.terse_column.is_multiple_of(88) {
                    writeln!(self.out)?;
                }
                self.out.flush()
            }
            FormatSetting::Json => {
                let event = match outcome {
                    Outcome::Passed => json!({"type": "test", "name": name, "event": "ok"}),
                    Outcome::Failed { kind, message } => json!({"type": "test", "name": name,
                        "event": "failed", "kind": kind, "message": message}),
                    Outcome::Unfinished { location, message } => json!({"type": "test",
                        "name": name, "event": "unfinished", "location": location, "message": message}),
                    Outcome::KitBug { message } => json!({"type": "test", "name": name,
                        "event": "kit_bug", "message": message}),
                };
                writeln!(self.out, "{event}")
            }
        }
    }

    fn finish(
        &mut self,
        group: &Group,
        settings: &RunSettings,
        summary: &Summary,
    ) -> io::Result<()> {
        let passed = summary.count(Status::Passed);
        let failed = summary.count(Status::Failed);
        let unfinished = summary.count(Status::Unfinished);
        let bugs = summary.kit_bugs();
        if self.format == FormatSetting::Json {
            return writeln!(
                self.out,
                "{}",
                json!({"type": "suite", "event": if summary.all_passed() { "ok" } else { "failed" },
                       "passed": passed, "failed": failed, "unfinished": unfinished,
                       "kit_bugs": bugs, "not_run": summary.not_run,
                       "filtered_out": summary.filtered_out,
                       "exec_time": summary.elapsed.as_secs_f64()})
            );
        }
        if self.format == FormatSetting::Terse {
            writeln!(self.out)?;
        }
        self.failures(group, settings, summary)?;
        self.kit_bug_section(summary)?;
        self.unfinished_section(group, settings, summary)?;
        let verdict = if summary.all_passed() {
            "ok".green()
        } else if bugs > 0 {
            "KIT BUG".magenta().bold()
        } else if failed == 0 && unfinished > 0 {
            "UNFINISHED".yellow()
        } else {
            "FAILED".red()
        };
        let mut counts = format!(
            "{passed} passed; {failed} failed; {unfinished} unfinished; {} filtered out",
            summary.filtered_out
        );
        if summary.not_run > 0 {
            counts.push_str(&format!("; {} not run (--fail-fast)", summary.not_run));
        }
        if bugs > 0 {
            counts.push_str(&format!(
                "; {bugs} kit bug{}",
                if bugs == 1 { "" } else { "s" }
            ));
        }
        writeln!(
            self.out,
            "\ncheck result: {verdict}. {counts}; finished in {:.2}s\n",
            summary.elapsed.as_secs_f64()
        )?;
        if summary.runs.is_empty() && summary.not_run == 0 {
            writeln!(
                self.out,
                "No check matched the filter: `cargo run -p grader -- {} --list` shows their names.",
                group.name
            )?;
        }
        Ok(())
    }

    /// The first failure in full; the others one line each, with the command that shows one.
    fn failures(
        &mut self,
        group: &Group,
        settings: &RunSettings,
        summary: &Summary,
    ) -> io::Result<()> {
        let failures: Vec<&CheckRun> = summary
            .runs
            .iter()
            .filter(|r| r.outcome.status() == Status::Failed)
            .collect();
        let Some((first, rest)) = failures.split_first() else {
            return Ok(());
        };
        writeln!(self.out, "\nfailures:\n")?;
        let full: Vec<&&CheckRun> = if settings.all_in_full {
            failures.iter().collect()
        } else {
            vec![first]
        };
        // One mistake (a loop, most often) can fail every check with the same message: it is
        // printed once, and each further check that failed the same way points to it.
        let mut shown: Vec<&CheckRun> = Vec::new();
        for run in full {
            match shown
                .iter()
                .find(|s| s.outcome == run.outcome && s.output == run.output)
            {
                Some(same) => writeln!(
                    self.out,
                    "---- {} ----
failed the same way as {} (above).
",
                    run.name, same.name
                )?,
                None => {
                    self.in_full(run)?;
                    shown.push(run);
                }
            }
        }
        if !settings.all_in_full && !rest.is_empty() {
            writeln!(
                self.out,
                "{} more failure{}, one line each (the first line of each message):",
                rest.len(),
                if rest.len() == 1 { "" } else { "s" }
            )?;
            // Checks whose line is the same (a loop fails them all alike) share one line.
            let mut lines: Vec<(String, Vec<&str>)> = Vec::new();
            for run in rest {
                let kind = match run.outcome.failure_kind() {
                    Some(FailureKind::Mismatch) | None => String::new(),
                    Some(kind) => format!("({kind}) "),
                };
                let line = format!(
                    "{kind}{}",
                    first_line(run.outcome.message().unwrap_or_default())
                );
                match lines.iter_mut().find(|(l, _)| *l == line) {
                    Some((_, names)) => names.push(run.name),
                    None => lines.push((line, vec![run.name])),
                }
            }
            for (line, names) in &lines {
                let who = match names.as_slice() {
                    [one] => one.to_string(),
                    [first, others @ ..] => format!(
                        "{first} and {} other{}",
                        others.len(),
                        if others.len() == 1 { "" } else { "s" }
                    ),
                    [] => continue,
                };
                writeln!(self.out, "    {who}: {line}")?;
            }
            let against = if settings.against == "reference" {
                " --against reference"
            } else {
                ""
            };
            writeln!(
                self.out,
                "Show one in full: `cargo run -p grader -- {} --exact {}{against}`; \
                 all in full: add --all-failures.",
                group.name, rest[0].name
            )?;
        }
        Ok(())
    }

    fn kit_bug_section(&mut self, summary: &Summary) -> io::Result<()> {
        let bugs: Vec<&CheckRun> = summary
            .runs
            .iter()
            .filter(|r| r.outcome.status() == Status::KitBug)
            .collect();
        if bugs.is_empty() {
            return Ok(());
        }
        writeln!(
            self.out,
            "\n{}\nThese checks gave no verdict on your code: the kit's own code failed. \
             Please report it with this text.\n",
            "kit bugs:".magenta().bold()
        )?;
        for run in bugs {
            self.in_full(run)?;
        }
        Ok(())
    }

    fn unfinished_section(
        &mut self,
        group: &Group,
        settings: &RunSettings,
        summary: &Summary,
    ) -> io::Result<()> {
        // One line per place the code stopped, not per check: a stub stops every check at
        // the same todo!().
        let mut places: Vec<(String, String, usize)> = Vec::new();
        for run in &summary.runs {
            if let Outcome::Unfinished { location, message } = &run.outcome {
                let at = location
                    .clone()
                    .unwrap_or_else(|| "an unknown place".into());
                match places.iter_mut().find(|(l, _, _)| *l == at) {
                    Some(place) => place.2 += 1,
                    None => places.push((at, message.clone(), 1)),
                }
            }
        }
        if places.is_empty() {
            return Ok(());
        }
        writeln!(self.out, "\nunfinished:")?;
        for (at, message, count) in &places {
            let stub = if message.starts_with("not yet implemented") {
                "todo!()"
            } else {
                "unimplemented!()"
            };
            writeln!(
                self.out,
                "    {} reached {stub} at {at} ({count} check{})",
                group.function,
                if *count == 1 { "" } else { "s" }
            )?;
        }
        if !settings.unfinished_hint.is_empty() {
            writeln!(self.out, "    {}", settings.unfinished_hint)?;
        }
        Ok(())
    }
}

//! Runs a group's checks, each in its own harness process, and prints them the way
//! `cargo test` prints tests, with one more status: `unfinished`.
//!
//! The command line is libtest's (parsed by [`libtest_mimic::Arguments`]): a filter,
//! `--exact`, `--skip`, `--list`, `--format pretty|terse|json`, `--test-threads`, `--color`.
//! libtest-mimic's own runner knows only ok, failed and ignored, so the printing is done
//! here.

use crate::checks::{Check, Group};
use crate::outcome::{FailureKind, Outcome, Status};
use crate::Launcher;
use colored::Colorize;
use libtest_mimic::{Arguments, FormatSetting};
use serde_json::json;
use std::io::{self, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Settings of one run that libtest's arguments do not cover.
#[derive(Debug, Clone)]
pub struct RunSettings {
    /// What runs: `"practice"`, `"reference"`, or a test implementation's name.
    pub against: String,
    /// How long one check may run before it is stopped.
    pub timeout: Duration,
    /// What to tell a learner whose function is unfinished.
    pub unfinished_hint: String,
}

/// One check's result.
#[derive(Debug, Clone)]
pub struct CheckRun {
    /// The check's name.
    pub name: &'static str,
    /// How it ended.
    pub outcome: Outcome,
}

/// The result of running a group.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    /// The checks that ran, in the group's order.
    pub runs: Vec<CheckRun>,
    /// How many checks the filter left out.
    pub filtered_out: usize,
    /// Whether this was only a listing.
    pub listed_only: bool,
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

    /// True when at least one check ran and every one passed.
    pub fn all_passed(&self) -> bool {
        !self.runs.is_empty() && self.runs.iter().all(|r| r.outcome == Outcome::Passed)
    }
}

/// The checks of `group` that `args` selects, and how many it leaves out.
pub fn select<'g>(group: &'g Group, args: &Arguments) -> (Vec<&'g Check>, usize) {
    let matches = |name: &str, pattern: &str| {
        if args.exact {
            name == pattern
        } else {
            name.contains(pattern)
        }
    };
    let selected: Vec<&Check> = group
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

/// Runs the selected checks of `group` with `launcher`, printing to `out`.
pub fn run(
    group: &Group,
    launcher: &Launcher,
    args: &Arguments,
    settings: &RunSettings,
    out: &mut dyn Write,
) -> io::Result<Summary> {
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
            runs: Vec::new(),
            filtered_out,
            listed_only: true,
        });
    }
    let mut printer = Printer {
        out,
        format,
        terse_column: 0,
    };
    printer.start(group, settings, selected.len())?;
    let started = Instant::now();
    let scratch = tempfile::Builder::new().prefix("grader-").tempdir()?;
    let threads = args.test_threads.unwrap_or_else(default_threads).max(1);
    let mut results: Vec<Option<Outcome>> = vec![None; selected.len()];
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|scope| -> io::Result<()> {
        for _ in 0..threads.min(selected.len()) {
            let tx = tx.clone();
            let (next, selected, scratch) = (&next, &selected, scratch.path());
            scope.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(check) = selected.get(i) else { break };
                let report = scratch.join(format!("{i}.json"));
                let timeout = settings.timeout.max(check.min_timeout);
                let outcome =
                    launcher.run(group.name, check.name, &report, settings.timeout, timeout);
                if tx.send((i, outcome)).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        for (i, outcome) in rx {
            printer.result(selected[i].name, &outcome)?;
            results[i] = Some(outcome);
        }
        Ok(())
    })?;
    let runs: Vec<CheckRun> = selected
        .iter()
        .zip(results)
        .map(|(check, outcome)| CheckRun {
            name: check.name,
            outcome: outcome.unwrap_or(Outcome::Failed {
                kind: FailureKind::Crash,
                message: "the grader lost this check's result".into(),
            }),
        })
        .collect();
    let summary = Summary {
        runs,
        filtered_out,
        listed_only: false,
    };
    printer.finish(group, settings, &summary, started.elapsed())?;
    Ok(summary)
}

struct Printer<'o> {
    out: &'o mut dyn Write,
    format: FormatSetting,
    terse_column: usize,
}

impl Printer<'_> {
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
                let word = match outcome {
                    Outcome::Passed => "ok".green().to_string(),
                    Outcome::Unfinished { .. } => "unfinished".yellow().to_string(),
                    Outcome::Failed {
                        kind: FailureKind::Mismatch,
                        ..
                    } => "FAILED".red().to_string(),
                    Outcome::Failed { kind, .. } => format!("{} ({kind})", "FAILED".red()),
                };
                writeln!(self.out, "check {name} ... {word}")
            }
            FormatSetting::Terse => {
                let mark = match outcome.status() {
                    Status::Passed => ".".green(),
                    Status::Failed => "F".red(),
                    Status::Unfinished => "u".yellow(),
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
                        "event": "failed", "kind": kind.to_string(), "message": message}),
                    Outcome::Unfinished { location, message } => json!({"type": "test",
                        "name": name, "event": "unfinished", "location": location, "message": message}),
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
        elapsed: Duration,
    ) -> io::Result<()> {
        let passed = summary.count(Status::Passed);
        let failed = summary.count(Status::Failed);
        let unfinished = summary.count(Status::Unfinished);
        if self.format == FormatSetting::Json {
            return writeln!(
                self.out,
                "{}",
                json!({"type": "suite", "event": if summary.all_passed() { "ok" } else { "failed" },
                       "passed": passed, "failed": failed, "unfinished": unfinished,
                       "filtered_out": summary.filtered_out, "exec_time": elapsed.as_secs_f64()})
            );
        }
        if self.format == FormatSetting::Terse {
            writeln!(self.out)?;
        }
        let failures: Vec<&CheckRun> = summary
            .runs
            .iter()
            .filter(|r| r.outcome.status() == Status::Failed)
            .collect();
        if !failures.is_empty() {
            writeln!(self.out, "\nfailures:\n")?;
            for run in &failures {
                if let Outcome::Failed { message, .. } = &run.outcome {
                    writeln!(self.out, "---- {} ----\n{message}\n", run.name)?;
                }
            }
        }
        self.unfinished_section(group, settings, summary)?;
        if !failures.is_empty() {
            writeln!(self.out, "\nfailures:")?;
            for run in &failures {
                writeln!(self.out, "    {}", run.name)?;
            }
        }
        let verdict = if summary.all_passed() {
            "ok".green()
        } else if failed == 0 && unfinished > 0 {
            "UNFINISHED".yellow()
        } else {
            "FAILED".red()
        };
        writeln!(
            self.out,
            "\ncheck result: {verdict}. {passed} passed; {failed} failed; {unfinished} unfinished; \
             {} filtered out; finished in {:.2}s\n",
            summary.filtered_out,
            elapsed.as_secs_f64()
        )?;
        if summary.runs.is_empty() {
            writeln!(
                self.out,
                "No check matched the filter: `cargo run -p grader -- {} --list` shows their names.",
                group.name
            )?;
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
        writeln!(self.out, "    {}", settings.unfinished_hint)
    }
}

//! The terminal's reporters of a run ([`crate::events`]): `Human` (libtest's pretty or
//! terse lines, then the first failure in full, the others one line each, the kit bugs, the
//! unfinished places and the summary line) and `JsonLines` (one JSON object per event,
//! libtest's shape). [`for_args`] picks the one the command line asks for.
//!
//! One mistake often fails many checks. The human output therefore prints the first failure
//! (in the lesson's order) in full, and each further one as a single line with the command
//! that shows it in full.

use crate::child::output_section;
use crate::events::{Event, Reporter};
use crate::suite::{CheckRun, RunSettings, Summary};
use colored::Colorize;
use grader_checks::{FailureKind, Lesson, Outcome, Status};
use libtest_mimic::{Arguments, FormatSetting};
use serde_json::json;
use std::io::{self, Write};

/// The printer `args` asks for (`--format`, `-q`), writing to `out`.
pub fn for_args<'o>(args: &Arguments, out: &'o mut dyn Write) -> Box<dyn Reporter + 'o> {
    let format = if args.quiet {
        FormatSetting::Terse
    } else {
        args.format.unwrap_or(FormatSetting::Pretty)
    };
    match format {
        FormatSetting::Json => Box::new(JsonLines { out }),
        FormatSetting::Terse => Box::new(Human::terse(out)),
        FormatSetting::Pretty => Box::new(Human::pretty(out)),
    }
}

/// libtest's human formats: a line per check (`pretty`) or a mark per check (`terse`), then
/// the failures, the kit bugs, the unfinished places and the summary line.
pub(crate) struct Human<'o> {
    out: &'o mut dyn Write,
    terse: bool,
    column: usize,
}

impl<'o> Human<'o> {
    /// A line per check: `check NAME ... ok`.
    pub(crate) fn pretty(out: &'o mut dyn Write) -> Self {
        Human {
            out,
            terse: false,
            column: 0,
        }
    }

    /// A mark per check: `.`, `F`, `u`, `!`.
    pub(crate) fn terse(out: &'o mut dyn Write) -> Self {
        Human {
            out,
            terse: true,
            column: 0,
        }
    }
}

impl Reporter for Human<'_> {
    fn report(&mut self, event: &Event<'_>) -> io::Result<()> {
        match *event {
            Event::Listed { checks, .. } => {
                for check in checks {
                    writeln!(self.out, "{}: check", check.name)?;
                }
                writeln!(self.out, "\n{} checks", checks.len())
            }
            Event::Started {
                lesson,
                settings,
                checks,
            } => writeln!(
                self.out,
                "\nrunning {checks} check{} of {} against {}",
                if checks == 1 { "" } else { "s" },
                lesson.name,
                settings.against
            ),
            Event::CheckStarted { .. } => Ok(()),
            Event::CheckFinished { run } if self.terse => {
                let mark = match run.outcome.status() {
                    Status::Passed => ".".green(),
                    Status::Failed => "F".red(),
                    Status::Unfinished => "u".yellow(),
                    Status::KitBug => "!".magenta(),
                };
                write!(self.out, "{mark}")?;
                self.column += 1;
                if self.column.is_multiple_of(88) {
                    writeln!(self.out)?;
                }
                self.out.flush()
            }
            Event::CheckFinished { run } => {
                writeln!(
                    self.out,
                    "check {} ... {}",
                    run.name,
                    verdict_word(&run.outcome)
                )
            }
            Event::Finished {
                lesson,
                settings,
                summary,
            } => self.finish(lesson, settings, summary),
        }
    }
}

/// One JSON object per line, libtest's shape: `{"type":"suite","event":"started",…}`, one
/// `{"type":"test",…}` per check in the lesson's order, and the suite's end.
pub(crate) struct JsonLines<'o> {
    out: &'o mut dyn Write,
}

impl Reporter for JsonLines<'_> {
    fn report(&mut self, event: &Event<'_>) -> io::Result<()> {
        let line = match *event {
            Event::Listed { checks, .. } => {
                for check in checks {
                    writeln!(self.out, "{}: check", check.name)?;
                }
                return Ok(());
            }
            Event::Started {
                lesson,
                settings,
                checks,
            } => json!({"type": "suite", "event": "started", "group": lesson.name,
                        "against": settings.against, "test_count": checks}),
            // libtest's own JSON says nothing when a test starts; neither does this.
            Event::CheckStarted { .. } => return Ok(()),
            Event::CheckFinished { run } => {
                let name = run.name;
                match &run.outcome {
                    Outcome::Passed => json!({"type": "test", "name": name, "event": "ok"}),
                    Outcome::Failed { kind, message } => json!({"type": "test", "name": name,
                        "event": "failed", "kind": kind, "message": message}),
                    Outcome::Unfinished { location, message } => json!({"type": "test",
                        "name": name, "event": "unfinished", "location": location, "message": message}),
                    Outcome::KitBug { message } => json!({"type": "test", "name": name,
                        "event": "kit_bug", "message": message}),
                }
            }
            Event::Finished { summary, .. } => json!({"type": "suite",
                "event": if summary.all_passed() { "ok" } else { "failed" },
                "passed": summary.count(Status::Passed), "failed": summary.count(Status::Failed),
                "unfinished": summary.count(Status::Unfinished),
                "kit_bugs": summary.kit_bugs(), "not_run": summary.not_run,
                "filtered_out": summary.filtered_out,
                "exec_time": summary.elapsed.as_secs_f64()}),
        };
        writeln!(self.out, "{line}")
    }
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

impl Human<'_> {
    fn finish(
        &mut self,
        lesson: &Lesson,
        settings: &RunSettings,
        summary: &Summary,
    ) -> io::Result<()> {
        let passed = summary.count(Status::Passed);
        let failed = summary.count(Status::Failed);
        let unfinished = summary.count(Status::Unfinished);
        let bugs = summary.kit_bugs();
        if self.terse {
            writeln!(self.out)?;
        }
        self.failures(lesson, settings, summary)?;
        self.kit_bug_section(summary)?;
        self.unfinished_section(lesson, settings, summary)?;
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
                lesson.name
            )?;
        }
        Ok(())
    }

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

    /// The first failure in full; the others one line each, with the command that shows one.
    fn failures(
        &mut self,
        lesson: &Lesson,
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
                // The others by name, so that any of them can be run alone with --exact.
                if let [_, others @ ..] = names.as_slice() {
                    if !others.is_empty() {
                        const NAMED: usize = 8;
                        let mut listed = others[..others.len().min(NAMED)].join(", ");
                        if others.len() > NAMED {
                            listed.push_str(&format!(" and {} more", others.len() - NAMED));
                        }
                        writeln!(self.out, "      the others: {listed}")?;
                    }
                }
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
                lesson.name, rest[0].name
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
        lesson: &Lesson,
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
                lesson.function,
                if *count == 1 { "" } else { "s" }
            )?;
        }
        if !settings.unfinished_hint.is_empty() {
            writeln!(self.out, "    {}", settings.unfinished_hint)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::{OnFinished, Tee};
    use std::time::Duration;

    fn run(name: &'static str, outcome: Outcome) -> CheckRun {
        CheckRun {
            name,
            outcome,
            duration: Duration::from_millis(5),
            output: String::new(),
        }
    }

    /// One recorded run's events, fed to every reporter.
    fn feed(reporter: &mut dyn Reporter) {
        colored::control::set_override(false);
        let lesson = grader_checks::lessons::lesson("build2").expect("build2 is registered");
        let settings = RunSettings::new("practice", Duration::from_secs(3));
        let runs = [
            run("method::only_exact_get_is_sent", Outcome::Passed),
            run(
                "method::get_calls_the_transport_once",
                Outcome::Failed {
                    kind: FailureKind::Mismatch,
                    message: "the transport was called 2 time(s); the rule expects 1.".into(),
                },
            ),
            run(
                "statuses::server_errors_are_transient",
                Outcome::Unfinished {
                    location: Some("practice/src/fetch.rs:35:5".into()),
                    message: "not yet implemented: write fetch".into(),
                },
            ),
        ];
        let summary = Summary {
            runs: runs.to_vec(),
            filtered_out: 15,
            not_run: 0,
            listed_only: false,
            elapsed: Duration::from_millis(120),
        };
        let mut events = vec![Event::Started {
            lesson,
            settings: &settings,
            checks: runs.len(),
        }];
        events.extend(runs.iter().map(|r| Event::CheckStarted { name: r.name }));
        events.extend(runs.iter().map(|run| Event::CheckFinished { run }));
        events.push(Event::Finished {
            lesson,
            settings: &settings,
            summary: &summary,
        });
        for event in &events {
            reporter.report(event).expect("written");
        }
    }

    fn text(bytes: Vec<u8>) -> String {
        String::from_utf8(bytes).expect("UTF-8")
    }

    #[test]
    fn every_reporter_reads_the_same_recorded_stream() {
        let (mut pretty, mut terse, mut json) = (Vec::new(), Vec::new(), Vec::new());
        let mut finished = Vec::new();
        {
            let mut p = Human::pretty(&mut pretty);
            let mut t = Human::terse(&mut terse);
            let mut j = JsonLines { out: &mut json };
            let mut f = OnFinished(|lesson: &Lesson, summary: &Summary| {
                finished.push((
                    lesson.name,
                    summary.runs.len(),
                    summary.count(Status::Failed),
                ));
            });
            let mut all = Tee(vec![&mut p, &mut t, &mut j, &mut f]);
            feed(&mut all);
        }
        let pretty = text(pretty);
        assert!(
            pretty.starts_with("\nrunning 3 checks of build2 against practice\n"),
            "{pretty}"
        );
        assert!(
            pretty.contains("check method::only_exact_get_is_sent ... ok\n"),
            "{pretty}"
        );
        assert!(pretty.contains("check method::get_calls_the_transport_once ... FAILED\n"));
        assert!(pretty.contains(
            "---- method::get_calls_the_transport_once ----\nthe transport was called 2 time(s)"
        ));
        assert!(pretty.contains("fetch reached todo!() at practice/src/fetch.rs:35:5 (1 check)"));
        assert!(pretty.contains(
            "check result: FAILED. 1 passed; 1 failed; 1 unfinished; 15 filtered out; finished in 0.12s"
        ), "{pretty}");
        let terse = text(terse);
        assert!(terse.contains("\n.Fu\n"), "{terse}");
        assert!(terse.contains("check result: FAILED."), "{terse}");
        let lines: Vec<serde_json::Value> = text(json)
            .lines()
            .map(|l| serde_json::from_str(l).expect("each line is JSON"))
            .collect();
        let events: Vec<(&str, &str)> = lines
            .iter()
            .map(|l| {
                (
                    l["type"].as_str().unwrap_or(""),
                    l["event"].as_str().unwrap_or(""),
                )
            })
            .collect();
        assert_eq!(
            events,
            [
                ("suite", "started"),
                ("test", "ok"),
                ("test", "failed"),
                ("test", "unfinished"),
                ("suite", "failed")
            ]
        );
        assert_eq!(lines[4]["filtered_out"], 15);
        assert_eq!(finished, [("build2", 3, 1)]);
    }
}

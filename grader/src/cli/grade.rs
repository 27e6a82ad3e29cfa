//! `grade SUBMISSIONS`: grade a class's submissions, each in its own copy of the kit, into
//! reports and a gradebook. Progress goes to standard error (a bar on a terminal, a line
//! per row otherwise); the summary to standard output.

use super::output::{say, tell};
use super::run::parse_timeout;
use super::{kit_root, resolve_lesson, CommandError, CommandResult, EXIT_ERROR};
use crate::compile::CompileLimits;
use crate::grade::exports::Lms;
use crate::grade::{self, Event, Row, RowStatus, Settings, Submission};
use crate::reports::ReportFormat;
use clap::Args;
use grader_checks::limits::Limits;
use grader_checks::sandbox::Mode;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(Args)]
#[command(
    after_help = "A submission is a folder holding the learner's files as named in \
    practice/src (at its top, in src/ or in practice/src/), or a single .rs file. A \
    GUIDANCE_LOG.md at a folder's top is read for the guidance counts. Each submission is graded \
    in its own copy of the kit (under target/kit-grade/), with the limits of a learner's run. \
    A second run skips what is unchanged. Exit status: 0 when every submission has its row, \
    whatever its grade; 2 on bad input or when the kit itself failed."
)]
pub(crate) struct GradeArgs {
    /// A folder with one folder or .rs file per learner (with --one: a single submission).
    #[arg(value_name = "SUBMISSIONS")]
    submissions: PathBuf,
    /// Grade this lesson only (default: every lesson a submission holds a file for).
    #[arg(long = "lesson", visible_alias = "group", value_name = "LESSON")]
    lesson: Option<String>,
    /// How many submissions are graded at once (default: the number of cores).
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..=64))]
    jobs: Option<u16>,
    /// Where the reports and the gradebook go (default: SUBMISSIONS-grades, next to it).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// A report written for each submission: json, exercism, gradescope or junit; or a
    /// class's gradebook as an LMS imports it: canvas or moodle (OUT/canvas.csv, needs
    /// --roster). Repeatable.
    #[arg(long = "report", value_name = "FORMAT", default_values = ["json"], value_parser = parse_report)]
    reports: Vec<Report>,
    /// The class's roster: a CSV with a header row and the columns id, name and submission
    /// (the student's folder name; other columns are kept). Every student gets a row
    /// (missing when they handed in nothing), and every export carries the id.
    #[arg(long, value_name = "FILE.csv")]
    roster: Option<PathBuf>,
    /// After grading, list what changed since an earlier run: its name under OUT/runs/, or
    /// "previous" for the last one kept.
    #[arg(long, value_name = "RUN")]
    diff: Option<String>,
    /// Grade again even the submissions unchanged since the last run.
    #[arg(long)]
    force: bool,
    /// SUBMISSIONS is one submission; its reports go straight into the output folder.
    #[arg(long)]
    one: bool,
    /// Seconds one check may run before it is stopped as "did not finish".
    #[arg(long, value_name = "SECS", default_value_t = 3.0, value_parser = parse_timeout)]
    timeout: f64,
    /// The most memory one check may use, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = 1024, value_parser = clap::value_parser!(u64).range(64..=65536))]
    memory_limit: u64,
    /// Seconds the compiler may spend on a submission's code before it is stopped, and the
    /// submission counted as not compiling (default: 60, or KIT_COMPILE_TIMEOUT).
    #[arg(long, value_name = "SECS", value_parser = parse_timeout)]
    compile_timeout: Option<f64>,
    /// Print no progress, only the summary.
    #[arg(long, short)]
    quiet: bool,
    /// Grade even where this system cannot sandbox the learners' code fully (no Landlock or
    /// seccomp): every row graded then names the protections that were off.
    #[arg(long)]
    allow_weak_sandbox: bool,
}

/// What one `--report` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Report {
    /// A report per submission.
    Each(ReportFormat),
    /// A class's LMS import.
    Lms(Lms),
}

fn parse_report(text: &str) -> Result<Report, String> {
    match text {
        "canvas" => Ok(Report::Lms(Lms::Canvas)),
        "moodle" => Ok(Report::Lms(Lms::Moodle)),
        other => other.parse().map(Report::Each).map_err(|_| {
            format!("{other:?} is no report format: json, exercism, gradescope, junit, canvas or moodle")
        }),
    }
}

pub(crate) fn grade(root: Option<PathBuf>, args: GradeArgs) -> CommandResult {
    let root = kit_root(root)?;
    let lesson = args.lesson.as_deref().map(resolve_lesson).transpose()?;
    let path = &args.submissions;
    if !path.exists() {
        return Err(
            CommandError::new(format!("{} does not exist", path.display())).hint(
                "name a folder of submissions (one folder or .rs file per learner), or one \
                 submission with --one",
            ),
        );
    }
    if path.is_file() && !args.one {
        return Err(CommandError::new(format!(
            "{} is a file, not a folder of submissions",
            path.display()
        ))
        .hint("to grade this one file, add --one (and --lesson LESSON)"));
    }
    let out = args.out.clone().unwrap_or_else(|| default_out(path));
    let submissions = if args.one {
        vec![Submission::at(path)]
    } else {
        grade::submission::list(path, std::slice::from_ref(&out)).map_err(|e| {
            CommandError::new(e.to_string())
                .hint("each learner's submission is a folder or a .rs file inside it")
        })?
    };
    let sandbox_off = grader_checks::sandbox::probe();
    if !sandbox_off.is_empty() && !args.allow_weak_sandbox {
        return Err(CommandError::new(format!(
            "this system cannot sandbox the learners' code: {}",
            sandbox_off.join("; ")
        ))
        .hint(
            "grade on Linux with Landlock (5.13 or later) and seccomp, or add \
             --allow-weak-sandbox: every row then names the protections that were off",
        ));
    }
    if !sandbox_off.is_empty() && !args.quiet {
        eprintln!(
            "note: grading with a weak sandbox: {} (each row says so)",
            sandbox_off.join("; ")
        );
    }
    let mut formats: Vec<ReportFormat> = Vec::new();
    let mut exports: Vec<Lms> = Vec::new();
    for report in &args.reports {
        match *report {
            Report::Each(f) if !formats.contains(&f) => formats.push(f),
            Report::Lms(l) if !exports.contains(&l) => exports.push(l),
            _ => {}
        }
    }
    // An LMS export is a file of the class, not a submission's report: asking for one
    // leaves each submission's default report (json) as it was.
    if formats.is_empty() {
        formats.push(ReportFormat::Json);
    }
    let roster = args
        .roster
        .as_deref()
        .map(grade::roster::load)
        .transpose()
        .map_err(|e| {
            CommandError::new(e.to_string()).hint(
                "a roster is a CSV with a header row id,name,submission (submission: the \
                 student's folder name, empty when they handed in nothing)",
            )
        })?;
    if let (Some(lms), None) = (exports.first(), &roster) {
        return Err(CommandError::new(format!(
            "--report {} writes the LMS's import, which matches students by id: it needs --roster",
            lms.name()
        ))
        .hint("add --roster FILE.csv (columns id, name, submission)"));
    }
    let diff_with = args
        .diff
        .as_deref()
        .map(|run| grade::history::resolve(&out, run))
        .transpose()
        .map_err(|e| {
            CommandError::new(e.to_string()).hint(format!(
                "each run keeps its gradebook under {}; name one of them, or \"previous\"",
                out.join(grade::history::RUNS).display()
            ))
        })?;
    let settings = Settings {
        lesson,
        jobs: args.jobs.map_or_else(cores, usize::from),
        out: out.clone(),
        formats,
        force: args.force,
        one: args.one,
        timeout: Duration::from_secs_f64(args.timeout),
        limits: Limits {
            memory: args.memory_limit * 1024 * 1024,
            // Every protection the system gives, and no check without them: a check whose
            // process cannot be confined runs no code and fails.
            sandbox: if sandbox_off.is_empty() {
                Mode::Required
            } else {
                Mode::BestEffort
            },
            ..Limits::default()
        },
        sandbox_off,
        run: grade::history::run_name(&out, std::time::SystemTime::now()),
        roster,
        exports,
        compile: match args.compile_timeout {
            Some(secs) => CompileLimits {
                time: Duration::from_secs_f64(secs),
                ..CompileLimits::from_env()
            },
            None => CompileLimits::from_env(),
        },
    };
    let started = Instant::now();
    let progress = Mutex::new(Progress::new(args.quiet, started));
    let graded = grade::grade(&root, &submissions, &settings, &|event| {
        if let Ok(mut p) = progress.lock() {
            p.show(&event);
        }
    })
    .map_err(|e| {
        CommandError::new(e.to_string()).hint(
            "nothing was graded; the kit's own build must work first: \
             `cargo build -p practice-harness --features practice-harness/build3`",
        )
    })?;
    let skipped = match progress.lock() {
        Ok(mut p) => {
            p.finish();
            p.skipped
        }
        Err(_) => 0,
    };
    let book = graded.book;
    summary(&book.rows, skipped, &out, started.elapsed(), &settings);
    if !settings.one {
        similar(&graded.pairs, &graded.unread, &out);
    }
    if let Some(run) = diff_with {
        let before =
            grade::history::load(&out, &run).map_err(|e| CommandError::new(e.to_string()))?;
        let changes = grade::history::diff(&before, &book);
        say!("since run {run}: {} row(s) changed", changes.len());
        for change in changes {
            say!("  {change}");
        }
    }
    let kit_errors = book
        .rows
        .iter()
        .filter(|r| r.status == RowStatus::KitError)
        .count();
    if kit_errors > 0 {
        tell!(
            "{kit_errors} row(s) are kit errors, not grades: the kit failed on them (see their \
             note). Grade them again with --force once fixed."
        );
        return Ok(ExitCode::from(EXIT_ERROR));
    }
    Ok(ExitCode::SUCCESS)
}

/// `class/` → `class-grades/`, next to it.
fn default_out(submissions: &Path) -> PathBuf {
    let name = submissions
        .file_stem()
        .map_or("submissions".into(), |n| n.to_string_lossy().into_owned());
    let parent = submissions
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    parent.join(format!("{name}-grades"))
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

/// Prints the totals and where everything is.
fn summary(rows: &[Row], skipped: usize, out: &Path, elapsed: Duration, settings: &Settings) {
    let count = |s: RowStatus| rows.iter().filter(|r| r.status == s).count();
    let parts: Vec<String> = [
        RowStatus::Passing,
        RowStatus::Failing,
        RowStatus::Unfinished,
        RowStatus::DoesNotCompile,
        RowStatus::Refused,
        RowStatus::MissingFile,
        RowStatus::Missing,
        RowStatus::KitError,
    ]
    .into_iter()
    .filter(|s| count(*s) > 0)
    .map(|s| format!("{} {}", count(s), s.label()))
    .collect();
    let unchanged = if skipped > 0 {
        format!(" ({skipped} unchanged since the last run, not graded again; --force regrades)")
    } else {
        String::new()
    };
    say!(
        "{} row(s) in {:.1} s{unchanged}: {}",
        rows.len(),
        elapsed.as_secs_f64(),
        parts.join(", ")
    );
    let formats: Vec<&str> = settings.formats.iter().map(|f| f.file_suffix()).collect();
    let each = if settings.one {
        out.display().to_string()
    } else {
        out.join("SUBMISSION").display().to_string()
    };
    say!(
        "gradebook: {} and {}\nreports:   {each}/LESSON.{{{},txt}}",
        out.join("grades.csv").display(),
        out.join("grades.json").display(),
        formats.join(",")
    );
    for lms in &settings.exports {
        say!(
            "{:<10} {}",
            format!("{}:", lms.name()),
            out.join(format!("{}.csv", lms.name())).display()
        );
    }
    say!(
        "run:       {} (kept in {})",
        settings.run,
        out.join(grade::history::RUNS).join(&settings.run).display()
    );
    if settings.roster.is_some() {
        let strangers: Vec<&str> = rows
            .iter()
            .filter(|r| r.student.is_none())
            .map(|r| r.submission.as_str())
            .collect();
        if !strangers.is_empty() {
            say!(
                "not on the roster: {} (their rows have no id; add them to the roster or check \
                 the folder names)",
                strangers.join(", ")
            );
        }
    }
}

/// How alike a pair must be to be named at the end of a batch (similarity.csv and the
/// summary list every pair from [`grade::similarity::LISTED_FROM`]).
const NAMED_FROM: f64 = 0.8;

/// The class's summary files, and the pairs of submissions most alike: the groups of
/// submissions alike at [`NAMED_FROM`] or more, each named once.
fn similar(pairs: &[grade::similarity::Pair], unread: &[String], out: &Path) {
    say!(
        "summary:   {} (and summary.md; similarity.csv lists {} pair(s) alike at {:.2} or \
         more, or one within the other)",
        out.join("summary.html").display(),
        pairs.len(),
        grade::similarity::LISTED_FROM
    );
    if !unread.is_empty() {
        say!(
            "unread:    {} (not readable as Rust tokens, so in no similarity pair: look at them \
             yourself)",
            unread.join(", ")
        );
    }
    let clusters = grade::similarity::clusters(pairs, NAMED_FROM);
    for (lesson, sets) in clusters {
        for set in sets {
            let names: Vec<&str> = set.iter().map(String::as_str).collect();
            say!(
                "similar:   {lesson}: {} (linked by pairs alike at {NAMED_FROM:.2} or more: a list \
                 to look at, not a verdict)",
                names.join(", ")
            );
        }
    }
}

/// What the terminal shows while a batch runs.
struct Progress {
    quiet: bool,
    bar: bool,
    total: usize,
    done: usize,
    skipped: usize,
    started: Instant,
}

impl Progress {
    fn new(quiet: bool, started: Instant) -> Progress {
        Progress {
            quiet,
            bar: std::io::stderr().is_terminal(),
            total: 0,
            done: 0,
            skipped: 0,
            started,
        }
    }

    fn show(&mut self, event: &Event) {
        if let Event::Finished { skipped: true, .. } = event {
            self.skipped += 1;
        }
        if self.quiet {
            return;
        }
        match event {
            Event::Waiting => tell!(
                "waiting for a grading copy: another grade run on this kit is using them all…"
            ),
            Event::Preparing { slots } => tell!(
                "preparing {slots} grading cop{} of the kit (from the kit's own build: \
                 seconds; a minute if the kit has never been built)…",
                if *slots == 1 { "y" } else { "ies" }
            ),
            Event::Started { total } => {
                self.total = *total;
                self.draw("");
            }
            Event::Finished { row, skipped } => {
                self.done += 1;
                let line = format!(
                    "{} {}: {}{}",
                    row.submission,
                    row.lesson,
                    row_words(row),
                    if *skipped {
                        " (unchanged, skipped)"
                    } else {
                        ""
                    }
                );
                if self.bar {
                    self.draw(&line);
                } else {
                    tell!("[{}/{}] {line}", self.done, self.total);
                }
            }
        }
    }

    fn draw(&self, last: &str) {
        if !self.bar {
            return;
        }
        const WIDTH: usize = 24;
        let filled = (self.done * WIDTH).checked_div(self.total).unwrap_or(0);
        let secs = self.started.elapsed().as_secs();
        let mut line = format!(
            "[{}{}] {}/{} · {}:{:02}",
            "#".repeat(filled),
            "-".repeat(WIDTH - filled),
            self.done,
            self.total,
            secs / 60,
            secs % 60
        );
        if !last.is_empty() {
            line.push_str(" · ");
            line.push_str(last);
        }
        let line: String = line.chars().take(100).collect();
        eprint!("\r\x1b[K{line}");
    }

    fn finish(&mut self) {
        if self.bar && !self.quiet && self.total > 0 {
            eprintln!();
        }
    }
}

/// A row in a few words: `failing, 30 of 39 passed; first failure: fixtures::x (mismatch)`,
/// `does-not-compile: error: expected `;` (practice/src/lib.rs:10:24)`.
fn row_words(row: &Row) -> String {
    let label = row.status.label();
    match row.status {
        RowStatus::Passing | RowStatus::Failing | RowStatus::Unfinished => {
            let counts = format!(
                "{label}, {} of {} passed",
                row.passed,
                row.passed + row.failed + row.unfinished
            );
            match row.note.as_str() {
                "" => counts,
                note => format!("{counts}; {note}"),
            }
        }
        // The label says it already: `does-not-compile: does not compile: …` said it twice.
        RowStatus::DoesNotCompile => format!(
            "{label}: {}",
            row.note
                .strip_prefix("does not compile: ")
                .unwrap_or(&row.note)
        ),
        _ => format!("{label}: {}", row.note),
    }
}

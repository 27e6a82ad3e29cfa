//! Runs a lesson's checks, each in its own harness process, the way `cargo test` runs
//! tests, with two more statuses: `unfinished` (the learner's function
//! still reaches `todo!()`) and `KIT BUG` (the kit itself failed; no verdict).
//!
//! The command line is libtest's (parsed by libtest-mimic): a filter, `--exact`, `--skip`,
//! `--list`, `--test-threads`; plus `--fail-fast`. What the executor needs of it is a
//! [`Selection`], the kit's own type. libtest-mimic's own runner knows only ok, failed and
//! ignored, so the running is done here. [`run`] is the executor: it starts and stops the
//! checks and sends [`crate::events`] to a reporter; it prints nothing itself
//! ([`crate::printers`] does, as reporters).

use crate::child::Ran;
use crate::events::{Event, Reporter};
use crate::Launcher;
use grader_checks::{CheckInfo, Lesson, Outcome};
use libtest_mimic::Arguments;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Instant;
use thiserror::Error;

pub use crate::events::{CheckRun, RunSettings, Summary};

/// Which checks run, and how many at once: what the executor takes of a command line.
/// `Selection::default()` runs every check.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// Only checks whose name holds this (is this, with `exact`).
    pub filter: Option<String>,
    /// `filter` and `skip` name whole checks.
    pub(crate) exact: bool,
    /// Leave out the checks whose name holds (is) one of these.
    pub(crate) skip: Vec<String>,
    /// List the selected checks instead of running them.
    pub(crate) list: bool,
    /// Checks run at once (otherwise [`default_threads`]).
    pub(crate) threads: Option<usize>,
}

impl From<&Arguments> for Selection {
    fn from(args: &Arguments) -> Self {
        Selection {
            filter: args.filter.clone(),
            exact: args.exact,
            skip: args.skip.clone(),
            list: args.list,
            threads: args.test_threads,
        }
    }
}

/// The checks of `lesson` that `args` selects, and how many it leaves out.
pub fn select(lesson: &Lesson, args: &Selection) -> (Vec<&'static CheckInfo>, usize) {
    let matches = |name: &str, pattern: &str| {
        if args.exact {
            name == pattern
        } else {
            name.contains(pattern)
        }
    };
    let selected: Vec<&'static CheckInfo> = lesson
        .checks
        .iter()
        .filter(|c| args.filter.as_deref().is_none_or(|f| matches(c.name, f)))
        .filter(|c| !args.skip.iter().any(|s| matches(c.name, s)))
        .collect();
    let left_out = lesson.checks.len() - selected.len();
    (selected, left_out)
}

/// The number of checks run at once unless `--test-threads` says otherwise: one more than
/// the cores, so that a core is seldom idle while a check waits on its processes. Each
/// thread has a fork server and a runner zygote of its own to start, so more threads cost
/// more than they gain (grader/benches/README.md).
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get()) + 1
}

/// A worker thread's working folder, for its checks one after the other: making a folder
/// costs as much as a small check's own run (grader/benches/README.md), so one is kept while the
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
    /// The launcher was cancelled (`Launcher::cancel_with`): the checks were stopped, not
    /// judged, and nothing more was printed.
    #[error("the run was cancelled before its checks finished")]
    Cancelled,
    /// The output could not be written, or a scratch folder made.
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// Runs the selected checks of `lesson` with `launcher`, telling `reporter` what happens
/// ([`crate::events`]: the stream, and its order).
pub fn run(
    lesson: &Lesson,
    launcher: &Launcher,
    args: &Selection,
    settings: &RunSettings,
    reporter: &mut dyn Reporter,
) -> Result<Summary, RunError> {
    let (selected, filtered_out) = select(lesson, args);
    if args.list {
        reporter.report(&Event::Listed {
            lesson,
            checks: &selected,
        })?;
        return Ok(Summary {
            filtered_out,
            listed_only: true,
            ..Summary::default()
        });
    }
    reporter.report(&Event::Started {
        lesson,
        settings,
        checks: selected.len(),
    })?;
    let started = Instant::now();
    let scratch = crate::scratch::Scratch::new("grader-", None)?;
    let threads = args.threads.unwrap_or_else(default_threads).max(1);
    let mut results: Vec<Option<CheckRun>> = vec![None; selected.len()];
    // The checks that may run long (a longer minimum timeout: the exhaustive comparisons)
    // start first, so that the short ones fill the other cores meanwhile rather than leave
    // the long one running alone at the end. Results are still reported in the lesson's order.
    // Under --fail-fast the checks start in the lesson's order instead, so that every check
    // before the first failure has started (and is waited for) when it is found: the first
    // failure shown is the same from run to run.
    let mut launch: Vec<usize> = (0..selected.len()).collect();
    if !settings.fail_fast {
        launch.sort_by_key(|&i| std::cmp::Reverse(selected[i].min_timeout));
    }
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel::<Progress>();
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
                    if tx.send(Progress::Began(i)).is_err() {
                        break;
                    }
                    let timeout = settings.timeout.max(check.min_timeout);
                    let began = Instant::now();
                    let ran = match folder.ready() {
                        Ok(dir) => session.run(
                            lesson.name,
                            check.name,
                            &dir,
                            crate::Deadlines {
                                stall: settings.timeout,
                                timeout,
                                stop_hint: lesson.stop_hint,
                            },
                        ),
                        Err(message) => Ran {
                            outcome: Outcome::KitBug { message },
                            output: String::new(),
                        },
                    };
                    if settings.fail_fast && ran.outcome != Outcome::Passed {
                        stop.store(true, Ordering::SeqCst);
                    }
                    let run = CheckRun {
                        name: check.name,
                        outcome: ran.outcome,
                        duration: began.elapsed(),
                        output: ran.output,
                    };
                    if tx.send(Progress::Ended(i, run)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        // Results are sent in the lesson's order: each as soon as every check before it is
        // sent, so the stream is the same from run to run whatever finished first.
        let mut shown = 0;
        // Under --fail-fast: the first failure in the lesson's order so far. What finished
        // after it in that order is dropped (not run), so the run reads the same every time.
        let mut first_failure = usize::MAX;
        for progress in rx {
            let (i, run) = match progress {
                Progress::Began(i) => {
                    if !launcher.cancelled() {
                        reporter.report(&Event::CheckStarted {
                            name: selected[i].name,
                        })?;
                    }
                    continue;
                }
                Progress::Ended(i, run) => (i, run),
            };
            if settings.fail_fast && run.outcome != Outcome::Passed {
                first_failure = first_failure.min(i);
            }
            results[i] = Some(run);
            // A cancelled run's checks were stopped, not judged: nothing of them is sent.
            while shown < results.len() && shown <= first_failure && !launcher.cancelled() {
                let Some(run) = &results[shown] else {
                    break;
                };
                reporter.report(&Event::CheckFinished { run })?;
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
    let summary = Summary {
        runs: results.into_iter().flatten().collect(),
        filtered_out,
        not_run,
        listed_only: false,
        elapsed: started.elapsed(),
    };
    reporter.report(&Event::Finished {
        lesson,
        settings,
        summary: &summary,
    })?;
    Ok(summary)
}

/// What a worker thread tells the executor.
enum Progress {
    /// Check `i` (in the selection's order) started.
    Began(usize),
    /// Check `i` ended.
    Ended(usize, CheckRun),
}

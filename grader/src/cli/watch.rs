//! `watch`: re-run a lesson each time its file is saved, and take keys like rustlings: `r`
//! run again, `h` the next help level (recorded as guidance first), `l` list, `q` quit.
//! A run goes on beside the keys: a save, `r` or `q` during it stops it and its checks (a
//! learner whose code loops need not wait out every check's timeout), and `h` or `l` act
//! when it ends.
//!
//! The lessons' folder (`practice/src/`) is watched, not the files: editors save by writing
//! in place, by truncating, or by writing a temporary file and renaming it over the old
//! one, and a watch on the folder sees all three. A debouncer folds an editor's burst of
//! events into one save. Where watching does not work (some network and container file
//! systems), `--manual` runs on `r` instead.

use super::output::say;
use super::run::{build_practice, guidance_line, next_steps, save_case, Against, NotBuilt};
use super::standing::{remember, Standing};
use super::{kit_root, load_exercise, resolve_lesson, CommandError, CommandResult};
use crate::cache::learner_hash;
use crate::guidance::{GuidanceLog, Kind};
use crate::help::Help;
use crate::lessons::LESSONS;
use crate::saves::Change;
use crate::suite::{self, RunError, RunSettings};
use crate::{Lesson, LessonInfo};
use clap::Args;
use colored::Colorize;
use libtest_mimic::{Arguments, FormatSetting};
use std::collections::HashMap;
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// How long the folder must stay quiet before a burst of events counts as one save.
const DEBOUNCE: Duration = Duration::from_millis(50);

#[derive(Args)]
pub(crate) struct WatchArgs {
    /// The lesson to start with, e.g. build3 (default: the first one you started).
    #[arg(value_name = "LESSON")]
    lesson: Option<String>,
    /// Do not watch the files: press r (or Enter) to run after each save. For file systems
    /// where watching does not work.
    #[arg(long)]
    manual: bool,
    /// Seconds one check may run before it is stopped as "did not finish".
    #[arg(long, value_name = "SECS", default_value_t = 3.0, value_parser = super::run::parse_timeout)]
    timeout: f64,
}

/// What wakes the watch loop.
enum Event {
    /// A lesson's file was saved.
    Saved(&'static Lesson),
    /// A key was pressed.
    Key(u8),
    /// Standard input ended.
    InputClosed,
    /// Run number N's thread is done.
    RunEnded(usize),
    /// Saves are no longer noticed, for this reason.
    WatchStopped(String),
}

/// Runs a closure when dropped.
struct OnDrop<F: FnMut()>(F);

impl<F: FnMut()> Drop for OnDrop<F> {
    fn drop(&mut self) {
        (self.0)();
    }
}

/// A run under way: its number, its thread, and the flag that stops it.
struct Running<'scope> {
    number: usize,
    thread: std::thread::ScopedJoinHandle<'scope, ()>,
    cancel: Arc<AtomicBool>,
}

impl Running<'_> {
    /// Stops `running`, if any: its checks' processes are stopped at once (a build under way
    /// is finished first), and it shows nothing more.
    fn stop(running: Option<Running<'_>>) {
        if let Some(running) = running {
            running.cancel.store(true, Ordering::SeqCst);
            let _ = running.thread.join();
        }
    }
}

/// One lesson of the kit, with its metadata.
struct Watched {
    lesson: &'static Lesson,
    exercise: LessonInfo,
}

pub(crate) fn watch(root: Option<PathBuf>, args: WatchArgs) -> CommandResult {
    let root = kit_root(root)?;
    let lessons: Vec<Watched> = LESSONS
        .iter()
        .map(|lesson| load_exercise(&root, lesson).map(|exercise| Watched { lesson, exercise }))
        .collect::<Result<_, _>>()?;
    let mut current = match &args.lesson {
        Some(name) => resolve_lesson(name)?,
        None => first_started(&root, &lessons),
    };
    let (tx, rx) = mpsc::channel();
    let _terminal = RawInput::enter();
    read_keys(tx.clone());
    let _watcher = if args.manual {
        None
    } else {
        Some(watch_files(&root, &lessons, tx.clone()).map_err(|e| {
            CommandError::new(format!(
                "cannot watch {} for saves: {e}",
                root.join("practice").join("src").display()
            ))
            .hint("run `cargo run -p grader -- watch --manual` and press r after each save")
        })?)
    };
    let timeout = Duration::from_secs_f64(args.timeout);
    let mut help_shown: HashMap<&str, usize> = HashMap::new();
    let mut runs = 0;
    // The content each lesson's file had when it last ran, or when the watch started:
    // reading a file (the compiler does, and so does `l`) is an event too, and only a save
    // that changed a file runs its lesson.
    let mut ran: HashMap<&str, String> = lessons
        .iter()
        .map(|l| (l.lesson.name, learner_hash(&root, &l.exercise.file)))
        .collect();
    // A run goes on in a thread of its own, so that the loop keeps taking events: a save
    // or `q` during a run that loops need not wait out every check's timeout.
    std::thread::scope(|scope| {
        let root = root.as_path();
        let start = |lesson: &'static Lesson, runs: &mut usize, ran: &mut HashMap<&str, String>| {
            let watched = watched_of(&lessons, lesson);
            ran.insert(lesson.name, learner_hash(root, &watched.exercise.file));
            *runs += 1;
            let number = *runs;
            let cancel = Arc::new(AtomicBool::new(false));
            let (flag, tx) = (Arc::clone(&cancel), tx.clone());
            let thread = scope.spawn(move || {
                // Sent however the run ends, a panic included, so that held keys act.
                let _ended = OnDrop(move || {
                    let _ = tx.send(Event::RunEnded(number));
                });
                run_lesson(root, watched, timeout, number, flag);
            });
            Running {
                number,
                thread,
                cancel,
            }
        };
        // h: the next help level of lesson `current`; l: the list. The first h of a watch
        // only says what h does: a help level shown is a permanent record, and one stray key
        // must not make one.
        let mut told_about_help = false;
        let mut show = |key: u8, current: &Lesson| {
            if key == b'h' && !told_about_help {
                told_about_help = true;
                say!(
                    "\nh shows {}'s next help level, and records it in {} first: a row that \
                     stays (guidance used, not independent evidence). Press h again to see it; \
                     this watch will not ask again.",
                    current.name,
                    crate::guidance::LOG_FILE
                );
            } else if key == b'h' {
                let shown = help_shown.entry(current.name).or_insert(0);
                show_help(root, watched_of(&lessons, current), shown);
            } else {
                show_list(root);
            }
        };
        let mut under_way = Some(start(current, &mut runs, &mut ran));
        // Keys that print (h, l) pressed during a run, with the lesson current then: they act
        // when it ends, so that their text does not land in the middle of the run's (and help
        // is shown, and recorded, for the lesson it was asked for).
        let mut held: Vec<(u8, &'static Lesson)> = Vec::new();
        while let Ok(event) = rx.recv() {
            match event {
                Event::Saved(lesson) => {
                    let file = &watched_of(&lessons, lesson).exercise.file;
                    if ran.get(lesson.name) == Some(&learner_hash(root, file)) {
                        continue;
                    }
                    // The run under way judges a file that is gone.
                    Running::stop(under_way.take());
                    current = lesson;
                    under_way = Some(start(current, &mut runs, &mut ran));
                    continue;
                }
                Event::Key(b'q') | Event::Key(3) => {
                    Running::stop(under_way.take());
                    break;
                }
                // No more keys will come: let the run finish, act on the keys held, then end.
                Event::InputClosed => {
                    if let Some(running) = under_way.take() {
                        let _ = running.thread.join();
                    }
                    release(&mut held, args.manual, current, &mut show);
                    break;
                }
                Event::Key(b'r') | Event::Key(b'\n') => {
                    Running::stop(under_way.take());
                    under_way = Some(start(current, &mut runs, &mut ran));
                    continue;
                }
                // Pressed again before the run ends: once is enough (each help level shown
                // is recorded as guidance).
                Event::Key(key @ (b'h' | b'l')) if under_way.is_some() => {
                    if !held
                        .iter()
                        .any(|(k, g)| *k == key && g.name == current.name)
                    {
                        held.push((key, current));
                        let what = if key == b'h' {
                            format!("{}'s next help level", current.name)
                        } else {
                            "the list".to_string()
                        };
                        say!("\n({what} comes when this run ends)");
                    }
                    continue;
                }
                Event::Key(key @ (b'h' | b'l')) => show(key, current),
                Event::WatchStopped(why) => say!(
                    "\n{} saves are no longer noticed: {why}. Press r to run after each save, \
                     or q and start the watch again.",
                    "warning:".yellow().bold()
                ),
                Event::Key(_) => continue,
                Event::RunEnded(number) => {
                    // From a run stopped since (already joined), or from the one under way.
                    if under_way.as_ref().is_none_or(|r| r.number != number) {
                        continue;
                    }
                    if let Some(running) = under_way.take() {
                        let _ = running.thread.join();
                    }
                    release(&mut held, args.manual, current, &mut show);
                }
            }
            prompt(args.manual, current);
        }
    });
    say!("Stopped watching.");
    Ok(ExitCode::SUCCESS)
}

fn watched_of<'l>(lessons: &'l [Watched], lesson: &Lesson) -> &'l Watched {
    lessons
        .iter()
        .find(|l| l.lesson.name == lesson.name)
        .unwrap_or(&lessons[0])
}

/// The first lesson, in course order, whose file is no longer the stub (or the first).
fn first_started(root: &Path, lessons: &[Watched]) -> &'static Lesson {
    lessons
        .iter()
        .find(|l| super::standing::started(root, &l.exercise).unwrap_or(false))
        .map_or(LESSONS[0], |l| l.lesson)
}

/// Acts on the keys `held` during a run that has ended, each after a prompt, in the order
/// they were pressed and for the lesson each was pressed in.
fn release(
    held: &mut Vec<(u8, &'static Lesson)>,
    manual: bool,
    current: &Lesson,
    show: &mut impl FnMut(u8, &Lesson),
) {
    for (key, asked_in) in std::mem::take(held) {
        prompt(manual, current);
        show(key, asked_in);
    }
}

/// The keys, and the lesson they act on (its header may have scrolled away), in under 80
/// columns.
fn prompt(manual: bool, current: &Lesson) {
    let how = if manual {
        "r/Enter: run after a save"
    } else {
        "save to run · r: run again"
    };
    say!(
        "\n{} {} · {how} · h: help (guidance) · l: list · q: quit",
        "watch:".cyan().bold(),
        current.name.bold()
    );
}

/// Builds and runs every check of `watched`'s lesson, and shows the summary and the first
/// failure; `runs` is its number. Once `cancel` is raised it stops, showing nothing more.
fn run_lesson(
    root: &Path,
    watched: &Watched,
    timeout: Duration,
    runs: usize,
    cancel: Arc<AtomicBool>,
) {
    if std::io::stdout().is_terminal() {
        // Clear the screen and the scrollback, as rustlings does.
        let mut out = super::output::Out;
        let _ = write!(out, "\x1b[H\x1b[2J\x1b[3J");
    } else {
        say!("──── run {runs} ────");
    }
    let (lesson, exercise) = (watched.lesson, &watched.exercise);
    say!(
        "{} · {} · {}",
        lesson.name.bold(),
        exercise.title,
        exercise.file.display()
    );
    // Every check runs, the one that reads the lesson's input too.
    crate::check_input::want(lesson.name);
    // Its fork servers start during the build, and those no check took stop with the run.
    let _prestarted = crate::child::PrestartedRun;
    let prestart = crate::compile::Prestart {
        servers: suite::default_threads().min(lesson.checks.len()),
        // The limits of the launcher below (`Built::launcher`'s: the default ones).
        limits: grader_checks::limits::Limits::default(),
    };
    let built = match build_practice(root, exercise, Some(prestart)) {
        Ok(built) => built,
        Err(NotBuilt {
            failure, standing, ..
        }) => {
            remember(root, lesson, exercise, &standing, None);
            say!("{} {}", "error:".red().bold(), failure.message);
            if let Some(hint) = failure.hint {
                say!("{} {hint}", "hint:".cyan().bold());
            }
            return;
        }
    };
    let launcher = built.launcher().cancel_with(cancel);
    if launcher.cancelled() {
        return;
    }
    let args = Arguments {
        format: Some(FormatSetting::Terse),
        ..Arguments::default()
    };
    let settings = RunSettings {
        unfinished_hint: format!(
            "Write its body in {} (lesson: exercises/{}/{}).",
            exercise.file.display(),
            lesson.name,
            exercise.lesson.display()
        ),
        ..RunSettings::new(Against::Practice.name(), timeout)
    };
    let mut out = super::output::Out;
    let ran = {
        let mut printer = crate::printers::for_args(&args, &mut out);
        suite::run(lesson, &launcher, &(&args).into(), &settings, &mut *printer)
    };
    let summary = match ran {
        Ok(summary) => summary,
        // Stopped for a newer run or for q: the terse marks so far end their line.
        Err(RunError::Cancelled) => {
            say!("");
            return;
        }
        Err(e) => {
            say!("{} could not run the checks: {e}", "error:".red().bold());
            return;
        }
    };
    drop(built);
    // The exhaustive check's message says the grader saves its case: as a plain run does.
    let _ = save_case(root, lesson, &summary, None, false, &mut out);
    remember(
        root,
        lesson,
        exercise,
        &Standing::of(&summary),
        Some(&summary),
    );
    let log = GuidanceLog::in_kit(root);
    let _ = guidance_line(&log, lesson, summary.all_passed(), true, &mut out);
    if summary.all_passed() {
        let _ = next_steps(root, lesson, exercise, &mut out);
    }
}

/// Shows the next help level of `watched`'s lesson, recorded as guidance first.
fn show_help(root: &Path, watched: &Watched, shown: &mut usize) {
    let dir = watched.exercise.dir(root);
    let help = match Help::load(&dir) {
        Ok(help) => help,
        Err(e) => {
            say!("{} {e}", "error:".red().bold());
            return;
        }
    };
    if *shown > 0 && *shown >= help.levels.len() {
        // One stray key past the last level must not be a permanent record.
        say!(
            "\nYou have seen every help level of {} in this watch ({} of {}): nothing was \
             shown again, nothing recorded. `cargo run -p grader -- help {} --level N` shows \
             one again (recorded).",
            watched.lesson.name,
            help.levels.len(),
            help.levels.len(),
            watched.lesson.name
        );
        return;
    }
    let level_number = (*shown + 1).min(help.levels.len().max(1));
    let level = match help.level(level_number) {
        Ok(level) => level,
        Err(e @ crate::help::HelpError::Withheld { .. }) => {
            // Passed over, not recorded: the next key shows the level after it.
            say!("\n{e}");
            *shown = level_number;
            return;
        }
        Err(_) => {
            say!(
                "{} {} has no help",
                "error:".red().bold(),
                watched.lesson.name
            );
            return;
        }
    };
    let recorded = GuidanceLog::in_kit(root).append(
        watched.lesson.name,
        Kind::Help,
        &format!("level {level_number}: {} (watch)", level.name),
    );
    match recorded {
        Ok(record) => {
            *shown = level_number;
            say!(
                "\n{} — help, level {level_number} of {}: {}\n\n{}\n\n(Recorded as guidance #{} in GUIDANCE_LOG.md.)",
                watched.exercise.title,
                help.levels.len(),
                level.name,
                level.text.trim_end(),
                record.seq
            );
        }
        Err(e) => say!(
            "{} {e}; no help was shown (guidance is recorded before it is shown)",
            "error:".red().bold()
        ),
    }
}

fn show_list(root: &Path) {
    say!();
    if let Err(failure) = super::list::table(root) {
        say!("{} {}", "error:".red().bold(), failure.message);
    }
}

/// Starts watching the lessons' folder; each save of a lesson's file is sent as an event.
fn watch_files(
    root: &Path,
    lessons: &[Watched],
    tx: mpsc::Sender<Event>,
) -> std::io::Result<crate::saves::Saves> {
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let files: Vec<(PathBuf, &'static Lesson)> = lessons
        .iter()
        .map(|l| (canonical(&root.join(&l.exercise.file)), l.lesson))
        .collect();
    let folder = canonical(&root.join("practice").join("src"));
    crate::saves::Saves::watch(&folder, DEBOUNCE, move |change| match change {
        Change::Saved(saved) => {
            // A rename leaves the new file at the lesson's path: match by path.
            let path = canonical(&saved);
            if let Some((_, lesson)) = files.iter().find(|(f, _)| *f == path) {
                let _ = tx.send(Event::Saved(lesson));
            }
        }
        Change::Stopped(why) => {
            let _ = tx.send(Event::WatchStopped(why));
        }
    })
}

/// Reads keys from standard input on a thread of their own.
fn read_keys(tx: mpsc::Sender<Event>) {
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        let mut byte = [0u8; 1];
        loop {
            match stdin.read(&mut byte) {
                Ok(1) => {
                    if tx.send(Event::Key(byte[0])).is_err() {
                        return;
                    }
                }
                _ => {
                    let _ = tx.send(Event::InputClosed);
                    return;
                }
            }
        }
    });
}

/// Standard input without line buffering or echo while watching (on a terminal), so a key
/// acts at once; the settings come back when this is dropped, or on an ending signal
/// ([`restore_terminal`]).
struct RawInput;

/// The terminal's settings from before the watch changed them, while it has them changed.
#[cfg(unix)]
static SAVED: std::sync::Mutex<Option<rustix::termios::Termios>> = std::sync::Mutex::new(None);

/// Gives the terminal back the settings a watch changed, if it changed them.
pub(crate) fn restore_terminal() {
    #[cfg(unix)]
    if let Some(saved) = SAVED.lock().ok().and_then(|mut s| s.take()) {
        let _ = rustix::termios::tcsetattr(
            std::io::stdin(),
            rustix::termios::OptionalActions::Now,
            &saved,
        );
    }
}

impl RawInput {
    fn enter() -> RawInput {
        #[cfg(unix)]
        {
            use rustix::termios::{tcgetattr, tcsetattr, LocalModes, OptionalActions};
            let stdin = std::io::stdin();
            if !stdin.is_terminal() {
                return RawInput;
            }
            let Ok(saved) = tcgetattr(&stdin) else {
                return RawInput;
            };
            let mut raw = saved.clone();
            raw.local_modes
                .remove(LocalModes::ICANON | LocalModes::ECHO);
            if let Ok(mut kept) = SAVED.lock() {
                *kept = Some(saved);
            }
            if tcsetattr(&stdin, OptionalActions::Now, &raw).is_err() {
                restore_terminal();
            }
        }
        RawInput
    }
}

impl Drop for RawInput {
    fn drop(&mut self) {
        restore_terminal();
    }
}

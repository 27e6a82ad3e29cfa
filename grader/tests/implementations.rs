//! Drives the grader, end to end through child processes, with test-only implementations:
//! a correct one, realistic mistakes, a stub, and hostile code that loops, panics, aborts,
//! overflows its stack or exits. Nothing here reads `practice/`.
//!
//! This binary is its own harness: started with `GRADER_TEST_IMPL=<name>`, it serves one
//! check for that implementation, exactly as the practice harness does for a learner.

mod support;

use grader::suite::{self, RunSettings, Summary};
use grader::Launcher;
use grader_checks::lessons::build3::scenario::Scenario;
use grader_checks::lessons::{self, build2, build3, stage8};
use grader_checks::limits::Limits;
use grader_checks::sandbox;
use grader_checks::{FailureKind, Lesson, Outcome, Status};
use libtest_mimic::{Arguments, Failed, FormatSetting, Trial};
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;
use support::impls;

const IMPL_VAR: &str = "GRADER_TEST_IMPL";

/// The test implementation this process serves, when it runs as a harness.
static LABEL: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Runs a job on the test implementation named by [`LABEL`]: in a runner (this
/// program again, started as one), as a learner's is, unless [`IN_PROCESS_VAR`] is set.
fn serve(lesson: &str, job: &grader_checks::Job) -> Option<grader_checks::Report> {
    let label = LABEL.get()?;
    let runner = || {
        let me = std::env::current_exe().map_err(|source| kit_runner::SetupError::Start {
            program: "this test program".into(),
            source,
        })?;
        kit_runner::remote::Runner::start(&me, lesson).map(std::sync::Arc::new)
    };
    let kit_bug = |error: kit_runner::SetupError| grader_checks::Report::KitBug {
        message: error.to_string(),
        location: None,
    };
    match lesson {
        "build2" if in_runner(lesson) => {
            impls::build2(label)?;
            Some(runner().map_or_else(kit_bug, |runner| {
                build2::run(job, &build2::Learner::Runner(runner))
            }))
        }
        "build2" => Some(build2::run(job, &impls::build2(label)?)),
        "build3" if in_runner(lesson) => {
            impls::build3(label)?;
            Some(runner().map_or_else(kit_bug, |runner| {
                build3::run(job, &build3::Learner::Runner(runner))
            }))
        }
        "build3" => Some(build3::run(job, &impls::build3(label)?)),
        "stage8" if in_runner(lesson) => {
            impls::stage8(label)?;
            Some(runner().map_or_else(kit_bug, |runner| {
                stage8::run(job, &stage8::Learner::Runner(runner))
            }))
        }
        "stage8" => Some(stage8::run(job, &impls::stage8(label)?)),
        // A lesson that keeps its trials in its own folder.
        name => {
            let trials = lessons::lesson(name)?.trials?;
            if in_runner(lesson) {
                (trials.function)(label)?;
                match runner() {
                    Ok(runner) => (trials.run)(label, job, Some(runner)),
                    Err(error) => Some(kit_bug(error)),
                }
            } else {
                (trials.run)(label, job, None)
            }
        }
    }
}

/// Set for a harness that does not serve forks (the way a harness without the mode would
/// answer): its sessions start a program per check.
const NO_FORKS_VAR: &str = "GRADER_TEST_NO_FORKS";

/// Set for a harness that runs build3's test implementations in its own process (as a
/// harness cargo linked with the learner's crate does), not in a runner.
const IN_PROCESS_VAR: &str = "GRADER_TEST_IN_PROCESS";

/// The test implementations that look at the process they run in and its parent, to test
/// the fork server that starts checks: they run in the check's own process, as they would
/// in a harness cargo linked (in a runner, their parent would be the judge).
const IN_PROCESS_LABELS: [&str; 3] = ["names_its_parent", "kills_its_parent", "stops_its_parent"];

/// Whether this harness runs `lesson`'s learner's code in a runner.
fn in_runner(lesson: &str) -> bool {
    lessons::lesson(lesson).is_some()
        && std::env::var_os(IN_PROCESS_VAR).is_none()
        && !LABEL
            .get()
            .is_some_and(|label| IN_PROCESS_LABELS.contains(&label.as_str()))
}

/// The runner's side of this program: the test implementation's function, by lesson. It is
/// called where a runner loads the learner's library: `threads_at_load` starts a thread
/// there, as a library's constructor could.
fn runner_function(lesson: &str) -> Result<kit_runner::runner::Function, kit_runner::SetupError> {
    let label = LABEL.get().ok_or(kit_runner::SetupError::Unset {
        var: IMPL_VAR,
        what: "test implementation",
    })?;
    if label == "threads_at_load" {
        let started = std::thread::Builder::new()
            .spawn(|| std::thread::sleep(Duration::from_secs(5)))
            .is_ok();
        let _ = impls::THREAD_AT_LOAD.set(started);
    }
    let function = match lesson {
        "build2" => match impls::build2(label) {
            Some(build2::Learner::Here(f)) => Some(kit_runner::runner::Function::Build2(f)),
            _ => None,
        },
        "build3" => match impls::build3(label) {
            Some(build3::Learner::Here(f)) => Some(kit_runner::runner::Function::Build3(f)),
            _ => None,
        },
        "stage8" => match impls::stage8(label) {
            Some(stage8::Learner::Here(f)) => Some(kit_runner::runner::Function::Stage8(f)),
            _ => None,
        },
        name => lessons::lesson(name)
            .and_then(|g| g.trials)
            .and_then(|trials| (trials.function)(label)),
    };
    function.ok_or_else(|| {
        kit_runner::SetupError::UnknownLesson(format!("{lesson} (test implementation {label:?})"))
    })
}

fn main() -> ExitCode {
    if let Ok(label) = std::env::var(IMPL_VAR) {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let _ = LABEL.set(label);
        #[cfg(target_os = "linux")]
        if std::env::var_os(NO_LANDLOCK_VAR).is_some() {
            assert!(
                support::no_landlock::refuse_landlock(),
                "the test's seccomp filter could not be installed"
            );
        }
        // Started by a judge (below) as the runner of a lesson: its one argument.
        if args.len() == 1 && args[0] != grader_checks::forks::SERVER_ARG {
            return kit_runner::main(runner_function);
        }
        let served = grader_checks::serve::Served {
            run: serve,
            in_runner,
        };
        if std::env::var_os(NO_FORKS_VAR).is_some() {
            return grader_checks::serve::main_with(&args, served);
        }
        // A fork server starts the runner zygote (this program again) as the grader's judge
        // does, and the checks it forks get their runners from it: the trials run the
        // learner's side as a learner's runs, forked from a zygote.
        if let Ok(me) = std::env::current_exe() {
            std::env::set_var(kit_runner::remote::PROGRAM_VAR, me);
        }
        return grader_checks::harness_main_with(&args, served);
    }
    let mut args = Arguments::from_args();
    // The trials mostly wait (on the processes they start, on a check's timeout), so twice
    // as many threads as cores keep the cores busy; no more than 8 (on 2 cores, 8 made
    // timing-bound trials fail). `--test-threads` and RUST_TEST_THREADS still choose, as for
    // a test binary of libtest's.
    args.test_threads = args
        .test_threads
        .or_else(|| match std::env::var("RUST_TEST_THREADS") {
            Ok(n) => n.parse().ok(),
            Err(_) => std::thread::available_parallelism()
                .ok()
                .map(|n| (2 * n.get()).min(8)),
        })
        .filter(|&n| n > 0);
    // In the order they start: the groups whose trials wait longest first (a check stopped
    // at its timeout, a server that never answers), so that none of them is left to run
    // alone at the end.
    let mut all = Vec::new();
    #[cfg(target_os = "linux")]
    all.extend(fork_trials());
    #[cfg(unix)]
    all.extend(runner_trials());
    #[cfg(target_os = "linux")]
    all.extend(sandbox_trials());
    all.extend(MISTAKES.iter().map(mistake_trial));
    all.extend(lesson_mistake_trials());
    all.extend(trials());
    all.extend(stage8_trials());
    all.extend(build2_trials());
    all.extend(lesson_trials());
    libtest_mimic::run(&args, all).exit_code()
}

/// Set for a harness that plays a system without Landlock (an old kernel, or a container
/// whose seccomp profile does not know its calls): see `support::no_landlock`.
const NO_LANDLOCK_VAR: &str = "GRADER_TEST_NO_LANDLOCK";

/// The runner's boundary: what the learner's code in a runner sends is judged, never
/// trusted, and a check's verdict does not depend on the checks run before it.
#[cfg(unix)]
fn runner_trials() -> Vec<Trial> {
    vec![
        Trial::test(
            "an_answer_forged_on_the_runners_socket_is_never_a_pass",
            || {
                for (label, said) in [
                    ("forges_garbage_answers", "an answer the check cannot read"),
                    (
                        "forges_an_inconsistent_answer",
                        "an answer the check cannot read",
                    ),
                ] {
                    let (summary, out) = grade(label, "fixtures::", 10.0);
                    ensure(summary.count(Status::Passed) == 0, || {
                        format!("{label}: a forged answer passed\n{out}")
                    })?;
                    ensure(summary.kit_bugs() == 0, || format!("{label}: {out}"))?;
                    expect_failed(
                        &summary,
                        "fixtures::third_attempt_success",
                        FailureKind::Panic,
                        &[said],
                    )?;
                }
                Ok(())
            },
        ),
        #[cfg(target_os = "linux")]
        Trial::test("a_runner_starts_no_threads_for_the_learners_code", || {
            // 500 threads that would each take a share of the CPU from the class's other
            // submissions: the first is refused, and the check says why.
            let (summary, out) = grade("spawns_threads", "fixtures::third_attempt_success", 10.0);
            ensure(summary.count(Status::Passed) == 0, || out.clone())?;
            expect_failed(
                &summary,
                "fixtures::third_attempt_success",
                FailureKind::Limit,
                &["may start none"],
            )
        }),
        Trial::test(
            "a_runner_cannot_stop_its_parent_through_a_files_owner",
            || {
                // Each check's code makes its parent (the runner zygote its judge asked, or
                // the judge that started it) the owner of a pipe that then signals SIGSTOP,
                // then answers correctly. Refused, every check passes; let through, the
                // first check's judge waits for a stopped zygote, and every later one of that
                // server for an answer it never gets (bounded: 3 s a check).
                let (summary, out) =
                    grade("stops_its_parent_through_a_files_owner", "fixtures::", 3.0);
                ensure(summary.runs.len() == 8 && summary.all_passed(), || {
                    out.clone()
                })
            },
        ),
        Trial::test(
            "a_runner_leaves_no_mark_that_a_later_checks_runner_sees",
            || {
                // Its standard input's flags and a lock on it, left by each check's runner and
                // looked for by the next: each runner's input is its own, and locks are
                // refused, so every check passes as it would alone.
                let (summary, out) = grade("leaves_marks_for_the_next_check", "fixtures::", 10.0);
                ensure(summary.runs.len() == 8 && summary.all_passed(), || {
                    out.clone()
                })
            },
        ),
        Trial::test(
            "a_verdict_does_not_depend_on_the_checks_run_before_it",
            || {
                // Right on the first two calls of a process, wrong after: each check's runner is
                // a process of its own, so a run of every check gives what each gives alone.
                let (all, out) = grade("counts_across_checks", "fixtures::", 10.0);
                ensure(all.runs.len() == 8, || out.clone())?;
                for run in &all.runs {
                    let (alone, alone_out) = grade_exact("counts_across_checks", run.name);
                    let status = |s: &Summary| s.runs.first().map(|r| r.outcome.status());
                    ensure(status(&alone) == Some(run.outcome.status()), || {
                        format!("{}: alone {alone_out}\nin the run {out}", run.name)
                    })?;
                }
                // One call per check passes; a check that calls twice or more does not.
                ensure(all.count(Status::Passed) > 0, || out.clone())?;
                Ok(())
            },
        ),
    ]
}

/// Requires `lesson`'s exhaustive check to fail on test implementation `label` with a
/// message holding `says`, in a runner and in the check's own process (as with the fast
/// paths on and off).
#[cfg(unix)]
fn exhaustive_fails_both_ways(lesson: &Lesson, label: &str, says: &str) -> Result<(), Failed> {
    for in_process in [false, true] {
        let me = std::env::current_exe().expect("the test binary knows its own path");
        let mut launcher = Launcher::new(me);
        if in_process {
            launcher = launcher.env(IN_PROCESS_VAR, "1");
        }
        let (summary, out) = grade_launched(
            lesson,
            launcher,
            label,
            "exhaustive::",
            30.0,
            FormatSetting::Pretty,
        );
        expect_failed(
            &summary,
            "exhaustive::matches_reference_on_every_case",
            FailureKind::Mismatch,
            &[says],
        )
        .map_err(|e| {
            format!(
                "{} (in its own process: {in_process}): {}\n{out}",
                lesson.name,
                e.message().unwrap_or_default()
            )
        })?;
    }
    Ok(())
}

/// Runs the one check `name` of build3 on test implementation `label`.
#[cfg(unix)]
fn grade_exact(label: &str, name: &str) -> (Summary, String) {
    grade(label, name, 10.0)
}

/// Set to a path that this program, as a harness, tries to write before its `main` runs, as
/// a constructor in a learner's crate could: see `a_constructor_before_main_runs_confined`.
const CONSTRUCTOR_VAR: &str = "GRADER_TEST_CONSTRUCTOR_WRITES";

/// The constructor: runs before `main` in every process of this program.
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static CONSTRUCTOR: extern "C" fn() = {
    extern "C" fn before_main() {
        if let Some(path) = std::env::var_os(CONSTRUCTOR_VAR) {
            let _ = std::fs::write(path, "written before main");
        }
    }
    before_main
};

/// The expected result of `probes_its_sandbox` where every protection is on.
const ALL_REFUSED: &str = "refused: a thread, fork, exec, read a kit file, read its own program (the \
     symbol table), read /etc/passwd, list the system's libraries, read the libraries' debug \
     information, read a program through a link in the library folders, read its own memory, read its parent's memory, read its \
     parent's input, read its parent's memory (process_vm_readv), list its folder, write a file, write \
     /tmp, a signal to its parent, a signal to its process group, a file's owner (F_SETOWN), \
     a file's owner (FIOSETOWN), a lock on a file (flock), a lock on a file (fcntl), clear its \
     parent-death signal, a signal to every process, a TCP socket, a new session, \
     memory outside the limit (memfd), change a file's mode, read another process's limits, \
     set a priority, watch files (fanotify), watch files (inotify), System V shared memory, \
     read the kernel log's size | allowed: a signal to itself";

/// Whether the files two of the probe's attempts aim at exist here, unconfined: the
/// libraries' separate debug information (Debian's `libc6-dbg`) and a link in a library
/// folder to a program (`cpp`'s `/usr/lib/cpp`). Where one is missing, its attempt is
/// refused whatever the sandbox does: the trial says so, and fails when
/// `KIT_REQUIRE_PROBE_TARGETS` is set (as `.ci/run`, which installs both, sets it).
#[cfg(target_os = "linux")]
fn probe_targets_present() -> Result<(), Failed> {
    let debug = ["/usr/lib/debug", "/lib/debug"]
        .iter()
        .any(|folder| std::fs::read_dir(folder).is_ok_and(|mut entries| entries.next().is_some()));
    let link = std::fs::symlink_metadata("/usr/lib/cpp").is_ok_and(|m| m.is_symlink())
        && std::fs::read("/usr/lib/cpp").is_ok();
    let absent: Vec<&str> = [
        (!debug).then_some("no debug information in /usr/lib/debug (apt-get install libc6-dbg)"),
        (!link).then_some("no /usr/lib/cpp link to a program (apt-get install cpp)"),
    ]
    .into_iter()
    .flatten()
    .collect();
    if absent.is_empty() {
        return Ok(());
    }
    ensure(
        std::env::var_os("KIT_REQUIRE_PROBE_TARGETS").is_none(),
        || {
            format!(
                "KIT_REQUIRE_PROBE_TARGETS is set, and {}",
                absent.join("; ")
            )
        },
    )?;
    eprintln!(
        "!! two of the sandbox probe's attempts aim at nothing here, and are refused whatever \
         the sandbox does: {}",
        absent.join("; ")
    );
    Ok(())
}

/// The sandbox's (Linux): what a check's process may still do, where the system gives every
/// protection and where it lacks Landlock.
#[cfg(target_os = "linux")]
fn sandbox_trials() -> Vec<Trial> {
    fn probed(launcher: Launcher) -> Result<String, Failed> {
        let (summary, out) = grade_launched(
            &build3::LESSON,
            launcher,
            "probes_its_sandbox",
            "fixtures::permanent_error",
            10.0,
            FormatSetting::Pretty,
        );
        let Some(Outcome::Failed { message, .. }) = summary.runs.first().map(|r| &r.outcome) else {
            return Err(format!("the probe did not fail as it always does\n{out}").into());
        };
        Ok(message.clone())
    }
    let me = || std::env::current_exe().expect("the test binary knows its own path");
    let required = Limits {
        sandbox: sandbox::Mode::Required,
        ..Limits::default()
    };
    vec![
        Trial::test(
            "the_sandbox_refuses_what_a_pure_function_never_needs",
            move || {
                let missing = sandbox::probe();
                ensure(missing.is_empty(), || {
                    format!("this system cannot give the whole sandbox: {missing:?}")
                })?;
                probe_targets_present()?;
                // Forked from a fork server, and started as a program of its own: the same.
                for launcher in [
                    Launcher::new(me()),
                    Launcher::new(me()).env(NO_FORKS_VAR, "1"),
                ] {
                    let message = probed(launcher.limits(required))?;
                    ensure(message.contains(ALL_REFUSED), || message.clone())?;
                }
                Ok(())
            },
        ),
        Trial::test("stage8s_runner_is_confined_as_build3s", move || {
            // Its concurrent lookups run on threads the runner started before it refused new
            // ones: everything is refused as in build3's, threads too.
            let (summary, out) = grade_launched(
                &stage8::LESSON,
                Launcher::new(me()).limits(required),
                "probes_its_sandbox",
                "facts::fixture",
                10.0,
                FormatSetting::Pretty,
            );
            let Some(Outcome::Failed { message, .. }) = summary.runs.first().map(|r| &r.outcome)
            else {
                return Err(format!("the probe did not fail as it always does\n{out}").into());
            };
            ensure(message.contains(ALL_REFUSED), || message.clone())?;
            // Threads are refused before the learner's library loads: its constructors can
            // start none either.
            let (summary, out) = grade_launched(
                &stage8::LESSON,
                Launcher::new(me()).limits(required),
                "threads_at_load",
                "facts::fixture",
                10.0,
                FormatSetting::Pretty,
            );
            ensure(
                out.contains("a thread started when the library loaded: Some(false)"),
                || out.clone(),
            )?;
            ensure(summary.count(Status::Passed) == 0, || out.clone())?;
            // And the concurrency check still runs its eight threads of lookups there.
            let (summary, out) = grade_launched(
                &stage8::LESSON,
                Launcher::new(me()).limits(required),
                "correct",
                "counters::",
                10.0,
                FormatSetting::Pretty,
            );
            ensure(summary.all_passed() && summary.runs.len() == 1, || {
                out.clone()
            })?;
            let (summary, out) = grade_launched(
                &stage8::LESSON,
                Launcher::new(me()).limits(required),
                "spawns_threads",
                "facts::fixture",
                10.0,
                FormatSetting::Pretty,
            );
            expect_failed(
                &summary,
                "facts::fixture_503_503_200",
                FailureKind::Limit,
                &["may start none"],
            )
            .map_err(|e| format!("{}\n{out}", e.message().unwrap_or_default()).into())
        }),
        Trial::test(
            "without_landlock_seccomp_still_refuses_processes_and_signals",
            move || {
                let message = probed(Launcher::new(me()).env(NO_LANDLOCK_VAR, "1"))?;
                ensure(
                message.contains(
                    "refused: a thread, fork, exec, read its parent's memory, read its parent's input, \
                     read its parent's memory (process_vm_readv), a signal to its parent, a \
                     signal to its process group, a file's owner (F_SETOWN), a file's owner \
                     (FIOSETOWN), a lock on a file (flock), a lock on a file (fcntl), clear its \
                     parent-death signal, a signal to \
                     every process, a TCP socket, a new session, memory outside the limit (memfd), change a \
                     file's mode, read another process's limits, set a priority, watch files \
                     (fanotify), watch files (inotify), System V shared memory, read the \
                     kernel log's size | allowed: a signal to itself, read a kit file",
                ),
                || message.clone(),
            )
            },
        ),
        Trial::test("a_constructor_before_main_runs_confined", move || {
            // A harness with code linked in that runs before `main` (as a learner's crate may
            // hold): started as a program per check, never as a fork server.
            for (mode, written) in [
                (sandbox::Mode::Off, true),
                (sandbox::Mode::BestEffort, false),
            ] {
                let scratch = tempfile::tempdir().expect("a scratch folder");
                let target = scratch.path().join("before-main.txt");
                let launcher = Launcher {
                    learner_linked: true,
                    ..Launcher::new(me())
                }
                .env(CONSTRUCTOR_VAR, &target)
                .env(IN_PROCESS_VAR, "1")
                .limits(Limits {
                    sandbox: mode,
                    ..Limits::default()
                });
                let (summary, out) = grade_launched(
                    &build3::LESSON,
                    launcher,
                    "correct",
                    "fixtures::permanent_error",
                    10.0,
                    FormatSetting::Pretty,
                );
                ensure(summary.count(Status::Passed) == 1, || out.clone())?;
                ensure(target.exists() == written, || {
                    format!(
                        "sandbox {}: the constructor's file exists: {}",
                        mode.name(),
                        target.exists()
                    )
                })?;
            }
            Ok(())
        }),
        Trial::test(
            "a_kit_panic_caught_and_raised_again_is_not_a_kit_bug",
            || {
                let (summary, out) = grade("forges_a_kit_bug", "fixtures::", 10.0);
                ensure(summary.kit_bugs() == 0, || out.clone())?;
                expect_failed(
                    &summary,
                    "fixtures::third_attempt_success",
                    FailureKind::Panic,
                    &["caught: true"],
                )
            },
        ),
        Trial::test("an_exit_handler_cannot_rewrite_the_report", || {
            // The handler would leave a report that cannot be read: a failure. Not run, the
            // report written stands, and the correct code passes.
            let (summary, out) = grade(
                "rewrites_its_report_at_exit",
                "fixtures::permanent_error",
                10.0,
            );
            ensure(summary.count(Status::Passed) == 1, || out.clone())
        }),
        Trial::test(
            "a_required_sandbox_that_cannot_be_had_runs_no_code",
            move || {
                let launcher = Launcher::new(me())
                    .env(NO_LANDLOCK_VAR, "1")
                    .limits(required);
                let message = probed(launcher)?;
                ensure(
                    message.contains("the sandbox could not be set up")
                        && message.contains("Landlock")
                        && !message.contains("refused:"),
                    || message.clone(),
                )
            },
        ),
    ]
}

/// The fork server's (Linux): a run's checks are forked from it, and a check that kills it
/// is a crash, not the end of the run.
#[cfg(target_os = "linux")]
fn fork_trials() -> Vec<Trial> {
    vec![
        Trial::test(
            "checks_of_a_run_are_forked_from_one_server_per_thread",
            || {
                // The checks of a run (a session per thread) start as forks of a fork server,
                // not as programs started by the grader; a launcher's single run still starts one.
                let (summary, out) = grade_with(
                    "names_its_parent",
                    "fixtures::",
                    10.0,
                    FormatSetting::Pretty,
                );
                let me = std::process::id();
                let mut parents = std::collections::BTreeSet::new();
                for check in [
                    "fixtures::permanent_error",
                    "fixtures::third_attempt_success",
                ] {
                    let Some(Outcome::Failed { message, .. }) = summary.outcome(check) else {
                        return Err(format!("{check} did not fail as expected\n{out}").into());
                    };
                    let parent =
                        parent_named(message).ok_or_else(|| format!("no parent in {message:?}"))?;
                    ensure(parent != me, || {
                        format!("{check} was started by the grader itself\n{out}")
                    })?;
                    parents.insert(parent);
                }
                let ran = summary.count(Status::Failed);
                ensure(ran == 8, || out.clone())?;
                ensure(parents.len() <= suite::default_threads(), || {
                    format!("{} servers for {ran} checks\n{out}", parents.len())
                })?;
                let me_path = std::env::current_exe().expect("the test binary knows its own path");
                let scratch = tempfile::tempdir().expect("a scratch folder");
                let ran = Launcher::new(me_path)
                    .env(IMPL_VAR, "names_its_parent")
                    .run(
                        "build3",
                        "fixtures::permanent_error",
                        scratch.path(),
                        grader::Deadlines::flat(Duration::from_secs(10), ""),
                    );
                let Outcome::Failed { message, .. } = &ran.outcome else {
                    return Err(format!("a single run did not fail: {:?}", ran.outcome).into());
                };
                ensure(parent_named(message) == Some(me), || message.clone())
            },
        ),
        Trial::test(
            "a_check_that_kills_its_server_is_a_crash_and_the_run_goes_on",
            || {
                let (summary, out) = grade_unconfined("kills_its_parent", "fixtures::", 10.0);
                ensure(
                    summary.count(Status::Passed) == 0 && summary.count(Status::Failed) == 8,
                    || out.clone(),
                )?;
                expect_failed(
                    &summary,
                    "fixtures::third_attempt_success",
                    FailureKind::Crash,
                    &["the process that started the check was stopped"],
                )
            },
        ),
        Trial::test(
            "a_check_that_stops_its_server_is_stopped_not_waited_for",
            || {
                // The server cannot report the end: the check is stopped at its timeout, the
                // server, which does not answer, is dropped, and the message says why. (The
                // check stops its server at once: a second of timeout is plenty, and it is
                // waited out whole.)
                let (summary, out) =
                    grade_unconfined("stops_its_parent", "fixtures::permanent_error", 1.0);
                expect_failed(
                    &summary,
                    "fixtures::permanent_error",
                    FailureKind::Timeout,
                    &["did not say how it ended"],
                )
                .map_err(|e| format!("{}\n{out}", e.message().unwrap_or_default()).into())
            },
        ),
        Trial::test("a_forked_check_holds_no_descriptor_but_its_streams", || {
            // Several threads, so that servers start while other checks run.
            let (summary, out) = grade_unconfined("names_its_descriptors", "fixtures::", 10.0);
            ensure(summary.count(Status::Failed) == 8, || out.clone())?;
            for check in summary.runs.iter() {
                let Outcome::Failed { message, .. } = &check.outcome else {
                    return Err(format!("{} did not fail\n{out}", check.name).into());
                };
                // Descriptor 3 is its report, which the harness opens before the job runs
                // (a confined process can open no file to write).
                ensure(message.contains("descriptors [3]"), || {
                    format!("{}: {message}\n{out}", check.name)
                })?;
            }
            Ok(())
        }),
        Trial::test(
            "a_harness_that_does_not_serve_forks_still_gets_every_check_run",
            || {
                let me = std::env::current_exe().expect("the test binary knows its own path");
                let launcher = Launcher::new(me).env(NO_FORKS_VAR, "1");
                let (summary, out) = grade_launched(
                    &build3::LESSON,
                    launcher,
                    "names_its_parent",
                    "fixtures::",
                    10.0,
                    FormatSetting::Pretty,
                );
                ensure(summary.count(Status::Failed) == 8, || out.clone())?;
                let me = std::process::id();
                for check in summary.runs.iter() {
                    let Outcome::Failed { message, .. } = &check.outcome else {
                        return Err(format!("{} did not fail\n{out}", check.name).into());
                    };
                    ensure(parent_named(message) == Some(me), || {
                        format!("{} was not started by the grader: {message}", check.name)
                    })?;
                }
                Ok(())
            },
        ),
        Trial::test(
            "what_a_check_leaves_in_its_folder_never_reaches_the_next",
            || {
                // One thread, so that every check would run in the same folder: the first leaves
                // a file, the second a folder named report.json (so its own report cannot be
                // written); the others must not pay for either.
                let marker = tempfile::tempdir().expect("a scratch folder");
                let me = std::env::current_exe().expect("the test binary knows its own path");
                let launcher = Launcher::new(me)
                    .limits(unconfined())
                    .env(IMPL_VAR, "fouls_its_folder_once")
                    .env(impls::FOUL_MARKER_VAR, marker.path().join("fouled"));
                let args = Arguments {
                    filter: Some("fixtures::".to_string()),
                    test_threads: Some(1),
                    ..Arguments::default()
                };
                let settings = RunSettings::new("fouls", Duration::from_secs(10));
                let mut out = Vec::new();
                let summary = suite::run(
                    &build3::LESSON,
                    &launcher,
                    &(&args).into(),
                    &settings,
                    &mut *grader::printers::for_args(&args, &mut out),
                )
                .expect("printing into memory cannot fail");
                let out = String::from_utf8_lossy(&out).into_owned();
                ensure(marker.path().join("fouled.folder").exists(), || {
                    format!("no check fouled its folder twice\n{out}")
                })?;
                ensure(
                    summary.count(Status::Passed) == 7 && summary.count(Status::Failed) == 1,
                    || out.clone(),
                )?;
                ensure(
                    summary.runs.iter().any(|r| {
                        matches!(
                            &r.outcome,
                            Outcome::Failed {
                                kind: FailureKind::Crash,
                                ..
                            }
                        )
                    }),
                    || format!("the second fouler's own check is the crash\n{out}"),
                )
            },
        ),
    ]
}

/// The process id in a `parent N` panic message (the `names_its_parent` implementation).
fn parent_named(message: &str) -> Option<u32> {
    let rest = &message[message.find("parent ")? + "parent ".len()..];
    rest.split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// Runs the build3 checks (those matching `filter`, all when empty) against `label`.
fn grade(label: &str, filter: &str, timeout: f64) -> (Summary, String) {
    grade_with(label, filter, timeout, FormatSetting::Pretty)
}

/// The limits of a run with the sandbox off: for the trials of the defences that stand in for
/// it where a system cannot give it (process groups, leak detection, limits, the fork
/// server's guards), whose attacks the sandbox would refuse before they reach them.
fn unconfined() -> Limits {
    Limits {
        sandbox: sandbox::Mode::Off,
        ..Limits::default()
    }
}

/// [`grade`] with the sandbox off ([`unconfined`]).
fn grade_unconfined(label: &str, filter: &str, timeout: f64) -> (Summary, String) {
    let me = std::env::current_exe().expect("the test binary knows its own path");
    grade_launched(
        &build3::LESSON,
        Launcher::new(me).limits(unconfined()),
        label,
        filter,
        timeout,
        FormatSetting::Pretty,
    )
}

/// Runs the stage8 checks (those matching `filter`) against `label`.
fn grade8(label: &str, filter: &str) -> (Summary, String) {
    grade_lesson(&stage8::LESSON, label, filter, 10.0, FormatSetting::Pretty)
}

fn grade_with(label: &str, filter: &str, timeout: f64, format: FormatSetting) -> (Summary, String) {
    grade_lesson(&build3::LESSON, label, filter, timeout, format)
}

fn grade_lesson(
    lesson: &Lesson,
    label: &str,
    filter: &str,
    timeout: f64,
    format: FormatSetting,
) -> (Summary, String) {
    let me = std::env::current_exe().expect("the test binary knows its own path");
    grade_launched(lesson, Launcher::new(me), label, filter, timeout, format)
}

/// [`grade_lesson`] with the checks handed `input` on standard input.
fn grade_handed(label: &str, filter: &str, input: fn(&str, &str) -> &'static [u8]) -> String {
    let me = std::env::current_exe().expect("the test binary knows its own path");
    let launcher = Launcher {
        input,
        ..Launcher::new(me)
    };
    let (_, out) = grade_launched(
        &build3::LESSON,
        launcher,
        label,
        filter,
        30.0,
        FormatSetting::Pretty,
    );
    out
}

fn grade_launched(
    lesson: &Lesson,
    launcher: Launcher,
    label: &str,
    filter: &str,
    timeout: f64,
    format: FormatSetting,
) -> (Summary, String) {
    let settings = RunSettings {
        unfinished_hint: "Write its body.".into(),
        ..RunSettings::new(label, Duration::from_secs_f64(timeout))
    };
    grade_settled(lesson, launcher, label, filter, format, &settings)
}

/// Runs the build3 checks (those matching `filter`) against `label` with every failure
/// printed in full, as `grade` and --all-failures do.
fn grade_in_full(label: &str, filter: &str, timeout: f64) -> (Summary, String) {
    let me = std::env::current_exe().expect("the test binary knows its own path");
    let settings = RunSettings {
        all_in_full: true,
        ..RunSettings::new(label, Duration::from_secs_f64(timeout))
    };
    grade_settled(
        &build3::LESSON,
        Launcher::new(me),
        label,
        filter,
        FormatSetting::Pretty,
        &settings,
    )
}

fn grade_settled(
    lesson: &Lesson,
    launcher: Launcher,
    label: &str,
    filter: &str,
    format: FormatSetting,
    settings: &RunSettings,
) -> (Summary, String) {
    let args = Arguments {
        filter: (!filter.is_empty()).then(|| filter.to_string()),
        format: Some(format),
        ..Arguments::default()
    };
    grade_with_args(lesson, launcher, label, &args, settings)
}

/// Runs `lesson`'s checks that `args` select against `label`.
fn grade_with_args(
    lesson: &Lesson,
    launcher: Launcher,
    label: &str,
    args: &Arguments,
    settings: &RunSettings,
) -> (Summary, String) {
    let launcher = launcher.env(IMPL_VAR, label);
    let mut out = Vec::new();
    let summary = suite::run(
        lesson,
        &launcher,
        &args.into(),
        settings,
        &mut *grader::printers::for_args(args, &mut out),
    )
    .expect("printing into memory cannot fail");
    (summary, String::from_utf8_lossy(&out).into_owned())
}

/// Fails when `text` holds a character that can drive a terminal or reorder a line: a C0
/// control but newline and tab, DEL, a C1 control, a bidi override or isolate.
fn no_raw_controls(what: &str, text: &str) -> Result<(), Failed> {
    let control = |c: char| {
        (c < ' ' && c != '\n' && c != '\t')
            || ('\u{7f}'..='\u{9f}').contains(&c)
            || ('\u{202a}'..='\u{202e}').contains(&c)
            || ('\u{2066}'..='\u{2069}').contains(&c)
    };
    match text.char_indices().find(|(_, c)| control(*c)) {
        None => Ok(()),
        Some((at, c)) => Err(format!("{what}: raw {c:?} at byte {at}:\n{text}").into()),
    }
}

/// Every string of a JSON document, decoded, one per line.
fn json_strings(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(items) => items
            .iter()
            .map(json_strings)
            .collect::<Vec<_>>()
            .join("\n"),
        serde_json::Value::Object(map) => map
            .iter()
            .map(|(k, v)| format!("{k}\n{}", json_strings(v)))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn ensure(cond: bool, what: impl FnOnce() -> String) -> Result<(), Failed> {
    if cond {
        Ok(())
    } else {
        Err(what().into())
    }
}

/// The check `name` failed with `kind`, and its message contains every one of `says`.
fn expect_failed(
    summary: &Summary,
    name: &str,
    kind: FailureKind,
    says: &[&str],
) -> Result<(), Failed> {
    assert!(
        lessons::LESSONS.iter().any(|g| g.check(name).is_some()),
        "no check named {name}"
    );
    match summary.outcome(name) {
        Some(Outcome::Failed { kind: k, message }) if *k == kind => {
            for s in says {
                ensure(message.contains(s), || {
                    format!("{name}: message lacks {s:?}:\n{message}")
                })?;
            }
            Ok(())
        }
        other => Err(format!("{name}: expected a {kind} failure, got {other:?}").into()),
    }
}

fn stage8_trials() -> Vec<Trial> {
    let total = stage8::LESSON.checks.len();
    vec![
        Trial::test("stage8_reference_and_correct_pass_every_check", move || {
            // A lookup that does not sleep 0 s is as correct: the exhaustive check too
            // leaves such a sleep out.
            for label in ["reference", "correct", "skips_zero_sleeps"] {
                let (summary, out) = grade8(label, "");
                ensure(summary.all_passed() && summary.runs.len() == total, || {
                    out.clone()
                })?;
            }
            Ok(())
        }),
        Trial::test("stage8_stub_is_unfinished_everywhere", move || {
            let (summary, out) = grade8("stub", "");
            ensure(summary.count(Status::Unfinished) == total, || out.clone())?;
            ensure(
                out.contains("lookup_availability reached todo!() at "),
                || out.clone(),
            )?;
            for run in &summary.runs {
                let Outcome::Unfinished { location, .. } = &run.outcome else {
                    unreachable!()
                };
                let at = location.as_deref().unwrap_or("");
                ensure(at.contains("support/impls.rs:"), || {
                    format!("{}: location {at:?}", run.name)
                })?;
            }
            Ok(())
        }),
        Trial::test("stage8_runaway_loop_is_stopped", || {
            let (summary, out) = grade8("lookup_never_stops", "facts::fixture");
            expect_failed(
                &summary,
                "facts::fixture_503_503_200",
                FailureKind::Mismatch,
                &["the loop never stops"],
            )
            .map_err(|e| format!("{}\n{out}", e.message().unwrap_or_default()).into())
        }),
        Trial::test(
            "stage8_answers_forged_on_the_runners_socket_never_pass",
            || {
                for label in ["forges_garbage_answers", "forges_an_inconsistent_answer"] {
                    let (summary, out) = grade8(label, "facts::fixture");
                    ensure(summary.count(Status::Passed) == 0, || {
                        format!("{label}: a forged answer passed\n{out}")
                    })?;
                    ensure(summary.kit_bugs() == 0, || format!("{label}: {out}"))?;
                    expect_failed(
                        &summary,
                        "facts::fixture_503_503_200",
                        FailureKind::Panic,
                        &["an answer the check cannot read"],
                    )
                    .map_err(|e| format!("{label}: {}\n{out}", e.message().unwrap_or_default()))?;
                }
                Ok(())
            },
        ),
        Trial::test(
            "stage8_exhaustive_check_names_a_late_case_that_never_finishes",
            || {
                let reference: grader_checks::lessons::stage8::LookupFn =
                    reference::lookup_availability;
                let late = (1..=stage8::exhaustive::total())
                    .find(|n| {
                        stage8::exhaustive::case(*n)
                            .and_then(|c| kit_runner::stage8::space::run_case(reference, &c).ok())
                            .is_some_and(|r| {
                                r.lookups.iter().any(|(l, _)| {
                                    l.as_ref().is_ok_and(|l| {
                                        l.attempts == 5
                                            && matches!(l.outcome, kit_types::Outcome::Available(_))
                                    })
                                })
                            })
                    })
                    .ok_or("the space has no such case")?;
                ensure(late > 1024, || format!("case {late} is not past a stretch"))?;
                let (summary, out) = grade_lesson(
                    &stage8::LESSON,
                    "spins_on_a_late_case",
                    "exhaustive::",
                    0.5,
                    FormatSetting::Pretty,
                );
                expect_failed(
                    &summary,
                    "exhaustive::matches_reference_on_every_case",
                    FailureKind::Timeout,
                    &[
                        &format!("did not finish case {late} of the exhaustive space"),
                        "Replay it with `cargo run -p grader -- scenario FILE`",
                        "[[outcome]]",
                    ],
                )
                .map_err(|e| format!("{}\n{out}", e.message().unwrap_or_default()).into())
            },
        ),
        Trial::test(
            "a_case_wrong_only_among_the_others_fails_the_exhaustive_check",
            || {
                // Wrong on one call of the process (past the first question to a runner),
                // right when that case is run again alone.
                exhaustive_fails_both_ways(
                    &build3::LESSON,
                    "wrong_on_one_call",
                    "did something else on this case when it ran among",
                )?;
                exhaustive_fails_both_ways(
                    &stage8::LESSON,
                    "wrong_on_one_call",
                    "the run differs from one time to the next",
                )
            },
        ),
        Trial::test(
            "stage8_the_exhaustive_check_judges_the_run_that_was_sent",
            || {
                // Wrong where its first lookup ran (the space's runs), right elsewhere: the
                // run compared in full must be the one whose digest was sent.
                exhaustive_fails_both_ways(&stage8::LESSON, "wrong_at_its_first_depth", "differ")
            },
        ),
        Trial::test("stage8_forged_exhaustive_digests_never_pass", || {
            let (summary, out) = grade8("forges_space_digests", "exhaustive::");
            ensure(summary.count(Status::Passed) == 0, || {
                format!("a forged answer passed\n{out}")
            })?;
            ensure(summary.kit_bugs() == 0, || out.clone())?;
            ensure(
                summary.runs.len() == 1 && summary.count(Status::Failed) == 1,
                || out.clone(),
            )
        }),
        Trial::test(
            "stage8_a_verdict_does_not_depend_on_the_checks_run_before_it",
            || {
                // Right for the first twenty lookups of a process, wrong after: each check's
                // gateway lives in a runner of its own, so a run of every check gives what
                // each gives alone.
                let (all, out) = grade8("counts_across_checks", "");
                ensure(all.runs.len() == stage8::LESSON.checks.len(), || {
                    out.clone()
                })?;
                for run in &all.runs {
                    let (alone, alone_out) = grade_lesson(
                        &stage8::LESSON,
                        "counts_across_checks",
                        run.name,
                        10.0,
                        FormatSetting::Pretty,
                    );
                    let status = |s: &Summary| {
                        s.runs
                            .iter()
                            .find(|r| r.name == run.name)
                            .map(|r| r.outcome.status())
                    };
                    ensure(status(&alone) == Some(run.outcome.status()), || {
                        format!("{}: alone {alone_out}\nin the run {out}", run.name)
                    })?;
                }
                // A check of few lookups passes; the one of thousands does not.
                ensure(all.count(Status::Passed) > 0, || out.clone())?;
                ensure(all.count(Status::Passed) < all.runs.len(), || out.clone())?;
                Ok(())
            },
        ),
        Trial::test("a_message_the_learners_code_makes_huge_is_cut", || {
            let (summary, out) = grade8("huge_item_id", "facts::fixture");
            let Some(Outcome::Failed { message, .. }) = summary.runs.first().map(|r| &r.outcome)
            else {
                return Err(
                    format!("the check did not fail\n{}", &out[..out.len().min(4000)]).into(),
                );
            };
            ensure(message.len() < 70 * 1024, || {
                format!("a message of {} bytes", message.len())
            })?;
            ensure(message.contains("more bytes cut"), || {
                message[..message.len().min(4000)].to_string()
            })
        }),
        Trial::test("a_runner_sees_none_of_the_graders_environment", || {
            // A platform's token in the grader's environment must not reach the learner's
            // code: the runner gets its limits, the library and the backtrace switch only.
            let (summary, out) = grade_launched(
                &stage8::LESSON,
                Launcher::new(std::env::current_exe().expect("the test binary's path"))
                    .env("KIT_SECRET_SAMPLE", "shown-to-learner"),
                "names_its_environment",
                "facts::fixture",
                10.0,
                FormatSetting::Pretty,
            );
            ensure(out.contains("environment: "), || out.clone())?;
            ensure(!out.contains("KIT_SECRET_SAMPLE"), || out.clone())?;
            ensure(!out.contains("PATH"), || out.clone())?;
            ensure(out.contains("GRADER_LIMITS"), || out.clone())?;
            ensure(summary.count(Status::Passed) == 0, || out.clone())
        }),
        Trial::test("stage8_hostile_code_never_passes", || {
            for (label, kind) in [
                ("spins", FailureKind::Timeout),
                ("aborts", FailureKind::Crash),
                ("exits_zero", FailureKind::Crash),
                ("panics", FailureKind::Panic),
            ] {
                let (summary, out) = grade_lesson(
                    &stage8::LESSON,
                    label,
                    "facts::fixture",
                    0.5,
                    FormatSetting::Pretty,
                );
                let says: &[&str] = if kind == FailureKind::Timeout {
                    &[
                        "did not finish within 0.5 s",
                        "no sleep that would reach the deadline",
                    ]
                } else {
                    &[]
                };
                expect_failed(&summary, "facts::fixture_503_503_200", kind, says)
                    .map_err(|e| format!("{label}: {}\n{out}", e.message().unwrap_or_default()))?;
            }
            Ok(())
        }),
    ]
}

fn trials() -> Vec<Trial> {
    let total = build3::LESSON.checks.len();
    vec![
        Trial::test("an_answer_too_large_to_read_is_named_so", || {
            // A function whose result is over what a judge reads: the learner is told that,
            // not that the code exited.
            let (summary, out) = grade("huge_detail", "fixtures::permanent_error", 30.0);
            expect_failed(
                &summary,
                "fixtures::permanent_error",
                FailureKind::Limit,
                &["more than 64 MiB", "an error's detail, say"],
            )
            .map_err(|e| format!("{}\n{out}", e.message().unwrap_or_default()))?;
            ensure(!out.contains("exited with status"), || out.clone())
        }),
        Trial::test("stub_is_unfinished_everywhere", move || {
            let (summary, out) = grade("stub", "", 10.0);
            ensure(summary.count(Status::Unfinished) == total, || out.clone())?;
            ensure(!summary.all_passed(), || "a stub passed".into())?;
            for run in &summary.runs {
                let Outcome::Unfinished { location, .. } = &run.outcome else {
                    return Err(format!("{}: {:?}", run.name, run.outcome).into());
                };
                let at = location.as_deref().unwrap_or("");
                ensure(at.contains("support/impls.rs:"), || {
                    format!("location {at:?}")
                })?;
            }
            ensure(
                out.contains(&format!("0 passed; 0 failed; {total} unfinished")),
                || out.clone(),
            )?;
            ensure(
                out.contains("check fixtures::third_attempt_success ... unfinished"),
                || out.clone(),
            )?;
            ensure(out.contains("retry_request reached todo!() at "), || {
                out.clone()
            })?;
            ensure(out.contains("check result: UNFINISHED."), || out.clone())
        }),
        Trial::test("unimplemented_is_unfinished", || {
            let (summary, out) = grade("unimplemented", "fixtures::", 10.0);
            ensure(
                summary.count(Status::Unfinished) == summary.runs.len(),
                || out.clone(),
            )?;
            ensure(out.contains("reached unimplemented!() at "), || out.clone())
        }),
        Trial::test("runaway_loop_is_stopped_by_the_call_guard", || {
            let (summary, out) = grade("never_stops", "fixtures::capped_exhaustion", 10.0);
            expect_failed(
                &summary,
                "fixtures::capped_exhaustion",
                FailureKind::Mismatch,
                &["loop never stops"],
            )
            .map_err(|e| format!("{}\n{out}", e.message().unwrap_or_default()).into())
        }),
        Trial::test(
            "a_failure_many_checks_share_is_printed_in_full_once",
            || {
                // What `grade` and --all-failures print: every failure in full.
                let (summary, out) = grade_in_full("spins", "fixtures::", 0.3);
                ensure(summary.count(Status::Failed) == 8, || out.clone())?;
                ensure(out.matches("did not finish within").count() == 1, || {
                    out.clone()
                })?;
                let first = summary.runs[0].name;
                for run in &summary.runs[1..] {
                    let pointer = format!(
                        "---- {} ----\nfailed the same way as {first} (above).",
                        run.name
                    );
                    ensure(out.contains(&pointer), || format!("no {pointer:?}:\n{out}"))?;
                }
                // Different failures are each printed in full.
                let (summary, out) = grade_in_full("extra_attempt", "", 10.0);
                let failed = summary.count(Status::Failed);
                ensure(failed > 1, || out.clone())?;
                ensure(!out.contains("failed the same way"), || out.clone())
            },
        ),
        Trial::test(
            "spinning_code_does_not_finish_and_the_run_completes",
            || {
                let (summary, out) = grade("spins", "fixtures::", 0.5);
                ensure(summary.runs.len() == 8, || out.clone())?;
                for run in &summary.runs {
                    ensure(
                        run.outcome.failure_kind() == Some(FailureKind::Timeout),
                        || format!("{}: {:?}", run.name, run.outcome),
                    )?;
                }
                ensure(out.contains("FAILED (did not finish)"), || out.clone())?;
                // The first in full; the seven others alike share one line.
                ensure(
                    out.contains(
                        " and 6 others: (did not finish) did not finish within 0.5 s and was stopped."
                    ),
                    || out.clone(),
                )?;
                // ...and names them, so that any one can be run alone with --exact.
                let others = out
                    .lines()
                    .find_map(|l| l.trim().strip_prefix("the others: "))
                    .unwrap_or_default();
                ensure(
                    others.split(", ").count() == 6
                        && others.split(", ").all(|n| n.starts_with("fixtures::")),
                    || out.clone(),
                )?;
                ensure(out.contains("0 passed; 8 failed; 0 unfinished"), || {
                    out.clone()
                })
            },
        ),
        Trial::test(
            "exhaustive_check_finds_a_nan_only_mistake_with_a_minimal_scenario",
            || {
                let (summary, out) = grade("nan_wait_stops", "exhaustive::", 30.0);
                let Some(Outcome::Failed {
                    kind: FailureKind::Mismatch,
                    message,
                }) = summary.outcome("exhaustive::matches_reference_on_every_case")
                else {
                    return Err(format!("expected a mismatch:\n{out}").into());
                };
                let file_start = message
                    .find("# Case ")
                    .ok_or("no scenario file in the message")?;
                let file = &message[file_start..];
                let scenario = Scenario::parse(Path::new("difference.toml"), file)
                    .map_err(|e| format!("the printed scenario does not parse: {e}\n{file}"))?;
                ensure(file.contains("retry_after = nan"), || file.to_string())?;
                ensure(scenario.script.steps.len() <= 2, || {
                    format!("not minimal:\n{file}")
                })?;
                let mutant = impls::build3("nan_wait_stops").ok_or("no mutant")?;
                let theirs = build3::scenario::run(&mutant, &scenario);
                let ours = build3::scenario::run(&build3::reference(), &scenario);
                ensure(theirs != ours, || {
                    "the printed case does not reproduce the difference".into()
                })?;
                ensure(message.contains("≠ calls\n"), || message.clone())
            },
        ),
        Trial::test(
            "exhaustive_check_uses_the_reference_runs_the_grader_hands_it",
            exhaustive_check_uses_the_reference_runs_the_grader_hands_it,
        ),
        Trial::test(
            "exhaustive_check_names_the_case_that_never_finishes",
            || {
                let (summary, out) = grade("spins", "exhaustive::", 0.5);
                expect_failed(
                    &summary,
                    "exhaustive::matches_reference_on_every_case",
                    FailureKind::Timeout,
                    &[
                        "did not finish case 1 of the exhaustive space",
                        "[[outcome]]",
                    ],
                )
                .map_err(|e| format!("{}\n{out}", e.message().unwrap_or_default()).into())
            },
        ),
        Trial::test(
            "exhaustive_check_names_a_late_case_that_never_finishes",
            || {
                let reference = build3::reference();
                let late = build3::exhaustive::cases()
                    .position(|c| {
                        c.script.steps.get(3).is_some_and(Result::is_ok)
                            && build3::recording::record(&reference, &c.policy, &c.script, None)
                                .0
                                .calls
                                >= 4
                    })
                    .map(|i| i + 1)
                    .ok_or("the space has no such case")?;
                ensure(late > 4096, || format!("case {late} is not past a chunk"))?;
                let (summary, out) = grade("spins_on_a_late_case", "exhaustive::", 0.5);
                expect_failed(
                    &summary,
                    "exhaustive::matches_reference_on_every_case",
                    FailureKind::Timeout,
                    &[&format!(
                        "did not finish case {late} of the exhaustive space"
                    )],
                )
                .map_err(|e| format!("{}\n{out}", e.message().unwrap_or_default()).into())
            },
        ),
        Trial::test("a_panic_is_a_failure_with_its_message", || {
            let (summary, _) = grade("panics", "fixtures::third_attempt_success", 10.0);
            expect_failed(
                &summary,
                "fixtures::third_attempt_success",
                FailureKind::Panic,
                &["boom: index 7 out of range", "support/impls.rs:"],
            )
        }),
        Trial::test(
            "a_panic_shows_the_input_and_with_rust_backtrace_the_callers_frames",
            || {
                let me = std::env::current_exe().expect("the test binary knows its own path");
                let name = "fixtures::third_attempt_success";
                for (backtrace, frames) in [("0", false), ("1", true)] {
                    // Unconfined: the function is in this test program, which a confined runner may
                    // not read (tests/cli.rs shows a learner library's frames in a confined run).
                    let launcher = Launcher::new(&me)
                        .env("RUST_BACKTRACE", backtrace)
                        .limits(unconfined());
                    let (summary, _) = grade_launched(
                        &build3::LESSON,
                        launcher,
                        "panics",
                        name,
                        10.0,
                        FormatSetting::Pretty,
                    );
                    let input: &[&str] = &[
                        "boom: index 7 out of range",
                        "input:",
                        "policy:  method \"GET\", max_attempts 3, base_delay 0.25",
                        "call 3 → data",
                    ];
                    expect_failed(&summary, name, FailureKind::Panic, input)?;
                    let message = summary
                        .outcome(name)
                        .and_then(|o| o.message())
                        .unwrap_or_default();
                    // The learner's frame (here the test implementation's closure), and none of
                    // the kit's or the standard library's.
                    let shown = message.contains("your code's calls, innermost first")
                        && message.contains("at grader/tests/support/impls.rs:");
                    let kits = ["grader/runner/src", "grader/checks/src", "/rustc/"];
                    ensure(shown == frames, || {
                        format!("RUST_BACKTRACE={backtrace}: frames shown {shown}:\n{message}")
                    })?;
                    ensure(!kits.iter().any(|k| message.contains(k)), || {
                        format!("the kit's own frames are shown:\n{message}")
                    })?;
                    ensure(
                        frames || message.contains("run again with RUST_BACKTRACE=1"),
                        || format!("no hint to ask for the frames:\n{message}"),
                    )?;
                }
                Ok(())
            },
        ),
        Trial::test("abort_is_a_crash", || {
            let (summary, _) = grade("aborts", "fixtures::third_attempt_success", 10.0);
            expect_failed(
                &summary,
                "fixtures::third_attempt_success",
                FailureKind::Crash,
                &["SIGABRT"],
            )
        }),
        Trial::test("stack_overflow_is_a_crash", || {
            let (summary, _) = grade("overflows_stack", "fixtures::third_attempt_success", 10.0);
            expect_failed(
                &summary,
                "fixtures::third_attempt_success",
                FailureKind::Crash,
                &["stack overflow"],
            )
        }),
        Trial::test("exit_zero_is_a_crash_not_a_pass", || {
            let (summary, out) = grade("exits_zero", "fixtures::", 10.0);
            ensure(
                summary.count(Status::Passed) == 0 && summary.count(Status::Failed) == 8,
                || out.clone(),
            )?;
            expect_failed(
                &summary,
                "fixtures::permanent_error",
                FailureKind::Crash,
                &["status 0 before the check finished"],
            )
        }),
        Trial::test("a_process_left_running_is_a_failure_and_is_stopped", || {
            for (label, marker) in [
                ("spawns_sleeper", impls::SLEEPER_SECS),
                ("spawns_detached_sleeper", impls::DETACHED_SLEEPER_SECS),
            ] {
                let (summary, out) =
                    grade_unconfined(label, "fixtures::third_attempt_success", 10.0);
                expect_failed(
                    &summary,
                    "fixtures::third_attempt_success",
                    FailureKind::Leak,
                    &["left a process running", "it was stopped"],
                )
                .map_err(|e| format!("{label}: {}\n{out}", e.message().unwrap_or_default()))?;
                let left = processes_with_arg(marker);
                ensure(left.is_empty(), || {
                    format!("{label}: still running: {left:?}")
                })?;
            }
            Ok(())
        }),
        Trial::test(
            "escapes_the_code_prints_or_panics_with_reach_no_output_raw",
            || {
                let (summary, out) = grade("prints_escapes", "fixtures::", 10.0);
                ensure(summary.count(Status::Failed) == 8, || out.clone())?;
                let (_, events) =
                    grade_with("prints_escapes", "fixtures::", 10.0, FormatSetting::Json);
                no_raw_controls("the text output", &out)?;
                no_raw_controls("the JSON events", &events)?;
                for shown in [
                    "\\u{1b}[2J\\u{1b}]0;pwned\\u{7}",
                    "err:\\u{0}\\u{7f}\\u{9b}2J\\u{202e}desrever\\u{d}",
                    "boom\\u{1b}[2K\\u{d}\\u{1b}[32mcheck result: ok. 39 passed\\u{7}",
                ] {
                    ensure(out.contains(shown), || format!("{shown} in {out}"))?;
                }
                // The run's report, in every format: the decoded text is escaped too, as a
                // platform's page shows it.
                let root = tempfile::tempdir().map_err(|e| e.to_string())?;
                let exercise = grader::LessonInfo {
                    name: "build3".into(),
                    title: build3::LESSON.title.into(),
                    summary: None,
                    function: build3::LESSON.function.into(),
                    file: "practice/src/lib.rs".into(),
                    stub: "stub.rs".into(),
                    lesson: "lesson.md".into(),
                    trace: None,
                    self_review: None,
                    answer: None,
                };
                let report = grader::reports::RunReport::new(
                    root.path(),
                    &build3::LESSON,
                    &exercise,
                    "prints_escapes",
                    Some(&summary),
                    None,
                    std::time::SystemTime::now(),
                )
                .map_err(|e| e.to_string())?;
                for format in grader::reports::ReportFormat::ALL {
                    let text = format.render(&report);
                    no_raw_controls(format.name(), &text)?;
                    // JUnit is text; the others are JSON, whose strings a platform decodes.
                    let shown = match serde_json::from_str::<serde_json::Value>(&text) {
                        Ok(doc) => json_strings(&doc),
                        Err(_) => text.clone(),
                    };
                    no_raw_controls(&format!("{format}, as shown"), &shown)?;
                    ensure(shown.contains("boom\\u{1b}[2K\\u{d}"), || {
                        format!("{format}: {text}")
                    })?;
                }
                Ok(())
            },
        ),
        Trial::test("a_leftover_named_with_escapes_is_named_escaped", || {
            // Unconfined, so that the process starts: the sandbox refuses it.
            let (summary, out) = grade_unconfined(
                "leaves_escaped_sleeper",
                "fixtures::third_attempt_success",
                10.0,
            );
            expect_failed(
                &summary,
                "fixtures::third_attempt_success",
                FailureKind::Leak,
                &["left a process running", "\\u{1b}]0;pwned\\u{7}"],
            )
            .map_err(|e| format!("{}\n{out}", e.message().unwrap_or_default()))?;
            no_raw_controls("the text output", &out)?;
            let left = processes_with_arg(impls::ESCAPED_SLEEPER_SECS);
            ensure(left.is_empty(), || format!("still running: {left:?}"))
        }),
        Trial::test("resource_limits_are_named_failures", || {
            // Unconfined, so that the file is written: the sandbox refuses it (see
            // the_sandbox_refuses_what_a_pure_function_never_needs).
            for (label, says) in [
                ("eats_memory", "used more than 1 GiB of memory"),
                ("writes_files", "wrote a file larger than 64 MiB"),
                ("spawns_threads", "threads"),
            ] {
                let (summary, out) =
                    grade_unconfined(label, "fixtures::third_attempt_success", 10.0);
                expect_failed(
                    &summary,
                    "fixtures::third_attempt_success",
                    FailureKind::Limit,
                    &[says],
                )
                .map_err(|e| format!("{label}: {}\n{out}", e.message().unwrap_or_default()))?;
            }
            Ok(())
        }),
        Trial::test("a_bug_in_the_kit_is_reported_as_the_kits", || {
            // The grader asks for a check the lesson does not have: the kit's fault, not the
            // learner's, whatever their code does.
            static CHECKS: &[grader_checks::CheckInfo] = &[grader_checks::CheckInfo {
                name: "fixtures::no_such_check",
                min_timeout: Duration::ZERO,
            }];
            let lesson = Lesson {
                checks: CHECKS,
                ..build3::LESSON
            };
            let (summary, out) = grade_lesson(&lesson, "correct", "", 10.0, FormatSetting::Pretty);
            ensure(
                summary.kit_bugs() == 1 && summary.count(Status::Failed) == 0,
                || out.clone(),
            )?;
            ensure(
                out.contains("KIT BUG") && out.contains("Please report it"),
                || out.clone(),
            )
        }),
        Trial::test("printed_report_is_not_taken_for_one", || {
            let (summary, out) = grade("forges_report", "fixtures::", 10.0);
            ensure(summary.count(Status::Passed) == 0, || out.clone())?;
            expect_failed(
                &summary,
                "fixtures::delay_budget_stop",
                FailureKind::Crash,
                &["status 0"],
            )?;
            // What it printed is kept as its output, and shown with the failure.
            let run = summary
                .runs
                .iter()
                .find(|r| r.name == "fixtures::delay_budget_stop")
                .ok_or("the check ran")?;
            ensure(run.output.contains("\"status\":\"passed\""), || {
                run.output.clone()
            })?;
            ensure(
                out.contains("---- output of the code under test ----"),
                || out.clone(),
            )
        }),
        Trial::test("filter_exact_and_skip_select_checks", move || {
            let args = |filter: &str, exact: bool, skip: &[&str]| Arguments {
                filter: Some(filter.to_string()),
                exact,
                skip: skip.iter().map(|s| s.to_string()).collect(),
                ..Arguments::default()
            };
            let names = |a: &Arguments| -> Vec<&str> {
                suite::select(&build3::LESSON, &a.into())
                    .0
                    .iter()
                    .map(|c| c.name)
                    .collect()
            };
            ensure(names(&args("server_wait::", false, &[])).len() == 9, || {
                "server_wait group".into()
            })?;
            ensure(
                names(&args("fixtures::log_panics", true, &[])) == ["fixtures::log_panics"],
                || "exact".into(),
            )?;
            ensure(names(&args("log_panics", true, &[])).is_empty(), || {
                "exact needs the whole name".into()
            })?;
            let skipped = names(&args("fixtures::", false, &["panics"]));
            ensure(
                skipped.len() == 6 && !skipped.iter().any(|n| n.contains("panics")),
                || format!("{skipped:?}"),
            )?;
            let (_, left_out) =
                suite::select(&build3::LESSON, &(&args("fixtures::", false, &[])).into());
            ensure(left_out == total - 8, || format!("left out {left_out}"))
        }),
        Trial::test(
            "fail_fast_stops_starting_checks_after_the_first_failure",
            || {
                let me = std::env::current_exe()?;
                let launcher = Launcher::new(me).env(IMPL_VAR, "extra_attempt");
                let args = Arguments {
                    test_threads: Some(1),
                    ..Arguments::default()
                };
                let settings = RunSettings {
                    fail_fast: true,
                    ..RunSettings::new("extra_attempt", Duration::from_secs(10))
                };
                let mut out = Vec::new();
                let summary = suite::run(
                    &build3::LESSON,
                    &launcher,
                    &(&args).into(),
                    &settings,
                    &mut *grader::printers::for_args(&args, &mut out),
                )?;
                let out = String::from_utf8(out)?;
                ensure(summary.count(Status::Failed) == 1, || out.clone())?;
                ensure(summary.not_run > 0 && !summary.all_passed(), || out.clone())?;
                ensure(
                    out.contains(&format!("{} not run (--fail-fast)", summary.not_run)),
                    || out.clone(),
                )
            },
        ),
        Trial::test(
            "fail_fast_shows_the_first_failure_in_the_lessons_order_every_time",
            || {
                // extra_attempt fails several checks (and the exhaustive one, which starts
                // first without --fail-fast): with four threads the first to finish varies,
                // the failure shown must not.
                let me = std::env::current_exe()?;
                let order: Vec<&str> = build3::LESSON.checks.iter().map(|c| c.name).collect();
                for _ in 0..3 {
                    let launcher = Launcher::new(&me).env(IMPL_VAR, "extra_attempt");
                    let args = Arguments {
                        test_threads: Some(4),
                        ..Arguments::default()
                    };
                    let settings = RunSettings {
                        fail_fast: true,
                        ..RunSettings::new("extra_attempt", Duration::from_secs(10))
                    };
                    let mut out = Vec::new();
                    let summary = suite::run(
                        &build3::LESSON,
                        &launcher,
                        &(&args).into(),
                        &settings,
                        &mut *grader::printers::for_args(&args, &mut out),
                    )?;
                    let out = String::from_utf8(out)?;
                    let failed: Vec<&str> = summary
                        .runs
                        .iter()
                        .filter(|r| r.outcome.status() == Status::Failed)
                        .map(|r| r.name)
                        .collect();
                    ensure(failed == ["fixtures::capped_exhaustion"], || {
                        format!("failed {failed:?}:\n{out}")
                    })?;
                    // Every check shown comes before it in the lesson's order, in that order.
                    let shown: Vec<&str> = out
                        .lines()
                        .filter_map(|l| {
                            l.strip_prefix("check ")?.split_once(" ...").map(|(n, _)| n)
                        })
                        .collect();
                    let first = order.iter().position(|n| *n == failed[0]).unwrap_or(0);
                    ensure(shown == order[..=first], || {
                        format!("shown {shown:?}:\n{out}")
                    })?;
                }
                Ok(())
            },
        ),
        Trial::test("json_format_is_one_event_per_line", || {
            let (summary, out) = grade_with("stub", "fixtures::", 10.0, FormatSetting::Json);
            let events: Vec<serde_json::Value> = out
                .lines()
                .map(|l| serde_json::from_str(l).map_err(|e| format!("{e}: {l}")))
                .collect::<Result<_, _>>()?;
            ensure(events.len() == summary.runs.len() + 2, || out.clone())?;
            let last = &events[events.len() - 1];
            ensure(
                last["event"] == "failed" && last["unfinished"] == 8 && last["passed"] == 0,
                || out.clone(),
            )?;
            ensure(events[1]["event"] == "unfinished", || out.clone())
        }),
        Trial::test("list_prints_names_and_runs_nothing", move || {
            let launcher = Launcher::new("/nonexistent/harness");
            let args = Arguments {
                list: true,
                ..Arguments::default()
            };
            let settings = RunSettings::new("none", Duration::from_secs(1));
            let mut out = Vec::new();
            let summary = suite::run(
                &build3::LESSON,
                &launcher,
                &(&args).into(),
                &settings,
                &mut *grader::printers::for_args(&args, &mut out),
            )?;
            let out = String::from_utf8(out)?;
            ensure(summary.listed_only && summary.runs.is_empty(), || {
                out.clone()
            })?;
            ensure(
                out.contains("fixtures::third_attempt_success: check\n")
                    && out.contains(&format!("\n{total} checks")),
                || out.clone(),
            )
        }),
        Trial::test("every_lesson_has_unique_check_names", || {
            for lesson in lessons::LESSONS {
                let mut names: Vec<&str> = lesson.checks.iter().map(|c| c.name).collect();
                names.sort_unstable();
                let before = names.len();
                names.dedup();
                ensure(before == names.len(), || {
                    format!("{} repeats a check name", lesson.name)
                })?;
            }
            Ok(())
        }),
    ]
}

/// Runs the build2 checks (those matching `filter`) against `label`.
fn grade2(label: &str, filter: &str) -> (Summary, String) {
    grade_lesson(&build2::LESSON, label, filter, 10.0, FormatSetting::Pretty)
}

/// Every registered lesson, with no list to extend: the reference and the correct test
/// implementation pass every check, the stub is unfinished on every check, and code that
/// spins, panics or aborts never passes, each named for what it did.
fn lesson_trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for lesson in lessons::LESSONS {
        let total = lesson.checks.len();
        trials.push(Trial::test(
            format!("{}_reference_and_correct_pass_every_check", lesson.name),
            move || {
                for label in ["reference", "correct"] {
                    let (summary, out) =
                        grade_lesson(lesson, label, "", 30.0, FormatSetting::Pretty);
                    ensure(summary.all_passed() && summary.runs.len() == total, || {
                        format!("{label}:\n{out}")
                    })?;
                    // The summary line says so too.
                    ensure(
                        out.contains(&format!("{total} passed; 0 failed; 0 unfinished")),
                        || format!("{label}:\n{out}"),
                    )?;
                }
                Ok(())
            },
        ));
        trials.push(Trial::test(
            format!("{}_stub_is_unfinished_everywhere", lesson.name),
            move || {
                let (summary, out) = grade_lesson(lesson, "stub", "", 30.0, FormatSetting::Pretty);
                ensure(summary.count(Status::Unfinished) == total, || out.clone())?;
                ensure(
                    out.contains(&format!("{} reached todo!() at ", lesson.function)),
                    || out.clone(),
                )
            },
        ));
        trials.push(Trial::test(
            format!("{}_hostile_code_never_passes", lesson.name),
            move || {
                let first = lesson.checks[0].name;
                for (label, kind) in [
                    ("spins", FailureKind::Timeout),
                    ("aborts", FailureKind::Crash),
                    ("panics", FailureKind::Panic),
                ] {
                    let (summary, out) =
                        grade_lesson(lesson, label, first, 0.5, FormatSetting::Pretty);
                    expect_failed(&summary, first, kind, &[]).map_err(|e| {
                        format!("{label}: {}\n{out}", e.message().unwrap_or_default())
                    })?;
                }
                Ok(())
            },
        ));
    }
    trials
}

/// The realistic mistakes of every lesson that keeps its trials in its own folder
/// ([`grader_checks::lesson::Trials`]), each graded as a row of [`MISTAKES`] is.
fn lesson_mistake_trials() -> Vec<Trial> {
    lessons::LESSONS
        .iter()
        .filter_map(|lesson| Some((*lesson, lesson.trials?)))
        .flat_map(|(lesson, trials)| {
            trials.mistakes.iter().map(move |m| {
                let row: &'static Mistake = Box::leak(Box::new(Mistake {
                    lesson,
                    label: m.label,
                    first: (m.first, m.says),
                    also: &[],
                }));
                mistake_trial(row)
            })
        })
        .collect()
}

/// What a run sent its reporter, one word per event.
struct Recorder(Vec<String>);

impl grader::events::Reporter for Recorder {
    fn report(&mut self, event: &grader::events::Event<'_>) -> std::io::Result<()> {
        use grader::events::Event;
        self.0.push(match event {
            Event::Listed { .. } => "listed".into(),
            Event::Started { checks, .. } => format!("started {checks}"),
            Event::CheckStarted { .. } => "check started".into(),
            Event::CheckFinished { run } => format!("finished {}", run.name),
            Event::Finished { summary, .. } => format!("end {}", summary.runs.len()),
        });
        Ok(())
    }
}

fn build2_trials() -> Vec<Trial> {
    vec![
        Trial::test(
            "the_executor_sends_its_events_in_the_documented_order",
            || {
                // A failing implementation, so that checks end at different times: the finished
                // events still come in the lesson's order.
                let me = std::env::current_exe().map_err(|e| e.to_string())?;
                let launcher = Launcher::new(me).env(IMPL_VAR, "treats_500_as_transient");
                let settings = RunSettings::new("test", Duration::from_secs(10));
                let mut recorder = Recorder(Vec::new());
                let summary = suite::run(
                    &build2::LESSON,
                    &launcher,
                    &suite::Selection::default(),
                    &settings,
                    &mut recorder,
                )
                .map_err(|e| e.to_string())?;
                let n = build2::LESSON.checks.len();
                let events = &recorder.0;
                let mut want = vec![format!("started {n}")];
                want.extend(
                    build2::LESSON
                        .checks
                        .iter()
                        .map(|c| format!("finished {}", c.name)),
                );
                want.push(format!("end {n}"));
                let without_starts: Vec<&String> =
                    events.iter().filter(|e| *e != "check started").collect();
                ensure(
                    without_starts
                        .iter()
                        .map(|s| s.as_str())
                        .eq(want.iter().map(|s| s.as_str())),
                    || format!("{events:#?}"),
                )?;
                ensure(
                    events.iter().filter(|e| *e == "check started").count() == n
                        && events.first() == Some(&want[0]),
                    || format!("{events:#?}"),
                )?;
                ensure(!summary.all_passed(), || "the mistake passed".into())
            },
        ),
        Trial::test("build2_exhaustive_check_prints_a_replayable_case", || {
            let (summary, out) = grade2("parses_fractions", "exhaustive::");
            let Some(Outcome::Failed { message, .. }) =
                summary.outcome("exhaustive::matches_reference_on_every_case")
            else {
                return Err(format!("expected a failure:\n{out}").into());
            };
            let start = message
                .find("# Case ")
                .ok_or("no scenario file in the message")?;
            let file = &message[start..];
            let scenario = build2::scenario::FetchScenario::parse(Path::new("d.toml"), file)
                .map_err(|e| format!("the printed case does not parse: {e}\n{file}"))?;
            let mutant = impls::build2("parses_fractions").ok_or("no mutant")?;
            let theirs = build2::scenario::run(&mutant, &scenario);
            let ours = build2::scenario::run(&build2::reference(), &scenario);
            ensure(theirs != ours, || {
                format!("the printed case does not reproduce the difference:\n{file}")
            })
        }),
    ]
}

/// The processes whose command line holds `arg` (Linux: read from /proc).
fn processes_with_arg(arg: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let cmd = std::fs::read(e.path().join("cmdline")).ok()?;
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            cmd.contains(arg)
                .then(|| format!("{}: {cmd}", e.file_name().to_string_lossy()))
        })
        .collect()
}

/// A realistic mistake, and what the grader must say about it.
struct Mistake {
    lesson: &'static Lesson,
    /// The test implementation that makes it (`support/impls.rs`).
    label: &'static str,
    /// The first check, in the lesson's order, that fails; and words its message must hold.
    first: (&'static str, &'static [&'static str]),
    /// Further checks that fail too: words their message must hold, and words it must not
    /// (they would name the wrong cause).
    also: &'static [(
        &'static str,
        &'static [&'static str],
        &'static [&'static str],
    )],
}

/// The table of realistic mistakes: for each, the first failing check and what its message
/// says. A message that guesses the cause must be right for every row that reaches it.
const MISTAKES: &[Mistake] = &[
    // build3
    Mistake {
        lesson: &build3::LESSON,
        label: "extra_attempt",
        first: (
            "fixtures::capped_exhaustion",
            &[
                "request was called 6 times; the rule expects 5",
                "the first call is attempt 1",
                "input:",
                "your code did:",
                "the rule expects:",
                "first difference: calls",
            ],
        ),
        also: &[
            (
                "attempts::first_call_is_attempt_one",
                &["4 calls under max_attempts = 3"],
                &[],
            ),
            (
                "attempts::one_attempt_never_sleeps",
                &["so 1 call in all"],
                &["1 calls"],
            ),
            (
                "events::json_shape",
                &[
                    "request was called 3 times; the rule expects 2",
                    "the first call is attempt 1",
                ],
                &["A retry has a delay and no cause"],
            ),
        ],
    },
    Mistake {
        lesson: &build3::LESSON,
        label: "sleep_after_last",
        first: (
            "fixtures::capped_exhaustion",
            &["Never sleep after the last failed attempt"],
        ),
        also: &[(
            "attempts::one_attempt_never_sleeps",
            &["sleep received [0.25]; the rule expects []"],
            &[],
        )],
    },
    Mistake {
        lesson: &build3::LESSON,
        label: "clamp_server_wait",
        first: (
            "fixtures::delay_budget_stop",
            &["the rule expects 1", "log a delay_budget stop"],
        ),
        also: &[
            ("server_wait::just_above_budget_is_not_clamped", &[], &[]),
            ("server_wait::infinite_stops", &["retry_after inf"], &[]),
        ],
    },
    Mistake {
        lesson: &build3::LESSON,
        label: "retry_permanent",
        first: (
            "fixtures::permanent_error",
            &["A permanent failure ends the loop at once"],
        ),
        also: &[("outcomes::every_permanent_kind", &[], &[])],
    },
    Mistake {
        lesson: &build3::LESSON,
        label: "validate_after_first_call",
        first: (
            "fixtures::input_refusal",
            &[
                "request was called 1 time; the rule expects 0",
                "validate first",
            ],
        ),
        also: &[("validation::method_must_be_exactly_get", &[], &[])],
    },
    Mistake {
        lesson: &build3::LESSON,
        label: "no_validation",
        first: ("fixtures::input_refusal", &["validate first"]),
        also: &[
            ("validation::base_above_max", &[], &[]),
            ("validation::attempts_outside_one_to_five", &[], &[]),
        ],
    },
    Mistake {
        lesson: &build3::LESSON,
        label: "nan_wait_stops",
        first: (
            "server_wait::nan_is_ignored",
            &[
                "the rule expects 2",
                "retry_after NaN",
                "why: A retry_after of NaN is no wait at all: ignore it and keep the backoff",
            ],
        ),
        also: &[],
    },
    Mistake {
        lesson: &build3::LESSON,
        label: "prints_detail",
        first: (
            "privacy::detail_is_never_printed",
            &[
                "your code printed a failure's private `detail` on standard output or error",
                "it never leaves the function",
                "kit-private-5e1c",
            ],
        ),
        also: &[],
    },
    Mistake {
        lesson: &build3::LESSON,
        label: "stops_at_equal_budget",
        first: (
            "server_wait::equal_to_budget_is_honoured",
            &[
                "the rule expects",
                "why: A server wait equal to max_delay = ",
                "fits the budget: stop only when it is larger (compare with >, not >=)",
            ],
        ),
        // The exhaustive check's why names the same rule.
        also: &[(
            "exhaustive::matches_reference_on_every_case",
            &[
                "why: A server wait equal to max_delay = ",
                "(compare with >, not >=)",
            ],
            &["parts from the rules"],
        )],
    },
    Mistake {
        lesson: &build3::LESSON,
        label: "sleep_before_log",
        first: ("fixtures::log_panics", &["log the event first, then sleep"]),
        also: &[(
            "callbacks::log_before_sleep",
            &["log the event, then sleep"],
            &[],
        )],
    },
    Mistake {
        lesson: &build3::LESSON,
        label: "sleep_before_log_on_server_wait",
        // Right wherever no server wait is asked for, as in callbacks::log_before_sleep:
        // the exhaustive check compares the order of the callbacks on every case.
        first: (
            "exhaustive::matches_reference_on_every_case",
            &["log the event"],
        ),
        also: &[],
    },
    Mistake {
        lesson: &build3::LESSON,
        label: "no_retry_log_on_timeout",
        first: (
            "validation::boundaries_are_accepted",
            &["first difference: events item 1"],
        ),
        // The first event is a later attempt's, numbered right: the event is missing.
        also: &[(
            "exhaustive::matches_reference_on_every_case",
            &["Every failed attempt is logged"],
            &["numbered from 1"],
        )],
    },
    Mistake {
        lesson: &build3::LESSON,
        label: "attempt_kept_after_giving_up",
        // A check of several calls meets the count left by one that gave up; the first
        // event is then numbered past 1, and the checks say what numbers it so. Where the
        // exhaustive check first sees it depends on how its runner's threads took the
        // cases: it names the numbering, or a run that changed when made again; the static
        // either way.
        first: (
            "events::json_shape",
            &["called a second time with the same input", "(a `static`)"],
        ),
        also: &[(
            "exhaustive::matches_reference_on_every_case",
            &["(a `static`)"],
            &["loop stopped early"],
        )],
    },
    Mistake {
        lesson: &build3::LESSON,
        label: "attempt_in_a_static",
        // Each check is a process of its own, whose first call starts from 1: a check of
        // several calls meets the leftover, and says what can cause a call that never calls
        // request. The exhaustive check names the static too, by whichever hint its first
        // difference reaches (that depends on how its runner's threads took the cases).
        first: (
            "outcomes::every_permanent_kind",
            &[
                "request was never called",
                "a count kept from an earlier call",
            ],
        ),
        also: &[(
            "exhaustive::matches_reference_on_every_case",
            &["(a `static`)"],
            &["loop stopped early"],
        )],
    },
    Mistake {
        lesson: &build3::LESSON,
        label: "permanent_becomes_success",
        first: (
            "fixtures::permanent_error",
            &["remove the broad catch or fallback"],
        ),
        also: &[],
    },
    Mistake {
        lesson: &build3::LESSON,
        label: "swallows_panics",
        first: ("fixtures::sleep_panics", &["let it propagate"]),
        also: &[
            ("fixtures::log_panics", &["let it propagate"], &[]),
            ("callbacks::request_panics", &["let it propagate"], &[]),
        ],
    },
    Mistake {
        lesson: &build3::LESSON,
        label: "never_stops",
        first: (
            "fixtures::third_attempt_success",
            &[
                "sleep received [0.25, 0.25]",
                "min(max_delay, base_delay * 2^(n-1))",
            ],
        ),
        also: &[(
            "fixtures::capped_exhaustion",
            &["the loop never stops"],
            &[],
        )],
    },
    // stage8
    Mistake {
        lesson: &stage8::LESSON,
        label: "lookup_per_attempt",
        first: (
            "facts::fixture_503_503_200",
            &["the counters read logical_lookups 3, attempts 3; the rule expects 1 and 3"],
        ),
        also: &[],
    },
    Mistake {
        lesson: &stage8::LESSON,
        label: "breaker_per_attempt",
        first: (
            "breaker::open_breaker_rejects_without_calling_the_provider",
            &[
                "after 1 exhausted lookup(s)",
                "Closed { failures: 1 }",
                "tell it once",
            ],
        ),
        also: &[
            ("breaker::exhaustion_is_one_failure", &["tell it once"], &[]),
            (
                "breaker::half_open_lets_exactly_one_probe",
                &["tell it once"],
                &["never reached the provider"],
            ),
        ],
    },
    Mistake {
        lesson: &stage8::LESSON,
        label: "retry_429",
        first: (
            "facts::rate_limited_is_never_retried",
            &["no retry, no sleep"],
        ),
        also: &[(
            "counters::concurrent_lookups_add_up",
            &["one lookup alone reported 3 attempt(s)", "never 429"],
            &["global totals"],
        )],
    },
    Mistake {
        lesson: &stage8::LESSON,
        label: "ignore_deadline",
        first: (
            "budget::attempt_timeout_shrinks_with_the_budget",
            &["[0.4, 0.4, 0.05]"],
        ),
        also: &[
            (
                "budget::sleeps_end_before_the_deadline",
                &["past the deadline"],
                &[],
            ),
            (
                "budget::deadline_shorter_than_first_backoff",
                &["without sleeping"],
                &[],
            ),
        ],
    },
    Mistake {
        lesson: &stage8::LESSON,
        label: "invent_availability",
        first: (
            "facts::at_most_max_attempts",
            &["No fallback ever invents an answer"],
        ),
        also: &[(
            "no_fallback::failed_lookups_are_never_available",
            &["No fallback ever invents an answer"],
            &[],
        )],
    },
    Mistake {
        lesson: &stage8::LESSON,
        label: "subtract_global",
        first: (
            "counters::concurrent_lookups_add_up",
            &[
                "one lookup alone counted it right",
                "a difference of global totals",
            ],
        ),
        also: &[],
    },
    Mistake {
        lesson: &stage8::LESSON,
        label: "skip_breaker",
        first: (
            "breaker::open_breaker_rejects_without_calling_the_provider",
            &["rejects the lookup before any attempt"],
        ),
        also: &[("breaker::half_open_lets_exactly_one_probe", &[], &[])],
    },
    Mistake {
        lesson: &stage8::LESSON,
        label: "pause_to_the_deadline",
        first: (
            "budget::a_pause_that_reaches_the_deadline_ends_the_lookup",
            &["Compare with >=, not >", "deadline 0.25"],
        ),
        also: &[],
    },
    Mistake {
        lesson: &stage8::LESSON,
        label: "rejection_is_success",
        first: (
            "breaker::rejections_do_not_reset_the_count",
            &["neither counts as a failure nor resets the count"],
        ),
        also: &[(
            "breaker::rejected_probe_does_not_close_the_breaker",
            &["does not close the"],
            &[],
        )],
    },
    Mistake {
        lesson: &stage8::LESSON,
        label: "rejection_is_failure",
        first: (
            "breaker::missing_and_rejections_do_not_count",
            &["not that the provider is unhealthy"],
        ),
        also: &[],
    },
    Mistake {
        lesson: &stage8::LESSON,
        label: "body_by_derive",
        first: (
            "facts::invalid_payloads",
            &["an array", "[\\\"bike-7\\\", true]"],
        ),
        also: &[],
    },
    Mistake {
        lesson: &stage8::LESSON,
        label: "clamps_the_pause",
        first: (
            "budget::a_pause_that_reaches_the_deadline_ends_the_lookup",
            &["0.2 + 0.2 > 0.3", "Never shorten the pause to fit"],
        ),
        also: &[],
    },
    Mistake {
        lesson: &stage8::LESSON,
        label: "refuse_extra_fields",
        first: (
            "facts::extra_fields_are_ignored",
            &[
                "the lookup ended Failed(502 invalid_payload)",
                "other fields are ignored",
            ],
        ),
        also: &[],
    },
    Mistake {
        lesson: &stage8::LESSON,
        label: "serialised_subtract_global",
        first: (
            "counters::concurrent_lookups_add_up",
            &[
                "never ran at once",
                "A lock of your own held for a whole lookup",
            ],
        ),
        also: &[],
    },
    Mistake {
        lesson: &stage8::LESSON,
        label: "rejection_frees_the_probe",
        first: (
            "breaker::half_open_lets_exactly_one_probe",
            &[
                "a second other lookup ended Failed(503 provider_unavailable)",
                "must not give the probe's place away",
            ],
        ),
        also: &[],
    },
    Mistake {
        lesson: &stage8::LESSON,
        label: "gives_up_on_retry_after",
        first: (
            "retry_after::a_retry_after_that_fits_is_honoured",
            &[
                "the lookup ended Failed(503 provider_unavailable); the rule expects \
                 Available(available = true)",
                "whose Retry-After fits the deadline is retried",
            ],
        ),
        also: &[],
    },
    Mistake {
        lesson: &stage8::LESSON,
        label: "retry_after_over_backoff",
        first: (
            "retry_after::the_longer_of_backoff_and_retry_after",
            &[
                "the clock slept [0.0]; the rule expects [0.05]",
                "max(backoff, retry_after)",
            ],
        ),
        also: &[],
    },
    Mistake {
        lesson: &stage8::LESSON,
        label: "retry_after_any_number",
        first: (
            "retry_after::only_delay_seconds_count",
            &[
                "the clock slept [0.5]; the rule expects [0.05]",
                "only in delay-seconds",
            ],
        ),
        also: &[],
    },
    Mistake {
        lesson: &stage8::LESSON,
        label: "backoff_in_f32",
        // Right to a part in 10⁸, wrong to a part in 10⁹: the exhaustive check shows the
        // pause, every digit, not the call it moved.
        first: (
            "facts::fixture_503_503_200",
            &["the clock slept [0.05000000074505806"],
        ),
        also: &[(
            "exhaustive::matches_reference_on_every_case",
            &["first difference: lookup 1, sleeps: yours [0.05000000074505806"],
            &["provider call"],
        )],
    },
    Mistake {
        lesson: &stage8::LESSON,
        label: "retry_after_only_on_503",
        first: (
            "exhaustive::matches_reference_on_every_case",
            &[
                "differ on case 37 of the 5824 cases of the exhaustive space",
                "call 1 → 502, Retry-After \"1\"",
                "first difference: lookup 1, provider calls: yours [t=0.000 timeout 0.400, \
                 t=0.050 timeout 0.400, t=0.150 timeout 0.400]; the reference's [t=0.000 \
                 timeout 0.400]",
                "closest named check or rule: the retry_after:: checks",
                "502, 503 or 504 makes the pause max(backoff, retry_after)",
                "----- the case as a scenario file -----",
                "http = { status = 502, headers = { Retry-After = \"1\" } }",
            ],
        ),
        also: &[],
    },
    // build2
    Mistake {
        lesson: &build2::LESSON,
        label: "trims_all_whitespace",
        first: (
            "retry_after::only_spaces_and_tabs_are_trimmed",
            &[
                "fetch returned transient rate_limited, retry_after 3.0",
                "Only spaces and tabs around the digits are trimmed",
            ],
        ),
        also: &[],
    },
    Mistake {
        lesson: &build2::LESSON,
        label: "cuts_bytes",
        first: (
            "privacy::the_excerpt_ends_on_a_character_boundary",
            &[
                "fetch panicked while it cut the body",
                "not a char boundary",
                "body.chars().take(200)",
            ],
        ),
        also: &[],
    },
    Mistake {
        lesson: &build2::LESSON,
        label: "treats_429_as_permanent",
        first: (
            "retry_after::read_on_429_as_delay_seconds",
            &["429 asks the client to slow down"],
        ),
        also: &[],
    },
    Mistake {
        lesson: &build2::LESSON,
        label: "treats_500_as_transient",
        first: (
            "statuses::everything_else_is_unexpected",
            &["500 is not one of the declared transient statuses"],
        ),
        also: &[],
    },
    Mistake {
        lesson: &build2::LESSON,
        label: "reads_retry_after_on_503",
        first: (
            "retry_after::only_429_reads_it",
            &["Retry-After is read only on 429; on 503 it is ignored"],
        ),
        also: &[],
    },
    Mistake {
        lesson: &build2::LESSON,
        label: "accepts_any_case_get",
        first: (
            "method::only_exact_get_is_sent",
            &[
                "\"get\" is not exactly \"GET\"",
                "transport calls — 1, expected 0",
            ],
        ),
        also: &[],
    },
    Mistake {
        lesson: &build2::LESSON,
        label: "non_json_200_is_null",
        first: (
            "body::other_200_is_malformed",
            &["never return a made-up value", "Ok(null)"],
        ),
        also: &[],
    },
    Mistake {
        lesson: &build2::LESSON,
        label: "date_retry_after_is_zero",
        first: (
            "retry_after::unsupported_values_give_none",
            &["Only delay-seconds count", "never a made-up 0"],
        ),
        also: &[],
    },
    Mistake {
        lesson: &build2::LESSON,
        label: "parses_fractions",
        first: (
            "retry_after::unsupported_values_give_none",
            &["\"1.5\"", "Only delay-seconds count"],
        ),
        // The exhaustive check's why names the same rule.
        also: &[(
            "exhaustive::matches_reference_on_every_case",
            &["why: the rule here: Retry-After is read only on a 429 or 503, as delay-seconds"],
            &["parts from the rules"],
        )],
    },
    Mistake {
        lesson: &build2::LESSON,
        label: "case_sensitive_header",
        first: (
            "retry_after::names_compare_case_insensitively",
            &["retry-after"],
        ),
        also: &[],
    },
    Mistake {
        lesson: &build2::LESSON,
        label: "last_header_wins",
        first: ("retry_after::first_header_wins", &["the first one counts"]),
        also: &[],
    },
    Mistake {
        lesson: &build2::LESSON,
        label: "no_trim",
        first: (
            "retry_after::spaces_and_tabs_around_are_allowed",
            &["Spaces and tabs"],
        ),
        also: &[],
    },
    Mistake {
        lesson: &build2::LESSON,
        label: "whole_body_in_detail",
        first: (
            "privacy::detail_keeps_at_most_200_characters_of_body",
            &["keeps 5000 characters of the body"],
        ),
        also: &[],
    },
    Mistake {
        lesson: &build2::LESSON,
        label: "any_2xx_is_data",
        first: ("statuses::everything_else_is_unexpected", &["no other 2xx"]),
        also: &[],
    },
    Mistake {
        lesson: &build2::LESSON,
        label: "transport_before_method",
        first: (
            "method::only_exact_get_is_sent",
            &["refuse it before calling the transport"],
        ),
        also: &[],
    },
];

fn mistake_trial(m: &'static Mistake) -> Trial {
    Trial::test(
        format!(
            "{}_{}_is_caught_first_by_{}",
            m.lesson.name,
            m.label,
            m.first.0.replace("::", "_")
        ),
        move || {
            // The exhaustive check comes last and says nothing of a row that does not name
            // it: left out then (a mistake it does not catch would run all of it, slowly).
            let named = std::iter::once(m.first.0)
                .chain(m.also.iter().map(|(check, _, _)| *check))
                .any(|check| check.starts_with("exhaustive::"));
            let (summary, out) = if named {
                grade_lesson(m.lesson, m.label, "", 10.0, FormatSetting::Pretty)
            } else {
                let me = std::env::current_exe().expect("the test binary knows its own path");
                let args = Arguments {
                    skip: vec!["exhaustive::".to_string()],
                    format: Some(FormatSetting::Pretty),
                    ..Arguments::default()
                };
                let settings = RunSettings {
                    unfinished_hint: "Write its body.".into(),
                    ..RunSettings::new(m.label, Duration::from_secs(10))
                };
                grade_with_args(m.lesson, Launcher::new(me), m.label, &args, &settings)
            };
            let failing: Vec<&str> = summary
                .runs
                .iter()
                .filter(|r| r.outcome.status() != Status::Passed)
                .map(|r| r.name)
                .collect();
            ensure(failing.first() == Some(&m.first.0), || {
                format!(
                    "{}: the first failing check is {:?}, not {}:\n{out}",
                    m.label,
                    failing.first(),
                    m.first.0
                )
            })?;
            expect_failed(&summary, m.first.0, FailureKind::Mismatch, m.first.1)
                .map_err(|e| format!("{}: {}\n{out}", m.label, e.message().unwrap_or_default()))?;
            for (check, says, not) in m.also {
                expect_failed(&summary, check, FailureKind::Mismatch, says).map_err(|e| {
                    format!("{}: {}\n{out}", m.label, e.message().unwrap_or_default())
                })?;
                let message = summary
                    .outcome(check)
                    .and_then(|o| o.message())
                    .unwrap_or_default();
                for word in *not {
                    ensure(!message.contains(word), || {
                        format!(
                            "{}: {check} names the wrong cause ({word:?}):\n{message}",
                            m.label
                        )
                    })?;
                }
            }
            // The first failure is printed in full, the others one line each.
            // (The output of the code under test has a "----" heading of its own.)
            let full = out.matches("\n---- ").count() - out.matches("\n---- output of").count();
            ensure(full == 1, || {
                format!("{}: {full} failures in full:\n{out}", m.label)
            })?;
            if failing.len() > 1 {
                ensure(
                    out.contains("one line each") && out.contains("--exact"),
                    || out.clone(),
                )?;
            }
            Ok(())
        },
    )
}

/// The grader hands build3's exhaustive check the reference's run of every case (as
/// digests), and the check runs the reference only where the learner's run does not match
/// one. The verdict is the same with them as without; and a digest made to match the
/// learner's wrong run on the first case they differ moves the reported case on, which
/// shows the child really took them.
fn exhaustive_check_uses_the_reference_runs_the_grader_hands_it() -> Result<(), Failed> {
    const CHECK: &str = "exhaustive::matches_reference_on_every_case";
    let case_reported = |out: &str| -> Option<usize> {
        let at = out.find("differ on case ")? + "differ on case ".len();
        out[at..].split(' ').next()?.parse().ok()
    };
    let label = "nan_wait_stops";
    let without = grade_handed(label, "exhaustive::", |_, _| &[]);
    let first = case_reported(&without).ok_or_else(|| format!("no case named:\n{without}"))?;
    let real = |lesson: &str, check: &str| {
        let input = grader::check_input::for_check(lesson, check);
        assert!(check != CHECK || !input.is_empty(), "made before the run");
        input
    };
    grader::check_input::made("build3");
    let handed = grade_handed(label, "exhaustive::", real);
    ensure(case_reported(&handed) == Some(first), || {
        format!("without digests case {first}; with them:\n{handed}")
    })?;

    static FORGED: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    let mut forged = grader::check_input::made("build3").to_vec();
    let case = build3::exhaustive::case(first).ok_or("no such case")?;
    let mutant = impls::build3(label).ok_or("no mutant")?;
    let (theirs, _) = build3::recording::record(&mutant, &case.policy, &case.script, None);
    let digest = theirs.digest().ok_or("the mutant's run has no digest")?;
    let header = forged.iter().position(|b| *b == b'\n').ok_or("no header")? + 1;
    let at = header + (first - 1) * 8;
    forged[at..at + 8].copy_from_slice(&digest.to_le_bytes());
    let _ = FORGED.set(forged);
    let moved = grade_handed(label, "exhaustive::", |_, check| {
        if check == CHECK {
            FORGED.get().map_or(&[], Vec::as_slice)
        } else {
            &[]
        }
    });
    ensure(
        // The mutant still differs later on: a later case, never none (which a harness
        // that crashed on its input would also give).
        case_reported(&moved).is_some_and(|later| later > first),
        || format!("case {first} forged to match; still reported:\n{moved}"),
    )
}

//! Watch mode end to end: a real save, a save by rename, a file that does not compile, a
//! loop in the learner's code, and quitting. Nothing here waits for a fixed time: each step
//! waits for the line that shows the grader got there.

use crate::common;

use common::*;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// How long a step may take before the test gives up (a cold build is the slowest step).
const STEP: Duration = Duration::from_secs(240);

struct Watch {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Watch {
    fn start(root: &std::path::Path, args: &[&str]) -> Watch {
        let mut all = vec!["watch"];
        all.extend_from_slice(args);
        let mut child = grader_command(root, &all)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the grader starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Watch {
            child,
            stdin,
            lines,
            seen: Vec::new(),
        }
    }

    /// Reads lines until one contains `text`, then until the next prompt; returns what the
    /// run printed.
    fn run_showing(&mut self, text: &str) -> String {
        let mut run = Vec::new();
        let mut found = false;
        loop {
            let line = self.lines.recv_timeout(STEP).unwrap_or_else(|_| {
                panic!(
                    "no {text:?} within {STEP:?}; so far:\n{}\n{}",
                    self.seen.join("\n"),
                    run.join("\n")
                )
            });
            found |= line.contains(text);
            let prompt = line.starts_with("watch:");
            run.push(line);
            if prompt && found {
                break;
            }
            if prompt {
                self.seen.append(&mut run);
            }
        }
        let text = run.join("\n");
        self.seen.append(&mut run);
        text
    }

    /// Reads lines until one contains `text` (a run under way shows no prompt yet).
    fn wait_for(&mut self, text: &str) {
        loop {
            let line = self.lines.recv_timeout(STEP).unwrap_or_else(|_| {
                panic!(
                    "no {text:?} within {STEP:?}; so far:\n{}",
                    self.seen.join("\n")
                )
            });
            let found = line.contains(text);
            self.seen.push(line);
            if found {
                return;
            }
        }
    }

    fn key(&mut self, key: &str) {
        self.stdin.write_all(key.as_bytes()).unwrap();
        self.stdin.flush().unwrap();
    }
}

#[test]
fn watch_reruns_on_each_save_and_quits() {
    let kit = fresh_kit();
    let root = kit.root();
    let file = learner_file(root, "build3");
    // The looping file waits out the timeout in each check that reaches its loop.
    let mut watch = Watch::start(root, &["build3", "--timeout", "0.5"]);
    let first = watch.run_showing("check result:");
    assert!(first.contains("UNFINISHED"), "{first}");

    // A plain save.
    std::fs::write(&file, stub_with("build3", CORRECT_BUILD3)).unwrap();
    let run = watch.run_showing("check result: ok.");
    assert!(run.contains("Every check of build3 passes"), "{run}");

    // l lists the lessons, reading their files: no other lesson runs for that. (The list
    // is found by the standing of the lessons not started: a run's next steps name stage8.)
    // The same table as `list`, the guidance used included.
    watch.key("l");
    let list = watch.run_showing("not started");
    assert!(
        list.lines()
            .any(|l| l.starts_with("lesson ") && l.trim_end().ends_with("guidance")),
        "{list}"
    );
    assert!(
        grader::lessons::LESSONS.iter().all(|g| list
            .lines()
            .any(|line| line.starts_with(&format!("{} ", g.name)))),
        "{list}"
    );
    watch.key("r");
    let run = watch.run_showing("check result: ok.");
    assert!(run.contains("build3 · "), "{run}");

    // A mistake at a boundary: the exhaustive check's case is saved, as in a plain run.
    let boundary = CORRECT_BUILD3.replace("w > policy.max_delay", "w >= policy.max_delay");
    assert_ne!(boundary, CORRECT_BUILD3);
    std::fs::write(&file, stub_with("build3", &boundary)).unwrap();
    let run = watch.run_showing("check result: FAILED.");
    assert!(
        run.contains("The case exhaustive::matches_reference_on_every_case found is saved in"),
        "{run}"
    );

    // A save by rename, as many editors do: a file that does not compile.
    let tmp = file.with_extension("rs.swp");
    std::fs::write(&tmp, "pub fn retry_request( {\n").unwrap();
    std::fs::rename(&tmp, &file).unwrap();
    let run = watch.run_showing("does not compile");
    assert!(
        run.contains("practice/src/lib.rs does not compile"),
        "{run}"
    );
    // r runs again (here rather than after the loop, which waits out its checks' timeouts).
    watch.key("r");
    let run = watch.run_showing("does not compile");
    assert!(run.contains("──── run "), "a run of its own: {run}");

    // A loop in the learner's code: named, and the watch goes on; q quits. It loops on a
    // permanent failure only, so a few checks wait out the timeout, not all 39 (ten rounds
    // of 0.5 s, with the checks four at a time: five seconds of spinning cores).
    std::fs::write(
        &file,
        stub_with(
            "build3",
            "match { let mut request = request; request() } {\n        \
             Err(RequestError::Permanent(_)) => loop { std::hint::spin_loop() },\n        \
             _ => todo!(),\n    }",
        ),
    )
    .unwrap();
    let run = watch.run_showing("did not finish");
    assert!(run.contains("did not finish within 0.5 s"), "{run}");
    assert!(run.contains("check result: FAILED."), "{run}");
    let all = watch.seen.join("\n");
    assert!(
        !all.contains("stage8 · ") && !all.contains("build2 · "),
        "only build3's file changed, only build3 ran:\n{all}"
    );
    watch.key("q");
    let status = watch.child.wait().unwrap();
    assert!(status.success(), "{status:?}");
}

#[test]
fn help_in_watch_mode_is_recorded_first() {
    let kit = fresh_kit();
    let root = kit.root();
    let mut watch = Watch::start(root, &["build3"]);
    watch.run_showing("check result:");
    // The first h only says that the next one records: nothing is shown or recorded yet.
    watch.key("h");
    let told = watch.run_showing("Press h again to see it");
    assert!(
        told.contains("records it in GUIDANCE_LOG.md first"),
        "{told}"
    );
    let log = std::fs::read_to_string(root.join(grader::guidance::LOG_FILE)).unwrap();
    assert_eq!(log.matches("| build3 | help |").count(), 0, "{log}");
    watch.key("h");
    let shown = watch.run_showing("help, level 1 of 3");
    assert!(shown.contains("Recorded as guidance #1"), "{shown}");
    watch.key("h");
    watch.run_showing("help, level 2 of 3");
    watch.key("h");
    watch.run_showing("help, level 3 of 3");
    // Past the last level: nothing shown again, nothing recorded, and it says so.
    watch.key("h");
    watch.run_showing("You have seen every help level of build3");
    drop(watch.stdin);
    let status = watch.child.wait().unwrap();
    assert!(status.success(), "input closed: the watch ends");
    // The copy's log (the test's own kit, never the working tree's).
    let log = std::fs::read_to_string(root.join(grader::guidance::LOG_FILE)).unwrap();
    assert!(
        log.contains("| build3 | help | level 2: approach (watch) |"),
        "{log}"
    );
    assert_eq!(log.matches("| build3 | help |").count(), 3, "{log}");
}

/// A run whose checks loop takes a timeout per check (here 60 s each: minutes in all).
/// A save, or q, during it must not wait for that: the run is stopped, its checks with it.
/// Each step is bounded by STEP, far less than the looping run would take.
#[test]
fn a_save_or_q_stops_a_run_that_loops() {
    let kit = fresh_kit();
    let root = kit.root();
    let file = learner_file(root, "build3");
    let looping = stub_with("build3", "loop { std::hint::spin_loop() }");
    std::fs::write(&file, &looping).unwrap();
    let mut watch = Watch::start(root, &["build3", "--timeout", "60"]);
    watch.wait_for("running 40 checks of build3");

    // h during the run, then a save of another lesson's file, which stops the run: what h
    // says comes once a run has ended, and it is about build3, where it was asked for.
    // Pressed twice: once is enough, and it says so.
    watch.key("hh");
    watch.wait_for("(build3's next help level comes when this run ends)");
    let stage8 = learner_file(root, "stage8");
    let stub8 = std::fs::read_to_string(&stage8).unwrap();
    std::fs::write(&stage8, format!("{stub8}\n// started\n")).unwrap();
    // The watch's first h says that the next one records, and for which lesson.
    let told = watch.run_showing("Press h again to see it");
    assert!(told.contains("h shows build3's next help level"), "{told}");
    let log = std::fs::read_to_string(root.join(grader::guidance::LOG_FILE)).unwrap();
    assert_eq!(
        log.matches("| help |").count(),
        0,
        "nothing recorded yet: {log}"
    );
    // The save made stage8 the lesson at hand: the next h is its help, recorded first.
    watch.key("h");
    let shown = watch.run_showing("help, level 1 of 3");
    assert!(
        shown.trim_start().starts_with("One lookup, one budget"),
        "stage8's help: {shown}"
    );
    let all = watch.seen.join("\n");
    assert!(all.contains("stage8 · "), "stage8 ran first: {all}");
    let log = std::fs::read_to_string(root.join(grader::guidance::LOG_FILE)).unwrap();
    assert!(log.contains("| stage8 | help | level 1"), "{log}");
    assert_eq!(log.matches("| help |").count(), 1, "one level shown: {log}");
    assert!(!log.contains("| build3 | help"), "{log}");

    // A save during a run: the fix's verdict comes now, not after the loops time out.
    std::fs::write(&file, format!("{looping}\n// again\n")).unwrap();
    watch.wait_for("running 40 checks of build3");
    std::fs::write(&file, stub_with("build3", CORRECT_BUILD3)).unwrap();
    let run = watch.run_showing("check result: ok.");
    assert!(!run.contains("did not finish"), "{run}");
    assert!(
        !watch.seen.join("\n").contains("check result: FAILED"),
        "the stopped run shows no verdict:\n{}",
        watch.seen.join("\n")
    );

    // q during a run that loops quits at once, and leaves none of its checks running.
    std::fs::write(&file, &looping).unwrap();
    watch.wait_for("running 40 checks of build3");
    // (Processes are counted through /proc.)
    #[cfg(target_os = "linux")]
    {
        let started = std::time::Instant::now();
        while harnesses(root) == 0 {
            assert!(started.elapsed() < STEP, "no check of the run seen running");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    watch.key("q");
    let (tx, rx) = std::sync::mpsc::channel();
    let mut child = watch.child;
    std::thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    let status = rx
        .recv_timeout(STEP)
        .expect("q ends the watch while its checks loop")
        .unwrap();
    assert!(status.success(), "{status:?}");
    #[cfg(target_os = "linux")]
    assert_eq!(
        harnesses(root),
        0,
        "checks of the stopped run still running"
    );
}

#[cfg(target_os = "linux")]
/// How many check processes of the kit at `root` are running (their program is the
/// private link of the harness, in the kit's own target folder: see `grader_command`).
fn harnesses(root: &std::path::Path) -> usize {
    let target = root.join("target");
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|e| std::fs::read_to_string(e.path().join("cmdline")).ok())
        .filter(|cmd| {
            cmd.split('\0').next().is_some_and(|program| {
                program.starts_with(&*target.to_string_lossy())
                    && program.ends_with("harness-build3")
            })
        })
        .count()
}

//! The fast paths (`grader/src/fast.rs`: the replayed compile of the learner's crate, and
//! checks forked from a fork server) give exactly what the slow path gives: every registered
//! lesson, run on the same learner's files with them on and with them off, reports the same
//! checks with the same statuses and messages. Nothing here reads `practice/`.

use crate::common;

use common::{fresh_kit, grader_command, stub, stub_with, wait_within, write_learner};
use grader::fast::FAST_PATHS_VAR;
use serde_json::Value;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

/// Runs `lesson` in the copy at `root`, with the fast paths on or off, and returns its
/// report's checks: name, status, message.
fn checks_of(root: &Path, lesson: &str, fast: bool) -> Value {
    let report = root.join(format!("report-{lesson}.json"));
    let _ = std::fs::remove_file(&report);
    let spec = format!("json:{}", report.display());
    let mut command = grader_command(root, &[lesson, "--report", &spec]);
    command.stdout(Stdio::null()).stderr(Stdio::null());
    // The frames RUST_BACKTRACE=1 adds to a panic are read from the learner's library, which
    // only the fast path loads (the slow path links the learner's code into a runner the
    // sandbox keeps unreadable): compared without them.
    command.env("RUST_BACKTRACE", "0");
    if !fast {
        command.env(FAST_PATHS_VAR, "off");
    }
    let mut child = command.spawn().expect("the grader starts");
    let status = wait_within(&mut child, Duration::from_secs(600), "the run did not end");
    assert!(status.code().is_some_and(|c| c < 2), "{lesson}: {status:?}");
    let text = std::fs::read_to_string(&report).expect("the report is written");
    let report: Value = serde_json::from_str(&text).expect("the report is JSON");
    report["checks"]
        .as_array()
        .expect("the report lists its checks")
        .iter()
        .map(|c| serde_json::json!([c["name"], c["status"], c["message"]]))
        .collect()
}

/// Whether the last build of `lesson` in the copy at `root` was replayed (the kit's record of
/// it says so).
fn replayed(root: &Path, lesson: &str) -> bool {
    let entry = root.join(format!("target/kit-cache/build-{lesson}.json"));
    let text = std::fs::read_to_string(entry).expect("the build is recorded");
    let entry: Value = serde_json::from_str(&text).expect("the record is JSON");
    entry["replayed"] == true
}

#[test]
fn every_lesson_gives_the_same_results_with_the_fast_paths_on_and_off() {
    // The lessons are independent of each other: two copies of the kit take them in turn
    // (each lesson's runs in one copy, one after the other), so two runs go at once.
    let lessons = std::sync::Mutex::new(grader::lessons::LESSONS.iter().collect::<Vec<_>>());
    let next = || lessons.lock().unwrap().pop();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..2.min(grader::lessons::LESSONS.len()))
            .map(|_| {
                scope.spawn(|| {
                    let kit = fresh_kit();
                    while let Some(lesson) = next() {
                        same_results_both_ways(kit.root(), lesson);
                    }
                })
            })
            .collect();
        for worker in workers {
            if let Err(panic) = worker.join() {
                std::panic::resume_unwind(panic);
            }
        }
    });
}

/// Whether the recipe at `path` links the learner's library with a linker of its own (the
/// toolchain's `rust-lld`, run directly), and keeps the C compiler's link to fall back on.
fn links_directly(path: &Path) -> bool {
    let text = std::fs::read_to_string(path).expect("the recipe is readable");
    let recipe: Value = serde_json::from_str(&text).expect("the recipe is JSON");
    let args = recipe["library"]["args"].as_array().expect("its arguments");
    let direct = args
        .iter()
        .filter_map(Value::as_str)
        .any(|a| a.starts_with("linker=") && a.ends_with("/rust-lld"));
    direct && recipe["fallback"].is_object()
}

/// Whether rustc links with its own `rust-lld` here (x86-64 Linux, where the toolchain has
/// one): where the recipe must link the library with it directly.
fn rust_lld_beside_rustc() -> bool {
    let rustc = |args: &[&str]| {
        let out = std::process::Command::new("rustc").args(args).output();
        String::from_utf8(out.expect("rustc runs").stdout).expect("rustc prints UTF-8")
    };
    let sysroot = rustc(&["--print", "sysroot"]);
    let host = rustc(&["-vV"])
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map(str::to_string)
        .expect("rustc names its host");
    cfg!(all(target_os = "linux", target_arch = "x86_64"))
        && Path::new(sysroot.trim())
            .join("lib/rustlib")
            .join(host)
            .join("bin/rust-lld")
            .is_file()
}

/// Runs `lesson` in the copy at `root` with the fast paths on and off, and requires the same
/// checks, statuses and messages.
fn same_results_both_ways(root: &Path, lesson: &grader::Lesson) {
    // Unfinished everywhere, and failing everywhere with a panic of the learner's.
    for text in [
        stub(lesson.name),
        stub_with(lesson.name, r#"panic!("the learner's own panic")"#),
    ] {
        write_learner(root, lesson.name, &text);
        // cargo builds the first run, and keeps what it ran; an edit after it replays.
        let first = checks_of(root, lesson.name, true);
        let recipe = root.join(format!("target/kit-cache/replay-{}.json", lesson.name));
        assert!(recipe.is_file(), "{}: no recipe to replay", lesson.name);
        assert_eq!(
            links_directly(&recipe),
            rust_lld_beside_rustc(),
            "{}: the library is linked by rust-lld directly exactly where rustc links with it",
            lesson.name
        );
        write_learner(root, lesson.name, &format!("{text}\n// an edit\n"));
        let fast = checks_of(root, lesson.name, true);
        assert!(
            replayed(root, lesson.name),
            "{}: the edit was not replayed",
            lesson.name
        );
        let slow = checks_of(root, lesson.name, false);
        assert!(
            !replayed(root, lesson.name),
            "{}: replayed with the fast paths off",
            lesson.name
        );
        assert_eq!(fast, slow, "{}: the fast paths differ", lesson.name);
        assert_eq!(first, slow, "{}: cargo's first run differs", lesson.name);
    }
}

#[test]
fn a_system_library_the_learners_code_links_loads_with_the_fast_paths_on_and_off() {
    // The C library's maths, which neither the runner nor the standard library loads: a
    // learner's library that needs it must load in a confined runner as in one started as
    // a program.
    let kit = fresh_kit();
    let root = kit.root();
    let text = stub_with(
        "build3",
        r#"{
        #[link(name = "m")]
        extern "C" {
            fn ilogb(x: f64) -> i32;
        }
        // SAFETY: a pure function of the C library's maths.
        panic!("ilogb of 8 is {}", unsafe { ilogb(8.0) })
    }"#,
    );
    write_learner(root, "build3", &text);
    checks_of(root, "build3", true);
    write_learner(root, "build3", &format!("{text}\n// an edit\n"));
    let fast = checks_of(root, "build3", true);
    assert!(replayed(root, "build3"), "the edit was not replayed");
    let slow = checks_of(root, "build3", false);
    assert_eq!(fast, slow, "the fast paths differ");
    let checks = fast.as_array().expect("a list of checks");
    assert!(!checks.is_empty(), "no checks ran");
    for check in checks {
        assert!(
            check[2]
                .as_str()
                .is_some_and(|m| m.contains("ilogb of 8 is 3")),
            "the learner's library did not run: {check}"
        );
    }
}

/// The processes running a program of the copy at `root` (its fork servers, zygotes, checks),
/// as `pid: command line`; processes that have ended and wait to be reaped are not counted.
fn running_from(root: &Path) -> Vec<String> {
    let needle = root.to_string_lossy().into_owned();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let status = std::fs::read_to_string(entry.path().join("status")).unwrap_or_default();
        if status
            .lines()
            .any(|l| l.starts_with("State:") && l.contains('Z'))
        {
            continue;
        }
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        // Not the grader itself, which names the copy as its --root.
        if cmdline.contains(&needle) && !cmdline.contains("--root") {
            found.push(format!("{pid}: {cmdline}"));
        }
    }
    found
}

#[test]
fn after_an_edit_the_checks_find_their_fork_servers_started_during_the_build() {
    let kit = fresh_kit();
    let root = kit.root();
    let run = |filter: &[&str]| -> String {
        let mut args = vec!["build3", "-v"];
        args.extend_from_slice(filter);
        let out = grader_command(root, &args)
            .output()
            .expect("the grader runs");
        assert!(out.status.code().is_some_and(|c| c < 2), "{out:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    write_learner(root, "build3", &stub("build3"));
    // The first build (cargo's) has no earlier one to start from; a build after an edit does.
    run(&[]);
    for (round, filter) in [&[][..], &["--exact", "fixtures::capped_exhaustion"][..]]
        .into_iter()
        .enumerate()
    {
        write_learner(
            root,
            "build3",
            &format!("{}\n// edit {round}\n", stub("build3")),
        );
        let said = run(filter);
        assert!(
            replayed(root, "build3"),
            "the edit was not replayed:\n{said}"
        );
        assert!(!said.contains("prestart not taken"), "{said}");
        // As many servers as the checks run on at once, and every one took checks.
        let threads = grader::suite::default_threads().min(if filter.is_empty() {
            grader::lessons::lesson("build3").unwrap().checks.len()
        } else {
            1
        });
        let taken = format!(
            "note: fast path prestart taken: {threads} of {threads} fork servers started \
             during the build served checks"
        );
        assert!(said.contains(&taken), "{said}");
        // None of them, nor their zygotes, outlives the run (a killed process goes within
        // a moment of its parent's end).
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        let mut left = running_from(root);
        while !left.is_empty() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
            left = running_from(root);
        }
        assert!(left.is_empty(), "left running after the run: {left:?}");
    }
}

#[test]
fn files_the_grader_was_handed_open_never_reach_the_learners_code_either_way() {
    // A learner's runs (the checks run every time; only builds are kept): the library in a
    // runner, after cargo's build (or the copy's kept one); after an edit (replayed); and
    // with the fast paths off (cargo's harness with the learner's crate linked in, started
    // per check).
    let kit = fresh_kit();
    let root = kit.root();
    let dir = tempfile::tempdir().unwrap();
    let text = stub_with("build3", &common::inherited_files_attack());
    for (run, fast, edit) in [
        ("first", true, ""),
        ("edited", true, "\n// an edit\n"),
        ("slow", false, ""),
    ] {
        write_learner(root, "build3", &format!("{text}{edit}"));
        let report = dir.path().join(format!("{run}.json"));
        let log = dir.path().join(format!("{run}.log"));
        let spec = format!("json:{}", report.display());
        let mut command = grader_command(root, &["build3", "--report", &spec]);
        command.stdout(Stdio::null()).stderr(Stdio::null());
        if !fast {
            command.env(FAST_PATHS_VAR, "off");
        }
        common::hand_open_files(&mut command, &log, dir.path());
        let mut child = command.spawn().expect("the grader starts");
        let status = wait_within(&mut child, Duration::from_secs(600), "the run did not end");
        assert_eq!(status.code(), Some(1), "{run}");
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "", "{run}: written");
        let shown = std::fs::read_to_string(&report).expect("the report is written");
        assert!(!shown.contains(common::HANDED_SECRET), "{run}: read");
        assert!(shown.contains("inherited: []"), "{run}: {shown}");
    }
}

//! The runner, as the kit builds it for a learner: the process that runs the learner's
//! code holds neither the checks nor the reference answers, and the judge that holds them
//! runs none of the learner's code. Nothing here reads `practice/`.

use crate::common;

use common::{fresh_kit, grader_command, grader_exits, stub_with, write_learner};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The files the last build of `lesson` in the copy at `root` ran: the harness (the judge,
/// when the build was replayed) and its runner.
fn built(root: &Path, lesson: &str) -> (PathBuf, Option<PathBuf>) {
    let entry = root.join(format!("target/kit-cache/build-{lesson}.json"));
    let text = std::fs::read_to_string(entry).expect("the build is recorded");
    let entry: Value = serde_json::from_str(&text).expect("the record is JSON");
    let path = |v: &Value| v.as_str().map(PathBuf::from);
    (
        path(&entry["executable"]).expect("the record names the harness"),
        path(&entry["runner"]),
    )
}

/// Marks of a crate's code in a program: its symbols' mangled names (legacy and v0 both
/// spell the crate's name with its length before it) and its source paths, which panic
/// messages carry. How many of them a build keeps depends on what the optimiser inlines
/// (the reference's functions are often inlined into the checks, leaving no symbol of
/// their own), so the judge must show at least one of each crate's marks, and the runner
/// none of any.
const CHECKS: [&[u8]; 2] = [b"13grader_checks", b"grader/checks/src/"];
const REFERENCE: [&[u8]; 4] = [
    b"9reference5retry",
    b"9reference5fetch",
    b"reference/src/retry.rs",
    b"reference/src/fetch.rs",
];

fn holds(program: &[u8], marks: &[&[u8]]) -> Vec<String> {
    marks
        .iter()
        .filter(|m| program.windows(m.len()).any(|w| w == **m))
        .map(|m| String::from_utf8_lossy(m).into_owned())
        .collect()
}

#[test]
fn the_runner_holds_neither_the_checks_nor_the_reference() {
    let kit = fresh_kit();
    let root = kit.root();
    let answer = std::fs::read_to_string(common::kit_root().join("reference/src/retry.rs"))
        .expect("the reference's answer reads");
    // cargo builds the first run; an edit after it is replayed, with the judge and runner.
    write_learner(root, "build3", &answer);
    grader_exits(root, &["build3"], 0);
    write_learner(root, "build3", &format!("{answer}\n// an edit\n"));
    let out = grader_exits(root, &["build3"], 0);
    assert!(out.contains("40 passed"), "{out}");
    let (judge, runner) = built(root, "build3");
    let runner = runner.expect("a replayed build records its runner");
    let judge = std::fs::read(&judge).expect("the judge reads");
    let runner = std::fs::read(&runner).expect("the runner reads");
    // The scan finds what is there: the judge holds both crates.
    assert!(
        !holds(&judge, &CHECKS).is_empty(),
        "the judge lacks the checks' marks"
    );
    assert!(
        !holds(&judge, &REFERENCE).is_empty(),
        "the judge lacks the reference's marks"
    );
    let mut found = holds(&runner, &CHECKS);
    found.extend(holds(&runner, &REFERENCE));
    assert!(found.is_empty(), "the runner holds {found:?}");
    // It does hold the runner's own code, so the scan looks at a real program.
    assert!(!holds(&runner, &[b"10kit_runner"]).is_empty());
}

/// With the fast paths on, each check's runner is a fork of the runner zygote (its command
/// line is the zygote's), and the learner's code in it is confined as in a runner started as a
/// program: it can signal neither the zygote (its parent) nor anything else, and one check's
/// runner starts from the zygote's state, not the last check's. With them off, each runner is
/// a program of its own. The learner's code says its command line and what the signal did in
/// its panic message, which the report quotes.
#[cfg(target_os = "linux")]
#[test]
fn with_the_fast_paths_on_each_runner_is_a_fork_of_the_zygote_and_as_confined() {
    let kit = fresh_kit();
    let root = kit.root();
    let body = r#"{
        static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let calls = CALLS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let parent = std::os::unix::process::parent_id() as i32;
        extern "C" { fn kill(pid: i32, signal: i32) -> i32; }
        // SIGCONT: harmless if it were delivered; refused, it says the filter held.
        let signalled = unsafe { kill(parent, 18) } == 0;
        let args: Vec<String> = std::env::args().collect();
        panic!("args {args:?}; signalled the parent: {signalled}; calls before: {calls}")
    }"#;
    let text = stub_with("build3", body);
    write_learner(root, "build3", &text);
    // cargo builds the first run; an edit after it is replayed.
    let first = grader_exits(root, &["build3", "fixtures::"], 1);
    write_learner(root, "build3", &format!("{text}\n// an edit\n"));
    let fast = grader_exits(root, &["build3", "fixtures::", "--all-failures"], 1);
    for out in [&first, &fast] {
        assert!(
            out.contains("__zygote"),
            "not forked from the zygote:\n{out}"
        );
        assert!(out.contains("signalled the parent: false"), "{out}");
        assert!(!out.contains("signalled the parent: true"), "{out}");
        assert!(!out.contains("calls before: 1"), "a runner reused:\n{out}");
    }
    let mut slow = grader_command(root, &["build3", "fixtures::", "--all-failures"]);
    slow.env(grader::fast::FAST_PATHS_VAR, "off");
    let slow = slow.output().expect("the grader runs");
    let slow = String::from_utf8_lossy(&slow.stdout);
    assert!(
        slow.contains("args [\""),
        "the learner's message is quoted:\n{slow}"
    );
    assert!(!slow.contains("limit not applied"), "{slow}");
    assert!(
        !slow.contains("__zygote"),
        "a zygote with the fast paths off:\n{slow}"
    );
    assert!(slow.contains("signalled the parent: false"), "{slow}");
}

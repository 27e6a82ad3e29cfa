//! `grade` on a system without Landlock (a kernel before 5.13, or a container whose seccomp
//! profile does not know Landlock's calls), played by starting the grader with those calls
//! made unknown: it refuses to grade unless told to, and then every row says so.
#![cfg(target_os = "linux")]

use crate::common;
#[path = "support/no_landlock.rs"]
mod no_landlock;

use common::{grader_command, kit_root, text, wait_within};
use std::os::unix::process::CommandExt;
use std::process::Stdio;
use std::time::Duration;

/// Runs `grade ARGS` on the kit without Landlock; returns its exit status and standard error.
fn grade_without_landlock(args: &[&str]) -> (Option<i32>, String) {
    let mut args = args.to_vec();
    args.insert(0, "grade");
    let mut command = grader_command(&kit_root(), &args);
    command
        .env("NO_COLOR", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    // SAFETY: `refuse_landlock` makes system calls only.
    unsafe {
        command.pre_exec(|| {
            if no_landlock::refuse_landlock() {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        })
    };
    let mut child = command.spawn().expect("the grader starts");
    let mut stderr = child.stderr.take().expect("its standard error");
    let reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stderr, &mut bytes);
        bytes
    });
    let status = wait_within(&mut child, Duration::from_secs(600), "grade did not end");
    (status.code(), text(&reader.join().unwrap_or_default()))
}

#[test]
fn grade_refuses_a_weak_sandbox_unless_allowed_and_then_every_row_says_so() {
    let class = tempfile::tempdir().expect("a scratch folder");
    let submission = class.path().join("ada");
    std::fs::create_dir(&submission).expect("a submission folder");
    std::fs::write(submission.join("lib.rs"), common::stub("build3")).expect("its lib.rs");
    let out = class.path().join("grades");
    let out_arg = out.to_string_lossy().into_owned();
    let class_arg = class.path().join("ada").to_string_lossy().into_owned();
    let base = ["--one", "--group", "build3", "--out", &out_arg];

    let mut args = vec![class_arg.as_str()];
    args.extend(base);
    let (code, stderr) = grade_without_landlock(&args);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot sandbox the learners' code")
            && stderr.contains("Landlock")
            && stderr.contains("--allow-weak-sandbox"),
        "{stderr}"
    );
    assert!(!out.join("grades.csv").exists(), "graded anyway");

    args.push("--allow-weak-sandbox");
    let (code, stderr) = grade_without_landlock(&args);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("grading with a weak sandbox"), "{stderr}");
    let book = std::fs::read_to_string(out.join("grades.json")).expect("grades.json");
    let rows: serde_json::Value = serde_json::from_str(&book).expect("grades.json is JSON");
    let rows = rows["rows"].as_array().cloned().unwrap_or_default();
    assert_eq!(rows.len(), 1, "{book}");
    let note = rows[0]["note"].as_str().unwrap_or_default();
    assert!(
        note.contains("graded with a weak sandbox") && note.contains("Landlock"),
        "{book}"
    );
}

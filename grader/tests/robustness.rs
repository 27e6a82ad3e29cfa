//! What a learner does, or has done, never breaks the kit: a closed pipe, guidance recorded
//! under the right lesson, files that are missing.

use crate::common;

use common::*;
use grader::guidance::{parse, Kind, LOG_FILE};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

/// Runs the grader with its standard output read for `lines` lines, then closed (as
/// `| head -N` does); returns the exit status and what it wrote to standard error.
fn closed_after(root: &Path, args: &[&str], lines: usize) -> (Option<i32>, String) {
    let mut child = grader_command(root, args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut reader = BufReader::new(stdout);
    for _ in 0..lines {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            break;
        }
    }
    drop(reader);
    let out = child.wait_with_output().unwrap();
    (out.status.code(), text(&out.stderr))
}

#[test]
fn a_closed_pipe_ends_output_quietly_with_the_status_of_a_finished_run() {
    let kit = fresh_kit();
    let root = kit.root();
    let (code, stderr) = closed_after(root, &["build3", "--against", "reference"], 3);
    assert_eq!(code, Some(0), "all checks pass: {stderr}");
    assert!(stderr.is_empty(), "no message: {stderr}");
    let (code, stderr) = closed_after(root, &["build3"], 3);
    assert_eq!(code, Some(1), "the stub is unfinished: {stderr}");
    assert!(
        !stderr.contains("Broken pipe") && !stderr.contains("panicked"),
        "{stderr}"
    );
    for args in [
        &["list"][..],
        &["log"],
        &["reset", "build3", "--list-backups"],
        &["--help"],
    ] {
        let (code, stderr) = closed_after(root, args, 0);
        assert_eq!(code, Some(0), "{args:?}: {stderr}");
        assert!(stderr.is_empty(), "{args:?}: {stderr}");
    }
    // Both streams into one pipe that closes: `2>&1 | head -3`.
    let out = Command::new("bash")
        .arg("-c")
        .arg("\"$@\" 2>&1 | head -3 >/dev/null; exit ${PIPESTATUS[0]}")
        .arg("_")
        .arg(GRADER)
        .arg("--root")
        .arg(root)
        .args(["stage8"])
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
}

fn records(root: &Path) -> Vec<grader::guidance::Record> {
    parse(&std::fs::read_to_string(root.join(LOG_FILE)).unwrap()).records
}

#[test]
fn a_scenario_run_is_recorded_under_its_own_lesson() {
    let kit = fresh_kit();
    let root = kit.root();
    let file = root.join("exercises/stage8/scenarios/slow-provider.toml");
    let file = file.to_str().unwrap();
    let out = grader(root, &["scenario", file, "--against", "reference"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = grader(root, &["scenario", file, "--compare"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "the stub differs: {}",
        text(&out.stdout)
    );
    let recs = records(root);
    assert_eq!(recs.len(), 2);
    assert!(
        recs.iter()
            .all(|r| r.lesson == "stage8" && r.kind == Kind::ReferenceRun),
        "{recs:?}"
    );
    let out = grader(root, &["list"]);
    let stdout = text(&out.stdout);
    let row = |g: &str| {
        stdout
            .lines()
            .find(|l| l.starts_with(g))
            .unwrap_or_default()
            .to_string()
    };
    assert!(row("stage8").contains("2 reference runs"), "{stdout}");
    assert!(row("build3").ends_with("none"), "{stdout}");
}

#[test]
fn a_missing_scenario_file_has_no_line_number() {
    let kit = fresh_kit();
    let out = grader(kit.root(), &["scenario", "missing.toml"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("missing.toml: cannot read the file"),
        "{stderr}"
    );
    assert!(!stderr.contains("missing.toml:1:1"), "{stderr}");
}

#[test]
fn a_reset_says_how_to_bring_the_work_back() {
    let kit = fresh_kit();
    let root = kit.root();
    write_learner(root, "build3", "my work\n");
    let out = grader(root, &["reset", "build3", "--yes"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let name = stdout
        .split("--restore ")
        .nth(1)
        .and_then(|rest| rest.split('`').next())
        .expect("the message names --restore and the backup")
        .to_string();
    let out = grader(root, &["reset", "build3", "--restore", &name]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(learner_file(root, "build3")).unwrap(),
        "my work\n"
    );
    let out = grader(root, &["reset", "build3", "--list-backups"]);
    assert_eq!(
        text(&out.stdout)
            .lines()
            .filter(|l| l.ends_with(" bytes)"))
            .count(),
        1,
        "restoring over the stub made no backup of it: {}",
        text(&out.stdout)
    );
}

/// Ctrl-C while a check runs code that started a process: the grader stops the check's
/// whole process group before it ends (its own child would die with it anyway; what the
/// code under test started would not), removes its scratch folders, and then dies of the
/// signal.
#[cfg(target_os = "linux")]
#[test]
fn ctrl_c_leaves_nothing_the_checks_started_running() {
    use std::time::{Duration, Instant};
    // A number no other process on the machine has as its argument.
    let marker = format!("{}", 3_000_000 + std::process::id());
    let sleeps = || -> Vec<u32> {
        std::fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .filter_map(|e| {
                let pid = e.file_name().to_str()?.parse().ok()?;
                let cmd = std::fs::read(e.path().join("cmdline")).ok()?;
                (cmd == format!("sleep\0{marker}\0").as_bytes()).then_some(pid)
            })
            .collect()
    };
    let kit = fresh_kit();
    let root = kit.root();
    let body = format!(
        "let _ = std::process::Command::new(\"sleep\").arg(\"{marker}\").spawn();\n    \
         loop {{ std::hint::spin_loop() }}"
    );
    std::fs::write(learner_file(root, "build3"), stub_with("build3", &body)).unwrap();
    // The private links of harnesses in the copy's target folder: the run's own is removed
    // on Ctrl-C too.
    let harness_links = || -> std::collections::BTreeSet<std::path::PathBuf> {
        std::fs::read_dir(root.join("target"))
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("kit-harness-"))
            })
            .collect()
    };
    let links_before = harness_links();
    // The sandbox off, so that the check can start the process the signal must stop.
    let mut grader = grader_command(
        root,
        &[
            "build3",
            "fixtures::third_attempt_success",
            "--timeout",
            "600",
        ],
    )
    .env(grader_checks::sandbox::MODE_VAR, "off")
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    let bound = Duration::from_secs(240);
    let started = Instant::now();
    while sleeps().is_empty() {
        assert!(
            started.elapsed() < bound,
            "the check never started its process"
        );
        assert!(
            grader.try_wait().unwrap().is_none(),
            "the grader ended first"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let new_links = || -> Vec<std::path::PathBuf> {
        harness_links().difference(&links_before).cloned().collect()
    };
    assert!(
        !new_links().is_empty(),
        "the run's harness link is not where it is looked for"
    );
    let pid = rustix::process::Pid::from_raw(grader.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let status = wait_within(&mut grader, bound, "the grader did not end on Ctrl-C");
    // A killed process can take a moment to leave /proc.
    let started = Instant::now();
    while !sleeps().is_empty() && started.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let left = sleeps();
    for pid in &left {
        if let Some(pid) = rustix::process::Pid::from_raw(*pid as i32) {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
    }
    assert!(
        left.is_empty(),
        "still running after Ctrl-C: sleep {marker} {left:?}"
    );
    assert_eq!(new_links(), Vec::<std::path::PathBuf>::new(), "left behind");
    // Ended by the signal, as without a handler: a shell loop around the grader stops too.
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(2), "{status:?}");
}

//! Guidance is recorded before it is shown, the log is append-only, and reset loses nothing:
//! the grader binary end to end in a temporary copy of the kit.

use crate::common;

use common::*;
use grader::guidance::{parse, Kind, LOG_FILE};
use std::io::Read;
use std::path::Path;
use std::time::Duration;

fn log_text(kit: &Path) -> String {
    std::fs::read_to_string(kit.join(LOG_FILE)).unwrap()
}

fn records(kit: &Path) -> Vec<grader::guidance::Record> {
    let contents = parse(&log_text(kit));
    assert!(contents.problems.is_empty(), "{:?}", contents.problems);
    contents.records
}

/// A practice file with a syntax error: every command here must still work.
fn break_practice(kit: &Path) {
    write_learner(kit, "build3", "pub fn retry_request( {\n");
}

#[test]
fn help_records_one_parseable_record_then_shows_the_text() {
    let kit = fresh_kit();
    let root = kit.root();
    break_practice(root);
    let before = log_text(root);
    let out = grader(root, &["help", "build3", "--level", "2"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(stdout.contains("help, level 2 of 3: approach"), "{stdout}");
    assert!(stdout.contains("policy.validate()?"), "{stdout}");
    assert!(stdout.contains("Recorded as guidance #1"), "{stdout}");
    let after = log_text(root);
    assert!(
        after.starts_with(&before),
        "the log was appended to, not rewritten"
    );
    let recs = records(root);
    assert_eq!(recs.len(), 1);
    assert_eq!(
        (recs[0].kind, recs[0].lesson.as_str()),
        (Kind::Help, "build3")
    );
    assert_eq!(recs[0].detail, "level 2: approach");

    // Every level exists and the default is the first.
    let out = grader(root, &["help", "build3"]);
    assert!(text(&out.stdout).contains("level 1 of 3: refresher"));
    let out = grader(root, &["help", "build3", "--level", "3"]);
    assert!(text(&out.stdout).contains("4 calls under max_attempts = 3"));
    let out = grader(root, &["help", "build3", "--level", "4"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("levels go from 1 to 3"));
    assert_eq!(
        records(root).len(),
        3,
        "a level that does not exist is not recorded"
    );
}

#[test]
fn help_that_cannot_be_recorded_is_not_shown() {
    let kit = fresh_kit();
    let root = kit.root();
    std::fs::remove_file(root.join(LOG_FILE)).unwrap();
    // A folder where the log should be: no write succeeds, even for root.
    std::fs::create_dir(root.join(LOG_FILE)).unwrap();
    let out = grader(root, &["help", "build3"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        out.stdout.is_empty(),
        "nothing shown: {}",
        text(&out.stdout)
    );
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(LOG_FILE) && stderr.contains("no help was shown"),
        "{stderr}"
    );
    assert_eq!(
        stderr.lines().filter(|l| l.starts_with("error:")).count(),
        1,
        "{stderr}"
    );

    let out = grader(root, &["build3", "--against", "reference"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        !text(&out.stdout).contains("check "),
        "the reference did not run"
    );
    assert!(text(&out.stderr).contains("the reference was not run"));
}

#[test]
fn a_missing_log_is_recreated_and_that_is_recorded() {
    let kit = fresh_kit();
    let root = kit.root();
    std::fs::remove_file(root.join(LOG_FILE)).unwrap();
    let out = grader(root, &["note", "build3", "asked", "a", "friend"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let recs = records(root);
    assert_eq!(recs.len(), 2);
    assert_eq!(recs[0].kind, Kind::LogRecreated);
    assert_eq!(
        (recs[1].kind, recs[1].detail.as_str()),
        (Kind::Note, "asked a friend")
    );
}

#[test]
fn eight_writers_at_once_lose_nothing() {
    let kit = fresh_kit();
    let root = kit.root().to_path_buf();
    std::thread::scope(|s| {
        for writer in 0..8 {
            let root = &root;
            s.spawn(move || {
                for n in 0..25 {
                    let note = format!("writer {writer} note {n} | with a pipe");
                    let out = grader(root, &["note", "build3", &note]);
                    assert!(out.status.success(), "{}", text(&out.stderr));
                }
            });
        }
    });
    let recs = records(&root);
    assert_eq!(recs.len(), 200);
    let seqs: Vec<u64> = recs.iter().map(|r| r.seq).collect();
    assert_eq!(seqs, (1..=200).collect::<Vec<_>>());
    for writer in 0..8 {
        for n in 0..25 {
            let note = format!("writer {writer} note {n} | with a pipe");
            assert_eq!(
                recs.iter().filter(|r| r.detail == note).count(),
                1,
                "{note}"
            );
        }
    }
    let out = grader(&root, &["log", "--check"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

/// Separate grader processes at once on a missing log: the one that starts it writes the
/// header under the same lock as its row, so no other writer's row is written over. The
/// processes start a little apart, so the race is met only in some rounds, hence the many
/// rounds; the library's unit test of the same name meets it in every run with threads.
#[test]
fn writers_at_once_on_a_missing_log_lose_nothing() {
    const WRITERS: usize = 8;
    const ROUNDS: usize = 200;
    let kit = fresh_kit();
    let root = kit.root();
    for round in 0..ROUNDS {
        std::fs::remove_file(root.join(LOG_FILE)).unwrap();
        let mut children: Vec<_> = (0..WRITERS)
            .map(|writer| {
                let note = format!("round {round} writer {writer}");
                grader_command(root, &["note", "build3", &note])
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .expect("the grader binary starts")
            })
            .collect();
        for child in &mut children {
            let status = wait_within(child, Duration::from_secs(60), "a note took over 60 s");
            let mut stdout = String::new();
            child
                .stdout
                .take()
                .unwrap()
                .read_to_string(&mut stdout)
                .unwrap();
            assert!(
                status.success() && stdout.contains("Recorded note #"),
                "{stdout}"
            );
        }
        let log = log_text(root);
        let contents = parse(&log);
        assert!(contents.problems.is_empty(), "round {round}: {log}");
        let seqs: Vec<u64> = contents.records.iter().map(|r| r.seq).collect();
        assert_eq!(seqs, (1..=WRITERS as u64 + 1).collect::<Vec<_>>(), "{log}");
        assert_eq!(contents.count("-", Kind::LogRecreated), 1, "{log}");
        for writer in 0..WRITERS {
            let note = format!("round {round} writer {writer}");
            let n = contents.records.iter().filter(|r| r.detail == note).count();
            assert_eq!(n, 1, "{note}: {log}");
        }
        let out = grader(root, &["log", "--check"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
}

#[test]
fn log_check_catches_a_deleted_line() {
    let kit = fresh_kit();
    let root = kit.root();
    for n in 0..3 {
        assert!(grader(root, &["note", "build3", &format!("note {n}")])
            .status
            .success());
    }
    let out = grader(root, &["log"]);
    assert!(
        text(&out.stdout).contains("build3: 3 notes"),
        "{}",
        text(&out.stdout)
    );
    let text_before = log_text(root);
    let without_second: String = text_before
        .lines()
        .filter(|l| !l.starts_with("| 2 |"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(root.join(LOG_FILE), without_second).unwrap();
    let out = grader(root, &["log", "--check"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("record 2 is missing"), "{stderr}");
    assert!(
        stderr.contains(&format!("{LOG_FILE}:")),
        "names file and line: {stderr}"
    );
}

#[test]
fn reference_runs_are_recorded_and_grading_shows_guidance() {
    let kit = fresh_kit();
    let root = kit.root();
    let out = grader(root, &["build3", "--against", "reference", "fixtures::"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains(
            "passed with guidance: 1 reference run before the first pass — guided practice, \
             not independent evidence."
        ),
        "{stdout}"
    );
    assert!(grader(root, &["help", "build3"]).status.success());
    let out = grader(root, &["build3", "--against", "reference", "--list"]);
    assert!(out.status.success());
    let recs = records(root);
    assert_eq!(
        recs.len(),
        2,
        "listing shows no guidance and is not recorded"
    );
    assert_eq!(recs[0].kind, Kind::ReferenceRun);
    assert_eq!(recs[0].detail, "build3 --against reference fixtures::");
    // `--group`, the option's older name, still works (scripts written before `--lesson`).
    let out = grader(root, &["log", "--group", "build3"]);
    assert!(
        text(&out.stdout).contains("build3: 1 help record, 1 reference run"),
        "{}",
        text(&out.stdout)
    );
    let out = grader(root, &["log", "--lesson", "bild3"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("did you mean build3?"));
}

#[test]
fn reset_keeps_a_backup_and_never_touches_the_log() {
    let kit = fresh_kit();
    let root = kit.root();
    assert!(grader(root, &["note", "build3", "before reset"])
        .status
        .success());
    let log_before = std::fs::read(root.join(LOG_FILE)).unwrap();
    let stub = stub("build3");

    // The untouched stub needs no reset and no backup.
    let out = grader(root, &["reset", "build3"]);
    assert!(text(&out.stdout).contains("already the pristine stub"));
    assert!(!root.join(".kit-backups").exists());

    // A file with a syntax error is backed up and replaced.
    break_practice(root);
    let out = grader(root, &["reset", "build3", "--yes"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(stdout.contains("Backed up your file to "), "{stdout}");
    assert_eq!(
        std::fs::read_to_string(root.join("practice/src/lib.rs")).unwrap(),
        stub
    );
    assert_eq!(
        std::fs::read(root.join(LOG_FILE)).unwrap(),
        log_before,
        "byte for byte"
    );

    // The work comes back from the listed backup; the stub it replaces needs no backup.
    let out = grader(root, &["reset", "build3", "--list-backups"]);
    let listing = text(&out.stdout);
    let name = listing
        .lines()
        .next()
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    assert!(name.ends_with("-lib.rs"), "{listing}");
    let out = grader(root, &["reset", "build3", "--restore", &name]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(root.join("practice/src/lib.rs")).unwrap(),
        "pub fn retry_request( {\n"
    );
    assert_eq!(std::fs::read(root.join(LOG_FILE)).unwrap(), log_before);

    let out = grader(root, &["reset", "build3", "--restore", "no-such-backup.rs"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--list-backups"));
}

#[test]
fn reset_with_an_unwritable_backup_folder_changes_nothing() {
    let kit = fresh_kit();
    let root = kit.root();
    break_practice(root);
    std::fs::write(root.join(".kit-backups"), "a file, not a folder").unwrap();
    let out = grader(root, &["reset", "build3", "--yes"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("nothing was changed"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(root.join("practice/src/lib.rs")).unwrap(),
        "pub fn retry_request( {\n"
    );
}

#[test]
fn a_missing_exercise_file_is_one_clear_error() {
    let kit = fresh_kit();
    let root = kit.root();
    std::fs::remove_file(root.join("exercises/build3/help.toml")).unwrap();
    let out = grader(root, &["help", "build3"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("exercises/build3/help.toml"), "{stderr}");
    assert!(out.stdout.is_empty());
    assert!(records(root).is_empty(), "nothing shown, nothing recorded");

    std::fs::write(
        root.join("exercises/build3/info.toml"),
        "group = \"build3\"\ncolour = 1\n",
    )
    .unwrap();
    let out = grader(root, &["reset", "build3"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("info.toml") && stderr.contains("line 2"),
        "{stderr}"
    );
}

/// Runs the grader on a pseudo-terminal (util-linux `script`), typing `answer`.
fn grader_on_terminal(root: &Path, args: &str, answer: &str) -> String {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let command = format!("{GRADER} --root {} {args}", root.display());
    let mut child = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("util-linux `script` runs the grader on a terminal");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(answer.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    text(&out.stdout)
}

#[test]
fn reset_asks_on_a_terminal() {
    let kit = fresh_kit();
    let root = kit.root();
    break_practice(root);
    let screen = grader_on_terminal(root, "reset build3", "n\n");
    assert!(
        screen.contains("with the pristine stub? Your current file is backed up first. [y/N]"),
        "{screen}"
    );
    assert!(screen.contains("Nothing changed."), "{screen}");
    assert_eq!(
        std::fs::read_to_string(root.join("practice/src/lib.rs")).unwrap(),
        "pub fn retry_request( {\n"
    );
    let screen = grader_on_terminal(root, "reset build3", "y\n");
    assert!(
        screen.contains("Restored practice/src/lib.rs to the pristine stub"),
        "{screen}"
    );
    let stub = stub("build3");
    assert_eq!(
        std::fs::read_to_string(root.join("practice/src/lib.rs")).unwrap(),
        stub
    );
}

#[test]
fn guidance_after_the_first_pass_is_said_apart_and_the_pass_counts_what_came_before() {
    let kit = fresh_kit();
    let root = kit.root();
    assert!(grader(root, &["help", "build3"]).status.success());
    write_learner(root, "build3", &stub_with("build3", CORRECT_BUILD3));
    let first = text(&grader(root, &["build3"]).stdout);
    assert!(
        first.contains("passed with guidance: 1 help record before the first pass"),
        "{first}"
    );
    assert!(!first.contains("Since the first pass"), "{first}");
    // The pass is marked once, as no guidance; a filtered pass marks nothing.
    let marks = |root: &std::path::Path| {
        records(root)
            .iter()
            .filter(|r| r.kind == Kind::FirstPass && r.lesson == "build3")
            .count()
    };
    assert_eq!(marks(root), 1);
    assert!(grader(root, &["help", "build3", "--level", "2"])
        .status
        .success());
    let again = text(&grader(root, &["build3"]).stdout);
    assert!(
        again.contains("passed with guidance: 1 help record before the first pass")
            && again.contains("Since the first pass: 1 help record"),
        "{again}"
    );
    assert_eq!(marks(root), 1, "the first pass is marked once");
    // Nothing was erased: both help rows and the mark are there, in order.
    let kinds: Vec<Kind> = records(root).iter().map(|r| r.kind).collect();
    assert_eq!(kinds, [Kind::Help, Kind::FirstPass, Kind::Help]);
    let out = grader(root, &["log", "--check"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

//! `grade` end to end: a generated class graded with the grader binary, each submission in
//! its own copy of the kit. Nothing here reads `practice/` or the working tree's guidance
//! log: the copies take the kit's files as a fresh clone has them.

use crate::class;
use crate::common;

use class::{Expect, VARIANTS};
use common::{kit_root, text, wait_within, GRADER};
use grader::guidance::{GuidanceLog, Kind};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

/// Warms the grading copies the tests' runs use (three at most: `--jobs 3`) for this state
/// of the kit, once per test binary, before any run (see `common::warm_pool`).
fn warm_pool() {
    static WARM: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    WARM.get_or_init(|| common::warm_pool(&common::grading_pool(&kit_root()), 3, common::files()));
}

fn grade(args: &[&str]) -> Output {
    warm_pool();
    Command::new(GRADER)
        .arg("--root")
        .arg(kit_root())
        .arg("grade")
        .args(args)
        .env_remove("CARGO_TARGET_DIR")
        .env("NO_COLOR", "1")
        .output()
        .expect("the grader binary starts")
}

fn rows(out: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(out.join("grades.json")).expect("grades.json is written");
    let book: Value = serde_json::from_str(&text).expect("grades.json is JSON");
    assert_eq!(book["schema"], "retry-kit/gradebook");
    book["rows"].as_array().expect("rows").clone()
}

fn checks() -> usize {
    grader::lessons::lesson("build3")
        .expect("build3 is a lesson")
        .checks
        .len()
}

fn count(row: &Value, field: &str) -> usize {
    row[field]
        .as_u64()
        .unwrap_or_else(|| panic!("{field} in {row}")) as usize
}

/// Checks a row against what its variant must give.
fn assert_expected(row: &Value, expect: Expect) {
    let n = checks();
    let counts = (
        count(row, "passed"),
        count(row, "failed"),
        count(row, "unfinished"),
    );
    let status = row["status"].as_str().unwrap_or_default();
    match expect {
        Expect::Passing => {
            assert_eq!((status, counts), ("passing", (n, 0, 0)), "{row}");
            assert_eq!(row["score"], row["max_score"], "{row}");
        }
        Expect::Unfinished => {
            assert_eq!((status, counts), ("unfinished", (0, 0, n)), "{row}");
            // Where the learner's function stopped, in the submission's place in the kit.
            let note = row["note"].as_str().unwrap_or_default();
            assert!(
                note.starts_with("reached todo!() at practice/src/lib.rs:"),
                "{row}"
            );
        }
        Expect::DoesNotCompile => {
            assert_eq!((status, counts), ("does-not-compile", (0, 0, 0)), "{row}");
            assert_eq!(row["compile_error"], true);
            assert!(
                row["note"].as_str().unwrap_or_default().contains("error"),
                "{row}"
            );
        }
        Expect::Failing {
            first,
            kind,
            failed,
        } => {
            assert_eq!(
                (status, counts),
                ("failing", (n - failed, failed, 0)),
                "{row}"
            );
            assert_eq!(
                row["note"],
                format!("first failure: {first} ({kind})"),
                "{row}"
            );
        }
        Expect::AllFail { kind } => {
            assert_eq!((status, counts), ("failing", (0, n, 0)), "{row}");
            assert!(
                row["note"]
                    .as_str()
                    .unwrap_or_default()
                    .ends_with(&format!("({kind})")),
                "{row}"
            );
        }
    }
}

#[test]
fn a_class_gets_one_right_row_each_and_unchanged_work_is_not_graded_again() {
    let dir = tempfile::tempdir().unwrap();
    let (subs, out) = (dir.path().join("class"), dir.path().join("grades"));
    // One hanging submission (every check waits out its timeout), graded first so that its
    // timeouts overlap the others' grading; the rest are every other variant twice, so that
    // each is graded twice, in whichever copies (a class of sixty, each variant four or five
    // times, asserted nothing more and cost the test binary half a minute; the grade
    // benchmark is where a large class is timed). It sleeps rather than spins: a spinning one
    // took a core from the others for 39 timeouts, and CPU-burning code is the
    // implementations tests' (`spins`).
    let mut variants: Vec<&class::Variant> = VARIANTS
        .iter()
        .filter(|v| !matches!(v.name, "spins" | "hangs"))
        .collect();
    let others = 2 * variants.len();
    let total = others + 1;
    let mut written = class::write(&kit_root(), &subs, &variants, others);
    variants = vec![class::variant("hangs")];
    let hang = class::write(&kit_root(), &dir.path().join("hang"), &variants, 1);
    std::fs::rename(
        dir.path().join("hang").join(&hang[0].0),
        subs.join("00-hangs"),
    )
    .unwrap();
    written.push(("00-hangs".into(), "hangs"));

    let args = [
        subs.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        // Three copies: the hanging submission holds one for five seconds (39 timeouts, four
        // checks at a time) while it sleeps, and the other two keep both cores busy.
        "--jobs",
        "3",
        "--report",
        "json",
        "--report",
        "junit",
        // The hanging submission waits out the timeout in every check: half a second, not
        // 3 (a named check of the others takes milliseconds).
        "--timeout",
        "0.5",
    ];
    let output = grade(&args);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    // A line per row on the terminal: a failing row names its first failure, and a row that
    // does not compile says so once.
    let said = text(&output.stderr);
    assert!(said.contains(" passed; first failure: "), "{said}");
    assert!(said.contains("build3: does-not-compile: error"), "{said}");
    assert!(!said.contains("does not compile: "), "{said}");
    let first = rows(&out);
    assert_eq!(first.len(), total, "one row per submission");
    let mut by_variant: BTreeMap<&str, Vec<&Value>> = BTreeMap::new();
    for (name, variant) in &written {
        let row = first
            .iter()
            .find(|r| r["submission"] == name.as_str())
            .unwrap_or_else(|| panic!("a row for {name}"));
        assert_eq!(row["group"], "build3");
        assert_expected(row, class::variant(variant).expect);
        by_variant.entry(variant).or_default().push(row);
        for suffix in ["json", "junit.xml", "txt"] {
            let report = out.join(name).join(format!("build3.{suffix}"));
            assert!(report.is_file(), "{} is written", report.display());
        }
    }
    // The same code gives the same counts, whichever copy of the kit graded it (every
    // variant but the hanging one is graded twice).
    for (variant, same) in &by_variant {
        let graded = if *variant == "hangs" { 1 } else { 2 };
        assert_eq!(same.len(), graded, "{variant}");
        let counts: Vec<_> = same
            .iter()
            .map(|r| {
                (
                    count(r, "passed"),
                    count(r, "failed"),
                    count(r, "unfinished"),
                )
            })
            .collect();
        assert!(
            counts.windows(2).all(|w| w[0] == w[1]),
            "{variant}: {counts:?}"
        );
    }
    let csv = std::fs::read_to_string(out.join("grades.csv")).unwrap();
    assert_eq!(
        csv.lines().count(),
        total + 1,
        "a header and a line per submission"
    );

    // Nothing changed: nothing is graded again.
    let again = grade(&args);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again.stderr));
    assert!(
        text(&again.stdout).contains(&format!("{total} unchanged")),
        "{}",
        text(&again.stdout)
    );
    assert_eq!(rows_of(&out), rows_of_values(&first));

    // One submission changed: it alone is graded again, and its row follows the change.
    let changed = subs.join("00-correct/lib.rs");
    let wrong = class::source(&kit_root(), class::variant("no-validation"), "changed");
    std::fs::write(&changed, wrong).unwrap();
    let third = grade(&args);
    assert_eq!(third.status.code(), Some(0), "{}", text(&third.stderr));
    assert!(
        text(&third.stdout).contains(&format!("{} unchanged", total - 1)),
        "{}",
        text(&third.stdout)
    );
    let now = rows(&out);
    let row = now
        .iter()
        .find(|r| r["submission"] == "00-correct")
        .unwrap();
    assert_expected(row, class::variant("no-validation").expect);
}

fn rows_of(out: &Path) -> Vec<(String, String, u64)> {
    rows_of_values(&rows(out))
}

fn rows_of_values(rows: &[Value]) -> Vec<(String, String, u64)> {
    rows.iter()
        .map(|r| {
            (
                r["submission"].as_str().unwrap_or_default().to_string(),
                r["status"].as_str().unwrap_or_default().to_string(),
                r["passed"].as_u64().unwrap_or_default(),
            )
        })
        .collect()
}

#[test]
fn a_correct_and_a_wrong_submission_graded_at_once_are_both_right_whichever_is_which() {
    let dir = tempfile::tempdir().unwrap();
    let (subs, out) = (dir.path().join("class"), dir.path().join("grades"));
    let good = class::variant("correct");
    let bad = class::variant("attempt-limit-off-by-one");
    for (round, (a, b)) in [(good, bad), (bad, good), (good, bad)]
        .into_iter()
        .enumerate()
    {
        for (name, v) in [("a", a), ("b", b)] {
            std::fs::create_dir_all(subs.join(name)).unwrap();
            let source = class::source(&kit_root(), v, &format!("round {round}"));
            std::fs::write(subs.join(name).join("lib.rs"), source).unwrap();
        }
        let output = grade(&[
            subs.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--jobs",
            "2",
        ]);
        assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
        let rows = rows(&out);
        for (name, v) in [("a", a), ("b", b)] {
            let row = rows.iter().find(|r| r["submission"] == name).unwrap();
            assert_expected(row, v.expect);
        }
    }
}

#[test]
fn one_submission_with_a_log_goes_straight_into_the_output_folder() {
    let dir = tempfile::tempdir().unwrap();
    let (sub, out) = (dir.path().join("submission"), dir.path().join("results"));
    std::fs::create_dir_all(&sub).unwrap();
    // Platforms rename uploads: the lesson is named, so the folder's only .rs file counts.
    let source = class::source(&kit_root(), class::variant("correct"), "one");
    std::fs::write(sub.join("my_retry.rs"), source).unwrap();
    let log = GuidanceLog::in_kit(&sub);
    log.append("build3", Kind::Help, "help build3 --level 1")
        .unwrap();
    log.append("build3", Kind::Help, "help build3 --level 2")
        .unwrap();
    log.append("build2", Kind::Note, "a friend").unwrap();
    let output = grade(&[
        sub.to_str().unwrap(),
        "--one",
        "--lesson",
        "build3",
        "--out",
        out.to_str().unwrap(),
        "--report",
        "gradescope",
        "--report",
        "exercism",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let rows = rows(&out);
    assert_eq!(rows.len(), 1);
    assert_expected(&rows[0], Expect::Passing);
    // One submission has no class to compare with or sum up.
    for class_file in ["similarity.csv", "summary.md", "summary.html"] {
        assert!(!out.join(class_file).exists(), "{class_file} with --one");
    }
    // The text report says which upload it graded, and where the messages place it.
    let report = std::fs::read_to_string(out.join("build3.txt")).unwrap();
    assert!(
        report.contains("submission/my_retry.rs was graded as practice/src/lib.rs"),
        "{report}"
    );
    assert_eq!(rows[0]["guidance"]["help"], 2, "{}", rows[0]);
    assert_eq!(
        rows[0]["guidance"]["note"], 0,
        "another lesson's note does not count"
    );
    let gradescope: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("build3.gradescope.json")).unwrap())
            .unwrap();
    assert!(
        gradescope["output"]
            .as_str()
            .unwrap_or_default()
            .contains("2 help"),
        "the guidance is shown with the grade: {gradescope}"
    );
    let exercism: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("build3.exercism.json")).unwrap())
            .unwrap();
    assert_eq!(exercism["status"], "pass");
    let csv = std::fs::read_to_string(out.join("grades.csv")).unwrap();
    assert!(
        csv.lines()
            .nth(1)
            .unwrap_or_default()
            .contains(",no,2,0,0,"),
        "{csv}"
    );

    // Unchanged, it is skipped; --force grades it again.
    let args = [
        sub.to_str().unwrap(),
        "--one",
        "--lesson",
        "build3",
        "--out",
        out.to_str().unwrap(),
        "--report",
        "gradescope",
    ];
    let again = grade(&args);
    assert!(
        text(&again.stdout).contains("1 unchanged"),
        "{}",
        text(&again.stdout)
    );
    let forced = grade(&[&args[..], &["--force"]].concat());
    assert_eq!(forced.status.code(), Some(0), "{}", text(&forced.stderr));
    assert!(
        !text(&forced.stdout).contains("unchanged"),
        "{}",
        text(&forced.stdout)
    );
    assert_expected(&self::rows(&out)[0], Expect::Passing);
}

#[test]
fn bad_input_is_refused_with_a_hint_and_a_missing_file_gets_its_row() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ana.rs");
    std::fs::write(&file, "pub fn unrelated() {}\n").unwrap();
    let output = grade(&[file.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("--one"),
        "{}",
        text(&output.stderr)
    );

    let output = grade(&[dir.path().to_str().unwrap(), "--lesson", "build9"]);
    assert_eq!(output.status.code(), Some(2));
    let names: Vec<&str> = grader::lessons::LESSONS.iter().map(|g| g.name).collect();
    assert!(text(&output.stderr).contains(&names.join(", ")));

    let output = grade(&[dir.path().join("nowhere").to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("does not exist"));

    // A file that defines no lesson's function, and a folder with no lesson file: each gets
    // a row that says so, and nothing is built.
    std::fs::create_dir_all(dir.path().join("bob")).unwrap();
    std::fs::write(dir.path().join("bob/notes.txt"), "my answer is in my head").unwrap();
    let out = dir.path().join("out");
    let output = grade(&[dir.path().to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let rows = rows(&out);
    let names: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| {
            (
                r["submission"].as_str().unwrap(),
                r["status"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(names, [("ana", "missing-file"), ("bob", "missing-file")]);
    assert!(
        rows[0]["note"].as_str().unwrap().contains("--lesson"),
        "{}",
        rows[0]
    );
    assert!(
        rows[1]["note"]
            .as_str()
            .unwrap()
            .contains("lib.rs (build3)"),
        "{}",
        rows[1]
    );
}

#[test]
fn a_run_that_finds_every_grading_copy_taken_says_it_waits_then_grades() {
    use std::io::Read;
    use std::time::Duration;
    let dir = tempfile::tempdir().unwrap();
    let (subs, out) = (dir.path().join("class"), dir.path().join("grades"));
    let written = class::write(&kit_root(), &subs, &[class::variant("correct")], 1);
    // Another run holds the one copy a run of one job uses.
    warm_pool();
    let held =
        grader::kitcopy::Slot::acquire(&common::grading_pool(&kit_root()), 1, common::files())
            .unwrap();
    let mut child = Command::new(GRADER)
        .arg("--root")
        .arg(kit_root())
        .args(["grade", subs.to_str().unwrap()])
        .args(["--out", out.to_str().unwrap(), "--jobs", "1"])
        .env_remove("CARGO_TARGET_DIR")
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Its standard error, read as it comes; every wait below is bounded, and a run that
    // overstays is killed (it is only waited for after that, so it is still ours to kill).
    let mut stderr = child.stderr.take().unwrap();
    let (send, lines) = std::sync::mpsc::channel::<u8>();
    std::thread::spawn(move || {
        let mut byte = [0u8; 1];
        while stderr.read(&mut byte).is_ok_and(|n| n == 1) {
            if send.send(byte[0]).is_err() {
                return;
            }
        }
    });
    let limit = Duration::from_secs(300);
    let mut said = Vec::new();
    while !String::from_utf8_lossy(&said).contains("waiting for a grading copy") {
        match lines.recv_timeout(limit) {
            Ok(byte) => said.push(byte),
            Err(_) => {
                let _ = child.kill();
                panic!("the run did not say it waits: {}", text(&said));
            }
        }
    }
    // It waits: nothing is graded while the copy is held.
    let graded = rows_of_file(&out);
    assert!(
        graded.is_empty(),
        "graded before a copy was free: {graded:?}"
    );
    drop(held);
    let status = wait_within(
        &mut child,
        limit,
        "the run did not finish once the copy was free",
    );
    said.extend(lines.try_iter());
    assert_eq!(status.code(), Some(0), "{}", text(&said));
    let rows = rows(&out);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["submission"], written[0].0.as_str());
    assert_expected(&rows[0], Expect::Passing);
}

/// The rows of `out/grades.json` so far (none when it is not written yet).
fn rows_of_file(out: &Path) -> Vec<Value> {
    if out.join("grades.json").is_file() {
        rows(out)
    } else {
        Vec::new()
    }
}

/// cargo's unit records (`.fingerprint/<package>-<hash>`) in the copy at `root`.
fn units(root: &Path) -> std::collections::BTreeSet<String> {
    std::fs::read_dir(root.join("target/debug/.fingerprint"))
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_copy_seeded_from_a_warm_one_compiles_only_the_learners_crate_and_the_harness() {
    use grader::compile::{build_harness_at, BuildPlace};
    use grader::kitcopy::Slot;
    use grader::seed;
    // A grading copy, warmed from the kit's build where it has one, then built. It lasts
    // from one run of the tests to the next (as the end-to-end tests' copies do), so a warm
    // run finds it built; the copy seeded from it below is new every time.
    let lasting = common::target().join("kit-tests").join("seeding");
    let warm = Slot::acquire(&lasting, 1, common::files()).unwrap();
    common::warm_from_kit(warm.root(), common::files());
    // A grading copy's build of build3's harness, as `grade` makes it.
    let build = |root: &Path| {
        let mut said = Vec::new();
        build_harness_at(&BuildPlace::isolated(root), "build3", false, &mut said)
            .unwrap_or_else(|e| panic!("{e}\n{}", text(&said)));
    };
    build(warm.root());
    // A second one, seeded from the first as `grade` seeds its copies.
    let dir = tempfile::tempdir().unwrap();
    let cold = Slot::try_acquire(&dir.path().join("pool"), 1, common::files())
        .unwrap()
        .unwrap();
    assert!(!seed::is_warm(cold.root()));
    seed::seed(
        warm.root(),
        &warm.root().join("target/debug"),
        cold.root(),
        common::files(),
    )
    .unwrap();
    build(cold.root());
    // Every unit but the learner's crate and the harness is the one seeded: no other name
    // (a unit cargo built anew) and no record rewritten (a unit cargo built again).
    let (before, after) = (units(warm.root()), units(cold.root()));
    let new: Vec<&String> = after.difference(&before).collect();
    assert!(new.is_empty(), "units the seeded copy built anew: {new:?}");
    let record_times = |root: &Path, unit: &str| -> Vec<(String, std::time::SystemTime)> {
        let dir = root.join("target/debug/.fingerprint").join(unit);
        let mut times: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| {
                let time = e.metadata().unwrap().modified().unwrap();
                (e.file_name().to_string_lossy().into_owned(), time)
            })
            .collect();
        times.sort();
        times
    };
    let mut rebuilt = Vec::new();
    for unit in after.iter().filter(|u| !u.starts_with("practice-")) {
        if record_times(warm.root(), unit) != record_times(cold.root(), unit) {
            rebuilt.push(unit);
        }
    }
    assert!(
        rebuilt.is_empty(),
        "units the seeded copy built again: {rebuilt:?}"
    );
    // The learner's crate and the harness were not seeded: the copy built its own.
    let learner = after.iter().filter(|u| u.starts_with("practice-")).count();
    assert!(learner >= 2, "{after:?}");
}

/// Runs `grade` with `args` on the kit, and fails the test (after stopping the run) past
/// `limit`: SIGTERM first, which has the grader stop the process groups it started (the
/// compiler's among them), then SIGKILL.
fn grade_within(args: &[&str], limit: std::time::Duration) -> Output {
    grade_within_env(args, limit, &[])
}

/// [`grade_within`], with the variables `env` set for the grader.
fn grade_within_env(args: &[&str], limit: std::time::Duration, env: &[(&str, &str)]) -> Output {
    finish_within(grade_command(args, env), limit)
}

/// The command of a `grade` run with `args`, and the variables `env` set.
fn grade_command(args: &[&str], env: &[(&str, &str)]) -> Command {
    warm_pool();
    let mut command = Command::new(GRADER);
    command
        .arg("--root")
        .arg(kit_root())
        .arg("grade")
        .args(args)
        .envs(env.iter().copied())
        .env_remove("CARGO_TARGET_DIR")
        .env_remove(grader::compile::COMPILE_TIMEOUT_VAR)
        .env("NO_COLOR", "1");
    command
}

/// Runs `command`, stopped (and the test failed) after `limit`; what it printed.
fn finish_within(mut command: Command, limit: std::time::Duration) -> Output {
    use std::io::Read;
    let mut child = command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the grader binary starts");
    // Read on threads, so a full pipe never stalls the run.
    let read = |mut stream: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = stream.read_to_end(&mut bytes);
            bytes
        })
    };
    let stdout = read(Box::new(child.stdout.take().unwrap()));
    let stderr = read(Box::new(child.stderr.take().unwrap()));
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > limit {
            let pid = rustix::process::Pid::from_child(&child);
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
            std::thread::sleep(std::time::Duration::from_secs(3));
            let _ = child.kill();
            let _ = child.wait();
            panic!("grade did not finish within {limit:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    Output {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    }
}

/// Every file under `dir`, as text.
fn every_file(dir: &Path) -> Vec<(std::path::PathBuf, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().filter_map(Result::ok) {
        let path = entry.path();
        if entry.file_type().unwrap().is_dir() {
            found.extend(every_file(&path));
        } else {
            let bytes = std::fs::read(&path).unwrap();
            found.push((path, String::from_utf8_lossy(&bytes).into_owned()));
        }
    }
    found
}

fn row<'a>(rows: &'a [Value], name: &str) -> &'a Value {
    rows.iter()
        .find(|r| r["submission"] == name)
        .unwrap_or_else(|| panic!("a row for {name}: {rows:?}"))
}

#[cfg(unix)]
#[test]
fn links_oversized_files_and_copies_of_the_reference_are_refused_or_flagged_and_nothing_leaks() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    let (subs, out) = (dir.path().join("class"), dir.path().join("grades"));
    std::fs::create_dir_all(&subs).unwrap();
    // A learner's own answer, written against the stub.
    let honest = subs.join("honest");
    std::fs::create_dir_all(&honest).unwrap();
    let own = common::stub_with("build3", common::CORRECT_BUILD3);
    std::fs::write(honest.join("lib.rs"), &own).unwrap();
    // A file of the grading machine, outside every submission, that rustc would echo.
    let secret = "OUTSIDE-THE-CLASS-7f3a9c";
    let outside = dir.path().join("instructor-notes.rs");
    std::fs::write(
        &outside,
        format!("{secret} fn retry_request() {{ {secret} }}\n"),
    )
    .unwrap();
    let link_to = |name: &str, target: &Path| {
        std::fs::create_dir_all(subs.join(name)).unwrap();
        symlink(target, subs.join(name).join("lib.rs")).unwrap();
    };
    link_to("linked-file", &honest.join("lib.rs"));
    link_to("linked-outside", &outside);
    link_to(
        "linked-reference",
        &kit_root().join("reference/src/retry.rs"),
    );
    symlink(&honest, subs.join("linked-folder")).unwrap();
    // 200 MB (sparse: written in no time, and never read whole).
    std::fs::create_dir_all(subs.join("oversized")).unwrap();
    let big = std::fs::File::create(subs.join("oversized/lib.rs")).unwrap();
    big.set_len(200 << 20).unwrap();
    // The reference answer, copied verbatim, and copied without its comments and indents.
    let reference = std::fs::read_to_string(kit_root().join("reference/src/retry.rs")).unwrap();
    std::fs::create_dir_all(subs.join("copy")).unwrap();
    std::fs::write(subs.join("copy/lib.rs"), &reference).unwrap();
    let reworded: String = reference
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with("//"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_ne!(reworded, reference);
    std::fs::create_dir_all(subs.join("copy-reformatted")).unwrap();
    std::fs::write(subs.join("copy-reformatted/lib.rs"), &reworded).unwrap();

    let output = grade_within(
        &[
            subs.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--jobs",
            "2",
            "--report",
            "json",
            "--report",
            "gradescope",
        ],
        std::time::Duration::from_secs(900),
    );
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let rows = rows(&out);
    assert_eq!(rows.len(), 8, "{rows:?}");
    // The honest answer is graded as it would be alone.
    let own_row = row(&rows, "honest");
    assert_expected(own_row, Expect::Passing);
    assert_eq!(own_row["note"], "", "{own_row}");
    for (name, says) in [
        ("linked-file", "linked-file/lib.rs is a symbolic link"),
        ("linked-outside", "linked-outside/lib.rs is a symbolic link"),
        (
            "linked-reference",
            "linked-reference/lib.rs is a symbolic link",
        ),
        ("linked-folder", "linked-folder is a symbolic link"),
        ("oversized", "oversized/lib.rs is larger than 1 MiB"),
    ] {
        let r = row(&rows, name);
        assert_eq!(r["status"], "refused", "{r}");
        assert_eq!(
            r["note"],
            format!("refused: {says}; nothing was graded"),
            "{r}"
        );
        assert_eq!((count(r, "passed"), count(r, "failed")), (0, 0), "{r}");
    }
    // A refused lesson gets its reports, which say why.
    let report = std::fs::read_to_string(out.join("linked-file/build3.txt")).unwrap();
    assert!(report.contains("is a symbolic link"), "{report}");
    // Copies of the reference are graded, and flagged.
    for name in ["copy", "copy-reformatted"] {
        let r = row(&rows, name);
        assert_expected(r, Expect::Passing);
        assert_eq!(
            r["note"], "identical to the reference answer (ignoring whitespace and comments)",
            "{r}"
        );
    }
    let csv = std::fs::read_to_string(out.join("grades.csv")).unwrap();
    assert!(csv.contains("identical to the reference answer"), "{csv}");
    // Nothing of the file outside reached a report, the gradebook or the terminal.
    for (path, content) in every_file(&out) {
        assert!(!content.contains(secret), "{} holds it", path.display());
    }
    assert!(!text(&output.stdout).contains(secret));
    assert!(!text(&output.stderr).contains(secret));
}

#[test]
fn a_compile_that_never_ends_is_stopped_at_its_bound_and_the_batch_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let (subs, out) = (dir.path().join("class"), dir.path().join("grades"));
    for (name, body) in [
        // rustc evaluates the constant for ever: the lint that would stop it is allowed.
        (
            "a-endless-const",
            "{\n    #[allow(long_running_const_eval)]\n    const F: u64 = {\n        let mut i = 0u64;\n        loop {\n            i = i.wrapping_add(1);\n        }\n    };\n    let _ = F;\n    todo!()\n}",
        ),
        ("b-honest", common::CORRECT_BUILD3),
    ] {
        std::fs::create_dir_all(subs.join(name)).unwrap();
        let source = common::stub_with("build3", body);
        std::fs::write(subs.join(name).join("lib.rs"), source).unwrap();
    }
    let started = std::time::Instant::now();
    // One job at a time: the honest submission waits for the endless one's copy. The bound
    // is all the endless compile costs (a core busy until it is stopped), and the honest
    // compile, timed by the same bound, takes well under a second in a warm copy: 4 s.
    let output = grade_within(
        &[
            subs.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--jobs",
            "1",
            "--compile-timeout",
            "4",
        ],
        std::time::Duration::from_secs(900),
    );
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let rows = rows(&out);
    let endless = row(&rows, "a-endless-const");
    assert_eq!(endless["status"], "does-not-compile", "{endless}");
    assert_eq!(endless["compile_error"], true, "{endless}");
    let note = endless["note"].as_str().unwrap_or_default();
    assert!(
        note.contains("the compiler ran longer than 4 s"),
        "{endless}"
    );
    assert_expected(row(&rows, "b-honest"), Expect::Passing);
    let report = std::fs::read_to_string(out.join("a-endless-const/build3.txt")).unwrap();
    assert!(report.contains("ran longer than 4 s"), "{report}");
    // Stopped at the bound: a run of two that waited for ever would not be here at all.
    assert!(
        started.elapsed() < std::time::Duration::from_secs(600),
        "{:?}",
        started.elapsed()
    );
}

/// Attacks on the rest of a class, each the body of a build3 `retry_request` that tries to
/// reach what a submission must not and panics with what it reached: `breaches: [...]`. Each
/// attempt is harmless if it gets through (a write of no bytes, a child that exits at once),
/// so the test stays safe and bounded when a defence fails.
const ATTACKS: [(&str, &str); 3] = [
    (
        "reaches-files",
        r#"let mut breaches: Vec<String> = Vec::new();
    let here = std::env::current_dir().unwrap_or_default();
    for dir in here.ancestors() {
        if std::fs::read_dir(dir).is_ok() {
            breaches.push(format!("list {}", dir.display()));
        }
        for name in ["grades.csv", "grades.json", "Cargo.toml", "GUIDANCE_LOG.md"] {
            let path = dir.join(name);
            // Never the working tree's own files (its live guidance log), even if the
            // defence fails: the grading copies' files stand for them.
            // Compared as the system resolves it too, and by identity: a folder reached by
            // another spelling of its path (a symbolic link on the way, a bind mount) is
            // still the working tree.
            let live = std::path::PathBuf::from("@LIVE_KIT@");
            let same_folder = |a: &std::path::Path, b: &std::path::Path| {
                use std::os::unix::fs::MetadataExt;
                match (std::fs::metadata(a), std::fs::metadata(b)) {
                    (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
                    _ => false,
                }
            };
            if dir == live || dir.canonicalize().is_ok_and(|d| d == live) || same_folder(dir, &live) {
                continue;
            }
            if std::fs::OpenOptions::new().append(true).open(&path).is_ok() {
                breaches.push(format!("write {}", path.display()));
            }
        }
        if std::fs::read(dir.join("reference/src/retry.rs")).is_ok() {
            breaches.push("read the reference".into());
        }
    }
    if std::fs::write("left-behind.txt", "x").is_ok() {
        breaches.push("write its folder".into());
    }
    panic!("breaches: {breaches:?}")"#,
    ),
    (
        "starts-processes",
        r#"let mut breaches: Vec<String> = Vec::new();
    if std::process::Command::new("sh").args(["-c", "exit 0"]).status().is_ok() {
        breaches.push("ran sh".into());
    }
    if std::process::Command::new("setsid").arg("true").spawn().is_ok() {
        breaches.push("started setsid".into());
    }
    if std::net::TcpListener::bind("127.0.0.1:0").is_ok() {
        breaches.push("opened a socket".into());
    }
    panic!("breaches: {breaches:?}")"#,
    ),
    (
        "reads-memory",
        r#"let mut breaches: Vec<String> = Vec::new();
    for path in ["/proc/self/mem", "/proc/self/maps", "/proc/self/exe", "/etc/passwd"] {
        if std::fs::read(path).is_ok() || std::fs::File::open(path).is_ok() {
            breaches.push(format!("read {path}"));
        }
    }
    panic!("breaches: {breaches:?}")"#,
    ),
];

/// A row with what varies from run to run left out (how long it took).
fn steady(row: &Value) -> Value {
    let mut row = row.clone();
    if let Some(fields) = row.as_object_mut() {
        fields.remove("duration_secs");
    }
    row
}

/// The JSON report's checks, each with its status and message: what a learner is shown.
fn checks_shown(report: &Path) -> Value {
    let text = std::fs::read_to_string(report).expect("the JSON report is written");
    let report: Value = serde_json::from_str(&text).expect("the report is JSON");
    report["checks"]
        .as_array()
        .map(|checks| {
            checks
                .iter()
                .map(|c| serde_json::json!([c["name"], c["status"], c["message"]]))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn submissions_that_attack_the_class_change_no_honest_row_now_or_later() {
    let dir = tempfile::tempdir().unwrap();
    let honest = class::source(&kit_root(), class::variant("correct"), "honest");
    let grade_class = |name: &str, attackers: bool| -> (Vec<Value>, std::path::PathBuf) {
        let (subs, out) = (
            dir.path().join(name),
            dir.path().join(format!("{name}-grades")),
        );
        std::fs::create_dir_all(subs.join("honest")).unwrap();
        std::fs::write(subs.join("honest/lib.rs"), &honest).unwrap();
        if attackers {
            for (attack, body) in ATTACKS {
                std::fs::create_dir_all(subs.join(attack)).unwrap();
                // As a string literal, whatever the path holds.
                let live = kit_root().canonicalize().unwrap_or_else(|_| kit_root());
                let body = body.replace("\"@LIVE_KIT@\"", &format!("{live:?}"));
                std::fs::write(
                    subs.join(attack).join("lib.rs"),
                    common::stub_with("build3", &body),
                )
                .unwrap();
            }
        }
        let output = grade_within(
            &[
                subs.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
                "--jobs",
                "2",
                "--force",
            ],
            std::time::Duration::from_secs(900),
        );
        assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
        (rows(&out), out)
    };
    let (alone, alone_out) = grade_class("alone", false);
    let alone_row = steady(row(&alone, "honest"));
    let alone_checks = checks_shown(&alone_out.join("honest/build3.json"));
    assert_expected(row(&alone, "honest"), Expect::Passing);
    // Graded among the attackers, then again in a later run of the same kit.
    for round in ["attacked", "attacked-later"] {
        let (rows, out) = grade_class(round, true);
        assert_eq!(rows.len(), 1 + ATTACKS.len(), "{rows:?}");
        assert_eq!(steady(row(&rows, "honest")), alone_row, "{round}");
        assert_eq!(
            checks_shown(&out.join("honest/build3.json")),
            alone_checks,
            "{round}"
        );
        for (attack, _) in ATTACKS {
            let attacker = row(&rows, attack);
            assert_eq!(attacker["status"], "failing", "{round}: {attacker}");
            assert_eq!(attacker["passed"], 0, "{round}: {attacker}");
            let shown = checks_shown(&out.join(attack).join("build3.json")).to_string();
            assert!(
                shown.contains("breaches: []") && !shown.contains("breaches: [\\\""),
                "{round}: {attack} reached something: {shown}"
            );
        }
        // Nothing an attacker wrote is in the output folder but the kit's own files.
        for (path, _) in every_file(&out) {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            assert_ne!(name, "left-behind.txt", "{round}");
        }
    }
}

/// The kit's files a submission's compile may not read, and how [`REACHES_OUT`] tries: a
/// `const` that panics with an included file, a `compile_error!` of one, a module from
/// outside practice/src/.
/// By the submission of [`graded_both_ways`] that tries it: [`REACHES_OUT`] includes two
/// (the compiler reports each), a module of its own the third (a module the compiler cannot
/// read ends the compile).
const KEPT_FROM: [(&str, &str); 3] = [
    (REACHES_OUT, "reference/src/retry.rs"),
    (REACHES_OUT, "grader/checks/src/digests.rs"),
    ("module", "grader/tests/support/impls.rs"),
];

/// The submission of [`graded_both_ways`] that includes into its compile two of the kit's
/// files ([`KEPT_FROM`]) and the pipe the grader was handed.
const REACHES_OUT: &str = "reaches-out";

/// The submission of [`graded_both_ways`] that includes a file of its copy's target folder,
/// where the kit's compiled crates are: [`COMPILED_STAND_IN`].
const REACHES_TARGET: &str = "reaches-target";

/// A file the test puts in each grading copy's target folder, standing for the compiled
/// crates there (the reference's `.rlib`, the checks' digests, the judge), and what it holds.
const COMPILED_STAND_IN: &str = "kit-test-compiled.txt";
const COMPILED_SECRET: &str = "compiled-kit-stand-in-91c3";

/// One class graded twice, with the fast paths on and off, by a grader started with files
/// open (as a shell's `207>>log 208<secret 209< <(echo secret)` would): honest work of each
/// kind, a constructor that forges a report, the attacks, code that uses the handed files,
/// and code that compiles in the kit's answers. Graded once for the tests that read it.
struct BothWays {
    /// The submissions' names.
    names: Vec<String>,
    /// With the fast paths on, then off: the gradebook's rows, the output folder, what the
    /// grader printed, and the file it was handed to append to.
    runs: [(Vec<Value>, std::path::PathBuf, String, std::path::PathBuf); 2],
}

fn graded_both_ways() -> &'static BothWays {
    static GRADED: std::sync::OnceLock<BothWays> = std::sync::OnceLock::new();
    GRADED.get_or_init(|| {
        // Under the tests' own target folder (a static is never dropped: no temporary
        // folder would be removed), made afresh.
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("grade-both-ways");
        let _ = std::fs::remove_dir_all(&dir);
        // In every grading copy's target folder, beside the kit's compiled crates (the
        // reference's, the checks' digests, the judge), a file that stands for them.
        warm_pool();
        let pool = common::grading_pool(&kit_root());
        for slot in std::fs::read_dir(&pool).unwrap().flatten() {
            let target = slot.path().join("target");
            if target.is_dir() {
                std::fs::write(target.join(COMPILED_STAND_IN), COMPILED_SECRET).unwrap();
            }
        }
        let subs = dir.join("class");
        let mut names = Vec::new();
        let mut add = |name: &str, source: String| {
            std::fs::create_dir_all(subs.join(name)).unwrap();
            std::fs::write(subs.join(name).join("lib.rs"), source).unwrap();
            names.push(name.to_string());
        };
        for variant in [
            "correct",
            "stub",
            "does-not-compile",
            "attempt-limit-off-by-one",
        ] {
            add(
                variant,
                class::source(&kit_root(), class::variant(variant), "both ways"),
            );
        }
        let stub = common::stub("build3");
        add(
            "panics",
            common::stub_with("build3", r#"panic!("the learner's own panic")"#),
        );
        add("forger", format!("{stub}\n{FORGING_CONSTRUCTOR}"));
        let live = kit_root().canonicalize().unwrap_or_else(|_| kit_root());
        for (attack, body) in ATTACKS {
            let body = body.replace("\"@LIVE_KIT@\"", &format!("{live:?}"));
            add(attack, common::stub_with("build3", &body));
        }
        add(
            "inherits",
            common::stub_with("build3", &common::inherited_files_attack()),
        );
        // Every way at once (the compiler reports each): the kit's files it may not read,
        // and the pipe the grader was handed, read by the compiler, where the learner's code
        // never runs.
        let [(_, answers), (_, digests), (module, tests)] = KEPT_FROM;
        let pipe = common::HANDED_FDS[2];
        add(
            REACHES_OUT,
            format!(
                "{stub}\nconst R: &str = include_str!(\"../../{answers}\");\n\
                 const _: () = panic!(\"{{}}\", R);\n\
                 compile_error!(include_str!(\"../../{digests}\"));\n\
                 const P: &str = include_str!(\"/dev/fd/{pipe}\");\n\
                 const _: () = panic!(\"{{}}\", P);\n"
            ),
        );
        add(
            module,
            format!("{stub}\n#[path = \"../../{tests}\"]\nmod borrowed;\n"),
        );
        // Code the compiler crashes on (its stack overflows): the learner's compile error,
        // never the kit's.
        add(
            "nested",
            format!(
                "{stub}\npub const N: i32 = {}1{};\n",
                "(".repeat(30_000),
                ")".repeat(30_000)
            ),
        );
        add(
            REACHES_TARGET,
            format!(
                "{stub}\nconst T: &str = include_str!(\"../../target/{COMPILED_STAND_IN}\");\n\
                 const _: () = panic!(\"{{}}\", T);\n"
            ),
        );
        let run = |fast: bool| {
            let out = dir.join(if fast { "on" } else { "off" });
            let log = dir.join(format!("handed-{fast}.log"));
            let env: &[(&str, &str)] = if fast {
                &[]
            } else {
                &[(grader::fast::FAST_PATHS_VAR, "off")]
            };
            let mut command = grade_command(
                &[
                    subs.to_str().unwrap(),
                    "--out",
                    out.to_str().unwrap(),
                    "--jobs",
                    "2",
                ],
                env,
            );
            common::hand_open_files(&mut command, &log, &dir);
            let output = finish_within(command, std::time::Duration::from_secs(900));
            assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
            let said = format!("{}{}", text(&output.stdout), text(&output.stderr));
            (rows(&out), out, said, log)
        };
        BothWays {
            runs: [run(true), run(false)],
            names,
        }
    })
}

#[test]
fn a_class_graded_with_the_fast_paths_off_gets_the_rows_and_reports_it_gets_with_them_on() {
    // With the fast paths off the grader starts each check's judge and runner as programs
    // (no fork server, no replayed compile), and must see exactly what it sees with them on.
    let graded = graded_both_ways();
    let [(on, on_out, _, _), (off, off_out, _, _)] = &graded.runs;
    assert_eq!(on.len(), graded.names.len(), "{on:?}");
    for name in &graded.names {
        assert_eq!(steady(row(off, name)), steady(row(on, name)), "{name}");
        let report = |out: &Path| checks_shown(&out.join(name).join("build3.json"));
        assert_eq!(report(off_out), report(on_out), "{name}");
    }
    assert_expected(row(off, "correct"), Expect::Passing);
    assert_expected(row(off, "stub"), Expect::Unfinished);
    for (rows, out) in [(on, on_out), (off, off_out)] {
        let nested = row(rows, "nested");
        assert_eq!(nested["status"], "does-not-compile", "{nested}");
        // The compiler's messages as a learner reads them: no colour codes, raw or escaped.
        let report = std::fs::read_to_string(out.join("does-not-compile/build3.txt")).unwrap();
        assert!(report.contains("error"), "{report}");
        assert!(
            !report.contains('\u{1b}') && !report.contains("\\u{1b}"),
            "{report}"
        );
    }
    for name in ["panics", "forger"] {
        let row = row(off, name);
        assert_eq!(row["passed"], 0, "{row}");
    }
}

#[test]
fn files_the_grader_was_handed_open_never_reach_a_submission() {
    // Open files, not close-on-exec, which Landlock (it rules opening) would not stop.
    for (fast, (rows, out, said, log)) in [true, false].into_iter().zip(&graded_both_ways().runs) {
        let written = std::fs::read_to_string(log).unwrap();
        assert_eq!(
            written, "",
            "fast paths {fast}: a submission wrote the grader's file"
        );
        let inherits = row(rows, "inherits");
        assert_eq!(
            (&inherits["status"], &inherits["passed"]),
            (&"failing".into(), &0.into()),
            "{inherits}"
        );
        let shown = checks_shown(&out.join("inherits/build3.json")).to_string();
        assert!(
            shown.contains("inherited: []"),
            "fast paths {fast}: {shown}"
        );
        // The pipe is not there for the compiler to read.
        let report = std::fs::read_to_string(out.join(REACHES_OUT).join("build3.txt")).unwrap();
        let pipe = format!("couldn't read `/dev/fd/{}`", common::HANDED_FDS[2]);
        assert!(report.contains(&pipe), "fast paths {fast}: {report}");
        for (path, content) in every_file(out)
            .into_iter()
            .chain([(out.clone(), said.clone())])
        {
            assert!(
                !content.contains(common::HANDED_SECRET),
                "fast paths {fast}: {} holds what the grader was handed to read",
                path.display()
            );
        }
    }
}

#[test]
fn the_kits_answers_cannot_be_compiled_into_a_report() {
    // The answers, the checks' expectations and the tests' correct implementations are not
    // readable to a submission's compile, with the fast paths on or off: refused, and not a
    // line of them in any report.
    let secret_lines: Vec<String> = KEPT_FROM
        .iter()
        .flat_map(|(_, file)| {
            let text = std::fs::read_to_string(kit_root().join(file)).unwrap();
            // Lines long enough to be the file's own, not a common line of Rust.
            text.lines()
                .map(str::trim)
                .filter(|l| l.len() >= 40)
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(secret_lines.len() > 30, "{}", secret_lines.len());
    for (fast, (rows, out, said, _)) in [true, false].into_iter().zip(&graded_both_ways().runs) {
        // The copy's target folder, where the kit's compiled crates are: not read either.
        let target_row = row(rows, REACHES_TARGET);
        assert_eq!(
            target_row["status"], "refused",
            "fast paths {fast}: {target_row}"
        );
        let note = target_row["note"].as_str().unwrap_or_default();
        assert!(
            note.contains(COMPILED_STAND_IN),
            "fast paths {fast}: {target_row}"
        );
        for (path, content) in every_file(out)
            .into_iter()
            .chain([(out.clone(), said.clone())])
        {
            assert!(
                !content.contains(COMPILED_SECRET),
                "fast paths {fast}: {} quotes the target folder",
                path.display()
            );
        }
        for (name, file) in KEPT_FROM {
            let row = row(rows, name);
            assert_eq!(row["status"], "refused", "fast paths {fast}: {row}");
            let note = row["note"].as_str().unwrap_or_default();
            assert!(
                KEPT_FROM.iter().any(|(_, file)| note.contains(file)),
                "fast paths {fast}: {row}"
            );
            // Each file refused, as the report says.
            let report = std::fs::read_to_string(out.join(name).join("build3.txt")).unwrap();
            assert!(
                report.contains(&format!("{file}`: Permission denied")),
                "fast paths {fast}, {file}: {report}"
            );
        }
        for (path, content) in every_file(out)
            .into_iter()
            .chain([(out.clone(), said.clone())])
        {
            if let Some(line) = secret_lines.iter().find(|l| content.contains(l.as_str())) {
                panic!("fast paths {fast}: {} quotes {line:?}", path.display());
            }
        }
    }
}

/// A constructor that writes a passing report with the token it reads from standard input,
/// then ends the process: what code linked into a harness could do before `main`.
const FORGING_CONSTRUCTOR: &str = r##"
#[used]
#[link_section = ".init_array"]
static FORGE: extern "C" fn() = {
    extern "C" fn forge() {
        use std::io::Write;
        let mut token = String::new();
        let _ = std::io::stdin().read_line(&mut token);
        let report = std::fs::OpenOptions::new().write(true).create(true).open("report.json");
        if let Ok(mut report) = report {
            let sealed = format!(r#"{{"token":"{}","report":{{"status":"passed"}}}}"#, token.trim());
            if report.write_all(sealed.as_bytes()).is_ok() {
                std::process::exit(0);
            }
        }
    }
    forge
};
"##;

#[test]
fn a_constructor_that_forges_a_report_gets_no_pass() {
    let dir = tempfile::tempdir().unwrap();
    let (subs, out) = (dir.path().join("class"), dir.path().join("grades"));
    let stub = common::stub("build3");
    // The second also keeps the grader's own build from compiling (the only build of a
    // submission's code in `grade`: cargo's, with the learner's crate linked into the
    // harness, never runs there).
    for (name, extra) in [
        ("forger", FORGING_CONSTRUCTOR.to_string()),
        (
            "forger-cargo-only",
            format!("{FORGING_CONSTRUCTOR}\n#[cfg(kit_glue)]\ncompile_error!(\"not here\");\n"),
        ),
    ] {
        std::fs::create_dir_all(subs.join(name)).unwrap();
        std::fs::write(subs.join(name).join("lib.rs"), format!("{stub}\n{extra}")).unwrap();
    }
    let output = grade_within(
        &[
            subs.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--jobs",
            "1",
            "--force",
        ],
        std::time::Duration::from_secs(900),
    );
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let rows = rows(&out);
    let forger = row(&rows, "forger");
    assert_eq!(forger["status"], "unfinished", "{forger}");
    assert_eq!(forger["passed"], 0, "{forger}");
    let cargo_only = row(&rows, "forger-cargo-only");
    assert_eq!(cargo_only["status"], "does-not-compile", "{cargo_only}");
    assert_eq!(cargo_only["passed"], 0, "{cargo_only}");
    let note = cargo_only["note"].as_str().unwrap_or_default();
    assert!(note.contains("not here"), "{cargo_only}");
}

/// A cached build is checked against the files that built it, not against whatever the
/// grading copy's last compile left: a submission that does not compile in between (and
/// keeps no build) must not let a copy of the reference pass, nor an honest one be refused.
#[test]
fn a_failed_compile_between_two_submissions_changes_neither_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let (subs, out) = (dir.path().join("class"), dir.path().join("grades"));
    let cheat = "#[path = \"../../reference/src/fetch.rs\"]\nmod mine;\npub use mine::fetch;\n";
    let typo =
        "use kit_types::{HttpReply, RequestError, TransportFailure};\npub fn fetch(_m: &str, \
                _u: &str, _t: impl FnOnce(&str) -> Result<HttpReply, TransportFailure>) -> \
                Result<serde_json::Value, RequestError> { let x: u32 = \"typo\"; todo!() }\n";
    // One grading copy, in name order: a cheat, a file that does not compile, the cheat again.
    for (name, text) in [("a_cheat", cheat), ("b_typo", typo), ("c_cheat", cheat)] {
        std::fs::create_dir_all(subs.join(name)).unwrap();
        std::fs::write(subs.join(name).join("fetch.rs"), text).unwrap();
    }
    for force in [false, true] {
        let mut args = vec![
            subs.to_str().unwrap(),
            "--lesson",
            "build2",
            "--out",
            out.to_str().unwrap(),
            "--jobs",
            "1",
        ];
        if force {
            args.push("--force");
        }
        let output = grade(&args);
        assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
        let rows = rows(&out);
        for name in ["a_cheat", "c_cheat"] {
            let row = rows.iter().find(|r| r["submission"] == name).unwrap();
            assert_eq!(row["status"], "refused", "{name} (force {force}): {row}");
        }
        let row = rows.iter().find(|r| r["submission"] == "b_typo").unwrap();
        assert_eq!(row["status"], "does-not-compile", "{row}");
    }
}

/// One submission's compile cannot read what the one before it in the same grading copy left
/// there: its library is gone before the next compile starts.
#[test]
fn a_compile_cannot_read_the_previous_submissions_library() {
    let dir = tempfile::tempdir().unwrap();
    let (subs, out) = (dir.path().join("class"), dir.path().join("grades"));
    let stub = std::fs::read_to_string(kit_root().join("exercises/build2/stub.rs")).unwrap();
    let start = stub.find("todo!(").unwrap();
    let end = start + stub[start..].find(")\n").unwrap() + 1;
    let alice = format!(
        "{}panic!(\"ALICE_SECRET_LITERAL_1234\"){}",
        &stub[..start],
        &stub[end..]
    );
    let bob = format!(
        "{stub}\nconst H: &[u8] = include_bytes!(\"../../target/kit-cache/learner-build2.so\");\n\
         const _: () = assert!(H.is_empty(), \"read the previous submission's library\");\n"
    );
    for (name, text) in [("a_alice", alice.as_str()), ("b_bob", bob.as_str())] {
        std::fs::create_dir_all(subs.join(name)).unwrap();
        std::fs::write(subs.join(name).join("fetch.rs"), text).unwrap();
    }
    let output = grade(&[
        subs.to_str().unwrap(),
        "--lesson",
        "build2",
        "--out",
        out.to_str().unwrap(),
        "--jobs",
        "1",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let rows = rows(&out);
    let alice = rows.iter().find(|r| r["submission"] == "a_alice").unwrap();
    assert_eq!(alice["status"], "failing", "{alice}");
    let bob = rows.iter().find(|r| r["submission"] == "b_bob").unwrap();
    assert_eq!(bob["status"], "does-not-compile", "{bob}");
    let note = bob["note"].as_str().unwrap_or_default();
    assert!(
        !note.contains("read the previous submission's library"),
        "{bob}"
    );
    assert!(!note.contains("ALICE"), "{bob}");
}

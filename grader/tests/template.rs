//! The GitHub Classroom template without the answers (`bundle classroom LESSON
//! --without-answers`), end to end: what it holds, and a learner's runs in it, built from
//! its own manifests. Its own test program: the template's build takes minutes of both
//! cores, which would slow the timed runs of the other bundles' tests past their guards.
#![cfg(unix)]

use crate::common;

use common::*;
use grader::guidance::{HEADER, LOG_FILE};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const LESSON: &str = "build3";

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `cargo SUBCOMMAND --offline --locked -p grader ARGS` in the template `repo`: the
/// template's own build (its target folder inside it), offline, from the kit's lock.
fn template_cargo(repo: &Path, subcommand: &[&str], args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO"));
    command
        .args(subcommand)
        .args(["--offline", "--locked", "-p", "grader"])
        .args(args)
        .current_dir(repo)
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("RUSTFLAGS")
        .env("NO_COLOR", "1");
    command.output().expect("cargo starts")
}

/// `cargo run -q -p grader -- ARGS` in the template `repo`, as a learner runs it there.
fn template_grader(repo: &Path, args: &[&str]) -> Output {
    let mut all = vec!["--"];
    all.extend_from_slice(args);
    template_cargo(repo, &["run", "-q"], &all)
}

/// The lines of the kit's answers that no other file of the kit holds (the code that makes
/// them answers; their `use` lines, signatures and shared doc text appear elsewhere too). A
/// help level may quote the answer: help files do not count as elsewhere.
fn answer_lines() -> BTreeSet<String> {
    let is_answer =
        |p: &Path| p.starts_with("reference/src") && !p.starts_with("reference/src/types");
    let lines = |bytes: &[u8]| -> Vec<String> {
        String::from_utf8_lossy(bytes)
            .lines()
            .map(|l| l.trim().to_string())
            .filter(|l| l.len() >= 30 && !l.starts_with("//"))
            .collect()
    };
    let elsewhere: BTreeSet<String> = files()
        .iter()
        .filter(|(p, _)| !is_answer(p) && !p.ends_with("help.toml"))
        .flat_map(|(_, bytes)| lines(bytes))
        .collect();
    let answers: BTreeSet<String> = files()
        .iter()
        .filter(|(p, _)| is_answer(p))
        .flat_map(|(_, bytes)| lines(bytes))
        .filter(|l| !elsewhere.contains(l))
        .collect();
    assert!(
        answers.len() > 100,
        "the answers' own lines: {}",
        answers.len()
    );
    answers
}

/// The part of an exhaustive check's failure that shows both runs: from the side-by-side
/// header to the `why:` line.
fn side_by_side_of(stdout: &str) -> &str {
    let start = stdout
        .find("side by side")
        .unwrap_or_else(|| panic!("{stdout}"));
    let end = start
        + stdout[start..]
            .find("\nwhy:")
            .unwrap_or_else(|| panic!("{stdout}"));
    &stdout[start..end]
}

#[test]
fn a_classroom_template_without_the_answers_holds_none_and_grades_as_the_kit_does() {
    // Only for Classroom: the other platforms keep the kit on their own side.
    let refused = grader(
        &kit_root(),
        &[
            "bundle",
            "gradescope",
            LESSON,
            "--out",
            "/nonexistent",
            "--without-answers",
        ],
    );
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused.stderr));
    assert!(text(&refused.stderr).contains("--without-answers is for classroom bundles"));

    // What `bundle` says next tells which template it made.
    let dir = tempfile::tempdir().unwrap();
    for (flag, says) in [
        (None, "The template holds every lesson's answer (reference/src): for an assessment, make it with --without-answers"),
        (Some("--without-answers"), "The template holds no answers"),
    ] {
        let out = dir.path().join(flag.unwrap_or("whole"));
        let mut args = vec!["bundle", "classroom", LESSON, "--out", out.to_str().unwrap()];
        args.extend(flag);
        let made = grader(&kit_root(), &args);
        assert!(made.status.success(), "{}", text(&made.stderr));
        assert!(text(&made.stdout).contains(says), "{}", text(&made.stdout));
    }

    // Made in a lasting folder: its own build (a couple of minutes) is reused by later runs.
    let repo = lasting("classroom-without-answers");
    make_lasting_bundle("classroom", LESSON, &repo, &["--without-answers"]);

    // What it holds: no answer, in no file; the shared types; the checks' data.
    let found = files_under(&repo, &[".git", "target"]);
    let reference: Vec<&PathBuf> = found
        .keys()
        .filter(|p| p.starts_with("reference/src") && !p.starts_with("reference/src/types"))
        .collect();
    assert_eq!(
        reference,
        [Path::new("reference/src/lib.rs")],
        "only the placeholder"
    );
    assert!(read(&repo.join("reference/src/lib.rs")).contains("answers are not in this copy"));
    for (path, bytes) in files()
        .iter()
        .filter(|(p, _)| p.starts_with("reference/src/types"))
    {
        assert_eq!(found.get(path), Some(bytes), "{} is kept", path.display());
    }
    // No help file, nor any file the bundle wrote or changed, holds a line of an answer (the
    // help level that walks through it is withheld). The kit's other files ship as they are:
    // the checks and stubs share short lines with the answers (a signature, a status pair).
    let answers = answer_lines();
    for (path, bytes) in &found {
        if files().get(path) == Some(bytes) && !path.ends_with("help.toml") {
            continue;
        }
        let text = String::from_utf8_lossy(bytes);
        if let Some(line) = answers.iter().find(|l| text.contains(l.as_str())) {
            panic!("{} holds a line of an answer: {line}", path.display());
        }
    }
    for dir in [
        "grader/tests",
        "grader/benches",
        "grader/checks/tests",
        "grader/checks/benches",
        ".ci",
    ] {
        assert!(
            !repo.join(dir).exists(),
            "{dir} needs the answers and is left out"
        );
    }
    // A lesson's test implementations hold a correct one: left out too.
    let trials: Vec<&PathBuf> = found.keys().filter(|p| p.ends_with("trials.rs")).collect();
    assert!(trials.is_empty(), "{trials:?}");
    assert!(
        files().keys().any(|p| p.ends_with("trials.rs")),
        "the kit has some to leave out"
    );
    for lesson in grader::lessons::LESSONS {
        let oracle = repo.join(format!("grader/checks/oracle/{}.bin", lesson.name));
        assert!(oracle.is_file(), "{}", oracle.display());
    }
    assert!(
        read(&repo.join("README.md")).starts_with("> **This copy of the kit holds no answers.**")
    );
    for lesson in grader::lessons::LESSONS {
        let text = read(&repo.join(format!("exercises/{}/lesson.md", lesson.name)));
        assert!(
            text.starts_with("> **In this copy of the kit**"),
            "{}",
            lesson.name
        );
    }

    // It builds from its own manifests, offline, and with no warning for a learner to read
    // (a cold build prints them; a warm one has nothing to build).
    let built = template_cargo(&repo, &["build"], &[]);
    assert!(built.status.success(), "{}", text(&built.stderr));
    assert!(
        !text(&built.stderr).contains("warning"),
        "{}",
        text(&built.stderr)
    );

    // Each lesson as a learner meets it there: the stub is unfinished, a correct answer
    // passes every check (the exhaustive ones compare with the kept runs).
    let narrow_answer = read(&kit_root().join("reference/src/narrow.rs"));
    let correct = [
        ("build2", stub_with("build2", CORRECT_BUILD2)),
        ("narrow", narrow_answer),
        ("build3", stub_with("build3", CORRECT_BUILD3)),
        ("stage8", stub_with("stage8", CORRECT_STAGE8)),
    ];
    for (lesson, answer) in &correct {
        let file = repo.join(
            learner_file(&kit_root(), lesson)
                .strip_prefix(kit_root())
                .unwrap(),
        );
        std::fs::write(&file, stub(lesson)).unwrap();
        let out = template_grader(&repo, &[lesson]);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{lesson}: {}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
        assert!(
            text(&out.stdout).contains("unfinished"),
            "{}",
            text(&out.stdout)
        );
        std::fs::write(&file, answer).unwrap();
        let out = template_grader(&repo, &[lesson]);
        assert!(
            out.status.success(),
            "{lesson}, a correct answer:\n{}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
        assert!(text(&out.stdout).contains(&format!("Every check of {lesson} passes")));
        std::fs::write(&file, stub(lesson)).unwrap();
    }

    // Learner code that reaches for what stands in for the answers here — the oracle and the
    // trace's run, the programs that hold the oracle compiled in, the kept digests — reaches
    // none of it: the runner's sandbox lets it read only its own library. Harmless if it got
    // through (reads only), and then named in the output, which fails the test.
    let targets = [
        repo.join("grader/checks/oracle/build3.bin"),
        repo.join("grader/checks/oracle/build3-trace.json"),
        repo.join("target/debug/grader"),
        repo.join("target/debug/kit-grader"),
        repo.join("target/kit-cache"),
    ];
    let list = targets
        .iter()
        .map(|p| format!("{:?}", p.display().to_string()))
        .collect::<Vec<_>>()
        .join(", ");
    let reaching = stub_with(
        LESSON,
        &format!(
            "{{ let mut reached: Vec<&str> = Vec::new(); \
             for p in [{list}] {{ \
                 if std::fs::read(p).is_ok() || std::fs::read_dir(p).is_ok() {{ reached.push(p); }} \
             }} \
             if !reached.is_empty() {{ panic!(\"BREACH: {{reached:?}}\"); }} \
             todo!() }}"
        ),
    );
    for target in &targets {
        assert!(
            target.exists(),
            "{} is there to reach for",
            target.display()
        );
    }
    std::fs::write(repo.join("practice/src/lib.rs"), &reaching).unwrap();
    let out = template_grader(&repo, &[LESSON]);
    std::fs::write(repo.join("practice/src/lib.rs"), stub(LESSON)).unwrap();
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(!said.contains("BREACH"), "{said}");
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("unfinished"), "{said}");

    // A mistake only the exhaustive check sees: its message shows the reference's run as
    // the whole kit shows it, and says how to replay the case here.
    let wrong = stub_with(
        LESSON,
        &CORRECT_BUILD3.replacen(
            ".min(policy.max_delay)",
            ".min(policy.max_delay) + if attempt >= 4 { 0.125 } else { 0.0 }",
            1,
        ),
    );
    assert_ne!(
        wrong,
        stub_with(LESSON, CORRECT_BUILD3),
        "the mistake is made"
    );
    let exact = [
        "build3",
        "--exact",
        "exhaustive::matches_reference_on_every_case",
    ];
    std::fs::write(repo.join("practice/src/lib.rs"), &wrong).unwrap();
    let here = template_grader(&repo, &exact);
    std::fs::write(repo.join("practice/src/lib.rs"), stub(LESSON)).unwrap();
    let kit = fresh_kit();
    write_learner(kit.root(), LESSON, &wrong);
    let whole = grader(kit.root(), &exact);
    write_learner(kit.root(), LESSON, &stub(LESSON));
    let (here, whole) = (text(&here.stdout), text(&whole.stdout));
    assert_eq!(side_by_side_of(&here), side_by_side_of(&whole));
    assert!(
        here.contains("Replay your side of the case with `cargo run -p grader -- scenario FILE`"),
        "{here}"
    );
    assert!(!here.contains("--compare"), "{here}");

    // What needs the answers says so, and the worked trace is the kit's.
    for args in [
        &["build3", "--against", "reference"][..],
        &[
            "scenario",
            "exercises/build3/scenarios/worked-trace.toml",
            "--compare",
        ],
        &["dev", "check"],
    ] {
        let out = template_grader(&repo, args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stdout)
        );
        assert!(
            text(&out.stderr).contains("this copy of the kit holds none"),
            "{}",
            text(&out.stderr)
        );
    }
    // Help level 2 walks through the answer: withheld, and nothing recorded; level 3 is there.
    // The template's log starts from the shipped header (the kit's constant, never a log read
    // from a working tree): the passes above recorded rows in it.
    std::fs::write(repo.join(LOG_FILE), HEADER).unwrap();
    let out = template_grader(&repo, &["help", "build3", "--level", "2"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert!(
        text(&out.stderr).contains("help level 2 (approach) is not in this copy of the kit"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        read(&repo.join(LOG_FILE)),
        HEADER,
        "a withheld level is not recorded"
    );
    let out = template_grader(&repo, &["help", "build3", "--level", "3"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("level 3 of 3: repair"),
        "{}",
        text(&out.stdout)
    );
    std::fs::write(repo.join(LOG_FILE), HEADER).unwrap();

    let trace = template_grader(&repo, &["trace", "build3"]);
    assert!(trace.status.success(), "{}", text(&trace.stderr));
    assert_eq!(
        text(&trace.stdout),
        text(&grader(kit.root(), &["trace", "build3"]).stdout)
    );
    // A changed worked example is refused: the kept run is of the example as shipped.
    let example = repo.join("exercises/build3/scenarios/worked-trace.toml");
    let shipped = read(&example);
    std::fs::write(&example, format!("{shipped}# changed\n")).unwrap();
    let changed = template_grader(&repo, &["trace", "build3"]);
    std::fs::write(&example, &shipped).unwrap();
    assert_eq!(changed.status.code(), Some(2), "{}", text(&changed.stdout));
    assert!(
        text(&changed.stderr).contains("is not the worked example this copy of the kit ran"),
        "{}",
        text(&changed.stderr)
    );
    // Level 1 points to the next level there is: 3.
    let first = template_grader(&repo, &["help", "build3"]);
    assert!(
        text(&first.stdout).contains("help build3 --level 3`"),
        "{}",
        text(&first.stdout)
    );
    std::fs::write(repo.join(LOG_FILE), HEADER).unwrap();
}

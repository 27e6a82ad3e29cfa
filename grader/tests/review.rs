//! `review LESSON`, end to end in a temporary copy of the kit: the learner's own scenario
//! files run on test-only implementations, the lesson's situations they cover, the
//! self-review's answers, and the one line that ends the checklist.

use crate::common;

use common::*;
use grader::guidance::{parse, LOG_FILE};
use std::path::Path;

/// The folder build3's `info.toml` names for the learner's scenarios.
const FOLDER: &str = "practice/scenarios/build3";

/// Writes the learner's scenario file `name` of build3's folder.
fn scenario(root: &Path, name: &str, text: &str) {
    let dir = root.join(FOLDER);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(name), text).unwrap();
}

/// How many records the copy's guidance log holds.
fn guidance_records(root: &Path) -> usize {
    let text = std::fs::read_to_string(root.join(LOG_FILE)).unwrap();
    parse(&text).records.len()
}

/// The line of `stdout` that starts with `start` after its indentation, without it.
fn line<'a>(stdout: &'a str, start: &str) -> &'a str {
    stdout
        .lines()
        .map(str::trim_start)
        .find(|l| l.starts_with(start))
        .unwrap_or_else(|| panic!("a line starting {start:?} in\n{stdout}"))
}

const SECOND_CALL: &str =
    "[[outcome]]\ntransient = \"timeout\"\n\n[[outcome]]\ndata = { job_id = \"fresh_2\" }\n";
const ALWAYS_TIMES_OUT: &str = "[[outcome]]\ntransient = \"timeout\"\nforever = true\n";
const PERMANENT_404: &str = "[[outcome]]\nhttp = { status = 404, body = \"no such job\" }\n";
const OVER_BUDGET: &str =
    "[[outcome]]\nhttp = { status = 429, headers = { Retry-After = \"30\" } }\n";

#[test]
fn with_no_folder_it_says_where_to_put_the_files() {
    let kit = fresh_kit();
    let root = kit.root();
    let stdout = grader_exits(root, &["review", "build3"], 0);
    assert!(
        stdout.contains(&format!(
            "there is no folder {FOLDER}/ yet: put your scenario files there"
        )),
        "{stdout}"
    );
    for (n, words) in [
        (1, "success on the second call"),
        (2, "a request that always times out"),
        (3, "a permanent 404"),
        (4, "a server wait over the budget"),
    ] {
        assert!(
            stdout.contains(&format!("[ ] {n}. {words} — no file yet")),
            "{stdout}"
        );
    }
    assert!(
        stdout.contains("it appears the first time every check of build3 passes"),
        "{stdout}"
    );
    let last = stdout.trim_end().lines().last().unwrap();
    assert_eq!(
        last,
        "Missing: a file for situations 1, 2, 3 and 4; the self-review (every check passing \
         first). Next: write or fix the files in practice/scenarios/build3/, then `cargo run -p \
         grader -- review build3`."
    );
    assert_eq!(guidance_records(root), 0, "review is not guidance");
}

#[test]
fn files_are_run_on_the_learners_code_and_named_with_what_they_cover() {
    let kit = fresh_kit();
    let root = kit.root();
    write_learner(root, "build3", &stub_with("build3", CORRECT_BUILD3));
    scenario(root, "a-second-call.toml", SECOND_CALL);
    scenario(root, "b-not-found.toml", PERMANENT_404);
    scenario(root, "c-plain.toml", "[[outcome]]\ndata = 1\n");
    // Not a scenario file: left alone.
    scenario(root, "notes.txt", "my notes");
    let stdout = grader_exits(root, &["review", "build3"], 0);
    assert_eq!(
        line(&stdout, &format!("{FOLDER}/a-second-call.toml:")),
        format!("{FOLDER}/a-second-call.toml: returned: {{\"job_id\":\"fresh_2\"}}")
    );
    assert!(
        stdout.contains(&format!(
            "{FOLDER}/b-not-found.toml: refused: Permanent(not_found, status 404) — "
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains("(status 404)\n      covers 3. a permanent 404\n"),
        "{stdout}"
    );
    assert!(
        stdout
            .contains("c-plain.toml: returned: 1\n      covers none of the lesson's situations\n"),
        "{stdout}"
    );
    assert!(!stdout.contains("notes.txt"), "{stdout}");
    assert!(
        stdout.contains("[x] 1. success on the second call — a-second-call.toml"),
        "{stdout}"
    );
    assert!(
        stdout.contains("[ ] 2. a request that always times out — no file yet"),
        "{stdout}"
    );
    assert!(
        stdout.contains("[x] 3. a permanent 404 — b-not-found.toml"),
        "{stdout}"
    );
    assert!(
        stdout.contains("[ ] 4. a server wait over the budget — no file yet"),
        "{stdout}"
    );
    let last = stdout.trim_end().lines().last().unwrap();
    assert!(
        last.starts_with("Missing: a file for situations 2 and 4;"),
        "{last}"
    );
    assert_eq!(
        guidance_records(root),
        0,
        "your own code's runs are not guidance"
    );
}

#[test]
fn a_malformed_file_points_at_its_line_and_the_others_still_run() {
    let kit = fresh_kit();
    let root = kit.root();
    write_learner(root, "build3", &stub_with("build3", CORRECT_BUILD3));
    scenario(
        root,
        "a-bad.toml",
        "[[outcome]]\ntransient = \"server_error\"\nwait = 3\n",
    );
    scenario(root, "b-timeout.toml", ALWAYS_TIMES_OUT);
    scenario(
        root,
        "c-stage8.toml",
        "exercise = \"stage8\"\n[[outcome]]\navailable = true\n",
    );
    let stdout = grader_exits(root, &["review", "build3"], 0);
    assert!(
        stdout.contains(&format!("✗ {FOLDER}/a-bad.toml:3:1: unknown field `wait`")),
        "{stdout}"
    );
    assert!(stdout.contains("fix that line"), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "{FOLDER}/b-timeout.toml: refused: Exhausted {{ attempts: 3, reason: timeout, cause: attempt_limit }}"
        )),
        "the next file still runs: {stdout}"
    );
    assert!(
        stdout.contains(
            "c-stage8.toml: it is a stage8 scenario (`exercise = \"stage8\"`): move it to practice/scenarios/stage8/"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("[x] 2. a request that always times out — b-timeout.toml"),
        "{stdout}"
    );
    let last = stdout.trim_end().lines().last().unwrap();
    assert!(
        last.starts_with("Missing: 2 scenario files to fix; a file for situations 1, 3 and 4;"),
        "{last}"
    );
}

#[test]
fn the_self_review_is_unanswered_then_answered_and_the_checklist_completes() {
    let kit = fresh_kit();
    let root = kit.root();
    write_learner(root, "build3", &stub_with("build3", CORRECT_BUILD3));
    for (name, text) in [
        ("1.toml", SECOND_CALL),
        ("2.toml", ALWAYS_TIMES_OUT),
        ("3.toml", PERMANENT_404),
        ("4.toml", OVER_BUDGET),
    ] {
        scenario(root, name, text);
    }
    // What the grader hands out the first time every check passes.
    let questions = std::fs::read_to_string(root.join("exercises/build3/self-review.md")).unwrap();
    let review = root.join("practice/review/build3.md");
    std::fs::create_dir_all(review.parent().unwrap()).unwrap();
    std::fs::write(&review, &questions).unwrap();
    let stdout = grader_exits(root, &["review", "build3"], 0);
    assert!(
        stdout.contains("[ ] no answer yet to questions 1, 2, 3, 4 and 5 of 5"),
        "{stdout}"
    );
    let last = stdout.trim_end().lines().last().unwrap();
    assert_eq!(
        last,
        "Missing: answers to self-review questions 1, 2, 3, 4 and 5. Next: answer in \
         practice/review/build3.md, then `cargo run -p grader -- review build3`."
    );

    // Answers under questions 1 to 4, the fifth left as it came.
    let mut answered = String::new();
    for line in questions.lines() {
        if ["2. ", "3. ", "4. ", "5. "]
            .iter()
            .any(|n| line.starts_with(n))
        {
            answered.push_str("   My answer, in my own words.\n\n");
        }
        answered.push_str(line);
        answered.push('\n');
    }
    std::fs::write(&review, &answered).unwrap();
    let stdout = grader_exits(root, &["review", "build3"], 0);
    assert!(
        stdout.contains("[ ] no answer yet to question 5 of 5"),
        "{stdout}"
    );
    assert!(
        stdout.trim_end().ends_with(
            "Missing: answers to self-review question 5. Next: answer in \
             practice/review/build3.md, then `cargo run -p grader -- review build3`."
        ),
        "{stdout}"
    );

    std::fs::write(&review, format!("{answered}\n   And the last one.\n")).unwrap();
    let stdout = grader_exits(root, &["review", "build3"], 0);
    assert!(
        stdout.contains("[x] every question (5) has an answer."),
        "{stdout}"
    );
    for n in 1..=4 {
        assert!(stdout.contains(&format!("— {n}.toml")), "{stdout}");
    }
    assert_eq!(
        stdout.trim_end().lines().last().unwrap(),
        "The checklist of build3 is complete. Next: the next lesson, `cargo run -p grader -- stage8`."
    );
    assert_eq!(guidance_records(root), 0, "review is not guidance");
}

#[test]
fn an_unknown_lesson_is_a_usage_error_with_a_hint() {
    let kit = fresh_kit();
    let root = kit.root();
    let out = grader(root, &["review", "buidl3"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    let names: Vec<&str> = grader::lessons::LESSONS.iter().map(|g| g.name).collect();
    assert!(
        stderr.contains(&format!(
            "there is no lesson \"buidl3\"; the lessons are: {}",
            names.join(", ")
        )),
        "{stderr}"
    );
    assert!(stderr.contains("hint: did you mean build3?"), "{stderr}");
    let out = grader(root, &["review", "networking"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("hint: `cargo run -p grader -- list` shows every lesson"),
        "{}",
        text(&out.stderr)
    );
    let help = grader_exits(root, &["--help"], 0);
    assert!(help.contains("review"), "{help}");
}

#[test]
fn code_that_never_ends_is_stopped_and_the_next_file_still_runs() {
    let kit = fresh_kit();
    let root = kit.root();
    let looping = stub_with("build3", "loop { std::hint::spin_loop() }");
    write_learner(root, "build3", &looping);
    scenario(root, "1.toml", SECOND_CALL);
    scenario(root, "2.toml", ALWAYS_TIMES_OUT);
    let stdout = grader_exits(root, &["review", "build3", "--timeout", "0.5"], 0);
    for name in ["1.toml", "2.toml"] {
        assert!(
            line(&stdout, &format!("{FOLDER}/{name}:")).contains("did not finish within 0.5 s"),
            "{stdout}"
        );
    }
    // What the files cover is read from the files, whatever the code does with them.
    assert!(
        stdout.contains("[x] 2. a request that always times out — 2.toml"),
        "{stdout}"
    );

    // Code that does not compile runs no file; the checklist still says the rest.
    write_learner(root, "build3", "pub fn retry_request( {\n");
    let stdout = grader_exits(root, &["review", "build3"], 0);
    assert!(
        line(&stdout, &format!("{FOLDER}/1.toml:"))
            .contains("not run: practice/src/lib.rs does not compile"),
        "{stdout}"
    );
    assert!(
        stdout.contains("[x] 1. success on the second call — 1.toml"),
        "{stdout}"
    );
    let last = stdout.trim_end().lines().last().unwrap();
    assert!(
        last.starts_with("Missing: code that compiles, for your files to run on;")
            && last.ends_with("Next: `cargo run -p grader -- build3` names the line to fix."),
        "{last}"
    );
}

#[test]
fn every_lesson_has_its_checklist() {
    let kit = fresh_kit();
    let root = kit.root();
    write_learner(root, "build2", &stub_with("build2", CORRECT_BUILD2));
    let dir = root.join("practice/scenarios/build2");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("almost-get.toml"),
        "exercise = \"build2\"\n[[call]]\nmethod = \"get\"\ntransport = \"timeout\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("no-key.toml"),
        "[[call]]\ntransport = \"timeout\"\n",
    )
    .unwrap();
    let stdout = grader_exits(root, &["review", "build2"], 0);
    assert!(
        stdout.contains(
            "almost-get.toml: ended: 1 call(s)\n      covers 4. a method that is almost GET\n"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "it has no `exercise = \"build2\"` line, so it reads as a build3 scenario: add that line at its top"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("[x] 4. a method that is almost GET — almost-get.toml"),
        "{stdout}"
    );

    // stage8's own example of the breaker, copied into the learner's folder, runs on the stub.
    let dir = root.join("practice/scenarios/stage8");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(
        root.join("exercises/stage8/scenarios/breaker-probe.toml"),
        dir.join("breaker.toml"),
    )
    .unwrap();
    let stdout = grader_exits(root, &["review", "stage8"], 0);
    assert!(
        line(&stdout, "practice/scenarios/stage8/breaker.toml:").contains("unfinished"),
        "{stdout}"
    );
    assert!(
        stdout.contains("[x] 3. the breaker opening and probing — breaker.toml"),
        "{stdout}"
    );
    assert!(
        stdout.contains("[ ] 1. a slow provider — no file yet"),
        "{stdout}"
    );
    assert_eq!(guidance_records(root), 0, "review is not guidance");
}

//! The grader binary end to end, as a learner runs it, always in a temporary copy of the kit:
//! the tests never read `practice/` and never write this kit's `GUIDANCE_LOG.md`.

use crate::common;

use common::*;
use std::process::Command;

#[test]
fn reference_passes_every_check() {
    let kit = fresh_kit();
    let out = grader(kit.root(), &["build3", "--against", "reference"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    assert!(
        stdout.contains(" passed; 0 failed; 0 unfinished;"),
        "{stdout}"
    );
    assert!(stdout.contains("check result: ok."), "{stdout}");
    assert!(
        !stdout.contains('\u{1b}'),
        "no colour when not on a terminal"
    );
}

#[test]
fn learner_loop_from_stub_to_broken_to_finished() {
    let kit = fresh_kit();
    let root = kit.root();

    // No command: where the learner stands, and where the course starts.
    let out = grader(root, &[]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    assert!(
        stdout.contains("build2   Declared transient HTTP failures"),
        "{stdout}"
    );
    assert!(
        stdout.contains("Next, in course order: `cargo run -p grader -- build2`"),
        "{stdout}"
    );

    // The untouched stub: every check unfinished, with its place, and a non-zero exit.
    assert_stub_is_unfinished(root, "build3");
    // On a fresh kit, a later lesson's stub says where the course starts; the first does not.
    let later = text(&grader(root, &["build3"]).stdout);
    assert!(
        later.contains(
            "build3 comes after build2 and narrow in the course, which are not started yet"
        ) && later.contains("the course starts at `cargo run -p grader -- build2`"),
        "{later}"
    );
    let first = text(&grader(root, &["build2"]).stdout);
    assert!(!first.contains("the course starts at"), "{first}");

    // A file that does not compile: the compiler's error, then one pointer.
    let stub = stub("build3");
    write_learner(root, "build3", &format!("{stub}\nfn broken( {{\n"));
    let out = grader(root, &["build3"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("error"), "{stderr}");
    assert!(
        stderr.contains("practice/src/lib.rs does not compile"),
        "{stderr}"
    );
    assert!(
        stderr.contains("`cargo run -p grader -- reset build3`"),
        "{stderr}"
    );
    assert!(
        stderr.contains("Only practice/src/lib.rs is compiled for build3"),
        "{stderr}"
    );
    // cargo's own summary of the failed build is not shown: the kit's line says it.
    assert!(!stderr.contains("could not compile `"), "{stderr}");

    // A changed signature: the learner's file compiles, the kit's call of it does not. The
    // failure points at the learner's file and quotes the stub's signature, not the kit's glue.
    let changed = stub_with("build3", CORRECT_BUILD3)
        .replacen("policy: &RetryPolicy", "policy: RetryPolicy", 1)
        .replacen(
            "policy.validate()?;",
            "let policy = &policy;\n    policy.validate()?;",
            1,
        );
    write_learner(root, "build3", &changed);
    let out = grader(root, &["build3"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    for words in [
        "practice/src/lib.rs compiles, but the checks cannot call `retry_request`",
        "keep the stub's signature",
        "    pub fn retry_request<T>(\n        policy: &RetryPolicy,",
        "expected `RetryPolicy`, found `&RetryPolicy`",
    ] {
        assert!(stderr.contains(words), "{words:?} in:\n{stderr}");
    }
    for kits in [
        "grader/harness",
        "root.rs",
        "consider using clone",
        "could not compile `",
    ] {
        assert!(!stderr.contains(kits), "{kits:?} in:\n{stderr}");
    }

    // A panic of the learner's: the check's input, and with RUST_BACKTRACE=1 the frames of
    // the learner's own file, read from its library in the confined runner.
    let panicking = stub_with(
        "build3",
        "{\n    panic!(\"boom in retry_request\\ncheck result: ok. 40 passed\")\n}",
    );
    write_learner(root, "build3", &panicking);
    for (backtrace, frames) in [("0", false), ("1", true)] {
        let out = grader_command(root, &["build3", "fixtures::third_attempt_success"])
            .env("RUST_BACKTRACE", backtrace)
            .output()
            .unwrap();
        let stdout = text(&out.stdout);
        assert!(
            stdout.contains("boom in retry_request") && stdout.contains("\ninput:\n"),
            "{stdout}"
        );
        // A line of the learner's text never starts a line as the grader's own would.
        assert!(
            !stdout.lines().any(|l| l.starts_with("check result: ok")),
            "{stdout}"
        );
        let shown = stdout.contains("your code's calls, innermost first")
            && stdout.contains("retry_request at practice/src/lib.rs:");
        assert_eq!(shown, frames, "RUST_BACKTRACE={backtrace}:\n{stdout}");
    }

    // Commands that do not need the learner's code still work.
    let out = grader(root, &["build3", "--list"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = grader(root, &["build3", "--against", "reference", "fixtures::"]);
    assert!(out.status.success(), "{}", text(&out.stdout));

    // A finished file passes every check.
    write_learner(root, "build3", &stub_with("build3", CORRECT_BUILD3));
    let out = grader(root, &["build3"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    assert!(
        stdout.contains(" passed; 0 failed; 0 unfinished"),
        "{stdout}"
    );

    // A whole pass ends with the next steps, and hands out the self-review once.
    assert!(
        stdout.contains("Every check of build3 passes. Next:"),
        "{stdout}"
    );
    assert!(stdout.contains("practice/review/build3.md"), "{stdout}");
    assert!(stdout.contains("The next lesson: stage8"), "{stdout}");
    let review = root.join("practice/review/build3.md");
    let questions = std::fs::read_to_string(&review).unwrap();
    assert!(questions.contains("Self-review"), "{questions}");
    std::fs::write(&review, format!("{questions}\nMy answers.\n")).unwrap();
    let out = grader(root, &["build3", "--quiet"]);
    assert!(out.status.success());
    assert!(
        std::fs::read_to_string(&review)
            .unwrap()
            .ends_with("My answers.\n"),
        "the learner's answers are never overwritten"
    );

    // A learner's mistake fails a named check and the exit status says so.
    let off_by_one = stub_with("build3", OFF_BY_ONE_BODY);
    write_learner(root, "build3", &off_by_one);
    let out = grader(root, &["build3", "fixtures::"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("check fixtures::capped_exhaustion ... FAILED"),
        "{stdout}"
    );
    assert!(stdout.contains("the first call is attempt 1"), "{stdout}");

    // Reset leaves the self-review alone.
    let out = grader(root, &["reset", "build3", "--yes"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(std::fs::read_to_string(&review)
        .unwrap()
        .ends_with("My answers.\n"));
}

#[test]
fn the_case_an_exhaustive_check_found_is_saved() {
    let kit = fresh_kit();
    let root = kit.root();
    // NaN as a wait larger than any budget: a mistake only the exhaustive check sees in full.
    let body = CORRECT_BUILD3.replace(
        ".filter(|w| *w >= 0.0)",
        ".map(|w| if w.is_nan() { f64::INFINITY } else { w }).filter(|w| *w >= 0.0)",
    );
    write_learner(root, "build3", &stub_with("build3", &body));
    let stdout = grader_exits(root, &["build3", "exhaustive::"], 1);
    // The why names the rule the first difference breaks, in the named check's words.
    assert!(
        stdout.contains("why: A retry_after of NaN is no wait at all: ignore it"),
        "{stdout}"
    );
    let saved = root.join("target/kit-cases/build3-difference.toml");
    assert!(
        stdout.contains(&format!("is saved in {}", saved.display())),
        "{stdout}"
    );
    let case = std::fs::read_to_string(&saved).unwrap();
    assert!(case.contains("retry_after = nan"), "{case}");
    let out = grader(root, &["scenario", saved.to_str().unwrap()]);
    assert!(
        text(&out.stdout).contains("retry_after NaN"),
        "{}",
        text(&out.stdout)
    );
    // --compare of the case as saved shows what the failure showed: not recorded. Changed, it
    // is an input of the learner's choosing: recorded.
    let log = root.join(grader::guidance::LOG_FILE);
    let rows = || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains("| reference-run |"))
            .count()
    };
    let out = grader(root, &["scenario", saved.to_str().unwrap(), "--compare"]);
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("as the check saved it") && stdout.contains("not recorded"),
        "{stdout}"
    );
    assert_eq!(rows(), 0, "{stdout}");
    let changed = root.join("changed-case.toml");
    std::fs::write(&changed, format!("{case}\n# my note\n")).unwrap();
    let out = grader(root, &["scenario", changed.to_str().unwrap(), "--compare"]);
    assert!(
        text(&out.stdout).contains("recorded as guidance #1"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(rows(), 1);
    // Another case of the space, written as the check would save it: the learner's code was
    // never shown failing there, so the reference's run of it is recorded.
    use grader_checks::lessons::build3::exhaustive::{case as space_case, case_text};
    let other = root.join("another-case.toml");
    std::fs::write(&other, case_text(&space_case(2).unwrap(), 2)).unwrap();
    let out = grader(root, &["scenario", other.to_str().unwrap(), "--compare"]);
    assert!(
        text(&out.stdout).contains("recorded as guidance #2"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(rows(), 2);

    let chosen = root.join("my-case.toml");
    let out = grader(
        root,
        &[
            "build3",
            "exhaustive::",
            "--save-case",
            chosen.to_str().unwrap(),
        ],
    );
    assert!(
        text(&out.stdout).contains("my-case.toml"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(std::fs::read_to_string(&chosen).unwrap(), case);

    // With --format json, standard output is JSON lines only: the saved case is an event.
    let out = grader(root, &["build3", "exhaustive::", "--format", "json"]);
    let stdout = text(&out.stdout);
    let events: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l:?}\n{stdout}")))
        .collect();
    assert!(
        events.iter().any(|e| e["type"] == "case"
            && e["event"] == "saved"
            && e["path"] == saved.display().to_string()),
        "{stdout}"
    );
}

/// A learner's loop that counts retries instead of attempts: one call too many.
/// Whether the copy's last build of `lesson` ran the compiler without cargo.
fn replayed(root: &std::path::Path, lesson: &str) -> Option<bool> {
    grader::compile::last_build_replayed(
        &root.join("target").join(grader::cache::CACHE_DIR),
        lesson,
    )
}

#[test]
fn edits_after_a_build_are_compiled_without_cargo_and_graded_as_cargo_would() {
    let kit = fresh_kit();
    let root = kit.root();
    // A dependency named in the manifest makes a kit state of its own: the first build of it
    // goes through cargo, which shows its commands for the next builds.
    let manifest = root.join("practice/Cargo.toml");
    let pristine = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        format!("{pristine}\n# {:?}\n", std::time::SystemTime::now()),
    )
    .unwrap();
    write_learner(root, "build3", &stub_with("build3", CORRECT_BUILD3));
    let out = grader(root, &["build3"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        replayed(root, "build3"),
        Some(false),
        "a new kit state: cargo"
    );

    // A mistake: compiled without cargo, and it fails as it would with cargo.
    write_learner(root, "build3", &stub_with("build3", OFF_BY_ONE_BODY));
    let out = grader(root, &["build3", "fixtures::"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("check fixtures::capped_exhaustion ... FAILED"),
        "{stdout}"
    );
    assert_eq!(replayed(root, "build3"), Some(true));

    // A warning about the learner's code is shown, without colour codes off a terminal.
    let warned = format!(
        "{}\nfn helper_never_used() {{}}\n",
        stub_with("build3", CORRECT_BUILD3)
    );
    write_learner(root, "build3", &warned);
    let out = grader(root, &["build3"]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("function `helper_never_used` is never used"),
        "{stderr}"
    );
    assert!(!stderr.contains('\u{1b}'), "{stderr}");
    assert_eq!(replayed(root, "build3"), Some(true));

    // An error goes to cargo, which reports it as always; the next edit is replayed again.
    write_learner(
        root,
        "build3",
        &format!("{}\nfn broken( {{\n", stub("build3")),
    );
    let out = grader(root, &["build3"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("practice/src/lib.rs does not compile"),
        "{stderr}"
    );
    write_learner(root, "build3", &stub_with("build3", CORRECT_BUILD3));
    let out = grader(root, &["build3"]);
    assert!(out.status.success(), "{}", text(&out.stdout));
    assert_eq!(replayed(root, "build3"), Some(true));

    // A file taken from outside practice/ is still found in what the compiler read.
    write_learner(
        root,
        "build3",
        "#[path = \"../../reference/src/retry.rs\"]\nmod answer;\npub use answer::retry_request;\n",
    );
    let out = grader(root, &["build3"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("reference/src/retry.rs"), "{stderr}");
    assert!(!text(&out.stdout).contains("check "), "no check ran");

    // Replayed, the learner's code is a library the harness loads: what hostile code does in
    // it is still named, check by check, as when it is linked in.
    let one = "fixtures::third_attempt_success";
    let hostile = [
        (
            "{ let _ = (policy, request, sleep, log); panic!(\"learner boom\") }",
            "... FAILED (panicked)\n\nfailures:\n\n---- fixtures::third_attempt_success ----\n\
             panicked at practice/src/lib.rs:",
        ),
        (
            "{ fn down(n: u64) -> u64 { 1 + down(std::hint::black_box(n) + 1) } \
             let _ = (policy, request, sleep, log); std::process::exit(down(0) as i32) }",
            "stack overflow",
        ),
        (
            "{ let _ = (policy, request, sleep, log); std::process::exit(0) }",
            "exited with status 0",
        ),
        (
            "{ let _ = (policy, request, sleep, log); std::process::abort() }",
            "SIGABRT",
        ),
    ];
    for (body, named) in hostile {
        write_learner(root, "build3", &stub_with("build3", body));
        let stdout = grader_exits(root, &["build3", one], 1);
        assert!(stdout.contains(named), "{body}: {stdout}");
        assert_eq!(replayed(root, "build3"), Some(true), "{body}");
    }
    write_learner(root, "build3", &stub("build3"));
    assert_stub_is_unfinished(root, "build3");
    assert_eq!(replayed(root, "build3"), Some(true));

    // The other lessons' functions are exported and loaded the same way.
    for (lesson, body) in [("build2", CORRECT_BUILD2), ("stage8", CORRECT_STAGE8)] {
        let total = grader::lessons::lesson(lesson).unwrap().checks.len();
        for edit in ["", "\n// edited\n"] {
            write_learner(root, lesson, &format!("{}{edit}", stub_with(lesson, body)));
            let stdout = grader_exits(root, &[lesson], 0);
            assert!(
                stdout.contains(&format!("{total} passed; 0 failed")),
                "{stdout}"
            );
        }
        assert_eq!(replayed(root, lesson), Some(true), "{lesson}");
    }
    // One harness loads every lesson's library: built once for this kit state.
    let cache = root.join("target").join(grader::cache::CACHE_DIR);
    let loading: Vec<String> = std::fs::read_dir(&cache)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|name| name.starts_with("loading-harness"))
        .collect();
    assert_eq!(loading.len(), 1, "{loading:?}");
    std::fs::write(&manifest, pristine).unwrap();
}

const OFF_BY_ONE_BODY: &str = r#"
    policy.validate()?;
    let (mut request, mut sleep, mut log) = (request, sleep, log);
    let mut attempt = 0;
    loop {
        attempt += 1;
        match request() {
            Ok(v) => return Ok(v),
            Err(RequestError::Permanent(p)) => return Err(RetryError::Permanent(p)),
            Err(RequestError::Transient(e)) => {
                if attempt > policy.max_attempts {
                    log(RetryEvent::stop(attempt, e.reason, StopCause::AttemptLimit));
                    return Err(RetryError::Exhausted { attempts: attempt, reason: e.reason, cause: StopCause::AttemptLimit });
                }
                let delay = (policy.base_delay * 2f64.powi(attempt as i32 - 1)).min(policy.max_delay);
                log(RetryEvent::retry(attempt, e.reason, delay));
                sleep(delay);
            }
        }
    }
"#;

#[test]
fn colour_only_when_asked_or_on_a_terminal() {
    let kit = fresh_kit();
    let out = grader(
        kit.root(),
        &[
            "build3",
            "--against",
            "reference",
            "--color",
            "always",
            "fixtures::permanent_error",
        ],
    );
    assert!(
        text(&out.stdout).contains('\u{1b}'),
        "--color always colours"
    );
    let out = Command::new(GRADER)
        .args(["--root"])
        .arg(kit.root())
        .args([
            "build3",
            "--against",
            "reference",
            "fixtures::permanent_error",
        ])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(!text(&out.stdout).contains('\u{1b}'));
}

#[test]
fn bad_input_gets_one_line_and_a_hint() {
    let kit = fresh_kit();
    let out = grader(kit.root(), &["build9"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("build9"),
        "{}",
        text(&out.stderr)
    );

    let out = grader(kit.root(), &["build3", "--timeout", "-1"]);
    assert_eq!(out.status.code(), Some(2));
    // Usage names the command people type (`cargo run -p grader`), not the program the
    // launcher runs (`kit-grader`).
    let usage = text(&out.stderr);
    assert!(usage.contains("Usage: grader build3 "), "{usage}");
    assert!(!usage.contains("kit-grader"), "{usage}");

    let empty = tempfile::tempdir().unwrap();
    let out = grader(empty.path(), &["build3"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("has no exercises/ folder"), "{stderr}");
    assert!(stderr.contains("hint:"), "{stderr}");
}

#[test]
fn a_filter_that_matches_nothing_is_not_a_pass() {
    let kit = fresh_kit();
    let out = grader(
        kit.root(),
        &["build3", "--against", "reference", "no_such_check"],
    );
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("No check matched the filter"), "{stdout}");
}

#[test]
fn reports_are_written_for_a_run_and_for_a_file_that_does_not_compile() {
    let kit = fresh_kit();
    let root = kit.root();
    let dir = tempfile::tempdir().unwrap();
    let (json, exercism) = (dir.path().join("r/run.json"), dir.path().join("e.json"));
    let json_arg = format!("json:{}", json.display());
    let exercism_arg = format!("exercism:{}", exercism.display());

    // The stub: every check is in the reports, unfinished.
    let out = grader(
        root,
        &["build3", "--report", &json_arg, "--report", &exercism_arg],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let checks = report["checks"].as_array().unwrap();
    assert_eq!(
        checks.len(),
        grader::lessons::lesson("build3").unwrap().checks.len()
    );
    assert!(
        checks.iter().all(|c| c["status"] == "unfinished"),
        "{report}"
    );
    assert_eq!(report["against"], "practice");
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&exercism).unwrap()).unwrap();
    assert_eq!(results["status"], "fail");
    assert!(results["tests"][0]["message"]
        .as_str()
        .unwrap()
        .starts_with("unfinished:"));

    // A file that does not compile: the reports say so, with the compiler's error.
    write_learner(
        root,
        "build3",
        &format!("{}\nfn broken( {{\n", stub("build3")),
    );
    let out = grader(root, &["build3", "--report", &exercism_arg]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&exercism).unwrap()).unwrap();
    assert_eq!(results["status"], "error", "{results}");
    let message = results["message"].as_str().unwrap();
    assert!(
        message.starts_with("Your code did not compile, so no check ran.\n\n")
            && message.contains("does not compile: error"),
        "{message}"
    );

    // A report is a grade of the learner's whole work: not of the reference, not of a part.
    for extra in [
        &["--against", "reference"][..],
        &["fixtures::"][..],
        &["--fail-fast"][..],
    ] {
        let mut args = vec!["build3", "--report", &json_arg];
        args.extend_from_slice(extra);
        let out = grader(root, &args);
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        assert!(
            text(&out.stderr).contains("--report writes a grade"),
            "{}",
            text(&out.stderr)
        );
    }
    let out = grader(root, &["build3", "--report", "yaml:x.yaml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("json, exercism, gradescope, junit"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_mistyped_lesson_or_a_command_for_a_lesson_is_said_with_the_lessons_and_a_hint() {
    let copy = fresh_kit();
    let kit = copy.root().to_path_buf();
    // A first word that is neither a lesson nor a command: the kit's own message, as for
    // a lesson any other command does not know.
    let out = grader(&kit, &["bulid3"]);
    assert_eq!(out.status.code(), Some(2));
    let said = text(&out.stderr);
    assert!(
        said.contains("there is no lesson or command \"bulid3\"; the lessons are: build2")
            && said.contains("did you mean build3?")
            && said.contains("`cargo run -p grader -- --help` lists the commands"),
        "{said}"
    );
    // A command's name where a lesson goes: where that command's help is.
    let out = grader(&kit, &["help", "reset"]);
    assert_eq!(out.status.code(), Some(2));
    let said = text(&out.stderr);
    assert!(
        said.contains("\"reset\" is a command, not a lesson")
            && said.contains("`cargo run -p grader -- reset --help`"),
        "{said}"
    );
    // Nothing was recorded as guidance (help records a lesson's help, and none was shown).
    let log = std::fs::read_to_string(kit.join(grader::guidance::LOG_FILE)).unwrap();
    assert!(grader::guidance::parse(&log).records.is_empty(), "{log}");
    let out = grader(&kit, &["--help"]);
    assert!(out.status.success(), "--help still works");
}

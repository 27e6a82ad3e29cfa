//! The grader binary end to end, as a learner runs it, always in a temporary copy of the kit:
//! the tests never read `practice/` and never write this kit's `GUIDANCE_LOG.md`.

mod common;

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

    // The untouched stub: every check unfinished, with its place, and a non-zero exit.
    let out = grader(root, &["build3"]);
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    assert!(stdout.contains("0 passed; 0 failed;"), "{stdout}");
    assert!(stdout.contains(" unfinished; 0 filtered out"), "{stdout}");
    assert!(
        stdout.contains("retry_request reached todo!() at practice/src/lib.rs:"),
        "{stdout}"
    );
    assert!(!stdout.contains(" ... ok"), "{stdout}");

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
}

/// A learner's loop that counts retries instead of attempts: one call too many.
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

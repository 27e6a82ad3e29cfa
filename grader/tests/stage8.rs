//! Stage 8 from a fresh copy of the kit: the stub is unfinished, the reference passes, a
//! finished file passes, reset touches only its own file, and `list` tells where one stands.

use crate::common;

use common::*;
use std::path::Path;

fn stage8_stub() -> String {
    stub("stage8")
}

fn gateway_file(root: &Path) -> String {
    std::fs::read_to_string(root.join("practice/src/gateway.rs")).unwrap()
}

#[test]
fn stage8_from_a_fresh_kit() {
    let kit = fresh_kit();
    let root = kit.root();

    let out = grader(root, &["list"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("build3") && l.contains("not started")),
        "{stdout}"
    );
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("stage8") && l.contains("not started")),
        "{stdout}"
    );

    assert_stub_is_unfinished(root, "stage8");
    let total = grader::lessons::lesson("stage8").unwrap().checks.len();

    let out = grader(root, &["stage8", "--against", "reference"]);
    assert!(out.status.success(), "{}", text(&out.stdout));

    // A learner's own finished gateway passes.
    {
        let body = CORRECT_STAGE8;
        std::fs::write(
            root.join("practice/src/gateway.rs"),
            stub_with("stage8", body),
        )
        .unwrap();
        let out = grader(root, &["stage8"]);
        let stdout = text(&out.stdout);
        assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
        assert!(
            stdout.contains(&format!("{total} passed; 0 failed; 0 unfinished")),
            "{stdout}"
        );
    }

    let out = grader(root, &["trace", "stage8"]);
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("#1 bike-7 at t=0.000: Available(available = true), 3 attempts"),
        "{stdout}"
    );
    let probe = root.join("exercises/stage8/scenarios/breaker-probe.toml");
    let out = grader(root, &["scenario", &probe.display().to_string()]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains("#4 bike-7 at t=0.450: Failed(503 breaker_open), 0 attempts"),
        "{stdout}"
    );
    assert!(
        stdout.contains("counters: logical_lookups 5, attempts 10"),
        "{stdout}"
    );

    // list: stage8 passing with its guidance (the reference run above); build3 not started.
    let out = grader(root, &["list"]);
    let stdout = text(&out.stdout);
    let row = |g: &str| {
        stdout
            .lines()
            .find(|l| l.starts_with(g))
            .unwrap_or_default()
            .to_string()
    };
    assert!(
        row("stage8").contains("passing") && row("stage8").contains("1 reference run"),
        "{stdout}"
    );
    assert!(
        row("build3").contains("not started") && row("build3").contains("none"),
        "{stdout}"
    );

    // A build3 file with a mistake shows as failing.
    let wrong = stub_with(
        "build3",
        "{ let _ = (policy, sleep, log); let mut request = request; request().map_err(|_| RetryError::InvalidPolicy(PolicyError::AttemptsOutOfRange(0))) }",
    );
    write_learner(root, "build3", &wrong);
    // list runs nothing: until the lesson runs again, it says the file changed.
    let out = grader(root, &["list"]);
    assert!(
        text(&out.stdout).lines().any(|l| l.starts_with("build3")
            && (l.contains("not run yet: run it") || l.contains("changed since last run"))),
        "{}",
        text(&out.stdout)
    );
    let out = grader(root, &["build3"]);
    assert_eq!(out.status.code(), Some(1));
    let out = grader(root, &["list"]);
    let stdout = text(&out.stdout);
    assert!(
        stdout.lines().any(|l| l.starts_with("build3")
            && l.contains("failing (")
            && l.contains(&format!(
                " of {} checks)",
                grader::lessons::lesson("build3").unwrap().checks.len()
            ))),
        "{stdout}\n{}",
        text(&out.stderr)
    );

    // reset stage8 touches gateway.rs only.
    let out = grader(root, &["reset", "stage8", "--yes"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(gateway_file(root), stage8_stub());
    assert_eq!(
        std::fs::read_to_string(root.join("practice/src/lib.rs")).unwrap(),
        wrong
    );
    let out = grader(root, &["reset", "stage8", "--list-backups"]);
    assert!(
        text(&out.stdout).contains("-gateway.rs"),
        "{}",
        text(&out.stdout)
    );
}

//! Scenario files, the worked trace and `--compare`, end to end in a temporary copy of the kit.

use crate::common;

use common::*;
use grader::guidance::{parse, Kind, LOG_FILE};
use std::path::Path;

fn write(root: &Path, name: &str, text: &str) -> String {
    let path = root.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

fn kinds(root: &Path) -> Vec<Kind> {
    let text = std::fs::read_to_string(root.join(LOG_FILE)).unwrap();
    parse(&text).records.iter().map(|r| r.kind).collect()
}

#[test]
fn trace_prints_the_lessons_numbers() {
    let kit = fresh_kit();
    let out = grader(kit.root(), &["trace", "build3"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    for line in [
        "  call 1 → transient server_error, no retry_after → log #1 server_error retry 0.25s (the backoff: min(2.0, 0.25 × 2^0)) → sleep 0.25",
        "  call 2 → transient server_error, no retry_after → log #2 server_error retry 0.5s (the backoff: min(2.0, 0.25 × 2^1)) → sleep 0.5",
        r#"  call 3 → data {"job_id":"fresh_3","state":"done"}"#,
        "calls:   3",
        "waits:   [0.25, 0.5]",
        "actions: [retry, retry]",
        r#"returned: {"job_id":"fresh_3","state":"done"}"#,
        r#"  {"attempt":1,"reason":"server_error","action":"retry","delay":0.25,"cause":null}"#,
    ] {
        assert!(stdout.lines().any(|l| l == line), "{line:?} in\n{stdout}");
    }
    assert!(
        kinds(kit.root()).is_empty(),
        "the lesson's own example is not guidance"
    );

    let out = grader(kit.root(), &["trace", "stage8"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        stdout.contains(
            "  lookup 1 of \"bike-7\" at t=0.000; breaker Closed { failures: 0 }\n\
             \x20   t=0.000 call 1 (timeout 0.400) → 503\n\
             \x20   t=0.000 sleep 0.05\n\
             \x20   t=0.050 call 2 (timeout 0.400) → 503\n\
             \x20   t=0.050 sleep 0.1\n\
             \x20   t=0.150 call 3 (timeout 0.400) → 200"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("→ Available(available = true), 3 attempts; breaker Closed { failures: 0 }; counters logical_lookups 1, attempts 3"),
        "{stdout}"
    );
}

#[test]
fn shipped_scenarios_reproduce_the_controlled_change() {
    let kit = fresh_kit();
    let root = kit.root();
    let first = root.join("exercises/build3/scenarios/change-wait-1.5.toml");
    let out = grader(
        root,
        &[
            "scenario",
            &first.display().to_string(),
            "--against",
            "reference",
        ],
    );
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        stdout.contains("calls:   2\nwaits:   [1.5]\nactions: [retry]\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains(r#"returned: {"job_id":"fresh_2","state":"done"}"#),
        "{stdout}"
    );

    let second = root.join("exercises/build3/scenarios/change-wait-3.toml");
    let out = grader(
        root,
        &[
            "scenario",
            &second.display().to_string(),
            "--against",
            "reference",
        ],
    );
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("calls:   1\nwaits:   []\nactions: [stop]\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "refused: Exhausted { attempts: 1, reason: rate_limited, cause: delay_budget }"
        ),
        "{stdout}"
    );
    assert_eq!(kinds(root), [Kind::ReferenceRun, Kind::ReferenceRun]);

    // stage8's controlled change: the answers its lesson gives.
    let run = |name: &str| {
        let file = root.join("exercises/stage8/scenarios").join(name);
        let out = grader(
            root,
            &[
                "scenario",
                &file.display().to_string(),
                "--against",
                "reference",
            ],
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let stdout = run("change-retry-after-0.5.toml");
    assert!(
        stdout.contains(
            "    t=0.000 sleep 0.05\n\
             \x20   t=0.050 call 2 (timeout 0.400) → 503, Retry-After \"0.5\"\n\
             \x20   t=0.050 sleep 0.1\n"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("#1 bike-7 at t=0.000: Available(available = true), 3 attempts"),
        "{stdout}"
    );
    let stdout = run("change-retry-after-1.toml");
    assert!(
        stdout.contains(
            "    t=0.000 call 1 (timeout 0.400) → 502, Retry-After \"1\"\n\
             \x20   → Failed(503 provider_unavailable), 1 attempt; breaker Closed { failures: 1 }"
        ),
        "{stdout}"
    );
    assert!(!stdout.contains("sleep"), "{stdout}");
    assert!(stdout.contains("ended: clock at t=0.000"), "{stdout}");
    assert_eq!(kinds(root), [Kind::ReferenceRun; 4]);
}

#[test]
fn malformed_scenarios_point_at_the_line() {
    let kit = fresh_kit();
    let root = kit.root();
    let file = write(
        root,
        "bad.toml",
        "[[outcome]]\ntransient = \"server_error\"\nwait = 3\n",
    );
    let out = grader(root, &["scenario", &file, "--against", "reference"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!("{file}:3:1: unknown field `wait`")),
        "{stderr}"
    );
    assert!(stderr.contains("hint:"), "{stderr}");
    assert!(
        kinds(root).is_empty(),
        "a refused file shows nothing and records nothing"
    );
}

/// The lesson's four "new inputs", written as a learner would.
const NEW_INPUTS: [(&str, &str, &str); 4] = [
    (
        "success-on-two.toml",
        "[[outcome]]\ntransient = \"timeout\"\n\n[[outcome]]\ndata = { job_id = \"fresh_2\" }\n",
        "calls:   2\nwaits:   [0.25]\nactions: [retry]\nevents:\n  {\"attempt\":1,\"reason\":\"timeout\",\"action\":\"retry\",\"delay\":0.25,\"cause\":null}\nreturned: {\"job_id\":\"fresh_2\"}\n",
    ),
    (
        "always-timeout.toml",
        "[[outcome]]\ntransient = \"timeout\"\nforever = true\n",
        "calls:   3\nwaits:   [0.25, 0.5]\nactions: [retry, retry, stop]\nevents:\n  {\"attempt\":1,\"reason\":\"timeout\",\"action\":\"retry\",\"delay\":0.25,\"cause\":null}\n  {\"attempt\":2,\"reason\":\"timeout\",\"action\":\"retry\",\"delay\":0.5,\"cause\":null}\n  {\"attempt\":3,\"reason\":\"timeout\",\"action\":\"stop\",\"delay\":null,\"cause\":\"attempt_limit\"}\nrefused: Exhausted { attempts: 3, reason: timeout, cause: attempt_limit }",
    ),
    (
        "permanent-404.toml",
        "[[outcome]]\nhttp = { status = 404, body = \"no such job\" }\n",
        "calls:   1\nwaits:   []\nactions: []\nevents:\n  (none)\nrefused: Permanent(not_found, status 404)",
    ),
    (
        "server-wait-over-budget.toml",
        "[[outcome]]\nhttp = { status = 429, headers = { Retry-After = \"30\" } }\n\n[[outcome]]\ndata = { job_id = \"never\" }\n",
        "calls:   1\nwaits:   []\nactions: [stop]\nevents:\n  {\"attempt\":1,\"reason\":\"rate_limited\",\"action\":\"stop\",\"delay\":null,\"cause\":\"delay_budget\"}\nrefused: Exhausted { attempts: 1, reason: rate_limited, cause: delay_budget }",
    ),
];

#[test]
fn a_learner_runs_scenarios_on_their_own_code() {
    let kit = fresh_kit();
    let root = kit.root();
    write_learner(root, "build3", &stub_with("build3", CORRECT_BUILD3));

    for (name, scenario, expected) in NEW_INPUTS {
        let file = write(root, name, scenario);
        let out = grader(root, &["scenario", &file]);
        let stdout = text(&out.stdout);
        assert!(
            out.status.success(),
            "{name}: {stdout}\n{}",
            text(&out.stderr)
        );
        assert!(stdout.contains("against practice"), "{stdout}");
        assert!(
            stdout.contains(expected),
            "{name}: expected\n{expected}\nin\n{stdout}"
        );
        assert!(
            !stdout.contains("output of the code under test"),
            "it printed nothing: {stdout}"
        );
    }
    assert!(
        kinds(root).is_empty(),
        "running your own code is not guidance"
    );

    let file = write(
        root,
        "short.toml",
        "[[outcome]]\ntransient = \"connection\"\n",
    );
    let out = grader(root, &["scenario", &file]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("error: request was called 2 times, but the script has only 1 outcome(s). Add outcomes, or `forever = true` on the last one."),
        "{stdout}"
    );

    let file = write(root, "compare.toml", NEW_INPUTS[1].1);
    let out = grader(root, &["scenario", &file, "--compare"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains("  calls: 3 (same)") && stdout.contains("Same on every line."),
        "{stdout}"
    );
    assert_eq!(
        kinds(root),
        [Kind::ReferenceRun],
        "--compare shows the reference"
    );
    assert!(
        stdout.contains("The reference's run is recorded as guidance #1 in GUIDANCE_LOG.md."),
        "the learner is told: {stdout}"
    );

    // What the learner's own code prints while they debug is shown with the run.
    let chatty = stub_with(
        "build3",
        &format!("eprintln!(\"my debug: max {{}}\", policy.max_attempts);\n{CORRECT_BUILD3}"),
    );
    write_learner(root, "build3", &chatty);
    for extra in [&[][..], &["--compare"][..]] {
        let mut args = vec!["scenario", file.as_str()];
        args.extend_from_slice(extra);
        let out = grader(root, &args);
        let stdout = text(&out.stdout);
        assert!(out.status.success(), "{extra:?}: {stdout}");
        assert!(
            stdout.contains("---- output of the code under test ----\nmy debug: max 3"),
            "{extra:?}: {stdout}"
        );
        // Printed text comes before the kit's report, so it cannot pass for what follows it.
        let printed_at = stdout.find("my debug: max 3").unwrap();
        let report_at = stdout
            .find("against practice")
            .or_else(|| stdout.find("next to the reference"))
            .unwrap();
        assert!(printed_at < report_at, "{extra:?}: {stdout}");
    }

    // A loop that never ends is stopped, as in the grader.
    let looping = stub_with("build3", "loop { std::hint::spin_loop() }");
    write_learner(root, "build3", &looping);
    let out = grader(root, &["scenario", &file, "--timeout", "0.5"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("did not finish within 0.5 s"), "{stdout}");
    assert!(
        !stdout.contains("did not finish: did not finish"),
        "{stdout}"
    );

    // --compare shows the reference only beside a run of the learner's that ended: a run
    // that never finishes, or a file that does not build, shows none and records nothing.
    let before = kinds(root);
    let out = grader(root, &["scenario", &file, "--compare", "--timeout", "0.5"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("did not finish within 0.5 s")
            && stdout.contains("The reference was not run, so nothing is recorded as guidance.")
            && !stdout.contains("next to the reference"),
        "{stdout}"
    );
    assert_eq!(kinds(root), before, "nothing shown, nothing recorded");
    write_learner(root, "build3", &stub_with("build3", "this is not Rust"));
    let out = grader(root, &["scenario", &file, "--compare"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert_eq!(
        kinds(root),
        before,
        "a file that does not build records nothing"
    );
}

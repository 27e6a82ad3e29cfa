//! The report writers against their platforms' rules (see `docs/report-formats.md` and the
//! sources it cites): each format has a validator written from those rules — field names,
//! allowed values, required fields, order, length limits — and hostile learner text
//! (control characters, `]]>`, `<script>`, quotes, a 100,000-character panic, the
//! replacement character) must come out valid.
//!
//! The validators are independent of the writers: they know the platforms' rules and the
//! kit's promises, not the writers' code. A few tests feed them broken documents, so a
//! validator that accepts everything would fail.

use crate::platforms;

use grader::reports::weights::{self, Weights};
use grader::reports::{CheckReport, Guidance, NotRun, ReportFormat, RunReport};
use grader::{FailureKind, Status};
use platforms::{exercism_problems, gradescope_problems, EXERCISM_OUTPUT_NOTICE};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

// ======================================================================================
// Reports, built by hand
// ======================================================================================

fn report(checks: Vec<CheckReport>) -> RunReport {
    let points_possible = checks.iter().map(|c| c.weight).sum();
    RunReport {
        kit_version: "0.1.0".into(),
        lesson: "build3".into(),
        title: "Retry transient failures".into(),
        against: "practice".into(),
        learner_file: Some("practice/src/lib.rs".into()),
        learner_file_hash: Some(grader::reports::content_hash(b"fn retry_request() {}")),
        not_run: None,
        points_possible,
        checks,
        guidance: Guidance {
            by_kind: BTreeMap::from([("help".to_string(), 2), ("note".to_string(), 1)]),
            known: true,
            unverified: None,
        },
        started: "2026-08-20T10:00:00Z".into(),
        duration_secs: 12.5,
    }
}

fn passed(name: &str) -> CheckReport {
    CheckReport {
        name: name.into(),
        status: Status::Passed,
        kind: None,
        message: None,
        location: None,
        output: String::new(),
        duration_secs: 0.25,
        weight: 1.0,
    }
}

fn failed(name: &str, kind: FailureKind, message: &str) -> CheckReport {
    CheckReport {
        status: Status::Failed,
        kind: Some(kind),
        message: Some(message.into()),
        ..passed(name)
    }
}

fn unfinished(name: &str) -> CheckReport {
    CheckReport {
        status: Status::Unfinished,
        message: Some("not yet implemented".into()),
        location: Some("practice/src/lib.rs:12:5".into()),
        ..passed(name)
    }
}

fn kit_bug(name: &str, message: &str) -> CheckReport {
    CheckReport {
        status: Status::KitBug,
        message: Some(message.into()),
        ..passed(name)
    }
}

fn printed(mut check: CheckReport, output: &str) -> CheckReport {
    check.output = output.into();
    check
}

fn weighing(mut check: CheckReport, weight: f64) -> CheckReport {
    check.weight = weight;
    check
}

fn all_passed() -> RunReport {
    report(vec![
        passed("fixtures::third_attempt_success"),
        passed("fixtures::capped_exhaustion"),
        passed("validation::base_above_max"),
        printed(passed("attempts::first_call_is_attempt_one"), "attempt 1\n"),
        weighing(passed("exhaustive::matches_reference_on_every_case"), 5.0),
    ])
}

/// Every status and every failure kind, modules revisited out of order.
fn mixed() -> RunReport {
    report(vec![
        passed("fixtures::third_attempt_success"),
        failed(
            "fixtures::capped_exhaustion",
            FailureKind::Mismatch,
            "expected 3 attempts, saw 4\nthe policy allows at most 3",
        ),
        printed(
            failed(
                "validation::base_above_max",
                FailureKind::Panic,
                "panicked at practice/src/lib.rs:40:9: index out of bounds",
            ),
            "about to index\n",
        ),
        unfinished("attempts::first_call_is_attempt_one"),
        kit_bug(
            "attempts::one_attempt_never_sleeps",
            "the fake clock went backwards",
        ),
        failed(
            "backoff::doubles_then_caps",
            FailureKind::Crash,
            "the process aborted",
        ),
        failed(
            "backoff::zero_delays_still_call_sleep",
            FailureKind::Timeout,
            "did not finish in 10 s",
        ),
        failed(
            "fixtures::sleep_panics",
            FailureKind::Limit,
            "went over 512 MiB",
        ),
        failed(
            "outcomes::callers_own_value",
            FailureKind::Leak,
            "a child process was still running",
        ),
        weighing(passed("exhaustive::matches_reference_on_every_case"), 5.0),
    ])
}

fn compile_error() -> RunReport {
    let mut r = report(Vec::new());
    r.points_possible = 43.0;
    r.not_run = Some(NotRun::DoesNotCompile(
        "error[E0308]: mismatched types\n --> practice/src/lib.rs:3:5\n  |\n3 |     \"x\" < 'y' && z\n  |     ^^^ expected `u32`, found `&str`\n"
            .into(),
    ));
    r
}

/// The text of why no check ran, when none did.
fn not_run_text(report: &RunReport) -> Option<&str> {
    report.not_run.as_ref().map(NotRun::text)
}

/// What invalid UTF-8 becomes after lossy decoding.
fn lossy() -> String {
    String::from_utf8_lossy(b"bytes \xff\xfe then \xc3\x28 end").into_owned()
}

const HOSTILE: &str = "ctl:\u{0}\u{1}\u{8}\u{b}\u{c}\u{e}\u{1f}\u{7f} ansi:\u{1b}[31mred\u{1b}[0m \
cdata:]]> <![CDATA[x]]> script:<script>alert('x' + \"y\")</script> amp:&amp; &lt; & \
nonchars:\u{fffe}\u{ffff} crlf:a\r\nb\rc tab:\tend";

/// Hostile learner text everywhere the learner controls it.
fn hostile() -> RunReport {
    let huge = format!("panicked: {}", "x<&\"'".repeat(20_000));
    assert_eq!(huge.chars().count(), 100_010);
    let mut r = report(vec![
        printed(
            failed("fixtures::hostile", FailureKind::Mismatch, HOSTILE),
            HOSTILE,
        ),
        failed("fixtures::huge_panic", FailureKind::Panic, &huge),
        printed(
            failed("fixtures::lossy", FailureKind::Mismatch, &lossy()),
            &lossy(),
        ),
        printed(passed("fixtures::exactly_500"), &"o".repeat(500)),
        printed(passed("fixtures::just_over_500"), &"p".repeat(501)),
        printed(
            unfinished("fixtures::unfinished_hostile"),
            &"]]>".repeat(2000), // 6,000 characters
        ),
        kit_bug("fixtures::kit_bug_hostile", HOSTILE),
    ]);
    // The learner chooses a submission's name and file; a title is text too.
    r.title = "title \"quoted\"\nline 2\t<b>&amp;</b> \u{1}".into();
    r.against = "sub'mission\r\n\"two\"".into();
    r.learner_file = Some("practice/<src>/lib.rs".into());
    r
}

fn unicode() -> RunReport {
    let mut r = report(vec![
        printed(
            failed(
                "unicode::names_and_messages",
                FailureKind::Mismatch,
                "attendu «42», reçu «٤٢» — 日本語 👩‍🔬 e\u{301} שלום \u{fffd}",
            ),
            &"🦀".repeat(600), // 600 characters, 2,400 bytes
        ),
        printed(passed("unicode::only_output"), "ok ✓ — ünïcödé\n"),
    ]);
    r.title = "Réessayer — 再試行".into();
    r.learner_file = Some("practice/src/lib — copie.rs".into());
    r
}

fn empty_output() -> RunReport {
    report(vec![
        passed("fixtures::third_attempt_success"),
        failed(
            "fixtures::capped_exhaustion",
            FailureKind::Mismatch,
            "wrong",
        ),
        unfinished("validation::base_above_max"),
    ])
}

fn every_report() -> Vec<(&'static str, RunReport)> {
    vec![
        ("all passed", all_passed()),
        ("mixed", mixed()),
        ("compile error", compile_error()),
        ("hostile", hostile()),
        ("unicode", unicode()),
        ("empty output", empty_output()),
        ("no checks", report(Vec::new())),
    ]
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"))
}

fn obj<'a>(v: &'a Value, what: &str) -> &'a Map<String, Value> {
    v.as_object()
        .unwrap_or_else(|| panic!("{what} is not an object: {v}"))
}

/// The module of a check name, as the brief defines it: what comes before the last `::`.
fn module(name: &str) -> &str {
    match name.rfind("::") {
        Some(i) => &name[..i],
        None => "",
    }
}

// ======================================================================================
// Exercism (interface.md, results.json version 3)
// ======================================================================================

/// The report's checks, as Exercism must show them.
fn assert_exercism_matches(text: &str, report: &RunReport) {
    let problems = exercism_problems(text);
    assert!(problems.is_empty(), "{problems:#?}\n{text}");
    let doc = json(text);
    let top = obj(&doc, "results");
    if report.not_run.is_some() || report.checks.is_empty() {
        assert_eq!(top["status"], "error", "{text}");
        assert!(top
            .get("tests")
            .is_none_or(|t| t.as_array().is_some_and(Vec::is_empty)));
        if let Some(not_run) = &report.not_run {
            let m = top["message"].as_str().unwrap();
            let (headline, text) = m.split_once(".\n\n").unwrap_or((m, ""));
            assert_eq!(headline, not_run.headline(), "{m}");
            assert!(
                not_run.text().starts_with(text.trim_end()) || m.contains("truncated"),
                "{m}"
            );
        }
        return;
    }
    let want = if report.checks.iter().all(|c| c.status == Status::Passed) {
        "pass"
    } else {
        "fail"
    };
    assert_eq!(top["status"], want);
    let tests = top["tests"].as_array().unwrap();
    let names: Vec<&str> = tests.iter().map(|t| t["name"].as_str().unwrap()).collect();
    let expected: Vec<&str> = report.checks.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, expected, "tests must be in the checks' order");
    for (t, check) in tests.iter().zip(&report.checks) {
        let status = t["status"].as_str().unwrap();
        let message = t.get("message").and_then(Value::as_str);
        match check.status {
            Status::Passed => assert_eq!(status, "pass"),
            Status::Failed => assert_eq!(status, "fail"),
            Status::Unfinished => {
                assert_eq!(status, "fail");
                assert!(message.unwrap().starts_with("unfinished: "), "{message:?}");
            }
            Status::KitBug => assert_eq!(status, "error"),
        }
        let code = format!(
            "cargo run -p grader -- {} --exact {}",
            report.lesson, check.name
        );
        assert_eq!(t["test_code"], code.as_str());
        assert!(
            t.get("task_id").is_none(),
            "a lesson has no task headings for a task_id to name: {}",
            check.name
        );
        let output = t.get("output").and_then(Value::as_str);
        let n = check.output.chars().count();
        if n == 0 {
            assert!(
                output.is_none(),
                "empty output must be left out: {output:?}"
            );
        } else if n <= 500 {
            assert_eq!(
                output,
                Some(check.output.as_str()),
                "short output kept whole"
            );
        } else {
            let o = output.unwrap();
            assert_eq!(
                o.chars().count(),
                500,
                "a cut output uses its 500 characters"
            );
            assert!(o.contains(EXERCISM_OUTPUT_NOTICE), "no notice: {o}");
            let kept = o.split(" [Output was truncated").next().unwrap();
            assert!(check.output.starts_with(kept), "a cut keeps the beginning");
        }
        if let (Some(m), Some(original)) = (message, &check.message) {
            if check.status == Status::Failed && original.len() <= 65_535 {
                assert_eq!(m, original.trim_end(), "a failure's message is kept");
            }
        }
    }
}

#[test]
fn exercism_validator_rejects_what_the_rules_forbid() {
    let cases = [
        (
            r#"{"version": 2, "status": "pass", "tests": []}"#,
            "version",
        ),
        (
            r#"{"version": 3, "status": "passed", "tests": []}"#,
            "status",
        ),
        (r#"{"version": 3, "status": "error"}"#, "message"),
        (r#"{"version": 3, "status": "fail"}"#, "tests missing"),
        (
            r#"{"version": 3, "status": "pass", "tests": [{"name": "a", "status": "fail"}]}"#,
            "message",
        ),
        (
            r#"{"version": 3, "status": "pass", "tests": [{"name": "a", "status": "fail", "message": "m"}]}"#,
            "not every test",
        ),
        (
            r#"{"version": 3, "status": "fail", "tests": [{"name": "a", "status": "pass"}]}"#,
            "every test passed",
        ),
        (
            r#"{"version": 3, "status": "pass", "tests": [{"name": "a", "status": "pass", "task_id": "1"}]}"#,
            "task_id",
        ),
        (
            r#"{"version": 3, "status": "pass", "tests": [{"name": "a", "status": "pass", "extra": 1}]}"#,
            "unknown key",
        ),
    ];
    for (doc, problem) in cases {
        let problems = exercism_problems(doc);
        assert!(
            problems.iter().any(|p| p.contains(problem)),
            "{doc}: {problems:?}"
        );
    }
    let long_output = format!(
        r#"{{"version": 3, "status": "pass", "tests": [{{"name": "a", "status": "pass", "output": "{}"}}]}}"#,
        "é".repeat(501)
    );
    assert!(!exercism_problems(&long_output).is_empty());
    let long_message = format!(
        r#"{{"version": 3, "status": "error", "message": "{}"}}"#,
        "m".repeat(65_536)
    );
    assert!(!exercism_problems(&long_message).is_empty());
    assert!(exercism_problems(r#"{"version": 3, "status": "pass", "tests": []}"#).is_empty());
}

#[test]
fn exercism_every_report_follows_the_rules() {
    for (what, r) in every_report() {
        let text = ReportFormat::Exercism.render(&r);
        assert_eq!(
            text,
            ReportFormat::Exercism.render(&r),
            "{what}: not deterministic"
        );
        assert_exercism_matches(&text, &r);
    }
}

#[test]
fn exercism_all_passed_is_pass_with_no_task_ids() {
    let doc = json(&ReportFormat::Exercism.render(&all_passed()));
    assert_eq!(doc["status"], "pass");
    assert!(doc.get("message").is_none_or(Value::is_null));
    assert!(doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .all(|t| t.get("task_id").is_none()));
    assert!(doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .all(|t| t["message"].is_null()));
}

#[test]
fn exercism_mixed_run_fails_with_each_checks_status() {
    let doc = json(&ReportFormat::Exercism.render(&mixed()));
    assert_eq!(doc["status"], "fail");
    let tests = doc["tests"].as_array().unwrap();
    let statuses: Vec<&str> = tests
        .iter()
        .map(|t| t["status"].as_str().unwrap())
        .collect();
    assert_eq!(
        statuses,
        ["pass", "fail", "fail", "fail", "error", "fail", "fail", "fail", "fail", "pass"]
    );
    let unfinished = tests[3]["message"].as_str().unwrap();
    assert!(
        unfinished.starts_with("unfinished: not yet implemented"),
        "{unfinished}"
    );
    assert!(
        unfinished.contains("practice/src/lib.rs:12:5"),
        "{unfinished}"
    );
    assert!(tests[4]["message"]
        .as_str()
        .unwrap()
        .contains("the fake clock went backwards"));
    assert_eq!(tests[2]["output"], "about to index\n");
}

#[test]
fn exercism_compile_error_is_an_error_with_the_compiler_output() {
    let r = compile_error();
    let doc = json(&ReportFormat::Exercism.render(&r));
    assert_eq!(doc["status"], "error");
    assert_eq!(doc["version"], 3);
    assert_eq!(
        doc["message"].as_str().unwrap(),
        format!(
            "Your code did not compile, so no check ran.\n\n{}",
            not_run_text(&r).unwrap().trim_end()
        )
    );
    assert!(doc
        .get("tests")
        .is_none_or(|t| t.as_array().is_some_and(Vec::is_empty)));

    // A compiler output over the limit is cut to at most 65535 characters — and bytes, since
    // the platform may count either.
    let mut big = report(Vec::new());
    big.not_run = Some(NotRun::DoesNotCompile("é".repeat(70_000)));
    let text = ReportFormat::Exercism.render(&big);
    assert_exercism_matches(&text, &big);
    let message = json(&text)["message"].as_str().unwrap().to_string();
    assert!(message.len() <= 65_535, "{} bytes", message.len());
    assert!(message.starts_with("Your code did not compile, so no check ran.\n\néé"));
    assert!(message.contains("truncated"), "a cut says so");

    // The same compile error with checks in the report: still an error, no tests.
    let mut both = mixed();
    both.not_run = r.not_run.clone();
    assert_eq!(
        json(&ReportFormat::Exercism.render(&both))["status"],
        "error"
    );
}

#[test]
fn exercism_output_is_cut_to_500_characters_with_the_notice() {
    let doc = json(&ReportFormat::Exercism.render(&hostile()));
    let tests = doc["tests"].as_array().unwrap();
    assert_eq!(
        tests[3]["output"].as_str().unwrap(),
        "o".repeat(500),
        "500 fits"
    );
    let over = tests[4]["output"].as_str().unwrap();
    assert_eq!(over.chars().count(), 500);
    assert!(
        over.ends_with(" [Output was truncated. Please limit to 500 chars]"),
        "{over}"
    );
    assert!(over.starts_with("ppp"));
    // Multibyte output is counted in characters.
    let doc = json(&ReportFormat::Exercism.render(&unicode()));
    let crab = doc["tests"][0]["output"].as_str().unwrap();
    assert_eq!(crab.chars().count(), 500);
    assert!(crab.starts_with("🦀🦀") && crab.contains(EXERCISM_OUTPUT_NOTICE));
}

#[test]
fn exercism_stays_under_500_kb_when_every_message_is_huge() {
    let huge = "y".repeat(100_000);
    let checks = (0..40)
        .map(|i| {
            printed(
                failed(&format!("m{}::c{i}", i % 3), FailureKind::Panic, &huge),
                &"z".repeat(4096),
            )
        })
        .collect();
    let r = report(checks);
    let text = ReportFormat::Exercism.render(&r);
    assert!(text.len() <= 500_000, "{} bytes", text.len());
    assert_exercism_matches(&text, &r);
    let doc = json(&text);
    for t in doc["tests"].as_array().unwrap() {
        let m = t["message"].as_str().unwrap();
        assert!(
            m.starts_with("yyy") && m.contains("truncated"),
            "{}",
            &m[..50]
        );
    }
}

#[test]
fn exercism_hostile_text_survives_json() {
    let r = hostile();
    let text = ReportFormat::Exercism.render(&r);
    assert_exercism_matches(&text, &r);
    assert!(
        !text.chars().any(|c| c < ' ' && c != '\n'),
        "raw control characters in JSON text"
    );
    let doc = json(&text);
    let tests = doc["tests"].as_array().unwrap();
    assert_eq!(
        tests[0]["message"],
        HOSTILE.trim_end(),
        "JSON keeps text exactly"
    );
    assert_eq!(tests[2]["message"].as_str().unwrap(), lossy());
    assert!(lossy().contains('\u{fffd}'));
    let huge = tests[1]["message"].as_str().unwrap();
    assert!(huge.starts_with("panicked: x<&\"'"));
}

// ======================================================================================
// Gradescope (specs.md, results.json)
// ======================================================================================

fn assert_gradescope_matches(text: &str, report: &RunReport) {
    let problems = gradescope_problems(text);
    assert!(problems.is_empty(), "{problems:#?}\n{text}");
    let doc = json(text);
    assert_eq!(doc["output_format"], "text");
    assert_eq!(
        doc["stdout_visibility"], "hidden",
        "the autograder's log is for the staff"
    );
    let summary = doc["output"].as_str().unwrap();
    assert!(summary.contains(&report.guidance.sentence()), "{summary}");
    assert!(summary.contains("unfinished"), "{summary}");
    let tests = doc["tests"].as_array().unwrap();
    let score = doc["score"].as_f64().unwrap();
    if report.not_run.is_some() {
        assert_eq!(tests.len(), 1);
        let (name, said) = match &report.not_run {
            Some(NotRun::Refused(_)) => ("refused", "was refused"),
            _ => ("compile", "did not compile"),
        };
        assert_eq!(tests[0]["name"], name);
        assert_eq!(tests[0]["status"], "failed");
        assert_eq!(tests[0]["score"].as_f64(), Some(0.0));
        assert_eq!(
            tests[0]["max_score"].as_f64(),
            Some(report.points_possible),
            "worth the lesson's full points, as the gradebook says"
        );
        assert_eq!(score, 0.0);
        assert!(summary.contains(said), "{summary}");
        return;
    }
    let names: Vec<&str> = tests.iter().map(|t| t["name"].as_str().unwrap()).collect();
    let expected: Vec<&str> = report.checks.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, expected, "tests in the checks' order");
    let sum: f64 = tests.iter().map(|t| t["score"].as_f64().unwrap()).sum();
    assert!(
        (score - sum).abs() < 1e-9,
        "score {score} is not the tests' {sum}"
    );
    let mut modules: Vec<&str> = Vec::new();
    let mut within: BTreeMap<&str, usize> = BTreeMap::new();
    for (t, check) in tests.iter().zip(&report.checks) {
        let pass = check.status == Status::Passed;
        assert_eq!(
            t["status"],
            if pass { "passed" } else { "failed" },
            "{}",
            check.name
        );
        assert_eq!(t["max_score"].as_f64(), Some(check.weight));
        assert_eq!(
            t["score"].as_f64(),
            Some(if pass { check.weight } else { 0.0 })
        );
        assert_eq!(t["output_format"], "text");
        assert_eq!(t["visibility"], "visible");
        let m = module(&check.name);
        if !modules.contains(&m) {
            modules.push(m);
        }
        let n = within.entry(m).or_default();
        *n += 1;
        let number = format!(
            "{}.{}",
            modules.iter().position(|x| *x == m).unwrap() + 1,
            n
        );
        assert_eq!(t["number"], number.as_str(), "{}", check.name);
        let output = t["output"].as_str().unwrap();
        if let Some(message) = &check.message {
            let first = message.lines().next().unwrap_or("");
            assert!(
                output.contains(first) || output.contains("Truncated"),
                "{output}"
            );
        }
        let printed = check.output.trim_end();
        if !printed.is_empty() && printed.len() < 1000 {
            assert!(
                output.contains(printed),
                "the learner's output is shown: {output}"
            );
        }
        assert!(output.len() <= 64 * 1024, "{} bytes", output.len());
    }
}

#[test]
fn gradescope_validator_rejects_what_the_rules_forbid() {
    let cases = [
        (r#"{"tests": [{"name": "a"}]}"#, "no score"),
        (
            r#"{"score": 1, "tests": [{"score": 1, "max_score": 1, "status": "pass"}]}"#,
            "status",
        ),
        (
            r#"{"score": 3, "tests": [{"score": 1, "max_score": 1}]}"#,
            "outside",
        ),
        (
            r#"{"score": 1, "tests": [{"score": 2, "max_score": 1}]}"#,
            "outside",
        ),
        (
            r#"{"score": 0, "stdout_visibility": "public", "tests": []}"#,
            "stdout_visibility",
        ),
        (
            r#"{"score": 0, "output_format": "markdown", "tests": []}"#,
            "output_format",
        ),
        (
            r#"{"score": 0, "execution_time": "fast", "tests": []}"#,
            "execution_time",
        ),
        (
            r#"{"score": 0, "tests": [{"score": 0, "number": 1.1}]}"#,
            "number",
        ),
        (r#"{"score": 0, "tests": [], "grade": 1}"#, "unknown"),
    ];
    for (doc, problem) in cases {
        let problems = gradescope_problems(doc);
        assert!(
            problems.iter().any(|p| p.contains(problem)),
            "{doc}: {problems:?}"
        );
    }
    assert!(
        gradescope_problems(r#"{"score": 0, "execution_time": "0.12", "tests": []}"#).is_empty()
    );
}

#[test]
fn gradescope_every_report_follows_the_rules() {
    for (what, r) in every_report() {
        let text = ReportFormat::Gradescope.render(&r);
        assert_eq!(
            text,
            ReportFormat::Gradescope.render(&r),
            "{what}: not deterministic"
        );
        assert_gradescope_matches(&text, &r);
    }
}

#[test]
fn gradescope_scores_by_weight() {
    let doc = json(&ReportFormat::Gradescope.render(&all_passed()));
    assert_eq!(
        doc["score"].as_f64(),
        Some(9.0),
        "four 1-point checks and a 5-point one"
    );
    assert_eq!(doc["execution_time"].as_f64(), Some(12.5));
    let doc = json(&ReportFormat::Gradescope.render(&mixed()));
    assert_eq!(
        doc["score"].as_f64(),
        Some(6.0),
        "one 1-point pass and the 5-point one"
    );
    let numbers: Vec<&str> = doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["number"].as_str().unwrap())
        .collect();
    assert_eq!(
        numbers,
        ["1.1", "1.2", "2.1", "3.1", "3.2", "4.1", "4.2", "1.3", "5.1", "6.1"]
    );
    let summary = doc["output"].as_str().unwrap();
    assert!(
        summary.contains("10 checks: 2 passed, 6 failed, 1 unfinished, 1 kit bug"),
        "{summary}"
    );
    assert!(summary.contains("6 of 14 points"), "{summary}");
    let kit_bug = doc["tests"][4]["output"].as_str().unwrap();
    assert!(
        kit_bug.contains("KIT BUG") && kit_bug.contains("fake clock"),
        "{kit_bug}"
    );
    let unfinished = doc["tests"][3]["output"].as_str().unwrap();
    assert!(
        unfinished.contains("practice/src/lib.rs:12:5"),
        "{unfinished}"
    );
}

#[test]
fn gradescope_compile_error_scores_zero_and_never_above_max() {
    let r = compile_error();
    let text = ReportFormat::Gradescope.render(&r);
    assert_gradescope_matches(&text, &r);
    let doc = json(&text);
    let compile = &doc["tests"][0];
    assert!(compile["output"]
        .as_str()
        .unwrap()
        .contains("error[E0308]: mismatched types"));
    assert_eq!(
        compile["max_score"].as_f64(),
        Some(43.0),
        "no check ran: the lesson's full points, as the gradebook has them"
    );
    assert!(doc["output"]
        .as_str()
        .unwrap()
        .contains("the score is 0 of 43 points"));
    assert!(
        !text.contains(": -0"),
        "no negative zero in a score:\n{text}"
    );
    assert!(
        !ReportFormat::Json.render(&r).contains(": -0"),
        "nor in the kit's JSON"
    );

    // With the lesson's checks listed, the compile test stands for all their points.
    let mut listed = all_passed();
    listed.not_run = r.not_run.clone();
    let text = ReportFormat::Gradescope.render(&listed);
    assert_gradescope_matches(&text, &listed);
    let doc = json(&text);
    assert_eq!(doc["score"].as_f64(), Some(0.0));
    assert_eq!(doc["tests"][0]["max_score"].as_f64(), Some(9.0));
}

#[test]
fn a_refusal_is_its_own_test_in_every_format_never_a_compile_error() {
    let mut r = report(Vec::new());
    r.points_possible = 43.0;
    r.not_run = Some(NotRun::Refused(
        "refused: practice/src/lib.rs is a symbolic link; nothing was graded".into(),
    ));
    let text = ReportFormat::Gradescope.render(&r);
    assert_gradescope_matches(&text, &r);
    let doc = json(&text);
    assert_eq!(doc["tests"][0]["name"], "refused");
    assert_eq!(doc["tests"][0]["max_score"].as_f64(), Some(43.0));
    let output = doc["tests"][0]["output"].as_str().unwrap();
    assert!(output.starts_with("Your submission was refused, so no check ran."));
    assert!(output.contains("is a symbolic link"), "{output}");
    assert!(!text.contains("did not compile"), "{text}");

    let junit = ReportFormat::Junit.render(&r);
    assert_junit_matches(&junit, &r);
    let root = parse_xml(&junit).unwrap();
    let case = testcases(&root)[0];
    assert_eq!(case.attr("name"), Some("refused"));
    assert_eq!(case.child("error").unwrap().attr("type"), Some("refused"));
    assert!(!junit.contains("compile_error"), "{junit}");

    let exercism = json(&ReportFormat::Exercism.render(&r));
    assert_eq!(exercism["status"], "error");
    assert!(exercism["message"]
        .as_str()
        .unwrap()
        .starts_with("Your submission was refused"));

    let own = json(&ReportFormat::Json.render(&r));
    assert!(own["compile_error"].is_null());
    assert_eq!(own["refused"].as_str(), not_run_text(&r));
}

#[test]
fn gradescope_weights_that_are_not_numbers_do_not_break_the_file() {
    let r = report(vec![
        weighing(passed("a::nan"), f64::NAN),
        weighing(passed("a::inf"), f64::INFINITY),
        weighing(passed("a::negative"), -3.0),
        weighing(failed("a::fail", FailureKind::Mismatch, "no"), 2.0),
    ]);
    let text = ReportFormat::Gradescope.render(&r);
    assert!(
        gradescope_problems(&text).is_empty(),
        "{:?}",
        gradescope_problems(&text)
    );
    let doc = json(&text);
    assert_eq!(doc["score"].as_f64(), Some(0.0));
    let max: f64 = doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["max_score"].as_f64().unwrap())
        .sum();
    assert_eq!(max, 2.0);
}

#[test]
fn gradescope_hostile_text_is_kept_and_capped() {
    let r = hostile();
    let text = ReportFormat::Gradescope.render(&r);
    assert_gradescope_matches(&text, &r);
    let doc = json(&text);
    let first = doc["tests"][0]["output"].as_str().unwrap();
    assert!(
        first.contains("<script>alert('x' + \"y\")</script>"),
        "{first}"
    );
    let huge = doc["tests"][1]["output"].as_str().unwrap();
    assert!(
        huge.len() <= 64 * 1024 && huge.contains("Truncated"),
        "{}",
        huge.len()
    );
}

// ======================================================================================
// JUnit XML (XML 1.0; Jenkins' junit-10.xsd; quick-junit's conventions)
// ======================================================================================

#[derive(Debug)]
enum Node {
    Element(Element),
    Text(String),
}

#[derive(Debug)]
struct Element {
    name: String,
    attrs: Vec<(String, String)>,
    children: Vec<Node>,
}

impl Element {
    fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
    fn elements(&self) -> impl Iterator<Item = &Element> {
        self.children.iter().filter_map(|n| match n {
            Node::Element(e) => Some(e),
            Node::Text(_) => None,
        })
    }
    fn child(&self, name: &str) -> Option<&Element> {
        self.elements().find(|e| e.name == name)
    }
    fn text(&self) -> String {
        self.children
            .iter()
            .filter_map(|n| match n {
                Node::Text(t) => Some(t.as_str()),
                Node::Element(_) => None,
            })
            .collect()
    }
}

/// XML 1.0 §2.2 `Char`.
fn is_xml_char(c: char) -> bool {
    let c = c as u32;
    c == 0x9
        || c == 0xA
        || c == 0xD
        || (0x20..=0xD7FF).contains(&c)
        || (0xE000..=0xFFFD).contains(&c)
        || (0x10000..=0x10FFFF).contains(&c)
}

/// Resolves the references in `raw` (text or an attribute value): only the five predefined
/// entities and character references to allowed characters.
fn unescape(raw: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = raw;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        let end = rest[i..]
            .find(';')
            .ok_or_else(|| format!("raw & in {raw:.60?}"))?
            + i;
        let name = &rest[i + 1..end];
        let c = match name {
            "amp" => '&',
            "lt" => '<',
            "gt" => '>',
            "quot" => '"',
            "apos" => '\'',
            _ => {
                let code = if let Some(hex) = name.strip_prefix("#x") {
                    u32::from_str_radix(hex, 16)
                } else if let Some(dec) = name.strip_prefix('#') {
                    dec.parse()
                } else {
                    return Err(format!("unknown entity &{name}; (or a raw &)"));
                }
                .map_err(|_| format!("bad character reference &{name};"))?;
                char::from_u32(code)
                    .filter(|c| is_xml_char(*c))
                    .ok_or_else(|| format!("reference to a forbidden character &{name};"))?
            }
        };
        out.push(c);
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || "_-.:".contains(c))
}

/// A small well-formedness check: the prolog, allowed characters only, balanced tags,
/// quoted attributes without duplicates, no raw `<` or `&` in text or attributes, no `]]>`
/// in text, no CDATA, comments or processing instructions, one root element. Returns the
/// root with references resolved.
fn parse_xml(doc: &str) -> Result<Element, String> {
    let body = doc
        .strip_prefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>")
        .ok_or("missing or wrong XML declaration")?;
    if let Some((i, c)) = doc.char_indices().find(|(_, c)| !is_xml_char(*c)) {
        return Err(format!(
            "character U+{:04X} at byte {i} is not allowed in XML 1.0",
            c as u32
        ));
    }
    let mut stack: Vec<Element> = Vec::new();
    let mut root: Option<Element> = None;
    let mut rest = body;
    while !rest.is_empty() {
        if rest.starts_with("<![CDATA[") {
            return Err("CDATA section".into());
        }
        if rest.starts_with("<!") || rest.starts_with("<?") {
            return Err(format!("unexpected markup {rest:.20?}"));
        }
        if let Some(after) = rest.strip_prefix("</") {
            let end = after.find('>').ok_or("unclosed end tag")?;
            let name = after[..end].trim_end();
            let open = stack
                .pop()
                .ok_or_else(|| format!("</{name}> closes nothing"))?;
            if open.name != name {
                return Err(format!("</{name}> closes <{}>", open.name));
            }
            rest = &after[end + 1..];
            match stack.last_mut() {
                Some(parent) => parent.children.push(Node::Element(open)),
                None if root.is_none() => root = Some(open),
                None => return Err("a second root element".into()),
            }
            continue;
        }
        if let Some(after) = rest.strip_prefix('<') {
            let name_end = after
                .find(|c: char| c.is_whitespace() || c == '>' || c == '/')
                .ok_or("unclosed start tag")?;
            let name = &after[..name_end];
            if !is_name(name) {
                return Err(format!("bad element name {name:?}"));
            }
            let mut element = Element {
                name: name.to_string(),
                attrs: Vec::new(),
                children: Vec::new(),
            };
            let mut tag = &after[name_end..];
            let self_closing;
            loop {
                let trimmed = tag.trim_start();
                if let Some(t) = trimmed.strip_prefix("/>") {
                    self_closing = true;
                    tag = t;
                    break;
                }
                if let Some(t) = trimmed.strip_prefix('>') {
                    self_closing = false;
                    tag = t;
                    break;
                }
                if trimmed.len() == tag.len() {
                    return Err(format!("no space before an attribute in <{name}>"));
                }
                let eq = trimmed
                    .find('=')
                    .ok_or_else(|| format!("attribute without = in <{name}>"))?;
                let attr = &trimmed[..eq];
                if !is_name(attr) {
                    return Err(format!("bad attribute name {attr:?} in <{name}>"));
                }
                let value_start = trimmed[eq + 1..]
                    .strip_prefix('"')
                    .ok_or_else(|| format!("{attr} in <{name}> is not in double quotes"))?;
                let close = value_start
                    .find('"')
                    .ok_or("unterminated attribute value")?;
                let raw = &value_start[..close];
                if raw.contains('<') {
                    return Err(format!("raw < in attribute {attr}"));
                }
                if raw.contains(['\n', '\r', '\t']) {
                    return Err(format!(
                        "raw newline or tab in attribute {attr} (normalized away)"
                    ));
                }
                if element.attr(attr).is_some() {
                    return Err(format!("duplicate attribute {attr} in <{name}>"));
                }
                element.attrs.push((attr.to_string(), unescape(raw)?));
                tag = &value_start[close + 1..];
            }
            rest = tag;
            if self_closing {
                match stack.last_mut() {
                    Some(parent) => parent.children.push(Node::Element(element)),
                    None if root.is_none() => root = Some(element),
                    None => return Err("a second root element".into()),
                }
            } else {
                if stack.is_empty() && root.is_some() {
                    return Err("a second root element".into());
                }
                stack.push(element);
            }
            continue;
        }
        let end = rest.find('<').unwrap_or(rest.len());
        let raw = &rest[..end];
        if raw.contains("]]>") {
            return Err("]]> in text".into());
        }
        let text = unescape(raw)?;
        match stack.last_mut() {
            Some(parent) => parent.children.push(Node::Text(text)),
            None if text.trim().is_empty() => {}
            None => return Err(format!("text outside the root: {text:.40?}")),
        }
        rest = &rest[end..];
    }
    if let Some(open) = stack.last() {
        return Err(format!("<{}> is never closed", open.name));
    }
    root.ok_or_else(|| "no root element".into())
}

fn count(s: Option<&str>) -> Option<usize> {
    s.and_then(|s| s.parse().ok())
}

/// SUREFIRE_TIME in junit-10.xsd: digits (with `,` thousands), optional `.` fraction.
fn is_time(s: &str) -> bool {
    let (whole, frac) = s.split_once('.').unwrap_or((s, "0"));
    !whole.is_empty()
        && whole.chars().all(|c| c.is_ascii_digit() || c == ',')
        && whole.starts_with(|c: char| c.is_ascii_digit())
        && !frac.is_empty()
        && frac.chars().all(|c| c.is_ascii_digit())
}

/// The JUnit rules: element and attribute names, required attributes, counts that add
/// up, at most one status element per testcase, and every text at most 64 KiB.
fn junit_problems(doc: &str) -> Vec<String> {
    let root = match parse_xml(doc) {
        Ok(root) => root,
        Err(e) => return vec![format!("not well-formed XML: {e}")],
    };
    let mut problems = Vec::new();
    let mut bad = |p: String| problems.push(p);
    fn only(e: &Element, allowed: &[&str], bad: &mut dyn FnMut(String)) {
        for (a, _) in &e.attrs {
            if !allowed.contains(&a.as_str()) {
                bad(format!("<{}> has unknown attribute {a}", e.name));
            }
        }
    }
    fn text_ok(e: &Element, bad: &mut dyn FnMut(String)) {
        let t = e.text();
        if t.len() > 64 * 1024 {
            bad(format!(
                "<{}> text is {} bytes, over 64 KiB",
                e.name,
                t.len()
            ));
        }
    }
    if root.name != "testsuites" {
        return vec![format!("root is <{}>", root.name)];
    }
    only(
        &root,
        &[
            "name", "time", "tests", "failures", "errors", "disabled", "skipped",
        ],
        &mut bad,
    );
    let (mut all_tests, mut all_failures, mut all_errors) = (0, 0, 0);
    for suite in root.elements() {
        if suite.name != "testsuite" {
            bad(format!("<testsuites> holds <{}>", suite.name));
            continue;
        }
        only(
            suite,
            &[
                "name",
                "tests",
                "failures",
                "errors",
                "skipped",
                "time",
                "timestamp",
                "hostname",
                "id",
                "package",
                "group",
                "file",
                "log",
                "url",
                "disabled",
            ],
            &mut bad,
        );
        for required in ["name", "tests", "failures", "errors"] {
            if suite.attr(required).is_none() {
                bad(format!("<testsuite> without {required}"));
            }
        }
        if let Some(t) = suite.attr("time") {
            if !is_time(t) {
                bad(format!("testsuite time {t:?}"));
            }
        }
        if let Some(ts) = suite.attr("timestamp") {
            let b = ts.as_bytes();
            if ts.len() < 19 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' {
                bad(format!("timestamp {ts:?} is not ISO 8601"));
            }
        }
        let (mut tests, mut failures, mut errors, mut skipped) = (0, 0, 0, 0);
        for child in suite.elements() {
            match child.name.as_str() {
                "properties" => {
                    for p in child.elements() {
                        if p.name != "property"
                            || p.attr("name").is_none()
                            || p.attr("value").is_none()
                        {
                            bad(format!("bad <{}> in <properties>", p.name));
                        }
                    }
                }
                "system-out" | "system-err" => text_ok(child, &mut bad),
                "testcase" => {
                    tests += 1;
                    only(
                        child,
                        &["name", "classname", "time", "group", "assertions", "status"],
                        &mut bad,
                    );
                    if child.attr("name").is_none_or(str::is_empty) {
                        bad("<testcase> without a name".into());
                    }
                    if let Some(t) = child.attr("time") {
                        if !is_time(t) {
                            bad(format!("testcase time {t:?}"));
                        }
                    }
                    let mut statuses = 0;
                    for e in child.elements() {
                        match e.name.as_str() {
                            "failure" | "error" | "skipped" => {
                                statuses += 1;
                                only(e, &["message", "type"], &mut bad);
                                text_ok(e, &mut bad);
                                match e.name.as_str() {
                                    "failure" => failures += 1,
                                    "error" => errors += 1,
                                    _ => skipped += 1,
                                }
                            }
                            "system-out" | "system-err" => text_ok(e, &mut bad),
                            other => bad(format!("<testcase> holds <{other}>")),
                        }
                    }
                    if statuses > 1 {
                        bad(format!(
                            "testcase {:?} has {statuses} status elements",
                            child.attr("name")
                        ));
                    }
                }
                other => bad(format!("<testsuite> holds <{other}>")),
            }
        }
        if count(suite.attr("tests")) != Some(tests) {
            bad(format!(
                "testsuite tests={:?}, but {tests} testcases",
                suite.attr("tests")
            ));
        }
        if count(suite.attr("failures")) != Some(failures) {
            bad(format!(
                "testsuite failures={:?}, counted {failures}",
                suite.attr("failures")
            ));
        }
        if count(suite.attr("errors")) != Some(errors) {
            bad(format!(
                "testsuite errors={:?}, counted {errors}",
                suite.attr("errors")
            ));
        }
        if let Some(s) = suite.attr("skipped") {
            if count(Some(s)) != Some(skipped) {
                bad(format!("testsuite skipped={s}, counted {skipped}"));
            }
        }
        all_tests += tests;
        all_failures += failures;
        all_errors += errors;
    }
    for (attr, n) in [
        ("tests", all_tests),
        ("failures", all_failures),
        ("errors", all_errors),
    ] {
        if let Some(v) = root.attr(attr) {
            if count(Some(v)) != Some(n) {
                bad(format!("testsuites {attr}={v}, counted {n}"));
            }
        }
    }
    problems
}

fn testcases(root: &Element) -> Vec<&Element> {
    root.elements()
        .flat_map(|s| s.elements().filter(|e| e.name == "testcase"))
        .collect()
}

fn assert_junit_matches(doc: &str, report: &RunReport) {
    let problems = junit_problems(doc);
    assert!(problems.is_empty(), "{problems:#?}\n{doc:.3000}");
    let root = parse_xml(doc).unwrap();
    assert_eq!(root.attr("name"), Some("retry-kit"));
    let suites: Vec<&Element> = root.elements().collect();
    assert_eq!(suites.len(), 1, "one testsuite per run");
    assert_eq!(suites[0].attr("name"), Some(report.lesson.as_str()));
    assert_eq!(suites[0].attr("skipped"), Some("0"));
    let cases = testcases(&root);
    if report.not_run.is_some() {
        assert_eq!(cases.len(), 1);
        let name = match &report.not_run {
            Some(NotRun::Refused(_)) => "refused",
            _ => "compile",
        };
        assert_eq!(cases[0].attr("name"), Some(name));
        assert!(
            cases[0].child("error").is_some(),
            "no check ran: an <error>"
        );
        return;
    }
    let names: Vec<&str> = cases.iter().map(|c| c.attr("name").unwrap()).collect();
    let expected: Vec<&str> = report.checks.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, expected, "testcases in the checks' order");
    for (case, check) in cases.iter().zip(&report.checks) {
        let m = module(&check.name);
        let classname = if m.is_empty() {
            report.lesson.clone()
        } else {
            format!("{}.{}", report.lesson, m)
        };
        assert_eq!(case.attr("classname"), Some(classname.as_str()));
        let failure = case.child("failure");
        let error = case.child("error");
        match check.status {
            Status::Passed => assert!(failure.is_none() && error.is_none(), "{}", check.name),
            Status::Failed => {
                let f = failure.unwrap_or_else(|| panic!("{} has no <failure>", check.name));
                let want = match check.kind.unwrap() {
                    FailureKind::Mismatch => "mismatch",
                    FailureKind::Panic => "panic",
                    FailureKind::Crash => "crash",
                    FailureKind::Timeout => "timeout",
                    FailureKind::Limit => "limit",
                    FailureKind::Leak => "leak",
                };
                assert_eq!(f.attr("type"), Some(want));
                let message = check.message.as_deref().unwrap();
                if message.chars().all(is_xml_char) && message.len() < 1000 {
                    assert_eq!(f.attr("message"), message.lines().next());
                    assert_eq!(
                        f.text(),
                        message.trim_end(),
                        "the whole message is the text"
                    );
                }
            }
            Status::Unfinished => {
                let f =
                    failure.unwrap_or_else(|| panic!("unfinished {} is no <failure>", check.name));
                assert_eq!(f.attr("type"), Some("unfinished"));
                assert!(f.attr("message").unwrap().starts_with("unfinished"));
                if let Some(at) = &check.location {
                    assert!(f.text().contains(at.as_str()), "{}", f.text());
                }
            }
            Status::KitBug => {
                assert!(failure.is_none(), "a kit bug is not the learner's failure");
                assert!(error.is_some(), "{} has no <error>", check.name);
            }
        }
        let out = case.child("system-out");
        if check.output.is_empty() {
            assert!(out.is_none(), "no <system-out> for empty output");
        } else if check.output.chars().all(is_xml_char) && check.output.len() < 64 * 1024 {
            assert_eq!(out.unwrap().text(), check.output, "output kept exactly");
        } else {
            assert!(out.is_some(), "output dropped");
        }
    }
}

#[test]
fn xml_check_rejects_malformed_documents() {
    let head = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    let cases = [
        "<testsuites>",
        "<testsuites></testsuite>",
        "<testsuites>a < b</testsuites>",
        "<testsuites>a & b</testsuites>",
        "<testsuites>a &nbsp; b</testsuites>",
        "<testsuites>]]></testsuites>",
        "<testsuites><![CDATA[x]]></testsuites>",
        "<testsuites name=x/>",
        "<testsuites name=\"a\nb\"/>",
        "<testsuites name=\"a\" name=\"b\"/>",
        "<testsuites>\u{1}</testsuites>",
        "<testsuites>\u{fffe}</testsuites>",
        "<testsuites>&#0;</testsuites>",
        "<a/><b/>",
    ];
    for body in cases {
        assert!(
            parse_xml(&format!("{head}{body}")).is_err(),
            "accepted {body:?}"
        );
    }
    assert!(parse_xml("<a/>").is_err(), "no declaration");
    let ok = parse_xml(&format!(
        "{head}<a x=\"1 &amp; &#10;\">t &lt;&#x41;<b/></a>\n"
    ))
    .unwrap();
    assert_eq!(ok.attr("x"), Some("1 & \n"));
    assert_eq!(ok.text(), "t <A");

    let counts = format!(
        "{head}<testsuites><testsuite name=\"g\" tests=\"2\" failures=\"0\" errors=\"0\">\
         <testcase name=\"a\"><failure/></testcase></testsuite></testsuites>"
    );
    let problems = junit_problems(&counts);
    assert!(
        problems.iter().any(|p| p.contains("tests=")),
        "{problems:?}"
    );
    assert!(
        problems.iter().any(|p| p.contains("failures=")),
        "{problems:?}"
    );
    let missing = format!("{head}<testsuites><testsuite name=\"g\"/></testsuites>");
    assert!(junit_problems(&missing)
        .iter()
        .any(|p| p.contains("without tests")));
}

#[test]
fn junit_every_report_follows_the_rules() {
    for (what, r) in every_report() {
        let doc = ReportFormat::Junit.render(&r);
        assert_eq!(
            doc,
            ReportFormat::Junit.render(&r),
            "{what}: not deterministic"
        );
        assert_junit_matches(&doc, &r);
    }
}

#[test]
fn junit_counts_unfinished_as_failures_and_kit_bugs_as_errors() {
    let root = parse_xml(&ReportFormat::Junit.render(&mixed())).unwrap();
    assert_eq!(root.attr("tests"), Some("10"));
    assert_eq!(root.attr("failures"), Some("7"), "6 failed + 1 unfinished");
    assert_eq!(root.attr("errors"), Some("1"));
    assert_eq!(root.attr("time"), Some("12.500"));
    let suite = root.child("testsuite").unwrap();
    assert_eq!(suite.attr("timestamp"), Some("2026-08-20T10:00:00Z"));
    let props: Vec<(&str, &str)> = suite
        .child("properties")
        .unwrap()
        .elements()
        .map(|p| (p.attr("name").unwrap(), p.attr("value").unwrap()))
        .collect();
    assert!(props.contains(&("against", "practice")), "{props:?}");
    assert!(
        props.contains(&("guidance", mixed().guidance.sentence().as_str())),
        "{props:?}"
    );
    let cases = testcases(&root);
    let kit_bug = cases[4].child("error").unwrap();
    assert_eq!(kit_bug.attr("type"), Some("kit_bug"));
    assert!(kit_bug.text().contains("fake clock"));
    let mismatch = cases[1].child("failure").unwrap();
    assert_eq!(mismatch.attr("message"), Some("expected 3 attempts, saw 4"));
    assert_eq!(cases[0].attr("time"), Some("0.250"));
}

#[test]
fn junit_compile_error_is_one_errored_testcase() {
    let r = compile_error();
    let doc = ReportFormat::Junit.render(&r);
    assert_junit_matches(&doc, &r);
    let root = parse_xml(&doc).unwrap();
    assert_eq!(root.attr("tests"), Some("1"));
    assert_eq!(root.attr("errors"), Some("1"));
    assert_eq!(root.attr("failures"), Some("0"));
    let error = testcases(&root)[0].child("error").unwrap();
    assert_eq!(
        error.text(),
        not_run_text(&r).unwrap().trim_end(),
        "quotes and < survive"
    );
}

#[test]
fn junit_hostile_text_is_escaped_not_lost() {
    let r = hostile();
    let doc = ReportFormat::Junit.render(&r);
    assert_junit_matches(&doc, &r);
    assert!(
        !doc.contains("<script>"),
        "markup in learner text must be escaped"
    );
    assert!(
        !doc.contains("<![CDATA["),
        "no CDATA section, and the text's is escaped"
    );
    let root = parse_xml(&doc).unwrap();
    let cases = testcases(&root);

    let failure = cases[0].child("failure").unwrap();
    let text = failure.text();
    assert!(
        text.contains("<script>alert('x' + \"y\")</script>"),
        "{text}"
    );
    assert!(text.contains("]]> <![CDATA[x]]>"), "{text}");
    assert!(
        text.contains("amp:&amp; &lt; & "),
        "entities in learner text are text: {text}"
    );
    assert!(
        text.contains("ansi:red "),
        "ANSI sequences are removed: {text}"
    );
    assert!(
        text.contains("a\r\nb\rc"),
        "CR survives the parser's line-end handling"
    );
    assert!(text.contains("tab:\tend"));
    assert!(!text.contains('\u{fffe}') && !text.contains('\u{1}'));
    let message = failure.attr("message").unwrap();
    assert!(!message.contains('\n'), "{message:?}");
    assert!(message.starts_with("ctl:"));
    let out = cases[0].child("system-out").unwrap().text();
    assert!(
        out.contains("<script>") && out.contains("tab:\tend"),
        "{out}"
    );

    let huge = cases[1].child("failure").unwrap();
    assert!(huge.text().len() <= 64 * 1024);
    assert!(huge.text().starts_with("panicked: x<&\"'x<&\"'"));
    assert!(huge.text().contains("Truncated"), "a cut says so");
    assert!(huge.attr("message").unwrap().len() <= 1024 + 20);

    let lossy_text = cases[2].child("failure").unwrap().text();
    assert_eq!(lossy_text, lossy(), "U+FFFD is a valid XML character");
    let props = root
        .child("testsuite")
        .unwrap()
        .child("properties")
        .unwrap();
    let value = |name: &str| {
        props
            .elements()
            .find(|p| p.attr("name") == Some(name))
            .and_then(|p| p.attr("value"))
            .map(str::to_string)
    };
    assert_eq!(
        value("title").as_deref(),
        Some("title \"quoted\"\nline 2\t<b>&amp;</b> "),
        "newlines and tabs survive attribute normalization; U+0001 is removed"
    );
    assert_eq!(value("against").as_deref(), Some("sub'mission\r\n\"two\""));
    assert_eq!(
        value("learner_file").as_deref(),
        Some("practice/<src>/lib.rs")
    );

    let unfinished = cases[5].child("system-out").unwrap().text();
    assert_eq!(unfinished, "]]>".repeat(2000));
    assert!(cases[6].child("error").unwrap().text().contains("<script>"));
}

#[test]
fn junit_unicode_is_kept() {
    let r = unicode();
    let doc = ReportFormat::Junit.render(&r);
    assert_junit_matches(&doc, &r);
    let root = parse_xml(&doc).unwrap();
    let failure = testcases(&root)[0].child("failure").unwrap().text();
    assert!(
        failure.contains("日本語 👩‍🔬 e\u{301} שלום \u{fffd}"),
        "{failure}"
    );
    let props = root
        .child("testsuite")
        .unwrap()
        .child("properties")
        .unwrap();
    assert!(props
        .elements()
        .any(|p| p.attr("value") == Some("Réessayer — 再試行")));
}

// ======================================================================================
// The kit's own JSON (schema retry-kit/report, version 1; docs/report-formats.md)
// ======================================================================================

fn keys(v: &Map<String, Value>) -> Vec<&str> {
    v.keys().map(String::as_str).collect::<Vec<_>>()
}

fn sorted(mut v: Vec<&'static str>) -> Vec<&'static str> {
    v.sort_unstable();
    v
}

fn is_string_or_null(v: &Value) -> bool {
    v.is_string() || v.is_null()
}

/// The schema as `docs/report-formats.md` documents it.
fn kit_json_problems(text: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let mut bad = |p: String| problems.push(p);
    let Ok(doc) = serde_json::from_str::<Value>(text) else {
        return vec!["not JSON".into()];
    };
    let Some(top) = doc.as_object() else {
        return vec!["not an object".into()];
    };
    let mut top_keys = keys(top);
    top_keys.sort_unstable();
    let want = sorted(vec![
        "schema",
        "version",
        "kit_version",
        "group",
        "title",
        "against",
        "learner_file",
        "learner_file_hash",
        "compile_error",
        "refused",
        "summary",
        "guidance",
        "checks",
        "started",
        "duration_secs",
    ]);
    if top_keys != want {
        bad(format!("top-level keys {top_keys:?}"));
    }
    if top.get("schema") != Some(&Value::from("retry-kit/report")) {
        bad("schema".into());
    }
    if top.get("version") != Some(&Value::from(1)) {
        bad("version".into());
    }
    for key in ["kit_version", "group", "title", "against", "started"] {
        if !top.get(key).is_some_and(Value::is_string) {
            bad(format!("{key} is not a string"));
        }
    }
    for key in [
        "learner_file",
        "learner_file_hash",
        "compile_error",
        "refused",
    ] {
        if !top.get(key).is_some_and(is_string_or_null) {
            bad(format!("{key} is not a string or null"));
        }
    }
    let nonneg = |v: Option<&Value>| v.and_then(Value::as_f64).is_some_and(|x| x >= 0.0);
    if !nonneg(top.get("duration_secs")) {
        bad("duration_secs".into());
    }
    let checks = top
        .get("checks")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut tally: BTreeMap<&str, u64> = BTreeMap::new();
    let (mut score, mut max) = (0.0, 0.0);
    for (i, c) in checks.iter().enumerate() {
        let Some(c) = c.as_object() else {
            bad(format!("check {i} is not an object"));
            continue;
        };
        let mut k = keys(c);
        k.sort_unstable();
        let want = sorted(vec![
            "name",
            "status",
            "kind",
            "message",
            "location",
            "output",
            "duration_secs",
            "weight",
        ]);
        if k != want {
            bad(format!("check {i} keys {k:?}"));
        }
        let status = c.get("status").and_then(Value::as_str).unwrap_or("");
        if !["passed", "failed", "unfinished", "kit_bug"].contains(&status) {
            bad(format!("check {i}: status {status:?}"));
        }
        *tally
            .entry(match status {
                "passed" => "passed",
                "failed" => "failed",
                "unfinished" => "unfinished",
                _ => "kit_bugs",
            })
            .or_default() += 1;
        match c.get("kind") {
            Some(Value::Null) => {}
            Some(Value::String(k))
                if ["mismatch", "panic", "crash", "timeout", "limit", "leak"]
                    .contains(&k.as_str()) =>
            {
                if status != "failed" {
                    bad(format!("check {i}: a kind on a {status} check"));
                }
            }
            other => bad(format!("check {i}: kind {other:?}")),
        }
        if !c.get("name").is_some_and(Value::is_string)
            || !c.get("output").is_some_and(Value::is_string)
        {
            bad(format!("check {i}: name or output is not a string"));
        }
        for key in ["message", "location"] {
            if !c.get(key).is_some_and(is_string_or_null) {
                bad(format!("check {i}: {key}"));
            }
        }
        if !nonneg(c.get("duration_secs")) || !nonneg(c.get("weight")) {
            bad(format!("check {i}: duration_secs or weight"));
        }
        let w = c.get("weight").and_then(Value::as_f64).unwrap_or(0.0);
        max += w;
        if status == "passed" {
            score += w;
        }
    }
    match top.get("summary").and_then(Value::as_object) {
        Some(s) => {
            let mut k = keys(s);
            k.sort_unstable();
            let want = sorted(vec![
                "total",
                "passed",
                "failed",
                "unfinished",
                "kit_bugs",
                "score",
                "max_score",
            ]);
            if k != want {
                bad(format!("summary keys {k:?}"));
            }
            if s.get("total").and_then(Value::as_u64) != Some(checks.len() as u64) {
                bad("summary.total".into());
            }
            for key in ["passed", "failed", "unfinished", "kit_bugs"] {
                let n = tally.get(key).copied().unwrap_or(0);
                if s.get(key).and_then(Value::as_u64) != Some(n) {
                    bad(format!("summary.{key} is not {n}"));
                }
            }
            let near = |v: Option<&Value>, x: f64| {
                v.and_then(Value::as_f64)
                    .is_some_and(|y| (y - x).abs() < 1e-9)
            };
            let not_run = ["compile_error", "refused"]
                .iter()
                .any(|k| top.get(*k).is_some_and(Value::is_string));
            if not_run {
                // No check ran: 0 of the lesson's points, whatever the checks list holds.
                if !near(s.get("score"), 0.0)
                    || !s.get("max_score").is_some_and(|m| nonneg(Some(m)))
                {
                    bad(
                        "no check ran, yet the summary's score is not 0 of the lesson's points"
                            .into(),
                    );
                }
            } else if !near(s.get("score"), score) || !near(s.get("max_score"), max) {
                bad(format!("summary score/max_score are not {score}/{max}"));
            }
        }
        None => bad("summary missing".into()),
    }
    match top.get("guidance").and_then(Value::as_object) {
        Some(g) => {
            let mut k = keys(g);
            k.sort_unstable();
            if k != sorted(vec!["known", "total", "by_kind", "unverified", "sentence"]) {
                bad(format!("guidance keys {k:?}"));
            }
            let by_kind_total: u64 = g
                .get("by_kind")
                .and_then(Value::as_object)
                .map(|m| m.values().filter_map(Value::as_u64).sum())
                .unwrap_or(u64::MAX);
            if !g.get("known").is_some_and(Value::is_boolean)
                || g.get("total").and_then(Value::as_u64) != Some(by_kind_total)
                || !g.get("sentence").is_some_and(Value::is_string)
            {
                bad("guidance fields".into());
            }
        }
        None => bad("guidance missing".into()),
    }
    problems
}

#[test]
fn kit_json_validator_rejects_what_the_schema_forbids() {
    let good = ReportFormat::Json.render(&mixed());
    assert!(
        kit_json_problems(&good).is_empty(),
        "{:?}",
        kit_json_problems(&good)
    );
    let broken = [
        good.replace("\"kit_bug\"", "\"kitbug\""),
        good.replace("\"panic\"", "\"panicked\""),
        good.replace("\"version\": 1", "\"version\": 2"),
        good.replace("\"kit_bugs\": 1", "\"kit_bugs\": 0"),
        good.replace("\"learner_file\"", "\"learnerFile\""),
        good.replacen("\"weight\": 1.0", "\"weight\": -1.0", 1),
    ];
    for doc in &broken {
        assert_ne!(doc, &good, "the replacement must change something");
        assert!(!kit_json_problems(doc).is_empty(), "accepted:\n{doc}");
    }
}

#[test]
fn kit_json_every_report_follows_the_schema() {
    for (what, r) in every_report() {
        let text = ReportFormat::Json.render(&r);
        assert_eq!(
            text,
            ReportFormat::Json.render(&r),
            "{what}: not deterministic"
        );
        let problems = kit_json_problems(&text);
        assert!(problems.is_empty(), "{what}: {problems:#?}\n{text:.2000}");
        let doc = json(&text);
        let names: Vec<&str> = doc["checks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        let expected: Vec<&str> = r.checks.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, expected, "{what}: checks in order");
        assert_eq!(doc["compile_error"].as_str(), not_run_text(&r));
    }
}

#[test]
fn kit_json_keeps_every_field_exactly() {
    let r = hostile();
    let doc = json(&ReportFormat::Json.render(&r));
    for (c, check) in doc["checks"].as_array().unwrap().iter().zip(&r.checks) {
        assert_eq!(
            c["message"].as_str(),
            check.message.as_deref(),
            "messages are not cut"
        );
        assert_eq!(c["output"].as_str(), Some(check.output.as_str()));
        assert_eq!(c["location"].as_str(), check.location.as_deref());
    }
    let r = mixed();
    let doc = json(&ReportFormat::Json.render(&r));
    assert_eq!(doc["summary"]["score"].as_f64(), Some(6.0));
    assert_eq!(doc["summary"]["max_score"].as_f64(), Some(14.0));
    assert_eq!(doc["guidance"]["by_kind"]["help"], 2);
    assert_eq!(doc["guidance"]["total"], 3);
    assert_eq!(
        doc["guidance"]["sentence"].as_str(),
        Some(r.guidance.sentence().as_str())
    );
    assert_eq!(
        doc["learner_file_hash"].as_str(),
        r.learner_file_hash.as_deref()
    );
    let kinds: Vec<Value> = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["kind"].clone())
        .collect();
    assert_eq!(
        kinds,
        [
            Value::Null,
            "mismatch".into(),
            "panic".into(),
            Value::Null,
            Value::Null,
            "crash".into(),
            "timeout".into(),
            "limit".into(),
            "leak".into(),
            Value::Null
        ]
    );
    let mut unknown = report(Vec::new());
    unknown.guidance = Guidance::default();
    unknown.learner_file = None;
    unknown.learner_file_hash = None;
    let doc = json(&ReportFormat::Json.render(&unknown));
    assert_eq!(doc["guidance"]["known"], false);
    assert!(doc["learner_file"].is_null() && doc["compile_error"].is_null());
}

// ======================================================================================
// Weights (exercises/LESSON/grading.toml)
// ======================================================================================

fn kit_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn write_weights(text: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("grading.toml"), text).unwrap();
    dir
}

#[test]
fn weights_without_a_file_are_one() {
    let dir = tempfile::tempdir().unwrap();
    let w = weights::load(dir.path()).unwrap();
    assert_eq!(w, Weights::default());
    assert_eq!(w.of("anything::at_all"), 1.0);
}

#[test]
fn weights_of_the_kit_exercises() {
    for lesson in grader::lessons::LESSONS {
        let w = weights::load(&kit_root().join("exercises").join(lesson.name))
            .unwrap_or_else(|e| panic!("{}: {e}", lesson.name));
        for (name, _) in w.named() {
            assert!(
                lesson.check(name).is_some(),
                "{}: no check {name}",
                lesson.name
            );
        }
        for check in lesson.checks {
            let want = if check.name == "exhaustive::matches_reference_on_every_case" {
                5.0
            } else {
                1.0
            };
            assert_eq!(w.of(check.name), want, "{} {}", lesson.name, check.name);
        }
        assert!(
            kit_root()
                .join("exercises")
                .join(lesson.name)
                .join("grading.toml")
                .is_file(),
            "{} has no grading.toml",
            lesson.name
        );
    }
    let build3 = weights::load(&kit_root().join("exercises/build3")).unwrap();
    assert_eq!(
        build3.of("exhaustive::matches_reference_on_every_case"),
        5.0
    );
}

#[test]
fn weights_read_default_and_table() {
    let dir = write_weights("default = 2\n[weights]\n\"a::b\" = 0\n\"a::c\" = 2.5\n");
    let w = weights::load(dir.path()).unwrap();
    assert_eq!(w.of("a::b"), 0.0);
    assert_eq!(w.of("a::c"), 2.5);
    assert_eq!(w.of("a::d"), 2.0);
    assert_eq!(w.default_weight(), 2.0);
    let dir = write_weights("[weights]\n\"a::b\" = 3.0\n");
    let w = weights::load(dir.path()).unwrap();
    assert_eq!(
        (w.of("a::b"), w.of("x")),
        (3.0, 1.0),
        "default is 1 when left out"
    );
}

#[test]
fn weights_refuse_bad_files_naming_file_and_key() {
    let cases = [
        ("default = 1.0\nbonus = 2\n", "bonus"),
        ("default = 1.0\n[weights]\n\"a::b\" = nan\n", "a::b"),
        ("default = 1.0\n[weights]\n\"a::b\" = inf\n", "a::b"),
        ("default = 1.0\n[weights]\n\"a::b\" = -1.0\n", "a::b"),
        ("default = -0.5\n", "default"),
        ("default = \"one\"\n", "default"),
        ("default = 1.0\n[weights]\n\"a::b\" = \"five\"\n", "a::b"),
        ("default = 1.0\n[weights\n", "line"),
    ];
    for (text, key) in cases {
        let dir = write_weights(text);
        let e = weights::load(dir.path()).expect_err(text).to_string();
        assert!(e.contains("grading.toml"), "{text}: {e}");
        assert!(e.contains(key), "{text}: {e}");
    }
    let dir = write_weights("default = 1.0\n[weights]\n\"a::b\" = -1.0\n");
    let e = weights::load(dir.path()).unwrap_err().to_string();
    assert!(e.contains("line 3"), "where the bad weight is: {e}");
}

#[test]
fn formats_dispatch_by_name() {
    let r = mixed();
    for format in ReportFormat::ALL {
        let text = format.render(&r);
        assert!(text.ends_with('\n'), "{format}");
        match format {
            ReportFormat::Junit => assert!(text.starts_with("<?xml")),
            ReportFormat::Json => assert_eq!(json(&text)["schema"], "retry-kit/report"),
            ReportFormat::Exercism => assert_eq!(json(&text)["version"], 3),
            ReportFormat::Gradescope => assert!(json(&text)["tests"].is_array()),
        }
    }
}

/// The JUnit reports, validated by a real consumer: `xmllint` against Jenkins' own
/// `junit-10.xsd` (the xunit plugin's schema), named by `KIT_JUNIT_XSD`. The schema is not
/// the kit's to ship, so `.ci/run` takes it from the plugin's sources where this machine has
/// them (and installs `xmllint`); elsewhere this test says so and checks nothing, unless
/// `KIT_REQUIRE_JUNIT_XSD` asks for it.
#[test]
fn junit_reports_validate_against_jenkins_junit_10_xsd() {
    let Some(xsd) = std::env::var_os("KIT_JUNIT_XSD") else {
        let why = "KIT_JUNIT_XSD is not set: the JUnit reports were not validated with xmllint \
                   against Jenkins' junit-10.xsd (see .ci/run for how to prepare it)";
        assert!(std::env::var_os("KIT_REQUIRE_JUNIT_XSD").is_none(), "{why}");
        eprintln!("NOTICE: {why}");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut refused = report(vec![passed("method::only_exact_get_is_sent")]);
    refused.not_run = Some(NotRun::Refused(
        "refused: the file reaches the kit's answers (#[path]); nothing was run".into(),
    ));
    let mut files = Vec::new();
    for (i, (what, r)) in every_report()
        .into_iter()
        .chain([("refused", refused)])
        .enumerate()
    {
        let path = dir.path().join(format!("{i}.xml"));
        std::fs::write(&path, ReportFormat::Junit.render(&r)).unwrap();
        files.push((what, path));
    }
    // One file at a time, so that a failure names the report it is about.
    for (what, path) in &files {
        let out = std::process::Command::new("xmllint")
            .arg("--noout")
            .arg("--schema")
            .arg(&xsd)
            .arg(path)
            .output()
            .expect("xmllint runs (libxml2-utils)");
        assert!(
            out.status.success(),
            "{what}: junit-10.xsd refuses the report:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // The check can fail: a report with an element the schema does not know is refused.
    let bad = dir.path().join("bad.xml");
    std::fs::write(
        &bad,
        "<testsuites><testsuite name=\"x\" tests=\"1\"><verdict/></testsuite></testsuites>",
    )
    .unwrap();
    let out = std::process::Command::new("xmllint")
        .args(["--noout", "--schema"])
        .arg(&xsd)
        .arg(&bad)
        .output()
        .expect("xmllint runs");
    assert!(
        !out.status.success(),
        "the schema refuses an unknown element"
    );
}

//! Messages that guess a cause are right for the realistic mistakes that reach them: each
//! test runs one named check, in this process, on a test-only implementation that makes the
//! mistake, and reads what the check says.

use grader_checks::lessons::build3;
use grader_checks::{Job, Report};

fn build3_says(check: &str, learner: &build3::Learner) -> String {
    match build3::run(&Job::Check(check.to_string()), learner) {
        Report::Passed => panic!("{check} passed"),
        other => format!("{other:?}"),
    }
}

#[test]
fn a_run_that_never_logs_is_told_so_not_that_log_panicked() {
    // Retries as the rules say, but never calls log.
    let never_logs =
        build3::Learner::Here(|p, r, s, _log| reference::retry_request(p, r, s, |_| {}));
    let said = build3_says("fixtures::log_panics", &never_logs);
    assert!(said.contains("log was never called"), "{said}");
    assert!(said.contains("call log with the retry event"), "{said}");
    assert!(!said.contains("log panicked, but"), "{said}");
    // One that never sleeps is told the same of sleep.
    let never_sleeps =
        build3::Learner::Here(|p, r, _sleep, l| reference::retry_request(p, r, |_| {}, l));
    let said = build3_says("fixtures::sleep_panics", &never_sleeps);
    assert!(said.contains("sleep was never called"), "{said}");
}

#[test]
fn a_run_that_catches_the_panic_is_still_told_to_let_it_propagate() {
    // Calls log, but swallows its panic.
    let catches = build3::Learner::Here(|p, r, s, l| {
        reference::retry_request(p, r, s, |event| {
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| l(event)));
        })
    });
    let said = build3_says("fixtures::log_panics", &catches);
    assert!(said.contains("log panicked, but"), "{said}");
    assert!(said.contains("no catch_unwind"), "{said}");
}

#[test]
fn a_scenario_may_name_its_lesson_with_the_lesson_key() {
    // The kit's word for what the `exercise` key names is read as well, for every lesson
    // whose example scenarios name it.
    let kit = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut seen = 0;
    for lesson in grader_checks::lessons::LESSONS {
        let folder = kit.join("exercises").join(lesson.name).join("scenarios");
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            let key = format!("exercise = \"{}\"", lesson.name);
            if !text.contains(&key) {
                continue;
            }
            let renamed = text.replacen(&key, &format!("lesson = \"{}\"", lesson.name), 1);
            let found = grader_checks::lessons::scenario_lesson(&path, &renamed)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(found.name, lesson.name, "{}", path.display());
            (found.parse_scenario)(&path, &renamed)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            seen += 1;
        }
    }
    assert!(seen >= 3, "only {seen} scenarios name their lesson");
}

#[test]
fn a_loop_that_retries_a_permanent_failure_forever_hears_the_rule_it_breaks() {
    // Retries whatever comes back, never stopping: the call guard ends it, and the check
    // names its own rule with the guard's words.
    let retries_everything = build3::Learner::Here(|_policy, request, sleep, _log| loop {
        if let Ok(reply) = request() {
            return Ok(reply);
        }
        sleep(0.25);
    });
    let said = build3_says("fixtures::permanent_error", &retries_everything);
    assert!(said.contains("the loop never stops"), "{said}");
    assert!(
        said.contains("A 404 is permanent: return it at once"),
        "{said}"
    );
    assert!(said.contains("(stopped there)"), "{said}");
}

#[test]
fn a_run_that_logs_nothing_is_told_so_in_words() {
    let never_logs =
        build3::Learner::Here(|p, r, s, _log| reference::retry_request(p, r, s, |_| {}));
    let said = build3_says("fixtures::third_attempt_success", &never_logs);
    assert!(
        said.contains("log received no event; the rule expects [#1 "),
        "{said}"
    );
}

//! A generated class of build3 submissions for `grade`: a correct answer, realistic
//! mistakes, a stub, a file that does not compile, and hostile code that spins or aborts.
//! Shared by the grade tests and the grade benchmark.
//!
//! Every variant but the stub is the reference answer with one change, so each mistake is a
//! mistake a learner makes in otherwise working code. A change whose text is no longer in
//! the reference fails loudly: the variants must be kept in step with the reference.
#![allow(dead_code)] // the benchmark uses a subset

use std::path::Path;

/// What grading a variant must give.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// Every check passes.
    Passing,
    /// Every check is unfinished.
    Unfinished,
    /// The file does not compile.
    DoesNotCompile,
    /// `failed` checks fail and the others pass; `first` first (in the lesson's order), for
    /// this reason (a failure kind's label).
    Failing {
        first: &'static str,
        kind: &'static str,
        failed: usize,
    },
    /// Every check fails (the code crashes or never returns).
    AllFail { kind: &'static str },
}

/// One kind of submission.
pub struct Variant {
    /// Its name (the submissions are named after it).
    pub name: &'static str,
    /// The text replaced in the reference answer, and by what (none: the stub).
    pub change: Option<(&'static str, &'static str)>,
    /// What grading it must give.
    pub expect: Expect,
}

/// Every variant.
pub const VARIANTS: &[Variant] = &[
    Variant {
        name: "correct",
        change: Some(("", "")),
        expect: Expect::Passing,
    },
    Variant {
        name: "stub",
        change: None,
        expect: Expect::Unfinished,
    },
    Variant {
        name: "does-not-compile",
        change: Some((
            "Ok(value) => return Ok(value),",
            "Ok(value) => return value,",
        )),
        expect: Expect::DoesNotCompile,
    },
    Variant {
        name: "attempt-limit-off-by-one",
        change: Some((
            "if attempt >= policy.max_attempts",
            "if attempt > policy.max_attempts",
        )),
        expect: Expect::Failing {
            first: "fixtures::capped_exhaustion",
            kind: "mismatch",
            failed: 9,
        },
    },
    Variant {
        name: "no-validation",
        change: Some(("    policy.validate()?;\n", "")),
        expect: Expect::Failing {
            first: "fixtures::input_refusal",
            kind: "mismatch",
            failed: 8,
        },
    },
    Variant {
        name: "ignores-retry-after",
        change: Some((
            "let server_wait = failure.retry_after.filter(|w| *w >= 0.0);",
            "let server_wait: Option<f64> = None;",
        )),
        expect: Expect::Failing {
            first: "fixtures::supported_retry_after",
            kind: "mismatch",
            failed: 8,
        },
    },
    Variant {
        name: "sleeps-before-logging",
        change: Some((
            "        log(RetryEvent::retry(attempt, reason, planned));\n        sleep(planned);\n",
            "        sleep(planned);\n        log(RetryEvent::retry(attempt, reason, planned));\n",
        )),
        // The two checks of the order, and the exhaustive check, which compares it too.
        expect: Expect::Failing {
            first: "fixtures::log_panics",
            kind: "mismatch",
            failed: 3,
        },
    },
    Variant {
        name: "shortens-server-wait",
        change: Some((
            "            Some(w) if w > policy.max_delay => {\n                log(RetryEvent::stop(attempt, reason, StopCause::DelayBudget));\n                return Err(stop(StopCause::DelayBudget));\n            }\n            Some(w) => backoff.max(w),",
            "            Some(w) => backoff.max(w).min(policy.max_delay),",
        )),
        expect: Expect::Failing {
            first: "fixtures::delay_budget_stop",
            kind: "mismatch",
            failed: 5,
        },
    },
    Variant {
        name: "backoff-exponent-off-by-one",
        change: Some(("2f64.powi(attempt as i32 - 1)", "2f64.powi(attempt as i32)")),
        expect: Expect::Failing {
            first: "fixtures::third_attempt_success",
            kind: "mismatch",
            failed: 16,
        },
    },
    Variant {
        name: "no-delay-cap",
        change: Some((".min(policy.max_delay);", ";")),
        expect: Expect::Failing {
            first: "fixtures::capped_exhaustion",
            kind: "mismatch",
            failed: 4,
        },
    },
    Variant {
        name: "server-wait-replaces-backoff",
        change: Some(("Some(w) => backoff.max(w),", "Some(w) => w,")),
        expect: Expect::Failing {
            first: "server_wait::smaller_than_backoff_keeps_backoff",
            kind: "mismatch",
            failed: 3,
        },
    },
    Variant {
        name: "forgets-attempt-increment",
        change: Some(("        attempt += 1;\n", "")),
        expect: Expect::Failing {
            first: "fixtures::third_attempt_success",
            kind: "mismatch",
            failed: 13,
        },
    },
    Variant {
        name: "aborts",
        change: Some(("    policy.validate()?;\n", "    std::process::abort();\n")),
        expect: Expect::AllFail { kind: "crashed" },
    },
    Variant {
        name: "spins",
        change: Some((
            "    policy.validate()?;\n",
            "    loop {\n        std::hint::spin_loop();\n    }\n",
        )),
        expect: Expect::AllFail {
            kind: "did not finish",
        },
    },
    Variant {
        name: "hangs",
        change: Some((
            "    policy.validate()?;\n",
            "    loop {\n        std::thread::sleep(std::time::Duration::from_secs(1));\n    }\n",
        )),
        expect: Expect::AllFail {
            kind: "did not finish",
        },
    },
];

/// The variant called `name`.
pub fn variant(name: &str) -> &'static Variant {
    VARIANTS
        .iter()
        .find(|v| v.name == name)
        .unwrap_or_else(|| panic!("no variant {name}"))
}

/// The source of `variant`, from the kit at `kit`; `tag` is added as a comment so that
/// submissions of one variant still differ (each is a build of its own).
pub fn source(kit: &Path, variant: &Variant, tag: &str) -> String {
    let text = match variant.change {
        None => std::fs::read_to_string(kit.join("exercises/build3/stub.rs")),
        Some(_) => std::fs::read_to_string(kit.join("reference/src/retry.rs")),
    }
    .expect("the kit's build3 files are readable");
    let text = match variant.change {
        Some((from, to)) if !from.is_empty() => {
            assert!(
                text.contains(from),
                "variant {}: the reference no longer holds {from:?}; update the variant",
                variant.name
            );
            text.replacen(from, to, 1)
        }
        _ => text,
    };
    format!("{text}\n// submission {tag}\n")
}

/// Writes a class into `dir`: `count` submissions named `NN-variant`, cycling through
/// `variants` — each a folder holding `lib.rs`, or (every third) a bare `.rs` file.
pub fn write(
    kit: &Path,
    dir: &Path,
    variants: &[&'static Variant],
    count: usize,
) -> Vec<(String, &'static str)> {
    std::fs::create_dir_all(dir).expect("the class folder is created");
    let mut written = Vec::new();
    for i in 0..count {
        let v = variants[i % variants.len()];
        let name = format!("{i:02}-{}", v.name);
        let text = source(kit, v, &name);
        if i % 3 == 2 {
            std::fs::write(dir.join(format!("{name}.rs")), text).expect("a submission is written");
        } else {
            let folder = dir.join(&name);
            std::fs::create_dir_all(&folder).expect("a submission folder is created");
            std::fs::write(folder.join("lib.rs"), text).expect("a submission is written");
        }
        written.push((name, v.name));
    }
    written
}

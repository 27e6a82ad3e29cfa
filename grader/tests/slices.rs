//! One lesson, one slice, end to end: each lesson compiles only its own learner file, the
//! grader refuses a practice crate that reaches the kit's answers, build2 works like the
//! others, and `all` reruns every started lesson.

use crate::common;

use common::*;
use std::path::Path;

fn row(stdout: &str, lesson: &str) -> String {
    stdout
        .lines()
        .find(|l| l.starts_with(lesson))
        .unwrap_or_default()
        .to_string()
}

/// A learner body for build3 that leaves a mark when it runs, then delegates to `call`.
fn marking(marker: &Path, call: &str) -> String {
    format!(
        "{{ let _ = std::fs::write({:?}, \"ran\"); {call} }}",
        marker.display().to_string()
    )
}

#[test]
fn borrowed_answers_are_refused_and_nothing_runs() {
    let kit = fresh_kit();
    let root = kit.root();
    let marker = root.join("ran.txt");

    // 1. The delegation one-liner: practice cannot even name the answers' crate.
    write_learner(
        root,
        "build3",
        &stub_with(
            "build3",
            &marking(
                &marker,
                "reference::retry_request(policy, request, sleep, log)",
            ),
        ),
    );
    let out = grader(root, &["build3"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("the practice crate cannot use `reference`"),
        "{stderr}"
    );
    assert!(!marker.exists());

    // 2. A dependency on reference added to practice/Cargo.toml.
    let manifest = root.join("practice/Cargo.toml");
    let pristine = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        pristine.replace(
            "[dependencies]\n",
            "[dependencies]\nreference = { path = \"../reference\" }\n",
        ),
    )
    .unwrap();
    let out = grader(root, &["build3"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "nothing was run: the practice crate depends on `reference` (practice → reference)"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("remove `reference` from [dependencies] in practice/Cargo.toml"),
        "{stderr}"
    );
    assert!(!text(&out.stdout).contains("check "), "no check ran");
    assert!(!marker.exists(), "the learner's code never ran");
    let out = grader(root, &["list"]);
    assert!(
        row(&text(&out.stdout), "build3").contains("not graded (borrows an answer)"),
        "{}",
        text(&out.stdout)
    );

    // ... and through another crate: the grader depends on reference.
    std::fs::write(
        &manifest,
        pristine.replace(
            "[dependencies]\n",
            "[dependencies]\ngrader-checks = { path = \"../grader/checks\" }\n",
        ),
    )
    .unwrap();
    // The learner's own code is fine here: the dependency alone is refused.
    write_learner(
        root,
        "build3",
        &stub_with("build3", &marking(&marker, CORRECT_BUILD3)),
    );
    let out = grader(root, &["build3"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("practice → grader-checks"), "{stderr}");
    assert!(!marker.exists());
    std::fs::write(&manifest, &pristine).unwrap();

    // 3. The answer's source compiled in with #[path].
    let with_path = stub_with(
        "build3",
        &marking(
            &marker,
            "answer::retry_request(policy, request, sleep, log)",
        ),
    ) + "\n#[path = \"../../reference/src/retry.rs\"]\nmod answer;\n";
    write_learner(root, "build3", &with_path);
    let out = grader(root, &["build3"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("compiles reference/src/retry.rs"),
        "{stderr}"
    );
    assert!(stderr.contains("remove the #[path"), "{stderr}");
    assert!(!marker.exists());

    // 4. A file read at compile time by the assembler (`.incbin`), which rustc's list of the
    // crate's files never names: the assembly itself is refused, renamed or not.
    let answer = root.join("reference/src/retry.rs");
    let with_incbin = stub_with("build3", &marking(&marker, CORRECT_BUILD3))
        + &format!(
            "\nuse core::arch::global_asm as bring;\n\
             bring!(\".section .rodata\\n.incbin \\\"{}\\\"\");\n",
            answer.display()
        );
    write_learner(root, "build3", &with_incbin);
    let out = grader(root, &["build3"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("practice/src/lib.rs uses global_asm!"),
        "{stderr}"
    );
    assert!(
        stderr.contains("a lesson's function needs no assembly"),
        "{stderr}"
    );
    assert!(!marker.exists(), "the learner's code never ran");

    // The learner's own answer is graded.
    write_learner(root, "build3", &stub_with("build3", CORRECT_BUILD3));
    let out = grader(root, &["build3"]);
    assert!(
        out.status.success(),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
}

#[test]
fn build2_from_a_fresh_kit() {
    let kit = fresh_kit();
    let root = kit.root();
    let total = grader::lessons::lesson("build2").unwrap().checks.len();
    assert_stub_is_unfinished(root, "build2");

    let out = grader(root, &["build2", "--against", "reference"]);
    assert!(out.status.success(), "{}", text(&out.stdout));

    write_learner(root, "build2", &stub_with("build2", CORRECT_BUILD2));
    let out = grader(root, &["build2"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    assert!(
        stdout.contains(&format!("{total} passed; 0 failed; 0 unfinished")),
        "{stdout}"
    );

    let out = grader(root, &["trace", "build2"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains("→ transient rate_limited, retry_after 2.0"),
        "{stdout}"
    );
}

#[test]
fn a_broken_file_blocks_only_its_own_lesson() {
    let kit = fresh_kit();
    let root = kit.root();
    write_learner(root, "build3", &stub_with("build3", CORRECT_BUILD3));
    write_learner(root, "stage8", "pub fn lookup_availability( {\n");

    let out = grader(root, &["build3"]);
    assert!(
        out.status.success(),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let out = grader(root, &["build2"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "still unfinished, not broken: {}",
        text(&out.stderr)
    );
    assert!(
        text(&out.stdout).contains("unfinished"),
        "{}",
        text(&out.stdout)
    );

    let out = grader(root, &["stage8"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("practice/src/gateway.rs does not compile"),
        "{stderr}"
    );

    let out = grader(root, &["list"]);
    let stdout = text(&out.stdout);
    assert!(row(&stdout, "build3").contains("passing"), "{stdout}");
    assert!(row(&stdout, "build2").contains("not started"), "{stdout}");
    assert!(
        row(&stdout, "stage8").contains("does not compile"),
        "{stdout}"
    );
}

#[test]
fn all_reruns_the_started_lessons() {
    let kit = fresh_kit();
    let root = kit.root();

    // The pristine kit: nothing started, nothing run.
    let out = grader(root, &["all"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("No lesson started yet"), "{stdout}");
    assert!(!stdout.contains("passed;"), "{stdout}");

    // One finished lesson: its line, the total, and the others skipped. It is build2: `all`
    // runs build3's exhaustive check without the reference's runs made ahead (a run of
    // build3 itself has them), about twenty seconds of the judge's time in a debug build,
    // which the mix below pays once for build3.
    write_learner(root, "build2", &stub_with("build2", CORRECT_BUILD2));
    let out = grader(root, &["all"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    assert!(
        row(&stdout, "build2").contains("passing")
            && row(&stdout, "build2").contains(&format!(
                "{} passed; 0 failed",
                grader::lessons::lesson("build2").unwrap().checks.len()
            )),
        "{stdout}"
    );
    let others: Vec<&str> = grader::lessons::LESSONS
        .iter()
        .map(|g| g.name)
        .filter(|n| *n != "build2")
        .collect();
    assert!(
        stdout.contains(&format!(
            "total: 1 of 1 started lesson(s) passing; skipped as not started: {}",
            others.join(", ")
        )),
        "{stdout}"
    );

    // A mix: a passing lesson, a failing one, and one that does not compile.
    write_learner(root, "build3", &stub_with("build3", CORRECT_BUILD3));
    write_learner(
        root,
        "build2",
        &stub_with(
            "build2",
            "{ let _ = (method, url, transport); Ok(serde_json::Value::Null) }",
        ),
    );
    write_learner(root, "stage8", "pub fn lookup_availability( {\n");
    let stdout = grader_exits(root, &["all"], 1);
    assert!(row(&stdout, "build2").contains("failing ("), "{stdout}");
    assert!(
        row(&stdout, "stage8").contains("does not compile"),
        "{stdout}"
    );
    assert!(row(&stdout, "build3").contains("passing"), "{stdout}");
    assert!(
        stdout.contains("total: 1 of 3 started lesson(s) passing"),
        "{stdout}"
    );
}

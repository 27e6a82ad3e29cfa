//! The platform bundles end to end (`grader bundle gradescope|exercism|classroom`): each is
//! generated from the kit, then its entry point runs on a fake platform layout in a
//! temporary folder — a submission in, the platform's results file out — and that file is
//! held to the platform's rules (docs/report-formats.md and the sources it cites):
//!
//! - Gradescope: `setup.sh` (with cargo stood in by a shim that links the grader under test,
//!   so no toolchain is installed and the kit is not rebuilt), then `run_autograder` with
//!   `AUTOGRADER_ROOT` on a correct answer, on one that does not compile, on a folder without
//!   the lesson's file, and with a grader that cannot run;
//! - Exercism: `bin/run.sh SLUG INPUT_DIR OUTPUT_DIR` on a passing, an unfinished and a
//!   non-compiling solution, a solution without the lesson's file, and a broken runner;
//! - Classroom: the workflow is parsed and checked against the inputs the two actions'
//!   `action.yml` declare, and its commands run in a copy of the kit as the command grader
//!   runs them (`sh -c`, only PATH and HOME in the environment).
//!
//! Nothing here reads `practice/` or the working tree's guidance log: the bundles hold the
//! kit as a fresh clone has it, and the learner's files are written into the fake layouts.
//! The Gradescope bundle lives under the target folder, so its kit is built once and then
//! reused; the Exercism runner grades with the kit itself (`KIT_ROOT`), as `grade`'s own
//! tests do.
//!
//! The scripts are bash, so these tests are for Unix.
#![cfg(unix)]

use crate::common;
use crate::platforms;

use common::*;
use grader::bundle::MANIFEST;
use grader::guidance::{HEADER, LOG_FILE};
use platforms::{exercism_problems, gradescope_problems};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const LESSON: &str = "build3";

// ======================================================================================
// Helpers
// ======================================================================================

/// `grader --root KIT bundle ARGS…`.
fn bundle(args: &[&str]) -> Output {
    let mut all = vec!["bundle"];
    all.extend_from_slice(args);
    grader(&kit_root(), &all)
}

/// Writes the bundle `platform LESSON` into `out` (replacing what is there), or panics.
fn make_bundle(platform: &str, out: &Path, extra: &[&str]) {
    let mut args = vec![platform, LESSON, "--out", path_str(out), "--force"];
    args.extend_from_slice(extra);
    let made = bundle(&args);
    assert!(
        made.status.success(),
        "{}\n{}",
        text(&made.stdout),
        text(&made.stderr)
    );
}

/// A script (or binary) run as a platform runs it: its output captured, and without the
/// build's target folder, which would send the grading copy's build elsewhere.
fn script(path: &Path) -> Command {
    let mut command = Command::new(path);
    command
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("NO_COLOR");
    command
}

fn run(mut command: Command) -> Output {
    command.output().expect("the script starts")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"))
}

/// The lesson's checks, in order.
fn check_names() -> Vec<&'static str> {
    grader::lessons::lesson(LESSON)
        .expect("build3 is a lesson")
        .checks
        .iter()
        .map(|c| c.name)
        .collect()
}

/// Each check's points, from the kit's grading.toml.
fn weights() -> Vec<(&'static str, f64)> {
    let w = grader::reports::weights::load(&kit_root().join("exercises").join(LESSON))
        .expect("grading.toml reads");
    check_names().into_iter().map(|c| (c, w.of(c))).collect()
}

fn total_points() -> f64 {
    weights().iter().map(|(_, w)| w).sum()
}

/// A correct build3 answer: the reference's module, as a learner's lib.rs.
fn correct_answer() -> Vec<u8> {
    std::fs::read(kit_root().join("reference/src/retry.rs")).expect("the reference answer")
}

const DOES_NOT_COMPILE: &str = "pub fn retry_request( {\n";

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o111 == 0o111)
}

fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The bundle's copy of the kit is exactly the kit as a fresh clone has it.
fn assert_holds_the_kit(kit: &Path, skip: &[&str]) {
    let found = files_under(kit, skip);
    let expected = files();
    let missing: Vec<_> = expected
        .keys()
        .filter(|p| !found.contains_key(*p))
        .collect();
    assert!(missing.is_empty(), "the bundle's kit lacks {missing:?}");
    let extra: Vec<_> = found
        .keys()
        .filter(|p| !expected.contains_key(*p))
        .collect();
    assert!(
        extra.is_empty(),
        "the bundle's kit has more than the kit: {extra:?}"
    );
    for (path, content) in expected {
        assert!(
            found[path] == *content,
            "{} differs from the kit's",
            path.display()
        );
    }
    // The bundle's own copy (never the working tree's log): the shipped header and no row.
    assert_eq!(
        read(&kit.join(LOG_FILE)),
        HEADER,
        "the guidance log ships empty"
    );
    assert_eq!(
        found[Path::new("practice/src/lib.rs")],
        stub(LESSON).into_bytes(),
        "the learner's file ships as the stub"
    );
}

// ======================================================================================
// Gradescope (specs.md: results.json)
// ======================================================================================

/// Reads and validates `ROOT/results/results.json`.
fn gradescope_results(root: &Path) -> Value {
    let doc = json(&read(&root.join("results/results.json")));
    let problems = gradescope_problems(&doc.to_string());
    assert!(problems.is_empty(), "{problems:#?}\n{doc:#}");
    doc
}

/// The sum of the passed tests' max_score.
fn passed_points(doc: &Value) -> f64 {
    doc["tests"]
        .as_array()
        .expect("tests")
        .iter()
        .filter(|t| t["status"] == "passed")
        .map(|t| t["max_score"].as_f64().expect("max_score"))
        .sum()
}

/// The shim that stands in for cargo while `setup.sh` runs: `cargo build` links the grader
/// under test where the build would put it; anything else goes to the real cargo.
const CARGO_SHIM: &str = r#"#!/bin/sh
if [ "$1" = build ]; then
  echo "$*" >>"$SHIM_LOG"
  mkdir -p target/debug && ln -sf "$SHIM_GRADER" target/debug/kit-grader
  exit 0
fi
exec "$SHIM_REAL_CARGO" "$@"
"#;

#[test]
fn gradescope_bundle_sets_up_and_grades_a_submission_end_to_end() {
    let source = lasting("gradescope");
    make_lasting_bundle("gradescope", LESSON, &source, &[]);

    // What Gradescope unpacks: the two scripts, executable, and the kit.
    for script in ["setup.sh", "run_autograder"] {
        assert!(
            is_executable(&source.join(script)),
            "{script} is executable"
        );
        assert!(read(&source.join(script)).starts_with("#!/usr/bin/env bash\n"));
    }
    assert_holds_the_kit(&source.join("kit"), &["target"]);

    // setup.sh, with cargo stood in: it builds the grader and warms the grading copy. The
    // stand-in only links the grader under test; the build the real `cargo build -p kit-grader`
    // leaves in the kit's target folder (which `grade` warms its copies from) is taken from
    // the kit's own build, as a copy of the kit is warmed for every end-to-end test.
    let kit = source.join("kit");
    let kit_files = grader::kitcopy::fresh_files(&kit, grader::kitcopy::Untracked::Left).unwrap();
    warm_from_kit(&kit, &kit_files);
    // And its grading copy (`--one`: one), which setup.sh and run_autograder grade in.
    warm_pool(&grading_pool(&kit), 1, &kit_files);
    let scratch = tempfile::tempdir().unwrap();
    let shim_dir = scratch.path().join("shim");
    std::fs::create_dir_all(&shim_dir).unwrap();
    std::fs::write(shim_dir.join("cargo"), CARGO_SHIM).unwrap();
    make_executable(&shim_dir.join("cargo"));
    let log = scratch.path().join("cargo-calls.log");
    let real_cargo = std::env::var("CARGO").expect("cargo test sets CARGO");
    let path = format!(
        "{}:{}",
        shim_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut setup = script(Path::new("bash"));
    setup
        .arg(source.join("setup.sh"))
        .current_dir(scratch.path())
        .env("PATH", path)
        .env("SHIM_LOG", &log)
        .env("SHIM_GRADER", GRADER)
        .env("SHIM_REAL_CARGO", real_cargo);
    let out = run(setup);
    let said = format!("{}\n{}", text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "setup.sh failed:\n{said}");
    assert_eq!(read(&log).trim(), "build --locked -p kit-grader", "{said}");
    assert!(said.contains("grading the build3 stub once"), "{said}");
    assert!(said.trim_end().ends_with("== ready"), "{said}");
    assert!(!said.contains("installing Rust"), "cargo was there: {said}");

    // A correct answer: every check passes, and the score is the sum of the points.
    let fake = tempfile::tempdir().unwrap();
    let submission = fake.path().join("submission");
    std::fs::create_dir_all(&submission).unwrap();
    std::fs::write(submission.join("lib.rs"), correct_answer()).unwrap();
    let autograder = || {
        let mut command = script(&source.join("run_autograder"));
        command
            .env("AUTOGRADER_ROOT", fake.path())
            .current_dir(fake.path());
        command
    };
    let out = run(autograder());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc = gradescope_results(fake.path());
    let tests = doc["tests"].as_array().unwrap();
    let names: Vec<&str> = tests.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, check_names(), "one test per check, in order");
    assert!(tests.iter().all(|t| t["status"] == "passed"), "{doc:#}");
    for (t, (check, points)) in tests.iter().zip(weights()) {
        assert_eq!(t["max_score"].as_f64(), Some(points), "{check}");
    }
    assert_eq!(doc["score"].as_f64(), Some(passed_points(&doc)));
    assert_eq!(doc["score"].as_f64(), Some(total_points()));
    assert_eq!(
        total_points(),
        44.0,
        "docs/report-formats.md promises 44 for build3"
    );

    // A file that does not compile: a valid file, score 0, the compiler's words.
    std::fs::write(submission.join("lib.rs"), DOES_NOT_COMPILE).unwrap();
    let out = run(autograder());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc = gradescope_results(fake.path());
    assert_eq!(doc["score"].as_f64(), Some(0.0), "{doc:#}");
    assert_eq!(doc["score"].as_f64(), Some(passed_points(&doc)));
    let tests = doc["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 1, "{doc:#}");
    assert_eq!(tests[0]["name"], "compile");
    assert_eq!(tests[0]["status"], "failed");
    let said = tests[0]["output"].as_str().unwrap();
    assert!(said.contains("did not compile"), "{said}");
    assert!(said.contains("unclosed delimiter"), "{said}");

    // No lesson file: still a valid file, saying what is missing.
    std::fs::remove_file(submission.join("lib.rs")).unwrap();
    std::fs::write(submission.join("notes.txt"), "my answer is in my head\n").unwrap();
    let out = run(autograder());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc = gradescope_results(fake.path());
    assert_eq!(doc["score"].as_f64(), Some(0.0));
    let said = doc["output"].as_str().unwrap();
    assert!(said.contains("holds no lib.rs"), "{said}");
}

#[test]
fn gradescope_run_autograder_writes_a_valid_results_file_when_the_grader_fails() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("source");
    make_bundle("gradescope", &source, &["--no-zip"]);
    assert!(!source.join("autograder.zip").exists(), "--no-zip");
    let fake = dir.path().join("autograder");
    std::fs::create_dir_all(fake.join("submission")).unwrap();
    std::fs::write(fake.join("submission/lib.rs"), correct_answer()).unwrap();

    // A grader that is not there at all.
    let mut command = script(&source.join("run_autograder"));
    command
        .env("AUTOGRADER_ROOT", &fake)
        .env("KIT_GRADER", dir.path().join("no-such-grader"));
    let out = run(command);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc = gradescope_results(&fake);
    assert_eq!(doc["score"].as_f64(), Some(0.0));
    let said = doc["output"].as_str().unwrap();
    assert!(said.contains("The autograder failed"), "{said}");
    assert!(said.contains("not a verdict on your work"), "{said}");
    assert!(said.contains("exit status 127"), "{said}");

    // A grader that fails with hostile text: quotes, backslashes, control characters,
    // non-ASCII, a very long line. The file must still be valid JSON.
    let broken = dir.path().join("broken-grader");
    std::fs::write(
        &broken,
        "#!/bin/sh\nhead -c 100000 /dev/zero | tr '\\0' x\n\
         printf '\\nkit \"exploded\" at C:\\\\path\\tnow\\001\\033[31m \u{e9} ]]> </script>\\n'\nexit 2\n",
    )
    .unwrap();
    make_executable(&broken);
    let mut command = script(&source.join("run_autograder"));
    command
        .env("AUTOGRADER_ROOT", &fake)
        .env("KIT_GRADER", &broken);
    let out = run(command);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc = gradescope_results(&fake);
    assert_eq!(doc["score"].as_f64(), Some(0.0));
    let said = doc["output"].as_str().unwrap();
    let start: String = said.chars().take(300).collect();
    assert!(said.contains("exit status 2"), "{start}");
    assert!(
        said.contains("xxxx\nkit \"exploded\" at C:\\path\tnow[31m  ]]> </script>"),
        "the end of what the grader said is kept, as text: {:?}",
        &said[said.len().saturating_sub(200)..]
    );
    assert!(
        said.len() < 25_000,
        "the output is capped: {} bytes",
        said.len()
    );
    assert!(!said.contains('\u{1}') && !said.contains('\u{1b}'));
}

// ======================================================================================
// The Gradescope archive (APPNOTE.TXT: stored entries, central directory)
// ======================================================================================

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

struct ZipEntry {
    name: String,
    mode: u32,
    content: Vec<u8>,
}

/// Reads a zip archive through its central directory, checking each local header and CRC.
fn unzip(zip: &[u8]) -> Vec<ZipEntry> {
    let u16_at = |at: usize| u16::from_le_bytes([zip[at], zip[at + 1]]) as usize;
    let u32_at = |at: usize| u32::from_le_bytes(zip[at..at + 4].try_into().unwrap());
    let end = zip.len() - 22;
    assert_eq!(u32_at(end), 0x0605_4b50, "end of central directory");
    let count = u16_at(end + 10);
    let mut at = u32_at(end + 16) as usize;
    let mut entries = Vec::new();
    for _ in 0..count {
        assert_eq!(u32_at(at), 0x0201_4b50, "central directory header");
        assert_eq!(u16_at(at + 10), 0, "stored, no compression");
        let crc = u32_at(at + 16);
        let size = u32_at(at + 24) as usize;
        assert_eq!(u32_at(at + 20) as usize, size);
        let name_len = u16_at(at + 28);
        let extra = u16_at(at + 30) + u16_at(at + 32);
        let mode = u32_at(at + 38) >> 16;
        let local = u32_at(at + 42) as usize;
        let name = String::from_utf8(zip[at + 46..at + 46 + name_len].to_vec()).unwrap();
        assert_eq!(u32_at(local), 0x0403_4b50, "local header of {name}");
        let data = local + 30 + u16_at(local + 26) + u16_at(local + 28);
        let content = zip[data..data + size].to_vec();
        assert_eq!(crc32(&content), crc, "CRC of {name}");
        entries.push(ZipEntry {
            name,
            mode,
            content,
        });
        at += 46 + name_len + extra;
    }
    entries
}

#[test]
fn gradescope_zip_holds_the_scripts_and_the_kit_at_its_top() {
    assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("gs");
    make_bundle("gradescope", &out, &[]);
    let entries = unzip(&std::fs::read(out.join("autograder.zip")).unwrap());
    let names: BTreeSet<&str> = entries.iter().map(|e| e.name.as_str()).collect();
    assert!(names.contains("setup.sh") && names.contains("run_autograder"));
    let mut expected: BTreeSet<String> = files()
        .keys()
        .map(|p| format!("kit/{}", p.to_string_lossy()))
        .collect();
    expected.insert("setup.sh".into());
    expected.insert("run_autograder".into());
    let found: BTreeSet<String> = names.iter().map(|n| n.to_string()).collect();
    assert_eq!(found, expected, "the scripts and the kit, nothing else");
    for entry in &entries {
        let on_disk = std::fs::read(out.join(&entry.name)).unwrap();
        assert!(entry.content == on_disk, "{} differs", entry.name);
        if ["setup.sh", "run_autograder"].contains(&entry.name.as_str()) {
            assert_eq!(entry.mode, 0o100_755, "{} unpacks executable", entry.name);
        } else {
            assert_eq!(
                entry.mode & 0o170_000,
                0o100_000,
                "{} is a file",
                entry.name
            );
        }
    }
}

// ======================================================================================
// Exercism (interface.md: results.json version 3)
// ======================================================================================

fn exercism_results(output: &Path) -> Value {
    let text = read(&output.join("results.json"));
    let problems = exercism_problems(&text);
    assert!(problems.is_empty(), "{problems:#?}\n{text}");
    json(&text)
}

#[test]
fn exercism_bundle_is_a_test_runner_with_the_interface() {
    let dir = tempfile::tempdir().unwrap();
    let runner = dir.path().join("runner");
    make_bundle("exercism", &runner, &[]);
    for script in ["bin/run.sh", "bin/setup.sh"] {
        assert!(
            is_executable(&runner.join(script)),
            "{script} is executable"
        );
    }
    assert_holds_the_kit(&runner.join("kit"), &[]);
    let dockerfile = read(&runner.join("Dockerfile"));
    let lines: Vec<&str> = dockerfile.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(
        lines,
        [
            "FROM rust:slim",
            "WORKDIR /opt/test-runner",
            "COPY . .",
            "RUN bin/setup.sh",
            "ENTRYPOINT [\"/opt/test-runner/bin/run.sh\"]",
        ],
        "{dockerfile}"
    );
    assert!(read(&runner.join(".dockerignore")).contains("kit/target"));

    let case_with = |name: &str,
                     slug: &str,
                     file: Option<(&str, &[u8])>,
                     grader: &Path,
                     env: &[(&str, &str)]| {
        let input = dir.path().join(format!("{name}/solution"));
        let output = dir.path().join(format!("{name}/output"));
        std::fs::create_dir_all(input.join(".exercism")).unwrap();
        std::fs::write(input.join(".exercism/config.json"), "{}\n").unwrap();
        if let Some((path, content)) = file {
            let path = input.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, content).unwrap();
        }
        let mut command = script(&runner.join("bin/run.sh"));
        // Exercism passes both folders with a trailing slash.
        command
            .arg(slug)
            .arg(format!("{}/", input.display()))
            .arg(format!("{}/", output.display()))
            .env("KIT_ROOT", kit_root())
            .env("KIT_GRADER", grader)
            .envs(env.iter().copied());
        let out = run(command);
        assert_eq!(
            out.status.code(),
            Some(0),
            "run.sh exits 0 whatever the grade:\n{}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
        exercism_results(&output)
    };
    // The time guard is the `never-returns` case's subject (3 s there). Elsewhere it is lifted: a
    // grade that compiles while other tests build kit copies on this shared 2-core machine
    // can take longer than the image's 17 s, which is no fault of the runner's.
    let case = |name: &str, slug: &str, file: Option<(&str, &[u8])>, grader: &Path| {
        case_with(name, slug, file, grader, &[("KIT_TIME_LIMIT", "300")])
    };
    let grader = Path::new(GRADER);
    // The runner grades with the kit itself (`--one`: in one grading copy).
    warm_pool(&grading_pool(&kit_root()), 1, files());

    // A correct solution, as Exercism lays out a Rust exercise (src/lib.rs).
    let doc = case(
        "pass",
        "build3",
        Some(("src/lib.rs", &correct_answer())),
        grader,
    );
    assert_eq!(doc["status"], "pass", "{doc:#}");
    let tests = doc["tests"].as_array().unwrap();
    let names: Vec<&str> = tests.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, check_names(), "tests in the checks' order");
    assert!(tests.iter().all(|t| t["status"] == "pass"));

    // The pristine stub, under a slug that names no lesson (graded as build3): fail, and
    // each test's message says unfinished.
    let doc = case(
        "stub",
        "retry-transient-failures",
        Some(("lib.rs", stub(LESSON).as_bytes())),
        grader,
    );
    assert_eq!(doc["status"], "fail", "{doc:#}");
    let tests = doc["tests"].as_array().unwrap();
    assert_eq!(tests.len(), check_names().len());
    for t in tests {
        assert_eq!(t["status"], "fail", "{t}");
        let m = t["message"].as_str().unwrap();
        assert!(m.starts_with("unfinished: "), "{m}");
    }

    // A file that does not compile: error, with the compiler's words.
    let doc = case(
        "broken",
        "build3",
        Some(("src/lib.rs", DOES_NOT_COMPILE.as_bytes())),
        grader,
    );
    assert_eq!(doc["status"], "error", "{doc:#}");
    assert!(doc.get("tests").is_none_or(Value::is_null), "{doc:#}");
    let m = doc["message"].as_str().unwrap();
    assert!(m.contains("unclosed delimiter"), "{m}");
    assert!(
        m.contains("--> src/lib.rs:") && !m.contains("practice/src/lib.rs"),
        "the file is named as the learner handed it in: {m}"
    );

    // Code that never returns: the run is stopped at its time guard (3 s here, under
    // Exercism's 20 s in the image), and results.json says so. It sleeps: the guard counts
    // wall time, and code that spins (both cores for the 3 s) is the implementations tests'.
    let never_returns = stub_with(
        LESSON,
        "loop { std::thread::sleep(std::time::Duration::from_secs(1)); }",
    );
    let started = std::time::Instant::now();
    let doc = case_with(
        "never-returns",
        "build3",
        Some(("src/lib.rs", never_returns.as_bytes())),
        grader,
        &[("KIT_TIME_LIMIT", "3")],
    );
    let took = started.elapsed();
    assert_eq!(doc["status"], "error", "{doc:#}");
    let m = doc["message"].as_str().unwrap();
    assert!(m.contains("stopped after 3 seconds"), "{m}");
    assert!(took < std::time::Duration::from_secs(15), "{took:?}");

    // No lesson file: error, naming the file (this slug is stage8's: gateway.rs).
    let doc = case(
        "empty",
        "stage8",
        Some(("README.md", b"# my solution\n")),
        grader,
    );
    assert_eq!(doc["status"], "error", "{doc:#}");
    let m = doc["message"].as_str().unwrap();
    assert!(m.contains("holds no gateway.rs"), "{m}");

    // The runner itself broken: still exit 0 and a results.json that says so.
    let doc = case(
        "runner-broken",
        "build3",
        Some(("src/lib.rs", &correct_answer())),
        &dir.path().join("no-such-grader"),
    );
    assert_eq!(doc["status"], "error");
    let m = doc["message"].as_str().unwrap();
    assert!(m.contains("The test runner failed"), "{m}");
    assert!(m.contains("not a verdict on your work"), "{m}");
}

#[test]
fn exercism_run_sh_without_its_three_arguments_is_a_runner_failure() {
    let dir = tempfile::tempdir().unwrap();
    let runner = dir.path().join("runner");
    make_bundle("exercism", &runner, &[]);
    let mut command = script(&runner.join("bin/run.sh"));
    command.arg("build3").arg(dir.path());
    let out = run(command);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("usage:"),
        "{}",
        text(&out.stderr)
    );
}

// ======================================================================================
// GitHub Classroom (the two actions' action.yml)
// ======================================================================================

/// A YAML value of the block subset workflows use.
#[derive(Debug, Clone, PartialEq)]
enum Yaml {
    Text(String),
    Map(Vec<(String, Yaml)>),
    List(Vec<Yaml>),
}

impl Yaml {
    fn get(&self, key: &str) -> Option<&Yaml> {
        match self {
            Yaml::Map(pairs) => pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    fn at(&self, key: &str) -> &Yaml {
        self.get(key)
            .unwrap_or_else(|| panic!("no {key:?} in {self:?}"))
    }

    fn text(&self) -> &str {
        match self {
            Yaml::Text(t) => t,
            other => panic!("not text: {other:?}"),
        }
    }

    fn list(&self) -> &[Yaml] {
        match self {
            Yaml::List(items) => items,
            other => panic!("not a list: {other:?}"),
        }
    }

    fn keys(&self) -> Vec<&str> {
        match self {
            Yaml::Map(pairs) => pairs.iter().map(|(k, _)| k.as_str()).collect(),
            other => panic!("not a map: {other:?}"),
        }
    }
}

/// Parses block YAML: indented maps and `- ` lists, plain, single- and double-quoted
/// scalars, comments. Refuses tabs, duplicate keys, bad indentation, and plain scalars that
/// YAML would read differently (`: ` or ` #` inside, an indicator first).
fn parse_yaml(text: &str) -> Result<Yaml, String> {
    let mut lines: Vec<(usize, String)> = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        if raw.contains('\t') {
            return Err(format!("line {}: a tab", n + 1));
        }
        let content = strip_comment(raw);
        if content.trim().is_empty() {
            continue;
        }
        let indent = content.len() - content.trim_start().len();
        lines.push((indent, content.trim().to_string()));
    }
    let mut at = 0;
    let value = block(&mut lines, &mut at, 0)?;
    if at != lines.len() {
        return Err(format!("unexpected {:?}", lines[at].1));
    }
    Ok(value)
}

/// `line` without its comment (a `#` at the start or after a space, outside quotes).
fn strip_comment(line: &str) -> &str {
    let (mut single, mut double, mut prev) = (false, false, ' ');
    for (i, c) in line.char_indices() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single && prev != '\\' => double = !double,
            '#' if !single && !double && prev == ' ' => return &line[..i],
            _ => {}
        }
        prev = c;
    }
    line
}

fn block(lines: &mut [(usize, String)], at: &mut usize, indent: usize) -> Result<Yaml, String> {
    let Some((found, first)) = lines.get(*at).cloned() else {
        return Err("a block is missing".into());
    };
    if found != indent {
        return Err(format!("{first:?}: indented {found}, expected {indent}"));
    }
    if first == "-" || first.starts_with("- ") {
        let mut items = Vec::new();
        while *at < lines.len() && lines[*at].0 == indent && lines[*at].1.starts_with('-') {
            let item = lines[*at].1[1..].trim_start().to_string();
            if item.is_empty() {
                *at += 1;
                items.push(block(lines, at, deeper(lines, *at, indent)?)?);
            } else if key_value(&item).is_some() {
                // `- key: value` starts a map indented two more.
                lines[*at] = (indent + 2, item);
                items.push(block(lines, at, indent + 2)?);
            } else {
                items.push(Yaml::Text(scalar(&item)?));
                *at += 1;
            }
        }
        return Ok(Yaml::List(items));
    }
    let mut pairs: Vec<(String, Yaml)> = Vec::new();
    while *at < lines.len() && lines[*at].0 == indent && !lines[*at].1.starts_with("- ") {
        let line = lines[*at].1.clone();
        let (key, rest) = key_value(&line).ok_or_else(|| format!("not `key: value`: {line:?}"))?;
        let key = scalar(key)?;
        if pairs.iter().any(|(k, _)| *k == key) {
            return Err(format!("duplicate key {key:?}"));
        }
        *at += 1;
        let value = if rest.is_empty() {
            block(lines, at, deeper(lines, *at, indent)?)?
        } else {
            Yaml::Text(scalar(rest)?)
        };
        pairs.push((key, value));
    }
    if *at < lines.len() && lines[*at].0 > indent {
        return Err(format!("{:?}: bad indentation", lines[*at].1));
    }
    Ok(Yaml::Map(pairs))
}

/// The indentation of the block that starts at `at`, which must be deeper than `indent`.
fn deeper(lines: &[(usize, String)], at: usize, indent: usize) -> Result<usize, String> {
    match lines.get(at) {
        Some((n, _)) if *n > indent => Ok(*n),
        _ => Err("a key without a value".into()),
    }
}

/// `key: value` split at the first `: ` (or a final `:`) outside quotes.
fn key_value(line: &str) -> Option<(&str, &str)> {
    let (mut single, mut double) = (false, false);
    let bytes = line.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'\'' if !double => single = !single,
            b'"' if !single && (i == 0 || bytes[i - 1] != b'\\') => double = !double,
            b':' if !single && !double && (i + 1 == bytes.len() || bytes[i + 1] == b' ') => {
                return Some((&line[..i], line[i + 1..].trim()));
            }
            _ => {}
        }
    }
    None
}

fn scalar(s: &str) -> Result<String, String> {
    let s = s.trim();
    if s.starts_with('"') {
        return serde_json::from_str::<String>(s).map_err(|e| format!("{s}: {e}"));
    }
    if let Some(inner) = s.strip_prefix('\'') {
        let inner = inner
            .strip_suffix('\'')
            .ok_or_else(|| format!("unclosed quote: {s}"))?;
        return Ok(inner.replace("''", "'"));
    }
    if s.starts_with(['&', '*', '!', '|', '>', '%', '@', '`', '{', '[', '?'])
        || s.contains(": ")
        || s.contains(" #")
    {
        return Err(format!("a plain scalar YAML reads otherwise: {s}"));
    }
    Ok(s.to_string())
}

#[test]
fn yaml_reader_reads_the_block_subset_and_refuses_the_rest() {
    let doc = parse_yaml(
        "# a comment\nname: x  # trailing\non:\n  - push\njobs:\n  a:\n    steps:\n      - id: s\n        with:\n          command: \"cargo run -- a: b\"\n      - name: 'it''s'\n",
    )
    .unwrap();
    assert_eq!(doc.at("name").text(), "x");
    assert_eq!(doc.at("on").list(), [Yaml::Text("push".into())]);
    let steps = doc.at("jobs").at("a").at("steps").list();
    assert_eq!(
        steps[0].at("with").at("command").text(),
        "cargo run -- a: b"
    );
    assert_eq!(steps[1].at("name").text(), "it's");
    for bad in [
        "a: 1\na: 2\n",
        "a:\n\tb: 1\n",
        "command: cargo run -- a: b\n",
        "a: 1\n   b: 2\n",
        "a:\n",
    ] {
        assert!(parse_yaml(bad).is_err(), "accepted {bad:?}");
    }
}

/// The inputs `classroom-resources/autograding-command-grader`'s action.yml declares.
const COMMAND_GRADER_INPUTS: [&str; 5] = [
    "test-name",
    "setup-command",
    "command",
    "timeout",
    "max-score",
];

/// One test of a Classroom workflow.
#[derive(Debug)]
struct ClassroomTest {
    name: String,
    setup: Option<String>,
    command: String,
    points: u64,
}

/// Checks the workflow against the actions' rules and returns its tests.
fn classroom_tests(workflow: &str) -> Vec<ClassroomTest> {
    let doc = parse_yaml(workflow).unwrap_or_else(|e| panic!("{e}\n{workflow}"));
    for key in ["name", "on", "permissions", "jobs"] {
        assert!(doc.get(key).is_some(), "no {key}");
    }
    let jobs = doc.at("jobs").keys();
    assert_eq!(jobs.len(), 1, "one job");
    let job = doc.at("jobs").at(jobs[0]);
    assert_eq!(job.at("runs-on").text(), "ubuntu-latest");
    let steps = job.at("steps").list();
    assert_eq!(
        steps[0].at("uses").text(),
        "actions/checkout@v4",
        "the repository is checked out first"
    );
    let reporter = steps.last().expect("steps");
    assert_eq!(
        reporter.at("uses").text(),
        "classroom-resources/autograding-grading-reporter@v1"
    );
    let graders = &steps[1..steps.len() - 1];
    assert!(!graders.is_empty());
    let mut ids = Vec::new();
    let mut names = BTreeSet::new();
    let mut tests = Vec::new();
    for step in graders {
        assert_eq!(
            step.at("uses").text(),
            "classroom-resources/autograding-command-grader@v1"
        );
        let id = step.at("id").text().to_string();
        assert!(
            id.starts_with(|c: char| c.is_ascii_alphabetic())
                && id.chars().all(|c| c.is_ascii_alphanumeric()),
            "a step id GitHub and the grading reporter both accept (its check is \
             ^([a-zA-Z0-9]+,)*[a-zA-Z0-9]+$ over runners): {id}"
        );
        assert!(
            !ids.iter().any(|i: &String| i.eq_ignore_ascii_case(&id)),
            "ids are unique as the reporter's upper-case variables are: {id}"
        );
        assert!(!ids.contains(&id), "ids are unique: {id}");
        let with = step.at("with");
        for key in with.keys() {
            assert!(COMMAND_GRADER_INPUTS.contains(&key), "unknown input {key}");
        }
        let name = with.at("test-name").text().to_string();
        assert!(names.insert(name.clone()), "test names are unique: {name}");
        let command = with.at("command").text().to_string();
        assert!(!command.trim().is_empty());
        let timeout: f64 = with.at("timeout").text().parse().expect("minutes");
        assert!(timeout > 0.0 && timeout <= 360.0, "{timeout}");
        let max = with.at("max-score").text();
        assert!(
            !max.is_empty() && max.bytes().all(|b| b.is_ascii_digit()),
            "max-score is read with parseInt: whole points only, not {max:?}"
        );
        tests.push(ClassroomTest {
            name,
            setup: with.get("setup-command").map(|s| s.text().to_string()),
            command,
            points: max.parse().unwrap(),
        });
        ids.push(id);
    }
    // The reporter: `runners` lists the ids; each has `<ID in capitals>_RESULTS`.
    let with = reporter.at("with");
    for key in with.keys() {
        assert!(
            ["runners", "token"].contains(&key),
            "unknown reporter input {key}"
        );
    }
    let runners: Vec<&str> = with
        .at("runners")
        .text()
        .split(',')
        .map(str::trim)
        .collect();
    assert_eq!(runners, ids, "runners lists every test's id, in order");
    let env = reporter.at("env");
    let expected: Vec<String> = ids
        .iter()
        .map(|id| format!("{}_RESULTS", id.to_uppercase()))
        .collect();
    assert_eq!(env.keys(), expected);
    for id in &ids {
        assert_eq!(
            env.at(&format!("{}_RESULTS", id.to_uppercase())).text(),
            format!("${{{{ steps.{id}.outputs.result }}}}")
        );
    }
    tests
}

/// Runs `command` as the command grader does: `sh -c` in the repository, with only the
/// environment it passes on (PATH, HOME, FORCE_COLOR, DOTNET_*), plus where rustup keeps
/// the toolchain when this machine says so.
fn as_command_grader(repo: &Path, command: &str) -> Output {
    let mut sh = Command::new("sh");
    sh.arg("-c").arg(command).current_dir(repo).env_clear();
    for key in ["PATH", "HOME", "CARGO_HOME", "RUSTUP_HOME"] {
        if let Some(value) = std::env::var_os(key) {
            sh.env(key, value);
        }
    }
    sh.env("FORCE_COLOR", "true")
        .env("DOTNET_CLI_HOME", "/tmp")
        .env("DOTNET_NOLOGO", "true");
    sh.output().expect("sh starts")
}

#[test]
fn classroom_workflows_run_the_kits_own_checks_in_the_learners_repository() {
    // One test per check, with its points.
    let dir = tempfile::tempdir().unwrap();
    let per_check = dir.path().join("per-check");
    make_bundle("classroom", &per_check, &["--per", "check"]);
    assert_holds_the_kit(&per_check, &[".github", ".grader-bundle", MANIFEST]);
    assert!(per_check.join(".grader-bundle").is_file());
    assert!(per_check.join(MANIFEST).is_file());
    let tests = classroom_tests(&read(&per_check.join(".github/workflows/classroom.yml")));
    let names: Vec<&str> = tests.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, check_names(), "one test per check, in order");
    for (test, (check, points)) in tests.iter().zip(weights()) {
        assert_eq!(test.points as f64, points, "{check}");
        assert_eq!(
            test.command,
            format!("cargo run -q -p grader -- {LESSON} --exact {check}")
        );
    }
    assert_eq!(
        tests.iter().map(|t| t.points as f64).sum::<f64>(),
        total_points()
    );
    let setup = tests[0]
        .setup
        .clone()
        .expect("the first test builds the grader");
    assert!(tests[1..].iter().all(|t| t.setup.is_none()));

    // One test for the whole lesson, worth every point.
    let per_lesson = dir.path().join("per-lesson");
    make_bundle(
        "classroom",
        &per_lesson,
        &["--per", "lesson", "--timeout-minutes", "20"],
    );
    let lesson_tests = classroom_tests(&read(&per_lesson.join(".github/workflows/classroom.yml")));
    assert_eq!(lesson_tests.len(), 1);
    assert_eq!(lesson_tests[0].points as f64, total_points());
    assert_eq!(
        lesson_tests[0].command,
        format!("cargo run -q -p grader -- {LESSON}")
    );
    assert!(read(&per_lesson.join(".github/workflows/classroom.yml")).contains("timeout: 20\n"));

    // The commands, in a copy of the kit as the learner's repository holds it.
    let kit = fresh_kit();
    let repo = kit.root();
    write_learner(repo, LESSON, &stub_with(LESSON, CORRECT_BUILD3));
    let out = as_command_grader(repo, &setup);
    assert!(out.status.success(), "{setup}: {}", text(&out.stderr));
    for test in [&tests[0], tests.last().unwrap(), &lesson_tests[0]] {
        let out = as_command_grader(repo, &test.command);
        assert!(
            out.status.success(),
            "{} fails on a correct answer:\n{}{}",
            test.command,
            text(&out.stdout),
            text(&out.stderr)
        );
    }
    // The stub: the same test is not a pass.
    write_learner(repo, LESSON, &stub(LESSON));
    let out = as_command_grader(repo, &tests[0].command);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert!(
        text(&out.stdout).contains("unfinished"),
        "{}",
        text(&out.stdout)
    );
}

/// The folder holding the two Classroom actions' own JavaScript, each with its dependencies
/// (`autograding-command-grader/src/main.js`, `autograding-grading-reporter/src/main.js`),
/// named by `KIT_CLASSROOM_ACTIONS` (`.ci/run` prepares it from the actions' sources when
/// the machine has them). Their code is not the kit's to ship, so the kit holds none of it.
fn classroom_actions() -> Option<PathBuf> {
    let Some(dir) = std::env::var_os("KIT_CLASSROOM_ACTIONS") else {
        let why = "KIT_CLASSROOM_ACTIONS is not set: the GitHub Classroom actions' own \
                   JavaScript was not run on the bundle (see .ci/run for how to prepare it)";
        assert!(
            std::env::var_os("KIT_REQUIRE_CLASSROOM_ACTIONS").is_none(),
            "{why}"
        );
        eprintln!("NOTICE: {why}");
        return None;
    };
    let dir = PathBuf::from(dir);
    for action in ["autograding-command-grader", "autograding-grading-reporter"] {
        let main = dir.join(action).join("src/main.js");
        assert!(
            main.is_file(),
            "KIT_CLASSROOM_ACTIONS has no {}",
            main.display()
        );
    }
    Some(dir)
}

/// The `${{ steps.ID.outputs.result }}` a workflow expression names: `ID`.
fn step_named(expression: &str) -> &str {
    expression
        .strip_prefix("${{ steps.")
        .and_then(|e| e.strip_suffix(".outputs.result }}"))
        .unwrap_or_else(|| panic!("not a step's result: {expression}"))
}

/// Runs a Classroom workflow as GitHub would, with the actions' own JavaScript: each
/// command-grader step in `repo` with the inputs the workflow gives it, then the reporter
/// with the workflow's `runners` and environment. Returns the reporter's output.
fn run_workflow_with_the_actions(actions: &Path, repo: &Path, workflow: &str) -> String {
    let doc = parse_yaml(workflow).unwrap();
    let jobs = doc.at("jobs").keys();
    let steps = doc.at("jobs").at(jobs[0]).at("steps").list();
    let mut outputs = BTreeMap::new();
    for step in &steps[1..steps.len() - 1] {
        let mut node = Command::new("node");
        node.arg(actions.join("autograding-command-grader/src/main.js"))
            .current_dir(repo)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", std::env::var_os("HOME").unwrap_or_default());
        let with = step.at("with");
        for key in with.keys() {
            // What @actions/core's getInput reads.
            node.env(format!("INPUT_{}", key.to_uppercase()), with.at(key).text());
        }
        let out = node.output().expect("node starts");
        let stdout = text(&out.stdout);
        let result = stdout
            .lines()
            .find_map(|l| l.strip_prefix("::set-output name=result::"))
            .unwrap_or_else(|| panic!("no result from the command grader:\n{stdout}"))
            .to_string();
        outputs.insert(step.at("id").text().to_string(), result);
    }
    let reporter = steps.last().unwrap();
    let mut node = Command::new("node");
    node.arg(actions.join("autograding-grading-reporter/src/main.js"))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("INPUT_RUNNERS", reporter.at("with").at("runners").text());
    let env = reporter.at("env");
    for key in env.keys() {
        let id = step_named(env.at(key).text());
        node.env(key, &outputs[id]);
    }
    let out = node.output().expect("node starts");
    format!("{}{}", text(&out.stdout), text(&out.stderr))
}

/// The points the reporter sends to Classroom: `Points 43/43`.
fn reported_points(output: &str) -> &str {
    output
        .lines()
        .find_map(|l| l.strip_prefix("::notice title=Autograding complete::Points "))
        .unwrap_or_else(|| panic!("the reporter sent no points:\n{output}"))
}

#[test]
fn the_classroom_actions_own_javascript_scores_the_workflow_as_the_kit_does() {
    let Some(actions) = classroom_actions() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let per_check = dir.path().join("per-check");
    make_bundle("classroom", &per_check, &["--per", "check"]);
    let per_lesson = dir.path().join("per-lesson");
    // `group`, the older name of `lesson`, still works.
    make_bundle("classroom", &per_lesson, &["--per", "group"]);
    let total = total_points();
    let kit = fresh_kit();
    let repo = kit.root();

    write_learner(repo, LESSON, &stub_with(LESSON, CORRECT_BUILD3));
    let workflow = read(&per_check.join(".github/workflows/classroom.yml"));
    let output = run_workflow_with_the_actions(&actions, repo, &workflow);
    assert_eq!(
        reported_points(&output),
        format!("{total}/{total}"),
        "every check's points, as the reporter sums them:\n{output}"
    );
    assert!(
        !output.contains("comma-separated list"),
        "the reporter accepts the runners: {output}"
    );

    write_learner(repo, LESSON, &stub(LESSON));
    let workflow = read(&per_lesson.join(".github/workflows/classroom.yml"));
    let output = run_workflow_with_the_actions(&actions, repo, &workflow);
    assert_eq!(
        reported_points(&output),
        format!("0/{total}"),
        "the stub earns nothing:\n{output}"
    );
}

// ======================================================================================
// The command line
// ======================================================================================

#[test]
fn bundle_refuses_what_it_cannot_do_with_one_line_and_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let out = path_str(&out_dir);
    let cases: [(&[&str], &str, &str); 7] = [
        (
            &["gradescope", "buidl3", "--out", out],
            "there is no lesson \"buidl3\"",
            "did you mean build3?",
        ),
        (
            &["gradscope", "build3", "--out", out],
            "invalid value 'gradscope'",
            "gradescope",
        ),
        (
            &["exercism", "build3", "--out", out, "--per", "group"],
            "--per is for classroom bundles",
            "leave --per out",
        ),
        (
            &["classroom", "build3", "--out", out, "--no-zip"],
            "--no-zip is for gradescope bundles",
            "leave --no-zip out",
        ),
        (
            &["gradescope", "build3", "--out", out, "--toolchain", "1.80"],
            "older than the kit's rust-version",
            "--toolchain stable",
        ),
        (
            &[
                "classroom",
                "build3",
                "--out",
                out,
                "--timeout-minutes",
                "0",
            ],
            "1 to 360 minutes",
            "--timeout-minutes 10",
        ),
        (&["classroom", "build3"], "--out <DIR>", "Usage"),
    ];
    for (args, error, hint) in cases {
        let result = bundle(args);
        let stderr = text(&result.stderr);
        assert_eq!(result.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(error), "{args:?}: {stderr}");
        assert!(stderr.contains(hint), "{args:?}: {stderr}");
        assert!(!out_dir.exists(), "{args:?} wrote something");
    }
    // Help on every argument.
    let help = text(&bundle(&["--help"]).stdout);
    for arg in [
        "<PLATFORM>",
        "<LESSON>",
        "--out",
        "--force",
        "--per",
        "--timeout-minutes",
        "--toolchain",
        "--no-zip",
    ] {
        assert!(help.contains(arg), "{arg} in:\n{help}");
    }
}

#[test]
fn a_folder_without_a_manifest_is_refused_even_with_force() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    std::fs::create_dir_all(out_dir.join("src")).unwrap();
    std::fs::write(out_dir.join("notes.txt"), "mine").unwrap();
    std::fs::write(out_dir.join("src/lib.rs"), "my work").unwrap();
    let before = files_under(&out_dir, &[]);

    let args = ["gradescope", "build3", "--out", path_str(&out_dir)];
    let refused = bundle(&args);
    let stderr = text(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("is not empty"), "{stderr}");
    assert!(stderr.contains("--force"), "{stderr}");

    let forced = bundle(&[&args[..], &["--force"]].concat());
    let stderr = text(&forced.stderr);
    assert_eq!(forced.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("holds no bundle manifest"), "{stderr}");
    assert!(stderr.contains("nothing was changed"), "{stderr}");
    assert!(stderr.contains("hint: "), "{stderr}");
    assert_eq!(files_under(&out_dir, &[]), before, "nothing was touched");

    // Git's folder alone, as in a clone of a new repository, counts as empty.
    let clone = dir.path().join("clone");
    std::fs::create_dir_all(clone.join(".git")).unwrap();
    std::fs::write(clone.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    let made = bundle(&["classroom", "build3", "--out", path_str(&clone)]);
    assert!(made.status.success(), "{}", text(&made.stderr));
    assert_eq!(read(&clone.join(".git/HEAD")), "ref: refs/heads/main\n");
    assert!(clone.join(MANIFEST).is_file());
}

#[test]
fn what_is_not_the_kits_is_left_out_of_a_bundle_with_a_warning() {
    // A kit folder that is no git repository (a download): an instructor's file at its top
    // is not the kit's.
    let kit = fresh_kit();
    let root = kit.root();
    assert!(!root.join(".git").exists(), "a copy, not a clone");
    std::fs::write(root.join("EXAM_SOLUTIONS.md"), "the answers").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("template");
    let made = grader(
        root,
        &["bundle", "classroom", "build3", "--out", path_str(&out)],
    );
    let said = text(&made.stderr);
    assert!(made.status.success(), "{said}");
    assert!(
        said.contains("warning: ") && said.contains("EXAM_SOLUTIONS.md"),
        "{said}"
    );
    assert!(!out.join("EXAM_SOLUTIONS.md").exists());
    assert!(
        out.join("README.md").is_file(),
        "the kit's own files are there"
    );
    std::fs::remove_file(root.join("EXAM_SOLUTIONS.md")).unwrap();

    // A clone: a file git does not track is named, and left out.
    let clone = dir.path().join("clone");
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .arg("-C")
            .arg(&clone)
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", text(&out.stderr));
    };
    std::fs::create_dir_all(&clone).unwrap();
    for (path, content) in common::files() {
        let to = clone.join(path);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::write(to, content).unwrap();
    }
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    std::fs::write(clone.join("EXAM_SOLUTIONS.md"), "the answers").unwrap();
    let out = dir.path().join("from-clone");
    let made = grader(
        &clone,
        &["bundle", "classroom", "build3", "--out", path_str(&out)],
    );
    let said = text(&made.stderr);
    assert!(made.status.success(), "{said}");
    assert!(
        said.contains("git does not track") && said.contains("EXAM_SOLUTIONS.md"),
        "{said}"
    );
    assert!(!out.join("EXAM_SOLUTIONS.md").exists());
}

#[test]
fn force_replaces_only_what_the_earlier_bundle_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let args = [
        "gradescope",
        "build3",
        "--out",
        path_str(&out_dir),
        "--force",
    ];
    let made = bundle(&args);
    assert!(made.status.success(), "{}", text(&made.stderr));
    let manifest = read(&out_dir.join(MANIFEST));
    assert!(manifest.contains("\nfile setup.sh\n"), "{manifest}");
    assert!(manifest.contains("\nfile kit/Cargo.toml\n"), "{manifest}");
    assert!(
        manifest.contains("\nplatform gradescope\ngroup build3\n"),
        "{manifest}"
    );

    // Files the bundle did not write: the user's, git's, the kit's build.
    std::fs::create_dir_all(out_dir.join("kit/target/debug")).unwrap();
    std::fs::create_dir_all(out_dir.join(".git")).unwrap();
    std::fs::create_dir_all(out_dir.join("mine/deep")).unwrap();
    std::fs::write(out_dir.join("kit/target/debug/built"), "a build").unwrap();
    std::fs::write(out_dir.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(out_dir.join("notes.txt"), "mine").unwrap();
    std::fs::write(out_dir.join("mine/deep/work.rs"), "my work").unwrap();
    // A file an earlier bundle wrote that this one does not.
    std::fs::create_dir_all(out_dir.join("kit/stale")).unwrap();
    std::fs::write(out_dir.join("kit/stale/old.rs"), "old").unwrap();
    std::fs::write(
        out_dir.join(MANIFEST),
        format!("{manifest}file kit/stale/old.rs\n"),
    )
    .unwrap();

    let again = bundle(&args);
    let said = text(&again.stdout);
    assert!(again.status.success(), "{}", text(&again.stderr));
    assert!(said.contains(" 1 removed)"), "{said}");
    assert!(
        said.contains(&format!(
            "Kept 2 files no bundle wrote (not in {MANIFEST}): mine/deep/work.rs, notes.txt."
        )),
        "{said}"
    );
    assert!(
        !out_dir.join("kit/stale").exists(),
        "the earlier bundle's file and folder"
    );
    assert_eq!(read(&out_dir.join("notes.txt")), "mine");
    assert_eq!(read(&out_dir.join("mine/deep/work.rs")), "my work");
    assert_eq!(read(&out_dir.join("kit/target/debug/built")), "a build");
    assert!(out_dir.join(".git/HEAD").is_file(), "git's folder stays");
    assert_eq!(read(&out_dir.join(MANIFEST)), manifest, "the new manifest");

    // Again: every file is already right, so none is written (and cargo's build stays valid).
    let before = std::fs::metadata(out_dir.join("kit/Cargo.toml"))
        .unwrap()
        .modified()
        .unwrap();
    let again = bundle(&args);
    let said = text(&again.stdout);
    assert!(again.status.success(), "{}", text(&again.stderr));
    assert!(said.contains("(0 written, "), "{said}");
    assert!(said.contains(" 0 removed)"), "{said}");
    let after = std::fs::metadata(out_dir.join("kit/Cargo.toml"))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(before, after);

    // A file of the user's where the bundle writes one (not in the manifest): refused.
    let without_setup = manifest.replace("\nfile setup.sh\n", "\n");
    std::fs::write(out_dir.join(MANIFEST), &without_setup).unwrap();
    std::fs::write(out_dir.join("setup.sh"), "my own setup").unwrap();
    let before = files_under(&out_dir, &[]);
    let refused = bundle(&args);
    let stderr = text(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("setup.sh is in the way"), "{stderr}");
    assert_eq!(files_under(&out_dir, &[]), before, "nothing changed");
}

/// A manifest is read from a folder anyone may have written: what it lists must not reach
/// outside the folder, by name or through a link.
#[test]
fn a_forged_manifest_removes_nothing_outside_the_folder() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(dir.path().join("Cargo.toml"), "[workspace]\n").unwrap();
    std::fs::write(outside.join("victim.txt"), "keep me").unwrap();
    let args = [
        "classroom",
        "build3",
        "--out",
        path_str(&out_dir),
        "--force",
    ];
    let made = bundle(&args);
    assert!(made.status.success(), "{}", text(&made.stderr));
    let manifest = read(&out_dir.join(MANIFEST));

    let victim = outside.join("victim.txt");
    for forged in [
        "file ../Cargo.toml".to_string(),
        format!("file {}", victim.display()),
        "file kit/../../outside/victim.txt".to_string(),
    ] {
        std::fs::write(out_dir.join(MANIFEST), format!("{manifest}{forged}\n")).unwrap();
        let before = files_under(dir.path(), &[]);
        let refused = bundle(&args);
        let stderr = text(&refused.stderr);
        assert_eq!(refused.status.code(), Some(2), "{forged}: {stderr}");
        assert!(
            stderr.contains("not a plain relative path") && stderr.contains("nothing was changed"),
            "{forged}: {stderr}"
        );
        assert_eq!(
            files_under(dir.path(), &[]),
            before,
            "{forged}: nothing changed"
        );
    }

    // Listed through a link out of the folder: the link is kept, what it leads to too.
    std::os::unix::fs::symlink(&outside, out_dir.join("link")).unwrap();
    std::fs::write(
        out_dir.join(MANIFEST),
        format!("{manifest}file link/victim.txt\n"),
    )
    .unwrap();
    let made = bundle(&args);
    let said = text(&made.stdout);
    assert!(made.status.success(), "{}", text(&made.stderr));
    assert!(said.contains(" 0 removed)"), "{said}");
    assert!(said.contains("link."), "the link is kept and said: {said}");
    assert_eq!(read(&victim), "keep me");
    assert_eq!(read(&dir.path().join("Cargo.toml")), "[workspace]\n");

    // A link where the bundle writes a file: refused, never written through.
    let readme = out_dir.join("README.md");
    std::fs::remove_file(&readme).unwrap();
    std::os::unix::fs::symlink(&victim, &readme).unwrap();
    let refused = bundle(&args);
    let stderr = text(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("is a symbolic link"), "{stderr}");
    assert_eq!(read(&victim), "keep me");
    std::fs::remove_file(&readme).unwrap();

    // A hard link to a file outside in place of one the bundle wrote: replaced, the file
    // outside left as it was.
    std::fs::hard_link(&victim, &readme).unwrap();
    let made = bundle(&args);
    assert!(made.status.success(), "{}", text(&made.stderr));
    assert_eq!(read(&victim), "keep me");
    assert_ne!(read(&readme), "keep me", "the bundle's own README is back");
}

/// The three folders a bundle once wrote over, and the ways of naming a folder inside the kit
/// that look like somewhere else: refused even with --force, and nothing in the kit changes.
#[test]
fn a_bundle_is_never_written_inside_the_kit() {
    let kit = fresh_kit();
    let root = kit.root();
    let outside = tempfile::tempdir().unwrap();
    let into_practice = outside.path().join("into-practice");
    std::os::unix::fs::symlink(root.join("practice"), &into_practice).unwrap();
    let before = files_under(root, &["target"]);
    let cases = [
        "practice".to_string(),
        "grader".to_string(),
        "exercises/build3".to_string(),
        "exercises/build3/not-made-yet/deeper".to_string(),
        format!("{}/practice", root.display()),
        "bundles/../practice".to_string(),
        "bundles/not-made-yet/../../grader".to_string(),
        "./bundles/..".to_string(),
        "bundles".to_string(),
        "target/somewhere".to_string(),
        format!("{}", into_practice.display()),
        format!("{}/src", into_practice.display()),
    ];
    for out in &cases {
        let result = grader_command(
            root,
            &["bundle", "classroom", "build3", "--out", out, "--force"],
        )
        .current_dir(root)
        .output()
        .unwrap();
        let stderr = text(&result.stderr);
        assert_eq!(result.status.code(), Some(2), "{out}: {stderr}");
        assert!(
            stderr.contains("is inside the kit") || stderr.contains("would overwrite the kit"),
            "{out}: {stderr}"
        );
        assert!(
            stderr.contains("hint: ") && stderr.contains("bundles/"),
            "{out}: {stderr}"
        );
        assert_eq!(
            stderr.lines().filter(|l| l.starts_with("error:")).count(),
            1,
            "{stderr}"
        );
    }
    // The kit's bundles folder made a link into the kit: where it leads counts.
    std::os::unix::fs::symlink(root.join("practice"), root.join("bundles")).unwrap();
    let result = grader_command(
        root,
        &[
            "bundle",
            "classroom",
            "build3",
            "--out",
            "bundles/x",
            "--force",
        ],
    )
    .current_dir(root)
    .output()
    .unwrap();
    let stderr = text(&result.stderr);
    assert_eq!(result.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("is inside the kit (at practice/x)"),
        "{stderr}"
    );
    std::fs::remove_file(root.join("bundles")).unwrap();

    assert_eq!(
        files_under(root, &["target"]),
        before,
        "nothing in the kit changed"
    );
    assert!(!root.join("bundles").exists());
}

#[test]
fn the_kits_bundles_folder_is_ignored_by_git_and_named_in_the_help() {
    let ignore = String::from_utf8(files()[Path::new(".gitignore")].clone()).unwrap();
    assert!(ignore.lines().any(|l| l == "/bundles"), "{ignore}");
    let help = text(&bundle(&["--help"]).stdout);
    assert!(help.contains("bundles/"), "{help}");
    assert!(help.contains(MANIFEST), "{help}");
}

#[test]
fn a_bundle_never_overwrites_the_kit_nor_holds_a_bundle_made_inside_it() {
    let kit = fresh_kit();
    let root = kit.root();
    // The kit itself, or a folder that holds it: refused even with --force.
    for out in [root.to_path_buf(), root.parent().unwrap().to_path_buf()] {
        let result = grader(
            root,
            &[
                "bundle",
                "classroom",
                "build3",
                "--out",
                path_str(&out),
                "--force",
            ],
        );
        let stderr = text(&result.stderr);
        assert_eq!(result.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("would overwrite the kit"), "{stderr}");
    }
    assert!(root.join("Cargo.toml").is_file() && root.join("exercises").is_dir());

    // Two bundles inside the kit: neither holds the other, nor itself.
    let first = root.join("bundles/gradescope");
    let second = root.join("bundles/exercism");
    for (platform, out) in [("gradescope", &first), ("exercism", &second)] {
        let made = grader(
            root,
            &["bundle", platform, "build3", "--out", path_str(out)],
        );
        assert!(made.status.success(), "{}", text(&made.stderr));
    }
    for out in [&first, &second] {
        assert!(
            !out.join("kit/bundles").exists(),
            "{} holds a bundle",
            out.display()
        );
    }
}

//! Learner-controlled text never leaves the kit raw: what a learner's code prints and
//! panics with, and what a submission's folder is named, reach the terminal, the feedback
//! text, every report format and the gradebook with their control characters escaped
//! (`\u{1b}`), so they cannot clear a screen, set a window title or fake a summary line.
//!
//! Each test runs the grader binary on hostile input, in a copy of the kit (the learner's
//! run) or on a class in a temporary folder (`grade`), and bounds it in time.

use crate::common;

use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// A learner's `retry_request` that prints terminal escapes on both streams and panics with
/// one that would hide the panic and print a fake summary in its place.
const ESCAPING_BODY: &str = r#"{
    let _ = (policy, request, sleep, log);
    print!("\x1b[2J\x1b]0;pwned\x07");
    eprintln!("err:\u{0}\u{7f}\u{9b}2J\u{202e}desrever\r");
    panic!("boom\x1b[2K\r\x1b[32mcheck result: ok. 39 passed\x07")
}"#;

/// A compiler error's message with controls the compiler itself may show raw (C1's CSI) or
/// as symbols (ESC, BEL), as Rust source.
const COMPILE_ERROR: &str = r"graded \u{9b}2J\x1b[2J\x07\u{202e}";

/// How long one grader run may take here, a build of the learner's crate included.
const LIMIT: Duration = Duration::from_secs(900);

/// Whether `c` may drive a terminal or reorder a line: the C0 controls but newline and tab,
/// DEL, the C1 controls, and the bidirectional overrides and isolates. Written from the
/// rule, not from the kit's code.
fn is_control(c: char) -> bool {
    (c < ' ' && c != '\n' && c != '\t')
        || ('\u{7f}'..='\u{9f}').contains(&c)
        || ('\u{202a}'..='\u{202e}').contains(&c)
        || ('\u{2066}'..='\u{2069}').contains(&c)
}

/// Fails when `text` holds a raw control character, naming `what` and where.
fn assert_no_controls(what: &str, text: &str) {
    if let Some((at, c)) = text.char_indices().find(|(_, c)| is_control(*c)) {
        let from = text[..at]
            .char_indices()
            .rev()
            .nth(60)
            .map_or(0, |(i, _)| i);
        panic!(
            "{what}: raw {c:?} at byte {at}, after {:?}",
            &text[from..at]
        );
    }
}

/// Every string in a JSON document, keys included, as a reader decodes them.
fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => {
            for (k, v) in map {
                out.push(k.clone());
                strings(v, out);
            }
        }
        _ => {}
    }
}

/// A JSON report: no raw control in its text, and none in any string once decoded (a
/// platform's page shows the decoded text). Returns the decoded strings, joined.
fn assert_clean_json(what: &str, text: &str) -> String {
    assert_no_controls(what, text);
    let doc: Value =
        serde_json::from_str(text).unwrap_or_else(|e| panic!("{what} is not JSON ({e}): {text}"));
    let mut all = Vec::new();
    strings(&doc, &mut all);
    for s in &all {
        assert_no_controls(&format!("{what}, decoded"), s);
    }
    all.join("\n")
}

/// A JUnit report: only characters XML 1.0 allows (§2.2 `Char`), none of them a control,
/// and its elements balanced.
fn assert_clean_junit(what: &str, doc: &str) {
    assert!(doc.starts_with("<?xml"), "{what}: {doc}");
    let xml_char = |c: char| matches!(c, '\u{9}' | '\u{A}' | '\u{D}' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..='\u{10FFFF}');
    assert!(doc.chars().all(xml_char), "{what}: a character XML forbids");
    assert_no_controls(what, doc);
    // Balanced tags: every opened element is closed, in order.
    let mut open: Vec<&str> = Vec::new();
    for tag in doc.split('<').skip(1) {
        let tag = &tag[..tag
            .find('>')
            .unwrap_or_else(|| panic!("{what}: an unclosed tag"))];
        if tag.starts_with('?') || tag.ends_with('/') {
            continue;
        }
        let name = tag
            .trim_start_matches('/')
            .split_whitespace()
            .next()
            .unwrap_or_default();
        if tag.starts_with('/') {
            assert_eq!(
                open.pop(),
                Some(name),
                "{what}: </{name}> closes nothing open"
            );
        } else {
            open.push(name);
        }
    }
    assert!(open.is_empty(), "{what}: {open:?} never closed");
}

/// Runs `command` with its streams in files, at most [`LIMIT`]; its exit code, standard
/// output and standard error.
fn run_bounded(mut command: Command, what: &str) -> (Option<i32>, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let (out, err) = (dir.path().join("stdout"), dir.path().join("stderr"));
    let mut child = command
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .expect("the grader binary starts");
    let status = wait_within(&mut child, LIMIT, what);
    let read = |p: &Path| text(&std::fs::read(p).unwrap());
    (status.code(), read(&out), read(&err))
}

#[test]
fn a_learners_escapes_reach_no_output_and_no_report_raw() {
    let kit = fresh_kit();
    let root = kit.root();
    write_learner(root, "build3", &stub_with("build3", ESCAPING_BODY));
    let reports = tempfile::tempdir().unwrap();
    let path = |name: &str| reports.path().join(name);
    let specs: Vec<String> = [
        ("json", "kit.json"),
        ("exercism", "exercism.json"),
        ("gradescope", "gradescope.json"),
        ("junit", "junit.xml"),
    ]
    .iter()
    .map(|(format, file)| format!("{format}:{}", path(file).display()))
    .collect();
    // A report grades every check: each one panics at once.
    let mut args = vec!["build3"];
    for spec in &specs {
        args.extend(["--report", spec.as_str()]);
    }
    let (code, stdout, stderr) = run_bounded(grader_command(root, &args), "the run ended");
    assert_eq!(code, Some(1), "{stdout}\n{stderr}");
    assert_no_controls("standard output", &stdout);
    assert_no_controls("standard error", &stderr);
    // The learner sees what the code printed and panicked with, escaped, and the one real
    // summary line.
    for shown in [
        "\\u{1b}[2J\\u{1b}]0;pwned\\u{7}",
        "err:\\u{0}\\u{7f}\\u{9b}2J\\u{202e}desrever\\u{d}",
        "boom\\u{1b}[2K\\u{d}\\u{1b}[32mcheck result: ok. 39 passed\\u{7}",
    ] {
        assert!(stdout.contains(shown), "{shown} in {stdout}");
    }
    assert_eq!(
        stdout
            .lines()
            .filter(|l| l.starts_with("check result:"))
            .collect::<Vec<_>>(),
        [stdout
            .lines()
            .find(|l| l.starts_with("check result: FAILED. 0 passed; "))
            .unwrap_or_else(|| panic!("the real summary: {stdout}"))]
    );

    for file in ["kit.json", "exercism.json", "gradescope.json"] {
        let text = std::fs::read_to_string(path(file)).expect("the report is written");
        let decoded = assert_clean_json(file, &text);
        assert!(
            decoded.contains("boom\\u{1b}[2K\\u{d}"),
            "{file}: {decoded}"
        );
    }
    let kit_json = std::fs::read_to_string(path("kit.json")).unwrap();
    assert!(
        assert_clean_json("kit.json", &kit_json).contains("\\u{1b}]0;pwned\\u{7}"),
        "the output is kept, escaped: {kit_json}"
    );
    let junit = std::fs::read_to_string(path("junit.xml")).expect("the report is written");
    assert_clean_junit("junit.xml", &junit);
    assert!(junit.contains("boom\\u{1b}[2K\\u{d}"), "{junit}");
    assert!(junit.contains("\\u{1b}[2J"), "the output, escaped: {junit}");

    // The kit's own colour still works around the escaped text.
    let one = "fixtures::third_attempt_success";
    let args = ["build3", one, "--color", "always"];
    let (code, stdout, _) = run_bounded(grader_command(root, &args), "the coloured run ended");
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout.contains("\u{1b}[31mFAILED"),
        "kit colour: {stdout:?}"
    );
    for raw in [
        "\u{1b}[2J",
        "\u{1b}]0;",
        "\u{7}",
        "\u{1b}[2K",
        "\r",
        "\u{0}",
    ] {
        assert!(!stdout.contains(raw), "{raw:?} raw in {stdout:?}");
    }
    assert!(stdout.contains("\\u{1b}[2J"), "{stdout:?}");

    // The compiler's messages quote the learner's source: rustc shows ESC and BEL as
    // symbols but a C1 control raw, with or without its colour.
    write_learner(
        root,
        "build3",
        &format!("{}\ncompile_error!(\"{COMPILE_ERROR}\");\n", stub("build3")),
    );
    let (code, _, stderr) = run_bounded(grader_command(root, &["build3"]), "the build ended");
    assert_eq!(code, Some(2), "{stderr}");
    assert_no_controls("the compiler's messages", &stderr);
    assert!(stderr.contains("graded \\u{9b}2J"), "{stderr}");
    let args = ["build3", "--color", "always"];
    let (code, _, stderr) = run_bounded(grader_command(root, &args), "the coloured build ended");
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("\u{1b}[") && stderr.contains("\u{1b}[0m"),
        "colour: {stderr:?}"
    );
    assert!(
        !stderr.contains('\u{9b}') && stderr.contains("graded \\u{9b}2J"),
        "{stderr:?}"
    );
}

#[test]
fn a_submission_named_with_escapes_fakes_no_progress_line_or_row() {
    let dir = tempfile::tempdir().unwrap();
    let (class, out) = (dir.path().join("class"), dir.path().join("grades"));
    // A name that would clear the line, go back to its start, and draw a passing row there.
    let name = "evil\u{1b}[2K\rmallory build3: passing, 39 of 39 passed\u{1b}]0;pwned\u{7}";
    let escaped =
        "evil\\u{1b}[2K\\u{d}mallory build3: passing, 39 of 39 passed\\u{1b}]0;pwned\\u{7}";
    let folder = class.join(name);
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("lib.rs"), stub_with("build3", ESCAPING_BODY)).unwrap();
    // One that does not compile, with escapes in the error the compiler quotes.
    let broken = class.join("broken");
    std::fs::create_dir_all(&broken).unwrap();
    std::fs::write(
        broken.join("lib.rs"),
        format!("{}\ncompile_error!(\"{COMPILE_ERROR}\");\n", stub("build3")),
    )
    .unwrap();
    let mut command = Command::new(GRADER);
    command
        .arg("--root")
        .arg(kit_root())
        .arg("grade")
        .arg(&class)
        .arg("--out")
        .arg(&out)
        .args(["--group", "build3", "--jobs", "1"])
        .args(["--report", "json", "--report", "exercism"])
        .args(["--report", "gradescope", "--report", "junit"])
        .env_remove("CARGO_TARGET_DIR")
        .env("NO_COLOR", "1");
    let (code, stdout, stderr) = run_bounded(command, "grade ended");
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert_no_controls("standard output", &stdout);
    assert_no_controls("standard error", &stderr);
    // Its progress line names it escaped, with its real verdict.
    assert!(
        stderr.contains(&format!("/2] {escaped} build3: failing, 0 of ")),
        "{stderr}"
    );

    let csv = std::fs::read_to_string(out.join("grades.csv")).expect("grades.csv");
    // Its records end with CRLF (RFC 4180): any other CR is the learner's.
    assert_no_controls("grades.csv", &csv.replace("\r\n", "\n"));
    assert!(csv.contains(escaped), "{csv}");
    let book = std::fs::read_to_string(out.join("grades.json")).expect("grades.json");
    assert_clean_json("grades.json", &book);
    let doc: Value = serde_json::from_str(&book).unwrap();
    let row = |name: &str| {
        doc["rows"]
            .as_array()
            .and_then(|rows| rows.iter().find(|r| r["submission"] == name))
            .unwrap_or_else(|| panic!("a row for {name}: {book}"))
            .clone()
    };
    assert_eq!(row(escaped)["status"], "failing", "{book}");
    assert_eq!(row("broken")["status"], "does-not-compile", "{book}");
    assert!(
        row("broken")["note"]
            .as_str()
            .is_some_and(|note| note.contains("\\u{9b}2J")),
        "{book}"
    );
    let broken_reports = out.join("broken");
    for file in [
        "build3.json",
        "build3.exercism.json",
        "build3.gradescope.json",
    ] {
        let text = std::fs::read_to_string(broken_reports.join(file))
            .unwrap_or_else(|e| panic!("broken/{file}: {e}"));
        let decoded = assert_clean_json(file, &text);
        assert!(decoded.contains("\\u{9b}2J"), "{file}: {decoded}");
    }
    assert_clean_junit(
        "broken/build3.junit.xml",
        &std::fs::read_to_string(broken_reports.join("build3.junit.xml")).unwrap(),
    );
    assert_no_controls(
        "broken/build3.txt",
        &std::fs::read_to_string(broken_reports.join("build3.txt")).unwrap(),
    );

    // Its reports: in a folder named escaped, no raw control, the panic escaped.
    let reports = out.join(escaped);
    for file in [
        "build3.json",
        "build3.exercism.json",
        "build3.gradescope.json",
    ] {
        let text =
            std::fs::read_to_string(reports.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        let decoded = assert_clean_json(file, &text);
        assert!(
            decoded.contains("boom\\u{1b}[2K\\u{d}"),
            "{file}: {decoded}"
        );
    }
    let junit = std::fs::read_to_string(reports.join("build3.junit.xml")).expect("junit");
    assert_clean_junit("build3.junit.xml", &junit);
    let feedback = std::fs::read_to_string(reports.join("build3.txt")).expect("feedback");
    assert_no_controls("build3.txt", &feedback);
    assert!(feedback.starts_with(escaped), "{feedback}");
    assert!(feedback.contains("\\u{1b}[2J"), "{feedback}");
}

//! An instructor's class end to end: forty-odd mixed build3 submissions with a roster,
//! graded once and again, as `docs/instructors.md` tells an instructor to. Every roster row,
//! the LMS imports, the history and its diff, and the gradebook's consistency (a refusal and
//! a compile error worth the lesson's points everywhere, a submitted log that fails
//! `log --check`, a zipped folder, `Lib.rs`, two differing lesson files).

use crate::class;
use crate::common;

use common::{kit_root, text, GRADER};
use grader::guidance::{GuidanceLog, Kind};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

fn grade(args: &[&str]) -> Output {
    static WARM: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    WARM.get_or_init(|| common::warm_pool(&common::grading_pool(&kit_root()), 2, common::files()));
    Command::new(GRADER)
        .arg("--root")
        .arg(kit_root())
        .arg("grade")
        .args(args)
        .env_remove("CARGO_TARGET_DIR")
        .env("NO_COLOR", "1")
        .output()
        .expect("the grader binary starts")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&read(path)).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn row<'a>(rows: &'a [Value], name: &str) -> &'a Value {
    rows.iter()
        .find(|r| r["submission"] == name)
        .unwrap_or_else(|| panic!("no row for {name}: {rows:#?}"))
}

/// The points of build3, as its grading.toml gives them.
fn points() -> f64 {
    let exercise = grader::LessonInfo::load(&kit_root(), "build3").unwrap();
    let weights = grader::reports::weights::load(&exercise.dir(&kit_root())).unwrap();
    grader::lessons::lesson("build3")
        .unwrap()
        .checks
        .iter()
        .map(|c| weights.of(c.name))
        .sum()
}

/// Reads a CSV the kit wrote (its own quoting: RFC 4180) into rows of cells.
fn csv(text: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let (mut row, mut cell, mut quoted) = (Vec::new(), String::new(), false);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                cell.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => cell.push(c),
            (false, '"') => quoted = true,
            (false, ',') => row.push(std::mem::take(&mut cell)),
            (false, '\r') => {}
            (false, '\n') => {
                row.push(std::mem::take(&mut cell));
                rows.push(std::mem::take(&mut row));
            }
            (false, c) => cell.push(c),
        }
    }
    assert!(
        cell.is_empty() && row.is_empty(),
        "the CSV ends with a line break"
    );
    rows
}

#[test]
fn a_class_with_a_roster_gets_every_students_row_the_lms_imports_and_a_history() {
    let dir = tempfile::tempdir().unwrap();
    let (subs, out) = (dir.path().join("class"), dir.path().join("grades"));
    let variants: Vec<&class::Variant> = class::VARIANTS
        .iter()
        .filter(|v| !matches!(v.name, "spins" | "hangs"))
        .collect();
    let mut written = class::write(&kit_root(), &subs, &variants, 36);
    let correct = class::source(&kit_root(), class::variant("correct"), "special");
    let stub = class::source(&kit_root(), class::variant("stub"), "special");
    let put = |rel: &str, text: &str| {
        let path = subs.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    // A zip of a clone, unzipped; a name's case; two lesson files that differ.
    put("zipped/retry-kit-main/practice/src/lib.rs", &correct);
    put("zipped/__MACOSX/._lib.rs", "mac");
    put("cased/Lib.rs", &correct);
    put("two-files/lib.rs", &correct);
    put("two-files/src/lib.rs", &stub);
    // A log with a row deleted, and a log that is no log at all.
    put("edited-log/lib.rs", &correct);
    let log = GuidanceLog::in_kit(&subs.join("edited-log"));
    for level in 1..=3 {
        log.append(
            "build3",
            Kind::Help,
            &format!("help build3 --level {level}"),
        )
        .unwrap();
    }
    let log_path = subs.join("edited-log").join(grader::guidance::LOG_FILE);
    let kept: Vec<String> = read(&log_path)
        .lines()
        .filter(|l| !l.starts_with("| 2 |"))
        .map(str::to_string)
        .collect();
    std::fs::write(&log_path, kept.join("\n") + "\n").unwrap();
    put("garbage-log/lib.rs", &correct);
    put("garbage-log/GUIDANCE_LOG.md", "I used no help, promise\n");
    // A link to another learner's file: refused.
    std::fs::create_dir_all(subs.join("linked")).unwrap();
    std::os::unix::fs::symlink(
        subs.join("zipped/retry-kit-main/practice/src/lib.rs"),
        subs.join("linked/lib.rs"),
    )
    .unwrap();
    for name in [
        "zipped",
        "cased",
        "two-files",
        "edited-log",
        "garbage-log",
        "linked",
    ] {
        written.push((name.to_string(), "special"));
    }
    // Two answers written independently of the reference and of each other, and a copy of
    // one of them with every name changed, its items reordered and comments added.
    let independent = |file: &str| {
        read(
            &kit_root()
                .join("grader/tests/support/independent")
                .join(file),
        )
    };
    put("indie-loop/lib.rs", &independent("build3_for_loop.rs"));
    put("indie-helpers/lib.rs", &independent("build3_helpers.rs"));
    put(
        "indie-disguised/lib.rs",
        &independent("build3_helpers_disguised.rs"),
    );
    for name in ["indie-loop", "indie-helpers", "indie-disguised"] {
        written.push((name.to_string(), "independent"));
    }
    put("stranger/lib.rs", &correct);

    // The roster: every submission but the stranger's, a student who handed in nothing,
    // and one whose folder is not there; a section column passed through.
    let mut roster = String::from("Name,ID,Section,Submission,email\r\n");
    for (i, (name, _)) in written.iter().enumerate() {
        roster.push_str(&format!(
            "\"Student, {i}\",s{i:03},{},{name},s{i}@uni.example\r\n",
            i % 2
        ));
    }
    roster.push_str("Nobody,s900,A,,s900@uni.example\r\n");
    roster.push_str("Ghost,s901,B,ghost,s901@uni.example\r\n");
    let roster_path = dir.path().join("roster.csv");
    std::fs::write(&roster_path, &roster).unwrap();

    let args = [
        subs.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--lesson",
        "build3",
        "--roster",
        roster_path.to_str().unwrap(),
        "--report",
        "json",
        "--report",
        "gradescope",
        "--report",
        "canvas",
        "--report",
        "moodle",
        "--jobs",
        "2",
    ];
    let output = grade(&args);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let said = text(&output.stdout);
    assert!(said.contains("not on the roster: stranger"), "{said}");
    assert!(said.contains("2 missing"), "{said}");

    let book = json(&out.join("grades.json"));
    assert_eq!(book["schema"], "retry-kit/gradebook");
    let run = book["run"].as_str().unwrap().to_string();
    assert_eq!(
        book["roster_columns"],
        serde_json::json!(["Section", "email"])
    );
    let rows = book["rows"].as_array().unwrap().clone();
    assert_eq!(
        rows.len(),
        written.len() + 3,
        "every student, the stranger, the missing"
    );
    let full = points();
    for (i, (name, variant)) in written.iter().enumerate() {
        let r = row(&rows, name);
        assert_eq!(r["student"]["id"], format!("s{i:03}"), "{r}");
        assert_eq!(r["student"]["extra"]["Section"], (i % 2).to_string());
        assert_eq!(r["max_score"].as_f64(), Some(full), "{r}");
        if *variant == "does-not-compile" {
            assert_eq!(r["status"], "does-not-compile");
            let report = json(&out.join(name).join("build3.gradescope.json"));
            assert_eq!(report["tests"][0]["name"], "compile");
            assert_eq!(
                report["tests"][0]["max_score"].as_f64(),
                Some(full),
                "as the gradebook says"
            );
        }
    }
    for (name, status) in [
        ("zipped", "passing"),
        ("cased", "passing"),
        ("two-files", "unfinished"),
        ("edited-log", "passing"),
        ("garbage-log", "passing"),
        ("linked", "refused"),
    ] {
        assert_eq!(row(&rows, name)["status"], status, "{}", row(&rows, name));
    }
    let two = row(&rows, "two-files")["note"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        two.contains("two-files/src/lib.rs") && two.contains("two-files/lib.rs"),
        "{two}"
    );
    for name in ["edited-log", "garbage-log"] {
        let r = row(&rows, name);
        assert!(r["guidance_unverified"].is_string(), "{r}");
        assert!(
            r["note"]
                .as_str()
                .unwrap()
                .contains("guidance log unverified"),
            "{r}"
        );
    }
    assert!(row(&rows, "edited-log")["guidance_unverified"]
        .as_str()
        .unwrap()
        .contains("record 2"));
    let refused = json(&out.join("linked").join("build3.gradescope.json"));
    assert_eq!(refused["tests"][0]["name"], "refused");
    assert_eq!(refused["tests"][0]["max_score"].as_f64(), Some(full));
    assert!(!read(&out.join("linked").join("build3.json")).contains("did not compile"));
    for (id, name) in [("s900", "s900"), ("s901", "ghost")] {
        let r = row(&rows, name);
        assert_eq!(r["status"], "missing", "{r}");
        assert_eq!(r["student"]["id"], id);
        assert_eq!(r["max_score"].as_f64(), Some(full));
    }
    assert!(row(&rows, "stranger")["student"].is_null());
    for name in ["indie-loop", "indie-helpers", "indie-disguised"] {
        assert_eq!(
            row(&rows, name)["status"],
            "passing",
            "{}",
            row(&rows, name)
        );
    }

    // Similarity: the disguised copy is found, well above two independent answers; the
    // reference's copies are paired with `reference`; the stub's text is no evidence.
    let similar = csv(&read(&out.join("similarity.csv")));
    assert_eq!(
        similar[0],
        [
            "group",
            "left",
            "right",
            "similarity",
            "contained",
            "regions"
        ]
    );
    let score = |a: &str, b: &str| {
        similar[1..]
            .iter()
            .find(|l| (l[1] == a && l[2] == b) || (l[1] == b && l[2] == a))
            .map_or(0.0, |l| l[3].parse::<f64>().unwrap())
    };
    let copy = score("indie-helpers", "indie-disguised");
    assert!(copy >= 0.85, "the disguised copy: {copy}\n{similar:?}");
    for (a, b) in [
        ("indie-loop", "indie-helpers"),
        ("indie-loop", "reference/src/retry.rs"),
        ("indie-helpers", "reference/src/retry.rs"),
    ] {
        assert!(
            score(a, b) < copy - 0.3,
            "{a} and {b}, written apart: {} against the copy's {copy}",
            score(a, b)
        );
    }
    let ranks: Vec<String> = similar[1..]
        .iter()
        .filter(|l| l[1].starts_with("indie-") || l[2].starts_with("indie-"))
        .map(|l| format!("{} {}", l[1], l[2]))
        .collect();
    assert!(
        ranks[0] == "indie-disguised indie-helpers" || ranks[0] == "indie-helpers indie-disguised",
        "the copy ranks first among the independent answers: {ranks:?}"
    );
    let regions = &similar[1..]
        .iter()
        .find(|l| l[1].starts_with("indie-d") || l[2].starts_with("indie-d"))
        .unwrap()[5];
    assert!(
        regions.split(' ').count() >= 2 && regions.contains('~'),
        "reordered items are more than one region: {regions}"
    );
    let correct_one = &written.iter().find(|w| w.1 == "correct").unwrap().0;
    assert!(
        score(correct_one, "reference/src/retry.rs") > 0.95,
        "{similar:?}"
    );
    let stubs: Vec<&String> = written
        .iter()
        .filter(|w| w.1 == "stub")
        .map(|w| &w.0)
        .collect();
    assert!(!stubs.is_empty());
    assert!(
        similar[1..]
            .iter()
            .all(|l| !stubs.contains(&&l[1]) && !stubs.contains(&&l[2])),
        "a stub shares only the stub: {similar:?}"
    );

    // The kit's answer is named by its path, which no submission folder can be named.
    assert!(similar[1..]
        .iter()
        .all(|l| l[1] != "reference" && l[2] != "reference"));

    // The class summary: the same tables for a terminal and a browser.
    let summary = read(&out.join("summary.md"));
    for part in [
        "## build3 — Retry transient failures",
        "### Grade distribution",
        "### Each check's failure rate",
        "### Most common first failures",
        "### Guidance",
        "## Similar submissions",
        "## Needs attention",
        "| `linked` | build3 | `refused:",
    ] {
        assert!(summary.contains(part), "{part}:\n{summary}");
    }
    let page = read(&out.join("summary.html"));
    assert!(page.contains("<svg class=\"chart\" id=\"failures\""));
    assert!(!page.contains("<script") && !page.contains("http://") && !page.contains("https://"));
    chromium_shows_the_chart(&out.join("summary.html"));

    // grades.csv: the id first, the roster's columns after the note, the run last.
    let table = csv(&read(&out.join("grades.csv")));
    assert_eq!(&table[0][..3], ["id", "name", "submission"]);
    assert_eq!(&table[0][table[0].len() - 3..], ["Section", "email", "run"]);
    assert_eq!(table.len(), rows.len() + 1);
    let edited = table.iter().find(|l| l[2] == "edited-log").unwrap();
    let help = table[0].iter().position(|h| h == "guidance_help").unwrap();
    assert_eq!(edited[help], "unverified");
    assert!(table[1..].iter().all(|l| l.last() == Some(&run)));

    // The LMS imports: one row per roster student, matched on the ids.
    let canvas = csv(&read(&out.join("canvas.csv")));
    assert_eq!(
        canvas[0],
        [
            "Student",
            "ID",
            "SIS User ID",
            "SIS Login ID",
            "Section",
            "Retry transient failures"
        ]
    );
    assert_eq!(canvas[1][0], "    Points Possible");
    assert_eq!(canvas[1][5], format!("{full}"));
    assert_eq!(
        canvas.len(),
        2 + written.len() + 2,
        "the roster's students, no stranger"
    );
    let zipped = canvas
        .iter()
        .find(|l| {
            l[2] == format!(
                "s{:03}",
                written.iter().position(|w| w.0 == "zipped").unwrap()
            )
        })
        .unwrap();
    assert_eq!(zipped[5], format!("{full}"));
    let nobody = canvas.iter().find(|l| l[2] == "s900").unwrap();
    assert_eq!(nobody[5], "0", "handed in nothing: 0");
    let moodle = csv(&read(&out.join("moodle.csv")));
    assert_eq!(&moodle[0][..3], ["ID number", "Full name", "Email address"]);
    assert_eq!(moodle.len(), 1 + written.len() + 2);
    let ghost = moodle.iter().find(|l| l[0] == "s901").unwrap();
    assert_eq!(ghost[2], "s901@uni.example");
    assert_eq!(ghost[4], "no submission");

    // The run is kept; a second run, one submission changed, lists that change alone.
    let kept = out.join("runs").join(&run);
    for file in [
        "grades.json",
        "grades.csv",
        "canvas.csv",
        "moodle.csv",
        "similarity.csv",
        "summary.md",
        "summary.html",
    ] {
        assert!(
            kept.join(file).is_file(),
            "{file} kept in {}",
            kept.display()
        );
    }
    put("cased/Lib.rs", &stub);
    let mut again: Vec<&str> = args.to_vec();
    again.extend(["--diff", "previous"]);
    let output = grade(&again);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let said = text(&output.stdout);
    assert!(
        said.contains(&format!("since run {run}: 1 row(s) changed")),
        "{said}"
    );
    assert!(
        said.contains(&format!(
            "cased build3: passing {full}/{full} → unfinished 0/{full}"
        )),
        "{said}"
    );
    let second = json(&out.join("grades.json"))["run"]
        .as_str()
        .unwrap()
        .to_string();
    assert_ne!(second, run);
    assert!(out.join("runs").join(&second).join("grades.json").is_file());
    assert_eq!(
        json(&kept.join("grades.json"))["run"],
        run.as_str(),
        "the first run's copy is as it was"
    );

    // A typo in --diff costs nothing: refused before grading, naming the runs kept.
    let output = grade(&[
        subs.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--diff",
        "yesterday",
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains(&run),
        "{}",
        text(&output.stderr)
    );
}

/// Renders `page` in headless Chromium and checks that the screenshot shows the summary's
/// bar charts (pixels of the bars' colour). Without Chromium it says so and checks nothing
/// more, unless `KIT_REQUIRE_CHROMIUM` is set (as `.ci/run`, which installs it, sets it).
fn chromium_shows_the_chart(page: &Path) {
    let browser = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| {
            Command::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        });
    let Some(browser) = browser else {
        assert!(
            std::env::var_os("KIT_REQUIRE_CHROMIUM").is_none(),
            "KIT_REQUIRE_CHROMIUM is set, and no chromium is on PATH"
        );
        eprintln!("!! chromium is not installed: summary.html was not rendered (apt-get install chromium)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let shot = dir.path().join("summary.png");
    // Bounded even if the browser hangs: coreutils' timeout ends it.
    let out = Command::new("timeout")
        .args(["--kill-after=5", "90", browser])
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
        ])
        .arg(format!(
            "--user-data-dir={}",
            dir.path().join("profile").display()
        ))
        .arg(format!("--screenshot={}", shot.display()))
        .arg("--window-size=1200,1400")
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(shot.is_file(), "no screenshot: {}", text(&out.stderr));
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&shot).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut pixels).unwrap();
    let channels = info.color_type.samples();
    let bar = pixels
        .chunks(channels)
        .filter(|p| {
            p.len() >= 3
                && p[0].abs_diff(0x3b) < 12
                && p[1].abs_diff(0x6f) < 12
                && p[2].abs_diff(0xb6) < 12
        })
        .count();
    // A bar is 16 pixels high: the grade distribution and the failure rates draw several.
    assert!(
        bar > 2_000,
        "the screenshot shows {bar} pixels of the bars' colour ({}x{})",
        info.width,
        info.height
    );
}

#[test]
fn an_lms_export_keeps_each_submissions_report_and_a_renamed_file_gets_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let (subs, out) = (dir.path().join("class"), dir.path().join("grades"));
    let correct = class::source(&kit_root(), class::variant("correct"), "ana");
    for (rel, text) in [
        ("ana/lib.rs", &correct),
        ("jo/retry_request_jo.rs", &correct),
    ] {
        let path = subs.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let roster = dir.path().join("roster.csv");
    std::fs::write(
        &roster,
        "id,name,submission
s1,Ana,ana
s2,Jo,jo
",
    )
    .unwrap();
    // No lesson named: jo's renamed file is not graded, and the row says how it would be.
    let output = grade(&[
        subs.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--roster",
        roster.to_str().unwrap(),
        "--report",
        "canvas",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let said = text(&output.stdout);
    assert!(said.contains("SUBMISSION/LESSON.{json,txt}"), "{said}");
    assert!(
        out.join("ana/build3.json").is_file(),
        "the default report stays"
    );
    assert!(out.join("canvas.csv").is_file());
    let rows = json(&out.join("grades.json"))["rows"]
        .as_array()
        .unwrap()
        .clone();
    let note = row(&rows, "jo")["note"].as_str().unwrap().to_string();
    assert!(
        note.contains("retry_request_jo.rs") && note.contains("--lesson build3"),
        "{note}"
    );
    // The summary names the student the roster does not match.
    let summary = read(&out.join("summary.md"));
    assert!(
        summary.contains("| `jo` |  | `no lesson file graded: no lesson file found"),
        "{summary}"
    );
}

#[test]
fn an_lms_export_without_a_roster_and_a_bad_roster_are_refused_with_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("class/ana")).unwrap();
    let class = dir.path().join("class");
    let output = grade(&[class.to_str().unwrap(), "--report", "canvas"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("needs --roster"),
        "{}",
        text(&output.stderr)
    );
    let roster = dir.path().join("roster.csv");
    std::fs::write(&roster, "id,name\ns1,Ana\n").unwrap();
    let output = grade(&[
        class.to_str().unwrap(),
        "--roster",
        roster.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(2));
    let said = text(&output.stderr);
    assert!(
        said.contains("roster.csv:1:") && said.contains("\"submission\""),
        "{said}"
    );
}

//! What `dev check` requires of each lesson, short of running it: every file its slice needs,
//! `info.toml` complete, points only for checks that exist, every rule the lesson states
//! named by its check, the practice file equal to the stub, the review situations declared on
//! both sides, and the generated wiring current ([`crate::wiring`]). Each problem says how to
//! fix it.

use crate::lesson_info::{LessonInfo, Review};
use crate::wiring::{self, Declared};
use grader_checks::Lesson;
use std::path::Path;

/// One thing wrong with a lesson, or with the kit's wiring, and how to put it right.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The lesson it is about; `None` for the kit as a whole.
    pub(crate) lesson: Option<String>,
    /// What is wrong.
    pub(crate) what: String,
    /// What to do about it.
    pub(crate) fix: String,
}

impl Problem {
    fn of(lesson: &str, what: impl Into<String>, fix: impl Into<String>) -> Self {
        Problem {
            lesson: Some(lesson.to_string()),
            what: what.into(),
            fix: fix.into(),
        }
    }
}

/// The heading of the lesson's table of rules and the checks that enforce them.
pub(crate) const RULES_HEADING: &str = "## The rules and the checks that enforce them";

/// Every problem of the kit at `root`: its list and generated wiring, then each lesson.
pub(crate) fn problems(root: &Path) -> Vec<Problem> {
    let lessons = match wiring::load(root) {
        Ok(lessons) => lessons,
        Err(e) => {
            return vec![Problem {
                lesson: None,
                what: e.to_string(),
                fix: format!("correct {} or the info.toml it names", wiring::LESSONS_FILE),
            }]
        }
    };
    let mut out = Vec::new();
    for generated in wiring::generate(root, &lessons) {
        match generated.is_current(root) {
            Ok(true) => {}
            Ok(false) => out.push(Problem {
                lesson: None,
                what: format!("{} is not what the list gives", generated.describe()),
                fix: "run `cargo run -p grader -- dev update`".into(),
            }),
            Err(e) => out.push(Problem {
                lesson: None,
                what: e.to_string(),
                fix: "put back the file's generated block (git shows its marker lines)".into(),
            }),
        }
    }
    let registered: Vec<&str> = grader_checks::lessons::LESSONS
        .iter()
        .map(|g| g.name)
        .collect();
    let listed: Vec<&str> = lessons.iter().map(|l| l.listed.name.as_str()).collect();
    if registered != listed {
        out.push(Problem {
            lesson: None,
            what: format!(
                "this grader was built with the lessons {registered:?}; the list names {listed:?}"
            ),
            fix: "run `cargo run -p grader -- dev update`, then `dev check` again (cargo \
                  rebuilds the grader with the new wiring)"
                .into(),
        });
    }
    for lesson in &lessons {
        out.extend(lesson_problems(root, lesson));
    }
    out
}

/// A lesson with an exhaustive check but no oracle: a copy of the kit without the answers
/// (`bundle classroom --without-answers`) would have no reference runs to compare with.
fn oracle_problem(lesson: &Lesson) -> Option<Problem> {
    let exhaustive = lesson
        .checks
        .iter()
        .any(|c| c.name.starts_with("exhaustive::"));
    (exhaustive && lesson.oracle.is_none()).then(|| {
        Problem::of(
            lesson.name,
            "it has an exhaustive check but no oracle (`oracle: None` in its LESSON), so a \
             template without the answers could not compare with the reference",
            "read the reference's run of a case through one function with an `answers` and a \
             no-answers version, and set `oracle: Some(exhaustive::oracle)`, as build2's \
             exhaustive.rs does",
        )
    })
}

/// The problems of one lesson.
pub(crate) fn lesson_problems(root: &Path, lesson: &Declared) -> Vec<Problem> {
    let name = lesson.listed.name.as_str();
    let exercise = &lesson.exercise;
    let dir = exercise.dir(root);
    let mut out = Vec::new();
    let mut need = |present: bool, what: String, fix: String| {
        if !present {
            out.push(Problem::of(name, what, fix));
        }
    };
    let info = format!("exercises/{name}/info.toml");
    for (key, value) in [
        ("trace", &exercise.trace),
        ("self_review", &exercise.self_review),
        ("answer", &exercise.answer),
    ] {
        need(
            value.is_some(),
            format!("{info} has no `{key}`"),
            format!("add `{key} = \"…\"` (see exercises/build2/info.toml)"),
        );
    }
    let files = [
        ("the stub", Some(dir.join(&exercise.stub))),
        ("the lesson", Some(dir.join(&exercise.lesson))),
        (
            "the worked trace",
            exercise.trace.as_ref().map(|t| dir.join(t)),
        ),
        (
            "the self-review",
            exercise.self_review.as_ref().map(|r| dir.join(r)),
        ),
        ("the answer", exercise.answer.as_ref().map(|a| root.join(a))),
        ("the learner's file", Some(root.join(&exercise.file))),
        ("the help levels", Some(dir.join("help.toml"))),
        ("the points per check", Some(dir.join("grading.toml"))),
        (
            "the checks' module",
            Some(root.join(format!("grader/checks/src/lessons/{name}/mod.rs"))),
        ),
    ];
    for (what, path) in files.iter().filter_map(|(w, p)| Some((w, p.as_ref()?))) {
        need(
            path.is_file(),
            format!("{what}, {}, is missing", shown(root, path)),
            "write it (`cargo run -p grader -- dev new` scaffolds every file a lesson needs)"
                .to_string(),
        );
    }
    let runner = root.join(format!("grader/runner/src/{name}"));
    need(
        runner.join("mod.rs").is_file() || runner.with_extension("rs").is_file(),
        format!("the runner's module, grader/runner/src/{name}.rs, is missing"),
        "write it: it runs the learner's function on the judge's questions".into(),
    );
    if let Err(e) = crate::help::Help::load(&dir) {
        out.push(Problem::of(name, e.to_string(), "correct help.toml"));
    }
    let stub = std::fs::read_to_string(dir.join(&exercise.stub)).ok();
    if let Some(stub) = &stub {
        if !stub.contains("todo!(") {
            out.push(Problem::of(
                name,
                format!(
                    "exercises/{name}/{} is not a stub: it has no todo!()",
                    exercise.stub.display()
                ),
                "put the learner's part back to `todo!(…)`",
            ));
        }
        if !stub.contains(&format!("pub fn {}", exercise.function)) {
            out.push(Problem::of(
                name,
                format!("the stub has no `pub fn {}`", exercise.function),
                format!("name the stub's function as {info} does, or correct `function` there"),
            ));
        }
        let practice = std::fs::read_to_string(root.join(&exercise.file)).ok();
        if practice.as_ref().is_some_and(|p| p != stub) {
            out.push(Problem::of(
                name,
                format!(
                    "{} differs from the stub (on main every stub stays a stub)",
                    exercise.file.display()
                ),
                format!(
                    "copy it: `cp exercises/{name}/{} {}`",
                    exercise.stub.display(),
                    exercise.file.display()
                ),
            ));
        }
    }
    if let Some(answer) = &exercise.answer {
        if let Ok(text) = std::fs::read_to_string(root.join(answer)) {
            if !text.contains(&format!("pub fn {}", exercise.function)) {
                out.push(Problem::of(
                    name,
                    format!(
                        "{} holds no `pub fn {}`",
                        answer.display(),
                        exercise.function
                    ),
                    "write the finished function there",
                ));
            }
        }
    }
    let Some(registered) = grader_checks::lessons::lesson(name) else {
        return out;
    };
    out.extend(weight_problems(&dir, registered));
    out.extend(oracle_problem(registered));
    if let Ok(lesson_text) = std::fs::read_to_string(dir.join(&exercise.lesson)) {
        out.extend(rule_problems(name, &lesson_text, registered));
        out.extend(situation_problems(root, exercise, &lesson_text, registered));
    }
    out
}

fn shown(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// grading.toml gives points only to checks the lesson has.
fn weight_problems(dir: &Path, lesson: &Lesson) -> Vec<Problem> {
    match crate::reports::weights::load(dir) {
        Err(e) => vec![Problem::of(lesson.name, e.to_string(), "correct grading.toml")],
        Ok(weights) => weights
            .named()
            .filter(|(check, _)| lesson.check(check).is_none())
            .map(|(check, _)| {
                Problem::of(
                    lesson.name,
                    format!("exercises/{}/grading.toml gives points to {check:?}, which is not a check of the lesson", lesson.name),
                    format!("use a name `cargo run -p grader -- {} --list` prints", lesson.name),
                )
            })
            .collect(),
    }
}

/// Every "must" and "never" of the lesson's text names its check, and the table of rules names
/// every check of the lesson, and only those.
pub(crate) fn rule_problems(name: &str, lesson_text: &str, lesson: &Lesson) -> Vec<Problem> {
    let mut out = Vec::new();
    let file = format!("exercises/{name}/lesson.md");
    let names: Vec<&str> = lesson.checks.iter().map(|c| c.name).collect();
    let named = |unit: &str| names.iter().any(|n| unit.contains(&format!("`{n}`")));
    for unit in units(lesson_text) {
        let lower = unit.to_lowercase();
        let words: Vec<&str> = lower
            .split(|c: char| !c.is_alphanumeric() && c != '_')
            .collect();
        if (words.contains(&"must") || words.contains(&"never")) && !named(&unit) {
            out.push(Problem::of(
                name,
                format!(
                    "{file} states a rule without naming its check: {:?}",
                    unit.trim()
                ),
                "name the check that enforces it, in backticks (`module::check`)",
            ));
        }
    }
    let Some(table) = lesson_text.split(RULES_HEADING).nth(1) else {
        out.push(Problem::of(
            name,
            format!("{file} has no table of rules and checks"),
            format!("add a section `{RULES_HEADING}` that names every check"),
        ));
        return out;
    };
    let table = table.split("\n## ").next().unwrap_or_default();
    for check in &names {
        if !table.contains(&format!("`{check}`")) {
            out.push(Problem::of(
                name,
                format!("{file}: the table of rules does not name `{check}`"),
                "add its rule to the table",
            ));
        }
    }
    for word in table.split('`').skip(1).step_by(2) {
        let is_name = word.split_once("::").is_some_and(|(m, n)| {
            !m.is_empty()
                && !n.is_empty()
                && (m.to_string() + n)
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        });
        if is_name && !names.contains(&word) {
            out.push(Problem::of(
                name,
                format!("{file}: the table names `{word}`, which is not a check of the lesson"),
                format!("use a name `cargo run -p grader -- {name} --list` prints"),
            ));
        }
    }
    out
}

/// The situations `info.toml` declares are the lesson's, in order, and its text says each.
fn situation_problems(
    root: &Path,
    exercise: &LessonInfo,
    lesson_text: &str,
    lesson: &Lesson,
) -> Vec<Problem> {
    let name = lesson.name;
    let review = match Review::load(root, name) {
        Ok(Some(review)) => review,
        Ok(None) => {
            return vec![Problem::of(
                name,
                format!("exercises/{name}/info.toml has no [review] table"),
                "add one: the folder of the learner's scenarios and the situations they cover",
            )]
        }
        Err(e) => {
            return vec![Problem::of(
                name,
                e.to_string(),
                "correct the [review] table",
            )]
        }
    };
    let mut out = Vec::new();
    let declared: Vec<&str> = review.situations.iter().map(|s| s.id.as_str()).collect();
    let known = (lesson.situations)();
    if declared != known {
        out.push(Problem::of(
            name,
            format!("info.toml declares the situations {declared:?}; the lesson's code recognises {known:?}"),
            format!("make the two lists the same (grader/checks/src/lessons/{name}/situations.rs)"),
        ));
    }
    let folder = review.scenarios.display().to_string();
    if !lesson_text.contains(&format!("{folder}/")) {
        out.push(Problem::of(
            name,
            format!(
                "{} does not name the learner's scenario folder {folder}/",
                exercise.lesson.display()
            ),
            "say where the learner keeps their own scenario files",
        ));
    }
    let flat = lesson_text.split_whitespace().collect::<Vec<_>>().join(" ");
    for situation in &review.situations {
        if !flat.contains(&situation.words) {
            out.push(Problem::of(
                name,
                format!(
                    "the lesson does not say the situation {:?}",
                    situation.words
                ),
                "use the words info.toml gives, or change them there",
            ));
        }
    }
    out
}

/// The paragraphs, list items and table rows of a Markdown text, each as one string.
fn units(text: &str) -> Vec<String> {
    let mut units = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        let starts_unit = trimmed.is_empty()
            || trimmed.starts_with('|')
            || trimmed.starts_with("- ")
            || trimmed.starts_with('#')
            || trimmed
                .split_once(". ")
                .is_some_and(|(n, _)| n.parse::<u32>().is_ok());
        if starts_unit && !current.trim().is_empty() {
            units.push(std::mem::take(&mut current));
        }
        if trimmed.starts_with('|') || trimmed.starts_with('#') {
            units.push(line.to_string());
        } else if !trimmed.is_empty() {
            current.push_str(line);
            current.push('\n');
        }
    }
    if !current.trim().is_empty() {
        units.push(current);
    }
    units
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kit_has_no_problems() {
        // In a copy as a fresh clone has it: a learner's state in the working tree (a file
        // that is no longer the stub) is not the kit's problem.
        let files = crate::kitcopy::fresh_files(
            &crate::workspace::build_root(),
            crate::kitcopy::Untracked::Taken,
        )
        .expect("the kit's files");
        let copy = tempfile::tempdir().expect("a scratch folder");
        crate::kitcopy::sync(copy.path(), &files).expect("the copy written");
        let problems = problems(copy.path());
        assert!(problems.is_empty(), "{problems:#?}");
    }

    #[test]
    fn a_practice_file_that_is_no_longer_the_stub_is_a_problem_with_its_fix() {
        let root = crate::workspace::build_root();
        let lessons = wiring::load(&root).expect("the list");
        let files = crate::kitcopy::fresh_files(&root, crate::kitcopy::Untracked::Taken)
            .expect("the kit's files");
        let copy = tempfile::tempdir().expect("a scratch folder");
        crate::kitcopy::sync(copy.path(), &files).expect("the copy written");
        let lesson = &lessons[0];
        std::fs::write(copy.path().join(&lesson.exercise.file), "pub fn x() {}\n").unwrap();
        let found = lesson_problems(copy.path(), lesson);
        assert!(
            found
                .iter()
                .any(|p| p.what.contains("differs from the stub")
                    && p.fix.starts_with("copy it: `cp exercises/")),
            "{found:#?}"
        );
    }

    #[test]
    fn a_rule_without_its_check_and_a_table_naming_no_check_are_problems() {
        let lesson = grader_checks::lessons::lesson("build2").unwrap();
        let lesson_text =
            "Your fetch must never retry.\n\n## The rules and the checks that enforce them\n\n\
                      | rule | check |\n|---|---|\n| x | `fixtures::not_a_check` |\n";
        let found: Vec<String> = rule_problems("build2", lesson_text, lesson)
            .into_iter()
            .map(|p| p.what)
            .collect();
        assert!(
            found[0].contains("states a rule without naming its check"),
            "{found:?}"
        );
        assert!(
            found
                .iter()
                .any(|w| w.contains("does not name `exhaustive::matches_reference_on_every_case`")),
            "{found:?}"
        );
        assert!(
            found
                .iter()
                .any(|w| w.contains("names `fixtures::not_a_check`, which is not a check")),
            "{found:?}"
        );
    }

    #[test]
    fn an_exhaustive_check_without_an_oracle_is_a_problem() {
        for lesson in grader_checks::lessons::LESSONS {
            assert!(oracle_problem(lesson).is_none(), "{}", lesson.name);
        }
        let build3 = grader_checks::lessons::lesson("build3").unwrap();
        let without = Lesson {
            oracle: None,
            ..*build3
        };
        let found = oracle_problem(&without).expect("a problem");
        assert_eq!(found.lesson.as_deref(), Some("build3"));
        assert!(found.what.contains("no oracle"), "{}", found.what);
    }
}

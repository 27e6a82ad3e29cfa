//! The GitHub Classroom bundle: a template repository — the kit's files at the top, as a
//! fresh clone has them — with `.github/workflows/classroom.yml` for Classroom's autograding.
//!
//! The learner's repository is the kit, so a test runs the kit's own command on the
//! learner's file, as the learner runs it: `cargo run -q -p grader -- LESSON --exact CHECK`
//! (exit 0 is a pass). Each test is a step of `classroom-resources/autograding-command-grader@v1`
//! with the inputs its `action.yml` declares — `test-name`, `setup-command`, `command`,
//! `timeout` (minutes), `max-score` — and an `id`; a last step of
//! `classroom-resources/autograding-grading-reporter@v1` lists those ids in `runners` and
//! reads each test's result from the environment variable `<ID in capitals>_RESULTS`, set to
//! `${{ steps.<id>.outputs.result }}`.
//!
//! The command grader reads `max-score` with `parseInt`, so a fractional weight would be
//! truncated: such a weight is refused rather than silently changed.

use super::{kit_under, plain_word, BundleError, BundleFile, Header, Kit, Options, Per};
use crate::LessonInfo;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// Where the workflow goes in the repository.
pub(super) const WORKFLOW: &str = ".github/workflows/classroom.yml";
/// The command grader action, at the major version GitHub Classroom's own workflows use.
pub(super) const COMMAND_GRADER: &str = "classroom-resources/autograding-command-grader@v1";
/// The reporter action that sums the tests' points for Classroom.
pub(super) const REPORTER: &str = "classroom-resources/autograding-grading-reporter@v1";
/// Built before the first test runs, in its setup-command: the launcher that `cargo run -p
/// grader` runs, and the command line it runs (`kit-grader`), so that no test's time goes to
/// building the kit.
const SETUP_COMMAND: &str = "cargo build -q -p grader -p kit-grader";

/// One test of the workflow.
struct Test {
    id: String,
    name: String,
    command: String,
    points: i64,
}

/// The bundle's files: the kit at the top and the workflow.
pub(super) fn files(
    kit: &Kit,
    header: &Header,
    exercise: &LessonInfo,
    points: &[(&'static str, f64)],
    options: &Options,
) -> Result<BTreeMap<PathBuf, BundleFile>, BundleError> {
    let lesson = plain_word("lesson", header.lesson.name)?;
    let tests = match options.per {
        Per::Check => {
            let mut used = BTreeSet::new();
            points
                .iter()
                .map(|(check, p)| {
                    Ok(Test {
                        id: step_id(check, &mut used),
                        name: check.to_string(),
                        command: format!(
                            "cargo run -q -p grader -- {lesson} --exact {}",
                            checked_name(check)?
                        ),
                        points: whole(check, *p)?,
                    })
                })
                .collect::<Result<Vec<_>, BundleError>>()?
        }
        Per::Lesson => {
            let total: f64 = points.iter().map(|(_, p)| p).sum();
            vec![Test {
                id: step_id(lesson, &mut BTreeSet::new()),
                name: format!("{lesson}: every check"),
                command: format!("cargo run -q -p grader -- {lesson}"),
                points: whole(&format!("the lesson {lesson}"), total)?,
            }]
        }
    };
    let mut files = kit_under(kit, "");
    if options.without_answers {
        super::answers::leave_out(&mut files, &kit.root, &kit.exercises)?;
    }
    files.insert(
        PathBuf::from(WORKFLOW),
        BundleFile::text(workflow(header, exercise, &tests, options)),
    );
    Ok(files)
}

/// A check name with `::` in it is a plain word but for the colons: allowed as is.
fn checked_name(check: &str) -> Result<&str, BundleError> {
    plain_word("check", &check.replace("::", "/")).map(|_| check)
}

/// `points` as a whole number, or the error that says the command grader would truncate it.
fn whole(what: &str, points: f64) -> Result<i64, BundleError> {
    if points.fract() == 0.0 && (0.0..1e9).contains(&points) {
        Ok(points as i64)
    } else {
        Err(BundleError::FractionalPoints {
            what: what.to_string(),
            points,
            whole: points.trunc() as i64,
        })
    }
}

/// A step id for `name`: ASCII letters and digits only, the words joined in camel case
/// (`fixturesThirdAttemptSuccess`), unique among `used` as the reporter's environment
/// variable (`<ID in capitals>_RESULTS`) is. GitHub allows `_` and `-` in a step id, but the
/// grading reporter does not: when anything goes wrong it checks `runners` against
/// `^([a-zA-Z0-9]+,)*[a-zA-Z0-9]+$` and blames the list, hiding the real error.
fn step_id(name: &str, used: &mut BTreeSet<String>) -> String {
    let mut id = String::new();
    let mut new_word = false;
    for c in name.chars() {
        if !c.is_ascii_alphanumeric() {
            new_word = !id.is_empty();
        } else if new_word {
            id.push(c.to_ascii_uppercase());
            new_word = false;
        } else {
            id.push(c);
        }
    }
    if !id.starts_with(|c: char| c.is_ascii_alphabetic()) {
        id = format!("t{id}");
    }
    let mut unique = id.clone();
    let mut n = 2;
    while !used.insert(unique.to_ascii_uppercase()) {
        unique = format!("{id}{n}");
        n += 1;
    }
    unique
}

/// A YAML double-quoted scalar: JSON's string syntax is a subset of it.
fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".to_string())
}

fn workflow(header: &Header, exercise: &LessonInfo, tests: &[Test], options: &Options) -> String {
    let lesson = header.lesson.name;
    let total: i64 = tests.iter().map(|t| t.points).sum();
    let split = match options.per {
        Per::Check => format!(
            "one test per check ({} tests), each worth its points from exercises/{lesson}/grading.toml",
            tests.len()
        ),
        Per::Lesson => "one test for the whole lesson: every check must pass (all or nothing)"
            .to_string(),
    };
    let mut y = String::new();
    y.push_str(&format!(
        "# GitHub Classroom autograding for {lesson} (\"{title}\") of the retry practice kit:\n\
         # {split}; {total} points in all.\n\
         {comment}\
         #\n\
         # The learner's repository is the kit: each test runs the kit's own checks on the\n\
         # learner's {file}, as the learner runs them, and passes when the command exits 0.\n\
         # The first test's setup-command builds the grader; its command then builds the\n\
         # learner's code (a few minutes on a fresh runner, within its timeout).\n",
        title = header.lesson.title,
        comment = header.comment("#"),
        file = exercise.file.display(),
    ));
    y.push_str(if options.without_answers {
        "#\n\
         # This template holds no answers: reference/src keeps only the shared types, and the\n\
         # exhaustive checks compare with the reference's runs kept in grader/checks/oracle/.\n"
    } else {
        "#\n\
         # This template is the whole kit: reference/src holds every lesson's answer. For an\n\
         # assessment, make it with --without-answers.\n"
    });
    y.push_str(
        "name: Autograding Tests\n\
         on:\n  - push\n  - repository_dispatch\n  - workflow_dispatch\n\
         permissions:\n  checks: write\n  actions: read\n  contents: read\n\
         jobs:\n  run-autograding-tests:\n    runs-on: ubuntu-latest\n\
         \x20   if: \"github.actor != 'github-classroom[bot]'\"\n\
         \x20   steps:\n\
         \x20     - name: Checkout code\n\
         \x20       uses: actions/checkout@v4\n",
    );
    for (i, test) in tests.iter().enumerate() {
        y.push_str(&format!(
            "      - name: {name}\n\
             \x20       id: {id}\n\
             \x20       uses: {COMMAND_GRADER}\n\
             \x20       with:\n\
             \x20         test-name: {name}\n",
            name = quoted(&test.name),
            id = test.id,
        ));
        if i == 0 {
            y.push_str(&format!(
                "          setup-command: {}\n",
                quoted(SETUP_COMMAND)
            ));
        }
        y.push_str(&format!(
            "          command: {}\n\
             \x20         timeout: {}\n\
             \x20         max-score: {}\n",
            quoted(&test.command),
            options.timeout_minutes,
            test.points
        ));
    }
    y.push_str(&format!(
        "      - name: Autograding Reporter\n\
         \x20       uses: {REPORTER}\n\
         \x20       env:\n"
    ));
    for test in tests {
        y.push_str(&format!(
            "          {}_RESULTS: {}\n",
            test.id.to_ascii_uppercase(),
            quoted(&format!("${{{{ steps.{}.outputs.result }}}}", test.id))
        ));
    }
    let runners: Vec<&str> = tests.iter().map(|t| t.id.as_str()).collect();
    y.push_str(&format!(
        "        with:\n          runners: {}\n",
        runners.join(",")
    ));
    y
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_ids_are_plain_and_unique() {
        let mut used = BTreeSet::new();
        assert_eq!(
            step_id("fixtures::third_attempt_success", &mut used),
            "fixturesThirdAttemptSuccess"
        );
        assert_eq!(
            step_id("fixtures_third::attempt_success", &mut used),
            "fixturesThirdAttemptSuccess2",
            "unique"
        );
        assert_eq!(
            step_id("fixturesthird::attemptsuccess", &mut used),
            "fixturesthirdAttemptsuccess3",
            "unique as the reporter's upper-case variable is"
        );
        assert_eq!(step_id("9lives", &mut used), "t9lives");
        let pattern_ok = |id: &str| !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric());
        assert!(used.iter().all(|id| pattern_ok(id)));
    }

    #[test]
    fn only_whole_points_are_accepted() {
        assert_eq!(whole("a", 5.0).unwrap(), 5);
        assert!(matches!(
            whole("a", 1.5),
            Err(BundleError::FractionalPoints { whole: 1, .. })
        ));
    }
}

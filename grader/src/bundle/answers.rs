//! A copy of the kit without the answers, for a Classroom template a learner cannot read the
//! answers in (`bundle classroom --without-answers`).
//!
//! What goes: every file of `reference/src/` but the shared types (`reference/src/types/`,
//! the `kit-types` crate a learner uses), replaced by a `lib.rs` that says where the answers
//! are; and the kit's own tests, benchmarks and CI, which need the answers to build.
//!
//! What the checks still need comes as data, made here from the answers:
//! - `grader/checks/oracle/LESSON.bin`: the reference's run of every case of the lesson's
//!   exhaustive check ([`Lesson::oracle`]), which the checks compile in when they are built
//!   without their `answers` feature (this copy's `grader/checks/Cargo.toml` turns it off);
//! - `grader/checks/oracle/LESSON-trace.json`: the lesson's worked trace as run on the
//!   reference, which `trace` shows.
//!
//! The reference's code is in neither: the runs are outputs, a few thousand different ones.

use super::{BundleError, BundleFile};
use crate::lesson_info::LessonInfo;
use crate::Lesson;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where the oracle files go in the copy, from the kit's top.
pub(crate) const ORACLE_DIR: &str = "grader/checks/oracle";

/// The answers' folder; everything in it but [`TYPES`] is an answer.
const ANSWERS: &str = "reference/src";
/// The shared types inside [`ANSWERS`]: kept.
const TYPES: &str = "reference/src/types";
/// The kit's own tests, benchmarks and CI: they run the answers, so they go too.
const KITS_OWN: [&str; 5] = [
    "grader/tests",
    "grader/benches",
    "grader/checks/tests",
    "grader/checks/benches",
    ".ci",
];
/// A lesson's test implementations, when it keeps them in its own folder: its `correct`
/// one is an answer (the checks build them only with the answers).
const TRIALS_FILE: &str = "trials.rs";
/// Where those folders are.
const LESSONS_DIR: &str = "grader/checks/src/lessons";

/// The manifests that name those tests and benchmarks.
const MANIFESTS: [&str; 2] = ["grader/Cargo.toml", "grader/checks/Cargo.toml"];
/// The checks' manifest, whose default features turn the answers on.
const CHECKS_MANIFEST: &str = "grader/checks/Cargo.toml";
/// The line there that does, and what it becomes.
const WITH_ANSWERS: (&str, &str) = ("default = [\"answers\"]", "default = []");

/// The reference crate's `lib.rs` in the copy.
const PLACEHOLDER: &str = "\
//! The kit's answers are not in this copy of the kit: it was made for a course that grades
//! them (`bundle classroom --without-answers`). The shared types a lesson's function uses are
//! the `kit-types` crate, in `types/`, as in the whole kit.
//!
//! The checks compare your code with the reference's runs kept as data
//! (`grader/checks/oracle/`); `--against reference` and `scenario --compare` need the answers
//! and are not available here. The lessons, `help LESSON` and each check's message say what
//! the rules ask.
";

/// The help levels withheld from the copy: each walks through its lesson's answer.
const WITHHELD_LEVELS: [&str; 1] = ["approach"];

/// What a withheld help level says instead.
const WITHHELD: &str = "it walks through the lesson's answer, and this copy was made for a \
    course that grades it. The other levels are here; ask your instructor for this one.";

/// The note put at the top of each lesson in the copy.
const LESSON_NOTE: &str = "\
> **In this copy of the kit** the finished answer, `--against reference`, `scenario
> --compare` and help level 2 (approach) are not available: your course grades this
> lesson. Where the lesson mentions them, skip that part; a failing exhaustive check still
> shows the reference's run of its case. A scenario outcome written as a raw `http` reply
> (build3) needs build2's answer: write it as `data`, `transient` or `permanent`.

";

/// The note put at the top of the copy's README.
const README_NOTE: &str = "\
> **This copy of the kit holds no answers.** It was made for a course that grades them:
> `reference/src/` keeps only the shared types, and `--against reference`,
> `scenario --compare` and help level 2 (approach) are not available. A build3 scenario
> outcome written as a raw `http` reply needs build2's answer to be read: write it as
> `data`, `transient` or `permanent`. The kit's own tests (`cargo test`) run the answers and
> are not part of this copy. Everything else works as the README says.

";

/// Takes the answers out of `files` (a copy of the kit, by path) and adds what the checks
/// need instead, for every lesson of `lessons` with its `info.toml` (`exercises`). Runs the
/// reference: this grader must hold the answers.
pub(super) fn leave_out(
    files: &mut BTreeMap<PathBuf, BundleFile>,
    root: &Path,
    exercises: &[(&'static Lesson, LessonInfo)],
) -> Result<(), BundleError> {
    if !grader_checks::ANSWERS {
        return Err(BundleError::NoAnswers);
    }
    files.retain(|path, _| {
        let answer = path.starts_with(ANSWERS) && !path.starts_with(TYPES);
        let trials = path.starts_with(LESSONS_DIR) && path.ends_with(TRIALS_FILE);
        !answer && !trials && !KITS_OWN.iter().any(|dir| path.starts_with(dir))
    });
    files.insert(
        PathBuf::from(ANSWERS).join("lib.rs"),
        BundleFile::text(PLACEHOLDER.to_string()),
    );
    for manifest in MANIFESTS {
        let path = PathBuf::from(manifest);
        let Some(file) = files.get_mut(&path) else {
            return Err(manifest_error(&path, "the kit has no such file"));
        };
        let text = String::from_utf8_lossy(&file.content).into_owned();
        let mut edited = without_targets(&text);
        if manifest == CHECKS_MANIFEST {
            let (from, to) = WITH_ANSWERS;
            if edited.lines().filter(|l| l.trim() == from).count() != 1 {
                return Err(manifest_error(
                    &path,
                    &format!("holds no line `{from}` to turn the answers off with"),
                ));
            }
            edited = edited
                .lines()
                .map(|l| if l.trim() == from { to } else { l })
                .collect::<Vec<_>>()
                .join("\n")
                + "\n";
        }
        file.content = edited.into_bytes();
    }
    if let Some(readme) = files.get_mut(Path::new("README.md")) {
        readme.content = [README_NOTE.as_bytes(), &readme.content].concat();
    }
    for (lesson, info) in exercises {
        let dir = PathBuf::from("exercises").join(lesson.name);
        if let Some(text) = files.get_mut(&dir.join(&info.lesson)) {
            text.content = [LESSON_NOTE.as_bytes(), &text.content].concat();
        }
        let help_path = dir.join(crate::help::HELP_FILE);
        if let Some(file) = files.get_mut(&help_path) {
            file.content = withheld(&help_path, &file.content)?.into_bytes();
        }
        if let Some(oracle) = lesson.oracle {
            files.insert(
                PathBuf::from(ORACLE_DIR).join(format!("{}.bin", lesson.name)),
                BundleFile {
                    content: oracle(),
                    executable: false,
                },
            );
        }
        if let Some(trace) = &info.trace {
            // The example as the bundle ships it, so that `trace` finds the same text there.
            let path = root.join(&dir).join(trace);
            let Some(shipped) = files.get(&dir.join(trace)) else {
                return Err(BundleError::Manifest {
                    path,
                    message: "the worked trace is not among the kit's files".into(),
                });
            };
            let text = String::from_utf8_lossy(&shipped.content).into_owned();
            let run = (lesson.run_scenario_on_reference)(&path, &text).map_err(|e| {
                BundleError::Manifest {
                    path: path.clone(),
                    message: format!("the worked trace does not run on the reference: {e}"),
                }
            })?;
            let kept = KeptTrace { trace: text, run };
            let json = serde_json::to_string_pretty(&kept).map_err(|e| BundleError::Manifest {
                path,
                message: format!("cannot write the worked trace's run: {e}"),
            })?;
            files.insert(trace_run_path(lesson.name), BundleFile::text(json + "\n"));
        }
    }
    Ok(())
}

/// `help.toml`'s text with each of [`WITHHELD_LEVELS`] withheld: its text replaced by why.
fn withheld(path: &Path, text: &[u8]) -> Result<String, BundleError> {
    let fail = |message: String| BundleError::Manifest {
        path: path.to_path_buf(),
        message,
    };
    let mut help: crate::help::Help = toml::from_str(&String::from_utf8_lossy(text))
        .map_err(|e| fail(format!("cannot read the help levels: {e}")))?;
    for level in &mut help.levels {
        if WITHHELD_LEVELS.contains(&level.name.as_str()) {
            level.text = WITHHELD.to_string();
            level.withheld = true;
        }
    }
    let body =
        toml::to_string(&help).map_err(|e| fail(format!("cannot write the help levels: {e}")))?;
    Ok(format!(
        "# Course help, from the gentlest level to the most specific. In this copy of the kit\n\
         # (made without the answers) a level that walks through the answer is withheld.\n\n{body}"
    ))
}

/// A lesson's worked trace as run on the reference, kept by a copy without the answers: the
/// trace's text too, so that `trace` shows the run only beside the file it was made from.
#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct KeptTrace {
    /// The worked trace's file, as the bundle read it.
    pub(crate) trace: String,
    /// Its run on the reference.
    pub(crate) run: grader_checks::view::ScenarioRun,
}

/// Where, from the kit's top, a copy without the answers keeps `lesson`'s worked trace as
/// run on the reference.
pub(crate) fn trace_run_path(lesson: &str) -> PathBuf {
    PathBuf::from(ORACLE_DIR).join(format!("{lesson}-trace.json"))
}

fn manifest_error(path: &Path, message: &str) -> BundleError {
    BundleError::Manifest {
        path: path.to_path_buf(),
        message: format!("{message}, so a template without the answers cannot be made"),
    }
}

/// A manifest's text without its `[[test]]` and `[[bench]]` tables (each from its header to
/// the next table's header), whose files a copy without the answers leaves out.
fn without_targets(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut skipping = false;
    for line in text.split_inclusive('\n') {
        let header = line.trim_start().starts_with('[');
        if header {
            let name = line.trim();
            skipping = name == "[[test]]" || name == "[[bench]]";
        }
        if !skipping {
            out.push_str(line);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_and_bench_tables_go_and_the_rest_stays() {
        let text = "[package]\nname = \"g\"\n\n[[test]]\nname = \"implementations\"\nharness = false\n\n[[bench]]\nname = \"grade\"\nharness = false\n\n[features]\ndefault = [\"answers\"]\n";
        assert_eq!(
            without_targets(text),
            "[package]\nname = \"g\"\n\n[features]\ndefault = [\"answers\"]\n"
        );
        assert_eq!(
            without_targets("[lib]\n[[bench]]\nname = \"x\"\n"),
            "[lib]\n"
        );
    }
}

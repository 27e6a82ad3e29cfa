//! A lesson's metadata: `exercises/LESSON/info.toml`, read with unknown keys refused.

use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The file every exercise folder holds.
pub(crate) const INFO_FILE: &str = "info.toml";

/// What `exercises/LESSON/info.toml` says about a lesson.
///
/// ```
/// let info: grader::LessonInfo = toml::from_str(r#"
///     group = "build3"
///     title = "Retry transient failures"
///     function = "retry_request"
///     file = "practice/src/lib.rs"
///     stub = "stub.rs"
///     lesson = "lesson.md"
/// "#).unwrap();
/// assert_eq!(info.function, "retry_request");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LessonInfo {
    /// The lesson's name on the command line (info.toml's `group` key).
    #[serde(rename = "group")]
    pub name: String,
    /// The lesson's title.
    pub title: String,
    /// A few words that say what the lesson's function is, after the title in the README's
    /// table of lessons (`dev update` writes it).
    #[serde(default)]
    pub summary: Option<String>,
    /// The function the learner writes.
    pub function: String,
    /// The learner's file, relative to the kit folder.
    pub file: PathBuf,
    /// The pristine stub of that file, relative to the lesson's folder.
    pub stub: PathBuf,
    /// The lesson's page (`lesson.md`), relative to the lesson's folder.
    pub lesson: PathBuf,
    /// The lesson's worked example as a scenario file, relative to the lesson's folder.
    #[serde(default)]
    pub trace: Option<PathBuf>,
    /// The self-review questions, relative to the lesson's folder: copied to
    /// `LessonInfo::review_file` the first time every check passes.
    #[serde(default)]
    pub self_review: Option<PathBuf>,
    /// The reference answer, relative to the kit folder: the file of `reference/` that holds
    /// the finished function (`grade` notes a submitted file equal to it).
    #[serde(default)]
    pub answer: Option<PathBuf>,
}

/// Why a lesson's metadata could not be read.
pub(crate) type LessonInfoError = crate::toml_file::TomlFileError;

/// The table of `info.toml` that [`Review`] reads and [`LessonInfo`] leaves to it.
const REVIEW_TABLE: &str = "review";

/// What `review` checks of a lesson: the `[review]` table of its `info.toml`.
///
/// ```toml
/// [review]
/// scenarios = "practice/scenarios/build3"
///
/// [[review.situation]]
/// id = "second_call_success"
/// words = "success on the second call"
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Review {
    /// The folder of the learner's own scenario files, relative to the kit folder.
    pub(crate) scenarios: PathBuf,
    /// The situations the lesson asks those files to cover, in the lesson's order.
    #[serde(default, rename = "situation")]
    pub(crate) situations: Vec<SituationInfo>,
}

/// One situation a lesson asks the learner's scenarios to cover, as the lesson words it. The
/// lesson's code recognises it by `id` (`grader_checks::scenario::Situation`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SituationInfo {
    /// The id the lesson's predicate has, e.g. `second_call_success`.
    pub(crate) id: String,
    /// The lesson's words for it, e.g. `success on the second call`.
    pub(crate) words: String,
}

#[derive(Deserialize)]
struct ReviewTable {
    #[serde(default)]
    review: Option<Review>,
}

fn info_path(root: &Path, lesson: &str) -> PathBuf {
    root.join("exercises").join(lesson).join(INFO_FILE)
}

fn parse_error(path: &Path, e: &toml::de::Error) -> LessonInfoError {
    crate::toml_file::TomlFileError::Parse {
        path: path.to_path_buf(),
        message: e.to_string().trim_end().to_string(),
    }
}

impl Review {
    /// Reads the `[review]` table of `ROOT/exercises/LESSON/info.toml`; `None` when the
    /// lesson has none.
    pub(crate) fn load(root: &Path, lesson: &str) -> Result<Option<Review>, LessonInfoError> {
        let path = info_path(root, lesson);
        crate::toml_file::read::<ReviewTable>(&path).map(|t| t.review)
    }
}

impl LessonInfo {
    /// Reads `ROOT/exercises/LESSON/info.toml`, all but its `[review]` table (`Review`).
    pub fn load(root: &Path, lesson: &str) -> Result<LessonInfo, LessonInfoError> {
        let path = info_path(root, lesson);
        let text = std::fs::read_to_string(&path).map_err(|source| {
            crate::toml_file::TomlFileError::Read {
                path: path.clone(),
                source,
            }
        })?;
        LessonInfo::parse(&text).map_err(|e| parse_error(&path, &e))
    }

    /// Parses the text of an `info.toml`, leaving out its `[review]` table; errors name the
    /// line, as for the rest of the kit's files.
    fn parse(text: &str) -> Result<LessonInfo, toml::de::Error> {
        use serde::Deserialize as _;
        let mut table = toml::de::DeTable::parse(text)?;
        table.get_mut().remove(REVIEW_TABLE);
        LessonInfo::deserialize(toml::de::Deserializer::from(table)).map_err(|mut e| {
            e.set_input(Some(text));
            e
        })
    }

    /// The exercise's folder under `root`.
    pub fn dir(&self, root: &Path) -> PathBuf {
        root.join("exercises").join(&self.name)
    }

    /// The signature of the learner's function as the stub under `root` writes it: its
    /// lines from `pub fn NAME` up to the `{` that opens the body (a stub's generics and
    /// where-clauses hold no braces). `None` when the stub cannot be read or has no such
    /// function.
    pub(crate) fn stub_signature(&self, root: &Path) -> Option<String> {
        let stub = std::fs::read_to_string(self.dir(root).join(&self.stub)).ok()?;
        signature_in(&stub, &self.function)
    }

    /// Where the learner answers the self-review questions: their file, which `reset`
    /// leaves alone.
    pub(crate) fn review_file(&self, root: &Path) -> PathBuf {
        root.join("practice")
            .join("review")
            .join(format!("{}.md", self.name))
    }

    /// Copies the self-review questions to [`LessonInfo::review_file`] unless the learner
    /// already has that file. Returns the file when the questions are there to answer.
    pub(crate) fn hand_out_review(&self, root: &Path) -> std::io::Result<Option<PathBuf>> {
        let Some(questions) = &self.self_review else {
            return Ok(None);
        };
        let target = self.review_file(root);
        if target.exists() {
            return Ok(Some(target));
        }
        if let Some(dir) = target.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let text = std::fs::read(self.dir(root).join(questions))?;
        // create_new: an answer written meanwhile is never overwritten.
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&target)
        {
            Ok(mut file) => {
                std::io::Write::write_all(&mut file, &text)?;
                Ok(Some(target))
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(Some(target)),
            Err(e) => Err(e),
        }
    }
}

/// The signature of `pub fn NAME` in `source`, up to the `{` that opens its body.
fn signature_in(source: &str, name: &str) -> Option<String> {
    let start = source
        .match_indices(&format!("pub fn {name}"))
        .map(|(i, _)| i)
        .find(|&i| {
            source[i + 7 + name.len()..]
                .chars()
                .next()
                .is_some_and(|c| c == '<' || c == '(')
        })?;
    let body = source[start..].find('{')?;
    Some(source[start..start + body].trim_end().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::help::Help;
    use crate::workspace::build_root;
    use grader_checks::lessons::LESSONS;

    #[test]
    fn the_signature_is_the_stubs_up_to_its_body() {
        let stub =
            "/// docs\npub fn retry_request_x() {}\npub fn retry_request<T>(\n    a: &A,\n) -> \
                    Result<T, E> {\n    todo!()\n}\n";
        assert_eq!(
            signature_in(stub, "retry_request").as_deref(),
            Some("pub fn retry_request<T>(\n    a: &A,\n) -> Result<T, E>")
        );
        assert_eq!(signature_in(stub, "fetch"), None);
        // Every lesson's stub has one.
        let root = build_root();
        for lesson in LESSONS {
            let exercise = LessonInfo::load(&root, lesson.name).unwrap();
            let signature = exercise.stub_signature(&root).unwrap();
            assert!(signature.starts_with(&format!("pub fn {}", lesson.function)));
            assert!(signature.contains(") ->"), "{signature}");
        }
    }

    /// Every lesson the grader knows has a complete exercise folder that agrees with it.
    #[test]
    fn every_lesson_has_a_consistent_exercise_folder() {
        let root = build_root();
        for lesson in LESSONS {
            let exercise = LessonInfo::load(&root, lesson.name).unwrap();
            assert_eq!(exercise.name, lesson.name);
            assert_eq!(exercise.function, lesson.function);
            assert_eq!(exercise.title, lesson.title);
            let dir = exercise.dir(&root);
            let stub = std::fs::read_to_string(dir.join(&exercise.stub)).unwrap();
            assert!(
                stub.contains("todo!("),
                "{}: the stub must be unfinished",
                lesson.name
            );
            assert!(stub.contains(&format!("pub fn {}", lesson.function)));
            assert!(dir.join(&exercise.lesson).is_file());
            let answer = exercise.answer.as_ref().expect("a reference answer");
            let answer = std::fs::read_to_string(root.join(answer)).unwrap();
            assert!(
                answer.contains(&format!("pub fn {}", lesson.function)),
                "{}: the answer holds the function",
                lesson.name
            );
            let review = exercise.self_review.as_ref().expect("a self-review");
            assert!(
                dir.join(review).is_file(),
                "{}: no self-review",
                lesson.name
            );
            let help = Help::load(&dir).unwrap();
            assert_eq!(
                help.levels
                    .iter()
                    .map(|l| l.name.as_str())
                    .collect::<Vec<_>>(),
                ["refresher", "approach", "repair"]
            );
        }
    }

    // The lesson's rules, its table of checks and its review situations: `crate::authoring`
    // (`dev check`), whose tests run it on the kit.

    #[test]
    fn the_review_table_is_read_apart_and_its_keys_checked() {
        let text = "group = \"build3\"\ntitle = \"t\"\nfunction = \"f\"\nfile = \"f.rs\"\n\
                    stub = \"stub.rs\"\nlesson = \"lesson.md\"\n\n[review]\nscenarios = \"p/s\"\n\n\
                    [[review.situation]]\nid = \"a\"\nwords = \"an a\"\n";
        assert_eq!(LessonInfo::parse(text).unwrap().name, "build3");
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("exercises/build3");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join(INFO_FILE), text).unwrap();
        let review = Review::load(dir.path(), "build3").unwrap().unwrap();
        assert_eq!(review.scenarios, Path::new("p/s"));
        assert_eq!(review.situations[0].words, "an a");
        std::fs::write(folder.join(INFO_FILE), text.replace("words", "wrds")).unwrap();
        let err = Review::load(dir.path(), "build3").unwrap_err().to_string();
        assert!(err.contains("line 13") && err.contains("wrds"), "{err}");
    }

    #[test]
    fn unknown_keys_are_refused_with_their_line() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("exercises/build3");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(
            folder.join(INFO_FILE),
            "group = \"build3\"\ntitel = \"x\"\n",
        )
        .unwrap();
        let err = LessonInfo::load(dir.path(), "build3")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("info.toml") && err.contains("line 2") && err.contains("titel"),
            "{err}"
        );
    }
}

//! What every lesson's scenario files share: errors that point at a line, the `[[outcome]]`
//! list, the `exercise` key that names the lesson, and how a run that panicked ends.
//!
//! Each lesson reads its own format (see `lessons::*::scenario`); a file names its lesson with a
//! top-level `exercise = "stage8"`, and a file without one is a build3 scenario (the first
//! format the kit had).

use crate::panics::{is_stub_panic, panic_message};
use crate::view::ScenarioRun;
use serde::Deserialize;
use std::any::Any;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// A scenario file that could not be used, with the place to look.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("{}", self.located())]
pub struct ScenarioError {
    /// The file.
    pub path: PathBuf,
    /// 1-based line.
    pub(crate) line: usize,
    /// 1-based column.
    pub(crate) column: usize,
    /// What is wrong, naming the key.
    pub(crate) message: String,
}

impl ScenarioError {
    /// An error at byte `offset` of `text`.
    pub(crate) fn at(path: &Path, text: &str, offset: usize, message: String) -> Self {
        let before = &text[..offset.min(text.len())];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        ScenarioError {
            path: path.to_path_buf(),
            line,
            column,
            message,
        }
    }

    /// An error from the TOML parser, placed where it points.
    pub(crate) fn from_toml(path: &Path, text: &str, e: &toml::de::Error) -> Self {
        let offset = e.span().map_or(0, |s| s.start);
        ScenarioError::at(path, text, offset, e.message().trim_end().to_string())
    }
}

/// A lesson's scenario format: what [`crate::lesson`] and [`crate::serve`] need of it to read a
/// file, describe it and run it, so that every lesson's scenario jobs go through one piece of
/// code.
pub(crate) trait Format: Sized + 'static {
    /// The implementation a scenario runs on (the lesson's `Learner`).
    type Learner;

    /// Parses scenario text; `path` is used in messages only.
    fn parse(path: &Path, text: &str) -> Result<Self, ScenarioError>;

    /// One line describing the settings the run uses.
    fn settings(&self) -> String;

    /// Runs the scenario on `learner`, recording what it did.
    fn run(&self, learner: &Self::Learner) -> ScenarioRun;

    /// The situations the lesson asks the learner's own scenario files to cover, as this
    /// format recognises them (`review` says which file covers which).
    const SITUATIONS: &'static [Situation<Self>] = &[];

    /// Reads and parses a scenario file.
    fn load(path: &Path) -> Result<Self, ScenarioError> {
        let text =
            std::fs::read_to_string(path).map_err(|e| ScenarioError::unreadable(path, &e))?;
        Self::parse(path, &text)
    }
}

/// `file` as scenario text under `comment` (each line a `# ` comment): the form in which an
/// exhaustive check saves a case and a check's message quotes one.
pub(crate) fn commented_toml(comment: &str, file: &impl serde::Serialize) -> String {
    let body =
        toml::to_string(file).unwrap_or_else(|e| format!("# could not write this scenario: {e}\n"));
    let header: String = comment.lines().map(|l| format!("# {l}\n")).collect();
    format!("{header}{body}")
}

/// A situation a lesson asks the learner's own scenario files to cover ("success on the second
/// call"), recognised in a parsed scenario of format `S`.
///
/// The lesson's words for it are data: `[[review.situation]]` in
/// `exercises/LESSON/info.toml`, matched by `id`, and the grader's tests require each
/// declared id to have exactly one predicate here and each predicate a declaration. A
/// predicate reads the file's input only, never what the learner's code did with it: a file
/// covers its situation whether or not the code handles it right (the run shows that).
pub(crate) struct Situation<S> {
    /// The id `info.toml` declares it under, e.g. `second_call_success`.
    pub(crate) id: &'static str,
    /// Whether a scenario puts the code in this situation.
    pub(crate) covered_by: fn(&S) -> bool,
}

impl<S> std::fmt::Debug for Situation<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Situation").field("id", &self.id).finish()
    }
}

/// The ids of the situations of `S` that `scenario` covers, in their declared order.
pub(crate) fn covered<S: Format>(scenario: &S) -> Vec<&'static str> {
    S::SITUATIONS
        .iter()
        .filter(|s| (s.covered_by)(scenario))
        .map(|s| s.id)
        .collect()
}

/// The `[[outcome]]` list the formats share: at least one entry, each converted by
/// `convert`, and `forever` allowed only on the last. Returns the converted outcomes and
/// whether the last one repeats.
pub(crate) fn outcomes<S, T>(
    path: &Path,
    text: &str,
    specs: Vec<toml::Spanned<S>>,
    first_call: &str,
    forever: impl Fn(&S) -> bool,
    convert: impl Fn(&S) -> Result<T, String>,
) -> Result<(Vec<T>, bool), ScenarioError> {
    let error = |offset: usize, message: String| ScenarioError::at(path, text, offset, message);
    if specs.is_empty() {
        return Err(error(
            text.len(),
            format!("no [[outcome]]: add what {first_call}"),
        ));
    }
    let count = specs.len();
    let mut converted = Vec::with_capacity(count);
    let mut repeat = false;
    for (i, spanned) in specs.into_iter().enumerate() {
        let (at, n) = (spanned.span().start, i + 1);
        let spec = spanned.into_inner();
        repeat = forever(&spec);
        if repeat && n != count {
            return Err(error(
                at,
                format!("outcome {n}: `forever` only goes on the last outcome"),
            ));
        }
        converted.push(convert(&spec).map_err(|m| error(at, format!("outcome {n}: {m}")))?);
    }
    Ok((converted, repeat))
}

impl ScenarioError {
    /// `path:line:column: message`, or `path: message` when the error has no place in the
    /// file (it could not be read at all).
    fn located(&self) -> String {
        if self.line == 0 {
            format!("{}: {}", self.path.display(), self.message)
        } else {
            format!(
                "{}:{}:{}: {}",
                self.path.display(),
                self.line,
                self.column,
                self.message
            )
        }
    }

    /// The file could not be read: an error with no line.
    pub fn unreadable(path: &Path, e: &std::io::Error) -> Self {
        ScenarioError {
            path: path.to_path_buf(),
            line: 0,
            column: 0,
            message: format!("cannot read the file: {e}"),
        }
    }
}

#[derive(Deserialize)]
struct ExerciseKey {
    #[serde(default, alias = "lesson")]
    exercise: Option<toml::Spanned<String>>,
}

/// The lesson a scenario file names (`exercise = "..."`, or `lesson = "..."`), with where the
/// name is written; `None` when the file has neither key.
pub fn exercise_key(
    path: &Path,
    text: &str,
) -> Result<Option<(String, std::ops::Range<usize>)>, ScenarioError> {
    let key: ExerciseKey =
        toml::from_str(text).map_err(|e| ScenarioError::from_toml(path, text, &e))?;
    Ok(key.exercise.map(|name| {
        let span = name.span();
        (name.into_inner(), span)
    }))
}

/// How a run that panicked ended, as its ending line says it.
pub(crate) fn panic_ending(payload: &(dyn Any + Send)) -> String {
    let message = panic_message(payload);
    if is_stub_panic(&message) {
        format!("unfinished: the function reached todo!() ({message})")
    } else {
        format!("panicked: {message}")
    }
}

/// A Retry-After value read by the lessons' rule: delay-seconds only, digits alone once the
/// spaces and tabs around them are trimmed; anything else (a fraction, a sign, an HTTP-date)
/// is no wait. The situations need it to tell which inputs a learner's scenario covers, and
/// keep this copy of the rule because a copy of the kit without the answers has no
/// `reference::fetch::parse_retry_after` (a test holds the two together).
pub(crate) fn delay_seconds(value: &str) -> Option<f64> {
    let digits = value.trim_matches([' ', '\t']);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse::<f64>().ok()
}

#[cfg(test)]
mod doc_examples {
    /// What the item's documentation once showed as an example.
    #[test]
    fn commented_toml_puts_the_comment_first() {
        #[derive(serde::Serialize)]
        struct File {
            exercise: &'static str,
        }
        let text =
            crate::scenario::commented_toml("Case 3.\nReplay it.", &File { exercise: "narrow" });
        assert_eq!(text, "# Case 3.\n# Replay it.\nexercise = \"narrow\"\n");
    }
}

#[cfg(all(test, feature = "answers"))]
mod rule_copies {
    #[test]
    fn delay_seconds_reads_retry_after_as_the_reference_does() {
        for value in [
            "3",
            " 120 ",
            "\t7\t",
            "0",
            "007",
            "1.5",
            "-1",
            "+3",
            "",
            " ",
            "3s",
            "1e3",
            "Wed, 21 Oct 2015 07:28:00 GMT",
            "99999999999999999999",
            "\u{661}",
        ] {
            assert_eq!(
                super::delay_seconds(value),
                reference::fetch::parse_retry_after(value),
                "{value:?}"
            );
        }
    }
}

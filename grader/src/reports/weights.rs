//! Each check's points in a grade, from `exercises/LESSON/grading.toml`:
//!
//! ```toml
//! # Points for every check not listed below.
//! default = 1.0
//!
//! [weights]
//! "exhaustive::matches_reference_on_every_case" = 5.0
//! ```
//!
//! Both parts are optional (`default` is 1), other keys are refused, and every weight must
//! be a finite number ≥ 0. An exercise without the file weighs every check 1.

use crate::toml_file::TomlFileError;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;
use toml::Spanned;

/// The file, in an exercise's folder.
pub(crate) const WEIGHTS_FILE: &str = "grading.toml";

/// The weight of a check that `grading.toml` does not name, when there is no `default`.
pub(crate) const DEFAULT_WEIGHT: f64 = 1.0;

/// Each check's points in a grade.
///
/// ```
/// let w = grader::reports::weights::Weights::default();
/// assert_eq!(w.of("fixtures::third_attempt_success"), 1.0);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Weights {
    default: f64,
    by_check: BTreeMap<String, f64>,
}

impl Default for Weights {
    /// Every check weighs 1.
    fn default() -> Self {
        Weights {
            default: DEFAULT_WEIGHT,
            by_check: BTreeMap::new(),
        }
    }
}

impl Weights {
    /// The points of the check called `check`.
    pub fn of(&self, check: &str) -> f64 {
        self.by_check.get(check).copied().unwrap_or(self.default)
    }

    /// The points of every check the file does not name.
    pub fn default_weight(&self) -> f64 {
        self.default
    }

    /// The checks the file names, with their points, in name order.
    pub fn named(&self) -> impl Iterator<Item = (&str, f64)> {
        self.by_check.iter().map(|(name, w)| (name.as_str(), *w))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    default: Option<Spanned<f64>>,
    #[serde(default)]
    weights: BTreeMap<String, Spanned<f64>>,
}

/// `line L, column C` of byte `offset` in `text` (both 1-based).
fn line_column(text: &str, offset: usize) -> String {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    format!("line {line}, column {column}")
}

/// Refuses a weight that is not a finite number ≥ 0, naming the key and where it is.
fn checked(path: &Path, text: &str, key: &str, value: &Spanned<f64>) -> Result<f64, TomlFileError> {
    let w = *value.get_ref();
    if w.is_finite() && w >= 0.0 {
        Ok(w)
    } else {
        Err(TomlFileError::Parse {
            path: path.to_path_buf(),
            message: format!(
                "{}: {key} = {w}: a weight must be a finite number of at least 0",
                line_column(text, value.span().start)
            ),
        })
    }
}

/// Reads `exercise_dir/grading.toml`; without that file, every check weighs 1.
///
/// Refuses keys other than `default` and `[weights]`, and weights that are not finite
/// numbers ≥ 0, naming the file and the key.
pub fn load(exercise_dir: &Path) -> Result<Weights, TomlFileError> {
    let path = exercise_dir.join(WEIGHTS_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Weights::default()),
        Err(source) => return Err(TomlFileError::Read { path, source }),
    };
    let file: File = toml::from_str(&text).map_err(|e| TomlFileError::Parse {
        path: path.clone(),
        message: e.to_string().trim_end().to_string(),
    })?;
    let default = match &file.default {
        Some(value) => checked(&path, &text, "default", value)?,
        None => DEFAULT_WEIGHT,
    };
    let mut by_check = BTreeMap::new();
    for (name, value) in &file.weights {
        let w = checked(&path, &text, &format!("weights.{name:?}"), value)?;
        by_check.insert(name.clone(), w);
    }
    Ok(Weights { default, by_check })
}

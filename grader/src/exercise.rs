//! Exercise metadata: `exercises/<group>/info.toml`, read with unknown keys refused.

use serde::Deserialize;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// The file every exercise folder holds.
pub const INFO_FILE: &str = "info.toml";

/// What `exercises/<group>/info.toml` says about an exercise.
///
/// ```
/// let info: grader::Exercise = toml::from_str(r#"
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
pub struct Exercise {
    /// The group's name on the command line.
    pub group: String,
    /// The lesson's title.
    pub title: String,
    /// The function the learner writes.
    pub function: String,
    /// The learner's file, relative to the kit folder.
    pub file: PathBuf,
    /// The pristine stub of that file, relative to the exercise folder.
    pub stub: PathBuf,
    /// The lesson, relative to the exercise folder.
    pub lesson: PathBuf,
}

/// Why an exercise's metadata could not be read.
#[derive(Debug, Error)]
pub enum ExerciseError {
    /// The file is missing or unreadable.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not valid metadata; the message names line and column.
    #[error("{path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong, and where.
        message: String,
    },
}

impl Exercise {
    /// Reads `ROOT/exercises/<group>/info.toml`.
    pub fn load(root: &Path, group: &str) -> Result<Exercise, ExerciseError> {
        let path = root.join("exercises").join(group).join(INFO_FILE);
        let text = std::fs::read_to_string(&path).map_err(|source| ExerciseError::Read {
            path: path.clone(),
            source,
        })?;
        toml::from_str(&text).map_err(|e| ExerciseError::Parse {
            path,
            message: e.to_string().trim_end().to_string(),
        })
    }

    /// The exercise's folder under `root`.
    pub fn dir(&self, root: &Path) -> PathBuf {
        root.join("exercises").join(&self.group)
    }
}

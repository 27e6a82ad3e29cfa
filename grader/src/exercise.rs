//! Exercise metadata: `exercises/<group>/info.toml`, read with unknown keys refused.

use serde::Deserialize;
use std::path::{Path, PathBuf};

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
    /// The lesson's worked example as a scenario file, relative to the exercise folder.
    #[serde(default)]
    pub trace: Option<PathBuf>,
}

/// Why an exercise's metadata could not be read.
pub type ExerciseError = crate::toml_file::TomlFileError;

impl Exercise {
    /// Reads `ROOT/exercises/<group>/info.toml`.
    pub fn load(root: &Path, group: &str) -> Result<Exercise, ExerciseError> {
        crate::toml_file::read(&root.join("exercises").join(group).join(INFO_FILE))
    }

    /// The exercise's folder under `root`.
    pub fn dir(&self, root: &Path) -> PathBuf {
        root.join("exercises").join(&self.group)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::help::Help;
    use crate::workspace::build_root;
    use grader_checks::groups::GROUPS;

    /// Every group the grader knows has a complete exercise folder that agrees with it.
    #[test]
    fn every_group_has_a_consistent_exercise_folder() {
        let root = build_root();
        for group in GROUPS {
            let exercise = Exercise::load(&root, group.name).unwrap();
            assert_eq!(exercise.group, group.name);
            assert_eq!(exercise.function, group.function);
            assert_eq!(exercise.title, group.title);
            let dir = exercise.dir(&root);
            let stub = std::fs::read_to_string(dir.join(&exercise.stub)).unwrap();
            assert!(
                stub.contains("todo!("),
                "{}: the stub must be unfinished",
                group.name
            );
            assert!(stub.contains(&format!("pub fn {}", group.function)));
            assert!(dir.join(&exercise.lesson).is_file());
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
        let err = Exercise::load(dir.path(), "build3")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("info.toml") && err.contains("line 2") && err.contains("titel"),
            "{err}"
        );
    }
}

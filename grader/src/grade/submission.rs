//! Finding a class's submissions and, in each, the learner's file for a lesson.
//!
//! A submission is a folder (named for the learner) or a single `.rs` file. In a folder the
//! learner's file is looked up by the name it has in `practice/src/` — at the folder's top,
//! under `src/`, or under `practice/src/` (a whole clone of the kit) — and, when the lesson
//! was named with `--group`, a folder holding exactly one `.rs` file is taken as that file
//! (platforms rename uploads). A single file is graded for the lesson it was named for, or
//! the lesson whose function it defines.

use crate::exercise::Exercise;
use crate::guidance::LOG_FILE;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// One learner's submission.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Submission {
    /// Its name in the gradebook: the folder's name, or the file's without `.rs` (with it when
    /// a folder has the same name).
    pub name: String,
    /// The folder or file.
    pub path: PathBuf,
}

/// Why the submissions could not be listed.
#[derive(Debug, Error)]
pub enum SubmissionError {
    /// The folder could not be read.
    #[error("cannot read the submissions folder {path}: {source}")]
    Read {
        /// The folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Nothing in the folder looks like a submission.
    #[error("{0} holds no submission (a folder per learner, or .rs files)")]
    Empty(PathBuf),
}

impl Submission {
    /// The submission at `path`, named after it.
    pub fn at(path: &Path) -> Submission {
        let name = if path.is_file() {
            path.file_stem()
        } else {
            path.file_name()
        };
        Submission {
            name: name
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "submission".to_string()),
            path: path.to_path_buf(),
        }
    }

    /// Whether the submission is a single file rather than a folder.
    pub fn is_file(&self) -> bool {
        self.path.is_file()
    }

    /// The learner's file for `exercise`, when the submission has one; `named_group` says
    /// the lesson was named on the command line (so a folder's only `.rs` file counts).
    pub fn lesson_file(&self, exercise: &Exercise, named_group: bool) -> Option<PathBuf> {
        if self.is_file() {
            return Some(self.path.clone());
        }
        let name = exercise.file.file_name()?;
        let by_name = [
            self.path.join(&exercise.file),
            self.path.join("src").join(name),
            self.path.join(name),
        ]
        .into_iter()
        .find(|p| p.is_file());
        if by_name.is_some() || !named_group {
            return by_name;
        }
        let mut only: Vec<PathBuf> = [self.path.clone(), self.path.join("src")]
            .iter()
            .flat_map(|dir| rust_files(dir))
            .collect();
        (only.len() == 1).then(|| only.remove(0))
    }

    /// Whether a single-file submission defines `function` (`fn function`), to tell which
    /// lesson it is for.
    pub fn defines(&self, function: &str) -> bool {
        let Ok(text) = std::fs::read_to_string(&self.path) else {
            return false;
        };
        text.match_indices(&format!("fn {function}")).any(|(i, m)| {
            let next = text[i + m.len()..].chars().next();
            !next.is_some_and(|c| c.is_alphanumeric() || c == '_')
        })
    }

    /// The guidance log the learner handed in with the submission, if any.
    pub fn guidance_log(&self) -> Option<PathBuf> {
        let log = self.path.join(LOG_FILE);
        (!self.is_file() && log.is_file()).then_some(log)
    }
}

/// The `.rs` files directly in `dir`.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "rs"))
        .collect()
}

/// The submissions in `folder`, by name: its folders and `.rs` files, leaving out hidden
/// entries and the folders in `leave_out` (the gradebook's own folder, when it is inside).
pub fn list(folder: &Path, leave_out: &[PathBuf]) -> Result<Vec<Submission>, SubmissionError> {
    let read_err = |source| SubmissionError::Read {
        path: folder.to_path_buf(),
        source,
    };
    let canonical_out: Vec<PathBuf> = leave_out
        .iter()
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .collect();
    let mut found = Vec::new();
    for entry in std::fs::read_dir(folder).map_err(read_err)? {
        let path = entry.map_err(read_err)?.path();
        let hidden = path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with('.'));
        let is_out = std::fs::canonicalize(&path).is_ok_and(|c| canonical_out.contains(&c));
        let wanted = path.is_dir() || path.extension().is_some_and(|e| e == "rs");
        if !hidden && !is_out && wanted {
            found.push(Submission::at(&path));
        }
    }
    if found.is_empty() {
        return Err(SubmissionError::Empty(folder.to_path_buf()));
    }
    // A file and a folder of the same name (`ana.rs` and `ana/`) would share a gradebook name
    // and a reports folder, and one's reports would overwrite the other's: the file keeps its
    // `.rs` then.
    let folders: Vec<String> = found
        .iter()
        .filter(|s| !s.is_file())
        .map(|s| s.name.clone())
        .collect();
    for s in found.iter_mut().filter(|s| s.is_file()) {
        if folders.contains(&s.name) {
            s.name.push_str(".rs");
        }
    }
    found.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exercise(file: &str) -> Exercise {
        Exercise {
            group: "build3".into(),
            title: "Retry".into(),
            function: "retry_request".into(),
            file: PathBuf::from(file),
            stub: PathBuf::from("stub.rs"),
            lesson: PathBuf::from("lesson.md"),
            trace: None,
            self_review: None,
        }
    }

    #[test]
    fn a_folder_holds_the_file_at_its_top_under_src_or_as_a_clone() {
        let dir = tempfile::tempdir().unwrap();
        let ex = exercise("practice/src/lib.rs");
        for (sub, rel) in [
            ("top", "lib.rs"),
            ("src", "src/lib.rs"),
            ("clone", "practice/src/lib.rs"),
        ] {
            let path = dir.path().join(sub).join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, "x").unwrap();
            let s = Submission::at(&dir.path().join(sub));
            assert_eq!(s.lesson_file(&ex, false), Some(path), "{sub}");
        }
    }

    #[test]
    fn a_folders_only_rust_file_counts_when_the_lesson_is_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("retry.rs"), "x").unwrap();
        let s = Submission::at(dir.path());
        let ex = exercise("practice/src/lib.rs");
        assert_eq!(s.lesson_file(&ex, false), None);
        assert_eq!(s.lesson_file(&ex, true), Some(dir.path().join("retry.rs")));
        std::fs::write(dir.path().join("other.rs"), "y").unwrap();
        assert_eq!(s.lesson_file(&ex, true), None, "two files: which one?");
    }

    #[test]
    fn a_single_file_is_told_apart_by_the_function_it_defines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ana.rs");
        std::fs::write(
            &path,
            "pub fn retry_request_v2() {}\npub fn retry_request<T>() {}",
        )
        .unwrap();
        let s = Submission::at(&path);
        assert_eq!(s.name, "ana");
        assert!(s.defines("retry_request"));
        std::fs::write(&path, "pub fn retry_request_v2() {}").unwrap();
        assert!(!s.defines("retry_request"));
    }

    #[test]
    fn listing_leaves_out_hidden_entries_other_files_and_the_output_folder() {
        let dir = tempfile::tempdir().unwrap();
        for d in ["bob", "ana", ".git", "grades"] {
            std::fs::create_dir(dir.path().join(d)).unwrap();
        }
        std::fs::write(dir.path().join("cy.rs"), "").unwrap();
        std::fs::write(dir.path().join("notes.txt"), "").unwrap();
        let names: Vec<String> = list(dir.path(), &[dir.path().join("grades")])
            .unwrap()
            .into_iter()
            .map(|s| s.name)
            .collect();
        assert_eq!(names, ["ana", "bob", "cy"]);
        std::fs::write(dir.path().join("bob.rs"), "").unwrap();
        let names: Vec<String> = list(dir.path(), &[dir.path().join("grades")])
            .unwrap()
            .into_iter()
            .map(|s| s.name)
            .collect();
        assert_eq!(
            names,
            ["ana", "bob", "bob.rs", "cy"],
            "a file named like a folder keeps its .rs, so their reports stay apart"
        );
        let empty = tempfile::tempdir().unwrap();
        assert!(matches!(
            list(empty.path(), &[]),
            Err(SubmissionError::Empty(_))
        ));
    }
}

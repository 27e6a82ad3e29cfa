//! Starting an exercise over without losing anything.
//!
//! The strategy, in the order it runs:
//! 1. If the learner's file already equals the pristine stub, there is nothing to do.
//! 2. Otherwise the current file is copied to `.kit-backups/<lesson>/` under a timestamped
//!    name that is never reused (created with `create_new`, so no backup is overwritten).
//! 3. Only then is the stub written, through a temporary file in the same folder and a
//!    rename, so the learner's file is either the old text or the stub, never half of each.
//!
//! Nothing here touches the guidance log.

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;
use thiserror::Error;

use crate::LessonInfo;

/// The folder (under the kit's root, ignored by git) that holds backups.
pub(crate) const BACKUP_DIR: &str = ".kit-backups";

/// Why a reset or a restore did nothing.
#[derive(Debug, Error)]
pub(crate) enum ResetError {
    /// The pristine stub could not be read.
    #[error("cannot read the pristine stub {path}: {source}")]
    Stub {
        /// The stub.
        path: PathBuf,
        source: io::Error,
    },
    /// The backup could not be written; the learner's file was not changed.
    #[error("cannot write a backup in {path}: {source}")]
    Backup {
        /// The backup folder.
        path: PathBuf,
        source: io::Error,
    },
    /// The learner's file could not be read or replaced.
    #[error("cannot {action} {path}: {source}")]
    Practice {
        /// "read" or "replace".
        action: &'static str,
        /// The learner's file.
        path: PathBuf,
        source: io::Error,
    },
    /// No backup of that name.
    #[error("no backup {name:?} in {dir}")]
    NoBackup {
        /// What was asked for.
        name: String,
        /// Where it was looked for.
        dir: PathBuf,
    },
}

/// What a reset or restore did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Done {
    /// The file already held the wanted text: nothing was written.
    Unchanged,
    /// The file was replaced; the earlier text is in `backup`.
    Replaced {
        /// Where the earlier text was saved, if it needed saving.
        backup: Option<PathBuf>,
    },
}

/// One saved copy of a learner's file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Backup {
    /// The file name, as `--restore` accepts it.
    pub(crate) name: String,
    /// The full path.
    pub(crate) path: PathBuf,
    /// Its size in bytes.
    pub(crate) bytes: u64,
}

/// Resets and restores one exercise's file in one kit.
#[derive(Debug, Clone)]
pub(crate) struct Resetter {
    target: PathBuf,
    stub: PathBuf,
    backups: PathBuf,
}

impl Resetter {
    /// For `exercise` in the kit at `root`.
    pub(crate) fn new(root: &Path, exercise: &LessonInfo) -> Self {
        Resetter {
            target: root.join(&exercise.file),
            stub: exercise.dir(root).join(&exercise.stub),
            backups: root.join(BACKUP_DIR).join(&exercise.name),
        }
    }

    /// The learner's file.
    #[cfg(test)]
    pub(crate) fn target(&self) -> &Path {
        &self.target
    }

    /// The folder holding this exercise's backups.
    pub(crate) fn backup_dir(&self) -> &Path {
        &self.backups
    }

    /// Whether the learner's file differs from the stub (a missing file differs).
    pub(crate) fn is_changed(&self) -> Result<bool, ResetError> {
        Ok(self.current()? != Some(self.stub_text()?))
    }

    /// Puts the pristine stub back, after backing up the current file if it differs.
    pub(crate) fn reset(&self) -> Result<Done, ResetError> {
        let stub = self.stub_text()?;
        self.replace_with(&stub)
    }

    /// Puts backup `name` (a name from [`Resetter::backups`] or a path) back, after
    /// backing up the current file if it differs.
    pub(crate) fn restore(&self, name: &str) -> Result<Done, ResetError> {
        let path = self.find_backup(name)?;
        let text = std::fs::read(&path).map_err(|_| ResetError::NoBackup {
            name: name.to_string(),
            dir: self.backups.clone(),
        })?;
        self.replace_with(&text)
    }

    /// This exercise's backups, oldest first.
    pub(crate) fn backups(&self) -> Result<Vec<Backup>, ResetError> {
        let entries = match std::fs::read_dir(&self.backups) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(source) => {
                return Err(ResetError::Backup {
                    path: self.backups.clone(),
                    source,
                })
            }
        };
        let mut list: Vec<Backup> = entries
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .map(|e| Backup {
                name: e.file_name().to_string_lossy().into_owned(),
                bytes: e.metadata().map_or(0, |m| m.len()),
                path: e.path(),
            })
            .collect();
        // Names start with a UTC timestamp, so name order is time order.
        list.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(list)
    }

    fn find_backup(&self, name: &str) -> Result<PathBuf, ResetError> {
        let as_path = Path::new(name);
        let in_dir = self.backups.join(name);
        if in_dir.is_file() && as_path.file_name() == Some(as_path.as_os_str()) {
            Ok(in_dir)
        } else if as_path.is_file() {
            Ok(as_path.to_path_buf())
        } else {
            Err(ResetError::NoBackup {
                name: name.to_string(),
                dir: self.backups.clone(),
            })
        }
    }

    fn stub_text(&self) -> Result<Vec<u8>, ResetError> {
        std::fs::read(&self.stub).map_err(|source| ResetError::Stub {
            path: self.stub.clone(),
            source,
        })
    }

    fn current(&self) -> Result<Option<Vec<u8>>, ResetError> {
        match std::fs::read(&self.target) {
            Ok(text) => Ok(Some(text)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(ResetError::Practice {
                action: "read",
                path: self.target.clone(),
                source,
            }),
        }
    }

    fn replace_with(&self, text: &[u8]) -> Result<Done, ResetError> {
        let current = self.current()?;
        if current.as_deref() == Some(text) {
            return Ok(Done::Unchanged);
        }
        // The pristine stub needs no backup: `reset` puts it back whenever it is wanted.
        let stub = self.stub_text()?;
        let backup = match &current {
            Some(old) if *old != stub => Some(self.save_backup(old)?),
            _ => None,
        };
        let replace_err = |source| ResetError::Practice {
            action: "replace",
            path: self.target.clone(),
            source,
        };
        let dir = self.target.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(replace_err)?;
        let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(replace_err)?;
        tmp.write_all(text).map_err(replace_err)?;
        tmp.persist(&self.target)
            .map_err(|e| replace_err(e.error))?;
        Ok(Done::Replaced { backup })
    }

    fn save_backup(&self, text: &[u8]) -> Result<PathBuf, ResetError> {
        let backup_err = |source| ResetError::Backup {
            path: self.backups.clone(),
            source,
        };
        std::fs::create_dir_all(&self.backups).map_err(backup_err)?;
        let file_name = self
            .target
            .file_name()
            .map_or("file".into(), |n| n.to_string_lossy().into_owned());
        // Names are the time to the microsecond, fixed width, so that name order is time
        // order. A name that is taken, or not later than the latest backup (two backups in
        // one microsecond, or a clock set back), moves on by a microsecond.
        let latest = self.backups()?.last().map(|b| b.name.clone());
        let mut at = SystemTime::now();
        loop {
            let stamp = humantime::format_rfc3339_micros(at)
                .to_string()
                .replace(':', "-");
            let name = format!("{stamp}-{file_name}");
            if latest.as_ref().is_some_and(|l| name <= *l) {
                at += std::time::Duration::from_micros(1);
                continue;
            }
            let path = self.backups.join(name);
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(mut file) => {
                    file.write_all(text).map_err(backup_err)?;
                    file.sync_all().map_err(backup_err)?;
                    return Ok(path);
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    at += std::time::Duration::from_micros(1);
                }
                Err(e) => return Err(backup_err(e)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kit() -> (tempfile::TempDir, Resetter) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("exercises/build3")).unwrap();
        std::fs::create_dir_all(root.join("practice/src")).unwrap();
        std::fs::write(root.join("exercises/build3/stub.rs"), "todo!()\n").unwrap();
        std::fs::write(root.join("practice/src/lib.rs"), "my work\n").unwrap();
        let exercise = LessonInfo {
            name: "build3".into(),
            title: "t".into(),
            summary: None,
            function: "f".into(),
            file: "practice/src/lib.rs".into(),
            stub: "stub.rs".into(),
            lesson: "lesson.md".into(),
            trace: None,
            self_review: None,
            answer: None,
        };
        let resetter = Resetter::new(root, &exercise);
        (dir, resetter)
    }

    #[test]
    fn reset_backs_up_then_restores_the_stub() {
        let (_dir, r) = kit();
        let Done::Replaced {
            backup: Some(backup),
        } = r.reset().unwrap()
        else {
            panic!("expected a replacement with a backup")
        };
        assert_eq!(std::fs::read_to_string(&backup).unwrap(), "my work\n");
        assert_eq!(std::fs::read_to_string(r.target()).unwrap(), "todo!()\n");
        assert_eq!(
            r.reset().unwrap(),
            Done::Unchanged,
            "an unchanged file needs no backup"
        );
        assert_eq!(r.backups().unwrap().len(), 1);

        let name = r.backups().unwrap()[0].name.clone();
        assert!(matches!(
            r.restore(&name).unwrap(),
            Done::Replaced { backup: None } | Done::Replaced { backup: Some(_) }
        ));
        assert_eq!(std::fs::read_to_string(r.target()).unwrap(), "my work\n");
    }

    #[test]
    fn backups_are_never_overwritten() {
        let (_dir, r) = kit();
        for i in 0..3 {
            std::fs::write(r.target(), format!("version {i}\n")).unwrap();
            r.reset().unwrap();
        }
        let backups = r.backups().unwrap();
        assert_eq!(backups.len(), 3, "{backups:?}");
        let mut texts: Vec<String> = backups
            .iter()
            .map(|b| std::fs::read_to_string(&b.path).unwrap())
            .collect();
        texts.sort();
        assert_eq!(texts, ["version 0\n", "version 1\n", "version 2\n"]);
    }

    #[test]
    fn an_unwritable_backup_folder_changes_nothing() {
        let (dir, r) = kit();
        // A file where the folder should be: fails even for root.
        std::fs::write(dir.path().join(BACKUP_DIR), "not a folder").unwrap();
        assert!(matches!(r.reset(), Err(ResetError::Backup { .. })));
        assert_eq!(std::fs::read_to_string(r.target()).unwrap(), "my work\n");
    }

    #[test]
    fn unknown_backup_is_an_error() {
        let (_dir, r) = kit();
        assert!(matches!(
            r.restore("nope.rs"),
            Err(ResetError::NoBackup { .. })
        ));
    }

    #[test]
    fn backups_made_in_one_second_list_in_the_order_they_were_made() {
        let (_dir, r) = kit();
        for i in 0..25 {
            std::fs::write(r.target(), format!("version {i:02}\n")).unwrap();
            r.reset().unwrap();
        }
        let texts: Vec<String> = r
            .backups()
            .unwrap()
            .iter()
            .map(|b| std::fs::read_to_string(&b.path).unwrap())
            .collect();
        let expected: Vec<String> = (0..25).map(|i| format!("version {i:02}\n")).collect();
        assert_eq!(texts, expected, "name order is the order they were made");
    }

    #[test]
    fn restoring_over_the_stub_backs_nothing_up() {
        let (_dir, r) = kit();
        r.reset().unwrap();
        let name = r.backups().unwrap()[0].name.clone();
        assert_eq!(
            r.restore(&name).unwrap(),
            Done::Replaced { backup: None },
            "the stub it replaced is not worth a backup"
        );
        assert_eq!(r.backups().unwrap().len(), 1);
        assert_eq!(std::fs::read_to_string(r.target()).unwrap(), "my work\n");
    }
}

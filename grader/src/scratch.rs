//! Folders the grader makes for one run and removes when it is done: the checks' scratch
//! folder (their reports) and the private link of a harness. An ending signal (Ctrl-C) ends
//! the grader without running the code that removes them, so they are also listed here, and
//! the signal's handler removes what is listed ([`remove_listed`]).

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use tempfile::TempDir;

/// The folders of every [`Scratch`] alive now.
static LISTED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn listed() -> MutexGuard<'static, Vec<PathBuf>> {
    LISTED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A new folder named `PREFIX…` inside `parent` (the system's temporary folder when `None`),
/// removed when this value is dropped, or by [`remove_listed`].
#[derive(Debug)]
pub(crate) struct Scratch {
    dir: TempDir,
}

impl Scratch {
    /// Makes the folder and lists it.
    pub(crate) fn new(prefix: &str, parent: Option<&Path>) -> std::io::Result<Scratch> {
        let mut builder = tempfile::Builder::new();
        builder.prefix(prefix);
        let dir = match parent {
            Some(parent) => builder.tempdir_in(parent)?,
            None => builder.tempdir()?,
        };
        listed().push(dir.path().to_path_buf());
        Ok(Scratch { dir })
    }

    /// The folder.
    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let path = self.dir.path();
        listed().retain(|p| p != path);
    }
}

/// Removes every listed folder now: for the handler of an ending signal, which stops the
/// checks first (nothing writes there any more) and ends the grader next.
pub(crate) fn remove_listed() {
    for path in listed().drain(..) {
        let _ = std::fs::remove_dir_all(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scratch_folder_is_listed_while_it_lives_and_removed_either_way() {
        let parent = tempfile::tempdir().unwrap();
        let kept = Scratch::new("kept-", Some(parent.path())).unwrap();
        let dropped = Scratch::new("dropped-", Some(parent.path())).unwrap();
        let dropped_path = dropped.path().to_path_buf();
        drop(dropped);
        assert!(!dropped_path.exists());
        assert!(!listed().contains(&dropped_path));
        let kept_path = kept.path().to_path_buf();
        assert!(listed().contains(&kept_path));
        // As on Ctrl-C: removed while its value still lives.
        remove_listed();
        assert!(!kept_path.exists());
        drop(kept);
        assert!(!listed().contains(&kept_path));
    }
}

//! Warm copies of the kit for grading.
//!
//! Each grading copy builds into its own target folder (see
//! [`BuildPlace::isolated`](crate::compile::BuildPlace::isolated)), so the first build in a
//! copy compiles the kit's dependencies — about half a minute. A copy that has never built
//! is seeded instead from one that has: its build output is copied with the files'
//! modification times, so cargo finds everything but the learner's crate up to date.

use std::fs::{self, FileTimes};
use std::io;
use std::path::Path;

/// Whether the copy at `root` has built before.
pub fn is_warm(root: &Path) -> bool {
    root.join("target/debug/.fingerprint").is_dir()
}

/// Copies the build output of the warm copy `from` into the cold copy `to`, both holding the
/// kit's `files` (relative paths). The kit's files in `to` get the times they have in `from`,
/// so cargo finds them as old as that build; the learner's files `lesson_files` are marked
/// changed instead, so the first build in `to` compiles the learner's crate afresh (and its
/// compiler records name the copy's own files).
pub fn seed<'a>(
    from: &Path,
    to: &Path,
    files: impl IntoIterator<Item = &'a Path>,
    lesson_files: &[&Path],
) -> io::Result<()> {
    copy_tree(&from.join("target/debug"), &to.join("target/debug"))?;
    for file in files {
        if lesson_files.contains(&file) {
            continue;
        }
        if let Ok(modified) = fs::metadata(from.join(file)).and_then(|m| m.modified()) {
            set_modified(&to.join(file), modified)?;
        }
    }
    let now = std::time::SystemTime::now();
    for file in lesson_files {
        let path = to.join(file);
        if path.is_file() {
            set_modified(&path, now)?;
        }
    }
    Ok(())
}

fn set_modified(path: &Path, time: std::time::SystemTime) -> io::Result<()> {
    fs::File::options()
        .write(true)
        .open(path)?
        .set_times(FileTimes::new().set_modified(time))
}

/// Copies `from` into `to` with modification times, leaving out incremental data (grading
/// builds keep none). (The kit's own cache and harness links are outside `target/debug`.)
fn copy_tree(from: &Path, to: &Path) -> io::Result<()> {
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        if name == "incremental" {
            continue;
        }
        let (src, dst) = (entry.path(), to.join(&name));
        let kind = entry.file_type()?;
        if kind.is_dir() {
            copy_tree(&src, &dst)?;
        } else if kind.is_file() {
            fs::copy(&src, &dst)?;
            set_modified(&dst, entry.metadata()?.modified()?)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeding_keeps_times_leaves_out_incremental_data_and_touches_lesson_files() {
        let dir = tempfile::tempdir().unwrap();
        let (from, to) = (dir.path().join("a"), dir.path().join("b"));
        fs::create_dir_all(from.join("target/debug/.fingerprint/x")).unwrap();
        fs::create_dir_all(from.join("target/debug/incremental/y")).unwrap();
        fs::create_dir_all(from.join("target/debug/.fingerprint/kit-types-0123")).unwrap();
        let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
        let built = from.join("target/debug/.fingerprint/x/stamp");
        fs::write(&built, "s").unwrap();
        fs::File::options()
            .write(true)
            .open(&built)
            .unwrap()
            .set_times(FileTimes::new().set_modified(old))
            .unwrap();
        fs::create_dir_all(to.join("practice/src")).unwrap();
        let lesson = to.join("practice/src/lib.rs");
        fs::write(&lesson, "x").unwrap();
        fs::File::options()
            .write(true)
            .open(&lesson)
            .unwrap()
            .set_times(FileTimes::new().set_modified(old))
            .unwrap();
        assert!(!is_warm(&to));
        fs::create_dir_all(from.join("kit")).unwrap();
        fs::write(from.join("kit/a.rs"), "a").unwrap();
        set_modified(&from.join("kit/a.rs"), old).unwrap();
        fs::create_dir_all(to.join("kit")).unwrap();
        fs::write(to.join("kit/a.rs"), "a").unwrap();
        let lesson_rel = Path::new("practice/src/lib.rs");
        seed(
            &from,
            &to,
            [Path::new("kit/a.rs"), lesson_rel],
            &[lesson_rel],
        )
        .unwrap();
        assert_eq!(
            fs::metadata(to.join("kit/a.rs"))
                .unwrap()
                .modified()
                .unwrap(),
            old,
            "the kit's files are as old as in the warm copy"
        );
        assert!(is_warm(&to));
        let copied = to.join("target/debug/.fingerprint/x/stamp");
        assert_eq!(fs::metadata(copied).unwrap().modified().unwrap(), old);
        assert!(!to.join("target/debug/incremental").exists());
        assert!(to.join("target/debug/.fingerprint/kit-types-0123").is_dir());
        assert!(fs::metadata(&lesson).unwrap().modified().unwrap() > old);
    }
}

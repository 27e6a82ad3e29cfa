//! Copies of the kit as a fresh clone has it, for the kit's own tests and for grading
//! submissions: the kit's files, the pristine stubs in the learner's place, and an empty
//! guidance log — never the learner's files, log or backups.
//!
//! Which files belong to the kit: the files git tracks, when the kit is a git checkout
//! (otherwise every file outside `target/`, `.git/` and the backups). Most are taken as they
//! are in the working tree, so a change to the kit is tested before it is committed. The
//! files a learner may change are not: each lesson's file is replaced by its stub,
//! `GUIDANCE_LOG.md` by an empty log, and `practice/`'s other files and `Cargo.lock` are
//! taken as git has them at `HEAD`.
//!
//! A copy is refreshed in place: a file is written only when its content differs, so cargo
//! finds its earlier build still valid and recompiles only what changed. A [`Slot`] is such
//! a copy under a lock, reused from one test (or one submission) to the next.

use crate::guidance::{HEADER, LOG_FILE};
use crate::lesson_info::LessonInfo;
use crate::reset::BACKUP_DIR;
use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What a fresh copy holds: relative path → content.
pub type Files = BTreeMap<PathBuf, Vec<u8>>;

/// Whether a copy takes the kit's untracked files (those git does not ignore).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Untracked {
    /// Taken: the kit's own tests, so that a change not yet committed is tested.
    Taken,
    /// Left out: a grading copy or a bundle, which a submission's compile can read and which
    /// leaves the machine. Whatever else lies in an instructor's kit folder (a roster,
    /// another class's grades) stays there.
    Left,
}

/// The files of a fresh clone of the kit at `source`, with the pristine stubs in the
/// learner's place and an empty guidance log.
pub fn fresh_files(source: &Path, untracked: Untracked) -> io::Result<Files> {
    let tracked = git_tracked(source, untracked);
    let listed: Vec<PathBuf> = match &tracked {
        Some(list) => list.clone(),
        None => kits_own(walk(source)?, untracked),
    };
    let exercises = exercises(source);
    let lesson_files: BTreeSet<PathBuf> = exercises.iter().map(|e| e.file.clone()).collect();
    let mut files = Files::new();
    for path in listed {
        if lesson_files.contains(&path) || path == Path::new(LOG_FILE) {
            continue;
        }
        // Every kit-owned file as the working tree has it (an author's change not yet
        // committed is what a copy tests); the learners' files are the stubs (below), and
        // files git does not track in practice/ are left out (they are the learner's).
        let content = match std::fs::read(source.join(&path)) {
            Ok(content) => content,
            // Tracked but deleted in the working tree: the copy does not have it either.
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        files.insert(path, content);
    }
    for exercise in &exercises {
        let stub = std::fs::read(exercise.dir(source).join(&exercise.stub))?;
        files.insert(exercise.file.clone(), stub);
    }
    files.insert(PathBuf::from(LOG_FILE), HEADER.as_bytes().to_vec());
    Ok(files)
}

/// Every exercise of the kit at `root` that has a readable `info.toml`.
fn exercises(root: &Path) -> Vec<LessonInfo> {
    let Ok(entries) = std::fs::read_dir(root.join("exercises")) else {
        return Vec::new();
    };
    let mut list: Vec<LessonInfo> = entries
        .filter_map(Result::ok)
        .filter_map(|e| LessonInfo::load(root, e.file_name().to_str()?).ok())
        .collect();
    list.sort_by(|a, b| a.name.cmp(&b.name));
    list
}

/// The files of the kit by git: those it tracks, and new ones it does not ignore (a change to
/// the kit not yet committed) except in `practice/`, where an untracked file is the
/// learner's. `None` when `root` is not a git checkout.
fn git_tracked(root: &Path, untracked: Untracked) -> Option<Vec<PathBuf>> {
    let list = |extra: &[&str]| -> Option<Vec<PathBuf>> {
        let out = Command::new("git")
            .arg("-C")
            .arg(root)
            .args(["ls-files", "-z", "--full-name"])
            .args(extra)
            .output()
            .ok()?;
        out.status.success().then(|| {
            out.stdout
                .split(|b| *b == 0)
                .filter(|p| !p.is_empty())
                .map(|p| PathBuf::from(String::from_utf8_lossy(p).into_owned()))
                .collect()
        })
    };
    // `--full-name` paths are relative to the repository, which is the kit's root only when
    // the kit is the repository: otherwise fall back to walking the folder.
    let top = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["rev-parse", "--show-toplevel"])
        .output()
        .ok()?;
    let top = PathBuf::from(String::from_utf8_lossy(&top.stdout).trim());
    if std::fs::canonicalize(&top).ok()? != std::fs::canonicalize(root).ok()? {
        return None;
    }
    let tracked: BTreeSet<PathBuf> = list(&["--cached"])?.into_iter().collect();
    let new = list(&["--others", "--exclude-standard"])?;
    let mut files: Vec<PathBuf> = tracked.iter().cloned().collect();
    let new: Vec<PathBuf> = new
        .into_iter()
        .filter(|p| !p.starts_with("practice"))
        .collect();
    match untracked {
        Untracked::Taken => files.extend(new),
        Untracked::Left if !new.is_empty() => {
            let names: Vec<String> = new.iter().map(|p| p.display().to_string()).collect();
            eprintln!(
                "warning: {} file(s) in the kit that git does not track are left out of the \
                 copy: {} (commit a file of the kit's to have it there)",
                new.len(),
                first_few(&names)
            )
        }
        Untracked::Left => {}
    }
    Some(files)
}

/// The kit's top level: what a fresh clone holds there. Anything else at the top of a kit
/// folder that is no git repository (a download, a copy) is not the kit's.
const KIT_TOP: &[&str] = &[
    ".ci",
    ".gitignore",
    "CONTRIBUTING.md",
    "Cargo.lock",
    "Cargo.toml",
    "GUIDANCE_LOG.md",
    "LICENSE",
    "README.md",
    "docs",
    "exercises",
    "grader",
    "practice",
    "reference",
];

/// `files` (of a kit folder git cannot list) without what lies at its top but is not the
/// kit's — an instructor's `EXAM_SOLUTIONS.md`, a class's grades — saying so for a copy
/// that leaves the machine.
fn kits_own(files: Vec<PathBuf>, untracked: Untracked) -> Vec<PathBuf> {
    let top = |p: &PathBuf| {
        p.components()
            .next()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let (own, other): (Vec<PathBuf>, Vec<PathBuf>) = files
        .into_iter()
        .partition(|p| KIT_TOP.contains(&top(p).as_str()));
    if untracked == Untracked::Left && !other.is_empty() {
        let mut names: Vec<String> = other.iter().map(top).collect();
        names.dedup();
        eprintln!(
            "warning: the kit folder is no git repository, so what is the kit's is told by its \
             top level: {} not the kit's, left out of the copy: {}",
            if names.len() == 1 {
                "this is"
            } else {
                "these are"
            },
            first_few(&names)
        );
    }
    own
}

/// The first five of `names`, and `…` for the rest: a warning names what it speaks of
/// without flooding the terminal.
fn first_few(names: &[String]) -> String {
    let shown = names.iter().take(5).cloned().collect::<Vec<_>>().join(", ");
    if names.len() > 5 {
        format!("{shown}, …")
    } else {
        shown
    }
}

/// Every file under `root` but build output, git's folder and the learner's backups.
fn walk(root: &Path) -> io::Result<Vec<PathBuf>> {
    fn visit(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) -> io::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            let name = entry.file_name();
            if ["target", ".git", BACKUP_DIR]
                .iter()
                .any(|skip| name == std::ffi::OsStr::new(skip))
            {
                continue;
            }
            let path = entry.path();
            if entry.file_type()?.is_dir() {
                visit(root, &path, out)?;
            } else if let Ok(rel) = path.strip_prefix(root) {
                out.push(rel.to_path_buf());
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    visit(root, root, &mut out)?;
    Ok(out)
}

/// Makes `dest` hold exactly `files` (and whatever is under its `target/`): a file whose
/// content already matches is left alone, so its modification time stays and cargo's
/// fingerprints with it. Anything else — a learner's extra file, a folder where a file
/// belongs, a file where a folder belongs — is removed.
pub(crate) fn sync(dest: &Path, files: &Files) -> io::Result<()> {
    std::fs::create_dir_all(dest)?;
    let mut dirs: BTreeSet<PathBuf> = BTreeSet::new();
    for path in files.keys() {
        let mut parent = path.parent();
        while let Some(p) = parent.filter(|p| !p.as_os_str().is_empty()) {
            dirs.insert(p.to_path_buf());
            parent = p.parent();
        }
    }
    prune(dest, Path::new(""), files, &dirs)?;
    for (path, content) in files {
        let full = dest.join(path);
        if std::fs::read(&full).ok().as_deref() == Some(content.as_slice()) {
            continue;
        }
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&full, content)?;
    }
    Ok(())
}

/// Removes what does not belong under `dest/rel`.
fn prune(dest: &Path, rel: &Path, files: &Files, dirs: &BTreeSet<PathBuf>) -> io::Result<()> {
    for entry in std::fs::read_dir(dest.join(rel))? {
        let entry = entry?;
        let path = rel.join(entry.file_name());
        let is_dir = entry.file_type()?.is_dir();
        if rel.as_os_str().is_empty() && entry.file_name() == "target" {
            continue;
        }
        match (is_dir, dirs.contains(&path), files.contains_key(&path)) {
            (true, true, _) => prune(dest, &path, files, dirs)?,
            (true, false, _) => std::fs::remove_dir_all(entry.path())?,
            (false, _, true) => {}
            (false, _, false) => std::fs::remove_file(entry.path())?,
        }
    }
    Ok(())
}

/// A copy of the kit in a folder of its own, held under a lock until dropped.
#[derive(Debug)]
pub struct Slot {
    root: PathBuf,
    _lock: File,
}

impl Slot {
    /// The first free slot among `count` under `pool` (waiting when all are taken), made a
    /// fresh copy of `files`.
    ///
    /// A process that holds a slot of `pool` already must take more with
    /// [`try_acquire`](Slot::try_acquire): waiting here could mean waiting for itself.
    pub fn acquire(pool: &Path, count: usize, files: &Files) -> io::Result<Slot> {
        if let Some(slot) = Slot::try_acquire(pool, count, files)? {
            return Ok(slot);
        }
        let root = pool.join("slot-0");
        let lock = File::create(pool.join("slot-0.lock"))?;
        lock.lock()?;
        sync(&root, files)?;
        Ok(Slot { root, _lock: lock })
    }

    /// The first free slot among `count` under `pool`, made a fresh copy of `files`; `None`
    /// when all are taken (by this process or another).
    pub fn try_acquire(pool: &Path, count: usize, files: &Files) -> io::Result<Option<Slot>> {
        std::fs::create_dir_all(pool)?;
        for i in 0..count.max(1) {
            let lock = File::create(pool.join(format!("slot-{i}.lock")))?;
            match lock.try_lock() {
                Ok(()) => {
                    let root = pool.join(format!("slot-{i}"));
                    sync(&root, files)?;
                    return Ok(Some(Slot { root, _lock: lock }));
                }
                Err(std::fs::TryLockError::WouldBlock) => continue,
                Err(std::fs::TryLockError::Error(e)) => return Err(e),
            }
        }
        Ok(None)
    }

    /// The copy's root folder.
    pub fn root(&self) -> &Path {
        &self.root
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_taken_by_this_process_is_not_offered_again_and_none_free_is_none() {
        let dir = tempfile::tempdir().unwrap();
        let pool = dir.path().join("pool");
        let files: Files = [(PathBuf::from("a.txt"), b"one".to_vec())].into();
        let first = Slot::acquire(&pool, 2, &files).unwrap();
        let second = Slot::try_acquire(&pool, 2, &files)
            .unwrap()
            .expect("one is free");
        assert_ne!(first.root(), second.root());
        assert_eq!(std::fs::read(second.root().join("a.txt")).unwrap(), b"one");
        // Both taken: no waiting (which, holding one, could be waiting for ourselves).
        assert!(Slot::try_acquire(&pool, 2, &files).unwrap().is_none());
        drop(first);
        let again = Slot::try_acquire(&pool, 2, &files).unwrap().expect("freed");
        assert_eq!(again.root(), pool.join("slot-0"));
    }

    /// A grading copy or a bundle takes only what git tracks: an instructor's own files in
    /// the kit folder stay out of every copy a submission can read.
    #[test]
    fn only_the_kits_own_tests_take_untracked_files() {
        let kit = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            let ok = Command::new("git")
                .arg("-C")
                .arg(kit.path())
                .args(["-c", "user.name=k", "-c", "user.email=k@k"])
                .args(args)
                .output()
                .map(|o| o.status.success())
                .unwrap_or(false);
            assert!(ok, "git {args:?}");
        };
        git(&["init", "-q"]);
        std::fs::write(kit.path().join("Cargo.toml"), "[workspace]\n").unwrap();
        git(&["add", "Cargo.toml"]);
        git(&["commit", "-q", "-m", "kit"]);
        std::fs::write(kit.path().join("roster.csv"), "alice,bob\n").unwrap();
        let left = fresh_files(kit.path(), Untracked::Left).unwrap();
        assert!(left.contains_key(Path::new("Cargo.toml")), "{left:?}");
        assert!(!left.contains_key(Path::new("roster.csv")), "{left:?}");
        let taken = fresh_files(kit.path(), Untracked::Taken).unwrap();
        assert!(taken.contains_key(Path::new("roster.csv")), "{taken:?}");
    }

    #[test]
    fn sync_writes_only_what_differs_and_removes_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("copy");
        let mut files = Files::new();
        files.insert("a.txt".into(), b"one".to_vec());
        files.insert("sub/b.txt".into(), b"two".to_vec());
        sync(&dest, &files).unwrap();
        let before = std::fs::metadata(dest.join("a.txt"))
            .unwrap()
            .modified()
            .unwrap();
        std::fs::write(dest.join("stray.txt"), "learner's").unwrap();
        std::fs::write(dest.join("sub/b.txt"), "changed").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        sync(&dest, &files).unwrap();
        assert_eq!(std::fs::read(dest.join("sub/b.txt")).unwrap(), b"two");
        assert!(!dest.join("stray.txt").exists());
        let after = std::fs::metadata(dest.join("a.txt"))
            .unwrap()
            .modified()
            .unwrap();
        assert_eq!(before, after, "an unchanged file is not rewritten");
    }
}

//! Finding a class's submissions and, in each, the learner's file for a lesson.
//!
//! A submission is a folder (named for the learner) or a single `.rs` file. In a folder the
//! learner's file is looked up by the name it has in `practice/src/` — under `practice/src/`
//! (a whole clone of the kit), under `src/` or at the folder's top, first found first, its
//! name matched whatever its case (`Lib.rs`) — and, when the lesson was named with
//! `--lesson`, a folder holding exactly one `.rs` file is taken as that file (platforms
//! rename uploads). A folder that holds nothing but one folder (a zip of
//! `retry-kit-main/`) is looked into. A single file is graded for the lesson it was named
//! for, or the lesson whose function it defines.

use crate::guidance::LOG_FILE;
use crate::lesson_info::LessonInfo;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// One learner's submission.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Submission {
    /// Its name in the gradebook: the folder's name, or the file's without `.rs` (with it when
    /// a folder has the same name).
    pub(crate) name: String,
    /// The folder or file.
    pub(crate) path: PathBuf,
}

/// Why the submissions could not be listed.
#[derive(Debug, Error)]
pub(crate) enum SubmissionError {
    /// The folder could not be read.
    #[error("cannot read the submissions folder {path}: {source}")]
    Read {
        /// The folder.
        path: PathBuf,
        source: std::io::Error,
    },
    /// Nothing in the folder looks like a submission.
    #[error("{0} holds no submission (a folder per learner, or .rs files)")]
    Empty(PathBuf),
}

/// The most a lesson file may hold. A lesson's answer is a few hundred lines (a few KiB);
/// anything near this is not an answer to grade, and is never read whole.
pub(crate) const MAX_LESSON_FILE: u64 = 1 << 20;

/// The most a submission's guidance log may hold (a row is about 100 bytes).
pub(crate) const MAX_LOG_FILE: u64 = 1 << 20;

/// Why a submission's file, or the submission itself, is not read: the gradebook's
/// `refused` row says so.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub(crate) enum Refusal {
    /// A file or folder is a symbolic link: it could make another learner's work, or any
    /// file of the grading machine, pass for this submission.
    #[error("{} is a symbolic link", .0.display())]
    Link(PathBuf),
    /// A file is not a regular file (a FIFO would keep the grader waiting for ever).
    #[error("{} is not a regular file", .0.display())]
    NotAFile(PathBuf),
    /// A file is larger than the bound.
    #[error("{} is larger than {}", .path.display(), grader_checks::limits::bytes(*.limit))]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// The bound, in bytes.
        limit: u64,
    },
}

/// Why a submission's file could not be read.
#[derive(Debug, Error)]
pub(crate) enum ReadError {
    /// It is not to be read (see [`Refusal`]).
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// Reading it failed.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        source: std::io::Error,
    },
}

impl Submission {
    /// The submission at `path`, named after it.
    pub(crate) fn at(path: &Path) -> Submission {
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

    /// Whether the submission is a single file rather than a folder (a symbolic link is
    /// neither: see [`Submission::refusal`]).
    pub(crate) fn is_file(&self) -> bool {
        std::fs::symlink_metadata(&self.path).is_ok_and(|m| m.is_file())
    }

    /// Why the submission as a whole is not read, if it is not: it is a symbolic link (to
    /// another learner's folder, say), or neither a folder nor a regular file.
    pub(crate) fn refusal(&self) -> Option<Refusal> {
        let meta = std::fs::symlink_metadata(&self.path).ok()?;
        if meta.file_type().is_symlink() {
            Some(Refusal::Link(self.path.clone()))
        } else if !meta.is_dir() && !meta.is_file() {
            Some(Refusal::NotAFile(self.path.clone()))
        } else {
            None
        }
    }

    /// The learner's file for `exercise`, when the submission has one; `named_lesson` says
    /// the lesson was named on the command line (so a folder's only `.rs` file counts). No
    /// symbolic link is followed on the way: one found is the submission's refusal.
    pub(crate) fn lesson_file(
        &self,
        exercise: &LessonInfo,
        named_lesson: bool,
    ) -> Result<Option<PathBuf>, Refusal> {
        if let Some(refusal) = self.refusal() {
            return Err(refusal);
        }
        if self.is_file() {
            return Ok(Some(self.path.clone()));
        }
        let found = self.lesson_files(exercise)?;
        if let Some(first) = found.into_iter().next() {
            return Ok(Some(first));
        }
        if !named_lesson {
            return Ok(None);
        }
        let top = self.top()?;
        let mut only = Vec::new();
        for rel in [Path::new(""), Path::new("src")] {
            if rel.as_os_str().is_empty() || find_dir_beneath(&top, rel)? {
                only.extend(rust_files(&top.join(rel)));
            }
        }
        if only.len() != 1 {
            return Ok(None);
        }
        let only = only.remove(0);
        match std::fs::symlink_metadata(&only) {
            Ok(meta) if meta.file_type().is_symlink() => Err(Refusal::Link(only)),
            Ok(meta) if !meta.is_file() => Err(Refusal::NotAFile(only)),
            _ => Ok(Some(only)),
        }
    }

    /// Every file of the submission that could be `exercise`'s, in the order they are taken
    /// (`practice/src/`, `src/`, the top): the first is graded, and more than one is worth
    /// a word in the gradebook.
    pub(crate) fn lesson_files(&self, exercise: &LessonInfo) -> Result<Vec<PathBuf>, Refusal> {
        let Some(name) = exercise.file.file_name() else {
            return Ok(Vec::new());
        };
        let top = self.top()?;
        let mut found = Vec::new();
        for rel in [
            exercise.file.clone(),
            Path::new("src").join(name),
            PathBuf::from(name),
        ] {
            if let Some(file) = find_beneath(&top, &rel)? {
                found.push(file);
            }
        }
        Ok(found)
    }

    /// The folder the submission's files are in: the submission's own, or — when it holds
    /// nothing but one folder (a zip of `retry-kit-main/`, say) — that folder, to a depth
    /// of three. Hidden entries and `__MACOSX` (which zips made on a Mac carry) are left out.
    fn top(&self) -> Result<PathBuf, Refusal> {
        let mut top = self.path.clone();
        for _ in 0..3 {
            let Ok(entries) = std::fs::read_dir(&top) else {
                break;
            };
            let entries: Vec<_> = entries
                .filter_map(Result::ok)
                .filter(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    !name.starts_with('.') && name != "__MACOSX"
                })
                .collect();
            let [only] = entries.as_slice() else {
                break;
            };
            match only.file_type() {
                // A link to a folder (another learner's, say) would be graded as theirs; a
                // link to a file is the lesson file's to refuse, for its lesson only.
                Ok(t) if t.is_symlink() && only.path().is_dir() => {
                    return Err(Refusal::Link(only.path()))
                }
                Ok(t) if t.is_dir() => top = only.path(),
                _ => break,
            }
        }
        Ok(top)
    }

    /// Reads `file`, one of the submission's (as [`Submission::lesson_file`] found it),
    /// without following a symbolic link and reading at most `limit` bytes and one more.
    pub(crate) fn read(&self, file: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
        if let Some(refusal) = self.refusal() {
            return Err(refusal.into());
        }
        read_no_follow(file, limit)
    }

    /// Whether a single-file submission defines `function` (`fn function`), to tell which
    /// lesson it is for.
    pub(crate) fn defines(&self, function: &str) -> bool {
        let Ok(text) = self.read(&self.path, MAX_LESSON_FILE) else {
            return false;
        };
        let text = String::from_utf8_lossy(&text);
        text.match_indices(&format!("fn {function}")).any(|(i, m)| {
            let next = text[i + m.len()..].chars().next();
            !next.is_some_and(|c| c.is_alphanumeric() || c == '_')
        })
    }

    /// The guidance log the learner handed in with the submission, if any; a log that is a
    /// symbolic link (another learner's log, say) is the submission's refusal.
    pub(crate) fn guidance_log(&self) -> Result<Option<PathBuf>, Refusal> {
        if self.is_file() {
            return Ok(None);
        }
        find_beneath(&self.top()?, Path::new(LOG_FILE))
    }
}

/// `root/rel` when it is a regular file reached through real folders; `None` when it is not
/// there (or is a folder). A symbolic link on the way, or at the end, is refused, and so is
/// something that is neither a file nor a folder.
fn find_beneath(root: &Path, rel: &Path) -> Result<Option<PathBuf>, Refusal> {
    let mut path = root.to_path_buf();
    let parts: Vec<_> = rel.components().collect();
    for (i, part) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        path.push(part);
        if last && std::fs::symlink_metadata(&path).is_err() {
            // `Lib.rs` for `lib.rs`: a name's case is an easy slip, and graded either way.
            if let Some(other) = path
                .parent()
                .and_then(|dir| same_but_case(dir, part.as_os_str()))
            {
                path = other;
            }
        }
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            return Ok(None);
        };
        if meta.file_type().is_symlink() {
            return Err(Refusal::Link(path));
        }
        if !last && !meta.is_dir() {
            return Ok(None);
        }
        if last {
            return if meta.is_file() {
                Ok(Some(path))
            } else if meta.is_dir() {
                Ok(None)
            } else {
                Err(Refusal::NotAFile(path))
            };
        }
    }
    Ok(None)
}

/// The one entry of `dir` whose name is `name` but for its case, if there is exactly one.
fn same_but_case(dir: &Path, name: &std::ffi::OsStr) -> Option<PathBuf> {
    let name = name.to_str()?.to_lowercase();
    let mut matches = std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.to_lowercase() == name)
        });
    let first = matches.next()?;
    matches.next().is_none().then(|| first.path())
}

/// Whether `root/rel` is a folder reached through real folders (a symbolic link on the way
/// is refused).
fn find_dir_beneath(root: &Path, rel: &Path) -> Result<bool, Refusal> {
    let mut path = root.to_path_buf();
    for part in rel.components() {
        path.push(part);
        match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => return Err(Refusal::Link(path)),
            Ok(meta) if meta.is_dir() => {}
            _ => return Ok(false),
        }
    }
    Ok(true)
}

/// Reads `path`, at most `limit` bytes: a symbolic link at its end is refused by the open
/// itself (`O_NOFOLLOW`, so nothing can swap one in after a look), and so is anything but
/// a regular file (opened without blocking: a FIFO never keeps the read waiting). At most
/// `limit + 1` bytes are read, however large the file.
pub(crate) fn read_no_follow(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    use std::io::Read;
    let io = |source| ReadError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use rustix::fs::OFlags;
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags((OFlags::NOFOLLOW | OFlags::NONBLOCK).bits() as i32);
    }
    let file = match options.open(path) {
        Ok(file) => file,
        Err(e) => {
            if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
                return Err(Refusal::Link(path.to_path_buf()).into());
            }
            return Err(io(e));
        }
    };
    let meta = file.metadata().map_err(io)?;
    if meta.file_type().is_symlink() {
        return Err(Refusal::Link(path.to_path_buf()).into());
    }
    if !meta.is_file() {
        return Err(Refusal::NotAFile(path.to_path_buf()).into());
    }
    let mut content = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut content)
        .map_err(io)?;
    if content.len() as u64 > limit {
        return Err(Refusal::TooLarge {
            path: path.to_path_buf(),
            limit,
        }
        .into());
    }
    Ok(content)
}

/// The `.rs` files directly in `dir`, symbolic links among them (which are then refused,
/// not followed).
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file() || t.is_symlink()))
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect()
}

/// The submissions in `folder`, by name: its folders and `.rs` files, leaving out hidden
/// entries and the folders in `leave_out` (the gradebook's own folder, when it is inside).
pub(crate) fn list(
    folder: &Path,
    leave_out: &[PathBuf],
) -> Result<Vec<Submission>, SubmissionError> {
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
        // A symbolic link to a folder or a `.rs` file is listed, to be refused with a row
        // that says why (it is never read).
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

    fn exercise(file: &str) -> LessonInfo {
        LessonInfo {
            name: "build3".into(),
            title: "Retry".into(),
            summary: None,
            function: "retry_request".into(),
            file: PathBuf::from(file),
            stub: PathBuf::from("stub.rs"),
            lesson: PathBuf::from("lesson.md"),
            trace: None,
            self_review: None,
            answer: None,
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
            assert_eq!(s.lesson_file(&ex, false), Ok(Some(path)), "{sub}");
        }
    }

    #[test]
    fn a_zipped_folder_is_looked_into_and_a_names_case_is_forgiven() {
        let dir = tempfile::tempdir().unwrap();
        let ex = exercise("practice/src/lib.rs");
        // What unzipping `retry-kit-main.zip` into the submission's folder gives.
        let nested = dir.path().join("ada/retry-kit-main/practice/src/lib.rs");
        std::fs::create_dir_all(nested.parent().unwrap()).unwrap();
        std::fs::write(&nested, "x").unwrap();
        std::fs::create_dir_all(dir.path().join("ada/__MACOSX")).unwrap();
        let s = Submission::at(&dir.path().join("ada"));
        assert_eq!(s.lesson_file(&ex, false), Ok(Some(nested.clone())));
        // Not when the folder holds more than that folder.
        std::fs::write(dir.path().join("ada/notes.txt"), "n").unwrap();
        assert_eq!(s.lesson_file(&ex, false), Ok(None));

        let cased = dir.path().join("bo/Lib.rs");
        std::fs::create_dir_all(cased.parent().unwrap()).unwrap();
        std::fs::write(&cased, "x").unwrap();
        let s = Submission::at(&dir.path().join("bo"));
        assert_eq!(
            s.lesson_file(&ex, false),
            Ok(Some(cased.clone())),
            "found as it is named"
        );
        assert_eq!(
            s.lesson_file(&ex, true),
            Ok(Some(cased)),
            "and the same with --lesson"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_folders_only_entry_that_is_a_link_is_refused_only_where_it_would_be_read() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let theirs = dir.path().join("theirs");
        std::fs::create_dir_all(theirs.join("src")).unwrap();
        std::fs::write(theirs.join("src/lib.rs"), "x").unwrap();
        let file = dir.path().join("file");
        std::fs::create_dir_all(&file).unwrap();
        symlink(theirs.join("src/lib.rs"), file.join("lib.rs")).unwrap();
        let s = Submission::at(&file);
        assert_eq!(
            s.lesson_file(&exercise("practice/src/lib.rs"), false),
            Err(Refusal::Link(file.join("lib.rs")))
        );
        assert_eq!(
            s.lesson_file(&exercise("practice/src/gateway.rs"), false),
            Ok(None)
        );
        let folder = dir.path().join("folder");
        std::fs::create_dir_all(&folder).unwrap();
        symlink(&theirs, folder.join("retry-kit-main")).unwrap();
        let s = Submission::at(&folder);
        assert_eq!(
            s.lesson_file(&exercise("practice/src/gateway.rs"), false),
            Err(Refusal::Link(folder.join("retry-kit-main"))),
            "another learner's folder is never looked into"
        );
    }

    #[test]
    fn every_candidate_is_listed_the_graded_one_first() {
        let dir = tempfile::tempdir().unwrap();
        let ex = exercise("practice/src/lib.rs");
        for rel in ["cy/lib.rs", "cy/src/lib.rs"] {
            let path = dir.path().join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, rel).unwrap();
        }
        let s = Submission::at(&dir.path().join("cy"));
        assert_eq!(
            s.lesson_files(&ex),
            Ok(vec![
                dir.path().join("cy/src/lib.rs"),
                dir.path().join("cy/lib.rs")
            ])
        );
    }

    #[test]
    fn a_folders_only_rust_file_counts_when_the_lesson_is_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("retry.rs"), "x").unwrap();
        let s = Submission::at(dir.path());
        let ex = exercise("practice/src/lib.rs");
        assert_eq!(s.lesson_file(&ex, false), Ok(None));
        assert_eq!(
            s.lesson_file(&ex, true),
            Ok(Some(dir.path().join("retry.rs")))
        );
        std::fs::write(dir.path().join("other.rs"), "y").unwrap();
        assert_eq!(s.lesson_file(&ex, true), Ok(None), "two files: which one?");
    }

    #[cfg(unix)]
    #[test]
    fn no_symbolic_link_is_followed_file_folder_on_the_way_or_the_submission_itself() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let ex = exercise("practice/src/lib.rs");
        let ana = dir.path().join("ana");
        std::fs::create_dir_all(ana.join("src")).unwrap();
        std::fs::write(ana.join("src/lib.rs"), "ana's work").unwrap();
        // Another learner's file, another learner's folder, and a file of the machine.
        let cases = [
            ("file", "lib.rs", ana.join("src/lib.rs")),
            ("folder", "src", ana.join("src")),
            ("outside", "lib.rs", PathBuf::from("/etc/passwd")),
        ];
        for (name, link, target) in cases {
            let sub = dir.path().join(name);
            std::fs::create_dir_all(&sub).unwrap();
            symlink(&target, sub.join(link)).unwrap();
            let s = Submission::at(&sub);
            assert_eq!(
                s.lesson_file(&ex, false),
                Err(Refusal::Link(sub.join(link))),
                "{name}"
            );
            // Read directly, the link is refused by the open itself.
            let direct = read_no_follow(&sub.join(link), MAX_LESSON_FILE);
            assert!(
                matches!(direct, Err(ReadError::Refused(Refusal::Link(_)))),
                "{name}: {direct:?}"
            );
        }
        let whole = dir.path().join("eve");
        symlink(&ana, &whole).unwrap();
        let s = Submission::at(&whole);
        assert_eq!(s.refusal(), Some(Refusal::Link(whole.clone())));
        assert_eq!(s.lesson_file(&ex, true), Err(Refusal::Link(whole.clone())));
        assert!(s.read(&ana.join("src/lib.rs"), MAX_LESSON_FILE).is_err());
        // A log that is a link is refused too.
        symlink(ana.join("src/lib.rs"), ana.join(LOG_FILE)).unwrap();
        assert_eq!(
            Submission::at(&ana).guidance_log(),
            Err(Refusal::Link(ana.join(LOG_FILE)))
        );
    }

    #[test]
    fn a_file_past_its_bound_is_refused_after_reading_one_byte_more() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lib.rs");
        std::fs::write(&path, vec![b'x'; 101]).unwrap();
        let refused = read_no_follow(&path, 100);
        assert!(
            matches!(
                &refused,
                Err(ReadError::Refused(Refusal::TooLarge { limit: 100, .. }))
            ),
            "{refused:?}"
        );
        assert_eq!(
            refused.unwrap_err().to_string(),
            format!("{} is larger than 100 bytes", path.display())
        );
        std::fs::write(&path, vec![b'x'; 100]).unwrap();
        assert_eq!(read_no_follow(&path, 100).unwrap().len(), 100);
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_without_waiting_for_a_writer() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lib.rs");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &path,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
        )
        .unwrap();
        // On a thread, so that a read that blocks fails the test rather than hanging it.
        let (send, got) = std::sync::mpsc::channel();
        let reading = path.clone();
        std::thread::spawn(move || {
            let _ = send.send(read_no_follow(&reading, MAX_LESSON_FILE).map(|_| ()));
        });
        let result = got
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("the read of a FIFO returns at once");
        assert!(
            matches!(result, Err(ReadError::Refused(Refusal::NotAFile(_)))),
            "{result:?}"
        );
        let s = Submission::at(dir.path());
        assert_eq!(
            s.lesson_file(&exercise("practice/src/lib.rs"), false),
            Err(Refusal::NotAFile(path))
        );
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

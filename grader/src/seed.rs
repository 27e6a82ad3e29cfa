//! Warming a cold copy of the kit from a build that already exists.
//!
//! Each copy of the kit (for grading, for the kit's own tests) builds into its own target
//! folder (see [`BuildPlace::isolated`](crate::compile::BuildPlace::isolated)), so its first
//! build would compile every dependency: a quarter of a minute on two cores. A copy that has
//! never built is seeded instead from a build of the same kit — the kit's own `target/`, or
//! another copy's: the compiled units are copied with their files' modification times, and
//! the copy's files get the times of the same files in the warm kit, so cargo finds every
//! unit up to date that it would find up to date there.
//!
//! cargo stays the judge: a unit is reused only when its fingerprint matches (same sources,
//! features, profile and compiler), and anything else is compiled as usual. What is never
//! copied: the learner's crate and the harness that links it (every copy compiles its own
//! learner's code), the grader (copies do not build it), test and bench executables, and
//! incremental data.

use crate::kitcopy::Files;
use std::collections::BTreeSet;
use std::fs::{self, FileTimes};
use std::io;
use std::path::Path;
use std::time::SystemTime;

/// Whether the copy at `root` has built before (it has cargo's records in `root/target`).
pub fn is_warm(root: &Path) -> bool {
    is_warm_target(&root.join("target"))
}

/// Whether cargo has built into the target folder `target`.
pub fn is_warm_target(target: &Path) -> bool {
    target.join("debug/.fingerprint").is_dir()
}

/// Seeds the cold copy at `to`, which holds `files`, from the build in `from_debug` (a
/// `target/debug` folder) of the kit at `from`.
///
/// A file of `to` gets the modification time of the same file in `from` when both hold the
/// same bytes, and the present time otherwise (a lesson file, a file the kit's working tree
/// changed), so cargo compiles what depends on it.
pub fn seed(from: &Path, from_debug: &Path, to: &Path, files: &Files) -> io::Result<()> {
    let to_debug = to.join("target/debug");
    let units = reusable_units(from_debug)?;
    // cargo's records are read first and written last. Read first: a unit cargo rebuilds in
    // the kit meanwhile (a `cargo build` the grader's lock does not stop) then has its older
    // record here, never a record newer than the artifact copied. Written last: a seed cut
    // short leaves artifacts cargo does not trust yet, and a copy that is not warm, so the
    // next run seeds it again.
    let records = read_tree(&from_debug.join(".fingerprint"), &units)?;
    copy_units(&from_debug.join("deps"), &to_debug.join("deps"), &units)?;
    copy_units(&from_debug.join("build"), &to_debug.join("build"), &units)?;
    for (path, bytes, time) in records {
        let path = to_debug.join(".fingerprint").join(path);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)?;
        }
        fs::write(&path, bytes)?;
        set_modified(&path, time)?;
    }
    let now = SystemTime::now();
    for (path, content) in files {
        let theirs = from.join(path);
        let time = match fs::read(&theirs) {
            Ok(bytes) if bytes == *content => fs::metadata(&theirs)?.modified()?,
            _ => now,
        };
        set_modified(&to.join(path), time)?;
    }
    Ok(())
}

/// The files under `dir` that belong to one of `units`: path (relative to `dir`), content
/// and modification time.
fn read_tree(
    dir: &Path,
    units: &BTreeSet<String>,
) -> io::Result<Vec<(std::path::PathBuf, Vec<u8>, SystemTime)>> {
    let mut found = Vec::new();
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        if !units.contains(unit_hash(&entry.file_name().to_string_lossy())) {
            continue;
        }
        let mut stack = vec![entry.path()];
        while let Some(path) = stack.pop() {
            let meta = fs::symlink_metadata(&path)?;
            if meta.is_dir() {
                for child in fs::read_dir(&path)? {
                    stack.push(child?.path());
                }
            } else if meta.is_file() {
                let relative = path.strip_prefix(dir).unwrap_or(&path).to_path_buf();
                found.push((relative, fs::read(&path)?, meta.modified()?));
            }
        }
    }
    Ok(found)
}

/// The units of `debug` worth copying, by the hash cargo gives each (`kit-types-<hash>` in
/// `.fingerprint`, `libkit_types-<hash>.rlib` in `deps`): libraries, binaries and build
/// scripts, but not the learner's crate or its harness, and not test, bench or doc units.
fn reusable_units(debug: &Path) -> io::Result<BTreeSet<String>> {
    let mut units = BTreeSet::new();
    for entry in fs::read_dir(debug.join(".fingerprint"))? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        // The learner's crate and its harness are compiled in every copy; the grader itself
        // (the command line, `kit-grader`, and its launcher, `grader`) is not built in copies
        // (and its binary knows the folder it was built in).
        let package = name
            .rsplit_once('-')
            .map_or(name.as_str(), |(package, _)| package);
        let grader = package == "grader" || package == "kit-grader";
        if name.starts_with("practice-") || grader || !entry.file_type()?.is_dir() {
            continue;
        }
        // cargo names each record after the target's kind: `lib-kit_types`, `bin-grader`,
        // `test-integration-test-cli`, `run-build-script-build-script-build`…
        let mut kept = false;
        for record in fs::read_dir(entry.path())? {
            let record = record?.file_name();
            let record = record.to_string_lossy();
            if ["test-", "bench-", "doc-", "example-"]
                .iter()
                .any(|kind| record.starts_with(kind))
            {
                kept = false;
                break;
            }
            kept |= ["lib-", "bin-", "build-script-", "run-build-script-"]
                .iter()
                .any(|kind| record.starts_with(kind));
        }
        if kept {
            units.insert(unit_hash(&name).to_string());
        }
    }
    Ok(units)
}

/// The unit hash in an artifact's name: `004c0a9b0e9bbed2` in `libserde-004c0a9b0e9bbed2.rlib`,
/// `serde-004c0a9b0e9bbed2.d` or the folder `serde-004c0a9b0e9bbed2`.
fn unit_hash(file_name: &str) -> &str {
    let stem = file_name.split('.').next().unwrap_or(file_name);
    stem.rsplit('-').next().unwrap_or(stem)
}

/// Copies the entries of `from` that belong to one of `units` into `to`, with times.
fn copy_units(from: &Path, to: &Path, units: &BTreeSet<String>) -> io::Result<()> {
    let Ok(entries) = fs::read_dir(from) else {
        return Ok(());
    };
    fs::create_dir_all(to)?;
    for entry in entries {
        let entry = entry?;
        let name = entry.file_name();
        if units.contains(unit_hash(&name.to_string_lossy())) {
            copy_tree(&entry.path(), &to.join(&name))?;
        }
    }
    Ok(())
}

/// Copies a file, or a folder and everything in it, keeping modification times.
fn copy_tree(from: &Path, to: &Path) -> io::Result<()> {
    let meta = match fs::symlink_metadata(from) {
        Ok(meta) => meta,
        // Removed since it was listed (cargo replaces some files as it builds): it is not
        // needed, and cargo builds whatever a copy lacks.
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    if meta.is_dir() {
        fs::create_dir_all(to)?;
        for entry in fs::read_dir(from)? {
            let entry = entry?;
            copy_tree(&entry.path(), &to.join(entry.file_name()))?;
        }
        // A folder's time matters to no one; its files' times are what cargo compares.
    } else if meta.is_file() {
        match fs::copy(from, to) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            copied => copied?,
        };
        set_modified(to, meta.modified()?)?;
    }
    Ok(())
}

fn set_modified(path: &Path, time: SystemTime) -> io::Result<()> {
    fs::File::options()
        .write(true)
        .open(path)?
        .set_times(FileTimes::new().set_modified(time))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;
    use std::time::Duration;

    fn write_old(path: &Path, text: &str, time: SystemTime) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
        set_modified(path, time).unwrap();
    }

    #[test]
    fn a_seed_copies_reusable_units_with_their_times_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let (kit, copy) = (dir.path().join("kit"), dir.path().join("copy"));
        let debug = kit.join("target/debug");
        let old = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let older = old - Duration::from_secs(60);
        // The kit's build: a library, a binary and a build script's two units (reused); the
        // learner's crate, its harness, the grader (its launcher and its command line), a test
        // executable, incremental data and the uplifted binary (left out).
        let kept = [
            ".fingerprint/kit-types-aa11/lib-kit_types",
            "deps/libkit_types-aa11.rlib",
            "deps/libkit_types-aa11.rmeta",
            "deps/kit_types-aa11.d",
            ".fingerprint/tool-bb22/bin-tool",
            "deps/tool-bb22",
            ".fingerprint/libc-cc33/build-script-build-script-build",
            "build/libc-cc33/build-script-build",
            ".fingerprint/libc-dd44/run-build-script-build-script-build",
            "build/libc-dd44/out/x",
            ".fingerprint/libc-ee55/lib-libc",
            "deps/liblibc-ee55.rlib",
        ];
        let left = [
            ".fingerprint/grader-2299/bin-grader",
            "deps/grader-2299",
            ".fingerprint/kit-grader-3300/bin-kit-grader",
            ".fingerprint/kit-grader-3300/lib-grader",
            "deps/kit_grader-3300",
            "deps/libgrader-3300.rlib",
            ".fingerprint/practice-ff66/lib-practice",
            "deps/libpractice-ff66.rlib",
            ".fingerprint/practice-harness-0077/bin-practice_harness",
            "deps/practice_harness-0077",
            ".fingerprint/grader-1188/test-integration-test-cli",
            ".fingerprint/grader-1188/dep-test-integration-test-cli",
            "deps/cli-1188",
            "incremental/grader-x/s",
            "grader",
        ];
        // Folders of left-out units, which must not be there at all.
        let left_folders = [
            ".fingerprint/grader-2299",
            ".fingerprint/kit-grader-3300",
            ".fingerprint/practice-ff66",
            ".fingerprint/practice-harness-0077",
            ".fingerprint/grader-1188",
            "incremental",
        ];
        for path in kept.iter().chain(&left) {
            write_old(&debug.join(path), "built", old);
        }
        // The copy's files: one the same as the kit's, one that differs (a lesson file).
        write_old(&kit.join("grader/src/lib.rs"), "same", older);
        write_old(&kit.join("practice/src/lib.rs"), "the learner's", older);
        write_old(&copy.join("grader/src/lib.rs"), "same", SystemTime::now());
        write_old(&copy.join("practice/src/lib.rs"), "todo!()", older);
        let files: Files = [
            (PathBuf::from("grader/src/lib.rs"), b"same".to_vec()),
            (PathBuf::from("practice/src/lib.rs"), b"todo!()".to_vec()),
        ]
        .into();
        assert!(!is_warm(&copy));

        seed(&kit, &debug, &copy, &files).unwrap();

        assert!(is_warm(&copy));
        let to = copy.join("target/debug");
        for kept in kept {
            let time = fs::metadata(to.join(kept)).and_then(|m| m.modified());
            assert_eq!(time.ok(), Some(old), "{kept} is copied with its time");
        }
        for left in left.iter().chain(&left_folders) {
            assert!(!to.join(left).exists(), "{left} is left out");
        }
        let time = |p: &str| fs::metadata(copy.join(p)).unwrap().modified().unwrap();
        assert_eq!(time("grader/src/lib.rs"), older, "as old as the kit's file");
        assert!(time("practice/src/lib.rs") > old, "a differing file is new");
    }

    #[test]
    fn a_kit_that_never_built_is_not_warm_and_cannot_seed() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!is_warm_target(&dir.path().join("target")));
        let err = seed(
            dir.path(),
            &dir.path().join("target/debug"),
            &dir.path().join("copy"),
            &Files::new(),
        );
        assert!(err.is_err());
    }
}

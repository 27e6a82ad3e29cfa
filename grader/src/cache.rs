//! What the grader remembers between runs, under `target/kit-cache/`: the last harness built
//! for each lesson, with the learner's library it loads (so a run with nothing changed
//! starts no cargo); the recipe that rebuilds that library after an edit, and the harness
//! that loads it (`crate::replay`); the input a check is handed
//! ([`crate::check_input`]); and the last result of each lesson (so `list` answers without
//! running anything).
//!
//! Everything here is keyed by what it was made from. A `Fingerprint` of the kit's inputs
//! covers the manifests, the lock file and the kit's sources by size and modification time,
//! and the learner's files by content (an edit can keep both size and time within the
//! clock's resolution). A stale entry is never used: it no longer matches its key.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// A stable hash of some bytes, as hex: 64-bit FNV-1a, enough to tell two versions of a
/// file apart (not a security measure).
///
/// ```
/// assert_eq!(grader::cache::content_hash(b""), "cbf29ce484222325");
/// assert_ne!(grader::cache::content_hash(b"a"), grader::cache::content_hash(b"b"));
/// ```
pub fn content_hash(bytes: &[u8]) -> String {
    let mut hash: u64 = 0xcbf29ce484222325;
    for b in bytes {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x100000001b3);
    }
    format!("{hash:016x}")
}

/// The folder, under the target folder, that holds the cache.
pub const CACHE_DIR: &str = "kit-cache";

/// The cache of the kit at `root`.
pub fn dir(root: &Path) -> PathBuf {
    crate::workspace::target_dir(root).join(CACHE_DIR)
}

/// A digest of everything a lesson's harness is built from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Fingerprint(pub String);

/// Folders of the kit whose sources the harness is built from (the grader's own command
/// line is not among them: it is not linked into the harness). The runner's crate is one: a
/// check's runner is built from it, and the judge links its end of the wire.
const SOURCES: [&str; 5] = [
    "reference",
    "grader/checks",
    "grader/runner",
    "grader/harness",
    "practice",
];

/// The fingerprint of the kit at `root` for building `lesson`.
pub(crate) fn fingerprint(root: &Path, lesson: &str) -> Fingerprint {
    fingerprints(root, lesson).0
}

/// [`fingerprint`], and the kit's fingerprint without the learner's Rust sources
/// (`practice/**/*.rs`): what must stay the same for the compiler commands of one build to
/// serve the next (see [`replay`](crate::replay)); the practice crate's manifest still
/// counts, by content. Both from one look at the files: a build the cache cannot serve
/// needs both.
pub(crate) fn fingerprints(root: &Path, lesson: &str) -> (Fingerprint, Fingerprint) {
    let mut common = format!("group {lesson}\n");
    for var in [
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTUP_TOOLCHAIN",
        "CARGO",
    ] {
        common.push_str(&format!("{var}={:?}\n", std::env::var_os(var)));
    }
    if let Some(cargo) = std::env::var_os("CARGO") {
        common.push_str(&stamp(Path::new(&cargo)));
    }
    for file in ["Cargo.toml", "Cargo.lock"] {
        common.push_str(&stamp(&root.join(file)));
    }
    let mut all = format!("all sources\n{common}");
    let mut kit = format!("without the learner's sources\n{common}");
    // Another lesson's file is not compiled into this lesson's harness: editing it changes
    // nothing here.
    let others: Vec<PathBuf> = std::fs::read_dir(root.join("exercises"))
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|e| crate::LessonInfo::load(root, e.file_name().to_str()?).ok())
        .filter(|e| e.name != lesson)
        .map(|e| root.join(e.file))
        .collect();
    for folder in SOURCES {
        let mut files = Vec::new();
        collect(&root.join(folder), &mut files);
        files.sort();
        for file in files.into_iter().filter(|f| !others.contains(f)) {
            if !file.starts_with(root.join("practice")) {
                let line = stamp(&file);
                all.push_str(&line);
                kit.push_str(&line);
                continue;
            }
            // The learner's files by content: they are small, and an edit must count.
            let content = std::fs::read(&file).unwrap_or_default();
            let line = format!("{} {}\n", file.display(), content_hash(&content));
            all.push_str(&line);
            if file.extension().is_none_or(|e| e != "rs") {
                kit.push_str(&line);
            }
        }
    }
    (
        Fingerprint(content_hash(all.as_bytes())),
        Fingerprint(content_hash(kit.as_bytes())),
    )
}

/// A line that changes when the file at `path` changes: its path, size and modification
/// time (or that it is missing).
pub(crate) fn stamp(path: &Path) -> String {
    match std::fs::metadata(path) {
        Ok(m) => {
            let modified = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            format!("{} {} {modified}\n", path.display(), m.len())
        }
        Err(_) => format!("{} missing\n", path.display()),
    }
}

/// Every source and manifest file under `dir`, outside build output.
fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        let name = entry.file_name();
        if name == "target" || name.to_string_lossy().starts_with('.') {
            continue;
        }
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs" || e == "toml") {
            out.push(path);
        }
    }
}

/// Reads a cache entry written by [`store`] in the cache folder `dir`; `None` when it is
/// missing or unreadable.
pub(crate) fn load<T: serde::de::DeserializeOwned>(dir: &Path, name: &str) -> Option<T> {
    let text = std::fs::read_to_string(dir.join(name)).ok()?;
    serde_json::from_str(&text).ok()
}

/// Writes a cache entry in the cache folder `dir`, as JSON ([`store_bytes`]).
pub(crate) fn store<T: Serialize>(dir: &Path, name: &str, value: &T) {
    if let Ok(text) = serde_json::to_string_pretty(value) {
        store_bytes(dir, name, text.as_bytes());
    }
}

/// Writes the file `name` in the cache folder `dir`, whole or not at all (through a
/// temporary file and a rename): a reader never sees half of it. A cache that cannot be
/// written only costs time later, so failures are ignored.
pub(crate) fn store_bytes(dir: &Path, name: &str, bytes: &[u8]) {
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    if let Ok(mut tmp) = tempfile::NamedTempFile::new_in(dir) {
        if std::io::Write::write_all(&mut tmp, bytes).is_ok() {
            let _ = tmp.persist(dir.join(name));
        }
    }
}

/// The last result of a lesson's checks on the learner's code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct LastResult {
    /// The content hash of the learner's file it was for.
    pub(crate) learner_hash: String,
    /// The kit it was graded by.
    pub(crate) fingerprint: Fingerprint,
    /// `passing`, `failing`, `unfinished`, `does not compile`, `refused`.
    pub(crate) standing: String,
    /// Checks that passed, failed (kit bugs included) and were unfinished.
    pub(crate) counts: [usize; 3],
    /// When (RFC 3339).
    pub(crate) at: String,
}

/// The cache entry name of `lesson`'s last result.
pub(crate) fn result_name(lesson: &str) -> String {
    format!("result-{lesson}.json")
}

/// The content hash of the learner's file `file` (relative to `root`), or of nothing.
pub(crate) fn learner_hash(root: &Path, file: &Path) -> String {
    content_hash(&std::fs::read(root.join(file)).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fingerprint_follows_the_learners_content_and_the_kits_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for (file, text) in [
            ("Cargo.toml", "[workspace]\n"),
            ("Cargo.lock", ""),
            ("practice/src/lib.rs", "fn a() {}\n"),
            ("reference/src/lib.rs", "pub fn r() {}\n"),
        ] {
            std::fs::create_dir_all(root.join(file).parent().unwrap()).unwrap();
            std::fs::write(root.join(file), text).unwrap();
        }
        let first = fingerprint(root, "build3");
        assert_eq!(fingerprint(root, "build3"), first, "nothing changed");
        assert_ne!(fingerprint(root, "stage8"), first, "another lesson");
        // Same size, same second: only the content tells.
        std::fs::write(root.join("practice/src/lib.rs"), "fn b() {}\n").unwrap();
        let edited = fingerprint(root, "build3");
        assert_ne!(edited, first);
        std::fs::write(root.join("reference/src/lib.rs"), "pub fn r2() {}\n").unwrap();
        let kit_changed = fingerprint(root, "build3");
        assert_ne!(kit_changed, edited);
        // The runner a check starts is built from its crate.
        std::fs::create_dir_all(root.join("grader/runner/src")).unwrap();
        std::fs::write(root.join("grader/runner/src/lib.rs"), "pub fn s() {}\n").unwrap();
        let runner_changed = fingerprint(root, "build3");
        assert_ne!(runner_changed, kit_changed, "the runner's crate");
        // Another lesson's file is not part of this lesson's build.
        std::fs::create_dir_all(root.join("exercises/stage8")).unwrap();
        std::fs::write(
            root.join("exercises/stage8/info.toml"),
            "group = \"stage8\"\ntitle = \"t\"\nfunction = \"f\"\nfile = \"practice/src/gateway.rs\"\n\
             stub = \"stub.rs\"\nlesson = \"lesson.md\"\n",
        )
        .unwrap();
        std::fs::write(root.join("practice/src/gateway.rs"), "one\n").unwrap();
        let (before, own_before) = (fingerprint(root, "build3"), fingerprint(root, "stage8"));
        std::fs::write(root.join("practice/src/gateway.rs"), "two\n").unwrap();
        assert_eq!(fingerprint(root, "build3"), before);
        assert_ne!(
            fingerprint(root, "stage8"),
            own_before,
            "its own lesson's file counts"
        );
    }

    #[test]
    fn the_kits_fingerprint_leaves_out_the_learners_sources_but_not_their_manifest() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for (file, text) in [
            ("Cargo.toml", "[workspace]\n"),
            ("Cargo.lock", ""),
            ("practice/Cargo.toml", "[package]\n"),
            ("practice/src/lib.rs", "fn a() {}\n"),
        ] {
            std::fs::create_dir_all(root.join(file).parent().unwrap()).unwrap();
            std::fs::write(root.join(file), text).unwrap();
        }
        let kit = fingerprints(root, "build3").1;
        assert_ne!(kit, fingerprint(root, "build3"));
        std::fs::write(root.join("practice/src/lib.rs"), "fn b() {}\n").unwrap();
        std::fs::write(root.join("practice/src/helper.rs"), "fn h() {}\n").unwrap();
        assert_eq!(fingerprints(root, "build3").1, kit, "the learner's code");
        // A dependency added to the learner's manifest changes what cargo would run.
        std::fs::write(
            root.join("practice/Cargo.toml"),
            "[package]\n[dependencies]\n",
        )
        .unwrap();
        assert_ne!(fingerprints(root, "build3").1, kit);
    }

    #[test]
    fn entries_round_trip_and_a_missing_one_is_none() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("Cargo.toml"), "").unwrap();
        let r = LastResult {
            learner_hash: "abc".into(),
            fingerprint: Fingerprint("f".into()),
            standing: "passing".into(),
            counts: [3, 0, 0],
            at: "2026-12-01T00:00:00Z".into(),
        };
        store(dir.path(), "x.json", &r);
        assert_eq!(load::<LastResult>(dir.path(), "x.json"), Some(r));
        assert_eq!(load::<LastResult>(dir.path(), "missing.json"), None);
    }
}

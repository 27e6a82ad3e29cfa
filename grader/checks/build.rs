//! Names the state of the code that makes and reads the exhaustive checks' digests (build3's
//! and stage8's) — the checks, the runner's spaces and digests, the reference, and in a copy
//! of the kit without the answers the oracle that stands in for it — as
//! `KIT_CHECKS_STATE`, so that a grader and a harness built from
//! different states of the kit (a long watch across an update of the kit, `grade --root`
//! with another kit) never take each other's digests.
//!
//! Cargo.lock is left out: a learner who adds a crate to the practice crate changes it, and
//! the kit's crates would all be compiled again (20 s) for a change that does not touch
//! them. The harness's spot checks of the reference's runs are the guard there.

use std::path::{Path, PathBuf};

/// Relative to this package, so that in a copy of the kit cargo checks the copy's files.
const SOURCES: [&str; 4] = ["src", "oracle", "../runner/src", "../../reference/src"];

fn main() {
    let Some(package) = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from) else {
        return;
    };
    let mut files = Vec::new();
    for source in SOURCES {
        collect(&package.join(source), &mut files);
    }
    files.sort();
    // FNV-1a over each file's path (as named from this package) and bytes.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for file in files {
        let name = file
            .strip_prefix(&package)
            .unwrap_or(&file)
            .to_string_lossy()
            .into_owned();
        // Files, not folders: a copy of the kit gets the kit's file times but folders of
        // its own (and a new file is compiled in only through an edit of a listed one).
        println!("cargo:rerun-if-changed={name}");
        let bytes = std::fs::read(&file).unwrap_or_default();
        for byte in name.bytes().chain([0]).chain(bytes) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    println!("cargo:rustc-env=KIT_CHECKS_STATE={hash:016x}");
}

/// Every file at or under `path`.
fn collect(path: &Path, files: &mut Vec<PathBuf>) {
    if path.is_file() {
        files.push(path.to_path_buf());
    } else if let Ok(entries) = std::fs::read_dir(path) {
        for entry in entries.flatten() {
            collect(&entry.path(), files);
        }
    }
}

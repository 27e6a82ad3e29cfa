//! Finding the kit's folders: the workspace that holds `exercises/`, and its target folder.

use std::path::{Path, PathBuf};

/// The first folder at or above `start` that holds both `Cargo.toml` and `exercises/`.
pub(crate) fn find_root(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .find(|dir| dir.join("Cargo.toml").is_file() && dir.join("exercises").is_dir())
        .map(Path::to_path_buf)
}

/// The kit folder this grader was built from: the fallback when the current folder is
/// outside the kit.
pub(crate) fn build_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// The target folder builds of the kit at `root` use.
pub(crate) fn target_dir(root: &Path) -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => {
            let dir = PathBuf::from(dir);
            if dir.is_absolute() {
                dir
            } else {
                root.join(dir)
            }
        }
        _ => root.join("target"),
    }
}

#[cfg(test)]
mod tests {
    /// What the item's documentation once showed as an example.
    #[test]
    fn find_root_finds_the_kit() {
        let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let root = crate::workspace::find_root(here).unwrap();
        assert!(root.join("exercises").is_dir());
    }
}

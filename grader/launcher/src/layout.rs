//! Where the command line is: the kit's folder, cargo's target folder and profile (read from
//! where cargo put this launcher), and the program, its dep-info and its build record
//! beside the launcher.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The command line's package (in `grader/`).
pub(crate) const PACKAGE: &str = "kit-grader";
/// Its program.
pub(crate) const PROGRAM: &str = "kit-grader";

/// Why the command line cannot be run the quick way.
#[derive(Debug)]
pub(crate) enum Unplaced {
    /// No kit was found: what was looked for.
    NoKit(String),
    /// The kit is at this folder, but this launcher is not where cargo puts a profile's
    /// programs: let cargo run the command line.
    Unusual(PathBuf),
}

/// The command line's build, as this launcher's own place says it is.
#[derive(Debug, Clone)]
pub(crate) struct Place {
    /// The kit's folder: the workspace root.
    pub(crate) root: PathBuf,
    /// cargo's target folder (the one holding `CACHEDIR.TAG`).
    pub(crate) target: PathBuf,
    /// The target triple's folder between the two, when cargo built for an explicit one.
    pub(crate) triple: Option<String>,
    /// The profile's folder's name: `debug`, `release`, or a custom profile's.
    pub(crate) profile: String,
    /// The command line's program, beside this launcher.
    pub(crate) program: PathBuf,
    /// cargo's list of the files the program was built from.
    pub(crate) dep_info: PathBuf,
    /// What the launcher recorded of the program's last build.
    pub(crate) stamp: PathBuf,
}

impl Place {
    /// Reads the place from this process: the kit from `CARGO_MANIFEST_DIR` (which `cargo
    /// run` sets to this package's folder, `grader/launcher`, with `CARGO_PKG_NAME`: a
    /// folder another package's run left in the environment is not taken), or from where
    /// this package was when it was built; the rest from this program's own path.
    pub(crate) fn find() -> Result<Place, Unplaced> {
        let ours = std::env::var("CARGO_PKG_NAME").is_ok_and(|n| n == env!("CARGO_PKG_NAME"));
        let from_cargo = std::env::var_os("CARGO_MANIFEST_DIR")
            .filter(|_| ours)
            .map(PathBuf::from);
        let built_at = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let root = from_cargo
            .iter()
            .chain([&built_at])
            .find_map(|manifest| kit_root(manifest))
            .ok_or_else(|| {
                Unplaced::NoKit(format!("no kit two folders above {}", built_at.display()))
            })?;
        let exe = std::env::current_exe()
            .map_err(|e| Unplaced::NoKit(format!("this program's own path: {e}")))?;
        Place::beside(&root, &exe).ok_or(Unplaced::Unusual(root))
    }

    /// The place of a launcher at `exe` in a target folder of the kit at `root`: `None`
    /// unless `exe` is in a profile's folder of a cargo target folder (`TARGET/PROFILE/` or
    /// `TARGET/TRIPLE/PROFILE/`).
    ///
    /// cargo marks a triple's folder as a target folder too: a folder inside a target folder
    /// whose name has a dash (as every target triple does) is taken for a triple's, unless
    /// it holds cargo's record of the compiler (`.rustc_info.json`), which only the top of a
    /// target folder has.
    pub(crate) fn beside(root: &Path, exe: &Path) -> Option<Place> {
        let profile_dir = exe.parent()?;
        let profile = profile_dir.file_name()?.to_str()?.to_string();
        let above = profile_dir.parent()?;
        let name = above.file_name()?.to_str()?.to_string();
        // cargo keeps its record of the compiler at the top of a target folder only.
        let top = is_target(above) && above.join(".rustc_info.json").is_file();
        let (target, triple) = match above.parent() {
            Some(outer) if !top && is_target(outer) && name.contains('-') => {
                (outer.to_path_buf(), Some(name))
            }
            _ if is_target(above) => (above.to_path_buf(), None),
            _ => return None,
        };
        let program = profile_dir.join(format!("{PROGRAM}{}", std::env::consts::EXE_SUFFIX));
        Some(Place {
            root: root.to_path_buf(),
            target,
            triple,
            profile,
            dep_info: profile_dir.join(format!("{PROGRAM}.d")),
            stamp: profile_dir.join(format!("{PROGRAM}.stamp")),
            program,
        })
    }

    /// `cargo build` of the command line into this place: the same target folder, profile
    /// and target, from the lock as it is (`cargo run` has just resolved it). Quiet, as
    /// `cargo run -q` is: the launcher says when a build takes long.
    pub(crate) fn build_command(&self) -> Command {
        let mut command = Command::new(cargo());
        command
            .args(["build", "--quiet", "--locked", "--manifest-path"])
            .arg(self.root.join("Cargo.toml"))
            .arg("--target-dir")
            .arg(&self.target)
            .args(["-p", PACKAGE, "--bin", PROGRAM]);
        match self.profile.as_str() {
            "debug" => {}
            "release" => {
                command.arg("--release");
            }
            other => {
                command.args(["--profile", other]);
            }
        }
        if let Some(triple) = &self.triple {
            command.args(["--target", triple]);
        }
        command
    }
}

/// The profile this launcher was built in, when its folder's name says it plainly
/// (`debug`, `release`): for a run where the rest of the place is not known.
pub(crate) fn own_profile() -> Option<String> {
    let exe = std::env::current_exe().ok()?;
    match exe.parent()?.file_name()?.to_str()? {
        "debug" => Some("dev".to_string()),
        "release" => Some("release".to_string()),
        _ => None,
    }
}

/// The cargo that started this launcher (`cargo run` says which), else `cargo`.
pub(crate) fn cargo() -> PathBuf {
    std::env::var_os("CARGO")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("cargo"))
}

/// The kit's folder for this package's folder `manifest` (`KIT/grader/launcher`).
fn kit_root(manifest: &Path) -> Option<PathBuf> {
    let root = manifest.parent()?.parent()?;
    root.join("Cargo.toml")
        .is_file()
        .then(|| root.to_path_buf())
}

/// Whether `dir` is a cargo target folder: cargo marks each with `CACHEDIR.TAG`.
fn is_target(dir: &Path) -> bool {
    dir.join("CACHEDIR.TAG").is_file()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn target_folder(dir: &Path) {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(
            dir.join("CACHEDIR.TAG"),
            "Signature: 8a477f597d28d172789f06886806bc55",
        )
        .unwrap();
    }

    /// A new empty folder of the system's temporary folder, for one test (the launcher
    /// depends on nothing, `tempfile` included).
    pub(crate) fn scratch(name: &str) -> PathBuf {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let dir = std::env::temp_dir().join(format!(
            "kit-launcher-{name}-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_profiles_folder_gives_the_target_folder_and_the_profile() {
        let dir = scratch("plain");
        target_folder(&dir.join("target"));
        let place = Place::beside(&dir, &dir.join("target/release/grader")).unwrap();
        assert_eq!(place.target, dir.join("target"));
        assert_eq!(place.triple, None);
        assert_eq!(place.profile, "release");
        assert_eq!(
            place.program,
            dir.join("target/release")
                .join(format!("kit-grader{}", std::env::consts::EXE_SUFFIX))
        );
        assert_eq!(place.dep_info, dir.join("target/release/kit-grader.d"));
        let args: Vec<String> = place
            .build_command()
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let at = args.iter().position(|a| a == "--release");
        assert!(at.is_some(), "{args:?}");
        assert!(
            args.windows(2).any(|w| w == ["-p", "kit-grader"]),
            "{args:?}"
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_triples_folder_is_passed_on_and_a_custom_profile_by_name() {
        let dir = scratch("triple");
        target_folder(&dir.join("out"));
        // cargo marks the triple's folder too.
        target_folder(&dir.join("out/x86_64-unknown-linux-gnu"));
        let exe = dir.join("out/x86_64-unknown-linux-gnu/fast/grader");
        let place = Place::beside(&dir, &exe).unwrap();
        assert_eq!(place.target, dir.join("out"));
        assert_eq!(place.triple.as_deref(), Some("x86_64-unknown-linux-gnu"));
        let args: Vec<String> = place
            .build_command()
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert!(
            args.windows(2).any(|w| w == ["--profile", "fast"]),
            "{args:?}"
        );
        assert!(
            args.windows(2)
                .any(|w| w == ["--target", "x86_64-unknown-linux-gnu"]),
            "{args:?}"
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_target_folder_inside_another_is_no_triple() {
        let dir = scratch("nested");
        target_folder(&dir.join("target"));
        for inner in ["copy", "my-copy"] {
            let inner = dir.join("target").join(inner);
            target_folder(&inner);
            std::fs::write(inner.join(".rustc_info.json"), "{}").unwrap();
            let place = Place::beside(&dir, &inner.join("debug/grader")).unwrap();
            assert_eq!(place.target, inner);
            assert_eq!(place.triple, None);
        }
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_launcher_outside_a_target_folder_has_no_place() {
        let dir = scratch("elsewhere");
        assert!(Place::beside(&dir, &dir.join("bin/grader")).is_none());
        assert!(Place::beside(&dir, &dir.join("a/b/c/grader")).is_none());
        let _ = std::fs::remove_dir_all(dir);
    }
}

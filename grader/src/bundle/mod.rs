//! Autograder bundles for the platforms courses use, generated from the kit itself:
//!
//! - [`Platform::Gradescope`]: `setup.sh`, `run_autograder`, the kit under `kit/`, and
//!   `autograder.zip` holding those three (what Gradescope's "zip file upload" wants).
//! - [`Platform::Exercism`]: a test runner with Exercism's interface — `bin/run.sh SLUG
//!   INPUT_DIR OUTPUT_DIR` — with `bin/setup.sh`, a `Dockerfile` and the kit under `kit/`.
//! - [`Platform::Classroom`]: a GitHub Classroom template repository: the kit's files at the
//!   top, and `.github/workflows/classroom.yml` for Classroom's command grader, one test per
//!   check (with its points) or one for the whole group.
//!
//! Each bundle carries a copy of the kit as a fresh clone has it ([`kitcopy::fresh_files`]:
//! the pristine stubs, an empty guidance log), so a platform needs nothing but a Rust
//! toolchain. The scripts grade with the kit's own `grade` command (`--one`), which writes
//! the platform's report; they never parse the learner's code themselves.
//!
//! [`build`] makes a bundle in memory, a pure function of the kit; [`Bundle::write`] puts it
//! in a folder, writing only the files whose content differs (so cargo's build of the kit in
//! that folder, under the kit's `target/`, stays valid).

mod classroom;
mod exercism;
mod gradescope;
mod script;
pub mod zip;

use crate::exercise::{Exercise, ExerciseError};
use crate::groups::GROUPS;
use crate::kitcopy;
use crate::reports::weights;
use crate::Group;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// The file every bundle holds at its top: it names what wrote the bundle, and tells the
/// next bundle made from a kit that holds this folder to leave the folder out.
pub const MARKER: &str = ".grader-bundle";

/// A platform a bundle is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Platform {
    /// Gradescope's programming assignments: `setup.sh` and `run_autograder`.
    Gradescope,
    /// Exercism's test-runner interface: `bin/run.sh SLUG INPUT_DIR OUTPUT_DIR`.
    Exercism,
    /// GitHub Classroom's command grader: `.github/workflows/classroom.yml`.
    Classroom,
}

impl Platform {
    /// Every platform, in the order the command line lists them.
    pub const ALL: [Platform; 3] = [
        Platform::Gradescope,
        Platform::Exercism,
        Platform::Classroom,
    ];

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Platform::Gradescope => "gradescope",
            Platform::Exercism => "exercism",
            Platform::Classroom => "classroom",
        }
    }
}

impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How a Classroom workflow splits a group into tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Per {
    /// One test per check, worth the check's points from `grading.toml`.
    Check,
    /// One test for the whole group, worth all its points: all or nothing.
    Group,
}

/// The minutes a Classroom test may take when nothing else is said (the command grader's
/// own default).
pub const DEFAULT_TIMEOUT_MINUTES: u32 = 10;
/// The most minutes the command grader allows a test ("a maximum limit of 6 hours").
pub const MAX_TIMEOUT_MINUTES: u32 = 360;

/// The toolchain a bundle installs when nothing else is said. Not the workspace's
/// `rust-version`: that is the least the kit's own code needs, and the dependencies locked in
/// `Cargo.lock` may need a newer compiler (`cargo build --locked` would then refuse).
pub const DEFAULT_TOOLCHAIN: &str = "stable";

/// What to bundle.
#[derive(Debug, Clone)]
pub struct Options {
    /// The platform.
    pub platform: Platform,
    /// The group graded (for Exercism: the group of a slug that names none).
    pub group: &'static Group,
    /// Classroom: one test per check or one per group.
    pub per: Per,
    /// Classroom: the minutes each test may take (1 to [`MAX_TIMEOUT_MINUTES`]).
    pub timeout_minutes: u32,
    /// Gradescope: also write `autograder.zip`.
    pub zip: bool,
    /// Gradescope and Exercism: the Rust toolchain to install (`stable`, or a version such
    /// as `1.91`, at least the workspace's `rust-version`).
    pub toolchain: String,
}

impl Options {
    /// The defaults for `platform` and `group`: one Classroom test per check, 10 minutes
    /// each, a zip for Gradescope, and Rust's stable toolchain.
    pub fn new(platform: Platform, group: &'static Group) -> Options {
        Options {
            platform,
            group,
            per: Per::Check,
            timeout_minutes: DEFAULT_TIMEOUT_MINUTES,
            zip: true,
            toolchain: DEFAULT_TOOLCHAIN.to_string(),
        }
    }
}

/// One file of a bundle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleFile {
    /// Its content.
    pub content: Vec<u8>,
    /// Whether it is written executable (mode 0755).
    pub executable: bool,
}

impl BundleFile {
    fn text(text: String) -> BundleFile {
        BundleFile {
            content: text.into_bytes(),
            executable: false,
        }
    }

    fn script(text: String) -> BundleFile {
        BundleFile {
            content: text.into_bytes(),
            executable: true,
        }
    }
}

/// A bundle, in memory: relative path → file.
#[derive(Debug, Clone)]
pub struct Bundle {
    /// The platform it is for.
    pub platform: Platform,
    /// The group it grades.
    pub group: &'static Group,
    /// Its files.
    pub files: BTreeMap<PathBuf, BundleFile>,
    /// The points a submission can score: the sum of the group's weights.
    pub max_score: f64,
    /// What `--force` never removes from the bundle's folder: git's folder and the kit's
    /// build folder.
    keep: Vec<PathBuf>,
}

/// Why a bundle could not be made or written.
#[derive(Debug, Error)]
pub enum BundleError {
    /// The kit's files could not be read.
    #[error("cannot read the kit's files in {root}: {source}")]
    Kit {
        /// The kit's folder.
        root: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// A lesson's `info.toml` or `grading.toml` could not be read.
    #[error(transparent)]
    Exercise(#[from] ExerciseError),
    /// The workspace's `Cargo.toml` could not be read, or says something unusable.
    #[error("{path}: {message}")]
    Manifest {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A Classroom test would be worth a fraction of a point, which the command grader
    /// cannot count.
    #[error(
        "{what} is worth {points} points; GitHub Classroom's command grader counts whole \
         points only (it reads max-score with parseInt, so {points} would count as {whole})"
    )]
    FractionalPoints {
        /// The check or group.
        what: String,
        /// Its points.
        points: f64,
        /// What the grader would count.
        whole: i64,
    },
    /// A toolchain that is not `stable` nor a version, or is older than the kit needs.
    #[error("{0}")]
    Toolchain(String),
    /// A Classroom timeout outside what the command grader allows.
    #[error("a test's timeout must be 1 to {MAX_TIMEOUT_MINUTES} minutes, not {0}")]
    Timeout(u32),
    /// A name the scripts would hold is not a plain word (a kit bug: the registry's names are).
    #[error(
        "{what} {value:?} cannot go into a script: only letters, digits, '.', '_', '-' and '/'"
    )]
    Unsafe {
        /// What the name is.
        what: &'static str,
        /// The name.
        value: String,
    },
    /// The Gradescope archive would be too large.
    #[error(transparent)]
    Zip(#[from] zip::ZipError),
    /// The folder is the kit's, or holds it: writing there would overwrite the kit.
    #[error("{out} is the kit's folder or holds it: a bundle there would overwrite the kit")]
    OutHoldsKit {
        /// The folder.
        out: PathBuf,
    },
    /// The folder is a file.
    #[error("{out} exists and is not a folder")]
    NotAFolder {
        /// The path.
        out: PathBuf,
    },
    /// The folder holds files, and `--force` was not given.
    #[error("{out} is not empty")]
    NotEmpty {
        /// The folder.
        out: PathBuf,
    },
    /// A file of the bundle could not be written (or a stale one removed).
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
}

/// What a bundle generator needs to know about the kit.
struct Kit {
    /// The kit's version (this grader's).
    version: &'static str,
    /// The toolchain to install: `stable`, or a version.
    toolchain: String,
    /// Every lesson, in course order.
    exercises: Vec<(&'static Group, Exercise)>,
    /// The kit's files, as a fresh clone has them.
    files: BTreeMap<PathBuf, BundleFile>,
}

impl Kit {
    fn exercise(&self, group: &Group) -> Result<&Exercise, BundleError> {
        self.exercises
            .iter()
            .find(|(g, _)| g.name == group.name)
            .map(|(_, e)| e)
            .ok_or_else(|| BundleError::Unsafe {
                what: "group",
                value: group.name.to_string(),
            })
    }
}

/// Makes the bundle `options` asks for from the kit at `root`. `out` is where it will be
/// written: when that folder is inside the kit, its files are not part of the kit's copy.
pub fn build(root: &Path, options: &Options, out: Option<&Path>) -> Result<Bundle, BundleError> {
    if options.timeout_minutes == 0 || options.timeout_minutes > MAX_TIMEOUT_MINUTES {
        return Err(BundleError::Timeout(options.timeout_minutes));
    }
    let minimum = rust_version(root)?;
    check_toolchain(&options.toolchain, minimum.as_deref())?;
    let mut kit = read_kit(root, out)?;
    kit.toolchain = options.toolchain.clone();
    let exercise = kit.exercise(options.group)?;
    let weights = weights::load(&exercise.dir(root))?;
    let points: Vec<(&'static str, f64)> = options
        .group
        .checks
        .iter()
        .map(|c| (c.name, weights.of(c.name)))
        .collect();
    let max_score: f64 = points.iter().map(|(_, p)| p).sum();
    let header = Header {
        platform: options.platform,
        group: options.group,
        version: kit.version,
        per: options.per,
        toolchain: options.toolchain.clone(),
    };
    let (mut files, keep) = match options.platform {
        Platform::Gradescope => (
            gradescope::files(&kit, &header, exercise, options.zip, max_score)?,
            vec![PathBuf::from(".git"), PathBuf::from("kit/target")],
        ),
        Platform::Exercism => (
            exercism::files(&kit, &header, max_score)?,
            vec![PathBuf::from(".git"), PathBuf::from("kit/target")],
        ),
        Platform::Classroom => (
            classroom::files(&kit, &header, exercise, &points, options)?,
            vec![PathBuf::from(".git"), PathBuf::from("target")],
        ),
    };
    files.insert(
        PathBuf::from(MARKER),
        BundleFile::text(format!(
            "This folder was written by `cargo run -p grader -- {}` (kit {}).\n\
             Regenerate it with `--force` rather than editing it.\n",
            header.command(),
            kit.version
        )),
    );
    Ok(Bundle {
        platform: options.platform,
        group: options.group,
        files,
        max_score,
        keep,
    })
}

/// What every generated file says about where it came from.
struct Header {
    platform: Platform,
    group: &'static Group,
    version: &'static str,
    per: Per,
    toolchain: String,
}

impl Header {
    /// The command that wrote the bundle.
    fn command(&self) -> String {
        let mut options = match (self.platform, self.per) {
            (Platform::Classroom, Per::Check) => " --per check".to_string(),
            (Platform::Classroom, Per::Group) => " --per group".to_string(),
            _ => String::new(),
        };
        if self.platform != Platform::Classroom && self.toolchain != DEFAULT_TOOLCHAIN {
            options.push_str(&format!(" --toolchain {}", self.toolchain));
        }
        format!(
            "bundle {} {} --out DIR{options}",
            self.platform, self.group.name
        )
    }

    /// Comment lines (`prefix` is `#`) naming the command that wrote the file.
    fn comment(&self, prefix: &str) -> String {
        format!(
            "{prefix} Written by `cargo run -p grader -- {}` (kit {}):\n\
             {prefix} regenerate it rather than editing it.\n",
            self.command(),
            self.version
        )
    }
}

/// The kit's files and facts, leaving out `out` (when it is inside the kit) and any bundle
/// folder inside the kit.
fn read_kit(root: &Path, out: Option<&Path>) -> Result<Kit, BundleError> {
    let fresh = kitcopy::fresh_files(root).map_err(|source| BundleError::Kit {
        root: root.to_path_buf(),
        source,
    })?;
    let mut leave_out: Vec<PathBuf> = fresh
        .keys()
        .filter(|p| p.file_name().is_some_and(|n| n == MARKER))
        .filter_map(|p| p.parent())
        .filter(|p| !p.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .collect();
    if let Some(rel) = out.and_then(|out| inside(root, out)) {
        leave_out.push(rel);
    }
    let mut files = BTreeMap::new();
    for (path, content) in fresh {
        if path == Path::new(MARKER) || leave_out.iter().any(|dir| path.starts_with(dir)) {
            continue;
        }
        let executable = is_executable(&root.join(&path));
        files.insert(
            path,
            BundleFile {
                content,
                executable,
            },
        );
    }
    let exercises = GROUPS
        .iter()
        .map(|g| Ok((*g, Exercise::load(root, g.name)?)))
        .collect::<Result<Vec<_>, BundleError>>()?;
    Ok(Kit {
        version: env!("CARGO_PKG_VERSION"),
        toolchain: DEFAULT_TOOLCHAIN.to_string(),
        exercises,
        files,
    })
}

/// `out` relative to `root` when it is strictly inside it (comparing canonical paths; a
/// folder not made yet is placed by its nearest existing ancestor).
fn inside(root: &Path, out: &Path) -> Option<PathBuf> {
    let root = std::fs::canonicalize(root).ok()?;
    let out = canonical_lenient(out)?;
    out.strip_prefix(&root)
        .ok()
        .filter(|rel| !rel.as_os_str().is_empty())
        .map(Path::to_path_buf)
}

/// `path` made absolute and canonical as far as it exists.
fn canonical_lenient(path: &Path) -> Option<PathBuf> {
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().ok()?.join(path)
    };
    let mut rest = Vec::new();
    let mut existing = absolute.as_path();
    loop {
        match std::fs::canonicalize(existing) {
            Ok(found) => {
                let mut full = found;
                for part in rest.iter().rev() {
                    full.push(part);
                }
                return Some(full);
            }
            Err(_) => {
                rest.push(existing.file_name()?.to_os_string());
                existing = existing.parent()?;
            }
        }
    }
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "sh")
}

/// The workspace's `rust-version` (`[workspace.package]` or `[package]`), if it says one.
fn rust_version(root: &Path) -> Result<Option<String>, BundleError> {
    let path = root.join("Cargo.toml");
    let bad = |message: String| BundleError::Manifest {
        path: path.clone(),
        message,
    };
    let text = std::fs::read_to_string(&path).map_err(|e| bad(format!("cannot read it: {e}")))?;
    let manifest: toml::Table = toml::from_str(&text).map_err(|e| bad(e.to_string()))?;
    let declared = manifest
        .get("workspace")
        .and_then(|w| w.get("package"))
        .and_then(|p| p.get("rust-version"))
        .or_else(|| manifest.get("package").and_then(|p| p.get("rust-version")));
    match declared {
        None => Ok(None),
        Some(toml::Value::String(v)) if is_version(v) => Ok(Some(v.clone())),
        Some(other) => Err(bad(format!(
            "rust-version = {other} is not a version like \"1.89\""
        ))),
    }
}

/// Refuses a toolchain that is neither `stable` nor a version, or is a version below
/// `minimum` (the workspace's `rust-version`).
fn check_toolchain(toolchain: &str, minimum: Option<&str>) -> Result<(), BundleError> {
    if toolchain == "stable" {
        return Ok(());
    }
    if !is_version(toolchain) {
        return Err(BundleError::Toolchain(format!(
            "the toolchain {toolchain:?} is neither \"stable\" nor a version like \"1.91\""
        )));
    }
    let numbers = |v: &str| -> Vec<u64> { v.split('.').map(|p| p.parse().unwrap_or(0)).collect() };
    if let Some(minimum) = minimum {
        if numbers(toolchain) < numbers(minimum) {
            return Err(BundleError::Toolchain(format!(
                "Rust {toolchain} is older than the kit's rust-version, {minimum}"
            )));
        }
    }
    Ok(())
}

/// `1`, `1.89` or `1.89.0`.
fn is_version(v: &str) -> bool {
    let parts: Vec<&str> = v.split('.').collect();
    parts.len() <= 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// `value` when it can go into a shell script or a workflow unquoted.
fn plain_word<'a>(what: &'static str, value: &'a str) -> Result<&'a str, BundleError> {
    let ok = !value.is_empty()
        && !value.starts_with('-')
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-/".contains(&b));
    if ok {
        Ok(value)
    } else {
        Err(BundleError::Unsafe {
            what,
            value: value.to_string(),
        })
    }
}

/// Points as people write them: `43`, `2.5`.
pub fn format_points(points: f64) -> String {
    if points.fract() == 0.0 && points.abs() < 1e15 {
        format!("{}", points as i64)
    } else {
        format!("{points}")
    }
}

/// `path` as the scripts name it: `/` separators.
fn slash_path(path: &Path) -> String {
    path.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// The kit's files under `prefix` (e.g. `kit/`).
fn kit_under(kit: &Kit, prefix: &str) -> BTreeMap<PathBuf, BundleFile> {
    kit.files
        .iter()
        .map(|(path, file)| (Path::new(prefix).join(path), file.clone()))
        .collect()
}

/// What [`Bundle::write`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Written {
    /// Files written (new or changed).
    pub written: usize,
    /// Files left alone: their content was already right.
    pub unchanged: usize,
    /// Files and folders removed: not part of the bundle.
    pub removed: usize,
}

impl Bundle {
    /// Writes the bundle into `out`. A folder that exists and holds anything is refused
    /// unless `force`; then the folder is made to hold exactly the bundle: files whose
    /// content is already right are left alone (so the kit's build stays valid), others are
    /// written, and anything else is removed — except git's folder and the kit's `target/`.
    /// `root` is the kit the bundle was made from: a folder that is the kit or holds it is
    /// always refused.
    pub fn write(&self, root: &Path, out: &Path, force: bool) -> Result<Written, BundleError> {
        let refuse_kit = || BundleError::OutHoldsKit {
            out: out.to_path_buf(),
        };
        if let (Ok(kit), Some(target)) = (std::fs::canonicalize(root), canonical_lenient(out)) {
            if kit.starts_with(&target) {
                return Err(refuse_kit());
            }
        }
        match std::fs::metadata(out) {
            Ok(meta) if !meta.is_dir() => {
                return Err(BundleError::NotAFolder {
                    out: out.to_path_buf(),
                })
            }
            Ok(_) => {
                let mut entries = std::fs::read_dir(out).map_err(|source| BundleError::Write {
                    path: out.to_path_buf(),
                    source,
                })?;
                if entries.next().is_some() && !force {
                    return Err(BundleError::NotEmpty {
                        out: out.to_path_buf(),
                    });
                }
            }
            Err(_) => {}
        }
        let write_error = |path: &Path| {
            let path = path.to_path_buf();
            move |source| BundleError::Write { path, source }
        };
        std::fs::create_dir_all(out).map_err(write_error(out))?;
        let mut done = Written::default();
        let dirs: BTreeSet<PathBuf> = self
            .files
            .keys()
            .flat_map(|p| p.ancestors().skip(1))
            .filter(|p| !p.as_os_str().is_empty())
            .map(Path::to_path_buf)
            .collect();
        self.prune(out, Path::new(""), &dirs, &mut done)?;
        for (path, file) in &self.files {
            let full = out.join(path);
            if std::fs::read(&full).ok().as_deref() == Some(file.content.as_slice()) {
                done.unchanged += 1;
            } else {
                if let Some(parent) = full.parent() {
                    std::fs::create_dir_all(parent).map_err(write_error(parent))?;
                }
                std::fs::write(&full, &file.content).map_err(write_error(&full))?;
                done.written += 1;
            }
            set_mode(&full, file.executable).map_err(write_error(&full))?;
        }
        Ok(done)
    }

    /// Removes what does not belong under `out/rel`.
    fn prune(
        &self,
        out: &Path,
        rel: &Path,
        dirs: &BTreeSet<PathBuf>,
        done: &mut Written,
    ) -> Result<(), BundleError> {
        let here = out.join(rel);
        let entries = std::fs::read_dir(&here).map_err(|source| BundleError::Write {
            path: here.clone(),
            source,
        })?;
        for entry in entries {
            let entry = entry.map_err(|source| BundleError::Write {
                path: here.clone(),
                source,
            })?;
            let path = rel.join(entry.file_name());
            if self.keep.contains(&path) {
                continue;
            }
            let full = entry.path();
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            let removed = match (is_dir, dirs.contains(&path), self.files.contains_key(&path)) {
                (true, true, _) => {
                    self.prune(out, &path, dirs, done)?;
                    continue;
                }
                (true, false, _) => std::fs::remove_dir_all(&full),
                (false, _, true) => continue,
                (false, _, false) => std::fs::remove_file(&full),
            };
            removed.map_err(|source| BundleError::Write { path: full, source })?;
            done.removed += 1;
        }
        Ok(())
    }
}

#[cfg(unix)]
fn set_mode(path: &Path, executable: bool) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path)?.permissions().mode() & 0o777;
    let wanted = if executable {
        mode | 0o755
    } else {
        mode & !0o111
    };
    if wanted != mode {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(wanted))?;
    }
    Ok(())
}

#[cfg(not(unix))]
fn set_mode(_path: &Path, _executable: bool) -> io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_digits_and_dots() {
        assert!(is_version("1.89"));
        assert!(is_version("1.89.0"));
        assert!(!is_version("1.89; rm -rf /"));
        assert!(!is_version("stable"));
        assert!(!is_version("1..2"));
    }

    #[test]
    fn toolchains_are_stable_or_a_version_the_kit_accepts() {
        assert!(check_toolchain("stable", Some("1.89")).is_ok());
        assert!(check_toolchain("1.91", Some("1.89")).is_ok());
        assert!(check_toolchain("1.89.1", Some("1.89")).is_ok());
        assert!(check_toolchain("1.88", Some("1.89")).is_err());
        assert!(
            check_toolchain("1.9", Some("1.89")).is_err(),
            "1.9 is older than 1.89"
        );
        assert!(check_toolchain("nightly; rm -rf /", None).is_err());
    }

    #[test]
    fn plain_words_refuse_what_a_shell_would_read() {
        assert!(plain_word("group", "build3").is_ok());
        assert!(plain_word("file", "practice/src/lib.rs").is_ok());
        for bad in ["", "-rf", "a b", "a$b", "a;b", "a'b", "a\"b", "é"] {
            assert!(plain_word("group", bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_folder_inside_the_kit_is_found_even_before_it_exists() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("kit");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        assert_eq!(
            inside(&root, &root.join("sub/new/deeper")),
            Some(PathBuf::from("sub/new/deeper"))
        );
        assert_eq!(inside(&root, &root), None);
        assert_eq!(inside(&root, dir.path()), None);
    }
}

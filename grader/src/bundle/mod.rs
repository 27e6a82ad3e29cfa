//! Autograder bundles for the platforms courses use, generated from the kit itself:
//!
//! - `Platform::Gradescope`: `setup.sh`, `run_autograder`, the kit under `kit/`, and
//!   `autograder.zip` holding those three (what Gradescope's "zip file upload" wants).
//! - `Platform::Exercism`: a test runner with Exercism's interface — `bin/run.sh SLUG
//!   INPUT_DIR OUTPUT_DIR` — with `bin/setup.sh`, a `Dockerfile` and the kit under `kit/`.
//! - `Platform::Classroom`: a GitHub Classroom template repository: the kit's files at the
//!   top, and `.github/workflows/classroom.yml` for Classroom's command grader, one test per
//!   check (with its points) or one for the whole lesson.
//!
//! Each bundle carries a copy of the kit as a fresh clone has it ([`kitcopy::fresh_files`]:
//! the pristine stubs, an empty guidance log), so a platform needs nothing but a Rust
//! toolchain. The scripts grade with the kit's own `grade` command (`--one`), which writes
//! the platform's report; they never parse the learner's code themselves.
//!
//! `build` makes a bundle in memory, a pure function of the kit; `Bundle::write` puts it
//! in a folder, writing only the files whose content differs (so cargo's build of the kit in
//! that folder, under the kit's `target/`, stays valid).
//!
//! Nothing is lost to a bundle: it is never written inside the kit (but in the kit's
//! `BUNDLES_DIR`, which git ignores), and every bundle lists the files it wrote in its
//! [`MANIFEST`], so that replacing it (`--force`) removes only those.

pub(crate) mod answers;
mod classroom;
mod exercism;
mod gradescope;
pub(crate) mod manifest;
mod script;
pub(crate) mod zip;

use crate::kitcopy;
use crate::lesson_info::{LessonInfo, LessonInfoError};
use crate::lessons::LESSONS;
use crate::reports::weights;
use crate::Lesson;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::io;
use std::path::{Component, Path, PathBuf};
use thiserror::Error;

pub use manifest::MANIFEST;

/// The one folder inside the kit where bundles may be written (`bundles/NAME`); git ignores
/// it, so nothing there is the kit's.
pub(crate) const BUNDLES_DIR: &str = "bundles";

/// The file every bundle holds at its top: it names what wrote the bundle, and tells the
/// next bundle made from a kit that holds this folder to leave the folder out.
pub(crate) const MARKER: &str = ".grader-bundle";

/// A platform a bundle is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Platform {
    /// Gradescope's programming assignments: `setup.sh` and `run_autograder`.
    Gradescope,
    /// Exercism's test-runner interface: `bin/run.sh SLUG INPUT_DIR OUTPUT_DIR`.
    Exercism,
    /// GitHub Classroom's command grader: `.github/workflows/classroom.yml`.
    Classroom,
}

impl Platform {
    /// Its name on the command line.
    pub(crate) fn name(self) -> &'static str {
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

/// How a Classroom workflow splits a lesson into tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Per {
    /// One test per check, worth the check's points from `grading.toml`.
    Check,
    /// One test for the whole lesson, worth all its points: all or nothing.
    Lesson,
}

/// The minutes a Classroom test may take when nothing else is said (the command grader's
/// own default).
pub(crate) const DEFAULT_TIMEOUT_MINUTES: u32 = 10;
/// The most minutes the command grader allows a test ("a maximum limit of 6 hours").
pub(crate) const MAX_TIMEOUT_MINUTES: u32 = 360;

/// The toolchain a bundle installs when nothing else is said. Not the workspace's
/// `rust-version`: that is the least the kit's own code needs, and the dependencies locked in
/// `Cargo.lock` may need a newer compiler (`cargo build --locked` would then refuse).
pub(crate) const DEFAULT_TOOLCHAIN: &str = "stable";

/// What to bundle.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    /// The platform.
    pub(crate) platform: Platform,
    /// The lesson graded (for Exercism: the lesson of a slug that names none).
    pub(crate) lesson: &'static Lesson,
    /// Classroom: one test per check or one per lesson.
    pub(crate) per: Per,
    /// Classroom: the minutes each test may take (1 to [`MAX_TIMEOUT_MINUTES`]).
    pub(crate) timeout_minutes: u32,
    /// Gradescope: also write `autograder.zip`.
    pub(crate) zip: bool,
    /// Gradescope and Exercism: the Rust toolchain to install (`stable`, or a version such
    /// as `1.91`, at least the workspace's `rust-version`).
    pub(crate) toolchain: String,
    /// Gradescope and Exercism: grade even where the platform cannot give the whole
    /// sandbox (`grade --allow-weak-sandbox`: every report then says which protections were
    /// off). Off, such a platform grades nothing and says why.
    pub(crate) allow_weak_sandbox: bool,
    /// Gradescope: show students the autograder's own log (hidden by default: it is for the
    /// course staff, and each test's output already holds what a learner needs).
    pub(crate) show_log: bool,
    /// Classroom: a template without the answers ([`answers`]).
    pub(crate) without_answers: bool,
}

impl Options {
    /// The defaults for `platform` and `lesson`: one Classroom test per check, 10 minutes
    /// each, a zip for Gradescope, and Rust's stable toolchain.
    pub(crate) fn new(platform: Platform, lesson: &'static Lesson) -> Options {
        Options {
            platform,
            lesson,
            per: Per::Check,
            timeout_minutes: DEFAULT_TIMEOUT_MINUTES,
            zip: true,
            toolchain: DEFAULT_TOOLCHAIN.to_string(),
            allow_weak_sandbox: false,
            show_log: false,
            without_answers: false,
        }
    }
}

/// One file of a bundle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BundleFile {
    /// Its content.
    pub(crate) content: Vec<u8>,
    /// Whether it is written executable (mode 0755).
    pub(crate) executable: bool,
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
pub(crate) struct Bundle {
    /// Its files.
    pub(crate) files: BTreeMap<PathBuf, BundleFile>,
    /// The points a submission can score: the sum of the lesson's weights.
    pub(crate) max_score: f64,
    /// What the bundle's folder is expected to hold besides the bundle (git's folder and the
    /// kit's build folder): kept like any file not in the manifest, but not reported.
    keep: Vec<PathBuf>,
}

/// Why a bundle could not be made or written.
#[derive(Debug, Error)]
pub(crate) enum BundleError {
    /// The kit's files could not be read.
    #[error("cannot read the kit's files in {root}: {source}")]
    Kit {
        /// The kit's folder.
        root: PathBuf,
        source: io::Error,
    },
    /// A lesson's `info.toml` or `grading.toml` could not be read.
    #[error(transparent)]
    LessonInfo(#[from] LessonInfoError),
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
        /// The check or lesson.
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
    /// A template without the answers was asked of a grader that has none to leave out.
    #[error(
        "this copy of the kit holds no answers, so it cannot make the oracle a template \
         without the answers needs"
    )]
    NoAnswers,
    /// The Gradescope archive would be too large.
    #[error(transparent)]
    Zip(#[from] zip::ZipError),
    /// The folder is the kit's, or holds it: writing there would overwrite the kit.
    #[error("{out} is the kit's folder or holds it: a bundle there would overwrite the kit")]
    OutHoldsKit {
        /// The folder.
        out: PathBuf,
    },
    /// The folder is inside the kit (and not in [`BUNDLES_DIR`]): a bundle there could
    /// overwrite or remove the kit's own files.
    #[error(
        "{out} is inside the kit (at {}): a bundle is never written over the kit's files",
        rel.display()
    )]
    InsideKit {
        /// The folder.
        out: PathBuf,
        /// Where it is in the kit.
        rel: PathBuf,
    },
    /// Where the folder is could not be told (a symbolic link that leads nowhere, a folder
    /// that cannot be read).
    #[error("cannot tell where {out} is: {message}")]
    Unresolvable {
        /// The folder.
        out: PathBuf,
        message: String,
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
    /// The folder holds files but no [`MANIFEST`]: it holds no bundle this command wrote,
    /// so `--force` cannot tell which files are a bundle's.
    #[error(
        "{out} is not empty and holds no bundle manifest ({MANIFEST}): --force replaces only \
         a bundle this command wrote, so nothing was changed"
    )]
    NotABundle {
        /// The folder.
        out: PathBuf,
    },
    /// The folder's [`MANIFEST`] cannot be trusted: a line that is not an entry, or a path
    /// that would leave the folder.
    #[error("{path}, line {line}: {message}; nothing was changed")]
    BadManifest {
        /// The manifest.
        path: PathBuf,
        /// 1-based line (0 when the file as a whole is wrong).
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A file the bundle would write is reached through a symbolic link, or is one: writing
    /// would follow it out of the folder.
    #[error(
        "{path} is a symbolic link: a bundle never writes through one, so nothing was changed"
    )]
    Symlink {
        /// The link.
        path: PathBuf,
    },
    /// Something the earlier bundle did not write is where the bundle writes a file.
    #[error(
        "{path} is in the way: the bundle writes a file there, and the earlier bundle did \
         not write what is there now, so nothing was changed"
    )]
    InTheWay {
        /// The path.
        path: PathBuf,
    },
    /// A file of the bundle could not be written (or a stale one removed).
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
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
    exercises: Vec<(&'static Lesson, LessonInfo)>,
    /// The kit's files, as a fresh clone has them.
    files: BTreeMap<PathBuf, BundleFile>,
    /// The kit's folder.
    root: PathBuf,
}

impl Kit {
    fn exercise(&self, lesson: &Lesson) -> Result<&LessonInfo, BundleError> {
        self.exercises
            .iter()
            .find(|(g, _)| g.name == lesson.name)
            .map(|(_, e)| e)
            .ok_or_else(|| BundleError::Unsafe {
                what: "lesson",
                value: lesson.name.to_string(),
            })
    }
}

/// Makes the bundle `options` asks for from the kit at `root`. `out` is where it will be
/// written: when that folder is inside the kit, its files are not part of the kit's copy.
pub(crate) fn build(
    root: &Path,
    options: &Options,
    out: Option<&Path>,
) -> Result<Bundle, BundleError> {
    if options.timeout_minutes == 0 || options.timeout_minutes > MAX_TIMEOUT_MINUTES {
        return Err(BundleError::Timeout(options.timeout_minutes));
    }
    let minimum = rust_version(root)?;
    check_toolchain(&options.toolchain, minimum.as_deref())?;
    let mut kit = read_kit(root, out)?;
    kit.toolchain = options.toolchain.clone();
    let exercise = kit.exercise(options.lesson)?;
    let weights = weights::load(&exercise.dir(root))?;
    let points: Vec<(&'static str, f64)> = options
        .lesson
        .checks
        .iter()
        .map(|c| (c.name, weights.of(c.name)))
        .collect();
    let max_score: f64 = points.iter().map(|(_, p)| p).sum();
    let header = Header {
        platform: options.platform,
        lesson: options.lesson,
        version: kit.version,
        per: options.per,
        toolchain: options.toolchain.clone(),
        allow_weak_sandbox: options.allow_weak_sandbox,
        show_log: options.show_log,
        without_answers: options.without_answers,
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
    let listing = manifest::render(
        &header.command(),
        options.platform.name(),
        options.lesson.name,
        files.keys().map(PathBuf::as_path),
    )
    .map_err(|value| BundleError::Unsafe {
        what: "file name",
        value,
    })?;
    files.insert(PathBuf::from(MANIFEST), BundleFile::text(listing));
    Ok(Bundle {
        files,
        max_score,
        keep,
    })
}

/// What every generated file says about where it came from.
struct Header {
    platform: Platform,
    lesson: &'static Lesson,
    version: &'static str,
    per: Per,
    toolchain: String,
    allow_weak_sandbox: bool,
    show_log: bool,
    without_answers: bool,
}

impl Header {
    /// The options the bundle's scripts give `grade` beyond the submission's: `" --allow-weak-sandbox"` or nothing.
    fn grade_options(&self) -> &'static str {
        if self.allow_weak_sandbox {
            " --allow-weak-sandbox"
        } else {
            ""
        }
    }

    /// The command that wrote the bundle.
    fn command(&self) -> String {
        let mut options = match (self.platform, self.per) {
            (Platform::Classroom, Per::Check) => " --per check".to_string(),
            (Platform::Classroom, Per::Lesson) => " --per lesson".to_string(),
            _ => String::new(),
        };
        if self.platform != Platform::Classroom && self.toolchain != DEFAULT_TOOLCHAIN {
            options.push_str(&format!(" --toolchain {}", self.toolchain));
        }
        options.push_str(self.grade_options());
        if self.show_log {
            options.push_str(" --show-log");
        }
        if self.without_answers {
            options.push_str(" --without-answers");
        }
        format!(
            "bundle {} {} --out DIR{options}",
            self.platform, self.lesson.name
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
    let fresh = kitcopy::fresh_files(root, kitcopy::Untracked::Left).map_err(|source| {
        BundleError::Kit {
            root: root.to_path_buf(),
            source,
        }
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
    // A kit that is not a git checkout is walked, bundles folder included.
    leave_out.push(PathBuf::from(BUNDLES_DIR));
    let mut files = BTreeMap::new();
    for (path, content) in fresh {
        if path == Path::new(MARKER)
            || path == Path::new(MANIFEST)
            || leave_out.iter().any(|dir| path.starts_with(dir))
        {
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
    let exercises = LESSONS
        .iter()
        .map(|g| Ok((*g, LessonInfo::load(root, g.name)?)))
        .collect::<Result<Vec<_>, BundleError>>()?;
    Ok(Kit {
        version: env!("CARGO_PKG_VERSION"),
        toolchain: DEFAULT_TOOLCHAIN.to_string(),
        exercises,
        files,
        root: root.to_path_buf(),
    })
}

/// `out` relative to `root` when it is strictly inside it (comparing resolved paths; a
/// folder not made yet is placed by its nearest existing ancestor).
fn inside(root: &Path, out: &Path) -> Option<PathBuf> {
    let root = std::fs::canonicalize(root).ok()?;
    let out = resolve(out).ok()?;
    out.strip_prefix(&root)
        .ok()
        .filter(|rel| !rel.as_os_str().is_empty())
        .map(Path::to_path_buf)
}

/// Refuses `out` when it is the kit at `root`, holds it, or is inside it anywhere but in
/// [`BUNDLES_DIR`] (`bundles/NAME`), wherever symbolic links and `..` lead, and whether or
/// not `out` exists yet.
pub(crate) fn check_out(root: &Path, out: &Path) -> Result<(), BundleError> {
    let kit = std::fs::canonicalize(root).map_err(|source| BundleError::Kit {
        root: root.to_path_buf(),
        source,
    })?;
    let target = resolve(out).map_err(|message| BundleError::Unresolvable {
        out: out.to_path_buf(),
        message,
    })?;
    if kit.starts_with(&target) {
        return Err(BundleError::OutHoldsKit {
            out: out.to_path_buf(),
        });
    }
    if let Ok(rel) = target.strip_prefix(&kit) {
        let mut parts = rel.components();
        let in_bundles =
            parts.next() == Some(Component::Normal(BUNDLES_DIR.as_ref())) && parts.next().is_some();
        if !in_bundles {
            return Err(BundleError::InsideKit {
                out: out.to_path_buf(),
                rel: rel.to_path_buf(),
            });
        }
    }
    Ok(())
}

/// `path` made absolute, with every symbolic link and `..` resolved as far as the path
/// exists; the rest, not made yet, is taken as written (it cannot hold a link).
fn resolve(path: &Path) -> Result<PathBuf, String> {
    let absolute = std::path::absolute(path).map_err(|e| e.to_string())?;
    let mut resolved = PathBuf::new();
    for part in absolute.components() {
        match part {
            Component::Prefix(_) | Component::RootDir => resolved.push(part.as_os_str()),
            Component::CurDir => {}
            // What is resolved so far holds no link, so its parent is the real one.
            Component::ParentDir => {
                resolved.pop();
            }
            Component::Normal(name) => {
                resolved.push(name);
                match std::fs::symlink_metadata(&resolved) {
                    Ok(meta) if meta.file_type().is_symlink() => {
                        resolved = std::fs::canonicalize(&resolved).map_err(|e| {
                            format!(
                                "{} is a symbolic link that leads nowhere ({e})",
                                resolved.display()
                            )
                        })?;
                    }
                    Ok(_) => {}
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                    Err(e) => return Err(format!("{}: {e}", resolved.display())),
                }
            }
        }
    }
    Ok(resolved)
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
pub(crate) fn format_points(points: f64) -> String {
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
pub(crate) struct Written {
    /// Files written (new or changed).
    pub(crate) written: usize,
    /// Files left alone: their content was already right.
    pub(crate) unchanged: usize,
    /// Files removed: the earlier bundle's (listed in its manifest), not part of this one.
    pub(crate) removed: usize,
    /// Files in the folder that no bundle wrote, kept (relative paths; git's folder and the
    /// kit's build folder are kept too, and not listed).
    pub(crate) kept: Vec<PathBuf>,
}

/// What is at a path inside the bundle's folder, looked at without following links.
enum Found {
    /// Nothing.
    Nothing,
    /// A regular file, reached through real folders only.
    File,
    /// A real folder.
    Folder,
    /// A symbolic link, at this path or at one of the folders above it (that one's path).
    Link(PathBuf),
    /// A file or something else where a folder above the path should be.
    Blocked(PathBuf),
}

/// What is at `out/rel`, never following a link below `out`.
fn look(out: &Path, rel: &Path) -> io::Result<Found> {
    let mut here = out.to_path_buf();
    let parts: Vec<_> = rel.components().collect();
    for (i, part) in parts.iter().enumerate() {
        here.push(part);
        let last = i + 1 == parts.len();
        let meta = match std::fs::symlink_metadata(&here) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Found::Nothing),
            Err(e) => return Err(e),
        };
        let kind = meta.file_type();
        if kind.is_symlink() {
            return Ok(Found::Link(here));
        }
        match (last, kind.is_dir()) {
            (true, true) => return Ok(Found::Folder),
            (true, false) if kind.is_file() => return Ok(Found::File),
            (true, false) => return Ok(Found::Blocked(here)),
            (false, true) => {}
            (false, false) => return Ok(Found::Blocked(here)),
        }
    }
    Ok(Found::Folder)
}

impl Bundle {
    /// Writes the bundle into `out`, which must not be inside the kit at `root` (but in its
    /// [`BUNDLES_DIR`]; see [`check_out`]).
    ///
    /// A folder that exists and holds anything is refused unless `force`, and then unless it
    /// holds an earlier bundle's [`MANIFEST`]: the earlier bundle is replaced by removing the
    /// files its manifest lists that this bundle does not write, and the folders that leaves
    /// empty. Every other file is kept (and listed in [`Written::kept`]). Files whose content
    /// is already right are left alone (so the kit's build stays valid); the others are
    /// written to a new file renamed into place, never through a link.
    ///
    /// Everything is checked before anything changes: a manifest that lists a path outside
    /// the folder, a link on the way to a file the bundle writes, or a file of someone
    /// else's where the bundle writes one, changes nothing.
    pub(crate) fn write(
        &self,
        root: &Path,
        out: &Path,
        force: bool,
    ) -> Result<Written, BundleError> {
        check_out(root, out)?;
        let io_error = |path: &Path| {
            let path = path.to_path_buf();
            move |source| BundleError::Write { path, source }
        };
        let earlier = self.earlier(out, force)?;
        // Check every path the bundle writes.
        for path in self.files.keys() {
            // The manifest is the earlier bundle's own, read above.
            let listed = path == Path::new(MANIFEST) || earlier.contains(path);
            match look(out, path).map_err(io_error(&out.join(path)))? {
                Found::Nothing => {}
                Found::File if listed => {}
                Found::File => {
                    let now = std::fs::read(out.join(path)).map_err(io_error(&out.join(path)))?;
                    if now != self.files[path].content {
                        return Err(BundleError::InTheWay {
                            path: out.join(path),
                        });
                    }
                }
                Found::Link(link) => return Err(BundleError::Symlink { path: link }),
                // An earlier bundle's file where this one needs a folder: it is removed first.
                Found::Blocked(file)
                    if file.strip_prefix(out).is_ok_and(|rel| {
                        earlier.contains(rel) && !self.files.contains_key(rel)
                    }) => {}
                Found::Folder | Found::Blocked(_) => {
                    return Err(BundleError::InTheWay {
                        path: out.join(path),
                    })
                }
            }
        }
        std::fs::create_dir_all(out).map_err(io_error(out))?;
        let mut done = Written::default();
        // The new manifest first: if writing stops half way, the next --force still knows
        // every file this bundle wrote.
        self.put(out, Path::new(MANIFEST), &mut done)?;
        let dirs = self.dirs();
        let mut emptied = BTreeSet::new();
        for path in earlier.iter().filter(|p| !self.files.contains_key(*p)) {
            // Only a regular file reached through real folders is removed: a link or a
            // folder at a listed path is not what the bundle wrote.
            if let Found::File = look(out, path).map_err(io_error(&out.join(path)))? {
                let full = out.join(path);
                std::fs::remove_file(&full).map_err(io_error(&full))?;
                done.removed += 1;
                emptied.extend(
                    path.ancestors()
                        .skip(1)
                        .filter(|p| !p.as_os_str().is_empty() && !dirs.contains(*p))
                        .map(Path::to_path_buf),
                );
            }
        }
        // Deepest first; a folder that still holds something stays.
        for dir in emptied.iter().rev() {
            let _ = std::fs::remove_dir(out.join(dir));
        }
        for path in self.files.keys().filter(|p| *p != Path::new(MANIFEST)) {
            self.put(out, path, &mut done)?;
        }
        self.find_kept(out, Path::new(""), &mut done.kept)
            .map_err(io_error(out))?;
        done.kept.sort();
        Ok(done)
    }

    /// The files the bundle already in `out` wrote: none when `out` is missing or empty (or
    /// holds only `.git/`); else `force` is needed, and a manifest every path of which stays inside `out`.
    fn earlier(&self, out: &Path, force: bool) -> Result<BTreeSet<PathBuf>, BundleError> {
        let meta = match std::fs::metadata(out) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(BTreeSet::new()),
            Err(source) => {
                return Err(BundleError::Write {
                    path: out.to_path_buf(),
                    source,
                })
            }
        };
        if !meta.is_dir() {
            return Err(BundleError::NotAFolder {
                out: out.to_path_buf(),
            });
        }
        let entries = std::fs::read_dir(out).map_err(|source| BundleError::Write {
            path: out.to_path_buf(),
            source,
        })?;
        // Git's folder alone (a clone of a new repository) counts as empty: it is never
        // touched.
        let mut others = entries.filter(|e| e.as_ref().map_or(true, |e| e.file_name() != ".git"));
        if others.next().is_none() {
            return Ok(BTreeSet::new());
        }
        if !force {
            return Err(BundleError::NotEmpty {
                out: out.to_path_buf(),
            });
        }
        let path = out.join(MANIFEST);
        let bad = |line, message| BundleError::BadManifest {
            path: path.clone(),
            line,
            message,
        };
        match look(out, Path::new(MANIFEST)) {
            Ok(Found::File) => {}
            Ok(Found::Nothing) => {
                return Err(BundleError::NotABundle {
                    out: out.to_path_buf(),
                })
            }
            Ok(Found::Link(link)) => return Err(BundleError::Symlink { path: link }),
            Ok(Found::Folder | Found::Blocked(_)) => return Err(bad(0, "not a file".to_string())),
            Err(e) => return Err(bad(0, e.to_string())),
        }
        let text = std::fs::read(&path).map_err(|e| bad(0, e.to_string()))?;
        let text = String::from_utf8(text).map_err(|_| bad(0, "not UTF-8 text".to_string()))?;
        manifest::parse(&text)
            .map(|m| m.files)
            .map_err(|p| bad(p.line, p.message))
    }

    /// Every folder the bundle's files are in, relative to its top.
    fn dirs(&self) -> BTreeSet<PathBuf> {
        self.files
            .keys()
            .flat_map(|p| p.ancestors().skip(1))
            .filter(|p| !p.as_os_str().is_empty())
            .map(Path::to_path_buf)
            .collect()
    }

    /// Puts the bundle's file `rel` in `out`, unless it is already right there.
    fn put(&self, out: &Path, rel: &Path, done: &mut Written) -> Result<(), BundleError> {
        let file = &self.files[rel];
        let full = out.join(rel);
        let write_error = |source| BundleError::Write {
            path: full.clone(),
            source,
        };
        let right = std::fs::read(&full).ok().as_deref() == Some(file.content.as_slice())
            && has_mode(&full, file.executable);
        if right {
            done.unchanged += 1;
            return Ok(());
        }
        let parent = full.parent().unwrap_or(out);
        std::fs::create_dir_all(parent).map_err(write_error)?;
        // A new file renamed over the old one: a link or a hard link in its place is
        // replaced, never written through.
        let mut new = tempfile::NamedTempFile::new_in(parent).map_err(write_error)?;
        io::Write::write_all(&mut new, &file.content).map_err(write_error)?;
        set_mode(new.path(), file.executable).map_err(write_error)?;
        new.persist(&full).map_err(|e| write_error(e.error))?;
        done.written += 1;
        Ok(())
    }

    /// Adds to `kept` every file under `out/rel` the bundle did not write, except under
    /// git's folder and the kit's build folder. Links are listed, not followed.
    fn find_kept(&self, out: &Path, rel: &Path, kept: &mut Vec<PathBuf>) -> io::Result<()> {
        for entry in std::fs::read_dir(out.join(rel))? {
            let entry = entry?;
            let path = rel.join(entry.file_name());
            if self.keep.contains(&path) {
                continue;
            }
            if entry.file_type()?.is_dir() {
                self.find_kept(out, &path, kept)?;
            } else if !self.files.contains_key(&path) {
                kept.push(path);
            }
        }
        Ok(())
    }
}

/// Whether the file at `path` is executable exactly when `executable`.
#[cfg(unix)]
fn has_mode(path: &Path, executable: bool) -> bool {
    is_executable(path) == executable
}

#[cfg(not(unix))]
fn has_mode(_path: &Path, _executable: bool) -> bool {
    true
}

/// Gives a file the bundle writes its mode: 0755 for a script, else 0644.
#[cfg(unix)]
fn set_mode(path: &Path, executable: bool) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mode = if executable { 0o755 } else { 0o644 };
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn set_mode(_path: &Path, _executable: bool) -> io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scripts of a platform's bundle of the kit itself, by file name.
    fn scripts(platform: Platform, allow_weak_sandbox: bool) -> Vec<(PathBuf, String)> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let options = Options {
            allow_weak_sandbox,
            zip: false,
            ..Options::new(platform, LESSONS[0])
        };
        let bundle = build(&root, &options, None).expect("the kit bundles");
        bundle
            .files
            .iter()
            .filter(|(_, f)| f.executable)
            .map(|(p, f)| (p.clone(), String::from_utf8_lossy(&f.content).into_owned()))
            .collect()
    }

    #[test]
    fn a_weak_sandbox_is_allowed_only_by_the_bundle_that_says_so() {
        for platform in [Platform::Gradescope, Platform::Exercism] {
            let strict = scripts(platform, false);
            let grading = |scripts: &[(PathBuf, String)]| {
                scripts
                    .iter()
                    .flat_map(|(p, text)| {
                        text.lines()
                            .filter(|l| !l.trim_start().starts_with('#'))
                            .filter(|l| l.contains(" grade ") && l.contains("--one"))
                            .map(move |l| (p.clone(), l.to_string()))
                    })
                    .collect::<Vec<_>>()
            };
            // Every script that grades: the first submission's, and setup's warm-up.
            assert!(grading(&strict).len() >= 2, "{platform}: {strict:?}");
            for (path, line) in grading(&strict) {
                assert!(!line.contains("--allow-weak-sandbox"), "{path:?}: {line}");
            }
            let weak = scripts(platform, true);
            for (path, line) in grading(&weak) {
                assert!(line.contains("--allow-weak-sandbox"), "{path:?}: {line}");
            }
            // And the bundle says how it was made.
            assert!(weak
                .iter()
                .any(|(_, text)| text.contains("--out DIR --allow-weak-sandbox")));
        }
    }

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
        assert!(plain_word("lesson", "build3").is_ok());
        assert!(plain_word("file", "practice/src/lib.rs").is_ok());
        for bad in ["", "-rf", "a b", "a$b", "a;b", "a'b", "a\"b", "é"] {
            assert!(plain_word("lesson", bad).is_err(), "{bad:?}");
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
        assert_eq!(
            inside(&root, &root.join("bundles/x/../../sub/y")),
            Some(PathBuf::from("sub/y")),
            "`..` after a folder not made yet"
        );
    }

    #[cfg(unix)]
    #[test]
    fn only_the_bundles_folder_inside_the_kit_takes_a_bundle() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("kit");
        std::fs::create_dir_all(root.join("practice/src")).unwrap();
        std::fs::create_dir_all(root.join(BUNDLES_DIR)).unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(root.join("practice"), &link).unwrap();
        let refused = [
            root.join("practice"),
            root.join("practice/src/new"),
            root.join("bundles"),
            root.join("bundles/../practice"),
            root.join("bundles/new/../../practice"),
            link.join("x"),
        ];
        for out in &refused {
            assert!(
                matches!(check_out(&root, out), Err(BundleError::InsideKit { .. })),
                "{}",
                out.display()
            );
        }
        for out in [root.clone(), dir.path().to_path_buf()] {
            assert!(matches!(
                check_out(&root, &out),
                Err(BundleError::OutHoldsKit { .. })
            ));
        }
        assert!(check_out(&root, &root.join("bundles/gs")).is_ok());
        assert!(check_out(&root, &root.join("bundles/new/deeper")).is_ok());
        assert!(check_out(&root, &dir.path().join("elsewhere")).is_ok());
        std::os::unix::fs::symlink(dir.path().join("nowhere"), dir.path().join("dangling"))
            .unwrap();
        assert!(matches!(
            check_out(&root, &dir.path().join("dangling/x")),
            Err(BundleError::Unresolvable { .. })
        ));
    }

    #[test]
    fn write_refuses_a_folder_inside_the_kit_before_touching_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("kit");
        std::fs::create_dir_all(root.join("practice/src")).unwrap();
        std::fs::write(root.join("practice/src/lib.rs"), "my work").unwrap();
        let bundle = Bundle {
            files: [(PathBuf::from(MANIFEST), BundleFile::text(String::new()))].into(),
            max_score: 0.0,
            keep: Vec::new(),
        };
        let err = bundle
            .write(&root, &root.join("practice"), true)
            .unwrap_err();
        assert!(matches!(err, BundleError::InsideKit { .. }), "{err}");
        assert_eq!(
            std::fs::read_to_string(root.join("practice/src/lib.rs")).unwrap(),
            "my work"
        );
        assert_eq!(std::fs::read_dir(root.join("practice")).unwrap().count(), 1);
    }
}

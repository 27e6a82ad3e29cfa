//! The record a build of the command line leaves beside it (`kit-grader.stamp`), and the
//! check that nothing it names has changed since.
//!
//! The record names what cargo would look at to decide whether to build again, each file
//! with its size and times exactly as they were when the build had read it:
//! - every file cargo lists as read for the program (`kit-grader.d`: the sources of the kit's
//!   crates it is built from, files read by `include_str!`, and build scripts' inputs);
//! - the `Cargo.toml` of every folder between those files and the kit's folder, and
//!   `Cargo.lock`;
//! - cargo's configuration files and the toolchain files, in the kit's folder, the current
//!   folder and every folder above them, and in cargo's home: those there, and those not
//!   there (one that appears changes the build);
//! - the toolchain that runs: the cargo, the compiler and the compiler's library;
//! - the environment variables that can change a build (a digest of every `CARGO…` and
//!   `RUST…` variable, less a few that only change output or logs);
//! - the program itself, its size and time (a build made otherwise, a test build with other
//!   features, replaces it).
//!
//! The build is current while every named file has exactly its recorded size and times,
//! every absent one is still absent, and no configuration file has appeared where cargo
//! would read one. A time that moves either way is a change (a file copied back with its
//! old time, `cp -p`, is one). No record is made when a file may have changed while the
//! build read it: one that differs from what it was just before the build started, or a new
//! one written within [`MARGIN`] of that start. The next run then asks cargo again.
//!
//! What the record cannot see: flags given to `cargo run` itself (`--config`, `-Z`,
//! `--offline`), which cargo does not pass on to the program it runs.

use crate::layout::Place;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// The record's first line: a record of another form is never read as current.
const HEADER: &str = "kit-grader build record 2";

/// How long before a build's start a file it reads must have been written for the build to
/// be recorded: some file systems keep times to the second, or two.
const MARGIN: Duration = Duration::from_secs(2);

/// Variables that change what cargo and rustc print or log, never what they build.
const QUIET_VARS: [&str; 8] = [
    "RUST_BACKTRACE",
    "RUST_LIB_BACKTRACE",
    "RUST_LOG",
    "RUST_LOG_STYLE",
    "RUST_MIN_STACK",
    "RUST_RECURSION_COUNT",
    "CARGO_LOG",
    "CARGO_MAKEFLAGS",
];
/// Prefixes of the same kind.
const QUIET_PREFIXES: [&str; 5] = [
    "RUST_TEST_",
    "CARGO_TERM_",
    "CARGO_HTTP_",
    "CARGO_NET_",
    "CARGO_LOG_",
];

/// A file's size, times and identity, as the record keeps them: what it points at (its
/// size, its time, and on Unix the time of its last change of any kind and its inode, which
/// no tool sets back), and, for a symbolic link, the link's own time (a link pointed
/// elsewhere is a change). A link that points at nothing is signed by itself alone.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Signature(String);

/// How many words a signature has.
const SIGNATURE_WORDS: usize = 5;

impl Signature {
    /// `path`'s signature; `None` when it cannot be read.
    fn of(path: &Path) -> Option<Signature> {
        let link = std::fs::symlink_metadata(path).ok()?;
        // A dangling link (cargo reads nothing through it): the link itself.
        let meta = std::fs::metadata(path).unwrap_or_else(|_| link.clone());
        Some(Signature(format!(
            "{} {} {} {}",
            meta.len(),
            nanos(meta.modified().ok()?)?,
            nanos(link.modified().ok()?)?,
            identity(&meta)
        )))
    }
}

/// The time of a file's last change of any kind, and its inode: two words.
#[cfg(unix)]
fn identity(meta: &std::fs::Metadata) -> String {
    use std::os::unix::fs::MetadataExt;
    format!("{}.{:09} {}", meta.ctime(), meta.ctime_nsec(), meta.ino())
}

/// Elsewhere: two words that say nothing more.
#[cfg(not(unix))]
fn identity(_: &std::fs::Metadata) -> String {
    "- -".to_string()
}

/// A time as nanoseconds since the epoch (times before it are written negative).
fn nanos(time: SystemTime) -> Option<String> {
    Some(match time.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(after) => after.as_nanos().to_string(),
        Err(before) => format!("-{}", before.duration().as_nanos()),
    })
}

/// Whether the build at `place` is as its record says, and nothing the record names has
/// changed since.
pub(crate) fn is_current(place: &Place) -> bool {
    let here = std::env::current_dir().ok();
    std::fs::read_to_string(&place.stamp)
        .is_ok_and(|text| holds(&text, place, &environment(), here.as_deref()))
}

/// The named files as they were just before a build, and when it started.
pub(crate) struct Before {
    started: SystemTime,
    seen: BTreeMap<PathBuf, Option<Signature>>,
}

/// Takes note of the named files before a build of `place` run from this process's folder
/// (those the last build's list names, and the configuration files), and of the time, as
/// the target folder's file system tells it (a file written there now).
pub(crate) fn before(place: &Place) -> Before {
    before_in(place, std::env::current_dir().ok().as_deref())
}

fn before_in(place: &Place, here: Option<&Path>) -> Before {
    let marker = place.stamp.with_extension("started");
    let started = std::fs::write(&marker, b"")
        .ok()
        .and_then(|()| std::fs::metadata(&marker).ok()?.modified().ok())
        .unwrap_or_else(SystemTime::now);
    let _ = std::fs::remove_file(&marker);
    let mut seen = BTreeMap::new();
    if let Some(named) = Named::of(place, here) {
        for file in named
            .files
            .into_iter()
            .chain(named.configs)
            .chain(named.absent)
        {
            let signature = Signature::of(&file);
            seen.insert(file, signature);
        }
    }
    Before { started, seen }
}

/// Records the build at `place`, noted in `before` when it started. Nothing is recorded when
/// the build's list of files cannot be read, or a file may have changed while it was read:
/// every run then asks cargo, until one can be recorded.
pub(crate) fn record(place: &Place, before: &Before) {
    let here = std::env::current_dir().ok();
    let Some(text) = make(place, before, &environment(), here.as_deref()) else {
        let _ = std::fs::remove_file(&place.stamp);
        return;
    };
    // Written whole, then moved into place: a run that reads it meanwhile reads the old
    // record or the new, never half of one.
    let partial = place
        .stamp
        .with_extension(format!("stamp.{}", std::process::id()));
    if std::fs::write(&partial, text).is_err() || std::fs::rename(&partial, &place.stamp).is_err() {
        let _ = std::fs::remove_file(&partial);
    }
}

/// The record's text for `place`, built as `before` says, under the variables `env`
/// (digested), from folder `here`.
fn make(place: &Place, before: &Before, env: &str, here: Option<&Path>) -> Option<String> {
    let program = Signature::of(&place.program)?;
    let mut text = format!(
        "{HEADER}\nroot {}\nenv {env}\nprogram {}\n",
        one_line(&place.root)?,
        program.0
    );
    let named = Named::of(place, here)?;
    let settled = before.started.checked_sub(MARGIN)?;
    let kinds = [("file", named.files), ("config", named.configs)];
    for (kind, files) in kinds {
        for file in files {
            let signature = Signature::of(&file)?;
            let unchanged = match before.seen.get(&file) {
                // Named before the build too: it must be as it was then.
                Some(then) => then.as_ref() == Some(&signature),
                // New to the list: it must have been written well before the build started.
                None => std::fs::symlink_metadata(&file).ok()?.modified().ok()? < settled,
            };
            if !unchanged {
                return None;
            }
            text.push_str(&format!("{kind} {} {}\n", signature.0, one_line(&file)?));
        }
    }
    for file in named.absent {
        if std::fs::symlink_metadata(&file).is_ok() {
            return None;
        }
        text.push_str(&format!("absent {}\n", one_line(&file)?));
    }
    text.push_str("end\n");
    Some(text)
}

/// Whether record `text` holds for `place` under the variables `env`, run from folder `here`.
fn holds(text: &str, place: &Place, env: &str, here: Option<&Path>) -> bool {
    let mut lines = text.lines();
    if lines.next() != Some(HEADER) {
        return false;
    }
    // Where cargo reads configuration from here.
    let read_here = configuration_files(&place.root, here);
    let mut seen = [false; 3];
    let mut ended = false;
    let mut recorded = BTreeSet::new();
    for line in lines {
        // Nothing after the last line: a record is read whole or not at all.
        if ended {
            return false;
        }
        if line == "end" {
            ended = true;
            continue;
        }
        let Some((kind, rest)) = line.split_once(' ') else {
            return false;
        };
        let holds = match kind {
            "root" => {
                seen[0] = true;
                Path::new(rest) == place.root
            }
            "env" => {
                seen[1] = true;
                rest == env
            }
            "program" => {
                seen[2] = true;
                Signature::of(&place.program).is_some_and(|s| s.0 == rest)
            }
            "file" | "config" => match split_signature(rest) {
                Some((signature, path)) => {
                    let path = PathBuf::from(path);
                    // A configuration file the build read from another folder's place, which
                    // cargo does not read from here: the build is not this run's.
                    let applies = kind == "file" || read_here.contains(&path);
                    let same = Signature::of(&path).is_some_and(|s| s.0 == signature);
                    recorded.insert(path);
                    applies && same
                }
                None => false,
            },
            "absent" => std::fs::symlink_metadata(rest).is_err(),
            _ => false,
        };
        if !holds {
            return false;
        }
    }
    // A configuration file where cargo would read one now (from this folder, say) that the
    // record does not name is a change too.
    let unnamed_configuration = read_here
        .iter()
        .any(|file| std::fs::symlink_metadata(file).is_ok() && !recorded.contains(file));
    ended && seen.iter().all(|s| *s) && !unnamed_configuration
}

/// `SIGNATURE PATH` as the signature's text and the path.
fn split_signature(rest: &str) -> Option<(&str, &str)> {
    let mut at = 0;
    for _ in 0..SIGNATURE_WORDS {
        at += rest[at..].find(' ')? + 1;
    }
    Some((&rest[..at - 1], &rest[at..]))
}

/// A path on a line of its own; `None` for one with a line break in it (no record then).
fn one_line(path: &Path) -> Option<String> {
    let text = path.to_str()?;
    (!text.contains(['\n', '\r'])).then(|| text.to_string())
}

/// Every file the record names.
struct Named {
    /// Files read by the build, the manifests and the toolchain: each must stay as it was.
    files: Vec<PathBuf>,
    /// cargo's and rustup's configuration files there were where the build looked: each must
    /// stay as it was, and be where cargo looks from the folder of a later run.
    configs: Vec<PathBuf>,
    /// Configuration files there were not: each must stay absent.
    absent: Vec<PathBuf>,
}

impl Named {
    /// The files of the build at `place`, run from folder `here`. `None` without cargo's
    /// list of the files the program was built from.
    fn of(place: &Place, here: Option<&Path>) -> Option<Named> {
        let listed = dep_info(&std::fs::read_to_string(&place.dep_info).ok()?)?;
        let mut files = BTreeSet::new();
        for file in &listed {
            // The manifests of the packages the file belongs to, up to the kit's.
            if file.starts_with(&place.root) {
                for dir in file.ancestors().skip(1) {
                    let manifest = dir.join("Cargo.toml");
                    if manifest.is_file() {
                        files.insert(manifest);
                    }
                    if dir == place.root {
                        break;
                    }
                }
            }
            files.insert(file.clone());
        }
        files.insert(place.root.join("Cargo.toml"));
        files.insert(place.root.join("Cargo.lock"));
        files.extend(toolchain_files());
        let (configs, absent) = configuration_files(&place.root, here)
            .into_iter()
            .partition(|file| std::fs::symlink_metadata(file).is_ok());
        Some(Named {
            files: files.into_iter().collect(),
            configs,
            absent,
        })
    }
}

/// Where cargo reads configuration and rustup a toolchain file: the kit's folder, the
/// current folder `here`, every folder above either, and cargo's home.
fn configuration_files(root: &Path, here: Option<&Path>) -> BTreeSet<PathBuf> {
    let mut files = BTreeSet::new();
    for dir in root
        .ancestors()
        .chain(here.into_iter().flat_map(Path::ancestors))
    {
        for name in [
            ".cargo/config.toml",
            ".cargo/config",
            "rust-toolchain.toml",
            "rust-toolchain",
        ] {
            files.insert(dir.join(name));
        }
    }
    if let Some(home) = cargo_home() {
        files.insert(home.join("config.toml"));
        files.insert(home.join("config"));
    }
    files
}

/// The toolchain whose cargo runs this (`cargo run` says which): that cargo, the compiler
/// beside it, and the compiler's library (`rustup update` replaces them). A compiler named
/// by `RUSTC` too.
fn toolchain_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    if let Some(cargo) = std::env::var_os("CARGO").map(PathBuf::from) {
        let rustc = cargo.with_file_name(format!("rustc{}", std::env::consts::EXE_SUFFIX));
        if let Some(lib) = cargo.parent().and_then(Path::parent).map(|t| t.join("lib")) {
            if let Ok(entries) = std::fs::read_dir(lib) {
                files.extend(
                    entries
                        .flatten()
                        .filter(|e| {
                            e.file_name()
                                .to_string_lossy()
                                .starts_with("librustc_driver")
                        })
                        .map(|e| e.path()),
                );
            }
        }
        files.push(cargo);
        files.push(rustc);
    }
    if let Some(rustc) = std::env::var_os("RUSTC").map(PathBuf::from) {
        files.push(rustc);
    }
    files.retain(|f| f.is_file());
    files
}

/// cargo's home: `CARGO_HOME`, else `.cargo` in the user's home.
fn cargo_home() -> Option<PathBuf> {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".cargo")))
}

/// The files a cargo dep-info file lists (`TARGET: FILE FILE …`, a space in a name written
/// `\ `); `None` when it lists none.
fn dep_info(text: &str) -> Option<Vec<PathBuf>> {
    let (_, files) = text.lines().next()?.split_once(": ")?;
    let mut out = Vec::new();
    let mut current = String::new();
    let mut chars = files.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(next) => current.push(next),
                None => current.push('\\'),
            },
            ' ' => {
                if !current.is_empty() {
                    out.push(PathBuf::from(std::mem::take(&mut current)));
                }
            }
            c => current.push(c),
        }
    }
    if !current.is_empty() {
        out.push(PathBuf::from(current));
    }
    (!out.is_empty()).then_some(out)
}

/// Whether variable `name` can change a build, as far as the record goes: every `CARGO…`
/// and `RUST…` one, but those that only change what is printed or logged.
fn changes_builds(name: &str) -> bool {
    (name.starts_with("CARGO") || name.starts_with("RUST"))
        && !QUIET_VARS.contains(&name)
        && !QUIET_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// A digest of the variables that can change a build.
fn environment() -> String {
    let mut vars: Vec<(String, String)> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.to_string_lossy().into_owned())))
        .filter(|(k, _)| changes_builds(k))
        .collect();
    vars.sort();
    // FNV-1a: a change is what matters, not secrecy.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for (k, v) in &vars {
        for byte in k.bytes().chain([b'=']).chain(v.bytes()).chain([0]) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    format!("{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kit with one source file, a target folder, a program and its dep-info, every file
    /// written a while ago.
    struct Kit {
        dir: PathBuf,
        place: Place,
        source: PathBuf,
    }

    const LONG_AGO: Duration = Duration::from_secs(600);

    impl Kit {
        fn new(name: &str) -> Kit {
            let dir = crate::layout::tests::scratch(name);
            let src = dir.join("grader/src");
            std::fs::create_dir_all(&src).unwrap();
            std::fs::create_dir_all(dir.join("target/debug")).unwrap();
            std::fs::write(dir.join("target/CACHEDIR.TAG"), "").unwrap();
            let source = src.join("my main.rs");
            let place = Place::beside(&dir, &dir.join("target/debug/grader")).unwrap();
            // As cargo writes it: a space in a name escaped.
            let escaped = |p: &Path| p.display().to_string().replace(' ', "\\ ");
            for (path, text) in [
                (dir.join("Cargo.toml"), "[workspace]\n".to_string()),
                (dir.join("Cargo.lock"), String::new()),
                (dir.join("grader/Cargo.toml"), "[package]\n".to_string()),
                (source.clone(), "fn main() {}\n".to_string()),
                (place.program.clone(), "program".to_string()),
                (
                    place.dep_info.clone(),
                    format!("{}: {}\n", escaped(&place.program), escaped(&source)),
                ),
            ] {
                std::fs::write(&path, text).unwrap();
                set_time(&path, SystemTime::now() - LONG_AGO);
            }
            Kit { dir, place, source }
        }

        /// The record of a build of the kit as it is.
        fn recorded(&self) -> String {
            self.recorded_from(None)
        }

        /// The record of a build of the kit as it is, run from the folder `here`.
        fn recorded_from(&self, here: Option<&Path>) -> String {
            make(&self.place, &before_in(&self.place, here), "e", here).expect("a record")
        }
    }

    impl Drop for Kit {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }

    fn set_time(path: &Path, time: SystemTime) {
        let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
        file.set_modified(time).unwrap();
    }

    #[test]
    fn a_record_holds_until_a_file_it_names_changes_its_time_either_way() {
        let kit = Kit::new("source");
        let text = kit.recorded();
        assert!(text.contains("my main.rs"), "{text}");
        assert!(holds(&text, &kit.place, "e", None), "{text}");
        set_time(&kit.source, SystemTime::now() + Duration::from_secs(60));
        assert!(
            !holds(&text, &kit.place, "e", None),
            "written after the build"
        );
        let text = kit.recorded();
        // Copied back with an older time (`cp -p`).
        set_time(&kit.source, SystemTime::now() - LONG_AGO * 2);
        assert!(
            !holds(&text, &kit.place, "e", None),
            "an older file put back"
        );
    }

    #[test]
    fn the_manifests_the_lock_and_the_program_are_named() {
        for changed in ["grader/Cargo.toml", "Cargo.toml", "Cargo.lock"] {
            let kit = Kit::new("manifest");
            let text = kit.recorded();
            set_time(&kit.dir.join(changed), SystemTime::now());
            assert!(
                !holds(&text, &kit.place, "e", None),
                "{changed} written after the build"
            );
        }
        let kit = Kit::new("program");
        let text = kit.recorded();
        std::fs::write(&kit.place.program, "another program").unwrap();
        assert!(!holds(&text, &kit.place, "e", None), "the program replaced");
    }

    #[test]
    fn a_configuration_that_appears_or_another_environment_or_root_is_a_change() {
        let kit = Kit::new("config");
        let text = kit.recorded();
        assert!(text.contains(&format!(
            "absent {}",
            kit.dir.join(".cargo/config.toml").display()
        )));
        assert!(!holds(&text, &kit.place, "f", None), "other variables");
        let mut elsewhere = kit.place.clone();
        elsewhere.root = kit.dir.join("grader");
        assert!(!holds(&text, &elsewhere, "e", None), "another kit");
        std::fs::create_dir_all(kit.dir.join(".cargo")).unwrap();
        std::fs::write(kit.dir.join(".cargo/config.toml"), "[build]\n").unwrap();
        assert!(
            !holds(&text, &kit.place, "e", None),
            "a configuration file that appeared"
        );
    }

    #[test]
    fn a_configuration_file_where_the_record_looked_for_none_is_a_change() {
        let kit = Kit::new("unnamed");
        let here = kit.dir.join("grader");
        // Recorded from elsewhere: the record does not name grader/.cargo at all.
        let text = kit.recorded();
        assert!(
            !text.contains(&here.join(".cargo").display().to_string()),
            "{text}"
        );
        assert!(holds(&text, &kit.place, "e", Some(&here)), "{text}");
        std::fs::create_dir_all(here.join(".cargo")).unwrap();
        std::fs::write(here.join(".cargo/config.toml"), "[build]\n").unwrap();
        assert!(
            !holds(&text, &kit.place, "e", Some(&here)),
            "a configuration file in the current folder"
        );
        // Recorded from there, where it was absent: its line says so.
        std::fs::remove_file(here.join(".cargo/config.toml")).unwrap();
        let there = kit.recorded_from(Some(&here));
        assert!(there.contains(&format!(
            "absent {}",
            here.join(".cargo/config.toml").display()
        )));
        assert!(holds(&there, &kit.place, "e", Some(&here)));
        std::fs::write(here.join(".cargo/config.toml"), "[build]\n").unwrap();
        assert!(!holds(&there, &kit.place, "e", Some(&here)));
    }

    #[test]
    fn a_configuration_read_from_another_folder_does_not_hold_here() {
        let kit = Kit::new("elsewhere");
        let there = kit.dir.join("grader");
        std::fs::create_dir_all(there.join(".cargo")).unwrap();
        std::fs::write(there.join(".cargo/config.toml"), "[build]\n").unwrap();
        set_time(
            &there.join(".cargo/config.toml"),
            SystemTime::now() - LONG_AGO,
        );
        let text = kit.recorded_from(Some(&there));
        assert!(text.contains("\nconfig "), "{text}");
        assert!(holds(&text, &kit.place, "e", Some(&there)));
        // From the kit's folder cargo does not read grader/.cargo: that build is not this run's.
        assert!(!holds(&text, &kit.place, "e", Some(&kit.dir)));
        assert!(!holds(&text, &kit.place, "e", None));
    }

    #[cfg(unix)]
    #[test]
    fn a_dangling_configuration_link_is_recorded_as_a_link() {
        let kit = Kit::new("dangling");
        std::fs::create_dir_all(kit.dir.join(".cargo")).unwrap();
        let link = kit.dir.join(".cargo/config.toml");
        std::os::unix::fs::symlink(kit.dir.join("nowhere.toml"), &link).unwrap();
        assert!(Signature::of(&link).is_some());
        // There before the build started, and unchanged: recorded, and the record holds.
        let text = kit.recorded();
        assert!(text.contains("\nconfig "), "{text}");
        assert!(holds(&text, &kit.place, "e", None), "{text}");
        // Pointed somewhere that exists now: a change.
        std::fs::write(kit.dir.join("nowhere.toml"), "[build]\n").unwrap();
        assert!(!holds(&text, &kit.place, "e", None));
    }

    #[test]
    fn a_file_that_changes_while_the_build_reads_it_leaves_no_record() {
        let kit = Kit::new("racing");
        let started = before_in(&kit.place, None);
        // Written during the build, even with an old time.
        std::fs::write(&kit.source, "fn main() { changed() }\n").unwrap();
        set_time(&kit.source, SystemTime::now() - LONG_AGO * 3);
        assert!(make(&kit.place, &started, "e", None).is_none());
        // A file new to the list, written just before the build: no record either.
        let kit = Kit::new("fresh");
        std::fs::remove_file(&kit.place.dep_info).unwrap();
        let started = before_in(&kit.place, None);
        std::fs::write(
            &kit.place.dep_info,
            format!(
                "{}: {}\n",
                kit.place.program.display(),
                kit.dir.join("Cargo.lock").display()
            ),
        )
        .unwrap();
        set_time(&kit.dir.join("Cargo.lock"), SystemTime::now());
        assert!(make(&kit.place, &started, "e", None).is_none());
        record(&kit.place, &started);
        assert!(!kit.place.stamp.exists());
    }

    #[test]
    fn a_record_of_another_form_or_a_damaged_one_never_holds() {
        let kit = Kit::new("damaged");
        let text = kit.recorded();
        assert!(holds(&text, &kit.place, "e", None));
        assert!(!holds("", &kit.place, "e", None));
        assert!(!holds(
            &text.replace(HEADER, "kit-grader build record 1"),
            &kit.place,
            "e",
            None
        ));
        assert!(
            !holds(&format!("{text}file 1 2 3 /x\n"), &kit.place, "e", None),
            "past the end"
        );
        for (i, line) in text.lines().enumerate().skip(1) {
            // Each line left out: the root, the variables, the program and the end must be
            // there.
            let without: Vec<&str> = text
                .lines()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, l)| l)
                .collect();
            let needed = ["root ", "env ", "program ", "end"]
                .iter()
                .any(|k| line.starts_with(k));
            if needed {
                assert!(
                    !holds(&without.join("\n"), &kit.place, "e", None),
                    "without {line}"
                );
            }
            // Each line garbled (an absent file garbled is another absent file).
            if !line.starts_with("absent ") {
                let garbled = text.replace(line, &format!("{line}x"));
                assert!(!holds(&garbled, &kit.place, "e", None), "{line} garbled");
            }
        }
        // A file the record names that is gone.
        std::fs::remove_file(&kit.source).unwrap();
        assert!(!holds(&text, &kit.place, "e", None));
    }

    #[test]
    fn no_record_without_the_list_of_files_read() {
        let kit = Kit::new("no-dep-info");
        std::fs::remove_file(&kit.place.dep_info).unwrap();
        let started = before_in(&kit.place, None);
        assert!(make(&kit.place, &started, "e", None).is_none());
        record(&kit.place, &started);
        assert!(!kit.place.stamp.exists());
    }

    #[test]
    fn quiet_variables_are_left_out_of_the_digest() {
        let keep = changes_builds;
        assert!(keep("RUSTFLAGS"));
        assert!(keep("CARGO_TARGET_DIR"));
        assert!(keep("CARGO_PROFILE_DEV_OPT_LEVEL"));
        assert!(keep("RUSTUP_TOOLCHAIN"));
        assert!(!keep("RUST_BACKTRACE"));
        assert!(!keep("CARGO_TERM_COLOR"));
        assert!(!keep("HOME"));
    }

    #[test]
    fn dep_info_reads_escaped_spaces() {
        let files = dep_info("/t/debug/kit-grader: /k/a.rs /k/my\\ b.rs\n\n/k/a.rs:\n").unwrap();
        assert_eq!(
            files,
            [PathBuf::from("/k/a.rs"), PathBuf::from("/k/my b.rs")]
        );
        assert!(dep_info("/t/debug/kit-grader:\n").is_none());
    }
}

//! The record a build of the command line leaves beside it (`kit-grader.stamp`), and the
//! check that nothing it names has changed since.
//!
//! The record says when the build started (less a margin), and names what cargo would look
//! at to decide whether to build again:
//! - every file cargo lists as read for the program (`kit-grader.d`: the sources of the kit's
//!   crates it is built from, files read by `include_str!`, and build scripts' inputs);
//! - the `Cargo.toml` of every folder between those files and the kit's folder, and
//!   `Cargo.lock`;
//! - cargo's configuration files and the toolchain files, in the kit's folder and above it
//!   and in cargo's home, whether they exist or not (one that appears changes the build);
//! - the compiler beside the cargo that runs (a toolchain update replaces it);
//! - the environment variables that can change a build (a digest of every `CARGO…` and
//!   `RUST…` variable, less a few that only change output or logs);
//! - the program itself, its size and time (a build made otherwise, a test build with other
//!   features, replaces it).
//!
//! The build is current while every named file is older than the build's start and every
//! absent one is still absent. Times only move forward with a change (cargo relies on the
//! same), and the margin covers file systems whose times are coarse.

use crate::layout::Place;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// The record's first line: a record of another form is never read as current.
const HEADER: &str = "kit-grader build record 1";

/// How long before the build's start a file must have been written to count as read by it:
/// some file systems keep times to the second, or two.
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

/// Whether the build at `place` is as its record says, and nothing the record names has
/// changed since.
pub(crate) fn is_current(place: &Place) -> bool {
    std::fs::read_to_string(&place.stamp).is_ok_and(|text| holds(&text, place, &environment()))
}

/// Records the build at `place`, which started at `started`. Nothing is recorded when the
/// build's list of files cannot be read (every run then asks cargo).
pub(crate) fn record(place: &Place, started: SystemTime) {
    let Some(text) = make(place, started, &environment()) else {
        return;
    };
    // Written whole, then moved into place: a run that reads it meanwhile reads the old
    // record or the new, never half of one.
    let partial = place
        .stamp
        .with_extension(format!("stamp.{}", std::process::id()));
    if std::fs::write(&partial, text).is_ok() && std::fs::rename(&partial, &place.stamp).is_err() {
        let _ = std::fs::remove_file(&partial);
    }
}

/// The record's text for `place`, built at `started`, under the variables `env` (digested).
fn make(place: &Place, started: SystemTime, env: &str) -> Option<String> {
    let since = started
        .checked_sub(MARGIN)?
        .duration_since(SystemTime::UNIX_EPOCH)
        .ok()?;
    let program = program_line(&place.program)?;
    let mut text = format!(
        "{HEADER}\nroot {}\nenv {}\nsince {}.{:09}\nprogram {program}\n",
        one_line(&place.root)?,
        env,
        since.as_secs(),
        since.subsec_nanos()
    );
    let (present, absent) = named_files(place)?;
    for file in present {
        text.push_str(&format!("file {}\n", one_line(&file)?));
    }
    for file in absent {
        text.push_str(&format!("absent {}\n", one_line(&file)?));
    }
    text.push_str("end\n");
    Some(text)
}

/// Whether record `text` holds for `place` under the variables `env`.
fn holds(text: &str, place: &Place, env: &str) -> bool {
    let mut lines = text.lines();
    if lines.next() != Some(HEADER) {
        return false;
    }
    let mut since = None;
    let mut seen = [false; 3];
    let mut ended = false;
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
            "since" => {
                since = parse_time(rest);
                since.is_some()
            }
            "program" => {
                seen[2] = true;
                program_line(&place.program).as_deref() == Some(rest)
            }
            "file" => since
                .is_some_and(|since| modified(Path::new(rest)).is_some_and(|time| time < since)),
            "absent" => std::fs::symlink_metadata(rest).is_err(),
            _ => false,
        };
        if !holds {
            return false;
        }
    }
    ended && seen.iter().all(|s| *s) && since.is_some()
}

/// The program's size and time, as the record says them; `None` when it is missing.
fn program_line(program: &Path) -> Option<String> {
    let meta = std::fs::metadata(program).ok()?;
    let time = meta
        .modified()
        .ok()?
        .duration_since(SystemTime::UNIX_EPOCH)
        .ok()?;
    Some(format!(
        "{} {}.{:09}",
        meta.len(),
        time.as_secs(),
        time.subsec_nanos()
    ))
}

/// When `path` was last written.
fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).ok()?.modified().ok()
}

/// `SECS.NANOS` after the epoch.
fn parse_time(text: &str) -> Option<SystemTime> {
    let (secs, nanos) = text.split_once('.')?;
    let since = Duration::new(secs.parse().ok()?, nanos.parse().ok()?);
    SystemTime::UNIX_EPOCH.checked_add(since)
}

/// A path on a line of its own; `None` for one with a line break in it (no record then).
fn one_line(path: &Path) -> Option<String> {
    let text = path.to_str()?;
    (!text.contains(['\n', '\r'])).then(|| text.to_string())
}

/// Every file the record names: those that must stay older than the build, and those that
/// must stay absent.
fn named_files(place: &Place) -> Option<(Vec<PathBuf>, Vec<PathBuf>)> {
    let listed = dep_info(&std::fs::read_to_string(&place.dep_info).ok()?)?;
    let mut present = std::collections::BTreeSet::new();
    let mut absent = std::collections::BTreeSet::new();
    for file in &listed {
        // The manifests of the packages the file belongs to, up to the kit's.
        if file.starts_with(&place.root) {
            for dir in file.ancestors().skip(1) {
                let manifest = dir.join("Cargo.toml");
                if manifest.is_file() {
                    present.insert(manifest);
                }
                if dir == place.root {
                    break;
                }
            }
        }
        present.insert(file.clone());
    }
    present.insert(place.root.join("Cargo.toml"));
    present.insert(place.root.join("Cargo.lock"));
    // cargo's configuration and the toolchain files: in the kit's folder, above it, and in
    // cargo's home.
    let mut optional: Vec<PathBuf> = Vec::new();
    for dir in place.root.ancestors() {
        for name in [
            ".cargo/config.toml",
            ".cargo/config",
            "rust-toolchain.toml",
            "rust-toolchain",
        ] {
            optional.push(dir.join(name));
        }
    }
    if let Some(home) = cargo_home() {
        optional.push(home.join("config.toml"));
        optional.push(home.join("config"));
    }
    for file in optional {
        if file.exists() {
            present.insert(file);
        } else {
            absent.insert(file);
        }
    }
    // The compiler of the toolchain whose cargo runs this (`rustup update` replaces both).
    if let Some(cargo) = std::env::var_os("CARGO") {
        let rustc =
            Path::new(&cargo).with_file_name(format!("rustc{}", std::env::consts::EXE_SUFFIX));
        if rustc.is_file() {
            present.insert(rustc);
        }
    }
    Some((present.into_iter().collect(), absent.into_iter().collect()))
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

/// A digest of the variables that can change a build: every `CARGO…` and `RUST…` one, but
/// those that only change what is printed or logged.
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

    /// A kit with one source file, a target folder, a program and its dep-info.
    struct Kit {
        dir: PathBuf,
        place: Place,
        source: PathBuf,
    }

    impl Kit {
        fn new(name: &str) -> Kit {
            let nanos = SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .unwrap()
                .as_nanos();
            let dir = std::env::temp_dir()
                .join(format!("kit-stamp-{name}-{}-{nanos}", std::process::id()));
            let src = dir.join("grader/src");
            std::fs::create_dir_all(&src).unwrap();
            std::fs::create_dir_all(dir.join("target/debug")).unwrap();
            std::fs::write(dir.join("target/CACHEDIR.TAG"), "").unwrap();
            std::fs::write(dir.join("Cargo.toml"), "[workspace]\n").unwrap();
            std::fs::write(dir.join("Cargo.lock"), "").unwrap();
            std::fs::write(dir.join("grader/Cargo.toml"), "[package]\n").unwrap();
            let source = src.join("my main.rs");
            std::fs::write(&source, "fn main() {}\n").unwrap();
            let place = Place::beside(&dir, &dir.join("target/debug/grader")).unwrap();
            std::fs::write(&place.program, "program").unwrap();
            // As cargo writes it: a space in a name escaped.
            let escaped = |p: &Path| p.display().to_string().replace(' ', "\\ ");
            std::fs::write(
                &place.dep_info,
                format!("{}: {}\n", escaped(&place.program), escaped(&source)),
            )
            .unwrap();
            Kit { dir, place, source }
        }

        /// The record of a build that started now, as if it was made a while ago: the kit's
        /// files are older than it by more than the margin.
        fn recorded(&self) -> String {
            make(&self.place, SystemTime::now() + MARGIN * 2, "e").unwrap()
        }
    }

    impl Drop for Kit {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }

    /// Sets `path`'s time ahead of every record made in these tests.
    fn touch_later(path: &Path) {
        let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
        file.set_modified(SystemTime::now() + Duration::from_secs(60))
            .unwrap();
    }

    #[test]
    fn a_record_holds_until_a_file_it_names_changes() {
        let kit = Kit::new("source");
        let text = kit.recorded();
        assert!(text.contains("my main.rs"), "{text}");
        assert!(holds(&text, &kit.place, "e"), "{text}");
        touch_later(&kit.source);
        assert!(
            !holds(&text, &kit.place, "e"),
            "a source written after the build"
        );
    }

    #[test]
    fn the_manifests_the_lock_and_the_program_are_named() {
        for changed in ["grader/Cargo.toml", "Cargo.toml", "Cargo.lock"] {
            let kit = Kit::new("manifest");
            let text = kit.recorded();
            touch_later(&kit.dir.join(changed));
            assert!(
                !holds(&text, &kit.place, "e"),
                "{changed} written after the build"
            );
        }
        let kit = Kit::new("program");
        let text = kit.recorded();
        std::fs::write(&kit.place.program, "another program").unwrap();
        assert!(!holds(&text, &kit.place, "e"), "the program replaced");
    }

    #[test]
    fn a_configuration_that_appears_or_another_environment_or_root_is_a_change() {
        let kit = Kit::new("config");
        let text = kit.recorded();
        assert!(text.contains(&format!(
            "absent {}",
            kit.dir.join(".cargo/config.toml").display()
        )));
        assert!(!holds(&text, &kit.place, "f"), "other variables");
        let mut elsewhere = kit.place.clone();
        elsewhere.root = kit.dir.join("grader");
        assert!(!holds(&text, &elsewhere, "e"), "another kit");
        std::fs::create_dir_all(kit.dir.join(".cargo")).unwrap();
        std::fs::write(kit.dir.join(".cargo/config.toml"), "[build]\n").unwrap();
        assert!(
            !holds(&text, &kit.place, "e"),
            "a configuration file that appeared"
        );
    }

    #[test]
    fn a_record_of_another_form_or_a_damaged_one_never_holds() {
        let kit = Kit::new("damaged");
        let text = kit.recorded();
        assert!(holds(&text, &kit.place, "e"));
        assert!(!holds("", &kit.place, "e"));
        assert!(!holds(
            &text.replace(HEADER, "kit-grader build record 0"),
            &kit.place,
            "e"
        ));
        // Each line left out, or made unreadable.
        for (i, _) in text.lines().enumerate().skip(1) {
            let without: Vec<&str> = text
                .lines()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, l)| l)
                .collect();
            let line = text.lines().nth(i).unwrap();
            if !line.starts_with("file ") && !line.starts_with("absent ") || line == "end" {
                assert!(
                    !holds(&without.join("\n"), &kit.place, "e"),
                    "without {line}"
                );
            }
            // (An absent file garbled is another absent file.)
            if !line.starts_with("absent ") {
                let garbled = text.replace(line, &format!("{line}x"));
                assert!(!holds(&garbled, &kit.place, "e"), "{line} garbled");
            }
        }
        // A file the record names that is gone.
        std::fs::remove_file(&kit.source).unwrap();
        assert!(!holds(&text, &kit.place, "e"));
    }

    #[test]
    fn no_record_without_the_list_of_files_read() {
        let kit = Kit::new("no-dep-info");
        std::fs::remove_file(&kit.place.dep_info).unwrap();
        assert!(make(&kit.place, SystemTime::now(), "e").is_none());
        record(&kit.place, SystemTime::now());
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

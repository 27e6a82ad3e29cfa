#![cfg(unix)]
//! The launcher end to end, in a kit of its own: a target folder holding a copy of the
//! launcher, and a stand-in for cargo (named by `CARGO`, as `cargo run` names the real one)
//! that logs each call and "builds" the command line as a script that prints what it was
//! given. The real kit's target folder is never touched.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, SystemTime};

/// The stand-in for cargo: logs its arguments; `build` writes the program and its dep-info
/// (listing the kit's one source), or fails when `$SHIM_FAIL` is set.
const CARGO_SHIM: &str = r#"#!/bin/sh
echo "$*" >>"$SHIM_LOG"
if [ -n "$SHIM_FAIL" ]; then echo "error: the build failed" >&2; exit 101; fi
if [ -n "$SHIM_SLOW" ]; then sleep "$SHIM_SLOW"; fi
printf '#!/bin/sh\necho "kit-grader ran with: $*"\nexit ${KIT_EXIT:-0}\n' >"$SHIM_TARGET/debug/kit-grader"
chmod +x "$SHIM_TARGET/debug/kit-grader"
echo "$SHIM_TARGET/debug/kit-grader: $SHIM_SOURCE" >"$SHIM_TARGET/debug/kit-grader.d"
"#;

struct Kit {
    dir: PathBuf,
    launcher: PathBuf,
    log: PathBuf,
    source: PathBuf,
    /// One test at a time: a file this process has open for writing when another of its
    /// threads forks cannot be run until that child has run its program ("text file busy").
    _alone: std::sync::MutexGuard<'static, ()>,
}

static ALONE: std::sync::Mutex<()> = std::sync::Mutex::new(());

impl Kit {
    fn new(name: &str) -> Kit {
        let alone = ALONE
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let nanos = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let dir =
            std::env::temp_dir().join(format!("kit-launch-{name}-{}-{nanos}", std::process::id()));
        let debug = dir.join("target/debug");
        std::fs::create_dir_all(&debug).unwrap();
        std::fs::create_dir_all(dir.join("grader/launcher")).unwrap();
        std::fs::create_dir_all(dir.join("grader/src")).unwrap();
        std::fs::create_dir_all(dir.join("shim")).unwrap();
        std::fs::create_dir_all(dir.join("cargo-home")).unwrap();
        std::fs::write(dir.join("target/CACHEDIR.TAG"), "").unwrap();
        let source = dir.join("grader/src/main.rs");
        for (file, text) in [
            ("Cargo.toml", "[workspace]\n"),
            ("Cargo.lock", "version = 4\n"),
            ("grader/Cargo.toml", "[package]\n"),
            ("grader/launcher/Cargo.toml", "[package]\n"),
            ("grader/src/main.rs", "fn main() {}\n"),
        ] {
            let path = dir.join(file);
            std::fs::write(&path, text).unwrap();
            set_time(&path, SystemTime::now() - Duration::from_secs(600));
        }
        let launcher = debug.join("grader");
        std::fs::copy(env!("CARGO_BIN_EXE_grader"), &launcher).unwrap();
        let shim = dir.join("shim/cargo");
        std::fs::write(&shim, CARGO_SHIM).unwrap();
        make_executable(&shim);
        // The toolchain is named in the record too, and a file written just before a build
        // leaves none.
        set_time(&shim, SystemTime::now() - Duration::from_secs(600));
        Kit {
            log: dir.join("cargo-calls.log"),
            launcher,
            source,
            dir,
            _alone: alone,
        }
    }

    /// Runs the launcher with `args`, as `cargo run -p grader -- ARGS` would, with `env`.
    fn run(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        self.run_in(&self.dir, args, env)
    }

    /// The same, from folder `here`.
    fn run_in(&self, here: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut command = Command::new(&self.launcher);
        command
            .current_dir(here)
            .args(args)
            .env("CARGO", self.dir.join("shim/cargo"))
            .env("CARGO_HOME", self.dir.join("cargo-home"))
            .env("CARGO_MANIFEST_DIR", self.dir.join("grader/launcher"))
            // As `cargo run -p grader` sets it: the launcher takes the folder only then.
            .env("CARGO_PKG_NAME", "grader")
            .env("SHIM_LOG", &self.log)
            .env("SHIM_TARGET", self.dir.join("target"))
            .env("SHIM_SOURCE", &self.source)
            .env_remove("SHIM_FAIL")
            .env_remove("SHIM_SLOW")
            .env_remove("KIT_EXIT")
            .env_remove("GRADER_FAST_PATHS");
        for (k, v) in env {
            command.env(k, v);
        }
        command.output().expect("the launcher starts")
    }

    /// The calls of cargo so far, one a line.
    fn calls(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
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

fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn said(out: &Output) -> String {
    format!(
        "status {:?}\nstdout: {}\nstderr: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn cargo_builds_the_command_line_once_then_only_after_a_change() {
    let kit = Kit::new("once");
    let out = kit.run(&["build3", "--exact", "a b"], &[]);
    assert!(out.status.success(), "{}", said(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "kit-grader ran with: build3 --exact a b",
        "{}",
        said(&out)
    );
    let calls = kit.calls();
    assert_eq!(calls.len(), 1, "{calls:?}");
    let build = &calls[0];
    assert!(
        build.starts_with("build --quiet --locked --manifest-path "),
        "{build}"
    );
    assert!(build.contains(" -p kit-grader --bin kit-grader"), "{build}");
    assert!(
        build.contains(&format!(
            "--target-dir {}",
            kit.dir.join("target").display()
        )),
        "{build}"
    );
    assert!(kit.dir.join("target/debug/kit-grader.stamp").is_file());

    // Nothing changed: the command line runs, and cargo is not asked.
    let out = kit.run(&["list"], &[]);
    assert!(out.status.success(), "{}", said(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("ran with: list"));
    assert_eq!(kit.calls().len(), 1, "{:?}", kit.calls());

    // A source the build read is written after the build: cargo is asked, once.
    set_time(&kit.source, SystemTime::now() + Duration::from_secs(60));
    let out = kit.run(&["list"], &[]);
    assert!(out.status.success(), "{}", said(&out));
    assert_eq!(kit.calls().len(), 2, "{:?}", kit.calls());
    kit.run(&["list"], &[]);
    assert_eq!(kit.calls().len(), 2, "{:?}", kit.calls());
    // Put back with an older time (as `cp -p` does): a change too.
    set_time(&kit.source, SystemTime::now() - Duration::from_secs(900));
    kit.run(&["list"], &[]);
    assert_eq!(kit.calls().len(), 3, "{:?}", kit.calls());
    kit.run(&["list"], &[]);
    assert_eq!(kit.calls().len(), 3, "{:?}", kit.calls());
}

#[test]
fn a_change_of_lock_configuration_or_build_variables_asks_cargo() {
    let kit = Kit::new("changes");
    kit.run(&["list"], &[]);
    assert_eq!(kit.calls().len(), 1);
    // A variable that changes builds.
    kit.run(&["list"], &[("RUSTFLAGS", "-C opt-level=1")]);
    assert_eq!(kit.calls().len(), 2, "RUSTFLAGS");
    // One that changes only what is printed does not.
    kit.run(
        &["list"],
        &[("RUSTFLAGS", "-C opt-level=1"), ("RUST_BACKTRACE", "0")],
    );
    assert_eq!(kit.calls().len(), 2, "RUST_BACKTRACE");
    // The lock file.
    set_time(
        &kit.dir.join("Cargo.lock"),
        SystemTime::now() + Duration::from_secs(60),
    );
    kit.run(&["list"], &[("RUSTFLAGS", "-C opt-level=1")]);
    assert_eq!(kit.calls().len(), 3, "Cargo.lock");
    // A configuration file of cargo's that appears in the kit.
    std::fs::create_dir_all(kit.dir.join(".cargo")).unwrap();
    std::fs::write(kit.dir.join(".cargo/config.toml"), "[build]\n").unwrap();
    kit.run(&["list"], &[("RUSTFLAGS", "-C opt-level=1")]);
    assert_eq!(kit.calls().len(), 4, "a configuration file");
    // The program replaced by another build.
    std::fs::write(
        kit.dir.join("target/debug/kit-grader"),
        "#!/bin/sh\necho other\n",
    )
    .unwrap();
    let out = kit.run(&["list"], &[("RUSTFLAGS", "-C opt-level=1")]);
    assert_eq!(kit.calls().len(), 5, "the program replaced");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("ran with: list"),
        "{}",
        said(&out)
    );
}

#[test]
fn with_the_fast_paths_off_cargo_is_asked_every_time() {
    let kit = Kit::new("off");
    for n in 1..=3 {
        let out = kit.run(&["list"], &[("GRADER_FAST_PATHS", "off")]);
        assert!(out.status.success(), "{}", said(&out));
        assert_eq!(kit.calls().len(), n);
    }
}

#[test]
fn a_failed_build_runs_nothing_and_a_status_passes_through() {
    let kit = Kit::new("fails");
    let out = kit.run(&["list"], &[("SHIM_FAIL", "1")]);
    assert_eq!(out.status.code(), Some(101), "{}", said(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("the build failed"));
    assert!(out.stdout.is_empty(), "{}", said(&out));
    assert!(!kit.dir.join("target/debug/kit-grader.stamp").exists());
    // The command line's own status is the launcher's.
    let out = kit.run(&["build3"], &[("KIT_EXIT", "3")]);
    assert_eq!(out.status.code(), Some(3), "{}", said(&out));
    let out = kit.run(&["build3"], &[("KIT_EXIT", "3")]);
    assert_eq!(out.status.code(), Some(3), "{}", said(&out));
}

#[test]
fn a_damaged_record_asks_cargo() {
    let kit = Kit::new("damaged");
    kit.run(&["list"], &[]);
    let stamp = kit.dir.join("target/debug/kit-grader.stamp");
    let text = std::fs::read_to_string(&stamp).unwrap();
    std::fs::write(&stamp, &text[..text.len() / 2]).unwrap();
    kit.run(&["list"], &[]);
    assert_eq!(kit.calls().len(), 2, "half a record");
    std::fs::write(&stamp, "").unwrap();
    kit.run(&["list"], &[]);
    assert_eq!(kit.calls().len(), 3, "an empty record");
}

#[test]
fn a_configuration_file_in_the_current_folder_asks_cargo() {
    let kit = Kit::new("here");
    let here = kit.dir.join("grader");
    kit.run_in(&here, &["list"], &[]);
    kit.run_in(&here, &["list"], &[]);
    assert_eq!(kit.calls().len(), 1);
    // cargo reads configuration from the folder it runs in and those above it.
    std::fs::create_dir_all(here.join(".cargo")).unwrap();
    std::fs::write(here.join(".cargo/config.toml"), "[build]\n").unwrap();
    kit.run_in(&here, &["list"], &[]);
    assert_eq!(kit.calls().len(), 2, "{:?}", kit.calls());
}

#[test]
fn a_long_build_is_said_and_a_short_one_is_not() {
    let kit = Kit::new("slow");
    let out = kit.run(&["list"], &[]);
    assert!(out.stderr.is_empty(), "{}", said(&out));
    let out = kit.run(
        &["list"],
        &[("GRADER_FAST_PATHS", "off"), ("SHIM_SLOW", "1.2")],
    );
    assert!(out.status.success(), "{}", said(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("building the kit's grader"),
        "{}",
        said(&out)
    );
    assert_eq!(stderr.lines().count(), 1, "{}", said(&out));
}

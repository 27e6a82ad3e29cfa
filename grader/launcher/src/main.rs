//! `cargo run -p grader -- …`: runs the kit's command line (the `kit-grader` program, built
//! from `grader/`) with the same arguments, once its build is current.
//!
//! Why a launcher: before cargo runs a program it checks every unit the program is built
//! from; for the command line's 80-odd units that check was about a quarter of what a
//! learner waits for after an edit (grader/benches/README.md). This package depends on
//! nothing, so cargo's check before it runs is short. The launcher then reads what the
//! command line's last build recorded ([`stamp`]) and runs the program without asking cargo
//! when nothing the build read has changed since: every file cargo lists for it
//! (`kit-grader.d`), the manifests, the lock file, cargo's configuration files, the
//! toolchain, and the environment variables that can change a build. Anything else — a
//! change, a missing or unreadable record, an unusual target folder — and cargo builds the
//! command line first, deciding what to compile as ever. `GRADER_FAST_PATHS=off` (the
//! switch of the kit's other fast paths) makes it ask cargo every time. Flags given to
//! `cargo run` itself (`--config`, `-Z`, `--offline`) are not passed on by cargo, so they
//! never reach the command line's build.

mod layout;
mod stamp;

use std::ffi::OsString;
use std::process::{Command, ExitCode, ExitStatus};
use std::time::{Duration, Instant};

/// The environment variable that turns the kit's fast paths off (`off`), the same as the
/// command line's (`grader/src/fast.rs`): with them off, cargo checks the build every time.
const FAST_PATHS_VAR: &str = "GRADER_FAST_PATHS";

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let place = match layout::Place::find() {
        Ok(place) => place,
        Err(layout::Unplaced::NoKit(why)) => {
            eprintln!("error: cannot find the kit to run its grader: {why}");
            eprintln!("hint: run it from the kit's folder as `cargo run -p grader -- COMMAND`");
            return ExitCode::from(2);
        }
        // A target folder laid out as this launcher does not expect: cargo runs the
        // command line itself (a check of its build on every run, as before the launcher).
        Err(layout::Unplaced::Unusual(root)) => return cargo_runs(&root, &args),
    };
    let fast = std::env::var(FAST_PATHS_VAR).map_or(true, |v| v.trim() != "off");
    if !(fast && stamp::is_current(&place)) {
        let before = stamp::before(&place);
        match build(&place) {
            Ok(status) if status.success() => stamp::record(&place, &before),
            Ok(status) => return exit_code(status),
            Err(e) => {
                eprintln!("error: cannot start cargo to build the grader: {e}");
                return ExitCode::from(2);
            }
        }
    }
    run(Command::new(&place.program).args(&args))
}

/// How long a build runs before the launcher says it is building: a build with nothing to
/// do (most of them) says nothing.
const QUIET_FOR: Duration = Duration::from_secs(1);

/// `cargo build` of the command line, quiet; once it has taken [`QUIET_FOR`], one line says
/// what is happening (a first build takes a minute or two). cargo's errors are its own.
fn build(place: &layout::Place) -> std::io::Result<ExitStatus> {
    let mut child = place.build_command().spawn()?;
    let started = Instant::now();
    while started.elapsed() < QUIET_FOR {
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    eprintln!("building the kit's grader (after a change to the kit; the first time takes a minute or two)…");
    child.wait()
}

/// `cargo run` of the command line's own package, with `args`, in the profile this
/// launcher was built in when its folder says it.
fn cargo_runs(root: &std::path::Path, args: &[OsString]) -> ExitCode {
    let mut command = Command::new(layout::cargo());
    command
        .args(["run", "--quiet", "--locked", "--manifest-path"])
        .arg(root.join("Cargo.toml"));
    if let Some(profile) = layout::own_profile() {
        command.args(["--profile", &profile]);
    }
    command
        .args(["-p", layout::PACKAGE, "--bin", layout::PROGRAM, "--"])
        .args(args);
    run(&mut command)
}

/// Runs `command` in this process's place (on Unix), or as a child whose status becomes
/// ours.
fn run(command: &mut Command) -> ExitCode {
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        let e = command.exec();
        eprintln!(
            "error: cannot run {}: {e}",
            command.get_program().to_string_lossy()
        );
        ExitCode::from(2)
    }
    #[cfg(not(unix))]
    match command.status() {
        Ok(status) => exit_code(status),
        Err(e) => {
            eprintln!(
                "error: cannot run {}: {e}",
                command.get_program().to_string_lossy()
            );
            ExitCode::from(2)
        }
    }
}

/// A child's exit status as ours (a signal's end as 128 + its number, as a shell says it).
fn exit_code(status: std::process::ExitStatus) -> ExitCode {
    if let Some(code) = status.code() {
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return ExitCode::from(u8::try_from(128 + signal).unwrap_or(1));
        }
    }
    ExitCode::from(1)
}

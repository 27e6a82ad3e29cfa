//! Building the learner's harness with cargo, as a separate target.
//!
//! The grader binary never links the practice crate: when the learner's file does not
//! compile, every command that does not need it keeps working, and the compiler's own
//! messages are shown as cargo prints them.

use serde::Deserialize;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use thiserror::Error;

/// The cargo package that links the practice crate to the checks.
pub const PRACTICE_HARNESS: &str = "practice-harness";

/// Why the harness could not be built.
#[derive(Debug, Error)]
pub enum BuildError {
    /// cargo could not be started.
    #[error("could not start cargo ({cargo}): {source}")]
    Cargo {
        /// The program tried.
        cargo: String,
        /// Why it failed.
        source: std::io::Error,
    },
    /// The learner's code (or the kit) does not compile; cargo printed why.
    #[error("the practice crate does not compile")]
    Compile,
    /// cargo succeeded but named no executable.
    #[error("cargo built {PRACTICE_HARNESS} but reported no executable")]
    NoExecutable,
}

#[derive(Deserialize)]
struct Message {
    reason: String,
    #[serde(default)]
    target: Option<Target>,
    #[serde(default)]
    executable: Option<PathBuf>,
    #[serde(default)]
    success: Option<bool>,
}

#[derive(Deserialize)]
struct Target {
    name: String,
}

/// The cargo to run: the one that started us when there is one.
pub fn cargo_program() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string())
}

/// Builds the practice harness of the kit at `root` and returns its executable.
/// Cargo's progress and the compiler's messages go to this process's standard error.
pub fn build_practice_harness(root: &Path) -> Result<PathBuf, BuildError> {
    let cargo = cargo_program();
    let mut child = Command::new(&cargo)
        .arg("build")
        .arg("--quiet")
        .args(["--package", PRACTICE_HARNESS])
        .arg("--message-format=json-render-diagnostics")
        .arg("--manifest-path")
        .arg(root.join("Cargo.toml"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|source| BuildError::Cargo {
            cargo: cargo.clone(),
            source,
        })?;
    let mut executable = None;
    let mut success = false;
    if let Some(stdout) = child.stdout.take() {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let Ok(message) = serde_json::from_str::<Message>(&line) else {
                continue;
            };
            match message.reason.as_str() {
                "compiler-artifact"
                    if message
                        .target
                        .as_ref()
                        .is_some_and(|t| t.name == PRACTICE_HARNESS) =>
                {
                    executable = message.executable.or(executable);
                }
                "build-finished" => success = message.success.unwrap_or(false),
                _ => {}
            }
        }
    }
    let status = child
        .wait()
        .map_err(|source| BuildError::Cargo { cargo, source })?;
    if !status.success() || !success {
        return Err(BuildError::Compile);
    }
    executable.ok_or(BuildError::NoExecutable)
}

//! Helpers for the end-to-end tests: a temporary copy of the kit and the grader binary.
#![allow(dead_code)] // each test crate uses its own subset

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub const GRADER: &str = env!("CARGO_BIN_EXE_grader");

pub fn kit_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Nested cargo builds get their own target folder: the one `cargo test` holds is locked.
pub fn nested_target() -> PathBuf {
    kit_root().join("target").join("kit-tests")
}

pub fn grader(root: &Path, args: &[&str]) -> Output {
    Command::new(GRADER)
        .arg("--root")
        .arg(root)
        .args(args)
        .env("CARGO_TARGET_DIR", nested_target())
        .env_remove("NO_COLOR")
        .output()
        .expect("the grader binary starts")
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name == "target" || name == ".git" {
            continue;
        }
        let (src, dst) = (entry.path(), to.join(&name));
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

/// A fresh copy of the kit whose practice file is the pristine stub.
pub fn fresh_kit() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = kit_root();
    for file in ["Cargo.toml", "Cargo.lock", "GUIDANCE_LOG.md"] {
        std::fs::copy(root.join(file), dir.path().join(file)).unwrap();
    }
    for folder in ["reference", "grader", "exercises", "practice"] {
        copy_dir(&root.join(folder), &dir.path().join(folder));
    }
    std::fs::copy(stub_path(), dir.path().join("practice/src/lib.rs")).unwrap();
    dir
}

pub fn stub_path() -> PathBuf {
    kit_root().join("exercises/build3/stub.rs")
}

pub fn write_practice(kit: &Path, body: &str) {
    std::fs::write(kit.join("practice/src/lib.rs"), body).unwrap();
}

/// A body that finishes build3 by delegating to the reference.
pub const FINISHED_BUILD3: &str = "reference::retry_request(policy, request, sleep, log)";
/// A body that finishes stage8 by delegating to the reference.
pub const FINISHED_STAGE8: &str = "reference::lookup_availability(gateway, item_id)";

/// `exercises/<group>/stub.rs` with its `todo!(...)` replaced by `body`: a learner's file.
pub fn stub_with(group: &str, body: &str) -> String {
    let stub =
        std::fs::read_to_string(kit_root().join("exercises").join(group).join("stub.rs")).unwrap();
    let start = stub.find("todo!(").expect("the stub has a todo!()");
    let end = start
        + stub[start..]
            .find(")\n")
            .expect("the todo!() ends its line")
        + 1;
    format!("{}{body}{}", &stub[..start], &stub[end..])
}

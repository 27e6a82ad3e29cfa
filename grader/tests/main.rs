//! The command line's tests from outside: one test binary, one module per file of this
//! folder (what each covers is in its own first lines).
//!
//! One binary rather than one per file: the library and its dependencies are linked once,
//! not once per file, and the tests of every file share the test threads, so a long test of
//! one file (a class graded end to end) runs beside the others' rather than holding a thread
//! of a binary that has nothing else left to run. `implementations.rs` stays its own binary:
//! it is also the program its tests run as a learner's process (`kit_runner::remote`).

#[path = "support/class.rs"]
mod class;
mod common;
mod platforms;

mod bundles;
mod cli;
mod fastpaths;
mod grade;
mod guidance;
mod instructor;
mod reports;
mod review;
mod robustness;
mod runner;
mod sandbox;
mod sanitise;
mod scenarios;
mod similarity;
mod slices;
mod stage8;
mod template;
mod watch;

/// Every file of this folder is a module of this binary or the implementations binary: the
/// package lists its test targets, so a file left out of the `mod` lines above would never
/// run, and nothing would say so.
#[test]
fn every_test_file_of_the_folder_runs() {
    let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let main = std::fs::read_to_string(folder.join("main.rs")).expect("tests/main.rs is read");
    let declared: std::collections::BTreeSet<&str> = main
        .lines()
        .filter_map(|line| line.strip_prefix("mod ")?.strip_suffix(';'))
        .collect();
    let mut left_out = Vec::new();
    for entry in std::fs::read_dir(&folder).expect("tests/ is listed") {
        let path = entry.expect("an entry of tests/").path();
        let name = path
            .file_stem()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let is_file = path.extension().is_some_and(|e| e == "rs");
        let is_module = path.join("mod.rs").is_file();
        if (is_file || is_module)
            && !["main", "implementations", "support"].contains(&name)
            && !declared.contains(name)
        {
            left_out.push(path.display().to_string());
        }
    }
    assert!(
        left_out.is_empty(),
        "add a mod line to tests/main.rs for {left_out:?}"
    );
    assert!(
        declared.contains("grade") && declared.contains("common"),
        "{declared:?}"
    );
}

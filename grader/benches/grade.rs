//! Throughput of `grade` on a mixed build3 class: `cargo bench -p kit-grader --bench grade`.
//!
//! Prints the time to prepare the grading copies the first time (cold, when they do not
//! exist yet), then grades a class of correct and wrong submissions (realistic mistakes, a
//! stub, a file that does not compile, a crash) with `--force`, so every submission is built
//! and run, and prints submissions per minute against the target of 200 (issue 19). The machine is
//! shared: run it when it is quiet, and read the figure with the load average it prints.
//!
//! `GRADE_BENCH_COUNT` sets the class size (default 60); `GRADE_BENCH_JOBS` the jobs
//! (default: the cores).

#[path = "../tests/support/class.rs"]
mod class;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const TARGET_PER_MINUTE: f64 = 200.0;

fn kit_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("grader/ is inside the kit")
        .to_path_buf()
}

fn grade(args: &[&str]) -> f64 {
    let started = Instant::now();
    let output = Command::new(env!("CARGO_BIN_EXE_kit-grader"))
        .arg("--root")
        .arg(kit_root())
        .arg("grade")
        .args(args)
        .arg("--quiet")
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .expect("the grader starts");
    let secs = started.elapsed().as_secs_f64();
    if !output.status.success() {
        eprintln!("{}", String::from_utf8_lossy(&output.stderr));
        std::process::exit(1);
    }
    secs
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` runs this too: do nothing then.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let count: usize = std::env::var("GRADE_BENCH_COUNT")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(60);
    let jobs = std::env::var("GRADE_BENCH_JOBS").unwrap_or_else(|_| {
        std::thread::available_parallelism()
            .map_or(2, |n| n.get())
            .to_string()
    });
    let dir = tempfile::tempdir().expect("a temporary folder");
    let kit = kit_root();

    let warm_class = dir.path().join("warm");
    class::write(&kit, &warm_class, &[class::variant("correct")], 2);
    let out = dir.path().join("warm-grades");
    let cold = grade(&[
        warm_class.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--jobs",
        &jobs,
    ]);
    println!("prepare + grade 2 (cold the first time on this machine): {cold:.1} s");

    let variants: Vec<&class::Variant> = class::VARIANTS
        .iter()
        .filter(|v| !matches!(v.name, "spins" | "hangs"))
        .collect();
    let subs = dir.path().join("class");
    class::write(&kit, &subs, &variants, count);
    let out = dir.path().join("grades");
    println!("load average before: {}", load());
    let secs = grade(&[
        subs.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--jobs",
        &jobs,
        "--force",
    ]);
    let per_minute = count as f64 / secs * 60.0;
    println!(
        "graded {count} build3 submissions ({} kinds, correct and wrong mixed) with --jobs {jobs} \
         in {secs:.1} s: {:.2} s each, {per_minute:.0} per minute (target {TARGET_PER_MINUTE:.0}; \
         ratio {:.2})",
        variants.len(),
        secs / count as f64,
        per_minute / TARGET_PER_MINUTE
    );
    println!("load average after: {}", load());
    let again = grade(&[subs.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    println!("the same class again, unchanged (every submission skipped): {again:.2} s");
}

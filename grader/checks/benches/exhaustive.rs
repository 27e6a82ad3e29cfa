//! Benchmark: how many scenarios the exhaustive check compares per second.
//!
//! `cargo bench -p grader-checks` prints the figure. A scenario is one case run on the
//! implementation under test and on the reference, recorded and compared. The target is
//! 100,000 scenarios in under a second in release on a 2-core machine. The machine is shared,
//! so the run also times recording alone and prints the ratio: compare ratios, not seconds.
//! stage8's exhaustive comparison is timed after build3's: each of its cases is a fresh
//! gateway and a few lookups, a far heavier case, so its space is a few thousand cases.

use grader_checks::lessons::build3::exhaustive::{cases, compare};
use grader_checks::lessons::build3::recording::record;
use grader_checks::lessons::build3::reference;
use std::time::Instant;

fn main() {
    // `cargo bench` passes `--bench`; there is nothing to filter.
    let reference = reference();
    let rounds = 5;

    let mut best_compare = f64::INFINITY;
    let mut count = 0;
    for _ in 0..rounds {
        let start = Instant::now();
        count = compare(&reference).expect("the reference agrees with itself");
        best_compare = best_compare.min(start.elapsed().as_secs_f64());
    }

    let all: Vec<_> = cases().collect();
    let mut best_record = f64::INFINITY;
    for _ in 0..rounds {
        let start = Instant::now();
        for case in &all {
            std::hint::black_box(record(&reference, &case.policy, &case.script, None));
        }
        best_record = best_record.min(start.elapsed().as_secs_f64());
    }

    let per_second = count as f64 / best_compare;
    println!("exhaustive comparison: {count} scenarios in {best_compare:.3} s (best of {rounds})");
    println!("  = {per_second:.0} scenarios compared per second (target: at least 100000)");
    println!(
        "  one recording alone: {:.0} runs per second; comparing costs {:.2}x a single recording \
         (two runs, case generation and the comparison)",
        count as f64 / best_record,
        best_compare / best_record
    );
    if per_second < 100_000.0 {
        println!("  BELOW TARGET");
    }

    use grader_checks::lessons::stage8;
    let progress = std::sync::atomic::AtomicUsize::new(0);
    let mut best = f64::INFINITY;
    let mut count8 = 0;
    for _ in 0..rounds {
        let start = Instant::now();
        count8 = stage8::exhaustive::compare(&stage8::reference(), &progress, &progress, None)
            .expect("the reference agrees with itself");
        best = best.min(start.elapsed().as_secs_f64());
    }
    println!(
        "stage8 exhaustive comparison: {count8} cases in {best:.3} s (best of {rounds}; both \
         sides, no handed digests)"
    );
}

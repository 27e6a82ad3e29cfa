//! The kit's similarity measure beside Dolos's (`@dodona/dolos-lib`, which reads Rust with
//! tree-sitter), on one class of build3 files: both must find the same copies and agree on
//! the order of every pair.
//!
//! Dolos runs with node from `KIT_DOLOS` (a folder whose `node_modules` holds
//! `@dodona/dolos-lib`; `.ci/run` installs it there). Without it the test says so and
//! compares nothing, unless `KIT_REQUIRE_DOLOS` is set.

use crate::class;
use crate::common;

use common::kit_root;
use grader::grade::similarity;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// The class: every class variant (the reference with one change each), the stub, two
/// answers written apart from the reference, and a disguised copy of one of them; and the
/// reference itself.
fn class() -> BTreeMap<String, String> {
    let kit = kit_root();
    let mut files = BTreeMap::new();
    for variant in class::VARIANTS {
        files.insert(
            variant.name.to_string(),
            class::source(&kit, variant, variant.name),
        );
    }
    for (name, file) in [
        ("indie-loop", "build3_for_loop.rs"),
        ("indie-helpers", "build3_helpers.rs"),
        ("indie-disguised", "build3_helpers_disguised.rs"),
    ] {
        let path = kit.join("grader/tests/support/independent").join(file);
        files.insert(name.to_string(), std::fs::read_to_string(path).unwrap());
    }
    files.insert(
        "reference".to_string(),
        std::fs::read_to_string(kit.join("reference/src/retry.rs")).unwrap(),
    );
    // Both measures see the same text: the kit leaves `#[cfg(test)]` items out, and Dolos
    // would count the reference's test module (the same in every variant) as shared.
    files
        .into_iter()
        .map(|(name, text)| {
            let answer = text
                .split("\n#[cfg(test)]")
                .next()
                .unwrap_or("")
                .to_string();
            (name, answer)
        })
        .collect()
}

/// Dolos's similarity of every pair, by the files' names (without `.rs`).
fn dolos(dolos_dir: &Path, files: &BTreeMap<String, String>) -> BTreeMap<(String, String), f64> {
    let dir = tempfile::tempdir().unwrap();
    let mut paths = Vec::new();
    for (name, text) in files {
        let path = dir.path().join(format!("{name}.rs"));
        std::fs::write(&path, text).unwrap();
        paths.push(path);
    }
    let script = dolos_dir.join("kit-pairs.mjs");
    std::fs::write(
        &script,
        "import { Dolos } from '@dodona/dolos-lib';\n\
         import { basename } from 'node:path';\n\
         const dolos = new Dolos({ language: 'rust' });\n\
         const report = await dolos.analyzePaths(process.argv.slice(2));\n\
         for (const p of report.allPairs()) {\n\
           console.log([basename(p.leftFile.path, '.rs'), basename(p.rightFile.path, '.rs'), p.similarity].join('\\t'));\n\
         }\n",
    )
    .unwrap();
    // Bounded even if node hangs: coreutils' timeout ends it.
    let out = Command::new("timeout")
        .args(["--kill-after=5", "120", "node"])
        .arg(&script)
        .args(&paths)
        .current_dir(dolos_dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "Dolos: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut pairs = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let cells: Vec<&str> = line.split('\t').collect();
        let [a, b, s] = cells[..] else {
            panic!("Dolos printed {line:?}")
        };
        let key = if a < b { (a, b) } else { (b, a) };
        pairs.insert((key.0.to_string(), key.1.to_string()), s.parse().unwrap());
    }
    pairs
}

/// Ranks (1 = smallest, ties averaged) of `values`.
fn ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut out = vec![0.0; values.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && values[order[j + 1]] == values[order[i]] {
            j += 1;
        }
        for &k in &order[i..=j] {
            out[k] = (i + j) as f64 / 2.0 + 1.0;
        }
        i = j + 1;
    }
    out
}

fn spearman(x: &[f64], y: &[f64]) -> f64 {
    let (rx, ry) = (ranks(x), ranks(y));
    let n = rx.len() as f64;
    let mean = (n + 1.0) / 2.0;
    let (mut cov, mut vx, mut vy) = (0.0, 0.0, 0.0);
    for (a, b) in rx.iter().zip(&ry) {
        cov += (a - mean) * (b - mean);
        vx += (a - mean).powi(2);
        vy += (b - mean).powi(2);
    }
    cov / (vx * vy).sqrt()
}

#[test]
fn the_kit_and_dolos_find_the_same_copies_and_order_the_pairs_alike() {
    let Some(dolos_dir) = std::env::var_os("KIT_DOLOS").map(std::path::PathBuf::from) else {
        assert!(
            std::env::var_os("KIT_REQUIRE_DOLOS").is_none(),
            "KIT_REQUIRE_DOLOS is set, and KIT_DOLOS names no Dolos"
        );
        eprintln!(
            "!! Dolos is not installed (KIT_DOLOS unset): the kit's similarity was not compared \
             with it (.ci/run installs it)"
        );
        return;
    };
    assert!(
        dolos_dir.join("node_modules/@dodona/dolos-lib").is_dir(),
        "KIT_DOLOS={} holds no node_modules/@dodona/dolos-lib",
        dolos_dir.display()
    );
    let files = class();
    let stub = std::fs::read_to_string(kit_root().join("exercises/build3/stub.rs")).unwrap();
    let theirs = dolos(&dolos_dir, &files);
    let names: Vec<&String> = files.keys().collect();
    let (mut kit, mut them, mut shown) = (Vec::new(), Vec::new(), Vec::new());
    for (i, a) in names.iter().enumerate() {
        for b in &names[i + 1..] {
            // The kit's pairs are ordered and named by their score (similarity, or the share
            // of one file within the other when that is larger).
            let ours = similarity::score(&files[*a], &files[*b], &stub).unwrap_or(0.0);
            let key = ((*a).clone(), (*b).clone());
            let dolos = *theirs
                .get(&key)
                .unwrap_or_else(|| panic!("Dolos has no pair {key:?}"));
            shown.push(format!("{a} {b}: kit {ours:.2}, Dolos {dolos:.2}"));
            kit.push(ours);
            them.push(dolos);
        }
    }
    let shown = shown.join("\n");
    let rho = spearman(&kit, &them);
    eprintln!("{shown}\nrank correlation of the kit's and Dolos's similarity: {rho:.2}");
    // The same copies: a pair one measure calls near-identical, the other calls alike.
    // The kit's bar is lower: Dolos also counts what the kit leaves out on purpose (the
    // reference's doc comments, the same in every variant, which a copier edits freely), so
    // a variant that removes a few lines keeps more in common by Dolos's count.
    for (i, line) in shown.lines().enumerate() {
        if them[i] >= 0.8 {
            assert!(kit[i] >= 0.6, "Dolos finds a copy the kit does not: {line}");
        }
        if kit[i] >= 0.8 {
            assert!(
                them[i] >= 0.6,
                "the kit finds a copy Dolos does not: {line}"
            );
        }
        if them[i] < 0.4 {
            assert!(
                kit[i] < 0.5,
                "the kit calls alike what Dolos does not: {line}"
            );
        }
    }
    // The disguised copy is a copy to both.
    let disguised = shown
        .lines()
        .find(|l| l.starts_with("indie-disguised indie-helpers:"))
        .unwrap();
    let at = shown.lines().position(|l| l == disguised).unwrap();
    assert!(kit[at] >= 0.85 && them[at] >= 0.8, "{disguised}");
    // And the order of every pair agrees.
    assert!(rho >= 0.8, "rank correlation {rho:.2}:\n{shown}");
}

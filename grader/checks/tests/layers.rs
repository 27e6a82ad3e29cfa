//! The crate's modules depend downward only: the leaves every lesson uses depend on nothing
//! above them, and no two modules depend on each other, here or in the grader's crate.
//!
//! A module depends on another when its code (not its comments) names `crate::other`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(sources(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out
}

/// Top-level module → the top-level modules its code names as `crate::…`.
fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in sources(src) {
        let rel = file.strip_prefix(src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let module = first.trim_end_matches(".rs").to_string();
        if module == "lib" || module == "main" {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let deps = graph.entry(module.clone()).or_default();
        for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
            let mut rest = line;
            while let Some(at) = rest.find("crate::") {
                rest = &rest[at + "crate::".len()..];
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                // `$crate::` in macros and paths to items of lib.rs are not modules.
                if !name.is_empty() && name != module && name.chars().next().unwrap().is_lowercase()
                {
                    deps.insert(name);
                }
            }
        }
    }
    // Names at the crate's root that are no module (a `#[macro_export]` macro, such as
    // `crate::wire_struct`, re-exported by the module that defines it) are no dependency.
    let modules: BTreeSet<String> = graph.keys().cloned().collect();
    for deps in graph.values_mut() {
        deps.retain(|d| modules.contains(d));
    }
    graph
}

/// A cycle in `graph`, if there is one.
fn cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut c = path[at..].to_vec();
            c.push(node.to_string());
            return Some(c);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(c) = visit(next, graph, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|n| visit(n, graph, &mut Vec::new(), &mut done))
}

fn crate_src(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

#[test]
fn the_leaves_depend_on_nothing_above_them() {
    let graph = graph(&crate_src("src"));
    let allowed: [(&str, &[&str]); 5] = [
        ("view", &[]),
        ("feedback", &["view"]),
        ("report", &["view"]),
        ("scenario", &["panics", "view"]),
        ("lesson", &["report", "scenario", "view"]),
    ];
    check_leaves(&graph, &allowed);
}

/// The runner's crate: its leaves, and the runner's `main` and the judge's end above them.
#[test]
fn the_runners_leaves_depend_on_nothing_above_them() {
    let graph = graph(&crate_src("../runner/src"));
    let allowed: [(&str, &[&str]); 15] = [
        ("panics", &[]),
        ("sandbox", &[]),
        ("secs", &[]),
        ("wire", &[]),
        ("setup", &[]),
        ("descriptors", &[]),
        ("library", &["setup"]),
        ("limits", &["sandbox"]),
        ("cases", &["sandbox"]),
        ("build2", &["panics", "secs", "wire"]),
        ("build3", &["cases", "panics", "secs", "wire"]),
        ("stage8", &["cases", "panics", "wire"]),
        (
            "runner",
            &[
                "build2", "build3", "cases", "library", "limits", "panics", "sandbox", "setup",
                "stage8", "wire",
            ],
        ),
        (
            "zygote",
            &[
                "cases",
                "descriptors",
                "limits",
                "runner",
                "sandbox",
                "setup",
            ],
        ),
        (
            "remote",
            &[
                "cases",
                "descriptors",
                "library",
                "limits",
                "panics",
                "runner",
                "setup",
                "wire",
                "zygote",
            ],
        ),
    ];
    check_leaves(&graph, &allowed);
}

fn check_leaves(graph: &BTreeMap<String, BTreeSet<String>>, allowed: &[(&str, &[&str])]) {
    for &(leaf, may) in allowed {
        let deps = graph
            .get(leaf)
            .unwrap_or_else(|| panic!("no module {leaf}"));
        let extra: Vec<&String> = deps.iter().filter(|d| !may.contains(&d.as_str())).collect();
        assert!(
            extra.is_empty(),
            "{leaf} depends on {extra:?}; it may use only {may:?}"
        );
    }
}

#[test]
fn no_module_depends_on_itself_through_others() {
    for src in [
        crate_src("src"),
        crate_src("../src"),
        crate_src("../runner/src"),
    ] {
        let graph = graph(&src);
        assert!(graph.len() > 5, "{}: {graph:?}", src.display());
        if let Some(c) = cycle(&graph) {
            panic!("{}: an import cycle: {}", src.display(), c.join(" → "));
        }
    }
}

#[test]
fn a_cycle_is_found_when_there_is_one() {
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    g.entry("a".into()).or_default().insert("b".into());
    g.entry("b".into()).or_default().insert("c".into());
    g.entry("c".into()).or_default().insert("a".into());
    assert_eq!(cycle(&g).unwrap(), ["a", "b", "c", "a"]);
    g.get_mut("c").unwrap().clear();
    assert_eq!(cycle(&g), None);
}

//! Refusing to grade borrowed answers.
//!
//! The practice crate never depends on the kit's answers: the shared types live in
//! `kit-types`. A learner's crate that reaches them anyway — a dependency on `reference`
//! (directly, or through the grader or anything else), or a source file from outside
//! `practice/src/` compiled in with `#[path]` or `include!` — would be graded as the
//! learner's work while it is the kit's. Before anything runs, the grader reads what was
//! compiled into the practice crate and refuses such a crate.
//!
//! Two sources of truth, both written by the build that just ran: `Cargo.lock` lists every
//! package's dependencies (so a chain through any crate is found), and rustc's dep-info file
//! lists every source file compiled into the practice crate.

use serde::Deserialize;
use std::collections::{BTreeMap, VecDeque};
use std::path::{Component, Path, PathBuf};

/// The kit's packages that hold or run the answers: a practice crate that reaches one of
/// them could call a finished answer as its own.
pub(crate) const ANSWER_PACKAGES: [&str; 4] = [
    "reference",
    "kit-grader",
    "grader-checks",
    "practice-harness",
];

/// What was found, for the learner: each item says what and how to undo it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Borrowed {
    /// The practice crate depends on a package that holds the answers.
    Dependency {
        /// The chain, e.g. `practice → kit-grader → reference`.
        chain: Vec<String>,
    },
    /// A source file from outside `practice/src/` is compiled into the practice crate.
    Source {
        /// The file, relative to the kit when it is inside it.
        file: String,
    },
    /// A file of the practice crate holds inline assembly, which can read any file at compile
    /// time (`.incbin`) without rustc listing it: the dep-info check cannot see what it took.
    Assembly {
        /// The file, relative to the kit.
        file: String,
        /// The macro, e.g. `global_asm!`.
        used: String,
    },
}

impl Borrowed {
    /// What was found, in one line.
    pub(crate) fn what(&self) -> String {
        match self {
            Borrowed::Dependency { chain } => format!(
                "the practice crate depends on `{}` ({}), which holds the kit's answers",
                chain.last().map_or("reference", String::as_str),
                chain.join(" → ")
            ),
            Borrowed::Source { file } => format!(
                "the practice crate compiles {file}, a file from outside practice/src/ \
                 (a #[path] module or include!)"
            ),
            Borrowed::Assembly { file, used } => format!(
                "{file} uses {used}, whose assembly can read files at compile time that the \
                 kit cannot see (.incbin)"
            ),
        }
    }

    /// How to undo it.
    pub(crate) fn undo(&self) -> String {
        match self {
            Borrowed::Dependency { chain } => format!(
                "remove `{}` from [dependencies] in practice/Cargo.toml; the types you need are \
                 in kit-types, which practice already depends on",
                chain.get(1).map_or("reference", String::as_str)
            ),
            Borrowed::Source { file } => format!(
                "remove the #[path = \"…\"] module or include!(…) that names {file}; your \
                 files are the ones in practice/src/"
            ),
            Borrowed::Assembly { file, used } => {
                format!("remove the {used} from {file}: a lesson's function needs no assembly")
            }
        }
    }
}

#[derive(Deserialize)]
struct Lock {
    #[serde(default)]
    package: Vec<LockedPackage>,
}

#[derive(Deserialize)]
struct LockedPackage {
    name: String,
    #[serde(default)]
    dependencies: Vec<String>,
}

/// Reads `Cargo.lock` and follows the practice crate's dependencies (all kinds: a lock file
/// does not tell them apart) to the first package of [`ANSWER_PACKAGES`].
pub(crate) fn dependency_chain(lock_text: &str) -> Result<Option<Borrowed>, toml::de::Error> {
    let lock: Lock = toml::from_str(lock_text)?;
    // A dependency is written `name`, `name version` or `name version (source)`.
    let graph: BTreeMap<&str, Vec<&str>> = lock
        .package
        .iter()
        .map(|p| {
            let deps = p
                .dependencies
                .iter()
                .filter_map(|d| d.split_whitespace().next())
                .collect();
            (p.name.as_str(), deps)
        })
        .collect();
    let mut came_from: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = VecDeque::from(["practice"]);
    while let Some(name) = queue.pop_front() {
        for dep in graph.get(name).into_iter().flatten() {
            if *dep == "practice" || came_from.contains_key(dep) {
                continue;
            }
            came_from.insert(dep, name);
            if ANSWER_PACKAGES.contains(dep) {
                let mut chain = vec![dep.to_string()];
                let mut at = *dep;
                while let Some(prev) = came_from.get(at) {
                    chain.push(prev.to_string());
                    at = prev;
                }
                chain.reverse();
                return Ok(Some(Borrowed::Dependency { chain }));
            }
            queue.push_back(dep);
        }
    }
    Ok(None)
}

/// The source files a rustc dep-info file lists (its first rule's prerequisites).
pub(crate) fn dep_info_sources(text: &str) -> Vec<String> {
    let Some(first) = text
        .lines()
        .find(|l| !l.trim().is_empty() && !l.starts_with('#'))
    else {
        return Vec::new();
    };
    // The target ends at the first unescaped ": ".
    let Some((_, prerequisites)) = first.split_once(": ") else {
        return Vec::new();
    };
    let mut files = Vec::new();
    let mut current = String::new();
    let mut chars = prerequisites.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&' ') => {
                current.push(' ');
                chars.next();
            }
            ' ' => {
                if !current.is_empty() {
                    files.push(std::mem::take(&mut current));
                }
            }
            _ => current.push(c),
        }
    }
    if !current.is_empty() {
        files.push(current);
    }
    files
}

/// `path` with `.` and `..` resolved without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The first source file in `sources` (paths as rustc wrote them, relative to the kit at
/// `root` or absolute) that is not under `root/practice/src/`.
pub(crate) fn outside_source(root: &Path, sources: &[String]) -> Option<Borrowed> {
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| normalize(p));
    let root = canonical(root);
    let allowed = root.join("practice").join("src");
    sources.iter().find_map(|file| {
        let path = Path::new(file);
        let full = canonical(&if path.is_absolute() {
            path.to_path_buf()
        } else {
            root.join(path)
        });
        (!full.starts_with(&allowed)).then(|| Borrowed::Source {
            file: full
                .strip_prefix(&root)
                .map(|p| p.display().to_string())
                .unwrap_or_else(|_| full.display().to_string()),
        })
    })
}

/// The first file outside `root/practice/src/` that a submission's compile (whose errors are
/// `errors`) was refused reading: what its code pointed the compiler at (`include_str!`, a
/// `#[path]` module) in a copy whose answers the compile may not read
/// (`bounded::confine`). rustc says `couldn't read `PATH`: Permission denied` (an
/// `include_*!`) or `couldn't read PATH: Permission denied` (a module).
pub(crate) fn refused_read(root: &Path, errors: &[String]) -> Option<Borrowed> {
    let files: Vec<String> = errors
        .iter()
        .flat_map(|error| error.lines())
        .map(crate::compile::strip_ansi)
        .filter(|line| line.contains("Permission denied"))
        .filter_map(|line| {
            let rest = line.split("couldn't read ").nth(1)?;
            let path = match rest.strip_prefix('`') {
                Some(quoted) => quoted.split('`').next()?,
                None => rest.split(": Permission denied").next()?,
            };
            Some(path.trim().to_string())
        })
        .collect();
    outside_source(root, &files)
}

/// The cache entry holding the last `Cargo.lock` in which no chain of dependencies led from
/// the practice crate to an answer ([`inspect`]).
const CLEAR_LOCK: &str = "lock-without-answers.lock";

/// Everything borrowed in the kit at `root` after a build, reading its `Cargo.lock` and the
/// practice crate's dep-info file. An unreadable file is reported as such: the grader does
/// not grade what it could not inspect.
pub(crate) fn inspect(root: &Path, dep_info: Option<&Path>) -> Result<Vec<Borrowed>, String> {
    let lock_path = root.join("Cargo.lock");
    let lock = std::fs::read_to_string(&lock_path)
        .map_err(|e| format!("cannot read {}: {e}", lock_path.display()))?;
    // Reading the lock file is most of an inspection's time, and it seldom changes: a copy
    // of the last one found to lead to no answer is kept, and the same text is not read
    // again (the learner's code cannot reach the cache).
    let cache = crate::cache::dir(root);
    let known_clear = std::fs::read(cache.join(CLEAR_LOCK)).is_ok_and(|t| t == lock.as_bytes());
    let chain = if known_clear {
        None
    } else {
        let chain = dependency_chain(&lock)
            .map_err(|e| format!("cannot read {}: {e}", lock_path.display()))?;
        if chain.is_none() {
            crate::cache::store_bytes(&cache, CLEAR_LOCK, lock.as_bytes());
        }
        chain
    };
    let mut found: Vec<Borrowed> = chain.into_iter().collect();
    let dep_info = dep_info.ok_or("cargo named no dep-info file for the practice crate")?;
    let text = std::fs::read_to_string(dep_info)
        .map_err(|e| format!("cannot read {}: {e}", dep_info.display()))?;
    let sources = dep_info_sources(&text);
    if sources.is_empty() {
        return Err(format!("{} lists no source files", dep_info.display()));
    }
    found.extend(outside_source(root, &sources));
    for file in &sources {
        let path = Path::new(file);
        let full = if path.is_absolute() {
            path.to_path_buf()
        } else {
            root.join(path)
        };
        // A file that cannot be read was just compiled: rustc read it, so a read that fails
        // now is no assembly the kit has seen; the build's own error says more.
        if let Some(used) = std::fs::read_to_string(&full)
            .ok()
            .and_then(|text| assembly_macro(&text))
        {
            found.push(Borrowed::Assembly {
                file: full
                    .strip_prefix(root)
                    .map(|p| p.display().to_string())
                    .unwrap_or_else(|_| file.clone()),
                used,
            });
        }
    }
    Ok(found)
}

/// The first inline-assembly macro `text` names (`asm!`, `global_asm!`, `naked_asm!`), as
/// Rust's tokens show it: `global_asm` and `naked_asm` anywhere (a `use … as` renaming
/// included), `asm` as a macro, a path's segment or a renamed import; else `core::arch` when
/// the name `arch` appears anywhere. Every way to those macros names the module they live in
/// (`core::arch`, `std::arch`: none is in the prelude), and a name cannot be made from
/// pieces on stable Rust, so a macro that is handed `asm` and calls `core::arch::$name!`
/// still shows `arch`. In a comment or a string it is no use. `None` for text that does not
/// tokenize (the compiler has said why).
fn assembly_macro(text: &str) -> Option<String> {
    use proc_macro2::{TokenStream, TokenTree};
    // Every name it looks for holds these letters; most files have none, and are not
    // tokenized.
    if !text.contains("asm") && !text.contains("arch") {
        return None;
    }
    /// Whether the name `arch` is among `tokens`, at any depth.
    fn names_arch(tokens: TokenStream) -> bool {
        tokens.into_iter().any(|token| match token {
            TokenTree::Ident(ident) => ident == "arch",
            TokenTree::Group(group) => names_arch(group.stream()),
            _ => false,
        })
    }
    fn find(tokens: TokenStream) -> Option<String> {
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        for (i, token) in tokens.iter().enumerate() {
            match token {
                TokenTree::Ident(ident) => {
                    let name = ident.to_string();
                    let after = tokens.get(i + 1);
                    let macro_call =
                        matches!(after, Some(TokenTree::Punct(p)) if p.as_char() == '!');
                    let renamed = matches!(after, Some(TokenTree::Ident(a)) if a == "as");
                    let in_path = i > 0
                        && matches!(&tokens[i - 1], TokenTree::Punct(p) if p.as_char() == ':');
                    let used = match name.as_str() {
                        "global_asm" | "naked_asm" => true,
                        "asm" => macro_call || renamed || in_path,
                        _ => false,
                    };
                    if used {
                        return Some(format!("{name}!"));
                    }
                }
                TokenTree::Group(group) => {
                    if let Some(found) = find(group.stream()) {
                        return Some(found);
                    }
                }
                _ => {}
            }
        }
        None
    }
    let tokens: TokenStream = text.parse().ok()?;
    find(tokens.clone()).or_else(|| names_arch(tokens).then(|| "core::arch".to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the item's documentation once showed as an example.
    #[test]
    fn dependency_chain_names_the_way_to_the_reference() {
        use crate::borrowed::{dependency_chain, Borrowed};
        let lock = r#"
        [[package]]
        name = "practice"
        version = "0.1.0"
        dependencies = ["kit-types", "helper"]
        [[package]]
        name = "helper"
        version = "0.1.0"
        dependencies = ["reference"]
        [[package]]
        name = "reference"
        version = "0.1.0"
        [[package]]
        name = "kit-types"
        version = "0.1.0"
        "#;
        assert_eq!(
            dependency_chain(lock).unwrap(),
            Some(Borrowed::Dependency {
                chain: vec!["practice".into(), "helper".into(), "reference".into()]
            })
        );
    }

    /// What the item's documentation once showed as an example.
    #[test]
    fn dep_info_sources_unescapes_spaces() {
        let d = "/t/deps/practice-1.d: practice/src/root.rs practice/src/a\\ b.rs\n\npractice/src/root.rs:\n";
        assert_eq!(
            crate::borrowed::dep_info_sources(d),
            ["practice/src/root.rs", "practice/src/a b.rs"]
        );
    }

    #[test]
    fn the_kits_own_lock_has_no_chain() {
        let lock = "[[package]]\nname = \"practice\"\nversion = \"0.1.0\"\n\
                    dependencies = [\"kit-types\", \"serde\", \"serde_json 1.0.1\"]\n\
                    [[package]]\nname = \"grader\"\nversion = \"0.1.0\"\ndependencies = [\"reference\", \"practice\"]\n";
        assert_eq!(dependency_chain(lock).unwrap(), None);
    }

    #[test]
    fn a_direct_dependency_is_found() {
        let lock = "[[package]]\nname = \"practice\"\nversion = \"0.1.0\"\ndependencies = [\"reference\"]\n";
        let found = dependency_chain(lock).unwrap().unwrap();
        assert!(
            found.what().contains("practice → reference"),
            "{}",
            found.what()
        );
        assert!(
            found.undo().contains("remove `reference`"),
            "{}",
            found.undo()
        );
    }

    #[test]
    fn a_lock_kept_as_clear_hides_no_later_chain() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("practice/src")).unwrap();
        std::fs::write(root.join("practice/src/root.rs"), "pub fn f() {}\n").unwrap();
        let dep_info = root.join("practice.d");
        std::fs::write(&dep_info, "practice.so: practice/src/root.rs\n").unwrap();
        let clear = "[[package]]\nname = \"practice\"\nversion = \"0.1.0\"\n\
                     dependencies = [\"kit-types\"]\n";
        std::fs::write(root.join("Cargo.lock"), clear).unwrap();
        assert_eq!(inspect(root, Some(&dep_info)).unwrap(), Vec::new());
        // Kept: the same text is not read again.
        let kept = crate::cache::dir(root).join(CLEAR_LOCK);
        assert_eq!(std::fs::read_to_string(&kept).unwrap(), clear);
        assert_eq!(inspect(root, Some(&dep_info)).unwrap(), Vec::new());
        // A lock that differs is read, whatever was kept.
        let chained = clear.replace("kit-types", "reference");
        std::fs::write(root.join("Cargo.lock"), &chained).unwrap();
        let found = inspect(root, Some(&dep_info)).unwrap();
        assert!(
            matches!(found.as_slice(), [Borrowed::Dependency { .. }]),
            "{found:?}"
        );
        assert_eq!(std::fs::read_to_string(&kept).unwrap(), clear, "never kept");
        assert_eq!(inspect(root, Some(&dep_info)).unwrap(), found);
    }

    #[test]
    fn sources_outside_practice_src_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("practice/src")).unwrap();
        std::fs::create_dir_all(root.join("reference/src")).unwrap();
        std::fs::write(root.join("practice/src/root.rs"), "").unwrap();
        std::fs::write(root.join("reference/src/retry.rs"), "").unwrap();
        let ok = vec!["practice/src/root.rs".to_string()];
        assert_eq!(outside_source(root, &ok), None);
        let borrowed = vec![
            "practice/src/root.rs".to_string(),
            "practice/src/../../reference/src/retry.rs".to_string(),
        ];
        assert_eq!(
            outside_source(root, &borrowed),
            Some(Borrowed::Source {
                file: "reference/src/retry.rs".into()
            })
        );
    }

    #[test]
    fn a_refused_read_names_the_file_the_code_pointed_at() {
        let root = Path::new("/k");
        let include = "error: couldn't read `practice/src/../../reference/src/retry.rs`: \
                       Permission denied (os error 13)\n --> practice/src/lib.rs:39:23";
        let module = "error: couldn't read practice/src/../../reference/src/fetch.rs: \
                      Permission denied (os error 13)";
        for error in [include, module] {
            let found = refused_read(root, &[error.to_string()]);
            assert!(
                matches!(&found, Some(Borrowed::Source { file }) if file.starts_with("reference/src/")),
                "{error}: {found:?}"
            );
        }
        // Another error, or a refused read inside practice/src/, is not one.
        let typo = "error[E0308]: mismatched types\n --> practice/src/lib.rs:3:1";
        assert_eq!(refused_read(root, &[typo.to_string()]), None);
        let own = "error: couldn't read `practice/src/data.txt`: Permission denied";
        assert_eq!(refused_read(root, &[own.to_string()]), None);
    }

    #[test]
    fn inline_assembly_is_found_by_its_tokens_not_its_words() {
        let incbin = "core::arch::global_asm!(\".section .rodata\\n.incbin \\\"/k/reference/src/retry.rs\\\"\");\npub fn f() {}\n";
        assert_eq!(assembly_macro(incbin).as_deref(), Some("global_asm!"));
        let inline = "pub fn f() { unsafe { std::arch::asm!(\"nop\") } }";
        assert_eq!(assembly_macro(inline).as_deref(), Some("asm!"));
        let said =
            "// no asm! here\npub fn f() -> &'static str { \"global_asm!(x)\" }\nfn asm() {}\n";
        assert_eq!(
            assembly_macro(said),
            None,
            "a comment, a string and a plain function"
        );
        assert_eq!(assembly_macro("pub fn f( {"), None, "does not tokenize");
        // Renamed on the way in, it is still found.
        let renamed = "use core::arch::global_asm as g;\ng!(\".incbin \\\"x\\\"\");\n";
        assert_eq!(assembly_macro(renamed).as_deref(), Some("global_asm!"));
        let grouped = "use std::arch::{asm as a};\npub fn f() { unsafe { a!(\"nop\") } }\n";
        assert_eq!(assembly_macro(grouped).as_deref(), Some("asm!"));
        // Handed in to a macro that names it (helper-28's): the module still shows.
        let handed = "macro_rules! m { ($i:ident, $p:ident) => { core::arch::$i!(\".incbin \\\"x\\\"\") } }\nm!(asm, ptr);\n";
        assert_eq!(assembly_macro(handed).as_deref(), Some("core::arch"));
        let split = "macro_rules! m { ($a:ident) => { core::$a::global_asm!(\"\") } }\nm!(arch);\n";
        assert_eq!(assembly_macro(split).as_deref(), Some("global_asm!"));
        let only_module =
            "macro_rules! m { ($a:ident, $i:ident) => { core::$a::$i!(\"\") } }\nm!(arch, asm);\n";
        assert_eq!(assembly_macro(only_module).as_deref(), Some("core::arch"));
    }
}

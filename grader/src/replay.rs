//! Rebuilding after an edit of the learner's code without cargo, and without a link.
//!
//! After an edit, cargo spends about 0.1 s finding that only two compiler runs are needed —
//! the practice crate, then the harness that links it — and linking that harness took most
//! of the rest (about 0.07 s). So once per state of the kit (the second of
//! [`fingerprints`](crate::cache::fingerprints)), the grader has cargo show the two commands
//! it runs (`cargo build -vv`, see [`steps_from_cargo`]) and makes a [`Recipe`] of them:
//!
//! - the harness's command, changed to build a harness that loads the learner's code from a
//!   library ([`grader_checks::library`]) and links the standard library dynamically: run
//!   when the recipe is made, and only once for all the lessons of a kit state ([`make`]);
//! - the practice crate's command, changed to build that library: the crate with its
//!   lesson's function exported (`--cfg kit_glue`, see `practice/src/root.rs`), linked to the
//!   standard library dynamically, so both sides share one (one panic hook, one allocator).
//!
//! While nothing but the learner's `.rs` files changes, an edit costs that one compiler run
//! ([`run`]), about half of the two it replaces.
//!
//! Anything unexpected — a compile error, a message it cannot read, a file that is gone —
//! makes [`run`] give up, and the caller builds with cargo as usual, which compiles and
//! reports everything the normal way. cargo is never misled: its own records of the practice
//! crate predate the edit, so its next build compiles the crate again.

use crate::bounded::{run_bounded, Clock, CompileLimits, Exceeded, Kept, Line};
use crate::cache::Fingerprint;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// One compiler run as cargo made it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Step {
    /// The crate it compiles (`practice`, `practice_harness`).
    pub(crate) crate_name: String,
    /// The compiler.
    pub(crate) program: String,
    /// Its arguments.
    pub(crate) args: Vec<String>,
    /// The variables cargo set for it.
    pub(crate) env: Vec<(String, String)>,
}

/// How to rebuild a lesson's learner's code after an edit, and what it is valid for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Recipe {
    /// How the grader that made it makes recipes ([`RECIPE_FORMAT`]): a recipe made another
    /// way (an older grader's) is made again.
    pub(crate) format: u32,
    /// The kit's state without the learner's code when cargo showed its commands.
    pub(crate) key: Fingerprint,
    /// The folder they run in (the workspace root).
    pub(crate) root: PathBuf,
    /// The target folder they write to.
    pub(crate) target: PathBuf,
    /// Whether their messages carry colour.
    pub(crate) color: bool,
    /// The compiler run that builds the learner's library from the practice crate: linked
    /// by the toolchain's `rust-lld` directly where that was tried and worked
    /// ([`direct_link`]), else through the C compiler as cargo links.
    pub(crate) library: Step,
    /// The same run linked through the C compiler, when `library` links directly: tried when
    /// the direct link fails on the learner's code (a library it cannot find), so that such
    /// code is never "does not compile" for the grader alone.
    #[serde(default)]
    pub(crate) fallback: Option<Step>,
    /// The harness that loads that library, built when the recipe was made.
    pub(crate) harness: PathBuf,
    /// The crates the library links, each with its size and time when the harness was
    /// built. The library and the harness share their types, so both must be built from
    /// the same files: another copy of the kit sharing the target folder can compile a
    /// different `kit-types` into the same file, and then the recipe no longer fits.
    pub(crate) linked: Vec<(PathBuf, String)>,
    /// The standard library the harness loads (the compiler's, by an absolute path): an
    /// update of the toolchain that removes it makes the recipe unfit.
    pub(crate) std_library: PathBuf,
}

impl Recipe {
    /// This recipe with its library linked through `cc` (its fallback), when it links
    /// directly.
    pub(crate) fn linked_through_cc(&self) -> Option<Recipe> {
        let fallback = self.fallback.clone()?;
        Some(Recipe {
            library: fallback,
            fallback: None,
            ..self.clone()
        })
    }
}

/// How this grader makes recipes; raised whenever that changes (4: the learner's code is a
/// library that one harness loads; 5: a runner beside it; 6: the library linked directly;
/// 7: with the C compiler's start files).
pub(crate) const RECIPE_FORMAT: u32 = 7;

/// What a replayed build made.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Replayed {
    /// The harness executable: the recipe's.
    pub(crate) executable: PathBuf,
    /// The learner's library (in `target/debug/deps`, beside the compiler's dep-info), for
    /// the harness to load.
    pub(crate) library: PathBuf,
    /// The runner beside the harness ([`runner_of`]).
    pub(crate) runner: PathBuf,
    /// The compiler's warnings about the learner's code, rendered.
    pub(crate) warnings: Vec<String>,
    /// The recipe to keep from now on, when this build changed it: a direct link that
    /// failed and was linked through `cc` instead is not tried again for this kit state
    /// ([`Recipe::linked_through_cc`]), so a learner's code that only `cc` links costs one
    /// compile per edit, not two.
    pub(crate) new_recipe: Option<Recipe>,
}

/// The crates whose compiler runs a recipe is made from, in order.
pub(crate) const CRATES: [&str; 2] = ["practice", "practice_harness"];

/// The compiler runs for [`CRATES`] among what `cargo build -vv` printed on its standard
/// error (`Running `VAR=value … rustc --crate-name practice …``), or `None` when one is not
/// there or cannot be read.
pub(crate) fn steps_from_cargo(stderr: &str) -> Option<[Step; 2]> {
    let steps: Vec<Step> = stderr.lines().filter_map(running_step).collect();
    let find = |name: &str| steps.iter().find(|s| s.crate_name == name).cloned();
    Some([find(CRATES[0])?, find(CRATES[1])?])
}

/// The practice crate's compiler run, changed to build the library a loading harness loads:
/// a `cdylib` with the lessons' functions exported (`--cfg kit_glue`), its dependencies
/// linked in (their `.rlib`s, where cargo named the metadata alone), the standard library
/// linked dynamically, no symbol left undefined (`-z defs`: a missing one is a link error,
/// which sends the build to cargo, rather than a library the harness cannot load), and no
/// incremental data (for a crate this small, keeping it costs more than it saves: about
/// 0.015 s of a 0.08 s run).
pub(crate) fn library_step(practice: &Step) -> Step {
    let mut args = rewrite(&practice.args, |option, value| match option {
        "--crate-type" => Some("cdylib".to_string()),
        "-C" if value.starts_with("incremental=") => None,
        "--extern" => Some(match value.strip_suffix(".rmeta") {
            Some(stem) => format!("{stem}.rlib"),
            None => value.to_string(),
        }),
        _ => match value.strip_prefix("--emit=") {
            Some(kinds) => {
                let kinds: Vec<&str> = kinds.split(',').filter(|k| *k != "metadata").collect();
                Some(format!("--emit={}", kinds.join(",")))
            }
            None => Some(value.to_string()),
        },
    });
    args.extend(
        [
            "-C",
            "prefer-dynamic",
            "-C",
            "link-arg=-Wl,-z,defs",
            "--cfg",
            "kit_glue",
        ]
        .map(String::from),
    );
    Step {
        args,
        ..practice.clone()
    }
}

/// How the learner's library is linked when the toolchain's own linker can link it alone.
///
/// rustc links a library through the C compiler (`cc`), which starts `collect2`, which starts
/// the linker (`rust-lld` by way of a wrapper, on x86-64 Linux since Rust 1.90): three more
/// programs for a library of a few kilobytes, and `rust-lld` then starts a thread per core
/// for work that takes less time than starting them. Run directly with one thread, the link
/// is about 8 ms shorter, a twentieth of an edit's wait (grader/benches/README.md).
///
/// What the C compiler adds is asked of it once, when the recipe is made, and named here:
/// the folders where `-lgcc_s` and `-lc` are found (`cc -print-file-name`), and its start
/// files (`crti.o`, `crtbeginS.o`, `crtendS.o`, `crtn.o`), so that a learner's code that
/// defines one of their names (`_init`, `__dso_handle`) fails to link here as it does for
/// cargo, rather than passing here alone.
///
/// Only where rustc itself links with `rust-lld` (x86-64 Linux, no `--target`, and no linker
/// or link argument of the kit's owner in cargo's configuration or `RUSTFLAGS`, which are
/// written for `cc`), and only when the recipe's own library linked this way when the recipe
/// was made ([`make`]); else the library is linked as cargo links it.
pub(crate) struct DirectLink {
    /// The toolchain's `rust-lld`.
    linker: PathBuf,
    /// The folders of the C libraries the library names (`libgcc_s.so`, `libc.so`).
    search: Vec<PathBuf>,
    /// The C compiler's start files, in the order it passes them.
    start_files: Vec<PathBuf>,
}

/// The C compiler's start files for a shared library, in the order it passes them.
const START_FILES: [&str; 4] = ["crti.o", "crtbeginS.o", "crtendS.o", "crtn.o"];

impl DirectLink {
    /// The direct link for `library` (a [`library_step`]) with the standard library in
    /// `std_dir`, where it can be had; `None` where it cannot (see [`DirectLink`]).
    fn find(library: &Step, std_dir: &Path) -> Option<DirectLink> {
        if !cfg!(all(target_os = "linux", target_arch = "x86_64")) || links_as_chosen(library) {
            return None;
        }
        // `<sysroot>/lib/rustlib/<host>/lib` holds the standard library; its linker is in
        // `<sysroot>/lib/rustlib/<host>/bin`.
        let linker = std_dir.parent()?.join("bin").join("rust-lld");
        if !linker.is_file() || linker.to_str().is_none() {
            return None;
        }
        let mut search: Vec<PathBuf> = Vec::new();
        for name in ["libgcc_s.so", "libc.so"] {
            let dir = c_compilers_file(name)?.parent()?.to_path_buf();
            if !search.contains(&dir) {
                search.push(dir);
            }
        }
        let start_files = START_FILES
            .iter()
            .map(|name| c_compilers_file(name))
            .collect::<Option<Vec<_>>>()?;
        Some(DirectLink {
            linker,
            search,
            start_files,
        })
    }

    /// `library` linked this way: the C compiler's `-Wl,` form of `-z defs` becomes the
    /// linker's own, and the linker, its one thread, the C libraries' folders and the start
    /// files are named.
    fn step(&self, library: &Step) -> Step {
        let mut args = rewrite(&library.args, |option, value| match option {
            "-C" if value == "link-arg=-Wl,-z,defs" => None,
            _ => Some(value.to_string()),
        });
        let path = |p: &Path| p.to_str().unwrap_or_default().to_string();
        let mut options = vec![
            format!("linker={}", path(&self.linker)),
            "linker-flavor=ld.lld".to_string(),
            "link-arg=-zdefs".to_string(),
            "link-arg=--threads=1".to_string(),
        ];
        options.extend(
            self.search
                .iter()
                .map(|dir| format!("link-arg=-L{}", path(dir))),
        );
        options.extend(
            self.start_files
                .iter()
                .map(|f| format!("link-arg={}", path(f))),
        );
        for option in options {
            args.extend(["-C".to_string(), option]);
        }
        Step {
            args,
            ..library.clone()
        }
    }
}

/// Whether `library`'s command chooses how it is linked: a target, a linker, its flavour or
/// features, or link arguments of its own (written for `cc`, as cargo's configuration and
/// `RUSTFLAGS` write them), in any of the forms rustc reads (`-C linker=…`, `-Clinker=…`,
/// `--codegen linker=…`, `--target=…`, `-Z…`). The one link argument [`library_step`] adds
/// is the kit's.
fn links_as_chosen(library: &Step) -> bool {
    const CHOSEN: [&str; 6] = [
        "linker=",
        "linker-flavor=",
        "link-self-contained=",
        "linker-features=",
        "link-arg=",
        "link-args=",
    ];
    let mut words = library.args.iter().map(String::as_str).peekable();
    while let Some(word) = words.next() {
        let codegen = match word {
            "-C" | "--codegen" => words.next().unwrap_or_default(),
            "-Z" | "--target" => return true,
            _ if word.starts_with("-Z") || word.starts_with("--target=") => return true,
            _ => match word
                .strip_prefix("--codegen=")
                .or_else(|| word.strip_prefix("-C"))
            {
                Some(joined) => joined,
                None => continue,
            },
        };
        if codegen != "link-arg=-Wl,-z,defs" && CHOSEN.iter().any(|c| codegen.starts_with(c)) {
            return true;
        }
    }
    false
}

/// The file `name` where the C compiler (`cc`) finds it, as it says (`-print-file-name`):
/// `None` when it does not know it (it then prints the name alone), or cannot be asked.
fn c_compilers_file(name: &str) -> Option<PathBuf> {
    let output = Command::new("cc")
        .arg(format!("-print-file-name={name}"))
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let answer = String::from_utf8(output.stdout).ok()?;
    let file = PathBuf::from(answer.trim());
    (output.status.success() && file.is_absolute() && file.is_file() && file.to_str().is_some())
        .then_some(file)
}

/// The files a direct link reads by name besides its inputs (the linker, the C libraries'
/// folders and the start files), empty for a step linked through `cc`: gone, the recipe no
/// longer fits (a toolchain or compiler update).
fn direct_link_files(step: &Step) -> Vec<PathBuf> {
    let Some(linker) = linker_of(step) else {
        return Vec::new();
    };
    let linked = step
        .args
        .windows(2)
        .filter(|w| w[0] == "-C")
        .filter_map(|w| {
            let arg = w[1].strip_prefix("link-arg=")?;
            let file = arg.strip_prefix("-L").unwrap_or(arg);
            file.starts_with('/').then(|| PathBuf::from(file))
        });
    std::iter::once(PathBuf::from(linker))
        .chain(linked)
        .collect()
}

/// The linker `step` names (`-C linker=…`), if it names one.
fn linker_of(step: &Step) -> Option<&str> {
    step.args.windows(2).find_map(|w| {
        (w[0] == "-C")
            .then(|| w[1].strip_prefix("linker="))
            .flatten()
    })
}

/// The harness's compiler run, changed to build the judge: the harness that starts a
/// runner for the learner's code, or loads the learner's library (`--cfg kit_dynamic`),
/// into `out_dir`: the standard library linked dynamically and found at `std_dir` (the
/// compiler's `target-libdir`), no debug information, no incremental data (it is built
/// once). It serves every lesson, so what cargo set for one lesson goes: its feature, the
/// practice crate (it is loaded, not linked), and the names cargo derives from them (the
/// executable is `practice_harness-kit`).
pub(crate) fn loading_harness_step(harness: &Step, out_dir: &Path, std_dir: &str) -> Step {
    kit_built_step(harness, out_dir, std_dir, Role::Judge)
}

/// The harness's compiler run, changed to build the runner (`--cfg kit_runner`): the same
/// source without the checks or the reference (nothing it compiles names them, so nothing
/// of theirs is linked), which loads the learner's library; beside the judge in `out_dir`,
/// as [`RUNNER_NAME`].
pub(crate) fn runner_step(harness: &Step, out_dir: &Path, std_dir: &str) -> Step {
    kit_built_step(harness, out_dir, std_dir, Role::Runner)
}

/// The runner's file name, beside the judge (see [`runner_step`]).
pub(crate) const RUNNER_NAME: &str = "practice_harness-runner";

/// Which of the two programs the grader builds from the harness's source.
#[derive(Debug, Clone, Copy)]
enum Role {
    Judge,
    Runner,
}

fn kit_built_step(harness: &Step, out_dir: &Path, std_dir: &str, role: Role) -> Step {
    let (cfg, metadata, suffix) = match role {
        Role::Judge => ("kit_dynamic", "kit-loading-harness", "-kit"),
        Role::Runner => ("kit_runner", "kit-runner", "-runner"),
    };
    let mut args = rewrite(&harness.args, |option, value| match option {
        "--out-dir" => Some(out_dir.display().to_string()),
        "-C" if value.starts_with("incremental=") || value.starts_with("strip=") => None,
        "-C" if value.starts_with("metadata=") => Some(format!("metadata={metadata}")),
        "-C" if value.starts_with("extra-filename=") => Some(format!("extra-filename={suffix}")),
        "--cfg" if value.starts_with("feature=") => None,
        "--extern" if value.starts_with("practice=") => None,
        _ => Some(value.to_string()),
    });
    args.extend(
        [
            "--cfg",
            cfg,
            "-C",
            "prefer-dynamic",
            "-C",
            "strip=debuginfo",
        ]
        .map(String::from),
    );
    // As two linker words, which no character of the folder's name can split.
    for word in ["-Xlinker", "-rpath", "-Xlinker", std_dir] {
        args.extend(["-C".to_string(), format!("link-arg={word}")]);
    }
    Step {
        args,
        ..harness.clone()
    }
}

/// The options [`rewrite`] changes, which cargo writes as two words (`--crate-type lib`).
const TWO_WORD_OPTIONS: [&str; 5] = ["--crate-type", "-C", "--extern", "--out-dir", "--cfg"];

/// `args` with every word passed to `change`: an option of [`TWO_WORD_OPTIONS`] with its
/// value (`("-C", "incremental=…")`), any other word alone (`("", "--emit=link")`). The new
/// value (or word) it returns is kept; `None` drops it (with its option).
fn rewrite(args: &[String], mut change: impl FnMut(&str, &str) -> Option<String>) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len() + 8);
    let mut words = args.iter();
    while let Some(word) = words.next() {
        if TWO_WORD_OPTIONS.contains(&word.as_str()) {
            let Some(value) = words.next() else {
                out.push(word.clone());
                break;
            };
            if let Some(value) = change(word, value) {
                out.extend([word.clone(), value]);
            }
        } else if let Some(word) = change("", word) {
            out.push(word);
        }
    }
    out
}

/// Makes the recipe for `steps` (as [`steps_from_cargo`] read them) in the kit at `root`,
/// building into `target`, with the loading harness in a folder of `cache_dir` named after
/// its compiler run: every lesson's recipe of one kit state finds it built. `None` when
/// that fails, or off Unix (the harness loads the library with `dlopen`); the grader then
/// goes on building with cargo.
pub(crate) fn make(
    steps: &[Step; 2],
    key: Fingerprint,
    (root, target): (&Path, &Path),
    color: bool,
    cache_dir: &Path,
    limits: &CompileLimits,
) -> Option<Recipe> {
    if !cfg!(unix) {
        return None;
    }
    let [practice, harness] = steps;
    let std_dir = target_libdir(harness)?;
    let std_library = std::fs::read_dir(&std_dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("libstd-") && n.ends_with(".so"))
        })?;
    let std_path = std_dir;
    let std_dir = std_path.display().to_string();
    let build = |dir: &Path| loading_harness_step(harness, dir, &std_dir);
    let build_runner = |dir: &Path| runner_step(harness, dir, &std_dir);
    let harness_dir = cache_dir.join(harness_dir_name(
        &[
            build(Path::new(HARNESS_DIR)),
            build_runner(Path::new(HARNESS_DIR)),
        ],
        root,
    )?);
    let library = library_step(practice);
    let linked = linked_files(&library)
        .into_iter()
        .map(|file| {
            let stamp = crate::cache::stamp(&file);
            (file, stamp)
        })
        .collect();
    let mut recipe = Recipe {
        format: RECIPE_FORMAT,
        key,
        root: root.to_path_buf(),
        target: target.to_path_buf(),
        color,
        library,
        fallback: None,
        harness: harness_dir.join("practice_harness-kit"),
        linked,
        std_library,
    };
    if !recipe.harness.is_file() || !runner_of(&recipe.harness).is_file() {
        // The harnesses of other kit states: no recipe that fits names them any more.
        for entry in std::fs::read_dir(cache_dir).into_iter().flatten().flatten() {
            let name = entry.file_name();
            if name.to_string_lossy().starts_with(HARNESS_DIR) {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
        std::fs::create_dir_all(&harness_dir).ok()?;
        // The kit's own code: bounded in memory and output, not timed.
        let lines = compile(
            &recipe,
            &build(&harness_dir),
            &CompileLimits::default(),
            false,
        )
        .ok()?;
        recipe.harness = artifacts(&lines, "link").into_iter().next()?;
        let lines = compile(
            &recipe,
            &build_runner(&harness_dir),
            &CompileLimits::default(),
            false,
        )
        .ok()?;
        let runner = artifacts(&lines, "link").into_iter().next()?;
        if runner != runner_of(&recipe.harness) {
            return None;
        }
    }
    // The direct link, tried on the learner's code as it is (cargo has just compiled it),
    // under the bounds of the learner's compiles: kept only when it links.
    if let Some(direct) = DirectLink::find(&recipe.library, &std_path) {
        let step = direct.step(&recipe.library);
        if compile(&recipe, &step, limits, true).is_ok() {
            recipe.fallback = Some(std::mem::replace(&mut recipe.library, step));
        }
    }
    Some(recipe)
}

/// The runner built beside the judge `harness` ([`runner_step`]).
pub(crate) fn runner_of(harness: &Path) -> PathBuf {
    harness.with_file_name(RUNNER_NAME)
}

/// The folder, in the cache, of the harness that loads the learner's library (a hash of its
/// compiler run follows the name).
const HARNESS_DIR: &str = "loading-harness";

/// The name of the folder for the harness `step` builds in the kit at `root`: a hash of the
/// compiler run and of the files it reads by name — the crates it links (cargo rewrites a
/// crate whenever anything it depends on changed, so the checks' crate stands for the
/// checks, the reference and the types) and its source. The same run of the compiler over
/// other files is another harness.
fn harness_dir_name(steps: &[Step], root: &Path) -> Option<String> {
    let mut named = serde_json::to_vec(steps).ok()?;
    let step = steps.first()?;
    let source = step
        .args
        .iter()
        .find(|a| a.ends_with(".rs"))
        .map(|a| root.join(a));
    for file in linked_files(step).into_iter().chain(source) {
        named.extend_from_slice(crate::cache::stamp(&file).as_bytes());
    }
    Some(format!(
        "{HARNESS_DIR}-{}",
        crate::cache::content_hash(&named)
    ))
}

/// The compiler `step` runs: its program, or the program's first argument when that is not
/// an option (a wrapper's command line: `sccache /path/to/rustc --crate-name …`).
fn compiler_of(step: &Step) -> &str {
    match step.args.first() {
        Some(first) if !first.starts_with('-') => first,
        _ => &step.program,
    }
}

/// The crates `step` links by path (`--extern name=path`).
fn linked_files(step: &Step) -> Vec<PathBuf> {
    step.args
        .windows(2)
        .filter(|w| w[0] == "--extern")
        .filter_map(|w| w[1].split_once('=').map(|(_, path)| PathBuf::from(path)))
        .collect()
}

/// Where `step`'s compiler keeps the standard library it links (`--print target-libdir`,
/// for the step's `--target` if it names one). Under a compiler wrapper (`RUSTC_WRAPPER`:
/// sccache and the like), cargo runs the wrapper with the compiler as its first argument.
fn target_libdir(step: &Step) -> Option<PathBuf> {
    let compiler = compiler_of(step);
    let target = step
        .args
        .windows(2)
        .find(|w| w[0] == "--target")
        .map(|w| ["--target", w[1].as_str()]);
    let output = Command::new(compiler)
        .args(["--print", "target-libdir"])
        .args(target.iter().flatten())
        .envs(step.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let dir = PathBuf::from(String::from_utf8(output.stdout).ok()?.trim());
    (output.status.success() && dir.is_dir()).then_some(dir)
}

/// One `Running `…`` line of cargo's, as a [`Step`].
fn running_step(line: &str) -> Option<Step> {
    let command = line.trim().strip_prefix("Running `")?.strip_suffix('`')?;
    let mut words = shell_words(command)?.into_iter().peekable();
    let mut env = Vec::new();
    while let Some((name, value)) = words.peek().and_then(|w| env_assignment(w)) {
        env.push((name, value));
        words.next();
    }
    let program = words.next()?;
    let args: Vec<String> = words.collect();
    let crate_name = args
        .windows(2)
        .find(|w| w[0] == "--crate-name")
        .map(|w| w[1].clone())?;
    Some(Step {
        crate_name,
        program,
        args,
        env,
    })
}

/// `NAME=value` with a name as cargo's variables have them.
fn env_assignment(word: &str) -> Option<(String, String)> {
    let (name, value) = word.split_once('=')?;
    let is_name = !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    is_name.then(|| (name.to_string(), value.to_string()))
}

/// Splits a command line as a POSIX shell would (cargo quotes with `'…'` and `'\''`), or
/// `None` when a quote is left open.
fn shell_words(text: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => word.push(c),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => word.push(chars.next()?),
                        c => word.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.push(chars.next()?);
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Some(words)
}

/// A line rustc writes on its standard error with `--error-format=json`.
#[derive(Deserialize)]
struct RustcLine {
    #[serde(rename = "$message_type", default)]
    message_type: String,
    #[serde(default)]
    level: String,
    #[serde(default)]
    rendered: Option<String>,
    #[serde(default)]
    message: String,
    #[serde(default)]
    artifact: Option<PathBuf>,
    #[serde(default)]
    emit: Option<String>,
}

/// Why a replay made no library.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unreplayed {
    /// Build with cargo instead: the compiler failed, reported an error, or printed
    /// something this cannot read (or more than [`CompileLimits::output`]).
    Cargo,
    /// The compiler reached a bound on the learner's code: cargo would only reach it again.
    Exceeded(Exceeded),
    /// The learner's code does not compile: the compiler's errors, rendered (a confined
    /// build's, [`CompileLimits::confine`], which never goes to cargo).
    Errors(Vec<String>),
}

/// Why one compiler run made nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Failure {
    /// As [`Unreplayed`] says.
    Stopped(Unreplayed),
    /// The compiler said its linker failed (`linking with … failed`), and nothing else
    /// stopped it: with the errors it rendered, for a confined build.
    Linking(Vec<String>),
}

impl From<Failure> for Unreplayed {
    fn from(failure: Failure) -> Unreplayed {
        match failure {
            Failure::Stopped(why) => why,
            Failure::Linking(errors) if !errors.is_empty() => Unreplayed::Errors(errors),
            Failure::Linking(_) => Unreplayed::Cargo,
        }
    }
}

/// Builds the learner's library with `recipe`, under `limits`: linked as the recipe links
/// it, and through the C compiler when a direct link failed ([`Recipe::fallback`]).
pub(crate) fn run(recipe: &Recipe, limits: &CompileLimits) -> Result<Replayed, Unreplayed> {
    let first = compile(recipe, &recipe.library, limits, true);
    let (lines, new_recipe) = match (first, &recipe.fallback) {
        (Err(Failure::Linking(_)), Some(fallback)) => (
            compile(recipe, fallback, limits, true)?,
            recipe.linked_through_cc(),
        ),
        (lines, _) => (lines?, None),
    };
    let library = artifacts(&lines, "link")
        .into_iter()
        .next()
        .ok_or(Unreplayed::Cargo)?;
    let warnings = lines
        .iter()
        .filter(|l| l.message_type == "diagnostic")
        .filter_map(|l| l.rendered.clone())
        .collect();
    Ok(Replayed {
        executable: recipe.harness.clone(),
        runner: runner_of(&recipe.harness),
        library,
        warnings,
        new_recipe,
    })
}

/// The files a compiler run reported writing for `emit` (`link`, `metadata`).
fn artifacts(lines: &[RustcLine], emit: &str) -> Vec<PathBuf> {
    lines
        .iter()
        .filter(|l| l.message_type == "artifact" && l.emit.as_deref() == Some(emit))
        .filter_map(|l| l.artifact.clone())
        .collect()
}

/// Runs one step under `limits` (`timed`: with the clock on, for the learner's code); its
/// lines, or why there are none.
fn compile(
    recipe: &Recipe,
    step: &Step,
    limits: &CompileLimits,
    timed: bool,
) -> Result<Vec<RustcLine>, Failure> {
    // A confined build's compile reads, of the target folder, only links to the crates the
    // practice crate depends on, and writes a folder of its own.
    let confined = if limits.confine {
        Some(
            Confined::make(step, &recipe.target)
                .map_err(|_| Failure::Stopped(Unreplayed::Cargo))?,
        )
    } else {
        None
    };
    let step = confined.as_ref().map_or(step, |c| &c.step);
    let mut command = Command::new(&step.program);
    command
        .args(&step.args)
        .envs(step.env.iter().map(|(k, v)| (k, v)))
        .current_dir(&recipe.root);
    if let Some(confined) = &confined {
        crate::bounded::confine_to(
            &mut command,
            &recipe.root,
            &recipe.target,
            &[&confined.links],
            &[&confined.out],
        );
    }
    let mut lines = Vec::new();
    let mut readable = true;
    let mut linking_failed = false;
    // A confined build (a submission's, in `grade`) keeps the compiler's errors itself: it
    // never goes to cargo, whose build reads the kit's compiled crates.
    let collect = limits.confine;
    let mut errors: Vec<String> = Vec::new();
    // What the compiler said that is not its JSON (a crash's message): a confined build's
    // failure shows it, since the kit's crates are built and the input is the learner's.
    let mut unread: Vec<String> = Vec::new();
    let mut kept = Kept::new(limits.output);
    let ended = run_bounded(&mut command, limits, timed, |line| {
        let text = match line {
            Line::Err(text) => text,
            Line::Out(_) => return Clock::Keep,
            Line::Cut(len) => {
                if collect {
                    kept.lose(len);
                } else {
                    readable = false;
                }
                return Clock::Keep;
            }
        };
        if !readable || text.iter().all(u8::is_ascii_whitespace) {
            return Clock::Keep;
        }
        if !kept.take(text.len()) {
            if !collect {
                readable = false;
            }
            return Clock::Keep;
        }
        let Ok(line) = serde_json::from_slice::<RustcLine>(&text) else {
            if collect && unread.len() < 20 {
                unread.push(String::from_utf8_lossy(&text).into_owned());
            }
            readable = false;
            return Clock::Keep;
        };
        match line.message_type.as_str() {
            "artifact" => lines.push(line),
            // Warnings only; an error means the build failed after all.
            "diagnostic" if line.level.starts_with("warning") || line.level == "note" => {
                lines.push(line)
            }
            "future_incompat" => {}
            "diagnostic" if line.level == "error" && line.message.starts_with("linking with ") => {
                linking_failed = true;
                if collect {
                    errors.extend(line.rendered);
                } else {
                    readable = false;
                }
            }
            "diagnostic" if collect && line.level.starts_with("error") => {
                errors.extend(line.rendered)
            }
            // What follows errors (`failure-note`: "For more information about this error…").
            "diagnostic" if collect => {}
            _ => readable = false,
        }
        Clock::Keep
    })
    .map_err(|_| Failure::Stopped(Unreplayed::Cargo))?;
    if let Some(exceeded) = ended.exceeded {
        return Err(Failure::Stopped(Unreplayed::Exceeded(exceeded)));
    }
    if collect {
        errors.extend(kept.more());
    }
    if linking_failed && !ended.status.success() {
        return Err(Failure::Linking(errors));
    }
    if !ended.status.success() && readable && !errors.is_empty() {
        return Err(Failure::Stopped(Unreplayed::Errors(errors)));
    }
    // The compiler failed on the learner's code without a message it could render (it
    // crashed: a stack overflow on deeply nested code): the learner's compile error, with
    // what it said, never the kit's.
    if collect && !ended.status.success() && !unread.is_empty() {
        let mut said = format!(
            "error: the compiler stopped on this code without a message of its own ({})\n",
            ended.status
        );
        for line in &unread {
            said.push_str(line);
            said.push('\n');
        }
        errors.push(said);
        return Err(Failure::Stopped(Unreplayed::Errors(errors)));
    }
    if !ended.status.success() || !readable {
        return Err(Failure::Stopped(Unreplayed::Cargo));
    }
    Ok(lines)
}

/// A confined build's compiler run ([`CompileLimits::confine`]): `step` reading its
/// dependencies from `links` (links to the crates in the target folder, but the kit's own
/// holding the answers, the checks or the harness) and writing to `out`, both made afresh
/// under the target folder. So a submission's compile cannot include the reference's
/// compiled crate, the checks' digests or the judge.
struct Confined {
    step: Step,
    links: PathBuf,
    out: PathBuf,
}

/// The crates of the kit a submission's compile never reads (by the name in their files).
const KEPT_CRATES: [&str; 7] = [
    "reference",
    "grader_checks",
    "kit_runner",
    "kit_grader",
    "grader_launcher",
    "practice",
    "practice_harness",
];

impl Confined {
    fn make(step: &Step, target: &Path) -> std::io::Result<Confined> {
        let base = target.join("kit-confined");
        let links = base.join("links");
        // Named `deps`, as cargo's: the dep-info file is looked for there.
        let out = base.join("deps");
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(&links)?;
        std::fs::create_dir_all(&out)?;
        let folders: Vec<PathBuf> = step
            .args
            .iter()
            .filter_map(|a| a.strip_prefix("dependency="))
            .map(PathBuf::from)
            .collect();
        for folder in &folders {
            for entry in std::fs::read_dir(folder)?.flatten() {
                let name = entry.file_name();
                let Some(text) = name.to_str() else { continue };
                if !entry.file_type().is_ok_and(|t| t.is_file()) || Self::kept(text) {
                    continue;
                }
                let to = links.join(&name);
                if std::fs::hard_link(entry.path(), &to).is_err() {
                    std::fs::copy(entry.path(), &to)?;
                }
            }
        }
        let moved = |path: &str| -> String {
            let file = Path::new(path).file_name().map(|n| links.join(n));
            file.map_or_else(|| path.to_string(), |f| f.display().to_string())
        };
        let args = rewrite(&step.args, |option, value| match option {
            "--out-dir" => Some(out.display().to_string()),
            "--extern" => Some(match value.split_once('=') {
                Some((name, path)) => format!("{name}={}", moved(path)),
                None => value.to_string(),
            }),
            _ if value.starts_with("dependency=") => {
                Some(format!("dependency={}", links.display()))
            }
            _ => Some(value.to_string()),
        });
        Ok(Confined {
            step: Step {
                args,
                ..step.clone()
            },
            links,
            out,
        })
    }

    /// Whether the file `name` in a dependency folder is one of [`KEPT_CRATES`]'.
    fn kept(name: &str) -> bool {
        let stem = name.split('-').next().unwrap_or(name);
        let library = [".rlib", ".rmeta", ".so"].iter().any(|e| name.ends_with(e));
        let krate = if library {
            stem.strip_prefix("lib").unwrap_or(stem)
        } else {
            stem
        };
        KEPT_CRATES.contains(&krate) || name.starts_with("practice_harness")
    }
}

/// Whether `recipe` was made by this grader's way of making them, for this kit state,
/// folder and colour; its compiler, harness and standard library are still there; and the
/// crates the library links are the ones the harness was built with.
pub(crate) fn fits(
    recipe: &Recipe,
    key: &Fingerprint,
    root: &Path,
    target: &Path,
    color: bool,
) -> bool {
    misfit(recipe, key, root, target, color).is_none()
}

/// Why `recipe` does not fit (see [`fits`]), in a few words; `None` when it does.
pub(crate) fn misfit(
    recipe: &Recipe,
    key: &Fingerprint,
    root: &Path,
    target: &Path,
    color: bool,
) -> Option<&'static str> {
    Some(if recipe.format != RECIPE_FORMAT {
        "the kept recipe was made by another version of the grader"
    } else if recipe.key != *key {
        "the kit or the toolchain changed since the recipe was made"
    } else if recipe.root != root || recipe.target != target {
        "the recipe was made for another folder"
    } else if recipe.color != color {
        "the recipe was made for the other colour setting"
    } else if !Path::new(&recipe.library.program).is_file() {
        "the compiler the recipe runs is gone"
    } else if !direct_link_files(&recipe.library)
        .iter()
        .all(|f| f.exists())
    {
        "the linker the recipe runs, or a file it links, is gone"
    } else if !recipe.harness.is_file() || !runner_of(&recipe.harness).is_file() {
        "the harness or the runner the recipe loads into is gone"
    } else if !recipe.std_library.is_file() {
        "the standard library the recipe links is gone"
    } else if !recipe
        .linked
        .iter()
        .all(|(file, stamp)| crate::cache::stamp(file) == *stamp)
    {
        "a crate the library links was rebuilt since"
    } else {
        return None;
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_confined_compile_is_given_no_crate_of_the_kits_answers_checks_or_harness() {
        for name in [
            "libreference-5697b63d7967e139.rlib",
            "libreference-5697b63d7967e139.rmeta",
            "reference-5697b63d7967e139.d",
            "libgrader_checks-ed3b6519fc012996.rlib",
            "libkit_runner-0123.rlib",
            "practice_harness-0123",
            "libpractice-0123.so",
        ] {
            assert!(Confined::kept(name), "{name}");
        }
        for name in [
            "libkit_types-0cc20c65f746aac5.rlib",
            "liblibc-0123.rlib",
            "libserde_json-45f7db8d6de53c54.rlib",
            "libserde_derive-0123.so",
        ] {
            assert!(!Confined::kept(name), "{name}");
        }
    }

    /// Lines as cargo 1.9x prints them with `-vv` (shortened).
    const CARGO_VV: &str = "\
   Compiling practice v0.1.0 (/k/practice)
     Running `CARGO=/c/bin/cargo CARGO_CRATE_NAME=practice CARGO_MANIFEST_DIR=/k/practice CARGO_PKG_DESCRIPTION='The learner'\\''s crate' /t/bin/rustc --crate-name practice --edition=2021 practice/src/root.rs --error-format=json --cfg 'feature=\"build3\"' -C metadata=1a2b --out-dir /k/target/debug/deps -L dependency=/k/target/debug/deps`
   Compiling practice-harness v0.1.0 (/k/grader/harness)
     Running `CARGO=/c/bin/cargo CARGO_CRATE_NAME=practice_harness /t/bin/rustc --crate-name practice_harness --edition=2021 grader/harness/src/main.rs --crate-type bin --extern practice=/k/target/debug/deps/libpractice-1a2b.rlib`
    Finished `dev` profile [unoptimized + debuginfo] target(s) in 0.31s
";

    #[test]
    fn cargos_running_lines_become_the_two_steps() {
        let [practice, harness] = steps_from_cargo(CARGO_VV).expect("both steps");
        assert_eq!(practice.crate_name, "practice");
        assert_eq!(practice.program, "/t/bin/rustc");
        assert!(practice
            .env
            .contains(&("CARGO_PKG_DESCRIPTION".into(), "The learner's crate".into())));
        assert!(practice.args.contains(&"feature=\"build3\"".to_string()));
        assert_eq!(practice.args[0], "--crate-name");
        assert_eq!(harness.crate_name, "practice_harness");
        assert_eq!(harness.env.len(), 2);
    }

    /// `words` as owned arguments.
    fn args(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn the_library_is_the_practice_crate_as_a_cdylib_sharing_the_standard_library() {
        let practice = Step {
            crate_name: "practice".into(),
            program: "/t/bin/rustc".into(),
            args: args(&[
                "--crate-name",
                "practice",
                "practice/src/root.rs",
                "--crate-type",
                "lib",
                "--emit=dep-info,metadata,link",
                "-C",
                "incremental=/k/target/debug/incremental",
                "--extern",
                "kit_types=/k/deps/libkit_types-1.rmeta",
                "--extern",
                "serde=/k/deps/libserde-2.rlib",
            ]),
            env: vec![("CARGO_PKG_NAME".into(), "practice".into())],
        };
        let library = library_step(&practice);
        assert_eq!(
            library.args,
            args(&[
                "--crate-name",
                "practice",
                "practice/src/root.rs",
                "--crate-type",
                "cdylib",
                "--emit=dep-info,link",
                "--extern",
                "kit_types=/k/deps/libkit_types-1.rlib",
                "--extern",
                "serde=/k/deps/libserde-2.rlib",
                "-C",
                "prefer-dynamic",
                "-C",
                "link-arg=-Wl,-z,defs",
                "--cfg",
                "kit_glue",
            ])
        );
        assert_eq!(
            (library.program, library.env),
            (practice.program, practice.env)
        );
    }

    #[test]
    fn the_loading_harness_is_built_once_for_every_lesson() {
        let harness = |lesson: &str, hash: &str| Step {
            crate_name: "practice_harness".into(),
            program: "/t/bin/rustc".into(),
            args: args(&[
                "--crate-name",
                "practice_harness",
                "grader/harness/src/main.rs",
                "--cfg",
                &format!("feature=\"{lesson}\""),
                "--out-dir",
                "/k/target/debug/deps",
                "-C",
                "incremental=/k/target/debug/inc",
                "-C",
                "strip=none",
                "-C",
                "debuginfo=line-tables-only",
                "-C",
                &format!("metadata={hash}"),
                "-C",
                &format!("extra-filename=-{hash}"),
                "--extern",
                &format!("practice=/k/deps/libpractice-{hash}.rlib"),
                "--extern",
                "grader_checks=/k/deps/libgrader_checks-9.rlib",
            ]),
            env: vec![],
        };
        let out = Path::new("/k/cache/h");
        let built = loading_harness_step(&harness("build3", "3"), out, "/t/lib/std");
        assert_eq!(
            built.args,
            args(&[
                "--crate-name",
                "practice_harness",
                "grader/harness/src/main.rs",
                "--out-dir",
                "/k/cache/h",
                "-C",
                "debuginfo=line-tables-only",
                "-C",
                "metadata=kit-loading-harness",
                "-C",
                "extra-filename=-kit",
                "--extern",
                "grader_checks=/k/deps/libgrader_checks-9.rlib",
                "--cfg",
                "kit_dynamic",
                "-C",
                "prefer-dynamic",
                "-C",
                "strip=debuginfo",
                "-C",
                "link-arg=-Xlinker",
                "-C",
                "link-arg=-rpath",
                "-C",
                "link-arg=-Xlinker",
                "-C",
                "link-arg=/t/lib/std",
            ])
        );
        let other = loading_harness_step(&harness("stage8", "8"), out, "/t/lib/std");
        assert_eq!(other, built, "one harness serves every lesson");
    }

    #[test]
    fn a_loading_harness_is_another_when_a_crate_it_links_or_its_source_changed() {
        let root = tempfile::tempdir().unwrap();
        let checks = root.path().join("libgrader_checks-9.rlib");
        let source = root.path().join("main.rs");
        std::fs::write(&checks, "checks").unwrap();
        std::fs::write(&source, "fn main() {}").unwrap();
        let step = Step {
            crate_name: "practice_harness".into(),
            program: "/t/bin/rustc".into(),
            args: args(&[
                "--crate-name",
                "practice_harness",
                "main.rs",
                "--extern",
                &format!("grader_checks={}", checks.display()),
            ]),
            env: vec![],
        };
        let first = harness_dir_name(std::slice::from_ref(&step), root.path()).unwrap();
        assert_eq!(
            harness_dir_name(std::slice::from_ref(&step), root.path()).unwrap(),
            first
        );
        // The same command over a rebuilt checks' crate (the checks or the reference changed).
        std::fs::write(&checks, "checks, changed").unwrap();
        let rebuilt = harness_dir_name(std::slice::from_ref(&step), root.path()).unwrap();
        assert_ne!(rebuilt, first);
        std::fs::write(&source, "fn main() { /* changed */ }").unwrap();
        assert_ne!(
            harness_dir_name(std::slice::from_ref(&step), root.path()).unwrap(),
            rebuilt
        );
    }

    #[test]
    fn the_compiler_and_the_linked_crates_are_read_from_a_step() {
        let step = |program: &str, words: &[&str]| Step {
            crate_name: "practice".into(),
            program: program.into(),
            args: args(words),
            env: vec![],
        };
        let plain = step(
            "/t/rustc",
            &["--crate-name", "practice", "--extern", "a=/d/liba.rlib"],
        );
        assert_eq!(compiler_of(&plain), "/t/rustc");
        assert_eq!(linked_files(&plain), [PathBuf::from("/d/liba.rlib")]);
        let wrapped = step("/bin/sccache", &["/t/rustc", "--crate-name", "practice"]);
        assert_eq!(compiler_of(&wrapped), "/t/rustc");
        assert!(linked_files(&wrapped).is_empty());
    }

    #[test]
    fn a_missing_step_or_an_open_quote_is_no_recipe() {
        let only_practice: String = CARGO_VV
            .lines()
            .filter(|l| !l.contains("practice_harness"))
            .collect::<Vec<_>>()
            .join("\n");
        assert_eq!(steps_from_cargo(&only_practice), None);
        assert_eq!(shell_words("rustc 'open"), None);
        assert_eq!(
            shell_words(r#"a 'b c' "d \"e\"" f\ g"#).unwrap(),
            ["a", "b c", "d \"e\"", "f g"]
        );
    }

    /// A recipe whose library step runs `program` with `args`, its harness this test binary.
    fn recipe(program: &str, args: &[&str]) -> Recipe {
        Recipe {
            format: RECIPE_FORMAT,
            key: Fingerprint("k".into()),
            root: std::env::temp_dir(),
            target: std::env::temp_dir(),
            color: false,
            library: Step {
                crate_name: "practice".into(),
                program: program.into(),
                args: args.iter().map(|a| a.to_string()).collect(),
                env: vec![],
            },
            fallback: None,
            harness: built_harness(),
            linked: vec![],
            std_library: std::env::current_exe().unwrap(),
        }
    }

    /// A judge and its runner, as files: one folder for every run of these tests (their
    /// content never changes), so that none is left behind per run.
    fn built_harness() -> PathBuf {
        let dir = std::env::temp_dir().join("kit-replay-test");
        std::fs::create_dir_all(&dir).unwrap();
        let harness = dir.join("practice_harness-kit");
        std::fs::write(&harness, "judge").unwrap();
        std::fs::write(runner_of(&harness), "runner").unwrap();
        harness
    }

    #[test]
    fn a_recipe_fits_only_its_own_format_kit_state_folder_and_colour() {
        let rustc = std::env::current_exe().unwrap();
        let recipe = recipe(rustc.to_str().unwrap(), &[]);
        let key = Fingerprint("k".into());
        let (root, target) = (recipe.root.clone(), recipe.target.clone());
        let (root, target) = (root.as_path(), target.as_path());
        assert!(fits(&recipe, &key, root, target, false));
        assert!(!fits(
            &recipe,
            &Fingerprint("other".into()),
            root,
            target,
            false
        ));
        assert!(!fits(&recipe, &key, Path::new("/copy"), target, false));
        assert!(!fits(&recipe, &key, root, Path::new("/t2"), false));
        assert!(!fits(&recipe, &key, root, target, true));
        let older = Recipe {
            format: RECIPE_FORMAT - 1,
            ..recipe.clone()
        };
        assert!(!fits(&older, &key, root, target, false));
        let no_harness = Recipe {
            harness: root.join("no-such-harness"),
            ..recipe.clone()
        };
        assert!(!fits(&no_harness, &key, root, target, false));
        let dir = tempfile::tempdir().unwrap();
        let judge_alone = dir.path().join("practice_harness-kit");
        std::fs::write(&judge_alone, "judge").unwrap();
        let no_runner = Recipe {
            harness: judge_alone,
            ..recipe.clone()
        };
        assert!(!fits(&no_runner, &key, root, target, false));
        let no_std = Recipe {
            std_library: root.join("no-such-libstd.so"),
            ..recipe.clone()
        };
        assert!(!fits(&no_std, &key, root, target, false));
        // A crate the library links, changed since the harness was built: another copy of
        // the kit sharing the target folder compiled its own.
        let dir = tempfile::tempdir().unwrap();
        let rlib = dir.path().join("libkit_types-1.rlib");
        std::fs::write(&rlib, "one").unwrap();
        let linked = Recipe {
            linked: vec![(rlib.clone(), crate::cache::stamp(&rlib))],
            ..recipe.clone()
        };
        assert!(fits(&linked, &key, root, target, false));
        std::fs::write(&rlib, "other").unwrap();
        assert!(!fits(&linked, &key, root, target, false));
    }

    #[test]
    fn a_failing_or_unreadable_compiler_means_cargo_builds() {
        let limits = CompileLimits::default();
        assert_eq!(
            run(&recipe("false", &[]), &limits),
            Err(Unreplayed::Cargo),
            "a failing step"
        );
        assert_eq!(
            run(
                &recipe("sh", &["-c", "echo 'error: not JSON' >&2"]),
                &limits
            ),
            Err(Unreplayed::Cargo),
            "what it cannot read"
        );
        let error = r#"{"$message_type":"diagnostic","level":"error","rendered":"error: x"}"#;
        assert_eq!(
            run(
                &recipe("sh", &["-c", &format!("echo '{error}' >&2")]),
                &limits
            ),
            Err(Unreplayed::Cargo),
            "a compile error"
        );
        let made =
            r#"{"$message_type":"artifact","artifact":"/t/deps/libpractice-1.so","emit":"link"}"#;
        let warning = r#"{"$message_type":"diagnostic","level":"warning","rendered":"warning: w"}"#;
        let ok = run(
            &recipe(
                "sh",
                &["-c", &format!("echo '{made}' >&2; echo '{warning}' >&2")],
            ),
            &limits,
        )
        .expect("a clean build with a warning");
        assert_eq!(ok.executable, built_harness());
        assert_eq!(ok.runner, runner_of(&built_harness()));
        assert_eq!(ok.library, Path::new("/t/deps/libpractice-1.so"));
        assert_eq!(ok.warnings, ["warning: w"]);
    }

    /// A library step as [`library_step`] makes it (shortened).
    fn library(extra: &[&str]) -> Step {
        let mut words = vec![
            "--crate-name",
            "practice",
            "--crate-type",
            "cdylib",
            "-C",
            "prefer-dynamic",
            "-C",
            "link-arg=-Wl,-z,defs",
        ];
        words.extend_from_slice(extra);
        Step {
            crate_name: "practice".into(),
            program: "/t/bin/rustc".into(),
            args: args(&words),
            env: vec![],
        }
    }

    #[test]
    fn a_direct_link_names_the_linker_its_one_thread_the_c_libraries_and_the_start_files() {
        let direct = DirectLink {
            linker: PathBuf::from("/t/lib/rustlib/x/bin/rust-lld"),
            search: vec![
                PathBuf::from("/usr/lib/gcc/x/12"),
                PathBuf::from("/usr/lib/x"),
            ],
            start_files: vec![
                PathBuf::from("/usr/lib/x/crti.o"),
                PathBuf::from("/usr/lib/x/crtn.o"),
            ],
        };
        let step = direct.step(&library(&[]));
        assert_eq!(
            step.args,
            args(&[
                "--crate-name",
                "practice",
                "--crate-type",
                "cdylib",
                "-C",
                "prefer-dynamic",
                "-C",
                "linker=/t/lib/rustlib/x/bin/rust-lld",
                "-C",
                "linker-flavor=ld.lld",
                "-C",
                "link-arg=-zdefs",
                "-C",
                "link-arg=--threads=1",
                "-C",
                "link-arg=-L/usr/lib/gcc/x/12",
                "-C",
                "link-arg=-L/usr/lib/x",
                "-C",
                "link-arg=/usr/lib/x/crti.o",
                "-C",
                "link-arg=/usr/lib/x/crtn.o",
            ])
        );
        assert_eq!(linker_of(&step), Some("/t/lib/rustlib/x/bin/rust-lld"));
        assert_eq!(linker_of(&library(&[])), None);
        assert_eq!(
            direct_link_files(&step),
            [
                "/t/lib/rustlib/x/bin/rust-lld",
                "/usr/lib/gcc/x/12",
                "/usr/lib/x",
                "/usr/lib/x/crti.o",
                "/usr/lib/x/crtn.o",
            ]
            .map(PathBuf::from)
        );
        assert!(direct_link_files(&library(&[])).is_empty());
    }

    #[test]
    fn no_direct_link_where_the_kits_owner_chose_how_to_link_or_there_is_no_rust_lld() {
        // A standard library folder whose toolchain has a `rust-lld` (an empty file is enough
        // to be found; it is never run here).
        let sysroot = tempfile::tempdir().unwrap();
        let std_dir = sysroot.path().join("lib/rustlib/host/lib");
        std::fs::create_dir_all(&std_dir).unwrap();
        std::fs::create_dir_all(sysroot.path().join("lib/rustlib/host/bin")).unwrap();
        std::fs::write(sysroot.path().join("lib/rustlib/host/bin/rust-lld"), "").unwrap();
        // In every form rustc reads, from cargo's configuration or RUSTFLAGS.
        for chosen in [
            &["-C", "linker=clang"][..],
            &["-Clinker=clang"],
            &["--codegen", "linker=clang"],
            &["--codegen=linker=clang"],
            &["-C", "linker-flavor=gnu-cc"],
            &["-C", "link-self-contained=-linker"],
            &["-C", "linker-features=-lld"],
            &["-C", "link-arg=-fuse-ld=mold"],
            &["-Clink-args=-Wl,--as-needed"],
            &["--target", "aarch64-unknown-linux-gnu"],
            &["--target=aarch64-unknown-linux-gnu"],
            &["-Z", "linker-features=-lld"],
            &["-Zthreads=2"],
        ] {
            assert!(links_as_chosen(&library(chosen)), "{chosen:?}");
            assert!(
                DirectLink::find(&library(chosen), &std_dir).is_none(),
                "{chosen:?}"
            );
        }
        // The kit's own `-z defs`, and options about other things, choose nothing.
        assert!(!links_as_chosen(&library(&[
            "-C",
            "opt-level=0",
            "-Cdebuginfo=1"
        ])));
        let found = DirectLink::find(&library(&[]), &std_dir);
        if cfg!(all(target_os = "linux", target_arch = "x86_64")) {
            let found = found.expect("rust-lld beside the standard library, and cc answers");
            assert!(found.linker.ends_with("lib/rustlib/host/bin/rust-lld"));
            assert!(!found.search.is_empty());
            assert!(found
                .search
                .iter()
                .all(|dir| dir.is_absolute() && dir.is_dir()));
            assert_eq!(found.start_files.len(), START_FILES.len());
            assert!(found
                .start_files
                .iter()
                .all(|f| f.is_absolute() && f.is_file()));
        } else {
            assert!(
                found.is_none(),
                "only where rustc links with rust-lld itself"
            );
        }
        // No `rust-lld` beside the standard library (a distribution's rustc, say).
        std::fs::remove_file(sysroot.path().join("lib/rustlib/host/bin/rust-lld")).unwrap();
        assert!(DirectLink::find(&library(&[]), &std_dir).is_none());
        // A file the C compiler does not know: no answer.
        assert_eq!(c_compilers_file("no-such-start-file.o"), None);
    }

    #[test]
    fn a_direct_link_that_fails_is_linked_through_cc_then_and_from_then_on_and_nothing_else_is() {
        let limits = CompileLimits::default();
        let made =
            r#"{"$message_type":"artifact","artifact":"/t/deps/libpractice-1.so","emit":"link"}"#;
        let fallback = Step {
            crate_name: "practice".into(),
            program: "sh".into(),
            args: args(&["-c", &format!("echo '{made}' >&2")]),
            env: vec![],
        };
        let failing = |message: &str| {
            let line = format!(
                r#"{{"$message_type":"diagnostic","level":"error","message":"{message}","rendered":"error: {message}"}}"#
            );
            Recipe {
                fallback: Some(fallback.clone()),
                ..recipe("sh", &["-c", &format!("echo '{line}' >&2; exit 1")])
            }
        };
        let direct = failing("linking with `rust-lld` failed: exit status: 1");
        let linked = run(&direct, &limits).expect("linked through cc after all");
        assert_eq!(linked.library, Path::new("/t/deps/libpractice-1.so"));
        // And through cc from now on: the recipe to keep has the fallback as its library,
        // and is the same recipe otherwise.
        let kept = linked
            .new_recipe
            .expect("a recipe linked through cc to keep");
        assert_eq!(kept.library, fallback);
        assert_eq!(kept.fallback, None);
        assert_eq!(
            Recipe {
                library: direct.library.clone(),
                fallback: Some(fallback.clone()),
                ..kept
            },
            direct
        );
        // A build linked as the recipe says keeps the recipe as it is.
        let direct_ok = Recipe {
            fallback: Some(fallback.clone()),
            ..recipe("sh", &["-c", &format!("echo '{made}' >&2")])
        };
        assert_eq!(run(&direct_ok, &limits).unwrap().new_recipe, None);
        // The learner's own error: the fallback would build, but it is not tried.
        assert_eq!(
            run(&failing("mismatched types"), &limits),
            Err(Unreplayed::Cargo)
        );
        // A failed link with nothing to fall back on: cargo builds.
        let alone = Recipe {
            fallback: None,
            ..failing("linking with `rust-lld` failed: exit status: 1")
        };
        assert_eq!(run(&alone, &limits), Err(Unreplayed::Cargo));
    }

    #[test]
    fn a_recipe_whose_linker_or_its_files_are_gone_does_not_fit() {
        let rustc = std::env::current_exe().unwrap();
        let mut recipe = recipe(rustc.to_str().unwrap(), &[]);
        let key = Fingerprint("k".into());
        let (root, target) = (recipe.root.clone(), recipe.target.clone());
        let linker = format!("linker={}", rustc.display());
        let here = std::env::temp_dir();
        recipe.library.args = args(&[
            "-C",
            &linker,
            "-C",
            &format!("link-arg=-L{}", here.display()),
        ]);
        assert!(fits(&recipe, &key, &root, &target, false));
        recipe.library.args = args(&["-C", "linker=/no/such/rust-lld"]);
        assert_eq!(
            misfit(&recipe, &key, &root, &target, false),
            Some("the linker the recipe runs, or a file it links, is gone")
        );
        // A C compiler updated since: its start files or library folder moved.
        for gone in ["link-arg=/no/such/crti.o", "link-arg=-L/no/such/gcc/12"] {
            recipe.library.args = args(&["-C", &linker, "-C", gone]);
            assert!(!fits(&recipe, &key, &root, &target, false), "{gone}");
        }
    }

    #[test]
    fn a_compiler_that_never_ends_is_stopped_with_what_it_started_and_cargo_is_not_tried() {
        // The compiler, and a process it started that holds its output open: both go at
        // the bound, so the run ends (an endless `const` keeps rustc busy the same way).
        let limits = CompileLimits {
            time: std::time::Duration::from_millis(500),
            ..CompileLimits::default()
        };
        let started = std::time::Instant::now();
        let ended = run(&recipe("sh", &["-c", "sleep 60 & sleep 60"]), &limits);
        assert_eq!(
            ended,
            Err(Unreplayed::Exceeded(Exceeded::Time(limits.time)))
        );
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "stopped at the bound, not at the end: {:?}",
            started.elapsed()
        );
    }

    #[test]
    fn a_compiler_that_prints_more_than_the_bound_goes_to_cargo_which_cuts_it() {
        let limits = CompileLimits {
            output: 1024,
            ..CompileLimits::default()
        };
        let warning = r#"{"$message_type":"diagnostic","level":"warning","rendered":"warning: w"}"#;
        let chatty = format!("for i in $(seq 200); do echo '{warning}' >&2; done");
        assert_eq!(
            run(&recipe("sh", &["-c", &chatty]), &limits),
            Err(Unreplayed::Cargo)
        );
    }
}

//! Building the learner's harness with cargo, one lesson at a time.
//!
//! The grader binary never links the practice crate: when the learner's file does not
//! compile, every command that does not need it keeps working. The harness is built with
//! one lesson's feature, which compiles only that lesson's file, so a half-written file of
//! another lesson never blocks this one.
//!
//! cargo copies a built binary to one shared path (`target/debug/practice-harness`), which
//! another build — another lesson, another copy of the kit sharing the target folder — can
//! overwrite at any moment. So the build and a private link of its binary happen under one
//! lock, and the checks run the private link.
//!
//! Three ways to a harness, fastest first: the last one, when nothing it was built from
//! changed (no compiler at all); when only the learner's code changed, one compiler run by
//! the grader itself, which makes the practice crate a library for a harness that loads it
//! (`replay`); cargo, which links the practice crate into the harness.

use crate::bounded::{run_bounded, Clock, Kept, Line};
pub use crate::bounded::{CompileLimits, Exceeded, COMPILE_TIMEOUT_VAR};
use crate::cache;
use crate::replay::{self, Recipe};
use crate::workspace::target_dir;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use thiserror::Error;

/// The cargo package that runs the checks on the practice crate (see `grader/harness`).
pub(crate) const PRACTICE_HARNESS: &str = "practice-harness";

/// The learner's crate.
pub(crate) const PRACTICE: &str = "practice";

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
    /// The learner's code (or the kit) does not compile; the compiler's messages were shown.
    #[error("the practice crate does not compile")]
    Compile {
        /// The compiler's error messages, as text.
        errors: Vec<String>,
    },
    /// The learner's code can be built only linked into a harness (no library of it, to
    /// load once the check is sandboxed, can be built here), and the build demands one.
    #[error(
        "this system cannot build the learner's code as a library the sandboxed checks load, \
         and grading needs one (Linux, and a compiler whose commands the kit can read)"
    )]
    NotLoadable,
    /// cargo succeeded but named no executable.
    #[error("cargo built {PRACTICE_HARNESS} but reported no executable")]
    NoExecutable,
    /// A submission's confined compile found the copy not built for this state of the kit
    /// (no recipe for it), or ended in a way the grader cannot read: the kit's fault, never
    /// the submission's.
    #[error("the grading copy's build of the kit is out of date: {what}")]
    KitNotBuilt {
        /// What showed it.
        what: String,
    },
    /// The built binary could not be given a private path.
    #[error("cannot keep a private copy of the harness in {dir}: {source}")]
    Private {
        /// The folder the copy was to go in.
        dir: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
}

/// A harness built for one lesson.
#[derive(Debug)]
pub struct Built {
    /// The executable: a private link, valid as long as this value lives.
    pub(crate) executable: PathBuf,
    /// The learner's library the executable loads, when it is a loading harness (see
    /// [`replay`]): a private link too. `None` when the learner's code is linked in.
    pub(crate) library: Option<PathBuf>,
    /// The runner the executable starts for the learner's code, beside a loading harness
    /// ([`replay::runner_of`]): a private link too.
    pub(crate) runner: Option<PathBuf>,
    /// rustc's dep-info for the practice crate: every source file compiled into it.
    pub(crate) practice_dep_info: Option<PathBuf>,
    _private: crate::scratch::Scratch,
}

impl Built {
    /// A launcher for the checks of this build: its executable, told where the learner's
    /// library is when it loads one. A harness with the learner's crate linked in is
    /// confined from `exec` on and never serves forks (see
    /// [`Launcher::learner_linked`](crate::Launcher::learner_linked)).
    pub(crate) fn launcher(&self) -> crate::Launcher {
        launcher_for(
            &self.executable,
            self.library.as_deref(),
            self.runner.as_deref(),
        )
    }
}

/// [`Built::launcher`] of a build with these files.
fn launcher_for(
    executable: &Path,
    library: Option<&Path>,
    runner: Option<&Path>,
) -> crate::Launcher {
    let launcher = crate::Launcher::new(executable);
    match library {
        // The loading harness runs the learner's code only in a check's own process, after
        // its limits are set: a fork server of it runs none.
        Some(library) => {
            let launcher = launcher.env(grader_checks::library::LIBRARY_VAR, library);
            match runner {
                Some(runner) => launcher.env(kit_runner::remote::PROGRAM_VAR, runner),
                None => launcher,
            }
        }
        // The learner's crate is linked in: its code could run before `main`.
        None => crate::Launcher {
            learner_linked: true,
            ..launcher
        },
    }
}

#[derive(Deserialize)]
struct Message {
    reason: String,
    #[serde(default)]
    package_id: Option<String>,
    #[serde(default)]
    target: Option<Target>,
    #[serde(default)]
    executable: Option<PathBuf>,
    #[serde(default)]
    filenames: Vec<PathBuf>,
    #[serde(default)]
    success: Option<bool>,
    #[serde(default)]
    message: Option<Diagnostic>,
}

#[derive(Deserialize)]
struct Target {
    name: String,
}

#[derive(Deserialize)]
struct Diagnostic {
    level: String,
    #[serde(default)]
    rendered: Option<String>,
}

/// The cargo to run: the one that started us when there is one.
pub(crate) fn cargo_program() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string())
}

/// Where a kit's harness is built, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildPlace {
    /// The kit's folder (the workspace root).
    pub(crate) root: PathBuf,
    /// The target folder cargo writes to.
    pub(crate) target: PathBuf,
    /// Whether the learner's crate and the harness keep incremental compilation data: worth
    /// it for a learner's edit and rerun; for a batch of different submissions only disk
    /// (up to 180 MB a copy), and a compiler crash caused by an earlier submission's data
    /// would pass for this one's compile error. (The kit's own crates keep cargo's setting,
    /// so a copy seeded from the kit's build finds them up to date.)
    pub(crate) learner_incremental: bool,
    /// Whether cargo's own standard error (`error: could not compile …`) reaches ours; the
    /// compiler's messages are read from cargo's JSON either way.
    pub(crate) cargo_stderr: bool,
    /// Whether the harness is linked without debug information: a faster link (a tenth of
    /// a grading build), and nothing is lost, since a check reports where the learner's code
    /// panicked from the panic itself.
    pub(crate) strip_debuginfo: bool,
    /// The bounds the compiler runs under.
    pub(crate) limits: CompileLimits,
    /// Whether the checks must run in a harness that loads the learner's code once it is
    /// sandboxed (a replayed build), never in one that cargo linked it into: there, code of
    /// the learner's that runs before `main` (a constructor) runs before the job has read its
    /// token, and could write a report of its own. A learner's own run may take cargo's
    /// harness when no library can be built; a class's grade may not.
    pub(crate) loaded_only: bool,
    /// Fork servers to start while the compiler runs, for the checks that follow the build
    /// ([`Prestart`]); none when `None`.
    pub(crate) prestart: Option<Prestart>,
}

/// The fork servers a build starts while its compiler runs, on the thread that builds (a
/// server ends with the thread that started it): that thread then runs the checks, whose
/// sessions take the servers ready, each with its runner zygote (`child::prestart`).
/// Started only for a replayed build (the kit did not change since its recipe was made):
/// the recipe's harness and runner, which that build keeps, are linked into the build's
/// private folder before the compile, and the learner's library is linked there after it,
/// under the name the servers were given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Prestart {
    /// How many: as many as the checks will run at once.
    pub(crate) servers: usize,
    /// The limits the checks will run under.
    pub(crate) limits: grader_checks::limits::Limits,
}

impl BuildPlace {
    /// The kit at `root`, building where cargo would for it ([`target_dir`]).
    pub(crate) fn kit(root: &Path) -> BuildPlace {
        BuildPlace {
            root: root.to_path_buf(),
            target: target_dir(root),
            learner_incremental: true,
            cargo_stderr: true,
            strip_debuginfo: false,
            limits: CompileLimits::from_env(),
            loaded_only: false,
            prestart: None,
        }
    }

    /// A copy of the kit at `root` that builds into its own `root/target`, whatever
    /// `CARGO_TARGET_DIR` says: cargo names a path crate's artifacts after its path inside
    /// the workspace, so copies sharing a target folder could run each other's builds.
    pub fn isolated(root: &Path) -> BuildPlace {
        BuildPlace {
            root: root.to_path_buf(),
            target: root.join("target"),
            learner_incremental: false,
            cargo_stderr: false,
            strip_debuginfo: true,
            limits: CompileLimits::from_env(),
            loaded_only: true,
            prestart: None,
        }
    }

    /// The folder of the build cache.
    pub(crate) fn cache_dir(&self) -> PathBuf {
        self.target.join(cache::CACHE_DIR)
    }
}

/// Builds the harness of the kit at `root` for `lesson` and returns a private link to
/// its executable. The compiler's messages are written to `messages` as cargo renders them
/// (with colour when `color` is on).
pub(crate) fn build_harness(
    root: &Path,
    lesson: &str,
    color: bool,
    messages: &mut dyn Write,
) -> Result<Built, BuildError> {
    build_harness_at(&BuildPlace::kit(root), lesson, color, messages)
}

/// [`build_harness`], starting fork servers for the checks while the compiler runs
/// ([`Prestart`]).
pub(crate) fn build_harness_prestarting(
    root: &Path,
    lesson: &str,
    color: bool,
    messages: &mut dyn Write,
    prestart: Prestart,
) -> Result<Built, BuildError> {
    let place = BuildPlace {
        prestart: Some(prestart),
        ..BuildPlace::kit(root)
    };
    build_harness_at(&place, lesson, color, messages)
}

/// Waits for, then holds until dropped, the lock the grader takes around every build into
/// `target` (so that two graders never build into one folder at once, and nothing copies a
/// build while one is under way).
pub fn lock_builds(target: &Path) -> std::io::Result<File> {
    std::fs::create_dir_all(target)?;
    let lock = File::create(target.join("kit-build.lock"))?;
    lock.lock()?;
    Ok(lock)
}

/// `build_harness` at a given [`BuildPlace`].
pub fn build_harness_at(
    place: &BuildPlace,
    lesson: &str,
    color: bool,
    messages: &mut dyn Write,
) -> Result<Built, BuildError> {
    let (root, target) = (place.root.as_path(), place.target.clone());
    let cache_dir = place.cache_dir();
    let private_err = |source| BuildError::Private {
        dir: target.clone(),
        source,
    };
    let lock = lock_builds(&target).map_err(private_err)?;
    // Nothing changed since the last build of this lesson: no cargo at all.
    let (fingerprint, key) = cache::fingerprints(root, lesson);
    let fast = crate::fast::FastPaths::from_env();
    if let Some(entry) = &cache::load::<BuildEntry>(&cache_dir, &entry_name(lesson)) {
        // A replayed build is not kept for a run that does not replay.
        let present = (fast.replay || entry.library.is_none())
            && entry.executable.is_file()
            && (entry.library.is_none() || entry.runner.as_ref().is_some_and(|r| r.is_file()))
            && entry
                .library
                .as_ref()
                .is_none_or(|library| library.is_file());
        if entry.fingerprint == fingerprint && present {
            crate::check_input::prepare(lesson, &cache_dir, false).wait();
            for text in &entry.messages {
                let _ = write!(messages, "{text}");
            }
            return private_copy(&target, entry, None);
        }
    }
    // The compiler runs from here on and leaves a core free: the checks' input is made now
    // (if it was never kept), if the command will run the check that reads it.
    let input = crate::check_input::prepare(lesson, &cache_dir, true);
    // Only the learner's code changed since cargo last showed its commands: run them.
    let recipe_name = format!("replay-{lesson}.json");
    let kept = cache::load::<Recipe>(&cache_dir, &recipe_name);
    let misfit = match &kept {
        _ if !fast.replay => Some("the fast paths are off (GRADER_FAST_PATHS=off)"),
        None => Some("no recipe kept yet: cargo builds this once, and one is made"),
        Some(r) => replay::misfit(r, &key, root, &target, color),
    };
    // A submission's confined build (`grade`) never runs cargo on its code: cargo's build
    // reads the kit's compiled crates (the reference's among them), which the submission's
    // compile may not. Its library is built by the recipe alone, which the copy's own build
    // of the kit's files made (`grade`'s `prepare_slot`), whatever the fast paths say.
    if place.limits.confine {
        let recipe = kept
            .filter(|r| replay::fits(r, &key, root, &target, color))
            .ok_or_else(|| BuildError::KitNotBuilt {
                what: "it has no recipe for this state of the kit".to_string(),
            })?;
        let harness = match replay::run(&recipe, &place.limits) {
            Ok(done) => {
                if let Some(new) = &done.new_recipe {
                    cache::store(&cache_dir, &recipe_name, new);
                }
                replayed_entry(done, fingerprint, color, messages)
            }
            Err(replay::Unreplayed::Exceeded(exceeded)) => {
                let text = exceeded.message();
                let _ = write!(messages, "{text}");
                return Err(BuildError::Compile { errors: vec![text] });
            }
            Err(replay::Unreplayed::Errors(errors)) => {
                // The compiler renders in colour for cargo, which takes it out itself.
                let errors: Vec<String> = if color {
                    errors
                } else {
                    errors.iter().map(|e| strip_ansi(e)).collect()
                };
                for text in &errors {
                    let _ = write!(messages, "{text}");
                }
                return Err(BuildError::Compile { errors });
            }
            Err(replay::Unreplayed::Cargo) => {
                return Err(BuildError::KitNotBuilt {
                    what: "its compile of the submission ended in a way it cannot read".to_string(),
                })
            }
        };
        input.wait();
        let built = private_copy(&target, &keep(&cache_dir, lesson, harness), None);
        drop(lock);
        return built;
    }
    let recipe = kept.filter(|_| misfit.is_none());
    // While the compiler runs, the checks' fork servers start, with the harness and runner
    // the replayed build keeps, in the private folder the build will have.
    let early = match (place.prestart, &recipe) {
        (Some(prestart), Some(recipe)) if fast.fork => {
            let early = Early::start(&target, lesson, &recipe.harness, prestart);
            if early.is_none() {
                crate::fast::not_taken(
                    "prestart",
                    "the build's private folder could not be made before the compile",
                );
            }
            early
        }
        (Some(_), None) => {
            crate::fast::not_taken("prestart", "there is no replayed build to start from");
            None
        }
        _ => None,
    };
    let replayed = match &recipe {
        Some(recipe) => replay::run(recipe, &place.limits).inspect(|done| {
            if let Some(new) = &done.new_recipe {
                cache::store(&cache_dir, &recipe_name, new);
            }
        }),
        None => {
            crate::fast::not_taken("replay", misfit.unwrap_or("no recipe"));
            Err(replay::Unreplayed::Cargo)
        }
    };
    if recipe.is_some() && matches!(replayed, Err(replay::Unreplayed::Cargo)) {
        crate::fast::not_taken(
            "replay",
            "the replayed compile did not end as cargo's would: cargo builds it",
        );
    }
    let harness = match replayed {
        Err(replay::Unreplayed::Exceeded(exceeded)) => {
            let text = exceeded.message();
            let _ = write!(messages, "{text}");
            return Err(BuildError::Compile { errors: vec![text] });
        }
        // Only a confined build's compile keeps its errors, and it returned above.
        Err(replay::Unreplayed::Errors(errors)) => {
            for text in &errors {
                let _ = write!(messages, "{text}");
            }
            return Err(BuildError::Compile { errors });
        }
        Ok(done) => replayed_entry(done, fingerprint, color, messages),
        Err(replay::Unreplayed::Cargo) => {
            let cargo = cargo_program();
            let built = build_with_cargo(place, lesson, color, &cargo, fingerprint, messages)?;
            // A recipe is made once per kit state; where none can be (no unix, a compiler
            // this cannot read), that is remembered too, so cargo runs once per build.
            let unmade_name = format!("no-replay-{lesson}.json");
            let tried = cache::load::<cache::Fingerprint>(&cache_dir, &unmade_name);
            if (fast.replay || place.loaded_only)
                && recipe.is_none()
                && tried.as_ref() != Some(&key)
            {
                let made = show_commands(place, lesson, color, &cargo).and_then(|steps| {
                    replay::make(
                        &steps,
                        key.clone(),
                        (root, &target),
                        color,
                        &cache_dir,
                        &place.limits,
                    )
                });
                match made {
                    Some(recipe) => cache::store(&cache_dir, &recipe_name, &recipe),
                    None => cache::store(&cache_dir, &unmade_name, &key),
                }
            }
            // cargo's build showed the compiler's messages; the checks run on the library,
            // in a runner, when there is a recipe for it: always for a class's grade, and
            // for a learner's run with the fast paths on (else in cargo's harness).
            let recipe = (place.loaded_only || fast.replay)
                .then(|| cache::load::<Recipe>(&cache_dir, &recipe_name))
                .flatten()
                .filter(|r| replay::fits(r, &key, root, &target, color));
            match recipe.map(|recipe| replay::run(&recipe, &place.limits)) {
                Some(Ok(done)) => BuildEntry {
                    // cargo built this one; the grader then built the library it loads.
                    replayed: false,
                    ..replayed_entry(done, built.fingerprint, false, &mut std::io::sink())
                },
                Some(Err(replay::Unreplayed::Exceeded(exceeded))) => {
                    return Err(BuildError::Compile {
                        errors: vec![exceeded.message()],
                    })
                }
                Some(Err(replay::Unreplayed::Errors(errors))) => {
                    return Err(BuildError::Compile { errors })
                }
                Some(Err(replay::Unreplayed::Cargo)) if place.loaded_only => {
                    return Err(BuildError::Compile {
                        errors: vec![NOT_AS_LOADED.to_string()],
                    })
                }
                None if place.loaded_only => return Err(BuildError::NotLoadable),
                Some(Err(replay::Unreplayed::Cargo)) | None => built,
            }
        }
    };
    // The checks' input read while the compiler ran: ready before any check starts.
    input.wait();
    let built = private_copy(&target, &keep(&cache_dir, lesson, harness), early);
    drop(lock);
    built
}

/// Why a learner's file that cargo compiled is not graded: the build the checks load did
/// not compile (only code that tells the two builds apart, `cfg(kit_glue)`, does that).
const NOT_AS_LOADED: &str = "the file compiles in a plain build, but not as the grader \
    builds it for its checks (with `--cfg kit_glue`): a lesson file has no reason to tell \
    the two apart";

/// What the cache keeps of a replayed build, with its warnings written to `messages`.
fn replayed_entry(
    done: replay::Replayed,
    fingerprint: cache::Fingerprint,
    color: bool,
    messages: &mut dyn Write,
) -> BuildEntry {
    // cargo asks rustc for colour always, and takes it out itself when asked to.
    let warnings: Vec<String> = if color {
        done.warnings
    } else {
        done.warnings.iter().map(|w| strip_ansi(w)).collect()
    };
    for text in &warnings {
        let _ = write!(messages, "{text}");
    }
    BuildEntry {
        fingerprint,
        executable: done.executable,
        dep_info: rustc_dep_info(&done.library),
        library: Some(done.library),
        runner: Some(done.runner),
        messages: warnings,
        replayed: true,
    }
}

/// Builds the harness with cargo, writing the compiler's messages about the learner's code
/// (and any error) to `messages`; what was built, as the cache will remember it. The build
/// runs under `place.limits`: the clock runs while cargo compiles the learner's crate, and
/// again while it compiles the harness that links it (cargo says when each starts); at most
/// [`CompileLimits::output`] bytes of messages are kept.
fn build_with_cargo(
    place: &BuildPlace,
    lesson: &str,
    color: bool,
    cargo: &str,
    fingerprint: cache::Fingerprint,
    messages: &mut dyn Write,
) -> Result<BuildEntry, BuildError> {
    let mut command = cargo_build(place, lesson, color, cargo);
    if place.limits.confine {
        crate::bounded::confine(&mut command, &place.root, &place.target);
    }
    if color && place.cargo_stderr {
        // Its standard error is a pipe now: cargo's own messages keep their colour.
        command.arg("--color=always");
    }
    let mut executable = None;
    let mut dep_info = None;
    let mut success = false;
    let mut errors = Vec::new();
    let mut shown = Vec::new();
    let mut kept = Kept::new(place.limits.output);
    let mut harness_started = false;
    let ended = run_bounded(&mut command, &place.limits, false, |line| match line {
        Line::Err(bytes) => {
            // cargo's status lines (`   Compiling practice v0.1.0 (…)`) say when a crate's
            // compile starts; its other lines are what `--quiet` would have shown.
            let text = String::from_utf8_lossy(&bytes);
            let plain = strip_ansi(&text);
            match status_line(&plain) {
                Some(("Compiling", what)) if what.starts_with(&format!("{PRACTICE_HARNESS} v")) => {
                    harness_started = true;
                    Clock::Start
                }
                Some(("Compiling", what)) if what.starts_with(&format!("{PRACTICE} v")) => {
                    Clock::Start
                }
                Some(_) => Clock::Keep,
                // cargo's own summary of a failed build: the kit's message says it.
                None if is_cargo_summary(&plain) => Clock::Keep,
                None => {
                    if place.cargo_stderr && kept.take(text.len() + 1) {
                        eprintln!("{text}");
                    }
                    Clock::Keep
                }
            }
        }
        Line::Out(bytes) => {
            let Ok(message) = serde_json::from_slice::<Message>(&bytes) else {
                return Clock::Keep;
            };
            let target_name = message.target.as_ref().map(|t| t.name.as_str());
            match message.reason.as_str() {
                "compiler-artifact" if target_name == Some(PRACTICE_HARNESS) => {
                    executable = message.executable.or(executable.take());
                }
                "compiler-artifact" if target_name == Some(PRACTICE) => {
                    dep_info = message.filenames.iter().find_map(|f| rustc_dep_info(f));
                    // The learner's crate is built; the kit's crates the harness waits for
                    // are not the learner's time.
                    if !harness_started {
                        return Clock::Stop;
                    }
                }
                "compiler-message" => {
                    let Some(diagnostic) = message.message else {
                        return Clock::Keep;
                    };
                    // Warnings of the kit's own crates are the kit's business.
                    let learners = message
                        .package_id
                        .as_deref()
                        .is_some_and(is_practice_package);
                    if let Some(text) = diagnostic.rendered {
                        let error = diagnostic.level == "error";
                        // The kit's call of the learner's function does not compile: its
                        // lines are the kit's, not the learner's; the failure says which
                        // signature to keep instead (see `is_glue_error`).
                        if error && is_glue_error(&strip_ansi(&text)) {
                            errors.push(text);
                            return Clock::Keep;
                        }
                        // The first error is kept whatever its size: it is the gist.
                        let wanted = learners || error;
                        if wanted && (kept.take(text.len()) || (error && errors.is_empty())) {
                            let _ = write!(messages, "{text}");
                            shown.push(text.clone());
                            if error {
                                errors.push(text);
                            }
                        }
                    }
                }
                "build-finished" => success = message.success.unwrap_or(false),
                _ => {}
            }
            Clock::Keep
        }
        Line::Cut(len) => {
            kept.lose(len);
            Clock::Keep
        }
    })
    .map_err(|source| BuildError::Cargo {
        cargo: cargo.to_string(),
        source,
    })?;
    if let Some(more) = kept.more() {
        let _ = write!(messages, "{more}");
        shown.push(more.clone());
        errors.push(more);
    }
    if let Some(exceeded) = ended.exceeded {
        let text = exceeded.message();
        let _ = write!(messages, "{text}");
        // The learner's errors, when there are some, are the gist: the crate did not compile
        // whatever cargo was still waiting for when the clock ran out.
        match exceeded {
            Exceeded::Time(_) if !errors.is_empty() => errors.push(text),
            _ => errors.insert(0, text),
        }
        return Err(BuildError::Compile { errors });
    }
    if !ended.status.success() || !success {
        return Err(BuildError::Compile { errors });
    }
    Ok(BuildEntry {
        fingerprint,
        executable: executable.ok_or(BuildError::NoExecutable)?,
        library: None,
        runner: None,
        dep_info,
        messages: shown,
        replayed: false,
    })
}

/// Whether a compiler error is in the kit's glue around the learner's function (the harness
/// that calls it, or `practice/src/root.rs`): the learner's file compiled, and the kit's call
/// of the function did not, because its signature is not the stub's.
pub(crate) fn is_glue_error(rendered: &str) -> bool {
    rendered
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("--> "))
        .is_some_and(|at| {
            let at = at.replace('\\', "/");
            at.starts_with("grader/harness/")
                || at.contains("/grader/harness/")
                || at.starts_with("practice/src/root.rs")
                || at.contains("/practice/src/root.rs")
        })
}

/// cargo's own lines about a build that failed (`error: could not compile …`, `warning: build
/// failed, waiting for other jobs to finish...`): they add nothing to the kit's message.
fn is_cargo_summary(line: &str) -> bool {
    line.starts_with("error: could not compile")
        || line.starts_with("warning: build failed, waiting for other jobs")
}

/// A cargo status line (`   Compiling practice v0.1.0 (/k/practice)`) as its word and the
/// rest; `None` for any other line (an error, a warning, a note).
fn status_line(line: &str) -> Option<(&str, &str)> {
    if !line.starts_with(' ') {
        return None;
    }
    let (word, rest) = line.trim_start().split_once(' ')?;
    let is_status = word.starts_with(|c: char| c.is_ascii_uppercase())
        && word.chars().all(|c| c.is_ascii_alphabetic());
    is_status.then_some((word, rest))
}

/// `cargo build` of `lesson`'s harness at `place`, its messages as JSON on standard
/// output; the caller adds how verbose.
fn cargo_build(place: &BuildPlace, lesson: &str, color: bool, cargo: &str) -> Command {
    let mut command = Command::new(cargo);
    command
        .arg("build")
        .args(["--package", PRACTICE_HARNESS])
        .args(["--features", &format!("{PRACTICE_HARNESS}/{lesson}")]);
    // The launcher's `cargo build -p kit-grader` resolved the shared crates' features for the
    // command line alone; building the harness alone would resolve some differently (the grader's dependencies
    // enable more) and compile kit-types, reference and the checks a second time. With the
    // grader selected too, the features are the grader's: in the kit those crates are
    // already built, and a copy seeded from the kit's build (see `seed`) reuses them. Only
    // the harness's binary is built: the grader itself is not needed (and in a copy, whose
    // profile strips debug info, it would be compiled again).
    command.args(["--package", "kit-grader", "--bin", PRACTICE_HARNESS]);
    if !place.learner_incremental {
        for package in ["practice", PRACTICE_HARNESS] {
            command.args([
                "--config",
                &format!("profile.dev.package.{package}.incremental=false"),
            ]);
        }
    }
    if place.strip_debuginfo {
        // Only links read it; in the kit's own folder it would change the profile the
        // grader was built with, and rebuild the shared crates.
        command.env("CARGO_PROFILE_DEV_STRIP", "debuginfo");
    }
    command
        .arg(if color {
            "--message-format=json-diagnostic-rendered-ansi"
        } else {
            "--message-format=json"
        })
        .arg("--manifest-path")
        .arg(place.root.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", &place.target);
    command
}

/// The compiler commands cargo runs for the practice crate and the harness, as it shows
/// them, for a [`replay::Recipe`]. cargo shows only what it compiles, so its record of the
/// practice crate is removed first: it compiles the crate and the harness once more (a
/// fraction of a second, once per state of the kit). `None` when that build fails or its
/// commands cannot be read; the grader then goes on using cargo.
fn show_commands(
    place: &BuildPlace,
    lesson: &str,
    color: bool,
    cargo: &str,
) -> Option<[replay::Step; 2]> {
    let records = place.target.join("debug/.fingerprint");
    for entry in std::fs::read_dir(&records).ok()?.filter_map(Result::ok) {
        let name = entry.file_name();
        let is_practice = name
            .to_str()
            .and_then(|n| n.strip_prefix("practice-"))
            .is_some_and(|hash| hash.len() == 16 && hash.chars().all(|c| c.is_ascii_hexdigit()));
        if is_practice {
            std::fs::remove_dir_all(entry.path()).ok()?;
        }
    }
    // The learner's crate compiled just now, so this compiles it again within its bounds;
    // the clock runs from the start all the same, and a bound reached means no recipe.
    let mut stderr = Vec::new();
    let mut kept = Kept::new(SHOWN_COMMANDS_KEPT);
    let mut command = cargo_build(place, lesson, color, cargo);
    if place.limits.confine {
        crate::bounded::confine(&mut command, &place.root, &place.target);
    }
    let ended = run_bounded(command.arg("-vv"), &place.limits, true, |line| {
        match line {
            Line::Err(bytes) if kept.take(bytes.len() + 1) => {
                stderr.extend_from_slice(&bytes);
                stderr.push(b'\n');
            }
            Line::Err(_) | Line::Cut(_) => kept.lose(1),
            Line::Out(_) => {}
        }
        Clock::Keep
    })
    .ok()?;
    if !ended.status.success() || ended.exceeded.is_some() || kept.more().is_some() {
        return None;
    }
    replay::steps_from_cargo(&String::from_utf8_lossy(&stderr))
}

/// The most of `cargo build -vv`'s standard error read for a recipe: its two compiler runs
/// and a line per crate it found up to date take a few dozen KiB.
const SHOWN_COMMANDS_KEPT: usize = 4 << 20;

/// The programs and library a build keeps in the cache ([`keep`]), by the names they have
/// there and in a build's private folder ([`Early`]).
#[derive(Debug, Clone, Copy)]
enum KeptFile {
    Harness,
    Runner,
    Library,
}

impl KeptFile {
    /// The file's name for `lesson`.
    fn name(self, lesson: &str) -> String {
        match self {
            KeptFile::Harness => format!("harness-{lesson}"),
            KeptFile::Runner => format!("runner-{lesson}"),
            KeptFile::Library => format!("learner-{lesson}.so"),
        }
    }
}

/// Keeps the harness `built` (and the learner's library it loads) for the next run with
/// nothing changed: files of their own in the cache, which no other build overwrites,
/// recorded with what they were built from. What was kept, or `built` itself where it could
/// not be kept (which only costs time later).
fn keep(cache_dir: &Path, lesson: &str, built: BuildEntry) -> BuildEntry {
    let kept = |from: &Path, name: String, copy: bool| -> Option<PathBuf> {
        let to = cache_dir.join(name);
        std::fs::create_dir_all(cache_dir).ok()?;
        let _ = std::fs::remove_file(&to);
        // The library is copied: the compiler may write its next one over the same file,
        // which must not change under a check that has it loaded.
        let linked = !copy && std::fs::hard_link(from, &to).is_ok();
        if !linked {
            std::fs::copy(from, &to).ok()?;
        }
        Some(to)
    };
    // The entry goes first: a half-kept build must never be found under the old one's
    // fingerprint.
    let _ = std::fs::remove_file(cache_dir.join(entry_name(lesson)));
    let Some(executable) = kept(&built.executable, KeptFile::Harness.name(lesson), false) else {
        return built;
    };
    let library = match &built.library {
        Some(library) => match kept(library, KeptFile::Library.name(lesson), true) {
            Some(library) => Some(library),
            None => return built,
        },
        None => None,
    };
    let runner = match &built.runner {
        Some(runner) => match kept(runner, KeptFile::Runner.name(lesson), false) {
            Some(runner) => Some(runner),
            None => return built,
        },
        None => None,
    };
    // The compiler's list of the files it read for this build: copied, because the next
    // compile in this folder (one that fails too, which keeps no entry) writes over the
    // original, and what a cached build is checked against must be what built it.
    let dep_info = match &built.dep_info {
        Some(dep_info) => match kept(dep_info, format!("dep-info-{lesson}.d"), true) {
            Some(dep_info) => Some(dep_info),
            None => return built,
        },
        None => None,
    };
    let entry = BuildEntry {
        executable,
        library,
        runner,
        dep_info,
        ..built
    };
    cache::store(cache_dir, &entry_name(lesson), &entry);
    entry
}

/// Removes what earlier builds in `place` made of a learner's code: the practice crate's
/// compiled files (`target/debug/deps/*practice-*`, its fingerprints), the cached libraries and
/// build entries of every lesson, and the harness copies made from them. The kit's own
/// crates stay built, so the next build compiles only the learner's crate (and links the
/// harness). For `grade`, between two submissions in one grading copy.
pub(crate) fn forget_learners_builds(place: &BuildPlace) {
    let debug = place.target.join("debug");
    let is_learners = |name: &str| {
        name.starts_with("practice-")
            || name.starts_with("libpractice-")
            || name.starts_with("libpractice.")
            || name.starts_with("practice_harness")
    };
    for dir in [
        debug.join("deps"),
        debug.join(".fingerprint"),
        debug.clone(),
    ] {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            if !name.to_str().is_some_and(is_learners) {
                continue;
            }
            let path = entry.path();
            let _ = if path.is_dir() {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            };
        }
    }
    let cache = place.cache_dir();
    if let Ok(entries) = std::fs::read_dir(&cache) {
        for entry in entries.flatten() {
            let name = entry.file_name();
            let learners = name.to_str().is_some_and(|n| {
                n.starts_with("learner-") || n.starts_with("dep-info-") || n.starts_with("build-")
            });
            if learners {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
}

/// The cache entry of `lesson`'s last build.
fn entry_name(lesson: &str) -> String {
    format!("build-{lesson}.json")
}

/// The compiler's errors as plain text for a report, its first line the gist:
/// `does not compile: error: expected one of … (practice/src/lib.rs:1:25)`.
pub(crate) fn errors_text(errors: &[String]) -> String {
    let errors: Vec<String> = errors.iter().map(|e| strip_ansi(e)).collect();
    let Some(first) = errors.first() else {
        return "does not compile (the compiler gave no message)".to_string();
    };
    let mut lines = first.lines();
    let headline = lines.next().unwrap_or_default().trim();
    let location = lines
        .find_map(|l| l.trim().strip_prefix("--> "))
        .map(|at| format!(" ({at})"))
        .unwrap_or_default();
    format!(
        "does not compile: {headline}{location}\n\n{}",
        errors.join("\n")
    )
}

/// `text` without the terminal's colour codes (`ESC [ … m`).
pub(crate) fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// What the cache remembers of a lesson's last build.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct BuildEntry {
    fingerprint: cache::Fingerprint,
    executable: PathBuf,
    /// The learner's library, when the executable is a loading harness.
    #[serde(default)]
    library: Option<PathBuf>,
    /// The runner the loading harness starts for the learner's code.
    #[serde(default)]
    runner: Option<PathBuf>,
    dep_info: Option<PathBuf>,
    /// The compiler's messages about the learner's code, shown again on a cached run.
    messages: Vec<String>,
    /// Whether the grader ran the compiler itself ([`replay`]) and cargo did not run (after
    /// cargo's build, the grader may still build the library the checks load: not a replay).
    #[serde(default)]
    replayed: bool,
}

/// Whether the last build of `lesson` in the cache folder `cache_dir` ran the compiler
/// without cargo (`replay`); `None` when there is no record of one.
pub fn last_build_replayed(cache_dir: &Path, lesson: &str) -> Option<bool> {
    cache::load::<BuildEntry>(cache_dir, &entry_name(lesson)).map(|e| e.replayed)
}

/// A build's private folder made before its compile ([`Prestart`]): the replayed build's
/// harness and runner linked in, under the names the build keeps them by ([`keep`]), and the
/// name the learner's library will have there.
struct Early {
    private: crate::scratch::Scratch,
    executable: PathBuf,
    runner: PathBuf,
    library: PathBuf,
}

impl Early {
    /// Makes the folder for a replayed build of `lesson` whose harness is `harness` (the
    /// recipe's, which the build keeps: what the build would run anyway), and starts
    /// `prestart`'s fork servers for it. `None` when the folder cannot be made: the build
    /// goes on without.
    fn start(target: &Path, lesson: &str, harness: &Path, prestart: Prestart) -> Option<Early> {
        let private = crate::scratch::Scratch::new("kit-harness-", Some(target)).ok()?;
        let link = |file: &Path, name: String| -> Option<PathBuf> {
            let to = private.path().join(name);
            std::fs::hard_link(file, &to).ok()?;
            Some(to)
        };
        let executable = link(harness, KeptFile::Harness.name(lesson))?;
        let runner = link(&replay::runner_of(harness), KeptFile::Runner.name(lesson))?;
        let library = private.path().join(KeptFile::Library.name(lesson));
        let launcher =
            launcher_for(&executable, Some(&library), Some(&runner)).limits(prestart.limits);
        crate::child::prestart(&launcher, prestart.servers);
        Some(Early {
            private,
            executable,
            runner,
            library,
        })
    }

    /// The build `built` in this folder, its library linked in under the name the servers
    /// were given: when its harness and runner are the very files linked here (the same
    /// files, not only the same names). `None` otherwise, and the folder goes.
    fn finish(self, built: &BuildEntry) -> Option<Built> {
        let (Some(library), Some(runner)) = (&built.library, &built.runner) else {
            return None;
        };
        let fits = same_file(&self.executable, &built.executable)
            && same_file(&self.runner, runner)
            && library.file_name() == self.library.file_name();
        if !fits {
            return None;
        }
        link_or_copy(library, &self.library).ok()?;
        Some(Built {
            executable: self.executable,
            library: Some(self.library),
            runner: Some(self.runner),
            practice_dep_info: built.dep_info.clone(),
            _private: self.private,
        })
    }
}

/// Makes `to` a hard link to `from`, or a copy where a link cannot be made.
fn link_or_copy(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::hard_link(from, to).or_else(|_| std::fs::copy(from, to).map(|_| ()))
}

/// Whether two paths name one file (the same device and inode).
fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (std::fs::metadata(a), std::fs::metadata(b)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (a, b);
        false
    }
}

/// Private links to what `built` names (in a folder of their own under the target folder),
/// valid as long as the returned value lives; in `early`'s folder when it fits
/// ([`Prestart`]).
fn private_copy(
    target: &Path,
    built: &BuildEntry,
    early: Option<Early>,
) -> Result<Built, BuildError> {
    let private_err = |source| BuildError::Private {
        dir: target.to_path_buf(),
        source,
    };
    if let Some(early) = early {
        match early.finish(built) {
            Some(built) => return Ok(built),
            None => crate::fast::not_taken(
                "prestart",
                "this build's harness is not the last one's: the servers started for it go",
            ),
        }
    }
    let private =
        crate::scratch::Scratch::new("kit-harness-", Some(target)).map_err(private_err)?;
    let link = |file: &Path, fallback: &str| -> std::io::Result<PathBuf> {
        let name = file
            .file_name()
            .unwrap_or_else(|| std::ffi::OsStr::new(fallback));
        let to = private.path().join(name);
        link_or_copy(file, &to)?;
        Ok(to)
    };
    let executable = link(&built.executable, PRACTICE_HARNESS).map_err(private_err)?;
    let library = match &built.library {
        Some(library) => Some(link(library, "libpractice.so").map_err(private_err)?),
        None => None,
    };
    let runner = match &built.runner {
        Some(runner) => Some(link(runner, replay::RUNNER_NAME).map_err(private_err)?),
        None => None,
    };
    Ok(Built {
        executable,
        library,
        runner,
        practice_dep_info: built.dep_info.clone(),
        _private: private,
    })
}

/// Makes the next build of `lesson` in `place` one by cargo: no build kept, no recipe
/// ([`forget_learners_builds`], and the lesson's recipe), so that cargo looks at every crate
/// again (and rebuilds what is out of date).
pub(crate) fn forget_builds_and_recipe(place: &BuildPlace, lesson: &str) {
    forget_learners_builds(place);
    let _ = std::fs::remove_file(place.cache_dir().join(format!("replay-{lesson}.json")));
}

/// Whether the kit copy of `place` holds a recipe for `lesson` made for the present state
/// of the kit ([`replay::fits`]): made by a build there since the kit last changed, so the
/// kit's own crates are built for it.
pub(crate) fn recipe_fits(place: &BuildPlace, lesson: &str) -> bool {
    let (_, key) = cache::fingerprints(&place.root, lesson);
    cache::load::<Recipe>(&place.cache_dir(), &format!("replay-{lesson}.json"))
        .is_some_and(|recipe| replay::fits(&recipe, &key, &place.root, &place.target, false))
}

/// Whether a cargo package id names the practice crate (`path+file:///…/practice#0.1.0`,
/// or the older `practice 0.1.0 (path+file:///…)`).
fn is_practice_package(id: &str) -> bool {
    id.starts_with("practice ")
        || id.contains("/practice#")
        || id.ends_with("/practice")
        || id.contains("#practice@")
}

/// `deps/practice-HASH.d` from one of the crate's artifacts (`deps/libpractice-HASH.rmeta`).
fn rustc_dep_info(artifact: &Path) -> Option<PathBuf> {
    let stem = artifact.file_stem()?.to_str()?;
    let hash = stem.strip_prefix("libpractice-")?;
    let dir = artifact.parent()?;
    let dir = if dir.ends_with("deps") {
        dir.to_path_buf()
    } else {
        dir.join("deps")
    };
    Some(dir.join(format!("practice-{hash}.d")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_harness_that_loads_the_learners_code_serves_forks() {
        let built = |library: Option<PathBuf>| Built {
            executable: PathBuf::from("/kit/harness"),
            runner: library.as_ref().map(|_| PathBuf::from("/kit/runner")),
            library,
            practice_dep_info: None,
            _private: crate::scratch::Scratch::new("compile-test-", None).unwrap(),
        };
        // Linked in, the learner's code could run before main, in the server.
        let linked = crate::Launcher {
            fork: true,
            ..built(None).launcher()
        };
        assert!(linked.learner_linked && !linked.serves_forks());
        let loading = built(Some(PathBuf::from("/kit/learner.so"))).launcher();
        assert!(!loading.learner_linked);
        let loading_fast = crate::Launcher {
            fork: true,
            ..loading.clone()
        };
        assert!(loading_fast.serves_forks());
        assert!(loading
            .envs
            .iter()
            .any(|(k, v)| k == grader_checks::library::LIBRARY_VAR && v == "/kit/learner.so"));
        assert!(loading
            .envs
            .iter()
            .any(|(k, v)| k == kit_runner::remote::PROGRAM_VAR && v == "/kit/runner"));
    }

    #[test]
    fn dep_info_sits_next_to_the_metadata() {
        let d = rustc_dep_info(Path::new("/t/debug/deps/libpractice-0123abcd.rmeta")).unwrap();
        assert_eq!(d, Path::new("/t/debug/deps/practice-0123abcd.d"));
        assert_eq!(rustc_dep_info(Path::new("/t/debug/libpractice.rlib")), None);
    }

    #[test]
    fn errors_text_leads_with_the_first_error_and_where_it_is() {
        let first = "\u{1b}[1m\u{1b}[31merror\u{1b}[0m: unclosed delimiter\n --> practice/src/lib.rs:1:25\n  |\n";
        let text = errors_text(&[first.to_string(), "error: aborting".to_string()]);
        assert_eq!(
            text.lines().next(),
            Some("does not compile: error: unclosed delimiter (practice/src/lib.rs:1:25)")
        );
        assert!(text.contains("error: aborting"));
        assert!(!text.contains('\u{1b}'), "no colour codes in a report");
    }

    #[test]
    fn cargos_status_lines_are_told_from_its_messages() {
        assert_eq!(
            status_line("   Compiling practice v0.1.0 (/k/practice)"),
            Some(("Compiling", "practice v0.1.0 (/k/practice)"))
        );
        assert_eq!(status_line("error: could not compile `practice`"), None);
        assert_eq!(status_line("  = note: see issue"), None);
        assert_eq!(status_line("  process didn't exit successfully"), None);
    }

    #[test]
    fn package_ids_of_both_spellings() {
        assert!(is_practice_package("path+file:///k/practice#0.1.0"));
        assert!(is_practice_package(
            "practice 0.1.0 (path+file:///k/practice)"
        ));
        assert!(!is_practice_package(
            "path+file:///k/grader/checks#grader-checks@0.1.0"
        ));
    }
}

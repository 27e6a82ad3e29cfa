//! The fast paths, behind one switch: compiling only the learner's crate after an edit (the
//! replayed compiler commands of `crate::replay`) and starting checks as forks of one
//! harness per thread (`crate::Session`), whose runners are forks of one runner zygote per
//! harness (`kit_runner`'s `zygote`); those harnesses and zygotes start while the compiler
//! runs (`compile::Prestart`). The launcher `cargo run -p grader` runs (`grader/launcher/`)
//! honours the same switch: with it off, cargo checks the command line's build before every
//! run, rather than the launcher's record of it. Each must give exactly what the slow path gives
//! (a test runs every lesson both ways); the switch turns both off, to compare, or where one
//! misbehaves.

/// The environment variable that turns the fast paths off: `off`. Anything else, or
/// nothing, leaves them on.
pub const FAST_PATHS_VAR: &str = "GRADER_FAST_PATHS";

/// Which fast paths a run may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FastPaths {
    /// After an edit, replay the compiler's commands for the learner's crate alone, loaded as
    /// a library by a harness built once; otherwise cargo builds a harness around it.
    pub(crate) replay: bool,
    /// Start each check as a fork of a fork server, and its runner as a fork of that
    /// server's runner zygote; otherwise each as a program of its own.
    pub(crate) fork: bool,
}

impl FastPaths {
    /// What [`FAST_PATHS_VAR`] allows.
    pub(crate) fn from_env() -> FastPaths {
        let on = std::env::var(FAST_PATHS_VAR).map_or(true, |v| v.trim() != "off");
        FastPaths {
            replay: on,
            fork: on,
        }
    }
}

/// Whether `-v` asked to hear why a fast path was not taken.
static VERBOSE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Turns on (or off) the notes that say why a fast path was not taken: the command line's `-v`.
pub(crate) fn set_verbose(on: bool) {
    VERBOSE.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// Says, under `-v`, how fast path `which` was taken, when there is more to it than yes
/// (how many of the fork servers started during a build served checks).
pub(crate) fn taken(which: &str, how: &str) {
    if VERBOSE.load(std::sync::atomic::Ordering::Relaxed) {
        eprintln!("note: fast path {which} taken: {how}");
    }
}

/// Says, under `-v`, that fast path `which` (`replay`, `fork`, `prestart`) was not taken
/// and why: the slow path gives the same results, only later, so this is never an error.
pub(crate) fn not_taken(which: &str, why: &str) {
    if !VERBOSE.load(std::sync::atomic::Ordering::Relaxed) {
        return;
    }
    // Once per reason: every check of a run may take the same slow path.
    static SAID: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let line = format!("note: fast path {which} not taken: {why}");
    let mut said = SAID
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if !said.contains(&line) {
        eprintln!("{line}");
        said.push(line);
    }
}

#[cfg(test)]
mod tests {
    /// The launcher cannot share this crate's code (it depends on nothing, for speed): it
    /// names the switch itself, and must name the same one.
    #[test]
    fn the_launcher_reads_the_same_switch() {
        let launcher = include_str!("../launcher/src/main.rs");
        let named = format!(
            "const FAST_PATHS_VAR: &str = \"{}\";",
            super::FAST_PATHS_VAR
        );
        assert!(
            launcher.contains(&named),
            "the launcher's switch is not {named}"
        );
    }
}

//! The data a lesson hands one of its checks on standard input ([`grader_checks::CheckInput`]:
//! build3's and stage8's exhaustive checks get the reference's run of every case), made once per state of
//! the kit's checks and reference, and kept on disk beside the build cache: it depends on
//! nothing the learner writes. A command that will run that check says so (`want`); the
//! build of the harness then loads it (`prepare`), or, the first time, makes it in the
//! background while the compiler runs and keeps it. Nothing is made for a run that compiles
//! nothing (its check would start before the input was ready, and the work would only
//! compete with the checks) nor for one that does not run the check (a scenario, a filter).

use grader_checks::lessons::LESSONS;
use grader_checks::CheckInput;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

/// One slot per lesson of [`LESSONS`], in its order: the input, once made.
static MADE: [OnceLock<Vec<u8>>; LESSONS.len()] = [const { OnceLock::new() }; LESSONS.len()];

/// One flag per lesson of [`LESSONS`]: whether this process will run the check that reads it.
static WANTED: [AtomicBool; LESSONS.len()] = [const { AtomicBool::new(false) }; LESSONS.len()];

/// `lesson`'s check input, and its place in [`MADE`] and [`WANTED`], if it has one.
fn entry(lesson: &str) -> Option<(CheckInput, usize)> {
    let i = LESSONS.iter().position(|g| g.name == lesson)?;
    Some((LESSONS[i].check_input?, i))
}

/// Says that this process will run the check that reads `lesson`'s input, so that the
/// next build of its harness makes it ([`prepare`]).
pub(crate) fn want(lesson: &str) {
    if let Some((_, i)) = entry(lesson) {
        WANTED[i].store(true, Ordering::SeqCst);
    }
}

/// Makes `lesson`'s check input ready, if it is wanted ([`want`]) and not ready yet:
/// read from `cache_dir` when it was kept there; otherwise, when `compiling` (the compiler
/// leaves a core free), made in a background thread and kept there. While `compiling`, a
/// kept input is read in the background too: the build waits for that ([`Started::wait`])
/// once its compiler is done, never for one being made.
pub(crate) fn prepare(lesson: &str, cache_dir: &Path, compiling: bool) -> Started {
    let Some((input, i)) = entry(lesson) else {
        return Started::Nothing;
    };
    if !WANTED[i].load(Ordering::SeqCst) {
        return Started::Nothing;
    }
    let kept = kept_file(cache_dir, lesson);
    load_or_make(&MADE[i], kept, input.make, compiling)
}

/// What [`prepare`] left running.
#[must_use = "a build waits for the input it is reading"]
pub(crate) enum Started {
    /// Nothing: the input was ready, read, not wanted, or not made for this run.
    Nothing,
    /// The kept input, being read: ready in milliseconds.
    Reading(std::thread::JoinHandle<()>),
    /// The input, being made and then kept: a check that starts before it is ready
    /// computes what it needs itself, so nothing waits for this (but the tests).
    Making(#[cfg_attr(not(test), allow(dead_code))] std::thread::JoinHandle<()>),
}

impl Started {
    /// Waits for a kept input being read (the check would otherwise make its own, which
    /// costs far more than the read); returns at once otherwise.
    pub(crate) fn wait(self) {
        if let Started::Reading(reading) = self {
            let _ = reading.join();
        }
    }
}

/// [`prepare`] for one input: `slot` filled from the file `kept` (in a thread when
/// `compiling`), or by `make` in a thread that then keeps what it made in that file.
fn load_or_make(
    slot: &'static OnceLock<Vec<u8>>,
    kept: PathBuf,
    make: fn() -> Vec<u8>,
    compiling: bool,
) -> Started {
    if slot.get().is_some() {
        return Started::Nothing;
    }
    if !compiling {
        read_into(slot, &kept);
        return Started::Nothing;
    }
    if kept.is_file() {
        // (Gone by the time it is read: the check makes its own.)
        return Started::Reading(std::thread::spawn(move || read_into(slot, &kept)));
    }
    Started::Making(std::thread::spawn(move || {
        let bytes = made_in(slot, make);
        if !bytes.is_empty() {
            keep(&kept, bytes);
        }
    }))
}

/// Fills `slot` from the file `kept`, when it can be read.
fn read_into(slot: &'static OnceLock<Vec<u8>>, kept: &Path) {
    if let Ok(bytes) = std::fs::read(kept) {
        let _ = slot.set(bytes);
    }
}

/// Where `lesson`'s input is kept in `cache_dir`: named after the state of the checks
/// and the reference it was made from ([`grader_checks::KIT_STATE`]), so an input made from
/// another state is never read.
fn kept_file(cache_dir: &Path, lesson: &str) -> PathBuf {
    cache_dir.join(format!("input-{lesson}-{}.bin", grader_checks::KIT_STATE))
}

/// Writes `bytes` to `file` whole or not at all ([`crate::cache::store_bytes`]); failing
/// only costs a later run the time to make it again. The inputs kept for other states of
/// the kit, which nothing reads any more, are removed.
fn keep(file: &Path, bytes: &[u8]) {
    let (Some(dir), Some(name)) = (file.parent(), file.file_name().and_then(|n| n.to_str())) else {
        return;
    };
    // `input-LESSON-STATE.bin`: the same lesson's files of another state.
    if let Some((same_lesson, _)) = name.rsplit_once('-') {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let other = entry.file_name();
            let other = other.to_string_lossy();
            if other != name
                && other.ends_with(".bin")
                && other
                    .rsplit_once('-')
                    .is_some_and(|(g, _)| g == same_lesson)
            {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
    crate::cache::store_bytes(dir, name, bytes);
}

/// What check `check` of `lesson` is handed on standard input: the lesson's input when
/// the lesson names this check and it has been made; empty otherwise. It never waits: a
/// check that starts before its input is ready computes what it needs itself, as it would
/// have without one, so preparing can only make a run faster.
pub fn for_check(lesson: &str, check: &str) -> &'static [u8] {
    match entry(lesson) {
        Some((input, i)) if input.check == check => MADE[i].get().map_or(&[], Vec::as_slice),
        _ => &[],
    }
}

/// `lesson`'s input (empty when it has none), made now if it is not made yet; waits
/// when it is being made.
pub fn made(lesson: &str) -> &'static [u8] {
    match entry(lesson) {
        Some((input, i)) => made_in(&MADE[i], input.make),
        None => &[],
    }
}

/// What `slot` holds, made by `make` first if it holds nothing yet.
fn made_in(slot: &'static OnceLock<Vec<u8>>, make: fn() -> Vec<u8>) -> &'static [u8] {
    // The kit's own code, but a panic here must not take the run down: without the input,
    // the check computes what it needs itself (and reports any kit bug there).
    slot.get_or_init(|| panic::catch_unwind(AssertUnwindSafe(make)).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_named_check_gets_the_input() {
        let build3 = grader_checks::lessons::lesson("build3").unwrap();
        let named = build3
            .check_input
            .expect("build3 hands its exhaustive check an input");
        let made = made("build3");
        let input = for_check("build3", named.check);
        assert_eq!(input, made);
        assert!(input.starts_with(b"kit build3 exhaustive reference digests"));
        assert!(grader_checks::lessons::build3::exhaustive::decode_digests(input).is_some());
        assert!(for_check("build3", "fixtures::third_attempt_success").is_empty());
        assert!(for_check("build2", named.check).is_empty());
        assert!(for_check("build9", named.check).is_empty());
        // stage8's exhaustive check, of the same name, gets stage8's digests, not build3's.
        let made8 = super::made("stage8");
        let stage8 = for_check("stage8", named.check);
        assert_eq!(stage8, made8);
        assert!(stage8.starts_with(b"kit stage8 exhaustive reference digests"));
        assert!(grader_checks::lessons::stage8::exhaustive::decode_digests(stage8).is_some());
        assert!(for_check("stage8", "facts::fixture_503_503_200").is_empty());
    }

    #[test]
    fn an_input_is_kept_under_its_kit_state_then_read_instead_of_made() {
        let dir = tempfile::tempdir().unwrap();
        let kept = kept_file(dir.path(), "build3");
        let name = kept.file_name().unwrap().to_str().unwrap();
        assert!(name.contains(grader_checks::KIT_STATE), "{name}");
        // The first time, with the compiler running: made in a thread, then kept whole.
        static FIRST: OnceLock<Vec<u8>> = OnceLock::new();
        let Started::Making(making) = load_or_make(&FIRST, kept.clone(), || b"made".to_vec(), true)
        else {
            panic!("not made in a thread");
        };
        making.join().unwrap();
        assert_eq!(FIRST.get().map(Vec::as_slice), Some(&b"made"[..]));
        assert_eq!(std::fs::read(&kept).unwrap(), b"made");
        let files = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(files, 1, "no temporary file is left");
        // Kept for another state: removed when this state's is kept; another lesson's stays.
        let stale = dir.path().join("input-build3-0123456789abcdef.bin");
        let others = dir.path().join("input-stage8-0123456789abcdef.bin");
        std::fs::write(&stale, b"old").unwrap();
        std::fs::write(&others, b"theirs").unwrap();
        keep(&kept, b"made");
        assert!(!stale.exists() && others.exists() && kept.exists());
        std::fs::remove_file(&others).unwrap();
        // The next process reads it while its compiler runs, and makes nothing; the build
        // waits for the read.
        static NEXT: OnceLock<Vec<u8>> = OnceLock::new();
        let never = || -> Vec<u8> { panic!("made although it was kept") };
        let reading = load_or_make(&NEXT, kept.clone(), never, true);
        assert!(matches!(reading, Started::Reading(_)));
        reading.wait();
        assert_eq!(NEXT.get().map(Vec::as_slice), Some(&b"made"[..]));
        // With no compiler running, it is read at once.
        static AT_ONCE: OnceLock<Vec<u8>> = OnceLock::new();
        assert!(matches!(
            load_or_make(&AT_ONCE, kept.clone(), never, false),
            Started::Nothing
        ));
        assert_eq!(AT_ONCE.get().map(Vec::as_slice), Some(&b"made"[..]));
        // Nothing kept and no compiler running: nothing is made (the check makes its own).
        static IDLE: OnceLock<Vec<u8>> = OnceLock::new();
        let elsewhere = dir.path().join("other.bin");
        assert!(matches!(
            load_or_make(&IDLE, elsewhere.clone(), never, false),
            Started::Nothing
        ));
        assert!(IDLE.get().is_none() && !elsewhere.exists());
    }
}

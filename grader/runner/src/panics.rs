//! Panics in a check: what a payload says, where it was raised, and whose code raised it.
//!
//! A check runs the learner's function inside `catch_unwind`. What comes out is sorted here:
//! a [`CheckFailure`] is the check's own verdict, `todo!()` means the function is unfinished,
//! a panic raised in the kit's own source is a bug in the kit, and anything else is the
//! learner's. This module depends on nothing else in the crate.
//!
//! In a runner, a panic is reported as a [`Reported`]; the judge raises that in its place,
//! and it is always the learner's.

use std::any::Any;
use std::sync::Mutex;

/// A failure a check raises from inside a callback, for example when a loop runs away: its
/// text is the check's failure message.
#[derive(Debug, Clone)]
pub struct CheckFailure(pub String);

/// The payload of a panic a check raises on purpose inside a callback, to see whether the
/// learner's function lets it propagate. It names the callback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeliberatePanic(pub &'static str);

/// A panic the learner's code raised in a runner, as the runner reported it: the payload the
/// judge raises in its place. Whatever its location says, it is the learner's (the runner is
/// the learner's process, so it can claim any location): never a bug in the kit.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Reported {
    /// The panic's message.
    pub message: String,
    /// Where, as the runner said.
    pub location: Option<String>,
    /// The frames of the learner's own code that led to the panic, innermost first
    /// (`function at file:line:column`), when `RUST_BACKTRACE` asks for a backtrace;
    /// otherwise empty.
    pub frames: Vec<String>,
}

impl Reported {
    /// A panic that came out of the learner's code just now, as a runner reports it (call it
    /// at once: it takes the location and frames the panic hook recorded on this thread).
    pub(crate) fn of(payload: &(dyn Any + Send)) -> Reported {
        Reported {
            message: panic_message(payload),
            location: take_location(),
            frames: take_frames(),
        }
    }
}

/// The most frames of the learner's code a panic keeps, and the most bytes of each.
const FRAMES_KEPT: usize = 12;
const FRAME_BYTES: usize = 300;

thread_local! {
    /// The learner's frames of this thread's last panic, when a backtrace was asked for.
    static THREAD_FRAMES: std::cell::RefCell<Vec<String>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Whether a panic records the learner's frames: `RUST_BACKTRACE` (or `RUST_LIB_BACKTRACE`)
/// set to anything but `0`, read once.
fn backtraces_wanted() -> bool {
    static WANTED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *WANTED.get_or_init(|| {
        ["RUST_LIB_BACKTRACE", "RUST_BACKTRACE"]
            .iter()
            .find_map(|name| std::env::var(name).ok())
            .is_some_and(|v| v != "0")
    })
}

/// The frames of a rendered backtrace in the learner's own code, innermost first, as
/// `function at file:line:column`: every frame with a source file that is neither the
/// standard library's, a dependency's, the kit's own (the runner's, kit-types') nor the kit's
/// glue in `practice/src/root.rs`. (Only the learner's library is readable in a confined
/// runner, so only its frames have a file and line.)
pub(crate) fn learner_frames(rendered: &str) -> Vec<String> {
    let mut frames = Vec::new();
    let mut function: Option<&str> = None;
    for line in rendered.lines() {
        let line = line.trim();
        if let Some(at) = line.strip_prefix("at ") {
            let at = at.trim_start_matches("./");
            let file = at.replace('\\', "/");
            let theirs = !(file.starts_with("/rustc/")
                || file.contains("/rustlib/")
                || file.contains("/.cargo/registry/")
                || file.contains("/cargo/registry/")
                || file.ends_with("practice/src/root.rs")
                || file.contains("practice/src/root.rs:")
                || file.starts_with("grader/runner/")
                || file.contains("/grader/runner/")
                || file.contains("reference/src/types/"));
            if let (true, Some(f)) = (theirs, function.take()) {
                // From the kit's folder down, however the crate was compiled (cargo in a
                // copy gives absolute paths, the replayed compiler relative ones).
                let at = ["/practice/", "/grader/"]
                    .iter()
                    .filter_map(|dir| at.rfind(dir).map(|i| &at[i + 1..]))
                    .next()
                    .unwrap_or(at);
                let mut frame = format!("{f} at {at}");
                if frame.len() > FRAME_BYTES {
                    let mut end = FRAME_BYTES;
                    while !frame.is_char_boundary(end) {
                        end -= 1;
                    }
                    frame.truncate(end);
                }
                frames.push(frame);
                if frames.len() == FRAMES_KEPT {
                    break;
                }
            }
        } else if let Some((number, name)) = line.split_once(": ") {
            if number.chars().all(|c| c.is_ascii_digit()) {
                // A function's hash suffix says nothing to a learner.
                let name = match name.rsplit_once("::h") {
                    Some((head, hash)) if hash.chars().all(|c| c.is_ascii_hexdigit()) => head,
                    _ => name,
                };
                function = Some(name);
            }
        }
    }
    frames
}

/// The learner's frames of this thread's last panic (see [`Reported::frames`]); taking them
/// forgets them.
pub(crate) fn take_frames() -> Vec<String> {
    THREAD_FRAMES.with(|mine| std::mem::take(&mut *mine.borrow_mut()))
}

/// Where the last panic happened, recorded by [`install_quiet_hook`]: on any thread (for a
/// panic raised on one thread and reported from another) ...
static LAST_LOCATION: Mutex<Option<String>> = Mutex::new(None);

thread_local! {
    /// ... and on this one: two threads that panic at once (a runner's two case threads)
    /// each report their own.
    static THREAD_LOCATION: std::cell::RefCell<Option<String>> =
        const { std::cell::RefCell::new(None) };
}

/// Replaces the default panic hook with one that prints nothing and records where the
/// panic happened: the grader writes its own account of every panic.
///
/// The kit's own typed panics ([`CheckFailure`], [`DeliberatePanic`], the fakes' loop guard)
/// record no location: the code under test can catch one and raise a payload of its own
/// with `resume_unwind`, which runs no hook, and that payload must not take the kit's
/// location (and so pass for a bug in the kit).
pub fn install_quiet_hook() {
    std::panic::set_hook(Box::new(|info| {
        let payload = info.payload();
        let kits_own = payload.is::<CheckFailure>()
            || payload.is::<DeliberatePanic>()
            || payload.is::<kit_types::gateway::fakes::LoopGuard>();
        let location = info
            .location()
            .filter(|_| !kits_own)
            .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()));
        THREAD_LOCATION.with(|mine| *mine.borrow_mut() = location.clone());
        // An unfinished function's todo!() is told by its place alone: resolving a backtrace
        // (the library's line tables, read for each check) would cost each check of a stub
        // tens of milliseconds.
        let unfinished = || is_stub_panic(&panic_message(payload));
        if !kits_own && backtraces_wanted() && !unfinished() {
            let rendered = std::backtrace::Backtrace::force_capture().to_string();
            THREAD_FRAMES.with(|mine| *mine.borrow_mut() = learner_frames(&rendered));
        }
        if let Ok(mut last) = LAST_LOCATION.lock() {
            *last = location;
        }
    }));
}

/// Where the last panic happened (`file:line:column`), if the quiet hook saw one: this
/// thread's last panic, or else the last on any thread.
pub(crate) fn take_location() -> Option<String> {
    let mine = THREAD_LOCATION.with(|mine| mine.borrow_mut().take());
    let any = LAST_LOCATION.lock().ok().and_then(|mut l| l.take());
    mine.or(any)
}

/// The text of a panic payload, as `panic!` formats it.
///
/// ```
/// let payload = std::panic::catch_unwind(|| panic!("boom {}", 7)).unwrap_err();
/// assert_eq!(kit_runner::panics::panic_message(payload.as_ref()), "boom 7");
/// ```
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else if let Some(CheckFailure(s)) = payload.downcast_ref::<CheckFailure>() {
        s.clone()
    } else if let Some(kit_types::gateway::fakes::LoopGuard(s)) =
        payload.downcast_ref::<kit_types::gateway::fakes::LoopGuard>()
    {
        s.clone()
    } else if let Some(Reported { message, .. }) = payload.downcast_ref::<Reported>() {
        message.clone()
    } else if let Some(DeliberatePanic(callback)) = payload.downcast_ref::<DeliberatePanic>() {
        format!("the check's deliberate panic in {callback}")
    } else {
        "a panic with a non-text payload".to_string()
    }
}

/// Whether a panic message is the one `todo!()` or `unimplemented!()` produce.
///
/// ```
/// use kit_runner::panics::is_stub_panic;
/// assert!(is_stub_panic("not yet implemented"));
/// assert!(is_stub_panic("not implemented: write me"));
/// assert!(!is_stub_panic("index out of bounds"));
/// ```
pub fn is_stub_panic(message: &str) -> bool {
    ["not yet implemented", "not implemented"]
        .iter()
        .any(|m| message == *m || message.starts_with(&format!("{m}: ")))
}

/// The folders of the kit's own code that runs inside a check: a panic raised there (other
/// than a check's deliberate ones) is a bug in the kit, never the learner's failure.
const KIT_SOURCES: [&str; 4] = [
    "grader/checks/src/",
    "grader/runner/src/",
    // The answers, and the shared types and fakes (`reference/src/types/`, kit-types).
    "reference/src/",
    "grader/src/",
];

/// Whether `location` (`file:line:column`, as a panic reports it) is in the kit's own code.
pub(crate) fn in_kit_source(location: &str) -> bool {
    let file = location.replace('\\', "/");
    KIT_SOURCES
        .iter()
        .any(|dir| file.starts_with(dir) || file.contains(&format!("/{dir}")))
}

/// Whose a caught panic is, and what it means for the check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caught {
    /// A check's own verdict, raised from inside a callback.
    Verdict(String),
    /// The learner's function reached `todo!()` or `unimplemented!()`.
    Unfinished {
        /// The macro's message.
        message: String,
        /// Where, when known.
        location: Option<String>,
    },
    /// The learner's code panicked.
    Learner {
        /// The panic's message.
        message: String,
        /// Where, when known.
        location: Option<String>,
    },
    /// The kit's own code panicked: a bug in the kit.
    Kit {
        /// The panic's message.
        message: String,
        /// Where, when known.
        location: Option<String>,
    },
}

/// Sorts a payload caught around a check (call it right after the panic: it reads the
/// location the quiet hook recorded).
pub fn classify(payload: &(dyn Any + Send)) -> Caught {
    if let Some(CheckFailure(message)) = payload.downcast_ref::<CheckFailure>() {
        return Caught::Verdict(message.clone());
    }
    if let Some(kit_types::gateway::fakes::LoopGuard(message)) =
        payload.downcast_ref::<kit_types::gateway::fakes::LoopGuard>()
    {
        return Caught::Verdict(message.clone());
    }
    if let Some(Reported {
        message, location, ..
    }) = payload.downcast_ref::<Reported>()
    {
        let (message, location) = (message.clone(), location.clone());
        return if is_stub_panic(&message) {
            Caught::Unfinished { message, location }
        } else {
            Caught::Learner { message, location }
        };
    }
    let message = panic_message(payload);
    let location = take_location();
    if is_stub_panic(&message) {
        return Caught::Unfinished { message, location };
    }
    if payload.is::<DeliberatePanic>() {
        // A check let its own deliberate panic escape: the check is wrong, not the learner.
        return Caught::Kit {
            message: format!("{message} escaped the check"),
            location,
        };
    }
    match &location {
        Some(at) if in_kit_source(at) => Caught::Kit { message, location },
        _ => Caught::Learner { message, location },
    }
}

#[cfg(test)]
mod doc_examples {
    /// What the item's documentation once showed as an example.
    #[test]
    fn learner_frames_keeps_the_learner_s_frames() {
        let text = "   0: std::panicking::begin_panic\n             at /rustc/x/library/std/src/panicking.rs:1:1\n   \
                    1: practice::retry::retry_request::h0123abcd\n             at /home/me/kit/practice/src/lib.rs:45:73\n   \
                    2: kit_runner::build3::run\n             at ./grader/runner/src/build3/mod.rs:9:9\n";
        assert_eq!(
            crate::panics::learner_frames(text),
            ["practice::retry::retry_request at practice/src/lib.rs:45:73"]
        );
    }

    /// What the item's documentation once showed as an example.
    #[test]
    fn in_kit_source_knows_the_kit_s_files() {
        use crate::panics::in_kit_source;
        assert!(in_kit_source(
            "grader/checks/src/lessons/build3/checks.rs:10:5"
        ));
        assert!(in_kit_source(
            "/home/me/kit/reference/src/types/gateway/fakes.rs:3:1"
        ));
        assert!(!in_kit_source("practice/src/lib.rs:40:5"));
        assert!(!in_kit_source("grader/tests/support/impls.rs:7:9"));
        assert!(!in_kit_source("/rustc/abc/library/core/src/time.rs:1:1"));
    }
}

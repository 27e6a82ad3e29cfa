//! The data a group hands one of its checks on standard input ([`grader_checks::CheckInput`]:
//! build3's exhaustive check gets the reference's run of every case), computed once per
//! grader process. A command that will run that check says so ([`want`]); the build of the
//! harness then starts making the input in the background ([`prepare`]), where a core is
//! mostly free. A single run after an edit gains nothing measurable (the compiler's linker
//! uses the second core too); a watch's later runs and a batch of grading do, since the
//! input is kept for the process. Nothing is made for a run that compiles nothing (its check
//! would start before the input was ready, and the work would only compete with the checks)
//! nor for one that does not run the check (a scenario, a filter).

use grader_checks::groups::GROUPS;
use grader_checks::CheckInput;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

/// One slot per group of [`GROUPS`], in its order: the input, once made.
static MADE: [OnceLock<Vec<u8>>; GROUPS.len()] = [const { OnceLock::new() }; GROUPS.len()];

/// One flag per group of [`GROUPS`]: whether this process will run the check that reads it.
static WANTED: [AtomicBool; GROUPS.len()] = [const { AtomicBool::new(false) }; GROUPS.len()];

/// Group `group`'s check input, and its place in [`MADE`] and [`WANTED`], if it has one.
fn entry(group: &str) -> Option<(CheckInput, usize)> {
    let i = GROUPS.iter().position(|g| g.name == group)?;
    Some((GROUPS[i].check_input?, i))
}

/// Says that this process will run the check that reads group `group`'s input, so that the
/// next build of its harness makes it ([`prepare`]).
pub fn want(group: &str) {
    if let Some((_, i)) = entry(group) {
        WANTED[i].store(true, Ordering::SeqCst);
    }
}

/// Starts making group `group`'s check input in a background thread, if it is wanted
/// ([`want`]) and not made yet: a build of the harness calls it when it runs the compiler
/// (which leaves a core free).
pub fn prepare(group: &str) {
    let Some((_, i)) = entry(group) else {
        return;
    };
    if WANTED[i].load(Ordering::SeqCst) && MADE[i].get().is_none() {
        let group = group.to_string();
        std::thread::spawn(move || made(&group));
    }
}

/// What check `check` of group `group` is handed on standard input: the group's input when
/// the group names this check and it has been made; empty otherwise. It never waits: a
/// check that starts before its input is ready computes what it needs itself, as it would
/// have without one, so preparing can only make a run faster.
pub fn for_check(group: &str, check: &str) -> &'static [u8] {
    match entry(group) {
        Some((input, i)) if input.check == check => MADE[i].get().map_or(&[], Vec::as_slice),
        _ => &[],
    }
}

/// Group `group`'s input (empty when it has none), made now if it is not made yet; waits
/// when it is being made.
pub fn made(group: &str) -> &'static [u8] {
    let Some((input, i)) = entry(group) else {
        return &[];
    };
    // The kit's own code, but a panic here must not take the run down: without the input,
    // the check computes what it needs itself (and reports any kit bug there).
    MADE[i].get_or_init(|| panic::catch_unwind(AssertUnwindSafe(input.make)).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_named_check_gets_the_input() {
        let build3 = grader_checks::groups::group("build3").unwrap();
        let named = build3
            .check_input
            .expect("build3 hands its exhaustive check an input");
        let made = made("build3");
        let input = for_check("build3", named.check);
        assert_eq!(input, made);
        assert!(input.starts_with(b"kit build3 exhaustive reference digests"));
        assert!(grader_checks::groups::build3::exhaustive::Digests::decode(input).is_some());
        assert!(for_check("build3", "fixtures::third_attempt_success").is_empty());
        assert!(for_check("stage8", named.check).is_empty());
        assert!(for_check("build9", named.check).is_empty());
    }
}

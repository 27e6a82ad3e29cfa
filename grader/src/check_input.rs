//! The data a group hands one of its checks on standard input ([`grader_checks::CheckInput`]:
//! build3's exhaustive check gets the reference's run of every case), computed once per
//! grader process. [`prepare`] starts it in the background while the harness is compiled,
//! where a core is mostly free. A single run after an edit gains nothing measurable (the
//! compiler's linker uses the second core too); a watch's later runs and a batch of grading
//! do, since the input is kept for the process. A run that compiles nothing does not make it
//! (its check would start before it was ready, and the work would only compete with the
//! checks).

use grader_checks::groups::GROUPS;
use std::panic::{self, AssertUnwindSafe};
use std::sync::OnceLock;

/// One slot per group of [`GROUPS`], in its order.
static MADE: [OnceLock<Vec<u8>>; GROUPS.len()] = [const { OnceLock::new() }; GROUPS.len()];

/// Starts making group `group`'s check input in a background thread, if it has one and it
/// is not made yet: a build of the harness calls it when it runs the compiler (which leaves
/// a core free); a watch or a batch of grading keeps it for all its runs.
pub fn prepare(group: &str) {
    let Some(slot) = slot(group) else {
        return;
    };
    if slot.get().is_none() {
        let group = group.to_string();
        std::thread::spawn(move || made(&group));
    }
}

/// What check `check` of group `group` is handed on standard input: the group's input when
/// the group names this check and [`prepare`] has finished making it; empty otherwise. It
/// never waits: a check that starts before its input is ready computes what it needs
/// itself, as it would have without one, so preparing can only make a run faster.
pub fn for_check(group: &str, check: &str) -> &'static [u8] {
    let named = GROUPS
        .iter()
        .find(|g| g.name == group)
        .and_then(|g| g.check_input)
        .is_some_and(|input| input.check == check);
    match slot(group).and_then(OnceLock::get) {
        Some(input) if named => input,
        _ => &[],
    }
}

fn slot(group: &str) -> Option<&'static OnceLock<Vec<u8>>> {
    let i = GROUPS
        .iter()
        .position(|g| g.name == group && g.check_input.is_some())?;
    Some(&MADE[i])
}

/// Group `group`'s input (empty when it has none), made now if [`prepare`] has not made it
/// yet; waits when it is being made.
pub fn made(group: &str) -> &'static [u8] {
    let Some(slot) = slot(group) else {
        return &[];
    };
    slot.get_or_init(|| {
        let make = GROUPS
            .iter()
            .find(|g| g.name == group)
            .and_then(|g| g.check_input)
            .map(|input| input.make);
        // The kit's own code, but a panic here must not take the run down: without the
        // input, the check computes what it needs itself (and reports any kit bug there).
        make.and_then(|make| panic::catch_unwind(AssertUnwindSafe(make)).ok())
            .unwrap_or_default()
    })
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

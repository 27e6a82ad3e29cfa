//! The exhaustive comparison: every case of a bounded space, run on the learner's code and
//! on the reference, compared call for call.
//!
//! The space:
//! - **Policies**: a grid of valid ones (1 to 5 attempts; zero, capped, equal and 60-second
//!   delays) and every kind of invalid one (method, attempts 0 and 6, NaN, infinite,
//!   negative and just-above-60 delays, base above max, several problems at once).
//! - **Scripts**: every sequence of outcomes up to `max_attempts + 1` long, where each
//!   position before the last is a transient failure and the last is a transient failure
//!   (repeated for every further call), a success or a permanent failure.
//!   Each transient failure ranges over every reason × every server wait (none, 0, below
//!   the backoff, between backoff and budget, equal to the budget, just above it, NaN,
//!   negative, infinite): at every position for policies of one or two attempts, and at the
//!   first position for longer ones. There, positions 2 and 3 range over every server wait
//!   with the reason rotating, and later positions over "no wait" and "above the budget",
//!   which keeps the space near 260,000 cases (every sequence over the full alphabet would
//!   be tens of millions for five attempts).
//!
//! Cases come shortest first, so the first difference is a smallest one.

use super::recording::{consistent, record_into, Recording, Script};
use super::scenario::Scenario;
use super::Learner;
use crate::panics::{is_stub_panic, panic_message, CheckFailure};
use crate::view::ScenarioRun;
use kit_runner::build3::space::{self, blocks};
use kit_runner::build3::{Ask, CaseRun, Ending, Told};
use kit_runner::remote::Runner;
use kit_runner::wire;
use kit_types::RetryPolicy;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};

/// One case: a policy and a script.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// The policy.
    pub policy: RetryPolicy,
    /// What request returns.
    pub script: Script,
}

impl Case {
    /// The case as a scenario file.
    pub(crate) fn to_scenario(&self) -> Scenario {
        Scenario {
            policy: self.policy.clone(),
            script: self.script.clone(),
        }
    }
}

/// Every case, shortest scripts first.
pub fn cases() -> impl Iterator<Item = Case> {
    blocks().into_iter().flat_map(|block| {
        (0..block.count).map(move |i| {
            let mut steps = Vec::new();
            block.script_into(i, &mut steps);
            Case {
                policy: block.policy.clone(),
                script: Script::repeating(steps),
            }
        })
    })
}

/// Case number `number` (1-based), if the space has it.
pub fn case(number: usize) -> Option<Case> {
    let index = number.checked_sub(1)?;
    let blocks = space::shared();
    let block = blocks
        .iter()
        .find(|b| (b.start..b.start + b.count).contains(&index))?;
    let mut steps = Vec::new();
    block.script_into(index - block.start, &mut steps);
    Some(Case {
        policy: block.policy.clone(),
        script: Script::repeating(steps),
    })
}

/// Case `number` as the scenario file the check saves when it finds the first difference
/// there.
pub fn case_text(case: &Case, number: usize) -> String {
    case.to_scenario().to_toml(&format!(
        "Case {number} of the exhaustive check: the first place your retry_request and the\n\
         reference differ. Replay it: {}",
        crate::feedback::REPLAY_COMMAND
    ))
}

/// Whether `text` is exactly the file the check saves for some case of the space: that
/// case's number ([`crate::lesson::Lesson::saved_case`]).
pub(crate) fn saved_case(text: &str) -> Option<usize> {
    crate::feedback::saved_case_number(text, " of the exhaustive check:", |n| {
        Some(case_text(&case(n)?, n))
    })
}

/// The first case where the learner's run differs from the reference's.
#[derive(Debug, Clone)]
pub struct Difference {
    /// Its 1-based number in [`cases`] order.
    pub(crate) number: usize,
    /// The case.
    pub(crate) case: Case,
    /// The learner's run, rendered.
    pub(crate) learner: ScenarioRun,
    /// The reference's run, rendered.
    pub(crate) reference: ScenarioRun,
    /// The rule the learner's run breaks first, in a named check's words, when one names it.
    pub(crate) rule: Option<String>,
}

/// Runs every case on `imp` and on the reference. `Ok(n)`: all `n` cases agree.
///
/// A learner's `todo!()` propagates (the harness reports it as unfinished); any other
/// panic, and a runaway loop caught by the call guard, is a difference.
pub fn compare(imp: &Learner) -> Result<usize, Box<Difference>> {
    compare_with_progress(imp, &AtomicUsize::new(0))
}

/// The reference's run of every case, as [`Recording::digest`]s: the grader computes them
/// once ([`reference_digests`]) and hands them to the check, which then runs only the
/// learner's code on a case whose digest matches. Without them (a harness run by hand, the
/// kit's own tests), the check runs the reference itself, as it always did.
pub(crate) use crate::digests::Digests;

/// The first line of [`reference_digests`]' bytes: what they are, in which layout, and
/// from which state of the checks and the reference (see `grader/checks/build.rs`).
const DIGESTS_HEADER: &[u8] = concat!(
    "kit build3 exhaustive reference digests v1 ",
    env!("KIT_CHECKS_STATE"),
    "\n"
)
.as_bytes();

/// Reads the bytes [`reference_digests`] made (`Digests::decode`).
pub fn decode_digests(bytes: &[u8]) -> Option<Digests> {
    Digests::decode(
        bytes,
        DIGESTS_HEADER,
        space::total(space::shared()),
        |index| {
            // Without the answers the run is read by its number alone: making the case (the
            // whole space built again) for every one of the cases checked would cost minutes.
            #[cfg(not(feature = "answers"))]
            let run = oracle_record(index);
            #[cfg(feature = "answers")]
            let run = reference_record(index, &case(index + 1)?);
            run.ok()?.digest()
        },
    )
}

/// Runs the reference on every case and returns the digests of its runs as bytes for
/// `Digests::decode`. The grader calls it once per state of the checks and the reference
/// (about 0.07 s), keeps the bytes, and writes them to the exhaustive check's standard input.
pub fn reference_digests() -> Vec<u8> {
    let blocks = space::shared();
    let total = space::total(blocks);
    let mut rec = Recording::empty();
    let mut walk = space::Walk::new(blocks);
    let digests = (0..total).map(|index| {
        let (policy, script) = walk.case(index);
        match reference_into(&mut rec, index, policy, script) {
            Ok(()) => rec.digest().unwrap_or(0),
            Err(_) => 0,
        }
    });
    crate::digests::encode(DIGESTS_HEADER, total, digests)
}

/// The reference's run of 0-based case `index` (its `policy` and `script`), recorded into
/// `rec`: made here, or in a copy of the kit without the answers read from its oracle
/// ([`crate::oracle`]).
#[cfg(feature = "answers")]
fn reference_into(
    rec: &mut Recording,
    _index: usize,
    policy: &RetryPolicy,
    script: &Script,
) -> Result<(), String> {
    guarded_into(rec, &super::reference(), policy, script)
}

/// The reference's run of 0-based case `index`, read from the oracle of a copy of the kit
/// without the answers ([`crate::oracle`]) into `rec`.
#[cfg(not(feature = "answers"))]
fn reference_into(
    rec: &mut Recording,
    index: usize,
    _policy: &RetryPolicy,
    _script: &Script,
) -> Result<(), String> {
    oracle_record(index).map(|run| *rec = run)
}

/// The reference's run of 0-based case `index`, read from the oracle by its number alone.
#[cfg(not(feature = "answers"))]
fn oracle_record(index: usize) -> Result<Recording, String> {
    crate::oracle::oracle_run!("build3", space::total(space::shared()), index)
}

/// The reference's run of 0-based case `index`, `case` ([`reference_into`]).
fn reference_record(index: usize, case: &Case) -> Result<Recording, String> {
    let mut rec = Recording::empty();
    reference_into(&mut rec, index, &case.policy, &case.script).map(|()| rec)
}

/// The reference's run of every case, as the bytes a copy of the kit without the answers
/// reads ([`crate::oracle::decode`]).
pub(crate) fn oracle() -> Vec<u8> {
    let blocks = space::shared();
    let total = space::total(blocks);
    let mut walk = space::Walk::new(blocks);
    let mut rec = Recording::empty();
    let runs: Vec<Vec<u8>> = (0..total)
        .map(|index| {
            let (policy, script) = walk.case(index);
            let run = reference_into(&mut rec, index, policy, script).map(|()| rec.clone());
            wire::encode(&run)
        })
        .collect();
    crate::oracle::encode("build3", runs.into_iter())
}

/// How many threads the comparison uses: the cases are split between them.
const THREADS: usize = 2;

/// How many cases a thread takes at a time.
const CHUNK: usize = 2048;

/// How many cases a thread compares between two updates of the shared progress count (an
/// update per case from both threads made them wait on each other). Small, so that a stall
/// still means a case, or a few, that took longer than the timeout: code that stalls 16
/// cases even at a 0.1 s timeout (6 ms a case) would need half an hour for the space, far
/// past the check's 120 s.
const PROGRESS_EVERY: usize = 16;

/// The number of the case one thread is running (0: none yet), on a cache line of its own
/// so that one thread's stores do not slow the other down.
#[derive(Debug, Default)]
#[repr(align(128))]
pub(crate) struct UnderWay(pub AtomicUsize);

/// [`compare`], storing the number of cases compared so far in `progress` (it grows while
/// work goes on), and in `under_way[t]` the number of the case thread `t` is running.
///
/// The threads take the space in chunks, in order; the first difference is the
/// smallest-numbered one, so a thread stops as soon as another found an earlier one.
pub(crate) fn compare_with_progress(
    imp: &Learner,
    progress: &AtomicUsize,
) -> Result<usize, Box<Difference>> {
    compare_tracked(imp, progress, &Default::default(), None)
}

/// [`compare_with_progress`], also telling which case each thread is running.
pub(crate) fn compare_tracked(
    imp: &Learner,
    progress: &AtomicUsize,
    under_way: &[UnderWay; THREADS],
    known: Option<&Digests>,
) -> Result<usize, Box<Difference>> {
    if let Learner::Runner(runner) = imp {
        return match compare_in_runner(imp, runner, progress, under_way, known) {
            None => Ok(space::total(space::shared())),
            Some(Parted::Differs(index)) => Err(difference(imp, index, false)),
            Some(Parted::RanOtherwise(index)) => Err(difference(imp, index, true)),
        };
    }
    let blocks = space::shared();
    let total = space::total(blocks);
    // The smallest 0-based index found to differ so far (usize::MAX: none).
    let first = AtomicUsize::new(usize::MAX);
    // The threads take the space in chunks, in order (later cases are longer, so fixed
    // halves would leave one thread waiting for the other). Every chunk below a difference
    // is taken and run up to it, so the difference found is the smallest.
    let next_chunk = AtomicUsize::new(0);
    // A learner's todo!() must come out of this function as it went in (the harness reports
    // it as unfinished): each thread catches what escapes it, and it is raised again here.
    let escaped: Vec<Box<dyn std::any::Any + Send>> = std::thread::scope(|scope| {
        let handles: Vec<_> = under_way
            .iter()
            .map(|under_way| {
                let (blocks, first, next_chunk) = (&blocks, &first, &next_chunk);
                scope.spawn(move || {
                    let ran = panic::catch_unwind(AssertUnwindSafe(|| {
                        let (mut theirs, mut ours) = (Recording::empty(), Recording::empty());
                        let mut walk = space::Walk::new(blocks);
                        // Cases compared and not yet added to `progress`.
                        let mut unreported = 0;
                        loop {
                            let start = next_chunk.fetch_add(CHUNK, Ordering::SeqCst);
                            if start >= total {
                                progress.fetch_add(unreported, Ordering::SeqCst);
                                return;
                            }
                            for index in start..(start + CHUNK).min(total) {
                                if index > first.load(Ordering::Relaxed) {
                                    return;
                                }
                                let (policy, script) = walk.case(index);
                                under_way.0.store(index + 1, Ordering::Relaxed);
                                // A learner's run that ends in an error never matches; one
                                // whose digest is the reference's does; anything else is
                                // compared with a reference run in full.
                                let handed = known.and_then(|k| k.get(index));
                                let same = match guarded_into(&mut theirs, imp, policy, script) {
                                    Err(_) => false,
                                    Ok(()) if handed.is_some() && theirs.digest() == handed => true,
                                    Ok(()) => {
                                        reference_into(&mut ours, index, policy, script).is_ok()
                                            && theirs.same_as(&ours)
                                    }
                                };
                                unreported += 1;
                                if unreported == PROGRESS_EVERY {
                                    progress.fetch_add(unreported, Ordering::Relaxed);
                                    unreported = 0;
                                }
                                if !same {
                                    first.fetch_min(index, Ordering::SeqCst);
                                    return;
                                }
                            }
                        }
                    }));
                    // Done, however it ended: no longer running a case (a stall names the
                    // case a thread that is still running is on, never one that finished).
                    under_way.0.store(0, Ordering::SeqCst);
                    ran
                })
            })
            .collect();
        handles
            .into_iter()
            .filter_map(|h| match h.join() {
                Ok(Ok(())) => None,
                Ok(Err(payload)) | Err(payload) => Some(payload),
            })
            .collect()
    });
    if let Some(payload) = escaped.into_iter().next() {
        panic::resume_unwind(payload);
    }
    let index = first.load(Ordering::SeqCst);
    if index == usize::MAX {
        return Ok(total);
    }
    Err(difference(imp, index, false))
}

/// Where a runner's runs part from the reference's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Parted {
    /// The run of this 0-based case differs from the reference's.
    Differs(usize),
    /// Asked for again, this 0-based case did not run as it had among the others: the
    /// function's runs depend on more than their inputs.
    RanOtherwise(usize),
}

/// What the check says of a case that did not run alone as it had among the others (seen by
/// the runs' digests, or because the run shown, made again, is the reference's).
const RAN_OTHERWISE: &str = "your retry_request did something else on this case when it \
    ran among the other cases of the space than when it was run again (the run shown is a \
    run made again): what it does must depend only on the policy and on what request \
    returns, never on a count or a value kept from earlier runs (a `static`), the thread it \
    runs on, the stack or the time.";

/// How many cases a runner is asked for first, and at most, at a time: the first question is
/// small, so that code that differs early (most wrong code, since the shortest cases come
/// first) is answered soon, and each next one twice the last, so that a runner that agrees
/// is asked a few large questions rather than many small ones (a stall still names its case:
/// the runner marks each one as it starts it). Between two questions the runner waits for
/// the judge, and its two threads share a question better the longer it is.
const RUNNER_CHUNKS: (usize, usize) = (4096, 65536);

/// [`compare_tracked`] for a learner's function in a runner: the runner runs the space a
/// chunk at a time and sends, per case, the digest of what it observed; the reference's
/// side is here (the handed digests, or the reference run here). Returns the 0-based index
/// of the first case that differs, if any. A `todo!()` reached in a case comes out as it
/// went in (the runner's [`Reported`](crate::panics::Reported) panic).
fn compare_in_runner(
    imp: &Learner,
    runner: &Runner,
    progress: &AtomicUsize,
    under_way: &[UnderWay; THREADS],
    known: Option<&Digests>,
) -> Option<Parted> {
    let blocks = space::shared();
    let total = space::total(blocks);
    let mut ours = Recording::empty();
    // The cases in order, for the reference's runs made here: one walk of the space (making
    // each case with `case()` builds the whole space again, once per case).
    let mut walk = space::Walk::new(blocks);
    let mut start = 0;
    let mut chunk = RUNNER_CHUNKS.0;
    while start < total {
        let count = chunk.min(total - start);
        chunk = (chunk * 2).min(RUNNER_CHUNKS.1);
        under_way[0].0.store(start + 1, Ordering::Relaxed);
        let ask = wire::encode(&Ask::Space { start, count });
        let runs = ask_watching_marks(runner, progress, under_way, &ask, |bytes| {
            // No more runs than cases asked: read before the rest is decoded.
            let claimed = bytes.get(1..9)?.try_into().ok().map(u64::from_le_bytes)?;
            if bytes.first() != Some(&1) || claimed > count as u64 {
                return None;
            }
            match wire::decode(bytes)? {
                Told::Space(runs) if (1..=count).contains(&runs.len()) => Some(runs),
                _ => None,
            }
        });
        for slot in under_way {
            slot.0.store(0, Ordering::Relaxed);
        }
        let answered = runs.len();
        for (offset, run) in runs.into_iter().enumerate() {
            let index = start + offset;
            under_way[0].0.store(index + 1, Ordering::Relaxed);
            // The judge's own share of the work moves too (a reference run per case, when
            // no digests were handed over): it is no stall.
            progress.fetch_add(1, Ordering::Relaxed);
            // The reference's digest of this case: handed, or made here.
            let mut reference_digest = || {
                known.and_then(|k| k.get(index)).or_else(|| {
                    let (policy, script) = walk.case(index);
                    reference_into(&mut ours, index, policy, script).ok()?;
                    ours.digest()
                })
            };
            let same = match run {
                CaseRun::Ended(ending) => match *ending {
                    Ending::Panicked(reported) if is_stub_panic(&reported.message) => {
                        panic::resume_unwind(Box::new(reported))
                    }
                    _ => false,
                },
                CaseRun::Digest(digest) if Some(digest) == reference_digest() => true,
                // A digest that differs may still be the same run within the check's
                // tolerance (see `Recording::digest`): compare the whole recording, asked for
                // again. Asked again, the case must do exactly what it did (the same digest):
                // a run that comes out right only alone is no match.
                CaseRun::Digest(digest) => {
                    let case = case(index + 1)?;
                    let theirs = guarded_record(imp, &case);
                    let again = theirs.as_ref().ok().and_then(Recording::digest);
                    if again != Some(digest) {
                        under_way[0].0.store(0, Ordering::SeqCst);
                        return Some(Parted::RanOtherwise(index));
                    }
                    same_runs(theirs, index, &case)
                }
                CaseRun::Full(theirs) => {
                    let case = case(index + 1)?;
                    consistent(&theirs, None, None) && same_runs(Ok(*theirs), index, &case)
                }
            };
            if !same {
                under_way[0].0.store(0, Ordering::SeqCst);
                return Some(Parted::Differs(index));
            }
        }
        if answered < count {
            // Only a case that reached todo!() ends a chunk early, and it was raised above.
            return Some(Parted::Differs(start + answered));
        }
        start += count;
    }
    under_way[0].0.store(0, Ordering::SeqCst);
    None
}

/// Asks `runner` the question of the space `ask`, meanwhile copying the cases its threads
/// mark as running into `under_way` (every few milliseconds, while it works on the answer),
/// and counting each change in `progress`: a stall then names the case a runner's thread
/// never finished.
fn ask_watching_marks<T>(
    runner: &Runner,
    progress: &AtomicUsize,
    under_way: &[UnderWay; THREADS],
    ask: &[u8],
    read: impl FnOnce(&[u8]) -> Option<T>,
) -> T {
    let mut seen = [0u64; THREADS];
    let watch = || {
        if let Some(marks) = runner.marks() {
            if marks != seen {
                for (slot, mark) in under_way.iter().zip(marks) {
                    slot.0
                        .store(usize::try_from(mark).unwrap_or(0), Ordering::Relaxed);
                }
                seen = marks;
                progress.fetch_add(1, Ordering::Relaxed);
            }
        }
    };
    runner.ask_ticking(ask, std::time::Duration::from_millis(5), watch, read)
}

/// Whether the learner's recording of 0-based case `index`, `case`, is the reference's.
fn same_runs(theirs: Result<Recording, String>, index: usize, case: &Case) -> bool {
    match (theirs, reference_record(index, case)) {
        (Ok(theirs), Ok(ours)) => theirs.same_as(&ours),
        _ => false,
    }
}

/// The first difference, at 0-based `index`, shown: the case run once more on each side.
/// `ran_otherwise`: the case was seen not to run again as it had among the others.
fn difference(imp: &Learner, index: usize, ran_otherwise: bool) -> Box<Difference> {
    let case = case(index + 1).expect("the index is in the space");
    let scenario = case.to_scenario();
    let theirs = guarded_record(imp, &case);
    let ours = reference_record(index, &case);
    // Alone it ran as the reference does: what differed was its run among the others.
    let same = matches!((&theirs, &ours), (Ok(t), Ok(o)) if t.same_as(o));
    let broken = match (&theirs, &ours) {
        (Ok(theirs), Ok(ours)) if !same => {
            super::checks::rule_broken(&case.policy, &case.script, theirs, ours)
        }
        _ => None,
    };
    // Where the runs changed, the state the function keeps is the cause, whichever rule the
    // run shown breaks too.
    let rule = match broken {
        _ if !(same || ran_otherwise) => broken,
        Some(rule) => Some(format!(
            "{RAN_OTHERWISE} The run shown breaks a rule too: {rule}"
        )),
        None => Some(RAN_OTHERWISE.to_string()),
    };
    Box::new(Difference {
        number: index + 1,
        rule,
        learner: render(imp, &scenario, theirs),
        reference: match ours {
            Ok(ours) => super::scenario::render_recorded(&scenario, &ours),
            Err(ending) => ScenarioRun::stopped(ending),
        },
        case,
    })
}

fn guarded_into(
    rec: &mut Recording,
    imp: &Learner,
    policy: &RetryPolicy,
    script: &Script,
) -> Result<(), String> {
    let run = panic::catch_unwind(AssertUnwindSafe(|| {
        record_into(rec, imp, policy, script, None)
    }));
    match run {
        Ok(None) => Ok(()),
        Ok(Some(payload)) => {
            let message = panic_message(payload.as_ref());
            if is_stub_panic(&message) {
                panic::resume_unwind(payload);
            }
            Err(format!("panicked: {message}"))
        }
        Err(payload) => match payload.downcast_ref::<CheckFailure>() {
            Some(CheckFailure(message)) => Err(format!("error: {message}")),
            None => Err(format!("panicked: {}", panic_message(payload.as_ref()))),
        },
    }
}

fn guarded_record(imp: &Learner, case: &Case) -> Result<Recording, String> {
    let mut rec = Recording::empty();
    guarded_into(&mut rec, imp, &case.policy, &case.script).map(|()| rec)
}

fn render(imp: &Learner, scenario: &Scenario, recorded: Result<Recording, String>) -> ScenarioRun {
    match recorded {
        // The scenario runner renders the same recording the same way every time.
        Ok(_) => super::scenario::run(imp, scenario),
        Err(ending) => ScenarioRun::stopped(ending),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kit_types::graded::Reply;

    #[test]
    fn the_space_is_bounded_and_ordered_shortest_first() {
        let mut count = 0;
        let mut longest_so_far = 0;
        for case in cases() {
            count += 1;
            let len = case.script.steps.len();
            assert!(len >= longest_so_far, "shortest first");
            longest_so_far = len;
            assert!(len <= case.policy.max_attempts.max(1) as usize + 1);
        }
        assert!((200_000..400_000).contains(&count), "{count} cases");
    }

    #[test]
    fn two_attempt_policies_get_every_pair_of_failures() {
        let pairs = cases()
            .filter(|c| c.policy.max_attempts == 2 && c.policy.base_delay == 0.25)
            .filter(|c| c.script.steps.len() == 3)
            .count();
        assert_eq!(pairs, 36 * 36 * 38);
    }

    #[test]
    fn every_reason_meets_every_wait_on_the_first_call() {
        let firsts: Vec<_> = cases()
            .filter(|c| c.policy == RetryPolicy::default() && c.script.steps.len() == 1)
            .collect();
        assert_eq!(firsts.len(), 4 * 9 + 2);
    }

    /// Differs from the reference when a policy of four attempts succeeds on the third call
    /// or later: deep in the space, where the threads share the work.
    fn wrong_late() -> Learner {
        Learner::Here(|p, r, s, l| {
            let mut calls = 0;
            let result = reference::retry_request(
                p,
                || {
                    calls += 1;
                    r()
                },
                s,
                l,
            );
            if p.max_attempts == 4 && calls >= 3 && result.is_ok() {
                Ok(Reply::Null)
            } else {
                result
            }
        })
    }

    #[test]
    fn the_difference_found_is_the_smallest_numbered_one() {
        let wrong = wrong_late();
        let reference = super::super::reference();
        let expected = cases()
            .position(|case| {
                let (ours, theirs) = (
                    guarded_record(&reference, &case),
                    guarded_record(&wrong, &case),
                );
                !matches!((ours, theirs), (Ok(a), Ok(b)) if a.same_as(&b))
            })
            .expect("the wrong implementation differs somewhere")
            + 1;
        assert!(
            expected > 4 * CHUNK,
            "case {expected} is in the first chunks"
        );
        let difference = compare(&wrong).expect_err("a difference");
        assert_eq!(difference.number, expected);
        assert_eq!(Some(difference.case), case(expected));
    }

    #[test]
    fn handed_digests_give_the_same_verdicts() {
        let bytes = reference_digests();
        let known = decode_digests(&bytes).expect("the reference's own digests are taken");
        let run = |imp: &Learner| {
            compare_tracked(imp, &AtomicUsize::new(0), &Default::default(), Some(&known))
        };
        let total: usize = blocks().iter().map(|b| b.count).sum();
        assert_eq!(run(&super::super::reference()).ok(), Some(total));
        let wrong = wrong_late();
        let without = compare(&wrong).expect_err("a difference");
        let with = run(&wrong).expect_err("a difference");
        assert_eq!(with.number, without.number);
        assert_eq!(with.case, without.case);
    }

    #[test]
    fn a_digest_that_does_not_match_is_compared_in_full() {
        let bytes = reference_digests();
        let mut known = decode_digests(&bytes).expect("taken");
        // Digests that match nothing, none, and the next case's: the correct code still
        // passes (each case is then compared with a run of the reference).
        for (index, digest) in [
            (10, 12345),
            (CHUNK + 3, 0),
            (3 * CHUNK, known.0[3 * CHUNK + 1]),
        ] {
            known.0[index] = digest;
        }
        let total: usize = blocks().iter().map(|b| b.count).sum();
        let result = compare_tracked(
            &super::super::reference(),
            &AtomicUsize::new(0),
            &Default::default(),
            Some(&known),
        );
        assert_eq!(result.ok(), Some(total));
    }

    #[test]
    fn digests_of_another_space_or_another_reference_are_refused() {
        let bytes = reference_digests();
        assert!(decode_digests(&bytes).is_some());
        assert!(decode_digests(&bytes[1..]).is_none(), "no header");
        // Made from another state of the checks or the reference: another header.
        let header = DIGESTS_HEADER.len();
        let mut other = b"kit build3 exhaustive reference digests v1 0123456789abcdef\n".to_vec();
        assert_eq!(other.len(), header, "a state is 16 hex digits");
        assert_ne!(&other[..], DIGESTS_HEADER);
        other.extend_from_slice(&bytes[header..]);
        assert!(decode_digests(&other).is_none(), "another state of the kit");
        assert!(
            decode_digests(&bytes[..bytes.len() - 8]).is_none(),
            "a case short"
        );
        let mut longer = bytes.clone();
        longer.extend_from_slice(&[0; 8]);
        assert!(decode_digests(&longer).is_none(), "a case more");
        // Every digest shifted by one case: digests of other runs under the right header. The
        // spot checks catch it.
        let mut shifted = bytes[..header].to_vec();
        shifted.extend_from_slice(&bytes[header + 8..]);
        shifted.extend_from_slice(&bytes[header..header + 8]);
        assert!(decode_digests(&shifted).is_none(), "digests of other runs");
    }

    #[test]
    fn a_thread_that_ended_is_never_named_as_running_a_case() {
        use std::cell::Cell;
        use std::sync::atomic::AtomicBool;
        use std::time::{Duration, Instant};
        static BLOCKED: AtomicBool = AtomicBool::new(false);
        static RELEASE: AtomicBool = AtomicBool::new(false);
        thread_local! {
            /// How many cases this thread has run, and whether its first had a valid policy.
            static RUN: Cell<(usize, Option<bool>)> = const { Cell::new((0, None)) };
        }
        // The first chunk starts with invalid policies, the second with a valid one: a thread
        // knows its chunk by its first case, and its case by counting (cases come in order).
        let valid = |index: usize| case(index + 1).unwrap().policy.validate().is_ok();
        assert!(!valid(0) && valid(CHUNK));
        const EARLY: usize = 100;
        assert!(valid(EARLY));
        let learner = Learner::Here(|p, r, s, l| {
            let (count, first_valid) = RUN.get();
            let first_valid = first_valid.unwrap_or(p.validate().is_ok());
            RUN.set((count + 1, Some(first_valid)));
            if first_valid && count == 0 {
                // Case CHUNK, the second chunk's first: it never finishes (until released).
                BLOCKED.store(true, Ordering::SeqCst);
                while !RELEASE.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
            let result = reference::retry_request(p, r, s, l);
            if !first_valid && count == EARLY {
                // A difference in the first chunk, found once the other thread is stuck.
                while !BLOCKED.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(1));
                }
                return Ok(Reply::Null);
            }
            result
        });
        let (progress, under_way) = (AtomicUsize::new(0), <[UnderWay; THREADS]>::default());
        let difference = std::thread::scope(|scope| {
            let comparing = scope.spawn(|| compare_tracked(&learner, &progress, &under_way, None));
            // The thread that found the difference ends; the other is stuck on case CHUNK.
            let running = || -> Vec<usize> {
                let mut cases: Vec<usize> = under_way
                    .iter()
                    .map(|u| u.0.load(Ordering::SeqCst))
                    .filter(|n| *n > 0)
                    .collect();
                cases.sort();
                cases
            };
            let stuck = CHUNK + 1;
            let started = Instant::now();
            while running() != [stuck] && started.elapsed() < Duration::from_secs(20) {
                std::thread::sleep(Duration::from_millis(5));
            }
            let seen = running();
            RELEASE.store(true, Ordering::SeqCst);
            let difference = comparing.join().unwrap();
            assert_eq!(
                seen,
                [stuck],
                "the cases running (1-based) while one is stuck"
            );
            difference
        });
        assert_eq!(difference.expect_err("a difference").number, EARLY + 1);
    }

    #[test]
    fn progress_counts_every_case_of_a_full_run() {
        let progress = AtomicUsize::new(0);
        let total = compare_with_progress(&super::super::reference(), &progress).unwrap();
        assert_eq!(progress.load(Ordering::SeqCst), total);
        assert_eq!(total, cases().count());
    }

    #[test]
    fn the_reference_agrees_with_itself() {
        assert!(compare(&super::super::reference()).is_ok());
    }
}

#[cfg(all(test, feature = "answers"))]
mod oracle_tests {
    use super::*;

    #[test]
    fn the_oracle_keeps_the_reference_run_of_every_case() {
        let bytes = oracle();
        let blocks = blocks();
        let total = space::total(&blocks);
        let kept = crate::oracle::decode(&bytes, "build3", total).expect("reads back");
        let mut walk = space::Walk::new(&blocks);
        let mut ours = Recording::empty();
        for index in (0..total).step_by(997) {
            let (policy, script) = walk.case(index);
            let want = reference_into(&mut ours, index, policy, script).map(|()| ours.clone());
            let run: Result<Recording, String> = kept.run(index).expect("a run per case");
            assert_eq!(wire::encode(&run), wire::encode(&want), "case {index}");
        }
    }
}

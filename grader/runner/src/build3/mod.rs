//! build3 · `retry_request`: what one run records ([`recording`]), the exhaustive check's
//! space of inputs ([`space`]), and what the judge asks a runner and hears back.
//!
//! Two questions, each answered with observations only:
//! - [`Ask::Record`]: run the function once on a policy and a script, and say everything it
//!   did ([`Told::Recorded`]);
//! - [`Ask::Space`]: run it on a stretch of the exhaustive space and say, per case, the
//!   digest of what it did, or all of it when a digest cannot stand for it
//!   ([`Told::Space`]). The reference's digests stay with the judge.

pub mod recording;
pub mod space;

use crate::panics::{self, CheckFailure, DeliberatePanic};
use crate::wire::{self, wire_struct, Wire};
use kit_types::graded::RetryFn;
use kit_types::RetryPolicy;
use recording::{record_into, Callback, Recording, Script};
use std::panic::{self as std_panic, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// What the judge asks a build3 runner.
#[derive(Debug, Clone, PartialEq)]
pub enum Ask {
    /// One run on `policy` and `script`; with `panic_in`, that callback panics.
    Record {
        /// The policy passed in.
        policy: RetryPolicy,
        /// What `request` returns.
        script: Script,
        /// The callback that panics on purpose, if any.
        panic_in: Option<Callback>,
    },
    /// Cases `start..start + count` (0-based) of the exhaustive space.
    Space {
        /// The first case.
        start: usize,
        /// How many.
        count: usize,
    },
}

/// How a run ended when it did not return.
#[derive(Debug, Clone, PartialEq)]
pub enum Ending {
    /// The learner's code panicked (its message, and where the runner says).
    Panicked(panics::Reported),
    /// The deliberate panic of this callback came out of the function.
    Deliberate(Callback),
    /// A guard of the script stopped the run: a call the script has no outcome for, or a
    /// callback called past [`recording::CALL_GUARD`]. The text says which.
    Guard(String),
}

/// What one case of the space did.
#[derive(Debug, Clone, PartialEq)]
pub enum CaseRun {
    /// The run returned, and this is its [`Recording::digest`].
    Digest(u64),
    /// The run returned, with a recording no digest stands for (it holds a NaN). Boxed, as
    /// is the next: a question of the space answers thousands of cases, nearly all digests,
    /// and a list of them is then a few bytes a case, not the size of a recording.
    Full(Box<Recording>),
    /// The run did not return.
    Ended(Box<Ending>),
}

/// What a build3 runner says.
#[derive(Debug, Clone, PartialEq)]
pub enum Told {
    /// The answer to [`Ask::Record`].
    Recorded {
        /// What the run did; its `result` is `None` when it did not return.
        recording: Recording,
        /// How it ended, when it did not return.
        ending: Option<Ending>,
    },
    /// The answer to [`Ask::Space`]: one per case, in order. Shorter than asked when a case
    /// reached `todo!()` (the last one then says so): the rest would only say it again.
    Space(Vec<CaseRun>),
}

/// Runs one request on the learner's `retry_request`, in a runner.
pub(crate) fn serve(imp: RetryFn, ask: &Ask) -> Told {
    match ask {
        Ask::Record {
            policy,
            script,
            panic_in,
        } => {
            let mut recording = Recording::empty();
            let ending = run(&mut recording, imp, policy, script, *panic_in);
            Told::Recorded { recording, ending }
        }
        Ask::Space { start, count } => Told::Space(run_space(imp, *start, *count)),
    }
}

/// One run into `rec`, and how it ended if it did not return.
fn run(
    rec: &mut Recording,
    imp: RetryFn,
    policy: &RetryPolicy,
    script: &Script,
    panic_in: Option<Callback>,
) -> Option<Ending> {
    let run = std_panic::catch_unwind(AssertUnwindSafe(|| {
        record_into(rec, imp, policy, script, panic_in)
    }));
    match run {
        Ok(None) => None,
        Ok(Some(payload)) => Some(ending_of(payload.as_ref())),
        // record_into passes the guards' failures on as they are.
        Err(payload) => Some(match payload.downcast_ref::<CheckFailure>() {
            Some(CheckFailure(message)) => Ending::Guard(message.clone()),
            None => ending_of(payload.as_ref()),
        }),
    }
}

fn ending_of(payload: &(dyn std::any::Any + Send)) -> Ending {
    if let Some(DeliberatePanic(name)) = payload.downcast_ref::<DeliberatePanic>() {
        if let Some(callback) = Callback::ALL.into_iter().find(|c| c.name() == *name) {
            return Ending::Deliberate(callback);
        }
    }
    Ending::Panicked(panics::Reported::of(payload))
}

/// The fewest cases a question of the space must hold to be shared with the worker.
const SPLIT_FROM: usize = 1024;

/// How many cases a thread takes at a time from a question it shares with the worker.
///
/// Taken in turns rather than in fixed halves: the two threads often get unequal shares of
/// the processor — the other core busy with another check's processes, or both threads woken
/// on one core, where the scheduler keeps them while each runs in short bursts, one after
/// the other, with the other core idle — and a fixed half then held up the whole answer. A
/// turn is short (well under a millisecond), so whichever thread runs takes the rest.
const TURN: usize = 256;

/// Cases `start..start + count` of the space, in order; shared with the runner's worker
/// thread when there are enough (the machines the kit runs on have at least two cores, and
/// the judge waits): both take [`TURN`]s of it until it is done
/// ([`crate::cases::on_worker`]).
fn run_space(imp: RetryFn, start: usize, count: usize) -> Vec<CaseRun> {
    let blocks = space::shared();
    let end = start.saturating_add(count).min(space::total(blocks));
    if end.saturating_sub(start) < SPLIT_FROM {
        return run_stretch(imp, blocks, start, end, 0);
    }
    let turns = std::sync::Arc::new(Turns {
        next: AtomicUsize::new(start),
        end,
        stop: AtomicBool::new(false),
    });
    // The worker's turns (a confined runner starts no other thread); without one, all of
    // them here.
    let theirs = {
        let turns = std::sync::Arc::clone(&turns);
        crate::cases::on_worker(move || take_turns(imp, blocks, &turns, 1))
    };
    let mut taken = take_turns(imp, blocks, &turns, 0);
    // A worker that took no job (it could not refuse threads), or died: the turns it
    // did not answer are run here below.
    if let Some(Ok(more)) = theirs.map(|r| r.recv()) {
        taken.extend(more);
    }
    taken.sort_by_key(|(first, _)| *first);
    let mut runs = Vec::with_capacity(end - start);
    let mut at = start;
    for (first, turn_runs) in taken {
        if first != at {
            // A turn nobody answered (see above), or an answer past one that ended early.
            break;
        }
        let asked = TURN.min(end - first);
        let ended_early = turn_runs.len() < asked;
        runs.extend(turn_runs);
        at += asked;
        // A todo!() ends the answer there: what comes after it is not asked.
        if ended_early {
            return runs;
        }
    }
    if at < end {
        runs.extend(run_stretch(imp, blocks, at, end, 0));
    }
    runs
}

/// The turns of one question of the space: the next case no thread has taken, where the
/// question ends, and whether a thread reached a `todo!()` (no more turns are taken then).
struct Turns {
    next: AtomicUsize,
    end: usize,
    stop: AtomicBool,
}

/// Takes turns of `turns` on this thread, marked in `slot` of the shared page, until none is
/// left: each turn's first case with its runs, in the order taken.
fn take_turns(
    imp: RetryFn,
    blocks: &[space::Block],
    turns: &Turns,
    slot: usize,
) -> Vec<(usize, Vec<CaseRun>)> {
    let mut taken = Vec::new();
    let mut rec = Recording::empty();
    // One walk for all of this thread's turns: they come in increasing order.
    let mut walk = space::Walk::new(blocks);
    while !turns.stop.load(Ordering::Relaxed) {
        let first = turns.next.fetch_add(TURN, Ordering::Relaxed);
        if first >= turns.end {
            break;
        }
        let last = (first + TURN).min(turns.end);
        let mut runs = Vec::with_capacity(last - first);
        if !stretch_into(imp, &mut walk, &mut rec, first, last, slot, &mut runs) {
            turns.stop.store(true, Ordering::Relaxed);
        }
        taken.push((first, runs));
    }
    crate::cases::mark(slot, 0);
    taken
}

/// Cases `start..end` of `blocks`, in order, on this thread, marked in `slot` of the shared
/// page ([`crate::cases::mark`]) as they run.
fn run_stretch(
    imp: RetryFn,
    blocks: &[space::Block],
    start: usize,
    end: usize,
    slot: usize,
) -> Vec<CaseRun> {
    let mut runs = Vec::with_capacity(end.saturating_sub(start));
    let mut walk = space::Walk::new(blocks);
    stretch_into(
        imp,
        &mut walk,
        &mut Recording::empty(),
        start,
        end,
        slot,
        &mut runs,
    );
    crate::cases::mark(slot, 0);
    runs
}

/// Runs cases `start..end` of `walk`'s space into `runs`; false when a case reached a
/// `todo!()` (its run is the last one added).
fn stretch_into(
    imp: RetryFn,
    walk: &mut space::Walk<'_>,
    rec: &mut Recording,
    start: usize,
    end: usize,
    slot: usize,
    runs: &mut Vec<CaseRun>,
) -> bool {
    for index in start..end {
        let (policy, script) = walk.case(index);
        crate::cases::mark(slot, index as u64 + 1);
        let case = match run(rec, imp, policy, script, None) {
            None => match rec.digest() {
                Some(digest) => CaseRun::Digest(digest),
                None => CaseRun::Full(Box::new(rec.clone())),
            },
            Some(ending) => {
                let stub =
                    matches!(&ending, Ending::Panicked(p) if panics::is_stub_panic(&p.message));
                runs.push(CaseRun::Ended(Box::new(ending)));
                if stub {
                    return false;
                }
                continue;
            }
        };
        runs.push(case);
    }
    true
}

impl Wire for Callback {
    fn put(&self, out: &mut Vec<u8>) {
        let i = Callback::ALL.iter().position(|c| c == self).unwrap_or(0);
        out.push(i as u8);
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        Callback::ALL.get(u8::take(input)? as usize).copied()
    }
}

wire_struct!(Script { steps, repeat_last });

wire_struct!(Recording {
    calls,
    waits,
    events,
    order,
    result
});

wire_struct!(panics::Reported {
    message,
    location,
    frames
});

impl Wire for Ending {
    fn put(&self, out: &mut Vec<u8>) {
        match self {
            Ending::Panicked(p) => {
                out.push(0);
                p.put(out);
            }
            Ending::Deliberate(c) => {
                out.push(1);
                c.put(out);
            }
            Ending::Guard(m) => {
                out.push(2);
                m.put(out);
            }
        }
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        Some(match u8::take(input)? {
            0 => Ending::Panicked(panics::Reported::take(input)?),
            1 => Ending::Deliberate(Callback::take(input)?),
            2 => Ending::Guard(String::take(input)?),
            _ => return None,
        })
    }
}

impl Wire for CaseRun {
    fn put(&self, out: &mut Vec<u8>) {
        match self {
            CaseRun::Digest(d) => {
                out.push(0);
                d.put(out);
            }
            CaseRun::Full(r) => {
                out.push(1);
                r.put(out);
            }
            CaseRun::Ended(e) => {
                out.push(2);
                e.put(out);
            }
        }
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        Some(match u8::take(input)? {
            0 => CaseRun::Digest(u64::take(input)?),
            1 => CaseRun::Full(Box::new(Recording::take(input)?)),
            2 => CaseRun::Ended(Box::new(Ending::take(input)?)),
            _ => return None,
        })
    }
}

impl Wire for Ask {
    fn put(&self, out: &mut Vec<u8>) {
        match self {
            Ask::Record {
                policy,
                script,
                panic_in,
            } => {
                out.push(0);
                policy.put(out);
                script.put(out);
                panic_in.put(out);
            }
            Ask::Space { start, count } => {
                out.push(1);
                start.put(out);
                count.put(out);
            }
        }
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        Some(match u8::take(input)? {
            0 => Ask::Record {
                policy: RetryPolicy::take(input)?,
                script: Script::take(input)?,
                panic_in: Wire::take(input)?,
            },
            1 => Ask::Space {
                start: usize::take(input)?,
                count: usize::take(input)?,
            },
            _ => return None,
        })
    }
}

impl Wire for Told {
    fn put(&self, out: &mut Vec<u8>) {
        match self {
            Told::Recorded { recording, ending } => {
                out.push(0);
                recording.put(out);
                ending.put(out);
            }
            Told::Space(runs) => {
                out.push(1);
                runs.put(out);
            }
        }
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        Some(match u8::take(input)? {
            0 => Told::Recorded {
                recording: Recording::take(input)?,
                ending: Wire::take(input)?,
            },
            1 => Told::Space(Vec::take(input)?),
            _ => return None,
        })
    }
}

/// What a runner keeps between one check's questions: nothing.
pub(crate) type State = ();

/// How many threads besides the main one a check's questions run the function on, from its
/// first question: one for the exhaustive check's questions of the space (its two threads
/// take turns), none for a named check's runs (a worker costs each check a thread and a
/// filter to start). A later question of the space without the worker runs on the main
/// thread alone: the same answer.
pub(crate) fn workers(first: &[u8]) -> usize {
    match wire::decode::<Ask>(first) {
        Some(Ask::Space { .. }) => 1,
        _ => 0,
    }
}

/// [`serve`] on a request's bytes; `None` when they are not a request.
pub(crate) fn serve_bytes(imp: RetryFn, ask: &[u8], _: &mut State) -> Option<Vec<u8>> {
    let ask: Ask = wire::decode(ask)?;
    Some(wire::encode(&serve(imp, &ask)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kit_types::graded::Reply;
    use kit_types::{RequestError, RetryError, RetryEvent};

    /// One call of `request`, and a wait of the policy's base delay after a failure: runs
    /// that differ from case to case, cheaply.
    fn once(
        policy: &RetryPolicy,
        request: &mut dyn FnMut() -> Result<Reply, RequestError>,
        sleep: &mut dyn FnMut(f64),
        _log: &mut dyn FnMut(RetryEvent),
    ) -> Result<Reply, RetryError> {
        match request() {
            Ok(reply) => Ok(reply),
            Err(RequestError::Permanent(e)) => Err(e.into()),
            Err(RequestError::Transient(_)) => {
                sleep(policy.base_delay);
                Ok(Reply::Null)
            }
        }
    }

    /// [`once`], but unfinished for policies of five attempts (cases in the middle of the
    /// space).
    fn unfinished_at_five(
        policy: &RetryPolicy,
        request: &mut dyn FnMut() -> Result<Reply, RequestError>,
        sleep: &mut dyn FnMut(f64),
        log: &mut dyn FnMut(RetryEvent),
    ) -> Result<Reply, RetryError> {
        if policy.max_attempts == 5 {
            todo!()
        }
        once(policy, request, sleep, log)
    }

    /// The runner's worker, as a confined runner has it.
    fn with_worker() {
        crate::cases::Workers::start(1);
        if cfg!(target_os = "linux") {
            assert_eq!(crate::cases::workers(), 1, "the worker started");
        }
    }

    #[test]
    fn a_question_shared_in_turns_is_answered_as_one_thread_answers_it() {
        with_worker();
        let blocks = space::shared();
        let total = space::total(blocks);
        for (start, count) in [(0, 5000), (1000, 20_000), (total - 3000, 3000), (7, 1500)] {
            let end = (start + count).min(total);
            // As text: a recording can hold a NaN wait, which is not equal to itself.
            assert_eq!(
                format!("{:?}", run_space(once, start, count)),
                format!("{:?}", run_stretch(once, blocks, start, end, 0)),
                "cases {start}..{end}"
            );
        }
    }

    #[test]
    fn a_todo_in_a_shared_question_ends_the_answer_at_its_case() {
        with_worker();
        let blocks = space::shared();
        let total = space::total(blocks);
        // A block of five attempts with several turns of other cases before it.
        let first_five = blocks
            .iter()
            .filter(|b| b.policy.max_attempts == 5 && b.start > 4 * TURN)
            .find(|b| {
                blocks
                    .iter()
                    .filter(|o| o.policy.max_attempts == 5 && o.start < b.start)
                    .all(|o| o.start + o.count + 3 * TURN + 5 <= b.start)
            })
            .map(|b| b.start)
            .expect("the space has policies of five attempts, apart");
        let start = first_five - 3 * TURN - 5;
        let answer = run_space(unfinished_at_five, start, total - start);
        assert_eq!(answer.len(), first_five - start + 1, "up to the todo!()");
        assert!(matches!(
            answer.last(),
            Some(CaseRun::Ended(ending))
                if matches!(&**ending, Ending::Panicked(p) if panics::is_stub_panic(&p.message))
        ));
        assert_eq!(
            format!("{answer:?}"),
            format!(
                "{:?}",
                run_stretch(unfinished_at_five, blocks, start, total, 0)
            )
        );
    }
}

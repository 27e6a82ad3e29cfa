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
use crate::wire::{self, Wire};
use kit_types::graded::RetryFn;
use kit_types::RetryPolicy;
use recording::{record_into, Callback, Recording, Script};
use std::panic::{self as std_panic, AssertUnwindSafe};

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

/// The fewest cases a question of the space must hold to be split between two threads.
const SPLIT_FROM: usize = 1024;

/// Cases `start..start + count` of the space, in order; on two threads when there are
/// enough (the machines the kit runs on have at least two cores, and the judge waits): this
/// one and the runner's worker ([`crate::cases::on_worker`]).
fn run_space(imp: RetryFn, start: usize, count: usize) -> Vec<CaseRun> {
    let blocks = space::shared();
    let end = start.saturating_add(count).min(space::total(blocks));
    if end.saturating_sub(start) < SPLIT_FROM {
        return run_stretch(imp, blocks, start, end, 0);
    }
    let middle = start + (end - start) / 2;
    // The later half on the runner's worker thread (a confined runner starts no other);
    // without one, all of it here.
    let later = crate::cases::on_worker(move || run_stretch(imp, blocks, middle, end, 1));
    let Some(later) = later else {
        return run_stretch(imp, blocks, start, end, 0);
    };
    let mut first = run_stretch(imp, blocks, start, middle, 0);
    // A todo!() in the first half ends the answer there.
    if first.len() == middle - start {
        // A worker that took no job (it could not refuse threads), or died: the later half
        // runs here.
        let second = later
            .recv()
            .unwrap_or_else(|_| run_stretch(imp, blocks, middle, end, 0));
        first.extend(second);
    }
    first
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
    let runs = stretch(imp, blocks, start, end, slot);
    crate::cases::mark(slot, 0);
    runs
}

fn stretch(
    imp: RetryFn,
    blocks: &[space::Block],
    start: usize,
    end: usize,
    slot: usize,
) -> Vec<CaseRun> {
    let mut runs = Vec::with_capacity(end.saturating_sub(start));
    let mut rec = Recording::empty();
    let mut walk = space::Walk::new(blocks);
    for index in start..end {
        let (policy, script) = walk.case(index);
        crate::cases::mark(slot, index as u64 + 1);
        let case = match run(&mut rec, imp, policy, script, None) {
            None => match rec.digest() {
                Some(digest) => CaseRun::Digest(digest),
                None => CaseRun::Full(Box::new(rec.clone())),
            },
            Some(ending) => {
                let stub =
                    matches!(&ending, Ending::Panicked(p) if panics::is_stub_panic(&p.message));
                runs.push(CaseRun::Ended(Box::new(ending)));
                if stub {
                    return runs;
                }
                continue;
            }
        };
        runs.push(case);
    }
    runs
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

impl Wire for Script {
    fn put(&self, out: &mut Vec<u8>) {
        self.steps.put(out);
        self.repeat_last.put(out);
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        Some(Script {
            steps: Vec::take(input)?,
            repeat_last: bool::take(input)?,
        })
    }
}

impl Wire for Recording {
    fn put(&self, out: &mut Vec<u8>) {
        self.calls.put(out);
        self.waits.put(out);
        self.events.put(out);
        self.order.put(out);
        self.result.put(out);
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        Some(Recording {
            calls: u32::take(input)?,
            waits: Vec::take(input)?,
            events: Vec::take(input)?,
            order: Vec::take(input)?,
            result: Wire::take(input)?,
        })
    }
}

impl Wire for panics::Reported {
    fn put(&self, out: &mut Vec<u8>) {
        self.message.put(out);
        self.location.put(out);
        self.frames.put(out);
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        Some(panics::Reported {
            message: String::take(input)?,
            location: Wire::take(input)?,
            frames: Vec::take(input)?,
        })
    }
}

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

/// How many threads besides the main one its questions run the function on.
pub(crate) const WORKERS: usize = 1;

/// [`serve`] on a request's bytes; `None` when they are not a request.
pub(crate) fn serve_bytes(imp: RetryFn, ask: &[u8], _: &mut State) -> Option<Vec<u8>> {
    let ask: Ask = wire::decode(ask)?;
    Some(wire::encode(&serve(imp, &ask)))
}

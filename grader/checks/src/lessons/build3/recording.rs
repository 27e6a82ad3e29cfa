//! Runs an implementation against a scripted request and records every callback: here, or
//! in the runner that holds the learner's code ([`Learner::Runner`]), which records the
//! same way and sends what it recorded ([`kit_runner::build3`]).
//!
//! Nothing here really sleeps: `sleep` only writes the planned delay down.

use super::Learner;
use crate::panics::{CheckFailure, DeliberatePanic};
use kit_runner::build3::{Ask, Ending, Told};
use kit_runner::wire;
use kit_types::RetryPolicy;
use std::panic;

pub use kit_runner::build3::recording::{
    describe_error, describe_outcome, fmt_events, fmt_result, fmt_waits, fresh, same_events,
    Callback, Recording, Script, CALL_GUARD,
};

/// Runs `imp` once on `policy` and `script`; with `panic_in`, that callback panics with
/// [`DeliberatePanic`] each time it is called.
///
/// Returns the recording and, when the run panicked, the panic's payload, so that the
/// caller decides what a panic means. Panics raised by the grader's own guards
/// ([`CheckFailure`]) are passed on unchanged.
pub fn record(
    imp: &Learner,
    policy: &RetryPolicy,
    script: &Script,
    panic_in: Option<Callback>,
) -> (Recording, Option<Box<dyn std::any::Any + Send>>) {
    let mut rec = Recording::empty();
    let payload = record_into(&mut rec, imp, policy, script, panic_in);
    (rec, payload)
}

/// [`record`] into `rec`, whose buffers are cleared and reused: the exhaustive check records
/// hundreds of thousands of runs.
pub fn record_into(
    rec: &mut Recording,
    imp: &Learner,
    policy: &RetryPolicy,
    script: &Script,
    panic_in: Option<Callback>,
) -> Option<Box<dyn std::any::Any + Send>> {
    let runner = match imp {
        Learner::Here(f) => {
            let payload =
                kit_runner::build3::recording::record_into(rec, *f, policy, script, panic_in);
            if let Some(p) = &payload {
                crate::serve::note_if_learners(p.as_ref(), || super::checks::input(policy, script));
            }
            return payload;
        }
        Learner::Runner(runner) => runner,
    };
    let ask = wire::encode(&Ask::Record {
        policy: policy.clone(),
        script: script.clone(),
        panic_in,
    });
    let (recording, ending) = runner.ask(&ask, |bytes| match wire::decode(bytes)? {
        Told::Recorded { recording, ending } => {
            consistent(&recording, ending.as_ref(), panic_in).then_some((recording, ending))
        }
        Told::Space(_) => None,
    });
    *rec = recording;
    match ending? {
        Ending::Panicked(reported) => {
            crate::feedback::note_panicked_input(super::checks::input(policy, script));
            Some(Box::new(reported))
        }
        // Only the panic this question asked for is the check's own: any other is a claim
        // of the runner's, and a runner's panic is the learner's.
        Ending::Deliberate(callback) if panic_in == Some(callback) => {
            Some(Box::new(DeliberatePanic(callback.name())))
        }
        Ending::Deliberate(callback) => Some(Box::new(crate::panics::Reported {
            message: format!(
                "the process that ran your code said the check's deliberate panic in \
                 {callback} came out, but this question made none"
            ),
            location: None,
            frames: Vec::new(),
        })),
        Ending::Guard(message) => panic::resume_unwind(Box::new(CheckFailure(message))),
    }
}

/// Whether a recording a runner sent could have been made by recording a run that ended
/// so: its counts agree with the order of the callbacks, and it has a result exactly when
/// the run returned. A callback that panicked on purpose, or was stopped by a guard, was
/// entered but recorded nothing: its count may be one more than what it recorded.
pub(super) fn consistent(
    rec: &Recording,
    ending: Option<&Ending>,
    panic_in: Option<Callback>,
) -> bool {
    let count = |c: Callback| rec.order.iter().filter(|o| **o == c).count();
    let entered = |c: Callback, recorded: usize| {
        let slack = match ending {
            Some(Ending::Guard(_)) => 1,
            _ => usize::from(panic_in == Some(c)),
        };
        (recorded..=recorded + slack).contains(&count(c))
    };
    count(Callback::Request) == rec.calls as usize
        && entered(Callback::Sleep, rec.waits.len())
        && entered(Callback::Log, rec.events.len())
        && rec.result.is_some() != ending.is_some()
}

//! One call of a fetcher on a scripted exchange: what the transport was asked, and what the
//! fetcher returned. Here, or in the runner that holds the learner's code
//! ([`Learner::Runner`]), which records the same way and sends what it recorded
//! ([`kit_runner::build2`]).

use super::Learner;
use kit_runner::build2::{Ask, Told};
use kit_runner::wire;

pub use kit_runner::build2::call::{
    describe_exchange, describe_result, excerpt, same_result, Call, Exchange, Recorded, URL,
};

/// What one call did, or the payload of its fetcher's panic (for the caller to judge).
pub type Ran = Result<Recorded, Box<dyn std::any::Any + Send>>;

/// Runs `learner` on `call`. A panic of the fetcher is returned as its payload, for the
/// caller to judge.
pub(crate) fn record(learner: &Learner, call: &Call) -> Ran {
    match learner {
        Learner::Here(f) => {
            let ran = kit_runner::build2::call::record(*f, call);
            if let Err(payload) = &ran {
                note_input(payload.as_ref(), call);
            }
            ran
        }
        Learner::Runner(_) => record_all(learner, std::slice::from_ref(call))
            .pop()
            .unwrap_or_else(|| Err(Box::new(unanswered()))),
    }
}

/// [`record`] for each of `calls`, in order; in a runner, in one question. Shorter than
/// `calls` when one reached `todo!()`: the rest would only say it again.
pub(crate) fn record_all(learner: &Learner, calls: &[Call]) -> Vec<Ran> {
    let runner = match learner {
        Learner::Here(_) => {
            let mut runs = Vec::with_capacity(calls.len());
            for call in calls {
                let ran = record(learner, call);
                let stub = ran.as_ref().err().is_some_and(|payload| {
                    crate::panics::is_stub_panic(&crate::panics::panic_message(payload.as_ref()))
                });
                runs.push(ran);
                if stub {
                    break;
                }
            }
            return runs;
        }
        Learner::Runner(runner) => runner,
    };
    let ask = wire::encode(&Ask(calls.to_vec()));
    let Told(runs) = runner.ask(&ask, |bytes| {
        let told: Told = wire::decode(bytes)?;
        // At most one per call, and fewer only after a todo!().
        let ended_early = told.0.last().is_some_and(|last| {
            last.as_ref()
                .err()
                .is_some_and(|p| crate::panics::is_stub_panic(&p.message))
        });
        (told.0.len() == calls.len() || (ended_early && told.0.len() < calls.len())).then_some(told)
    });
    runs.into_iter()
        .zip(calls)
        .map(|(run, call)| {
            run.map_err(|reported| {
                let payload = Box::new(reported) as Box<dyn std::any::Any + Send>;
                note_input(payload.as_ref(), call);
                payload
            })
        })
        .collect()
}

/// Notes `call` as the input a panic of the learner's shows, when `payload` is one.
fn note_input(payload: &(dyn std::any::Any + Send), call: &Call) {
    crate::serve::note_if_learners(payload, || {
        vec![crate::view::Field::line("call", call.describe())]
    });
}

/// The panic raised for an answer that holds no run (which a runner never sends).
fn unanswered() -> crate::panics::Reported {
    crate::panics::Reported {
        message: "the process that ran your code answered with no run of it".into(),
        location: None,
        frames: Vec::new(),
    }
}

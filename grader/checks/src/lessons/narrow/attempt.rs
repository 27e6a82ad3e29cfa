//! One attempt handed to a handler: what its request does ([`Given`]) and what the handler
//! did ([`Ran`]). Here, or in the runner that holds the learner's code
//! ([`Learner::Runner`]), which records the same way ([`kit_runner::narrow`]).

use super::Learner;
use crate::panics::is_stub_panic;
use kit_runner::narrow::{Ask, Told};
use kit_runner::wire;
use kit_types::{Handled, PermanentError, RequestError, TransientError};

pub use kit_runner::narrow::{Given, Ran, Returned};

/// Hands each of `attempts` to `learner`, in order; in a runner, in one question. Shorter
/// than `attempts` only when one reached `todo!()` (the last one then says so).
pub fn record_all(learner: &Learner, attempts: &[Given]) -> Vec<Ran> {
    let runner = match learner {
        Learner::Here(f) => {
            let mut runs = Vec::with_capacity(attempts.len());
            for given in attempts {
                let ran = kit_runner::narrow::run(*f, given);
                let stub = ran
                    .ended
                    .as_ref()
                    .err()
                    .is_some_and(|p| is_stub_panic(&p.message));
                runs.push(ran);
                if stub {
                    break;
                }
            }
            return runs;
        }
        Learner::Runner(runner) => runner,
    };
    let ask = wire::encode(&Ask(attempts.to_vec()));
    let Told(runs) = runner.ask(&ask, |bytes| {
        let told: Told = wire::decode(bytes)?;
        let ended_early = told.0.last().is_some_and(|last| {
            last.ended
                .as_ref()
                .err()
                .is_some_and(|p| is_stub_panic(&p.message))
        });
        let calls_possible = told.0.iter().all(|r| r.calls <= 1);
        let complete =
            told.0.len() == attempts.len() || (ended_early && told.0.len() < attempts.len());
        (complete && calls_possible).then_some(told)
    });
    runs
}

/// The attempt as the lesson speaks of it: `request → Ok({"state":"done"})`,
/// `request → transient rate_limited, retry_after 2.0`, `request → panics "boom"`.
pub(crate) fn describe_given(given: &Given) -> String {
    match given {
        Given::Returns(v) => format!("request → Ok({v})"),
        Given::Fails(e) => format!("request → {}", describe_error(e)),
        Given::Panics(m) => format!("request → panics {m:?}"),
    }
}

/// An error in its declared fields: `transient timeout, no retry_after`,
/// `permanent not_found, status 404`. Its `detail` is never shown: it may be private.
pub(crate) fn describe_error(error: &RequestError) -> String {
    match error {
        RequestError::Transient(t) => format!("transient {}, {}", t.reason, wait(t.retry_after)),
        RequestError::Permanent(p) => match p.status {
            Some(s) => format!("permanent {}, status {s}", p.kind),
            None => format!("permanent {}, no status", p.kind),
        },
    }
}

fn wait(retry_after: Option<f64>) -> String {
    match retry_after {
        Some(w) => format!("retry_after {w:?}"),
        None => "no retry_after".into(),
    }
}

/// What the handler returned, as the lesson speaks of it: `value {"state":"done"}`,
/// `try again: rate_limited, retry_after 2.0`, `back to the caller: permanent not_found,
/// status 404`.
pub(crate) fn describe_returned(returned: &Returned) -> String {
    match returned {
        Ok(Handled::Value(v)) => format!("value {v}"),
        Ok(Handled::TryAgain {
            reason,
            retry_after,
        }) => format!("try again: {reason}, {}", wait(*retry_after)),
        Err(e) => format!("back to the caller: {}", describe_error(e)),
    }
}

/// What the handler did, in a few words: its return, or its panic.
pub(crate) fn describe_ran(ran: &Ran) -> String {
    let ended = match &ran.ended {
        Ok(returned) => describe_returned(returned),
        Err(panic) => format!("panicked: {:?}", panic.message),
    };
    match ran.calls {
        1 => ended,
        0 => format!("{ended} (request not called)"),
        n => format!("{ended} (request called {n} times)"),
    }
}

/// Whether two returns are the same in every field, `detail` and the bits of a wait
/// included: "unchanged" means the very error.
pub(crate) fn same_returned(a: &Returned, b: &Returned) -> bool {
    match (a, b) {
        (Ok(Handled::Value(x)), Ok(Handled::Value(y))) => x == y,
        (
            Ok(Handled::TryAgain {
                reason: r,
                retry_after: w,
            }),
            Ok(Handled::TryAgain {
                reason: s,
                retry_after: v,
            }),
        ) => r == s && same_wait(*w, *v),
        (Err(x), Err(y)) => same_error(x, y),
        _ => false,
    }
}

fn same_wait(a: Option<f64>, b: Option<f64>) -> bool {
    match (a, b) {
        (Some(x), Some(y)) => x.to_bits() == y.to_bits(),
        (x, y) => x.is_none() && y.is_none(),
    }
}

/// Whether two errors are the very same: every field, `detail` included.
pub(crate) fn same_error(a: &RequestError, b: &RequestError) -> bool {
    match (a, b) {
        (RequestError::Transient(x), RequestError::Transient(y)) => same_transient(x, y),
        (RequestError::Permanent(x), RequestError::Permanent(y)) => same_permanent(x, y),
        _ => false,
    }
}

fn same_transient(a: &TransientError, b: &TransientError) -> bool {
    a.reason == b.reason && same_wait(a.retry_after, b.retry_after) && a.detail == b.detail
}

fn same_permanent(a: &PermanentError, b: &PermanentError) -> bool {
    a.kind == b.kind && a.status == b.status && a.detail == b.detail
}

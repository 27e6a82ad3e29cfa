//! narrow · `handle_attempt`: one attempt handed to the learner's handler ([`Given`]), and
//! what the handler did with it ([`Ran`]). The judge asks a runner for a list of attempts
//! ([`Ask`]) and hears back, per attempt, how many times the request was called and what
//! the handler returned, or the panic that came out of it ([`Told`]).

use crate::panics::{self, Reported};
use crate::wire::{self, wire_struct, Wire};
use kit_types::narrow::{AttemptFn, Request};
use kit_types::{Handled, RequestError};
use serde_json::Value;
use std::cell::Cell;
use std::panic::{self as std_panic, AssertUnwindSafe};

/// What the request of one attempt does when it is called.
#[derive(Debug, Clone, PartialEq)]
pub enum Given {
    /// It succeeds with this value.
    Returns(Value),
    /// It fails with this error.
    Fails(RequestError),
    /// It panics with this message.
    Panics(String),
}

/// What the handler returned.
pub type Returned = Result<Handled<Value>, RequestError>;

/// What one attempt came to.
#[derive(Debug, Clone, PartialEq)]
pub struct Ran {
    /// How many times the handler called the request.
    pub calls: usize,
    /// What the handler returned, or the panic that came out of it.
    pub ended: Result<Returned, Reported>,
}

/// What the judge asks a narrow runner: hand each of these attempts to the handler, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Ask(pub Vec<Given>);

/// What a narrow runner says: per attempt, what the handler did. Shorter than asked when an
/// attempt reached `todo!()` (the last one then says so).
#[derive(Debug, Clone, PartialEq)]
pub struct Told(pub Vec<Ran>);

/// What a runner keeps between one check's questions: nothing.
pub type State = ();

/// How many threads besides the main one a check's questions run the function on, from its
/// first question: none, every question runs on the main thread (a worker costs each check a
/// thread and a filter to start, grader/benches/README.md).
pub fn workers(_first: &[u8]) -> usize {
    0
}

/// Hands `given` to `handler` once, and records what it did. Any panic that comes out of
/// the handler — its own, or the request's it let through — is recorded, not raised.
pub fn run(handler: AttemptFn, given: &Given) -> Ran {
    let calls = Cell::new(0usize);
    let request: Request<'_> = Box::new(|| {
        calls.set(calls.get() + 1);
        match given {
            Given::Returns(value) => Ok(value.clone()),
            Given::Fails(error) => Err(error.clone()),
            // Unwinds as a panic does, without the panic hook: the request's panic is the
            // check's own input, and printing it would read as the learner's.
            Given::Panics(message) => std_panic::resume_unwind(Box::new(message.clone())),
        }
    });
    let ended = std_panic::catch_unwind(AssertUnwindSafe(|| handler(request)))
        .map_err(|payload| Reported::of(payload.as_ref()));
    Ran {
        calls: calls.get(),
        ended,
    }
}

/// Answers one question, in a runner.
pub(crate) fn serve(handler: AttemptFn, ask: &Ask) -> Told {
    let mut runs = Vec::with_capacity(ask.0.len());
    for given in &ask.0 {
        let ran = run(handler, given);
        let stub = ran
            .ended
            .as_ref()
            .err()
            .is_some_and(|p| panics::is_stub_panic(&p.message));
        runs.push(ran);
        if stub {
            break;
        }
    }
    Told(runs)
}

/// [`serve`] on a question's bytes; `None` when they are not a question.
pub(crate) fn serve_bytes(handler: AttemptFn, ask: &[u8], _: &mut State) -> Option<Vec<u8>> {
    let ask: Ask = wire::decode(ask)?;
    Some(wire::encode(&serve(handler, &ask)))
}

impl Wire for Given {
    fn put(&self, out: &mut Vec<u8>) {
        match self {
            Given::Returns(v) => {
                out.push(0);
                v.put(out);
            }
            Given::Fails(e) => {
                out.push(1);
                e.put(out);
            }
            Given::Panics(m) => {
                out.push(2);
                m.put(out);
            }
        }
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        Some(match u8::take(input)? {
            0 => Given::Returns(<Value as Wire>::take(input)?),
            1 => Given::Fails(RequestError::take(input)?),
            2 => Given::Panics(String::take(input)?),
            _ => return None,
        })
    }
}

impl Wire for Handled<Value> {
    fn put(&self, out: &mut Vec<u8>) {
        match self {
            Handled::Value(v) => {
                out.push(0);
                v.put(out);
            }
            Handled::TryAgain {
                reason,
                retry_after,
            } => {
                out.push(1);
                reason.put(out);
                retry_after.put(out);
            }
        }
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        Some(match u8::take(input)? {
            0 => Handled::Value(<Value as Wire>::take(input)?),
            1 => Handled::TryAgain {
                reason: Wire::take(input)?,
                retry_after: Wire::take(input)?,
            },
            _ => return None,
        })
    }
}

wire_struct!(Ran { calls, ended });

impl Wire for Ask {
    fn put(&self, out: &mut Vec<u8>) {
        self.0.put(out);
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        Some(Ask(Wire::take(input)?))
    }
}

impl Wire for Told {
    fn put(&self, out: &mut Vec<u8>) {
        self.0.put(out);
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        Some(Told(Wire::take(input)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kit_types::{PermanentError, PermanentKind, TransientError, TransientReason};

    #[test]
    fn a_question_and_its_answer_cross_the_wire_unchanged() {
        let ask = Ask(vec![
            Given::Returns(serde_json::json!({"job_id": "fresh_3"})),
            Given::Fails(
                TransientError::new(TransientReason::Timeout)
                    .with_retry_after(1.5)
                    .into(),
            ),
            Given::Fails(
                PermanentError::new(PermanentKind::NotFound)
                    .with_status(404)
                    .into(),
            ),
            Given::Panics("boom".into()),
        ]);
        assert_eq!(wire::decode::<Ask>(&wire::encode(&ask)), Some(ask.clone()));
        let told = serve(|r| kit_types_handle(r), &ask);
        assert_eq!(told.0.len(), 4);
        assert_eq!(
            wire::decode::<Told>(&wire::encode(&told)),
            Some(told.clone())
        );
        assert_eq!(told.0[3].ended.as_ref().unwrap_err().message, "boom");
        assert!(told.0.iter().all(|r| r.calls == 1));
    }

    /// A handler written here (the runner never holds the reference).
    fn kit_types_handle(request: Request<'_>) -> Returned {
        match request() {
            Ok(v) => Ok(Handled::Value(v)),
            Err(RequestError::Transient(t)) => Ok(Handled::TryAgain {
                reason: t.reason,
                retry_after: t.retry_after,
            }),
            Err(e) => Err(e),
        }
    }
}

//! build2 · `fetch`: one call of a fetcher on a scripted exchange ([`call`]), and what the
//! judge asks a runner and hears back: a list of calls, run in order, and per call what
//! the fetcher did ([`Ask`], [`Told`]). The exhaustive check sends its cases a chunk at a
//! time; the reference's side of each stays with the judge.

pub mod call;

use crate::panics::{self, Reported};
use crate::wire::{self, wire_struct, Wire};
use call::{record, Call, Exchange, Recorded};
use kit_types::graded::FetchFn;
use kit_types::HttpReply;

/// What the judge asks a build2 runner: run these calls, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Ask(pub Vec<Call>);

/// What a build2 runner says: per call, what the fetcher did, or its panic. Shorter than
/// asked when a call reached `todo!()` (the last one then says so).
#[derive(Debug, Clone, PartialEq)]
pub struct Told(pub Vec<Result<Recorded, Reported>>);

/// Runs one request on the learner's `fetch`, in a runner.
pub fn serve(imp: FetchFn, ask: &Ask) -> Told {
    let mut runs = Vec::with_capacity(ask.0.len());
    for call in &ask.0 {
        match record(imp, call) {
            Ok(recorded) => runs.push(Ok(recorded)),
            Err(payload) => {
                let reported = Reported::of(payload.as_ref());
                let stub = panics::is_stub_panic(&reported.message);
                runs.push(Err(reported));
                if stub {
                    break;
                }
            }
        }
    }
    Told(runs)
}

/// What a runner keeps between one check's questions: nothing.
pub(crate) type State = ();

/// How many threads besides the main one a check's questions run the function on, from its
/// first question: none, every question runs on the main thread (a worker costs each check a
/// thread and a filter to start, grader/benches/README.md).
pub(crate) fn workers(_first: &[u8]) -> usize {
    0
}

/// [`serve`] on a request's bytes; `None` when they are not a request.
pub(crate) fn serve_bytes(imp: FetchFn, ask: &[u8], _: &mut State) -> Option<Vec<u8>> {
    let ask: Ask = wire::decode(ask)?;
    Some(wire::encode(&serve(imp, &ask)))
}

wire_struct!(HttpReply {
    status,
    headers,
    body
});

impl Wire for Exchange {
    fn put(&self, out: &mut Vec<u8>) {
        match self {
            Exchange::Reply(r) => {
                out.push(0);
                r.put(out);
            }
            Exchange::Fails(f) => {
                out.push(1);
                f.put(out);
            }
        }
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        Some(match u8::take(input)? {
            0 => Exchange::Reply(HttpReply::take(input)?),
            1 => Exchange::Fails(Wire::take(input)?),
            _ => return None,
        })
    }
}

wire_struct!(Call {
    method,
    url,
    exchange
});

wire_struct!(Recorded {
    transport_calls,
    result
});

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

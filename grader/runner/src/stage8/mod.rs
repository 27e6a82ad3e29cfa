//! stage8 · `lookup_availability`: a gateway a check sets up and the lookups it runs on it
//! ([`session`]), and what the judge asks a runner and hears back.
//!
//! A check's gateway lives in the runner for the whole check: the judge sets it up
//! ([`Ask::Start`]), then asks for lookups one at a time, and after each hears what the
//! lookup returned and what the gateway saw meanwhile (provider calls, sleeps, counters,
//! breaker, clock). Two questions run lookups at once, as their checks need: many threads
//! of lookups ([`Ask::Concurrent`]) and the half-open probe race ([`Ask::Race`]). The
//! exhaustive check asks for a stretch of its [`space`] ([`Ask::Space`]) and hears one
//! digest per case; the reference's digests stay with the judge.

pub mod session;
pub mod space;

use crate::panics::{CheckFailure, Reported};
use crate::wire::{self, wire_struct, Wire};
use kit_types::gateway::fakes::{Call, LoopGuard, Sleep, Step};
use kit_types::gateway::Counters;
use kit_types::graded::LookupFn;
use kit_types::{
    Availability, BreakerState, Failure, FailureCode, GatewayConfig, Lookup, Outcome, ProviderReply,
};
use session::{Payload, Reply, Script, Seen, Session, Setup, Totals};
use space::CaseRun;

/// What the judge asks a stage8 runner.
#[derive(Debug, Clone, PartialEq)]
pub enum Ask {
    /// A fresh gateway, in place of any before.
    Start(Setup),
    /// `after` seconds pass on the clock; then one lookup of `item`.
    Lookup {
        /// The item.
        item: String,
        /// Seconds the clock moves first.
        after: f64,
    },
    /// Many lookups at once ([`Session::concurrent`]).
    Concurrent {
        /// How many threads.
        threads: usize,
        /// How many lookups each.
        per_thread: usize,
    },
    /// The probe race ([`Session::race`]).
    Race {
        /// The item both lookups ask for.
        item: String,
        /// Seconds the clock moves first.
        after: f64,
    },
    /// Cases `start..start + count` (0-based) of the exhaustive [`space`], each on a fresh
    /// gateway of its own (no check's gateway is needed or touched).
    Space {
        /// The first case.
        start: usize,
        /// How many.
        count: usize,
    },
    /// Case `index` (0-based) of the exhaustive [`space`], run as [`Ask::Space`] runs it and
    /// told in full: the run the judge compares with the reference's when its digest differs.
    Case {
        /// The case.
        index: usize,
    },
}

/// How a lookup ended when it did not return.
#[derive(Debug, Clone, PartialEq)]
pub enum Ending {
    /// The learner's code panicked.
    Panicked(Reported),
    /// A guard of the provider's script stopped it (the text says which).
    Guard(String),
    /// The fake clock's guard stopped it: it slept without end.
    Loop(String),
}

impl Ending {
    /// How a payload that came out of the learner's lookup ended it (call it at once: it
    /// reads the panic's location).
    pub(crate) fn of(payload: &Payload) -> Ending {
        if let Some(CheckFailure(message)) = payload.downcast_ref::<CheckFailure>() {
            return Ending::Guard(message.clone());
        }
        if let Some(LoopGuard(message)) = payload.downcast_ref::<LoopGuard>() {
            return Ending::Loop(message.clone());
        }
        Ending::Panicked(Reported::of(payload.as_ref()))
    }

    /// The payload the judge raises in the ending's place.
    pub fn into_payload(self) -> Payload {
        match self {
            Ending::Panicked(reported) => Box::new(reported),
            Ending::Guard(message) => Box::new(CheckFailure(message)),
            Ending::Loop(message) => Box::new(LoopGuard(message)),
        }
    }
}

/// What a stage8 runner says.
#[derive(Debug, Clone, PartialEq)]
pub enum Told {
    /// The answer to [`Ask::Start`]: the gateway is ready, or its configuration's error.
    Started(Result<(), String>),
    /// The answer to [`Ask::Lookup`].
    Looked {
        /// What the lookup returned, or how it ended.
        ran: Result<Lookup, Ending>,
        /// What the gateway saw meanwhile.
        seen: Seen,
    },
    /// The answer to [`Ask::Concurrent`]: per thread, each lookup's attempts, or how the
    /// thread ended; then the totals.
    Concurrent {
        /// Per thread.
        per_thread: Vec<Result<Vec<u32>, Ending>>,
        /// The gateway's totals after them all.
        totals: Totals,
    },
    /// The answer to [`Ask::Race`].
    Raced {
        /// The probe.
        probe: Result<Lookup, Ending>,
        /// The other lookups, when the probe was held in time for them.
        others: Vec<Result<Lookup, Ending>>,
        /// What the gateway saw meanwhile.
        seen: Seen,
    },
    /// The answer to [`Ask::Space`]: one per case, in order. Shorter than asked when a case
    /// reached `todo!()` (the last one then says so): the rest would only say it again.
    Space(Vec<CaseRun>),
    /// The answer to [`Ask::Case`]: the run, or how the case's gateway was refused.
    Case(Result<space::CaseRecord, Ending>),
}

fn ended(ran: Result<Lookup, Payload>) -> Result<Lookup, Ending> {
    ran.map_err(|payload| Ending::of(&payload))
}

/// Answers one question on the learner's `lookup_availability`, in a runner; `session` is
/// the check's gateway, kept between questions. `None` for a lookup before any gateway.
pub(crate) fn serve(f: LookupFn, ask: &Ask, session: &mut Option<Session>) -> Option<Told> {
    if let Ask::Space { start, count } = ask {
        return Some(Told::Space(space::run_stretch(f, *start, *count)));
    }
    if let Ask::Case { index } = ask {
        let case = space::Space::new().case(*index)?;
        // Marked as the space's cases are: a case that never ends is named.
        crate::cases::mark(0, *index as u64 + 1);
        let run = space::run_case(f, &case).map_err(|e| Ending::Guard(e.to_string()));
        crate::cases::mark(0, 0);
        return Some(Told::Case(run));
    }
    if let Ask::Start(setup) = ask {
        return Some(Told::Started(match Session::start(setup) {
            Ok(s) => {
                *session = Some(s);
                Ok(())
            }
            Err(e) => {
                *session = None;
                // The wire carries the refusal's words: the judge shows them as the runner's.
                Err(e.to_string())
            }
        }));
    }
    let s = session.as_mut()?;
    Some(match ask {
        Ask::Start(_) | Ask::Space { .. } | Ask::Case { .. } => unreachable!("answered above"),
        Ask::Lookup { item, after } => {
            let ran = ended(s.lookup(f, item, *after));
            Told::Looked {
                ran,
                seen: s.seen(),
            }
        }
        Ask::Concurrent {
            threads,
            per_thread,
        } => {
            let (per, totals) = s.concurrent(f, *threads, *per_thread);
            Told::Concurrent {
                per_thread: per
                    .into_iter()
                    .map(|r| r.map_err(|p| Ending::of(&p)))
                    .collect(),
                totals,
            }
        }
        Ask::Race { item, after } => {
            let (probe, others) = s.race(f, item, *after);
            Told::Raced {
                probe: ended(probe),
                others: others.into_iter().map(ended).collect(),
                seen: s.seen(),
            }
        }
    })
}

/// What a runner keeps between one check's questions: the check's gateway.
pub(crate) type State = Option<Session>;

/// How many threads besides the main one a check's questions run the function on, from its
/// first question: the concurrent lookups', for every check.
pub(crate) fn workers(_first: &[u8]) -> usize {
    session::THREADS
}

/// [`serve`] on a question's bytes; `None` when they are not a question it can answer.
pub(crate) fn serve_bytes(f: LookupFn, ask: &[u8], session: &mut State) -> Option<Vec<u8>> {
    let ask: Ask = wire::decode(ask)?;
    serve(f, &ask, session).map(|told| wire::encode(&told))
}

// ---------- the wire ----------

wire_struct!(GatewayConfig {
    deadline,
    max_attempts,
    attempt_timeout,
    base_delay,
    max_delay,
    failure_threshold,
    open_for,
});

wire_struct!(ProviderReply {
    status,
    body,
    retry_after
});

wire_struct!(Step { latency, reply });

impl Wire for Reply {
    fn put(&self, out: &mut Vec<u8>) {
        match self {
            Reply::Step(step) => {
                out.push(0);
                step.put(out);
            }
            Reply::Available { available, latency } => {
                out.push(1);
                available.put(out);
                latency.put(out);
            }
        }
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        Some(match u8::take(input)? {
            0 => Reply::Step(Step::take(input)?),
            1 => Reply::Available {
                available: bool::take(input)?,
                latency: f64::take(input)?,
            },
            _ => return None,
        })
    }
}

impl Wire for Script {
    fn put(&self, out: &mut Vec<u8>) {
        match self {
            Script::Sequence(steps) => {
                out.push(0);
                steps.put(out);
            }
            Script::Numbered {
                number,
                then,
                otherwise,
            } => {
                out.push(1);
                number.put(out);
                then.put(out);
                otherwise.put(out);
            }
            Script::From {
                from,
                before,
                after,
            } => {
                out.push(2);
                from.put(out);
                before.put(out);
                after.put(out);
            }
            Script::Patterns => out.push(3),
            Script::Probe => out.push(4),
            Script::Outcomes { replies, forever } => {
                out.push(5);
                replies.put(out);
                forever.put(out);
            }
        }
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        Some(match u8::take(input)? {
            0 => Script::Sequence(Wire::take(input)?),
            1 => Script::Numbered {
                number: u64::take(input)?,
                then: Step::take(input)?,
                otherwise: Step::take(input)?,
            },
            2 => Script::From {
                from: f64::take(input)?,
                before: Step::take(input)?,
                after: Step::take(input)?,
            },
            3 => Script::Patterns,
            4 => Script::Probe,
            5 => Script::Outcomes {
                replies: Wire::take(input)?,
                forever: bool::take(input)?,
            },
            _ => return None,
        })
    }
}

wire_struct!(Setup {
    config,
    per_thread,
    script
});

wire_struct!(Call {
    item_id,
    timeout,
    at,
    number,
    number_for_item,
    seq
});

wire_struct!(Sleep { at, secs, seq });

wire_struct!(Counters {
    logical_lookups,
    attempts
});

impl Wire for BreakerState {
    fn put(&self, out: &mut Vec<u8>) {
        match self {
            BreakerState::Closed { failures } => {
                out.push(0);
                failures.put(out);
            }
            BreakerState::Open { until } => {
                out.push(1);
                until.put(out);
            }
            BreakerState::HalfOpen { probing } => {
                out.push(2);
                probing.put(out);
            }
        }
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        Some(match u8::take(input)? {
            0 => BreakerState::Closed {
                failures: u32::take(input)?,
            },
            1 => BreakerState::Open {
                until: f64::take(input)?,
            },
            2 => BreakerState::HalfOpen {
                probing: bool::take(input)?,
            },
            _ => return None,
        })
    }
}

impl Wire for FailureCode {
    fn put(&self, out: &mut Vec<u8>) {
        let i = FailureCode::ALL.iter().position(|c| c == self).unwrap_or(0);
        out.push(i as u8);
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        FailureCode::ALL.get(u8::take(input)? as usize).copied()
    }
}

impl Wire for Outcome {
    fn put(&self, out: &mut Vec<u8>) {
        match self {
            Outcome::Available(a) => {
                out.push(0);
                a.item_id.put(out);
                a.available.put(out);
            }
            Outcome::Missing => out.push(1),
            Outcome::Failed(f) => {
                out.push(2);
                // The status as the learner set it: a check compares it with the code's.
                f.status.put(out);
                f.code.put(out);
            }
        }
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        Some(match u8::take(input)? {
            0 => Outcome::Available(Availability {
                item_id: String::take(input)?,
                available: bool::take(input)?,
            }),
            1 => Outcome::Missing,
            2 => Outcome::Failed(Failure {
                status: u16::take(input)?,
                code: FailureCode::take(input)?,
            }),
            _ => return None,
        })
    }
}

wire_struct!(Lookup { outcome, attempts });

wire_struct!(Seen {
    calls,
    answers,
    sleeps,
    counters,
    breaker,
    now
});

wire_struct!(session::Standing {
    answered,
    sleeps,
    counters,
    breaker,
    now
});

wire_struct!(space::CaseRecord {
    lookups,
    calls,
    sleeps
});

wire_struct!(Totals {
    counters,
    calls,
    together
});

impl Wire for Ending {
    fn put(&self, out: &mut Vec<u8>) {
        match self {
            Ending::Panicked(p) => {
                out.push(0);
                p.put(out);
            }
            Ending::Guard(m) => {
                out.push(1);
                m.put(out);
            }
            Ending::Loop(m) => {
                out.push(2);
                m.put(out);
            }
        }
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        Some(match u8::take(input)? {
            0 => Ending::Panicked(Reported::take(input)?),
            1 => Ending::Guard(String::take(input)?),
            2 => Ending::Loop(String::take(input)?),
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
            CaseRun::Ended(e) => {
                out.push(1);
                e.put(out);
            }
        }
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        Some(match u8::take(input)? {
            0 => CaseRun::Digest(u64::take(input)?),
            1 => CaseRun::Ended(Ending::take(input)?),
            _ => return None,
        })
    }
}

impl Wire for Ask {
    fn put(&self, out: &mut Vec<u8>) {
        match self {
            Ask::Start(setup) => {
                out.push(0);
                setup.put(out);
            }
            Ask::Lookup { item, after } => {
                out.push(1);
                item.put(out);
                after.put(out);
            }
            Ask::Concurrent {
                threads,
                per_thread,
            } => {
                out.push(2);
                threads.put(out);
                per_thread.put(out);
            }
            Ask::Race { item, after } => {
                out.push(3);
                item.put(out);
                after.put(out);
            }
            Ask::Space { start, count } => {
                out.push(4);
                start.put(out);
                count.put(out);
            }
            Ask::Case { index } => {
                out.push(5);
                index.put(out);
            }
        }
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        Some(match u8::take(input)? {
            0 => Ask::Start(Setup::take(input)?),
            1 => Ask::Lookup {
                item: String::take(input)?,
                after: f64::take(input)?,
            },
            2 => Ask::Concurrent {
                threads: usize::take(input)?,
                per_thread: usize::take(input)?,
            },
            3 => Ask::Race {
                item: String::take(input)?,
                after: f64::take(input)?,
            },
            4 => Ask::Space {
                start: usize::take(input)?,
                count: usize::take(input)?,
            },
            5 => Ask::Case {
                index: usize::take(input)?,
            },
            _ => return None,
        })
    }
}

impl Wire for Told {
    fn put(&self, out: &mut Vec<u8>) {
        match self {
            Told::Started(r) => {
                out.push(0);
                match r {
                    Ok(()) => out.push(0),
                    Err(e) => {
                        out.push(1);
                        e.put(out);
                    }
                }
            }
            Told::Looked { ran, seen } => {
                out.push(1);
                ran.put(out);
                seen.put(out);
            }
            Told::Concurrent { per_thread, totals } => {
                out.push(2);
                per_thread.put(out);
                totals.put(out);
            }
            Told::Raced {
                probe,
                others,
                seen,
            } => {
                out.push(3);
                probe.put(out);
                others.put(out);
                seen.put(out);
            }
            Told::Space(runs) => {
                out.push(4);
                runs.put(out);
            }
            Told::Case(run) => {
                out.push(5);
                run.put(out);
            }
        }
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        Some(match u8::take(input)? {
            0 => Told::Started(match u8::take(input)? {
                0 => Ok(()),
                1 => Err(String::take(input)?),
                _ => return None,
            }),
            1 => Told::Looked {
                ran: Wire::take(input)?,
                seen: Seen::take(input)?,
            },
            2 => Told::Concurrent {
                per_thread: Wire::take(input)?,
                totals: Totals::take(input)?,
            },
            3 => Told::Raced {
                probe: Wire::take(input)?,
                others: Wire::take(input)?,
                seen: Seen::take(input)?,
            },
            4 => Told::Space(Wire::take(input)?),
            5 => Told::Case(Wire::take(input)?),
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kit_types::TransportFailure;

    fn round_trip<T: Wire + PartialEq + std::fmt::Debug>(value: T) {
        let bytes = wire::encode(&value);
        assert_eq!(wire::decode::<T>(&bytes).as_ref(), Some(&value));
        // Every cut of it is refused, never misread.
        for cut in 0..bytes.len() {
            assert!(wire::decode::<T>(&bytes[..cut]).is_none(), "cut at {cut}");
        }
    }

    #[test]
    fn questions_and_answers_cross_exactly() {
        round_trip(Ask::Start(Setup {
            config: GatewayConfig::default(),
            per_thread: true,
            script: Script::Outcomes {
                replies: vec![
                    Reply::Step(Step::status(503).with_retry_after("3600").taking(0.3)),
                    Reply::Step(Step::fail(TransportFailure::Timeout)),
                    Reply::Available {
                        available: true,
                        latency: 0.1,
                    },
                ],
                forever: true,
            },
        }));
        round_trip(Ask::Race {
            item: "bike-7".into(),
            after: 0.1,
        });
        round_trip(Ask::Space {
            start: 4096,
            count: 512,
        });
        round_trip(Told::Space(vec![
            CaseRun::Digest(7),
            CaseRun::Ended(Ending::Guard("the loop never stops".into())),
        ]));
        round_trip(Ask::Case { index: 2928 });
        round_trip(Told::Case(Err(Ending::Loop("slept without end".into()))));
        // A case's run in full, calls and sleeps included: one made by code that calls the
        // provider through the gateway's own retry-less path, then stops.
        fn one_call(g: &kit_types::graded::TestGateway, item: &str) -> Lookup {
            use kit_types::{Clock, Provider};
            let _ = g.provider().get(item, 0.5);
            g.clock().sleep(0.25);
            Lookup {
                outcome: kit_types::Outcome::Missing,
                attempts: 1,
            }
        }
        let space = space::Space::new();
        let case = (0..space.total())
            .filter_map(|i| space.case(i))
            .find(|c| c.afters.len() > 1)
            .expect("a case of more than one lookup");
        let record = space::run_case(one_call, &case).expect("a valid gateway");
        assert!(!record.calls.is_empty() && !record.sleeps.is_empty());
        round_trip(Told::Case(Ok(record)));
        let seen = Seen {
            calls: vec![Call {
                item_id: "bike-7".into(),
                timeout: 0.4,
                at: f64::NAN.abs(),
                number: 1,
                number_for_item: 1,
                seq: 1,
            }],
            answers: vec![Step::status(503)],
            sleeps: vec![Sleep {
                at: 0.0,
                secs: f64::INFINITY,
                seq: 2,
            }],
            counters: Counters {
                logical_lookups: 1,
                attempts: 1,
            },
            breaker: BreakerState::Open { until: 30.0 },
            now: 0.5,
        };
        // A NaN crosses as it is (compared by its bits here).
        let bytes = wire::encode(&seen);
        let back: Seen = wire::decode(&bytes).expect("decodes");
        assert!(back.calls[0].at.is_nan());
        assert_eq!(wire::encode(&back), bytes);
        round_trip(Told::Concurrent {
            per_thread: vec![
                Ok(vec![1, 2, 3]),
                Err(Ending::Panicked(Reported {
                    message: "not yet implemented".into(),
                    location: Some("practice/src/lib.rs:1:1".into()),
                    frames: vec!["practice::lookup at practice/src/gateway.rs:2:3".into()],
                })),
                Err(Ending::Loop("never stops".into())),
            ],
            totals: Totals {
                counters: Counters::default(),
                calls: 4,
                together: true,
            },
        });
        for code in FailureCode::ALL {
            round_trip(Lookup {
                outcome: Outcome::Failed(Failure { status: 200, code }),
                attempts: 3,
            });
        }
    }

    #[test]
    fn a_lookup_before_a_gateway_is_not_answered() {
        let f: LookupFn = |_, _| unreachable!("never called");
        let mut session = None;
        let ask = Ask::Lookup {
            item: "bike-7".into(),
            after: 0.0,
        };
        assert!(serve(f, &ask, &mut session).is_none());
    }
}

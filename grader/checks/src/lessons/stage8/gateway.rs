//! A gateway a check sets up, the learner's lookups on it, and what the check has seen of
//! it: here, or in the runner that holds the learner's code ([`Learner::Runner`]), which
//! keeps the gateway for the whole check and after each question tells what it saw
//! ([`kit_runner::stage8`]).
//!
//! A lookup that did not return raises its panic here, as the check's own process would
//! have seen it: the learner's panic, or a guard's verdict (the loop never stops).

use super::Learner;
use kit_runner::stage8::session::{self, Payload, Seen, Setup, Totals};
use kit_runner::stage8::{Ask, Ending, Told};
use kit_runner::wire;
use kit_types::gateway::fakes::{Call, Sleep, Step};
use kit_types::gateway::Counters;
use kit_types::{BreakerState, GatewayConfig, Lookup};
use std::cell::{Cell, RefCell};
use std::panic;

pub use session::{pattern, pattern_step, Reply, Script, CALL_GUARD};

/// Where the lookups run.
enum Place {
    Here(Box<session::Session>, kit_types::graded::LookupFn),
    Runner(std::sync::Arc<kit_runner::remote::Runner>),
}

/// Everything seen so far.
#[derive(Default)]
struct Sofar {
    calls: Vec<Call>,
    answers: Vec<Step>,
    sleeps: Vec<Sleep>,
    counters: Counters,
    breaker: Option<BreakerState>,
    now: f64,
}

/// A check's gateway, as the check sees it.
pub(crate) struct Observed {
    config: GatewayConfig,
    place: RefCell<Place>,
    sofar: RefCell<Sofar>,
    /// Seconds to move the clock before the next lookup.
    pending: Cell<f64>,
}

impl Observed {
    /// A fresh gateway on `config` whose provider answers by `script`, one clock for every
    /// thread. Refuses an invalid configuration (its message).
    pub(crate) fn start(
        learner: &Learner,
        config: GatewayConfig,
        script: Script,
    ) -> Result<Observed, String> {
        Observed::with(learner, config, script, false)
    }

    /// [`start`](Observed::start) with a clock that keeps each thread's time apart.
    pub(crate) fn per_thread(
        learner: &Learner,
        config: GatewayConfig,
        script: Script,
    ) -> Result<Observed, String> {
        Observed::with(learner, config, script, true)
    }

    fn with(
        learner: &Learner,
        config: GatewayConfig,
        script: Script,
        per_thread: bool,
    ) -> Result<Observed, String> {
        let setup = Setup {
            config: config.clone(),
            per_thread,
            script,
        };
        let place = match learner {
            Learner::Here(f) => Place::Here(
                Box::new(session::Session::start(&setup).map_err(|e| e.to_string())?),
                *f,
            ),
            Learner::Runner(runner) => {
                let ask = wire::encode(&Ask::Start(setup));
                let started = runner.ask(&ask, |bytes| match wire::decode(bytes)? {
                    Told::Started(result) => Some(result),
                    _ => None,
                });
                // The checks' configurations are valid: a refusal is the runner's claim.
                if let Err(e) = started {
                    panic::panic_any(crate::panics::Reported {
                        message: format!(
                            "the process that ran your code refused the check's gateway: {e}"
                        ),
                        location: None,
                        frames: Vec::new(),
                    });
                }
                Place::Runner(std::sync::Arc::clone(runner))
            }
        };
        Ok(Observed {
            config,
            place: RefCell::new(place),
            sofar: RefCell::new(Sofar::default()),
            pending: Cell::new(0.0),
        })
    }

    /// The configuration.
    pub(crate) fn config(&self) -> &GatewayConfig {
        &self.config
    }

    /// Moves the clock `secs` forward before the next lookup.
    pub(crate) fn advance(&self, secs: f64) {
        self.pending.set(self.pending.get() + secs);
    }

    /// One lookup of `item`; a panic of it is raised here.
    pub(crate) fn lookup(&self, item: &str) -> Lookup {
        let after = self.pending.replace(0.0);
        let mut place = self.place.borrow_mut();
        let ran = match &mut *place {
            Place::Here(s, f) => {
                let ran = s.lookup(*f, item, after);
                let seen = s.seen();
                self.add(seen);
                ran
            }
            Place::Runner(runner) => {
                let ask = Ask::Lookup {
                    item: item.to_string(),
                    after,
                };
                let ran = self.ask_seen(runner, &ask, |told| match told {
                    Told::Looked { ran, seen } => Some((ran, seen)),
                    _ => None,
                });
                ran.map_err(Ending::into_payload)
            }
        };
        drop(place);
        if let Err(payload) = &ran {
            crate::serve::note_if_learners(payload.as_ref(), || {
                vec![
                    crate::view::Field::line("gateway", super::config_line(&self.config)),
                    crate::view::Field::line(
                        "lookup",
                        format!(
                            "{item:?} at t={:.3}; the provider had been called {} time(s) \
                             in all when it panicked",
                            self.now(),
                            self.calls().len()
                        ),
                    ),
                ]
            });
        }
        raise(ran)
    }

    /// `threads` threads at once, each looking up `t{t}-{i}` for `i < per_thread`: the
    /// attempts each lookup reported, per thread; then the gateway's totals. The first
    /// thread's panic, if any, is raised here.
    pub(crate) fn concurrent(&self, threads: usize, per_thread: usize) -> (Vec<Vec<u32>>, Totals) {
        let mut place = self.place.borrow_mut();
        let (per, totals): (Vec<Result<Vec<u32>, Payload>>, Totals) = match &mut *place {
            Place::Here(s, f) => s.concurrent(*f, threads, per_thread),
            Place::Runner(runner) => {
                let ask = wire::encode(&Ask::Concurrent {
                    threads,
                    per_thread,
                });
                let (per, totals) = runner.ask(&ask, |bytes| match wire::decode(bytes)? {
                    Told::Concurrent {
                        per_thread: per,
                        totals,
                    } if per.len() == threads
                        && per
                            .iter()
                            .all(|r| r.as_ref().map_or(true, |l| l.len() == per_thread)) =>
                    {
                        Some((per, totals))
                    }
                    _ => None,
                });
                let per = per
                    .into_iter()
                    .map(|r| r.map_err(Ending::into_payload))
                    .collect();
                (per, totals)
            }
        };
        drop(place);
        (per.into_iter().map(raise).collect(), totals)
    }

    /// The probe race: a probe lookup of `item` held at the provider while
    /// [`RACE_OTHERS`](session::RACE_OTHERS) other lookups of it run, one after the other
    /// (none when the probe never reached the provider in time). The others' panics are
    /// raised first, then the probe's.
    pub(crate) fn race(&self, item: &str) -> (Lookup, Vec<Lookup>) {
        let after = self.pending.replace(0.0);
        let mut place = self.place.borrow_mut();
        let (probe, others) = match &mut *place {
            Place::Here(s, f) => {
                let raced = s.race(*f, item, after);
                let seen = s.seen();
                self.add(seen);
                raced
            }
            Place::Runner(runner) => {
                let ask = Ask::Race {
                    item: item.to_string(),
                    after,
                };
                let (probe, others) = self.ask_seen(runner, &ask, |told| match told {
                    Told::Raced {
                        probe,
                        others,
                        seen,
                    } if others.is_empty() || others.len() == session::RACE_OTHERS => {
                        Some(((probe, others), seen))
                    }
                    _ => None,
                });
                (
                    probe.map_err(Ending::into_payload),
                    others
                        .into_iter()
                        .map(|o| o.map_err(Ending::into_payload))
                        .collect(),
                )
            }
        };
        drop(place);
        let others: Vec<Lookup> = others.into_iter().map(raise).collect();
        (raise(probe), others)
    }

    /// Asks `runner` a question whose answer tells what the gateway saw: `read` takes the
    /// answer apart, and what it says it saw must follow on from what was seen before.
    fn ask_seen<T>(
        &self,
        runner: &kit_runner::remote::Runner,
        ask: &Ask,
        read: impl FnOnce(Told) -> Option<(T, Seen)>,
    ) -> T {
        let sofar = self.sofar.borrow();
        let (answer, seen) = runner.ask(&wire::encode(ask), |bytes| {
            read(wire::decode(bytes)?).filter(|(_, seen)| follows(&sofar, seen))
        });
        drop(sofar);
        self.add(seen);
        answer
    }

    fn add(&self, seen: Seen) {
        let mut sofar = self.sofar.borrow_mut();
        sofar.calls.extend(seen.calls);
        sofar.answers.extend(seen.answers);
        sofar.sleeps.extend(seen.sleeps);
        sofar.counters = seen.counters;
        sofar.breaker = Some(seen.breaker);
        sofar.now = seen.now;
    }

    /// Every provider call so far, in order.
    pub(crate) fn calls(&self) -> Vec<Call> {
        self.sofar.borrow().calls.clone()
    }

    /// What each call so far got, by call number (one fewer when a guard stopped the last).
    pub(crate) fn answers(&self) -> Vec<Step> {
        self.sofar.borrow().answers.clone()
    }

    /// Every sleep so far, in order.
    pub(crate) fn sleeps(&self) -> Vec<Sleep> {
        self.sofar.borrow().sleeps.clone()
    }

    /// The counters after the last lookup.
    pub(crate) fn counters(&self) -> Counters {
        self.sofar.borrow().counters
    }

    /// The breaker after the last lookup (closed before any).
    pub(crate) fn breaker(&self) -> BreakerState {
        self.sofar
            .borrow()
            .breaker
            .unwrap_or(BreakerState::Closed { failures: 0 })
    }

    /// The clock after the last lookup, and any move asked for since.
    pub(crate) fn now(&self) -> f64 {
        self.sofar.borrow().now + self.pending.get()
    }
}

/// What a run returned, or its panic raised here.
fn raise<T>(ran: Result<T, Payload>) -> T {
    ran.unwrap_or_else(|payload| panic::resume_unwind(payload))
}

/// Whether what a runner says it saw can follow what it said before: the calls carry on
/// the provider's numbering, each had at most one answer, and the order numbers shared by
/// calls and sleeps never go back.
fn follows(sofar: &Sofar, seen: &Seen) -> bool {
    let numbered = seen
        .calls
        .iter()
        .enumerate()
        .all(|(i, c)| c.number == (sofar.calls.len() + i + 1) as u64);
    let answered = sofar.answers.len() + seen.answers.len() <= sofar.calls.len() + seen.calls.len();
    let last = sofar
        .calls
        .iter()
        .map(|c| c.seq)
        .chain(sofar.sleeps.iter().map(|s| s.seq))
        .max()
        .unwrap_or(0);
    let after = seen
        .calls
        .iter()
        .map(|c| c.seq)
        .chain(seen.sleeps.iter().map(|s| s.seq))
        .all(|seq| seq > last);
    numbered && answered && after
}

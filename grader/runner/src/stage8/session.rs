//! One gateway a check sets up, and the learner's lookups on it: built from a [`Script`]
//! (data, so the judge can say it and a runner build it), kept across the check's
//! questions, and told as what it saw since the last time ([`Seen`]).
//!
//! The same code serves both places a stage8 check's lookups run: the judge's own process
//! (the reference, the kit's tests) and a runner. Panics come out of it as they were raised;
//! each side decides what they mean.

use kit_types::gateway::fakes::{Call, FakeClock, ScriptedProvider, Sleep, Step};
use kit_types::gateway::Counters;
use kit_types::graded::{LookupFn, TestGateway};
use kit_types::{BreakerState, Gateway, GatewayConfig, Lookup};
use std::any::Any;
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// How many provider calls one gateway allows before it calls the loop runaway (all but
/// [`Script::Patterns`], whose thousands of lookups make many more).
pub const CALL_GUARD: u64 = 10_000;

/// The most lookups a gateway runs at once ([`Session::concurrent`]): a runner starts this
/// many threads for them before it refuses new ones.
pub const THREADS: usize = 8;

/// How many other lookups the probe race runs while its probe is held: two, so that one
/// rejected lookup that gave the probe's place away shows in the next.
pub const RACE_OTHERS: usize = 2;

/// The longest the probe race holds its probe, or waits for it to start.
pub const RACE_WAIT: Duration = Duration::from_secs(2);

/// A panic's payload, as it came out of the learner's lookup.
pub type Payload = Box<dyn Any + Send>;

/// What one lookup did: its result, or the payload of its panic.
pub type Ran = Result<Lookup, Payload>;

/// What a scenario's provider does on one call.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// A fixed step.
    Step(Step),
    /// A 200 with the declared body for whatever item was asked, taking `latency`.
    Available {
        /// The body's `available`.
        available: bool,
        /// Seconds the attempt takes.
        latency: f64,
    },
}

impl Reply {
    /// The step this reply is for a call of `item`.
    pub fn step_for(&self, item: &str) -> Step {
        match self {
            Reply::Step(step) => step.clone(),
            Reply::Available { available, latency } => {
                Step::available(item, *available).taking(*latency)
            }
        }
    }
}

/// What the provider answers, call by call.
#[derive(Debug, Clone, PartialEq)]
pub enum Script {
    /// Call n gets `steps[n - 1]`, and every later call the last one.
    Sequence(Vec<Step>),
    /// Call `number` gets `then`; every other call gets `otherwise`.
    Numbered {
        /// The call that differs (1-based).
        number: u64,
        /// What it gets.
        then: Step,
        /// What every other call gets.
        otherwise: Step,
    },
    /// Calls before the clock reaches `from` get `before`; the others `after`.
    From {
        /// The time from which calls get `after`.
        from: f64,
        /// Before it.
        before: Step,
        /// From it on.
        after: Step,
    },
    /// Each item its own script, by the number its name ends with ([`pattern_step`]).
    Patterns,
    /// The probe race ([`Session::race`]): 503 until the race; then its first call (the
    /// probe) is held until another lookup has run, and answered 200, available; any other
    /// call 503.
    Probe,
    /// A scenario's outcomes: call n gets `replies[n - 1]`; past them, the last one again
    /// when `forever`, and otherwise the run stops with a guard's failure.
    Outcomes {
        /// The outcomes, in order (at least one).
        replies: Vec<Reply>,
        /// Whether the last repeats.
        forever: bool,
    },
}

/// The step an item of pattern `pattern` gets on its `call_for_item`th call: 0 available;
/// 1 one 503 then unavailable; 2 two 503s then unavailable; 3 always 503; 4 404; 5 429.
pub fn pattern_step(pattern: usize, call_for_item: u64, item: &str) -> Step {
    match (pattern, call_for_item) {
        (0, _) => Step::available(item, true),
        (1, 1) | (2, 1) | (2, 2) | (3, _) => Step::status(503),
        (1, _) | (2, _) => Step::available(item, false),
        (4, _) => Step::status(404),
        _ => Step::status(429),
    }
}

/// An item's pattern ([`pattern_step`]): the number at the end of its name, modulo 6.
pub fn pattern(item: &str) -> usize {
    item.rsplit('-')
        .next()
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or(0)
        % 6
}

/// A gateway's setup: its configuration, its clock, its provider's script.
#[derive(Debug, Clone, PartialEq)]
pub struct Setup {
    /// The configuration.
    pub config: GatewayConfig,
    /// Whether each thread keeps its own fake time ([`FakeClock::per_thread`]).
    pub per_thread: bool,
    /// What the provider answers.
    pub script: Script,
}

/// What a gateway saw since the last time it was told: the provider's new calls (each with
/// the step it got), the clock's new sleeps, and where the counters, the breaker and the
/// clock stand.
#[derive(Debug, Clone, PartialEq)]
pub struct Seen {
    /// The provider's calls since the last time.
    pub calls: Vec<Call>,
    /// What each of those calls got, in the same order (one fewer when a guard stopped the
    /// last one).
    pub answers: Vec<Step>,
    /// The clock's sleeps since the last time.
    pub sleeps: Vec<Sleep>,
    /// The counters now.
    pub counters: Counters,
    /// The breaker now.
    pub breaker: BreakerState,
    /// The clock now (on the thread that asks).
    pub now: f64,
}

/// Where a gateway stands after a lookup (`Session::standing`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Standing {
    /// How many provider calls were answered so far.
    pub(crate) answered: usize,
    /// How many sleeps were taken so far.
    pub(crate) sleeps: usize,
    /// The counters now.
    pub(crate) counters: Counters,
    /// The breaker now.
    pub(crate) breaker: BreakerState,
    /// The clock now.
    pub(crate) now: f64,
}

/// The totals of many lookups: the counters and the number of provider calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Totals {
    /// The counters.
    pub counters: Counters,
    /// The provider's calls.
    pub calls: u64,
    /// Whether the threads' lookups ran at once: the first provider call of each thread
    /// waited (at most [`RACE_WAIT`]) for every other thread's, and they all came.
    pub together: bool,
}

/// Where the threads of [`Session::concurrent`] meet: each thread's first provider call
/// waits for every other thread's, so that lookups which never run at once (one lock held
/// across a whole lookup) show.
#[derive(Debug, Default)]
struct Meeting {
    state: Mutex<MeetingState>,
    signal: Condvar,
}

#[derive(Debug, Default)]
struct MeetingState {
    /// How many threads are to meet; 0: no meeting (lookups on one thread).
    expected: usize,
    arrived: std::collections::HashSet<std::thread::ThreadId>,
    /// Every expected thread arrived.
    met: bool,
    /// The wait ended (met, or timed out): later calls go straight on.
    over: bool,
}

impl Meeting {
    fn expect(&self, threads: usize) {
        let mut m = lock(&self.state);
        *m = MeetingState {
            expected: threads,
            ..MeetingState::default()
        };
    }

    /// A provider call: the first of its thread waits for the others'.
    fn arrive(&self) {
        let mut m = lock(&self.state);
        if m.expected == 0 || m.over || !m.arrived.insert(std::thread::current().id()) {
            return;
        }
        if m.arrived.len() >= m.expected {
            m.met = true;
            m.over = true;
            self.signal.notify_all();
            return;
        }
        let (mut m, waited) = self
            .signal
            .wait_timeout_while(m, RACE_WAIT, |m| !m.over)
            .unwrap_or_else(|e| e.into_inner());
        if waited.timed_out() {
            m.over = true;
            self.signal.notify_all();
        }
    }

    fn met(&self) -> bool {
        lock(&self.state).met
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    /// Until the race: every call is answered 503.
    Opening,
    /// The next call is the probe.
    ProbeWindow,
    ProbeInFlight,
    OtherDone,
}

type Shared = Arc<(Mutex<Phase>, Condvar)>;

/// A gateway the learner's lookups run on, and what it has told so far.
#[derive(Debug)]
pub struct Session {
    gateway: Arc<TestGateway>,
    answers: Arc<Mutex<Vec<Step>>>,
    phase: Shared,
    meeting: Arc<Meeting>,
    told_calls: usize,
    told_sleeps: usize,
    told_answers: usize,
}

impl Session {
    /// A fresh gateway; refuses an invalid configuration.
    pub fn start(setup: &Setup) -> Result<Session, kit_types::gateway::ConfigError> {
        let clock = if setup.per_thread {
            FakeClock::per_thread()
        } else {
            FakeClock::new()
        };
        let answers: Arc<Mutex<Vec<Step>>> = Arc::default();
        let phase: Shared = Arc::new((Mutex::new(Phase::Opening), Condvar::new()));
        let (script, record, shared) = (setup.script.clone(), Arc::clone(&answers), phase.clone());
        let meeting: Arc<Meeting> = Arc::default();
        let meet = Arc::clone(&meeting);
        let provider = ScriptedProvider::responding(clock.clone(), move |call| {
            meet.arrive();
            let guarded = !matches!(script, Script::Patterns);
            if guarded && call.number > CALL_GUARD {
                panic::panic_any(crate::panics::CheckFailure(format!(
                    "the provider was called more than {CALL_GUARD} times: the loop never \
                     stops. At most max_attempts attempts per lookup."
                )));
            }
            let step = respond(&script, call, &shared);
            lock(&record).push(step.clone());
            step
        });
        let gateway = Gateway::new(setup.config.clone(), provider, clock)?;
        Ok(Session {
            gateway: Arc::new(gateway),
            answers,
            phase,
            meeting,
            told_calls: 0,
            told_sleeps: 0,
            told_answers: 0,
        })
    }

    /// `after` seconds pass on the clock; then one lookup of `item`.
    pub fn lookup(&self, f: LookupFn, item: &str, after: f64) -> Ran {
        self.gateway.clock().advance(after);
        lookup_on(&self.gateway, f, item)
    }

    /// `threads` threads at once, each looking up `t{t}-{i}` for every `i < per_thread`:
    /// per thread, the attempts each lookup reported, or the payload of its panic. In a
    /// confined runner they run on its workers (it may start no thread); each thread's
    /// fake time starts at 0 on this gateway's clock all the same.
    pub fn concurrent(
        &self,
        f: LookupFn,
        threads: usize,
        per_thread: usize,
    ) -> (Vec<Result<Vec<u32>, Payload>>, Totals) {
        let run = move |g: &TestGateway, t: usize| {
            panic::catch_unwind(AssertUnwindSafe(|| {
                (0..per_thread)
                    .map(|i| f(g, &format!("t{t}-{i}")).attempts)
                    .collect::<Vec<u32>>()
            }))
        };
        self.meeting.expect(threads);
        let per: Vec<Result<Vec<u32>, Payload>> = if crate::cases::workers() >= threads {
            let waiting: Vec<_> = (0..threads)
                .map(|t| {
                    let g = Arc::clone(&self.gateway);
                    crate::cases::on_worker_at(t, move || run(&g, t))
                })
                .collect();
            waiting
                .into_iter()
                .map(|w| match w.and_then(|r| r.recv().ok()) {
                    Some(result) => result,
                    None => Err(Box::new("a worker thread of the runner stopped") as Payload),
                })
                .collect()
        } else {
            let g = &*self.gateway;
            std::thread::scope(|s| {
                let handles: Vec<_> = (0..threads).map(|t| s.spawn(move || run(g, t))).collect();
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or_else(Err))
                    .collect()
            })
        };
        let totals = Totals {
            counters: self.gateway.counters(),
            calls: self.gateway.provider().calls().len() as u64,
            together: self.meeting.met(),
        };
        self.meeting.expect(0);
        (per, totals)
    }

    /// The probe race, `after` seconds on: one lookup of `item` (the probe, on a thread of
    /// its own: a worker, in a confined runner), and, once its provider call is held,
    /// [`RACE_OTHERS`] other lookups of it, one after the other, on this thread. No other
    /// runs when the probe never reached the provider within [`RACE_WAIT`].
    pub fn race(&self, f: LookupFn, item: &str, after: f64) -> (Ran, Vec<Ran>) {
        self.gateway.clock().advance(after);
        let (lock_, signal) = &*self.phase;
        *lock(lock_) = Phase::ProbeWindow;
        let probe_on = |g: Arc<TestGateway>, item: String| move || lookup_on(&g, f, &item);
        let on_worker = if crate::cases::workers() > 0 {
            crate::cases::on_worker_at(0, probe_on(Arc::clone(&self.gateway), item.to_string()))
        } else {
            None
        };
        std::thread::scope(|s| {
            let probe = match on_worker {
                Some(result) => Probe::Worker(result),
                None => {
                    Probe::Scoped(s.spawn(probe_on(Arc::clone(&self.gateway), item.to_string())))
                }
            };
            let p = lock(lock_);
            let (mut p, waited) = signal
                .wait_timeout_while(p, RACE_WAIT, |p| *p == Phase::ProbeWindow)
                .unwrap_or_else(|e| e.into_inner());
            let others = if waited.timed_out() {
                Vec::new()
            } else {
                drop(p);
                let others = (0..RACE_OTHERS)
                    .map(|_| self.lookup(f, item, 0.0))
                    .collect();
                p = lock(lock_);
                others
            };
            *p = Phase::OtherDone;
            signal.notify_all();
            drop(p);
            let probe = match probe {
                Probe::Worker(result) => result.recv().unwrap_or_else(|_| {
                    Err(Box::new("a worker thread of the runner stopped") as Payload)
                }),
                Probe::Scoped(handle) => handle.join().unwrap_or_else(Err),
            };
            (probe, others)
        })
    }

    /// How many provider calls were answered and how many sleeps were taken so far, and
    /// where the counters, the breaker and the clock stand: what the exhaustive check
    /// records after each lookup (cheaper than [`seen`](Session::seen), which copies every
    /// call so far each time).
    pub(crate) fn standing(&self) -> Standing {
        let g = &self.gateway;
        Standing {
            answered: lock(&self.answers).len(),
            sleeps: g.clock().sleeps().len(),
            counters: g.counters(),
            breaker: g.breaker().state(),
            now: kit_types::Clock::now(g.clock()),
        }
    }

    /// Every provider call and every sleep so far, in order.
    pub(crate) fn everything(&self) -> (Vec<Call>, Vec<Sleep>) {
        let g = &self.gateway;
        (g.provider().calls(), g.clock().sleeps())
    }

    /// What the gateway saw since the last call of this.
    pub fn seen(&mut self) -> Seen {
        let g = &self.gateway;
        let calls: Vec<Call> = g
            .provider()
            .calls()
            .into_iter()
            .skip(self.told_calls)
            .collect();
        let sleeps: Vec<Sleep> = g
            .clock()
            .sleeps()
            .into_iter()
            .skip(self.told_sleeps)
            .collect();
        let answers: Vec<Step> = lock(&self.answers)
            .iter()
            .skip(self.told_answers)
            .cloned()
            .collect();
        self.told_calls += calls.len();
        self.told_sleeps += sleeps.len();
        self.told_answers += answers.len();
        Seen {
            calls,
            answers,
            sleeps,
            counters: g.counters(),
            breaker: g.breaker().state(),
            now: kit_types::Clock::now(g.clock()),
        }
    }
}

/// Where the probe of a race runs.
enum Probe<'scope> {
    Worker(std::sync::mpsc::Receiver<Ran>),
    Scoped(std::thread::ScopedJoinHandle<'scope, Ran>),
}

/// One lookup of `item` on `g`.
fn lookup_on(g: &TestGateway, f: LookupFn, item: &str) -> Ran {
    panic::catch_unwind(AssertUnwindSafe(|| f(g, item)))
}

/// The step `script` gives `call`.
fn respond(script: &Script, call: &Call, phase: &Shared) -> Step {
    match script {
        Script::Sequence(steps) => {
            let last = steps.len().saturating_sub(1);
            steps
                .get((call.number as usize - 1).min(last))
                .cloned()
                .unwrap_or_else(|| Step::status(503))
        }
        Script::Numbered {
            number,
            then,
            otherwise,
        } => {
            if call.number == *number {
                then.clone()
            } else {
                otherwise.clone()
            }
        }
        Script::From {
            from,
            before,
            after,
        } => {
            if call.at < *from {
                before.clone()
            } else {
                after.clone()
            }
        }
        Script::Patterns => {
            pattern_step(pattern(&call.item_id), call.number_for_item, &call.item_id)
        }
        Script::Probe => {
            let (lock_, signal) = &**phase;
            let mut p = lock(lock_);
            match *p {
                Phase::Opening => Step::status(503),
                Phase::ProbeWindow => {
                    // The probe: hold it until the other lookup has run.
                    *p = Phase::ProbeInFlight;
                    signal.notify_all();
                    // Until the others have run.
                    let (_p, _) = signal
                        .wait_timeout_while(p, RACE_WAIT, |p| *p != Phase::OtherDone)
                        .unwrap_or_else(|e| e.into_inner());
                    Step::available(&call.item_id, true)
                }
                // A second call while the probe is in flight: let it fail fast.
                Phase::ProbeInFlight | Phase::OtherDone => Step::status(503),
            }
        }
        Script::Outcomes { replies, forever } => {
            let i = call.number as usize - 1;
            match replies.get(i) {
                Some(reply) => reply.step_for(&call.item_id),
                None if *forever && !replies.is_empty() => {
                    replies[replies.len() - 1].step_for(&call.item_id)
                }
                None => panic::panic_any(crate::panics::CheckFailure(format!(
                    "the provider was called {} times, but the scenario has only {} outcome(s)",
                    call.number,
                    replies.len()
                ))),
            }
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

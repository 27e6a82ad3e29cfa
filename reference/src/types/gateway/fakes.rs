//! Test doubles for the gateway: a fake clock and a scripted provider.
//!
//! The fake clock moves only when code sleeps or an attempt takes time, so a test of a
//! one-second deadline runs in microseconds and is exact. A clock made with
//! [`FakeClock::per_thread`] keeps a separate time for each thread, for concurrency tests
//! where one thread's sleep must not spend another thread's budget.

use super::{Clock, Provider, ProviderReply};
use crate::TransportFailure;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The most sleeps one fake clock records before it stops the run with a [`LoopGuard`]: a
/// loop that only sleeps would otherwise fill memory before anything stopped it.
pub const SLEEP_GUARD: usize = 1_000_000;

/// The payload of the panic a fake raises when the code under test loops without end. A
/// grader reads it as the check's verdict ("the loop never stops"), not as a crash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoopGuard(pub String);

#[derive(Debug, Default)]
struct ClockState {
    now: f64,
    /// Each thread's time, for a clock made with [`FakeClock::per_thread`]: kept here, in
    /// the clock's own state, so that every copy of this code (a program and a library it
    /// loads each have one) sees the same times, and a new clock starts every thread at 0.
    thread_now: HashMap<std::thread::ThreadId, f64>,
    sleeps: Vec<Sleep>,
    /// Sleeps and provider calls so far, numbered together.
    events: u64,
}

/// One sleep: when it started and how long it was.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sleep {
    /// The clock's time when the sleep began.
    pub at: f64,
    /// The requested seconds.
    pub secs: f64,
    /// Its place among this clock's sleeps and its provider's calls (1-based), so that a
    /// run can be told in the order it happened.
    pub seq: u64,
}

/// A clock that moves only when told to. Clones share the same time.
#[derive(Debug, Clone, Default)]
pub struct FakeClock {
    state: Arc<Mutex<ClockState>>,
    per_thread: bool,
}

impl FakeClock {
    /// A clock at time 0 shared by every thread.
    pub fn new() -> Self {
        FakeClock::default()
    }

    /// A clock whose time is kept separately by each thread (each starts at 0).
    pub fn per_thread() -> Self {
        FakeClock {
            per_thread: true,
            ..FakeClock::default()
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ClockState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Moves the clock forward by `secs` (an attempt's latency, or time passing between
    /// lookups). Negative and NaN amounts are ignored.
    pub fn advance(&self, secs: f64) {
        if secs.is_nan() || secs <= 0.0 {
            return;
        }
        let mut state = self.lock();
        if self.per_thread {
            *state
                .thread_now
                .entry(std::thread::current().id())
                .or_insert(0.0) += secs;
        } else {
            state.now += secs;
        }
    }

    /// Every sleep so far, in order.
    pub fn sleeps(&self) -> Vec<Sleep> {
        self.lock().sleeps.clone()
    }

    /// The next number in the shared order of sleeps and provider calls.
    fn next_seq(&self) -> u64 {
        let mut state = self.lock();
        state.events += 1;
        state.events
    }
}

impl Clock for FakeClock {
    fn now(&self) -> f64 {
        let state = self.lock();
        if self.per_thread {
            state
                .thread_now
                .get(&std::thread::current().id())
                .copied()
                .unwrap_or(0.0)
        } else {
            state.now
        }
    }

    fn sleep(&self, secs: f64) {
        let at = self.now();
        {
            let mut state = self.lock();
            if state.sleeps.len() >= SLEEP_GUARD {
                drop(state);
                std::panic::panic_any(LoopGuard(format!(
                    "clock.sleep was called {SLEEP_GUARD} times: the loop never stops"
                )));
            }
            state.events += 1;
            let seq = state.events;
            state.sleeps.push(Sleep { at, secs, seq });
        }
        self.advance(secs);
    }
}

/// What the provider does on one call: take some time, then reply or fail.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// Seconds the attempt takes. If that is more than the attempt's timeout, the attempt
    /// takes exactly the timeout and fails with [`TransportFailure::Timeout`].
    pub latency: f64,
    /// The reply, or the transport's failure.
    pub reply: Result<ProviderReply, TransportFailure>,
}

impl Step {
    /// A reply with `status` and an empty body.
    pub fn status(status: u16) -> Self {
        Step::reply(ProviderReply {
            status,
            ..ProviderReply::default()
        })
    }

    /// Any reply.
    pub fn reply(reply: ProviderReply) -> Self {
        Step {
            latency: 0.0,
            reply: Ok(reply),
        }
    }

    /// A 200 with the declared body for `item_id`.
    pub fn available(item_id: &str, available: bool) -> Self {
        let body = serde_json::json!({ "item_id": item_id, "available": available }).to_string();
        Step::reply(ProviderReply {
            status: 200,
            body,
            retry_after: None,
        })
    }

    /// A transport failure.
    pub fn fail(failure: TransportFailure) -> Self {
        Step {
            latency: 0.0,
            reply: Err(failure),
        }
    }

    /// The same step, taking `secs` seconds.
    pub fn taking(mut self, secs: f64) -> Self {
        self.latency = secs;
        self
    }

    /// The same reply with a Retry-After header.
    pub fn with_retry_after(mut self, value: &str) -> Self {
        if let Ok(reply) = &mut self.reply {
            reply.retry_after = Some(value.to_string());
        }
        self
    }
}

/// One call the provider received.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The item asked for.
    pub item_id: String,
    /// The timeout the gateway gave this attempt.
    pub timeout: f64,
    /// The clock's time when the call began.
    pub at: f64,
    /// 1-based number of this call among all calls.
    pub number: u64,
    /// 1-based number of this call among the calls for the same item.
    pub number_for_item: u64,
    /// Its place among the clock's sleeps and the provider's calls (1-based).
    pub seq: u64,
}

type Responder = dyn Fn(&Call) -> Step + Send + Sync;

#[derive(Default)]
struct Calls {
    all: Vec<Call>,
    per_item: HashMap<String, u64>,
}

/// A provider that answers from a script and records every call.
pub struct ScriptedProvider {
    clock: FakeClock,
    respond: Box<Responder>,
    calls: Mutex<Calls>,
}

impl std::fmt::Debug for ScriptedProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptedProvider")
            .field("calls", &self.calls().len())
            .finish()
    }
}

impl ScriptedProvider {
    /// Answers call `n` with `steps[n - 1]`, and the last step for every later call.
    pub fn sequence(clock: FakeClock, steps: Vec<Step>) -> Self {
        let last = steps.len().saturating_sub(1);
        ScriptedProvider::responding(clock, move |call| {
            steps
                .get((call.number as usize - 1).min(last))
                .cloned()
                .unwrap_or_else(|| Step::status(503))
        })
    }

    /// Answers each call with `respond(call)`; the most flexible form (per item, per call).
    pub fn responding(
        clock: FakeClock,
        respond: impl Fn(&Call) -> Step + Send + Sync + 'static,
    ) -> Self {
        ScriptedProvider {
            clock,
            respond: Box::new(respond),
            calls: Mutex::new(Calls::default()),
        }
    }

    /// Every call so far, in order.
    pub fn calls(&self) -> Vec<Call> {
        self.calls
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .all
            .clone()
    }
}

impl Provider for ScriptedProvider {
    fn get(&self, item_id: &str, timeout: f64) -> Result<ProviderReply, TransportFailure> {
        let call = {
            let mut calls = self.calls.lock().unwrap_or_else(|p| p.into_inner());
            let number = calls.all.len() as u64 + 1;
            let for_item = calls.per_item.entry(item_id.to_string()).or_insert(0);
            *for_item += 1;
            let call = Call {
                item_id: item_id.to_string(),
                timeout,
                at: self.clock.now(),
                number,
                number_for_item: *for_item,
                seq: self.clock.next_seq(),
            };
            calls.all.push(call.clone());
            call
        };
        let step = (self.respond)(&call);
        if step.latency > timeout {
            self.clock.advance(timeout);
            return Err(TransportFailure::Timeout);
        }
        self.clock.advance(step.latency);
        step.reply
    }
}

//! Runs one implementation against a scripted request and records every callback.
//!
//! Nothing here really sleeps: `sleep` only writes the planned delay down.

use super::{Learner, Reply};
use crate::feedback::{same_secs, same_waits};
use crate::panics::{CheckFailure, DeliberatePanic};
use kit_types::{RequestError, RetryError, RetryEvent, RetryPolicy};
use std::cell::RefCell;
use std::fmt;
use std::panic::{self, AssertUnwindSafe};

/// How many calls of any one callback a run may make before the grader calls it a loop.
///
/// A correct implementation makes at most 5 calls: this is far above that and far below
/// what would take noticeable time.
pub const CALL_GUARD: u32 = 1_000;

/// The three callbacks an implementation receives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Callback {
    /// `request`
    Request,
    /// `sleep`
    Sleep,
    /// `log`
    Log,
}

impl Callback {
    /// The callback's parameter name.
    pub fn name(self) -> &'static str {
        match self {
            Callback::Request => "request",
            Callback::Sleep => "sleep",
            Callback::Log => "log",
        }
    }
}

impl fmt::Display for Callback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The outcomes `request` returns, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Script {
    /// One outcome per call.
    pub steps: Vec<Result<Reply, RequestError>>,
    /// After the last step, keep returning it (for "always fails" runs).
    pub repeat_last: bool,
}

impl Script {
    /// Exactly these outcomes; a further call ends the run with a [`CheckFailure`].
    pub fn new(steps: Vec<Result<Reply, RequestError>>) -> Self {
        Script {
            steps,
            repeat_last: false,
        }
    }

    /// These outcomes, then the last one for ever (the checks' choice: a call too many then
    /// shows up as a wrong count, with the lesson's hint, rather than as an error).
    pub fn repeating(steps: Vec<Result<Reply, RequestError>>) -> Self {
        Script {
            steps,
            repeat_last: true,
        }
    }

    /// Call by call, every field: `call 1 → transient rate_limited, retry_after inf`.
    pub fn describe(&self) -> Vec<String> {
        let mut lines: Vec<String> = self
            .steps
            .iter()
            .enumerate()
            .map(|(i, step)| format!("call {} → {}", i + 1, describe_outcome(step)))
            .collect();
        lines.push(if self.repeat_last {
            "every later call → the same as the last".into()
        } else {
            "a further call is an error of the script".into()
        });
        lines
    }

    fn outcome(&self, call: u32) -> Result<Reply, RequestError> {
        let i = call as usize - 1;
        match self.steps.get(i) {
            Some(step) => step.clone(),
            None if self.repeat_last && !self.steps.is_empty() => {
                self.steps[self.steps.len() - 1].clone()
            }
            None => panic::panic_any(CheckFailure(format!(
                "request was called {call} times, but the script has only {} outcome(s)",
                self.steps.len()
            ))),
        }
    }
}

/// Everything one run did, in the order it happened.
#[derive(Debug, Clone, PartialEq)]
pub struct Recording {
    /// How many times `request` was called.
    pub calls: u32,
    /// Every delay `sleep` received.
    pub waits: Vec<f64>,
    /// Every event `log` received.
    pub events: Vec<RetryEvent>,
    /// The callbacks in the order they ran.
    pub order: Vec<Callback>,
    /// What the implementation returned; `None` when it panicked.
    pub result: Option<Result<Reply, RetryError>>,
}

impl Recording {
    /// A recording of nothing yet, to record into.
    pub fn empty() -> Self {
        Recording {
            calls: 0,
            waits: Vec::new(),
            events: Vec::new(),
            order: Vec::new(),
            result: None,
        }
    }
}

/// Runs `imp` once on `policy` and `script`; with `panic_in`, that callback panics with
/// [`DeliberatePanic`] the first time it is called.
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
    rec.calls = 0;
    rec.waits.clear();
    rec.events.clear();
    rec.order.clear();
    rec.result = None;
    let state = RefCell::new(rec);
    let enter = |callback: Callback| -> u32 {
        let n = {
            let mut s = state.borrow_mut();
            s.order.push(callback);
            let n = s.order.iter().filter(|c| **c == callback).count() as u32;
            if callback == Callback::Request {
                s.calls = n;
            }
            n
        };
        if n > CALL_GUARD {
            panic::panic_any(CheckFailure(format!(
                "{callback} was called more than {CALL_GUARD} times: the loop never stops. \
                 Add explicit stops: at most max_attempts calls of request, and a stop when \
                 the server's wait exceeds max_delay"
            )));
        }
        if panic_in == Some(callback) {
            panic::panic_any(DeliberatePanic(callback.name()));
        }
        n
    };
    let mut request = || {
        let n = enter(Callback::Request);
        script.outcome(n)
    };
    let mut sleep = |secs: f64| {
        enter(Callback::Sleep);
        state.borrow_mut().waits.push(secs);
    };
    let mut log = |event: RetryEvent| {
        enter(Callback::Log);
        state.borrow_mut().events.push(event);
    };
    let run = panic::catch_unwind(AssertUnwindSafe(|| {
        (imp.retry_request)(policy, &mut request, &mut sleep, &mut log)
    }));
    let rec = state.into_inner();
    match run {
        Ok(result) => {
            rec.result = Some(result);
            None
        }
        Err(payload) if payload.is::<CheckFailure>() => panic::resume_unwind(payload),
        Err(payload) => Some(payload),
    }
}

fn same_event(a: &RetryEvent, b: &RetryEvent) -> bool {
    let delay = match (a.delay, b.delay) {
        (Some(x), Some(y)) => same_secs(x, y),
        (x, y) => x.is_none() && y.is_none(),
    };
    delay
        && a.attempt == b.attempt
        && a.reason == b.reason
        && a.action == b.action
        && a.cause == b.cause
}

/// Whether two lists of events are the same.
pub fn same_events(a: &[RetryEvent], b: &[RetryEvent]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same_event(x, y))
}

impl Recording {
    /// Whether two runs made the same calls, waits and events and ended the same way.
    pub fn same_as(&self, other: &Recording) -> bool {
        self.calls == other.calls
            && same_waits(&self.waits, &other.waits)
            && same_events(&self.events, &other.events)
            && self.result == other.result
    }
}

/// A short, readable form of a float list: `[0.25, 0.5]`.
pub use crate::feedback::fmt_secs as fmt_waits;

/// A compact event list: `[#1 server_error retry 0.25s, #2 server_error stop (attempt_limit)]`.
pub fn fmt_events(events: &[RetryEvent]) -> String {
    let items: Vec<String> = events.iter().map(|e| e.to_string()).collect();
    format!("[{}]", items.join(", "))
}

/// A result as the lesson speaks of it: `Ok({"job_id":"fresh_3"})` or the error's name.
pub fn fmt_result(result: &Option<Result<Reply, RetryError>>) -> String {
    match result {
        None => "panicked".to_string(),
        Some(Ok(v)) => format!("Ok({v})"),
        Some(Err(e)) => format!("Err({})", describe_error(e)),
    }
}

/// The variant and its fields, without any `detail` text.
pub fn describe_error(e: &RetryError) -> String {
    match e {
        RetryError::InvalidPolicy(p) => format!("InvalidPolicy({p:?})"),
        RetryError::Exhausted {
            attempts,
            reason,
            cause,
        } => format!("Exhausted {{ attempts: {attempts}, reason: {reason}, cause: {cause} }}"),
        RetryError::Permanent(p) => match p.status {
            Some(s) => format!("Permanent({}, status {s})", p.kind),
            None => format!("Permanent({})", p.kind),
        },
    }
}

impl fmt::Display for Recording {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "  calls:  {}", self.calls)?;
        writeln!(f, "  waits:  {}", fmt_waits(&self.waits))?;
        writeln!(f, "  events: {}", fmt_events(&self.events))?;
        write!(f, "  result: {}", fmt_result(&self.result))
    }
}

/// One outcome of `request`, every field: `data {"job_id":"fresh_3"}`,
/// `transient rate_limited, retry_after 1.5`, `permanent not_found, status 404`.
pub fn describe_outcome(outcome: &Result<Reply, RequestError>) -> String {
    match outcome {
        Ok(v) => format!("data {v}"),
        Err(RequestError::Transient(t)) => {
            let mut text = format!("transient {}", t.reason);
            match t.retry_after {
                Some(w) => text.push_str(&format!(", retry_after {w:?}")),
                None => text.push_str(", no retry_after"),
            }
            if !t.detail.is_empty() {
                text.push_str(&format!(", detail {:?}", t.detail));
            }
            text
        }
        Err(RequestError::Permanent(p)) => {
            let mut text = format!("permanent {}", p.kind);
            match p.status {
                Some(s) => text.push_str(&format!(", status {s}")),
                None => text.push_str(", no status"),
            }
            if !p.detail.is_empty() {
                text.push_str(&format!(", detail {:?}", p.detail));
            }
            text
        }
    }
}

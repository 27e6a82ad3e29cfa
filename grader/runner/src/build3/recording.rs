//! Runs one implementation against a scripted request and records every callback.
//!
//! Nothing here really sleeps: `sleep` only writes the planned delay down.

use crate::panics::{CheckFailure, DeliberatePanic};
use crate::secs::{same_secs, same_waits};
use kit_types::graded::{Reply, RetryFn};
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
    /// Every callback, in the order of `retry_request`'s parameters.
    pub(crate) const ALL: [Callback; 3] = [Callback::Request, Callback::Sleep, Callback::Log];

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
            Some(step) => fresh(step),
            None if self.repeat_last && !self.steps.is_empty() => {
                fresh(&self.steps[self.steps.len() - 1])
            }
            None => panic::panic_any(CheckFailure(format!(
                "request was called {call} times, but the script has only {} outcome(s)",
                self.steps.len()
            ))),
        }
    }
}

/// A copy of a scripted outcome, for one call of `request` (and for the exhaustive check's
/// scripts). The check makes about a million of them: the common ones (a number, a failure
/// without detail) are built field by field (every field named, so a new one stops the
/// build here), which took it from 1,028 to 944 million instructions (callgrind); a derived
/// `clone` of the whole `Result` goes through a call per layer and a copy of an empty string.
pub fn fresh(step: &Result<Reply, RequestError>) -> Result<Reply, RequestError> {
    match step {
        Ok(Reply::Number(n)) => Ok(Reply::Number(n.clone())),
        Err(RequestError::Transient(t)) if t.detail.is_empty() => {
            Err(RequestError::Transient(kit_types::TransientError {
                reason: t.reason,
                retry_after: t.retry_after,
                detail: String::new(),
            }))
        }
        Err(RequestError::Permanent(p)) if p.detail.is_empty() => {
            Err(RequestError::Permanent(kit_types::PermanentError {
                kind: p.kind,
                status: p.status,
                detail: String::new(),
            }))
        }
        other => other.clone(),
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

/// Runs `imp` once on `policy` and `script` into `rec`, whose buffers are cleared and reused
/// (the exhaustive check records hundreds of thousands of runs); with `panic_in`, that
/// callback panics with [`DeliberatePanic`] each time it is called.
///
/// Returns the panic's payload when the run panicked, so that the caller decides what a
/// panic means. Panics raised by the grader's own guards ([`CheckFailure`]) are passed on
/// unchanged.
pub fn record_into(
    rec: &mut Recording,
    imp: RetryFn,
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
    // Each callback's calls so far: counted as they come, since a run that loops to the
    // guard makes thousands (counting the order again each time made such a run quadratic).
    // A cell each: one cell holding the three made every call copy the array whole, and
    // reading it back right after writing one of its counts stalled the processor, a
    // seventh of the exhaustive check's time.
    let counts = [const { std::cell::Cell::new(0u32) }; 3];
    let enter = |callback: Callback| -> u32 {
        let n = {
            let mut s = state.borrow_mut();
            s.order.push(callback);
            let slot = &counts[callback as usize];
            let n = slot.get().saturating_add(1);
            slot.set(n);
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
        imp(policy, &mut request, &mut sleep, &mut log)
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
    /// Whether two runs made the same calls, waits and events, in the same order of
    /// callbacks (the lesson says which comes first: log, then sleep), and ended the same
    /// way.
    pub fn same_as(&self, other: &Recording) -> bool {
        self.calls == other.calls
            && same_waits(&self.waits, &other.waits)
            && same_events(&self.events, &other.events)
            && self.order == other.order
            && self.result == other.result
    }
}

/// A short, readable form of a float list: `[0.25, 0.5]`.
pub use crate::secs::fmt_secs as fmt_waits;

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

/// Digests of recordings: what lets the exhaustive check compare the learner's run with a
/// reference run it did not make (the grader makes it once and hands over the digests).
mod digest {
    use super::{Recording, Reply};
    use kit_types::{PermanentError, PolicyError, RetryError, RetryEvent};

    /// Words folded into 64 bits. Each step is a multiply and a rotate (the digest runs once
    /// per case, beside a run of the code that is itself cheap: grader/benches/README.md), and the end is
    /// splitmix64's finalizer, so that every input bit reaches every output bit.
    pub(super) struct Digest(u64);

    /// The sign that a recording is left undigested: it holds a NaN. Where `same_as` compares
    /// with `==` (a refused policy's values) a NaN never equals itself, so equal bits would
    /// not mean equal; waits and delays (where NaN equals NaN) are left out too, for one
    /// simple rule: the reference never produces one.
    pub(super) struct HasNan;

    impl Digest {
        pub(super) fn new() -> Self {
            Digest(0x243F_6A88_85A3_08D3)
        }

        fn word(&mut self, w: u64) {
            self.0 = (self.0 ^ w)
                .wrapping_mul(0x9E37_79B9_7F4A_7C15)
                .rotate_left(29);
        }

        fn float(&mut self, x: f64) -> Result<(), HasNan> {
            if x.is_nan() {
                return Err(HasNan);
            }
            self.word(x.to_bits());
            Ok(())
        }

        fn text(&mut self, s: &str) {
            self.word(s.len() as u64);
            for chunk in s.as_bytes().chunks(8) {
                let mut bytes = [0u8; 8];
                bytes[..chunk.len()].copy_from_slice(chunk);
                self.word(u64::from_le_bytes(bytes));
            }
        }

        pub(super) fn finish(self) -> u64 {
            let mut x = self.0;
            x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            x ^ (x >> 31)
        }

        /// Every field [`Recording::same_as`] compares. The types are taken apart field by
        /// field, without `..`, so a field added to one of them stops the build here until
        /// the digest covers it too.
        pub(super) fn recording(&mut self, rec: &Recording) -> Result<(), HasNan> {
            let Recording {
                calls,
                waits,
                events,
                order,
                result,
            } = rec;
            // Small fields share a word (each in bits of its own, so that the packing is
            // one-to-one): the digest's cost is a multiply per word, and this halved the
            // words of a common run. A callback guard stops a run long before a length
            // reaches 32 bits.
            self.word(u64::from(*calls) | (waits.len() as u64) << 32);
            self.word(events.len() as u64 | (order.len() as u64) << 32);
            for wait in waits {
                self.float(*wait)?;
            }
            for event in events {
                self.event(event)?;
            }
            // The callbacks, two bits each (1, 2 or 3: never 0), 32 to a word.
            for chunk in order.chunks(32) {
                let packed = chunk.iter().enumerate().fold(0u64, |word, (i, callback)| {
                    let code = match callback {
                        super::Callback::Request => 1,
                        super::Callback::Sleep => 2,
                        super::Callback::Log => 3,
                    };
                    word | code << (2 * i)
                });
                self.word(packed);
            }
            match result {
                None => self.word(0),
                Some(Ok(value)) => {
                    self.word(1);
                    self.value(value)?;
                }
                Some(Err(error)) => {
                    self.word(2);
                    self.error(error)?;
                }
            }
            Ok(())
        }

        fn event(&mut self, event: &RetryEvent) -> Result<(), HasNan> {
            let RetryEvent {
                attempt,
                reason,
                action,
                delay,
                cause,
            } = event;
            // One word: the attempt in the low 32 bits, then a byte each for the reason,
            // the action, the cause (0 for none) and whether a delay follows.
            let small = |n: u64| n & 0xff;
            self.word(
                u64::from(*attempt)
                    | small(*reason as u64) << 32
                    | small(*action as u64) << 40
                    | small(cause.map_or(0, |c| 1 + c as u64)) << 48
                    | u64::from(delay.is_some()) << 56,
            );
            if let Some(d) = delay {
                self.float(*d)?;
            }
            Ok(())
        }

        fn value(&mut self, value: &Reply) -> Result<(), HasNan> {
            match value {
                Reply::Null => self.word(0),
                Reply::Bool(b) => {
                    self.word(1);
                    self.word(u64::from(*b));
                }
                Reply::Number(n) => {
                    // serde_json's `==` tells an integer from a float of the same value.
                    self.word(2);
                    if let Some(u) = n.as_u64() {
                        self.word(0);
                        self.word(u);
                    } else if let Some(i) = n.as_i64() {
                        self.word(1);
                        self.word(i as u64);
                    } else {
                        self.word(2);
                        self.float(n.as_f64().unwrap_or(f64::NAN))?;
                    }
                }
                Reply::String(s) => {
                    self.word(3);
                    self.text(s);
                }
                Reply::Array(items) => {
                    self.word(4);
                    self.word(items.len() as u64);
                    for item in items {
                        self.value(item)?;
                    }
                }
                Reply::Object(map) => {
                    self.word(5);
                    self.word(map.len() as u64);
                    for (key, item) in map {
                        self.text(key);
                        self.value(item)?;
                    }
                }
            }
            Ok(())
        }

        fn error(&mut self, error: &RetryError) -> Result<(), HasNan> {
            match error {
                RetryError::InvalidPolicy(problem) => {
                    self.word(0);
                    self.policy_error(problem)?;
                }
                RetryError::Exhausted {
                    attempts,
                    reason,
                    cause,
                } => {
                    self.word(1);
                    self.word(u64::from(*attempts));
                    self.word(*reason as u64);
                    self.word(*cause as u64);
                }
                RetryError::Permanent(PermanentError {
                    kind,
                    status,
                    detail,
                }) => {
                    self.word(2);
                    self.word(*kind as u64);
                    self.word(status.map_or(0, |s| 1 + u64::from(s)));
                    self.text(detail);
                }
            }
            Ok(())
        }

        fn policy_error(&mut self, problem: &PolicyError) -> Result<(), HasNan> {
            match problem {
                PolicyError::UnsupportedMethod(method) => {
                    self.word(0);
                    self.text(method);
                }
                PolicyError::AttemptsOutOfRange(n) => {
                    self.word(1);
                    self.word(u64::from(*n));
                }
                PolicyError::DelayNotFinite { field } => {
                    self.word(2);
                    self.text(field);
                }
                PolicyError::DelayOutOfRange { field, value } => {
                    self.word(3);
                    self.text(field);
                    self.float(*value)?;
                }
                PolicyError::BaseAboveMax { base, max } => {
                    self.word(4);
                    self.float(*base)?;
                    self.float(*max)?;
                }
            }
            Ok(())
        }
    }
}

impl Recording {
    /// A 64-bit digest of everything [`same_as`](Recording::same_as) compares, never 0; `None`
    /// when the recording holds a NaN anywhere (where `same_as` uses `==`, a NaN never
    /// equals itself, so only a full comparison may judge such a recording).
    ///
    /// Equal recordings have equal digests, and different ones different digests but for a
    /// chance of about 2⁻⁶⁴ — except that `same_as` forgives float differences of a few
    /// ulps, which the digest does not: a digest that differs says nothing, and the caller
    /// compares in full.
    pub fn digest(&self) -> Option<u64> {
        let mut digest = digest::Digest::new();
        digest.recording(self).ok()?;
        Some(digest.finish().max(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kit_types::{
        PermanentError, PermanentKind, PolicyError, RetryEvent, StopCause, TransientReason,
    };

    fn sample() -> Recording {
        Recording {
            calls: 2,
            waits: vec![0.25],
            events: vec![
                RetryEvent::retry(1, TransientReason::Timeout, 0.25),
                RetryEvent::stop(2, TransientReason::Timeout, StopCause::AttemptLimit),
            ],
            order: vec![Callback::Request, Callback::Log, Callback::Sleep],
            result: Some(Err(RetryError::Exhausted {
                attempts: 2,
                reason: TransientReason::Timeout,
                cause: StopCause::AttemptLimit,
            })),
        }
    }

    #[test]
    fn a_fresh_outcome_equals_a_clone_of_it() {
        use kit_types::TransientError;
        let steps: Vec<Result<Reply, RequestError>> = vec![
            Ok(Reply::from(7u64)),
            Ok(Reply::from(-7)),
            Ok(Reply::from(0.5)),
            Ok(Reply::Null),
            Ok(serde_json::json!({"job_id": "fresh_1"})),
            Err(TransientError::new(TransientReason::Timeout).into()),
            Err(TransientError::new(TransientReason::RateLimited)
                .with_retry_after(1.5)
                .into()),
            Err(TransientError::new(TransientReason::Timeout)
                .with_detail("token=x")
                .into()),
            Err(PermanentError::new(PermanentKind::NotFound).into()),
            Err(PermanentError::new(PermanentKind::NotFound)
                .with_status(404)
                .with_detail("GET /x")
                .into()),
        ];
        for step in &steps {
            assert_eq!(&fresh(step), step);
        }
    }

    #[test]
    fn equal_recordings_have_equal_digests() {
        let (a, mut b) = (sample(), sample());
        assert_eq!(a.digest(), b.digest());
        assert!(a.digest().is_some_and(|d| d != 0));
        // The order of the callbacks counts: the lesson says log, then sleep.
        b.order.reverse();
        assert!(!a.same_as(&b));
        assert_ne!(a.digest(), b.digest());
    }

    /// Every field same_as compares changes the digest: a digest that matched a different
    /// recording would let the exhaustive check pass code it never compared.
    #[test]
    fn every_compared_field_changes_the_digest() {
        type Change = (&'static str, fn(&mut Recording));
        let changes: Vec<Change> = vec![
            ("calls", |r| r.calls = 3),
            ("a wait", |r| r.waits[0] = 0.5),
            ("one more wait", |r| r.waits.push(0.0)),
            ("an event's attempt", |r| r.events[0].attempt = 2),
            ("an event's reason", |r| {
                r.events[0].reason = TransientReason::ServerError
            }),
            ("an event's action", |r| {
                r.events[1] = RetryEvent {
                    action: kit_types::RetryAction::Retry,
                    ..r.events[1]
                }
            }),
            ("an event's delay", |r| r.events[0].delay = Some(0.5)),
            ("an event without its delay", |r| r.events[0].delay = None),
            ("an event's cause", |r| {
                r.events[1].cause = Some(StopCause::DelayBudget)
            }),
            ("one event fewer", |r| {
                r.events.pop();
            }),
            ("sleep before log", |r| r.order.swap(1, 2)),
            ("one callback more", |r| r.order.push(Callback::Request)),
            // Past the 32 callbacks one word of the digest holds.
            ("a 33rd callback", |r| {
                r.order.resize(33, Callback::Request);
            }),
            ("no result (a panic)", |r| r.result = None),
            ("the stop's cause", |r| {
                r.result = Some(Err(RetryError::Exhausted {
                    attempts: 2,
                    reason: TransientReason::Timeout,
                    cause: StopCause::DelayBudget,
                }))
            }),
            ("a success", |r| r.result = Some(Ok(Reply::from(2u64)))),
            ("a float reply", |r| r.result = Some(Ok(Reply::from(2.0)))),
            ("a string reply", |r| r.result = Some(Ok(Reply::from("2")))),
            ("an object reply", |r| {
                r.result = Some(Ok(serde_json::json!({"job_id": "fresh_1"})))
            }),
            ("a permanent failure", |r| {
                r.result = Some(Err(PermanentError::new(PermanentKind::NotFound).into()))
            }),
            ("its status", |r| {
                r.result = Some(Err(PermanentError::new(PermanentKind::NotFound)
                    .with_status(404)
                    .into()))
            }),
            ("its detail", |r| {
                r.result = Some(Err(PermanentError::new(PermanentKind::NotFound)
                    .with_detail("x")
                    .into()))
            }),
            ("a refused policy", |r| {
                r.result = Some(Err(PolicyError::AttemptsOutOfRange(0).into()))
            }),
            ("the refused value", |r| {
                r.result = Some(Err(PolicyError::DelayOutOfRange {
                    field: "max_delay",
                    value: 61.0,
                }
                .into()))
            }),
        ];
        let mut seen = vec![sample().digest()];
        for (what, change) in changes {
            let mut changed = sample();
            change(&mut changed);
            assert!(
                !changed.same_as(&sample()),
                "{what}: the change is one same_as sees"
            );
            let digest = changed.digest();
            assert!(digest.is_some(), "{what}");
            assert!(!seen.contains(&digest), "{what}: the digest did not change");
            seen.push(digest);
        }
        // The two integer replies that serde_json tells apart.
        let (mut a, mut b) = (sample(), sample());
        a.result = Some(Ok(Reply::from(2u64)));
        b.result = Some(Ok(Reply::from(2.0)));
        assert_ne!(a.digest(), b.digest());
    }

    #[test]
    fn a_nan_leaves_the_recording_to_a_full_comparison() {
        let mut r = sample();
        r.waits[0] = f64::NAN;
        assert_eq!(r.digest(), None);
        let mut r = sample();
        r.result = Some(Err(PolicyError::BaseAboveMax {
            base: f64::NAN,
            max: 1.0,
        }
        .into()));
        assert_eq!(r.digest(), None);
    }
}

//! build3: `retry_request`. Every fixture of the lesson's table, then the edges between them.
//!
//! Each check scripts the request's outcomes, records calls, waits and events (nothing really
//! sleeps) and compares them with what the rules of `exercises/build3/lesson.md`
//! demand. Failure messages say what was observed, what was expected, and the rule behind it.

use super::recording::{
    fmt_events, fmt_result, fmt_waits, record, same_events, Callback, Recording, Script,
};
use super::{Learner, Reply};
use crate::feedback::every_case;
use crate::feedback::{same_waits, Feedback};
use crate::lesson::CheckResult;
use crate::panics::DeliberatePanic;
use crate::view::Field;
use kit_types::{
    PermanentError, PermanentKind, PolicyError, RequestError, RetryError, RetryEvent, RetryPolicy,
    StopCause, TransientError, TransientReason,
};
use serde_json::json;
use std::panic;

crate::checks! { Learner;
    fixtures::third_attempt_success,
    fixtures::capped_exhaustion,
    fixtures::supported_retry_after,
    fixtures::delay_budget_stop,
    fixtures::input_refusal,
    fixtures::permanent_error,
    fixtures::sleep_panics,
    fixtures::log_panics,
    validation::method_must_be_exactly_get,
    validation::attempts_outside_one_to_five,
    validation::base_delay_not_finite_or_out_of_range,
    validation::max_delay_not_finite_or_out_of_range,
    validation::base_above_max,
    validation::first_problem_in_order,
    validation::boundaries_are_accepted,
    attempts::first_call_is_attempt_one,
    attempts::one_attempt_never_sleeps,
    attempts::no_sleep_after_last_attempt,
    attempts::attempt_limit_beats_delay_budget,
    backoff::doubles_then_caps,
    backoff::zero_delays_still_call_sleep,
    server_wait::nan_is_ignored,
    server_wait::negative_is_ignored,
    server_wait::infinite_stops,
    server_wait::huge_stops,
    server_wait::equal_to_budget_is_honoured,
    server_wait::just_above_budget_is_not_clamped,
    server_wait::smaller_than_backoff_keeps_backoff,
    server_wait::larger_than_backoff_is_honoured,
    server_wait::zero_keeps_backoff,
    outcomes::callers_own_value,
    outcomes::first_call_success,
    outcomes::permanent_after_transient,
    outcomes::every_permanent_kind,
    callbacks::request_panics,
    callbacks::log_before_sleep,
    events::each_event_is_fresh,
    events::json_shape,
    privacy::detail_is_never_printed,
    exhaustive::matches_reference_on_every_case => 120 s,
}

// ---------- building blocks ----------

/// The reply of call `n`: distinct per call, so a check sees which one came back.
fn value(n: u32) -> Reply {
    json!({ "job_id": format!("fresh_{n}"), "state": "done" })
}

fn data(n: u32) -> Result<Reply, RequestError> {
    Ok(value(n))
}

fn fail(reason: TransientReason) -> Result<Reply, RequestError> {
    Err(TransientError::new(reason).into())
}

fn server_error() -> Result<Reply, RequestError> {
    fail(TransientReason::ServerError)
}

fn rate_limited(wait: f64) -> Result<Reply, RequestError> {
    Err(TransientError::new(TransientReason::RateLimited)
        .with_retry_after(wait)
        .into())
}

fn permanent(kind: PermanentKind, status: u16) -> Result<Reply, RequestError> {
    Err(PermanentError::new(kind).with_status(status).into())
}

fn policy(max_attempts: u32, base_delay: f64, max_delay: f64) -> RetryPolicy {
    RetryPolicy {
        max_attempts,
        base_delay,
        max_delay,
        ..RetryPolicy::default()
    }
}

fn retry(attempt: u32, reason: TransientReason, delay: f64) -> RetryEvent {
    RetryEvent::retry(attempt, reason, delay)
}

fn stop(attempt: u32, reason: TransientReason, cause: StopCause) -> RetryEvent {
    RetryEvent::stop(attempt, reason, cause)
}

fn exhausted(
    attempts: u32,
    reason: TransientReason,
    cause: StopCause,
) -> Result<Reply, RetryError> {
    Err(RetryError::Exhausted {
        attempts,
        reason,
        cause,
    })
}

use StopCause::{AttemptLimit, DelayBudget};
use TransientReason::{Connection, RateLimited, ServerError, Timeout};

/// What a run must look like.
struct Expected {
    calls: u32,
    waits: Vec<f64>,
    events: Vec<RetryEvent>,
    result: Result<Reply, RetryError>,
}

impl Expected {
    fn as_recording(&self) -> Recording {
        Recording {
            calls: self.calls,
            waits: self.waits.clone(),
            events: self.events.clone(),
            order: Vec::new(),
            result: Some(self.result.clone()),
        }
    }
}

/// Runs the implementation and compares the whole run with `expected`.
fn expect_run(
    imp: &Learner,
    policy: &RetryPolicy,
    script: Script,
    expected: Expected,
    rule: &str,
) -> CheckResult {
    // The call guard stops a loop that never ends by raising its own panic through the
    // learner's code: its words say what happened, and this check's rule says what was
    // expected of this input (a loop that retries a permanent failure reaches the guard
    // here, and the rule names the real mistake).
    let recorded = panic::catch_unwind(panic::AssertUnwindSafe(|| {
        record(imp, policy, &script, None)
    }));
    let (rec, panicked) = match recorded {
        Ok(recorded) => recorded,
        Err(payload) => match payload.downcast::<crate::panics::CheckFailure>() {
            Ok(guard) => {
                return Err(Feedback::new(guard.0, rule)
                    .input(input(policy, &script))
                    .did(vec![Field::line(
                        "result",
                        "none: retry_request never returned (stopped there)",
                    )])
                    .expected(run_fields(&expected.as_recording()))
                    .render())
            }
            Err(payload) => panic::resume_unwind(payload),
        },
    };
    if let Some(payload) = panicked {
        // Unfinished code and unexpected panics are classified by the harness.
        panic::resume_unwind(payload);
    }
    compare(policy, &script, &rec, &expected, rule)
}

/// The input of a run: the policy and what request returns, call by call, every field.
pub(crate) fn input(policy: &RetryPolicy, script: &Script) -> Vec<Field> {
    vec![
        Field::line(
            "policy",
            format!(
                "method {:?}, max_attempts {}, base_delay {:?}, max_delay {:?}",
                policy.method, policy.max_attempts, policy.base_delay, policy.max_delay
            ),
        ),
        Field::block("request", script.describe()),
    ]
}

/// A run as fields: calls, waits, events, result.
fn run_fields(rec: &Recording) -> Vec<Field> {
    vec![
        Field::line("calls", rec.calls.to_string()),
        Field::line("waits", fmt_waits(&rec.waits)),
        Field::block("events", rec.events.iter().map(|e| e.to_string()).collect()),
        Field::line("result", fmt_result(&rec.result)),
    ]
}

/// What the checks say of events numbered otherwise than the reference's.
const NUMBERED_FROM_ONE: &str = "Attempts are numbered from 1 on every call of retry_request: \
    the first call of request is attempt 1. A count that starts elsewhere, or one kept from an \
    earlier call (a `static`), numbers them wrong.";

/// The rule a run breaks first, against the reference's run of the same case: the words a
/// named check would give for the first part where they differ (the attempts' numbering,
/// calls, waits, result, the order of the callbacks). `None` when the difference is one no
/// hint names (the events alone).
pub(crate) fn rule_broken(
    policy: &RetryPolicy,
    script: &Script,
    theirs: &Recording,
    reference: &Recording,
) -> Option<String> {
    let exp = Expected {
        calls: reference.calls,
        waits: reference.waits.clone(),
        events: reference.events.clone(),
        result: reference.result.clone()?,
    };
    // The first event numbered otherwise than the reference's first, with a number no
    // attempt of this run had (0, or past the calls made): the count is wrong from the
    // start, whatever else follows from it. (A first event that is a later attempt's, where
    // the first attempt's event is missing, is numbered right.)
    let first_numbered_otherwise = matches!(
        (theirs.events.first(), exp.events.first()),
        (Some(a), Some(b)) if a.attempt != b.attempt
            && (a.attempt == 0 || a.attempt > theirs.calls)
    );
    if first_numbered_otherwise {
        Some(NUMBERED_FROM_ONE.into())
    } else if theirs.calls != exp.calls {
        calls_hint(policy, script, theirs, &exp)
    } else if !same_waits(&theirs.waits, &exp.waits) {
        waits_hint(policy, theirs, &exp)
    } else if theirs.result.as_ref() != Some(&exp.result)
        && same_events(&theirs.events, &exp.events)
    {
        result_hint(theirs, &exp)
    } else if theirs.order != reference.order && same_events(&theirs.events, &exp.events) {
        Some("For each retry: log the event, then sleep, then call request again.".into())
    } else if theirs.events.len() == exp.events.len()
        && theirs
            .events
            .iter()
            .zip(&exp.events)
            .any(|(a, b)| a.attempt != b.attempt)
    {
        Some(NUMBERED_FROM_ONE.into())
    } else if theirs.events.len() < exp.events.len() {
        Some(
            "Every failed attempt is logged: a retry event before each sleep, a stop event \
             before giving up."
                .into(),
        )
    } else {
        None
    }
}

fn compare(
    policy: &RetryPolicy,
    script: &Script,
    rec: &Recording,
    exp: &Expected,
    rule: &str,
) -> CheckResult {
    let (summary, hint) = if rec.calls != exp.calls {
        (
            format!(
                "request was called {}; the rule expects {}.",
                crate::feedback::plural(u64::from(rec.calls), "time"),
                exp.calls
            ),
            calls_hint(policy, script, rec, exp),
        )
    } else if !same_waits(&rec.waits, &exp.waits) {
        (
            format!(
                "sleep received {}; the rule expects {}.",
                fmt_waits(&rec.waits),
                fmt_waits(&exp.waits)
            ),
            waits_hint(policy, rec, exp),
        )
    } else if !same_events(&rec.events, &exp.events) {
        (
            {
                // Said in words when one side logged nothing, as the events block says it.
                let said = |events: &[RetryEvent]| {
                    if events.is_empty() {
                        "no event".to_string()
                    } else {
                        fmt_events(events)
                    }
                };
                format!(
                    "log received {}; the rule expects {}.",
                    said(&rec.events),
                    said(&exp.events)
                )
            },
            None,
        )
    } else if rec.result.as_ref() != Some(&exp.result) {
        (
            format!(
                "retry_request returned {}; the rule expects {}.",
                fmt_result(&rec.result),
                fmt_result(&Some(exp.result.clone()))
            ),
            result_hint(rec, exp),
        )
    } else {
        return Ok(());
    };
    Err(
        Feedback::new(summary, hint.unwrap_or_else(|| rule.to_string()))
            .input(input(policy, script))
            .did(run_fields(rec))
            .expected(run_fields(&exp.as_recording()))
            .first_difference()
            .render(),
    )
}

fn calls_hint(
    policy: &RetryPolicy,
    script: &Script,
    rec: &Recording,
    exp: &Expected,
) -> Option<String> {
    let m = policy.max_attempts;
    if rec.calls < exp.calls {
        if let Some(why) = early_budget_stop(policy, script, rec) {
            return Some(why);
        }
    }
    if exp.calls == 0 {
        return Some(
            "An invalid policy is refused before any callback runs: validate first.".into(),
        );
    }
    if rec.calls == 0 && rec.result.is_some() {
        return Some(
            "request was never called, though the policy is valid: the first call of request \
             is attempt 1. A loop that counts from elsewhere, or a count kept from an earlier \
             call (a `static`), skips it."
                .into(),
        );
    }
    match &exp.result {
        Err(RetryError::Exhausted {
            cause: AttemptLimit, ..
        }) if rec.calls > exp.calls => Some(format!(
            "{} calls under max_attempts = {m}: the first call is attempt 1, so {} in all, then stop.",
            rec.calls,
            crate::feedback::plural(u64::from(m), "call")
        )),
        Err(RetryError::Exhausted {
            cause: DelayBudget, ..
        }) if rec.calls > exp.calls => Some(format!(
            "A server wait above max_delay = {} ends the loop: log a delay_budget stop instead of retrying (never shorten the server's wait to the budget).",
            policy.max_delay
        )),
        Err(RetryError::Permanent(_)) if rec.calls > exp.calls => Some(
            "A permanent failure ends the loop at once: retrying cannot fix it.".into(),
        ),
        Ok(_) if rec.calls > exp.calls => {
            Some("Return the request's Ok value as soon as it arrives.".into())
        }
        _ if rec.calls < exp.calls => Some(format!(
            "The loop stopped early: a transient failure before attempt {m} is retried."
        )),
        _ => None,
    }
}

/// Why the learner's loop stopped with `delay_budget` where the rule retries: the server's
/// wait at that attempt was one the rule lets through (equal to max_delay, NaN, negative).
fn early_budget_stop(policy: &RetryPolicy, script: &Script, rec: &Recording) -> Option<String> {
    let Some(Err(RetryError::Exhausted {
        attempts,
        cause: DelayBudget,
        ..
    })) = &rec.result
    else {
        return None;
    };
    let index = usize::try_from(*attempts).ok()?.checked_sub(1)?;
    let step = script
        .steps
        .get(index)
        .or(script.steps.last().filter(|_| script.repeat_last))?;
    let Err(RequestError::Transient(failure)) = step else {
        return None;
    };
    let wait = failure.retry_after?;
    let budget = policy.max_delay;
    if wait.is_nan() {
        Some(format!(
            "A retry_after of NaN is no wait at all: ignore it and keep the backoff. NaN is not \
             larger than max_delay = {budget} (every comparison with NaN is false), so a test \
             written as \"not within the budget\" stops on it where the rule retries."
        ))
    } else if wait == budget {
        Some(format!(
            "A server wait equal to max_delay = {budget} fits the budget: stop only when it is \
             larger (compare with >, not >=)."
        ))
    } else if wait < 0.0 {
        Some(format!(
            "A negative retry_after ({wait}) is ignored: keep the backoff and retry; only a wait \
             larger than max_delay = {budget} ends the loop."
        ))
    } else {
        None
    }
}

fn waits_hint(policy: &RetryPolicy, rec: &Recording, exp: &Expected) -> Option<String> {
    if rec.waits.len() == exp.waits.len() + 1 && rec.waits.starts_with(&exp.waits) {
        return Some(
            "Never sleep after the last failed attempt: once the loop stops, return.".into(),
        );
    }
    if let Err(RetryError::Exhausted {
        cause: DelayBudget, ..
    }) = exp.result
    {
        if rec.waits.len() > exp.waits.len() {
            return Some(format!(
                "The server asked for more than max_delay = {}: never shorten its wait to the budget, stop with delay_budget.",
                policy.max_delay
            ));
        }
    }
    Some(format!(
        "After failed attempt n, plan min(max_delay, base_delay * 2^(n-1)) = min({}, {} * 2^(n-1)), \
         or the server's supported wait when it is larger.",
        policy.max_delay, policy.base_delay
    ))
}

fn result_hint(rec: &Recording, exp: &Expected) -> Option<String> {
    match (&rec.result, &exp.result) {
        (Some(Ok(_)), Err(RetryError::Permanent(_))) => Some(
            "A permanent refusal turned into success: remove the broad catch or fallback.".into(),
        ),
        (Some(Ok(got)), Ok(want)) if got != want => Some(
            "Return the value the request returned, unchanged: never a made-up or earlier one."
                .into(),
        ),
        (Some(Err(RetryError::Permanent(got))), Err(RetryError::Permanent(want)))
            if got != want =>
        {
            Some("Return the request's own permanent error, unchanged.".into())
        }
        _ => None,
    }
}

/// Runs with `panic_in` panicking, and demands that the panic comes out and nothing runs after it.
fn expect_propagation(
    imp: &Learner,
    script: Script,
    panic_in: Callback,
    calls: u32,
) -> CheckResult {
    let policy = RetryPolicy::default();
    let (rec, panicked) = record(imp, &policy, &script, Some(panic_in));
    let order = |order: &[Callback]| -> String {
        let names: Vec<&str> = order.iter().map(|c| c.name()).collect();
        names.join(", ")
    };
    let mut input = input(&policy, &script);
    input.push(Field::line(
        "panics",
        format!("{panic_in} panics each time it is called"),
    ));
    let expected_order: Vec<Callback> = match panic_in {
        Callback::Request => vec![Callback::Request],
        Callback::Log => vec![Callback::Request, Callback::Log],
        Callback::Sleep => vec![Callback::Request, Callback::Log, Callback::Sleep],
    };
    let fail = |summary: String, why: &str, rec: &Recording| {
        let mut did = vec![Field::line("callbacks, in order", order(&rec.order))];
        did.extend(run_fields(rec));
        Err(Feedback::new(summary, why)
            .input(input.clone())
            .did(did)
            .expected(vec![
                Field::line("callbacks, in order", order(&expected_order)),
                Field::line(
                    "result",
                    format!("the panic from {panic_in} comes out of retry_request"),
                ),
            ])
            .first_difference()
            .render())
    };
    let payload = match panicked {
        Some(p) => p,
        // The callback that panics was never called: the run did not reach it (no log
        // before a retry, no sleep between attempts), and says nothing of panics.
        None if !rec.order.contains(&panic_in) => {
            return fail(
                format!(
                    "{panic_in} was never called, and retry_request returned {}.",
                    fmt_result(&rec.result)
                ),
                match panic_in {
                    Callback::Request => {
                        "retry_request makes its first attempt by calling request."
                    }
                    Callback::Log => {
                        "Each retry is logged before the wait: after a transient failure, call \
                         log with the retry event, then sleep, then request again."
                    }
                    Callback::Sleep => {
                        "Between two attempts the run waits: after logging the retry, call \
                         sleep with the delay, then request again."
                    }
                },
                &rec,
            );
        }
        None => {
            return fail(
                format!(
                    "{panic_in} panicked, but retry_request returned {}.",
                    fmt_result(&rec.result)
                ),
                "A panic in a callback is a programming error, not a failure to retry: let it \
                 propagate (no catch_unwind).",
                &rec,
            )
        }
    };
    if !payload.is::<DeliberatePanic>() {
        panic::resume_unwind(payload);
    }
    if rec.order.last() != Some(&panic_in) {
        return fail(
            format!("callbacks ran after {panic_in} panicked."),
            "Nothing runs after a callback's panic: it propagates at once.",
            &rec,
        );
    }
    if rec.calls != calls {
        return fail(
            format!(
                "request was called {} before {panic_in} panicked; the rule expects {calls}.",
                crate::feedback::plural(u64::from(rec.calls), "time")
            ),
            "For each retry: log the event, then sleep, then call request again.",
            &rec,
        );
    }
    if !rec.waits.is_empty() {
        return fail(
            format!(
                "sleep received {} before {panic_in} panicked; the rule expects no sleep.",
                fmt_waits(&rec.waits)
            ),
            "For each retry: log the event first, then sleep.",
            &rec,
        );
    }
    Ok(())
}

fn expect_refusal(imp: &Learner, policy: RetryPolicy, error: PolicyError) -> CheckResult {
    let expected = Expected {
        calls: 0,
        waits: vec![],
        events: vec![],
        result: Err(RetryError::InvalidPolicy(error.clone())),
    };
    let rule = format!(
        "Refuse {policy:?} with InvalidPolicy({error:?}): checks run in order method, max_attempts, \
         base_delay (finite, then 0..=60), max_delay (finite, then 0..=60), base_delay <= max_delay."
    );
    let script = Script::repeating(vec![data(1)]);
    let (rec, panicked) = record(imp, &policy, &script, None);
    if let Some(payload) = panicked {
        panic::resume_unwind(payload);
    }
    compare(&policy, &script, &rec, &expected, &rule)
}

// ---------- the checks ----------

mod fixtures {
    use super::*;

    pub(crate) fn third_attempt_success(imp: &Learner) -> CheckResult {
        expect_run(
            imp,
            &RetryPolicy::default(),
            Script::repeating(vec![server_error(), server_error(), data(3)]),
            Expected {
                calls: 3,
                waits: vec![0.25, 0.5],
                events: vec![retry(1, ServerError, 0.25), retry(2, ServerError, 0.5)],
                result: Ok(value(3)),
            },
            "Two server errors, then data: retry twice (0.25 s, 0.5 s) and return the data.",
        )
    }

    pub(crate) fn capped_exhaustion(imp: &Learner) -> CheckResult {
        expect_run(
            imp,
            &policy(5, 1.0, 1.5),
            Script::repeating(vec![server_error()]),
            Expected {
                calls: 5,
                waits: vec![1.0, 1.5, 1.5, 1.5],
                events: vec![
                    retry(1, ServerError, 1.0),
                    retry(2, ServerError, 1.5),
                    retry(3, ServerError, 1.5),
                    retry(4, ServerError, 1.5),
                    stop(5, ServerError, AttemptLimit),
                ],
                result: exhausted(5, ServerError, AttemptLimit),
            },
            "Backoff doubles from base_delay and never exceeds max_delay; the fifth failure stops.",
        )
    }

    pub(crate) fn supported_retry_after(imp: &Learner) -> CheckResult {
        expect_run(
            imp,
            &RetryPolicy::default(),
            Script::repeating(vec![rate_limited(1.5), data(2)]),
            Expected {
                calls: 2,
                waits: vec![1.5],
                events: vec![retry(1, RateLimited, 1.5)],
                result: Ok(value(2)),
            },
            "A supported server wait larger than the backoff is honoured.",
        )
    }

    pub(crate) fn delay_budget_stop(imp: &Learner) -> CheckResult {
        expect_run(
            imp,
            &RetryPolicy::default(),
            Script::repeating(vec![rate_limited(3.0), data(2)]),
            Expected {
                calls: 1,
                waits: vec![],
                events: vec![stop(1, RateLimited, DelayBudget)],
                result: exhausted(1, RateLimited, DelayBudget),
            },
            "A server wait of 3 s under max_delay = 2 stops with delay_budget: never clamp it to 2 s.",
        )
    }

    pub(crate) fn input_refusal(imp: &Learner) -> CheckResult {
        let d = RetryPolicy::default;
        every_case(vec![
            expect_refusal(
                imp,
                RetryPolicy {
                    method: "POST".into(),
                    ..d()
                },
                PolicyError::UnsupportedMethod("POST".into()),
            ),
            expect_refusal(
                imp,
                RetryPolicy {
                    max_attempts: 0,
                    ..d()
                },
                PolicyError::AttemptsOutOfRange(0),
            ),
            expect_refusal(
                imp,
                RetryPolicy {
                    base_delay: f64::NAN,
                    ..d()
                },
                PolicyError::DelayNotFinite {
                    field: "base_delay",
                },
            ),
            expect_refusal(
                imp,
                RetryPolicy {
                    max_delay: 61.0,
                    ..d()
                },
                PolicyError::DelayOutOfRange {
                    field: "max_delay",
                    value: 61.0,
                },
            ),
            expect_refusal(
                imp,
                policy(3, 3.0, 2.0),
                PolicyError::BaseAboveMax {
                    base: 3.0,
                    max: 2.0,
                },
            ),
        ])
    }

    pub(crate) fn permanent_error(imp: &Learner) -> CheckResult {
        expect_run(
            imp,
            &RetryPolicy::default(),
            Script::repeating(vec![permanent(PermanentKind::NotFound, 404)]),
            Expected {
                calls: 1,
                waits: vec![],
                events: vec![],
                result: Err(RetryError::Permanent(
                    PermanentError::new(PermanentKind::NotFound).with_status(404),
                )),
            },
            "A 404 is permanent: return it at once, with no event and no sleep.",
        )
    }

    pub(crate) fn sleep_panics(imp: &Learner) -> CheckResult {
        expect_propagation(
            imp,
            Script::repeating(vec![server_error()]),
            Callback::Sleep,
            1,
        )
    }

    pub fn log_panics(imp: &Learner) -> CheckResult {
        expect_propagation(
            imp,
            Script::repeating(vec![server_error()]),
            Callback::Log,
            1,
        )
    }
}

mod validation {
    use super::*;

    pub(crate) fn method_must_be_exactly_get(imp: &Learner) -> CheckResult {
        every_case(
            ["POST", "get", "GET ", "", "PUT", "HEAD"]
                .into_iter()
                .map(|m| {
                    let p = RetryPolicy {
                        method: m.into(),
                        ..RetryPolicy::default()
                    };
                    expect_refusal(imp, p, PolicyError::UnsupportedMethod(m.into()))
                })
                .collect::<Vec<_>>(),
        )
    }

    pub(crate) fn attempts_outside_one_to_five(imp: &Learner) -> CheckResult {
        every_case(
            [0, 6, 10, u32::MAX]
                .into_iter()
                .map(|n| {
                    let p = RetryPolicy {
                        max_attempts: n,
                        ..RetryPolicy::default()
                    };
                    expect_refusal(imp, p, PolicyError::AttemptsOutOfRange(n))
                })
                .collect::<Vec<_>>(),
        )
    }

    fn delay_cases(imp: &Learner, field: &'static str) -> CheckResult {
        let make = |v: f64| {
            let mut p = policy(3, 0.25, 60.0);
            if field == "base_delay" {
                p.base_delay = v;
            } else {
                p.base_delay = 0.0;
                p.max_delay = v;
            }
            p
        };
        let mut cases = Vec::new();
        for v in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            cases.push(expect_refusal(
                imp,
                make(v),
                PolicyError::DelayNotFinite { field },
            ));
        }
        for v in [-0.5, -f64::MIN_POSITIVE, 60.0f64.next_up(), 61.0, 1e300] {
            cases.push(expect_refusal(
                imp,
                make(v),
                PolicyError::DelayOutOfRange { field, value: v },
            ));
        }
        every_case(cases)
    }

    pub(crate) fn base_delay_not_finite_or_out_of_range(imp: &Learner) -> CheckResult {
        delay_cases(imp, "base_delay")
    }

    pub(crate) fn max_delay_not_finite_or_out_of_range(imp: &Learner) -> CheckResult {
        delay_cases(imp, "max_delay")
    }

    pub(crate) fn base_above_max(imp: &Learner) -> CheckResult {
        every_case(vec![
            expect_refusal(
                imp,
                policy(3, 0.5, 0.25),
                PolicyError::BaseAboveMax {
                    base: 0.5,
                    max: 0.25,
                },
            ),
            expect_refusal(
                imp,
                policy(3, 60.0, 0.0),
                PolicyError::BaseAboveMax {
                    base: 60.0,
                    max: 0.0,
                },
            ),
        ])
    }

    pub(crate) fn first_problem_in_order(imp: &Learner) -> CheckResult {
        let all_wrong = RetryPolicy {
            method: "POST".into(),
            max_attempts: 0,
            base_delay: f64::NAN,
            max_delay: -1.0,
        };
        every_case(vec![
            expect_refusal(
                imp,
                all_wrong.clone(),
                PolicyError::UnsupportedMethod("POST".into()),
            ),
            expect_refusal(
                imp,
                RetryPolicy {
                    method: "GET".into(),
                    ..all_wrong.clone()
                },
                PolicyError::AttemptsOutOfRange(0),
            ),
            expect_refusal(
                imp,
                RetryPolicy {
                    method: "GET".into(),
                    max_attempts: 3,
                    ..all_wrong.clone()
                },
                PolicyError::DelayNotFinite {
                    field: "base_delay",
                },
            ),
            // base_delay is checked completely (finite, then range) before max_delay.
            expect_refusal(
                imp,
                RetryPolicy {
                    method: "GET".into(),
                    max_attempts: 3,
                    base_delay: 61.0,
                    max_delay: f64::NAN,
                },
                PolicyError::DelayOutOfRange {
                    field: "base_delay",
                    value: 61.0,
                },
            ),
            expect_refusal(
                imp,
                RetryPolicy {
                    method: "GET".into(),
                    max_attempts: 3,
                    base_delay: 5.0,
                    max_delay: 61.0,
                },
                PolicyError::DelayOutOfRange {
                    field: "max_delay",
                    value: 61.0,
                },
            ),
        ])
    }

    pub(crate) fn boundaries_are_accepted(imp: &Learner) -> CheckResult {
        every_case(vec![
            expect_run(
                imp,
                &policy(1, 0.0, 0.0),
                Script::repeating(vec![data(1)]),
                Expected {
                    calls: 1,
                    waits: vec![],
                    events: vec![],
                    result: Ok(value(1)),
                },
                "max_attempts = 1 and delays of 0 are valid.",
            ),
            expect_run(
                imp,
                &policy(5, 60.0, 60.0),
                Script::repeating(vec![fail(Timeout)]),
                Expected {
                    calls: 5,
                    waits: vec![60.0; 4],
                    events: vec![
                        retry(1, Timeout, 60.0),
                        retry(2, Timeout, 60.0),
                        retry(3, Timeout, 60.0),
                        retry(4, Timeout, 60.0),
                        stop(5, Timeout, AttemptLimit),
                    ],
                    result: exhausted(5, Timeout, AttemptLimit),
                },
                "max_attempts = 5 and delays of 60 s are valid.",
            ),
        ])
    }
}

mod attempts {
    use super::*;

    pub(crate) fn first_call_is_attempt_one(imp: &Learner) -> CheckResult {
        expect_run(
            imp,
            &RetryPolicy::default(),
            Script::repeating(vec![fail(Timeout)]),
            Expected {
                calls: 3,
                waits: vec![0.25, 0.5],
                events: vec![
                    retry(1, Timeout, 0.25),
                    retry(2, Timeout, 0.5),
                    stop(3, Timeout, AttemptLimit),
                ],
                result: exhausted(3, Timeout, AttemptLimit),
            },
            "max_attempts = 3 means three calls in all, the first one included.",
        )
    }

    pub(crate) fn one_attempt_never_sleeps(imp: &Learner) -> CheckResult {
        expect_run(
            imp,
            &policy(1, 0.25, 2.0),
            Script::repeating(vec![server_error()]),
            Expected {
                calls: 1,
                waits: vec![],
                events: vec![stop(1, ServerError, AttemptLimit)],
                result: exhausted(1, ServerError, AttemptLimit),
            },
            "With max_attempts = 1 the first failure is the last: stop, no sleep.",
        )
    }

    pub(crate) fn no_sleep_after_last_attempt(imp: &Learner) -> CheckResult {
        expect_run(
            imp,
            &policy(2, 0.5, 2.0),
            Script::repeating(vec![fail(Connection)]),
            Expected {
                calls: 2,
                waits: vec![0.5],
                events: vec![retry(1, Connection, 0.5), stop(2, Connection, AttemptLimit)],
                result: exhausted(2, Connection, AttemptLimit),
            },
            "Never sleep after the last failed attempt.",
        )
    }

    pub(crate) fn attempt_limit_beats_delay_budget(imp: &Learner) -> CheckResult {
        expect_run(
            imp,
            &policy(2, 0.25, 2.0),
            Script::repeating(vec![server_error(), rate_limited(10.0)]),
            Expected {
                calls: 2,
                waits: vec![0.25],
                events: vec![
                    retry(1, ServerError, 0.25),
                    stop(2, RateLimited, AttemptLimit),
                ],
                result: exhausted(2, RateLimited, AttemptLimit),
            },
            "On the last attempt both stops apply; attempt_limit wins.",
        )
    }
}

mod backoff {
    use super::*;

    pub(crate) fn doubles_then_caps(imp: &Learner) -> CheckResult {
        expect_run(
            imp,
            &policy(5, 0.25, 1.0),
            Script::repeating(vec![
                fail(Timeout),
                fail(Timeout),
                fail(Timeout),
                fail(Timeout),
                data(5),
            ]),
            Expected {
                calls: 5,
                waits: vec![0.25, 0.5, 1.0, 1.0],
                events: vec![
                    retry(1, Timeout, 0.25),
                    retry(2, Timeout, 0.5),
                    retry(3, Timeout, 1.0),
                    retry(4, Timeout, 1.0),
                ],
                result: Ok(value(5)),
            },
            "Backoff after attempt n is min(max_delay, base_delay * 2^(n-1)).",
        )
    }

    pub(crate) fn zero_delays_still_call_sleep(imp: &Learner) -> CheckResult {
        expect_run(
            imp,
            &policy(3, 0.0, 0.0),
            Script::repeating(vec![server_error(), server_error(), data(3)]),
            Expected {
                calls: 3,
                waits: vec![0.0, 0.0],
                events: vec![retry(1, ServerError, 0.0), retry(2, ServerError, 0.0)],
                result: Ok(value(3)),
            },
            "A planned delay of 0 is still a planned delay: call sleep(0.0) before each retry.",
        )
    }
}

mod server_wait {
    use super::*;

    fn one_wait(imp: &Learner, wait: f64, planned: f64, rule: &str) -> CheckResult {
        expect_run(
            imp,
            &RetryPolicy::default(),
            Script::repeating(vec![rate_limited(wait), data(2)]),
            Expected {
                calls: 2,
                waits: vec![planned],
                events: vec![retry(1, RateLimited, planned)],
                result: Ok(value(2)),
            },
            rule,
        )
    }

    fn over_budget(imp: &Learner, policy: RetryPolicy, wait: f64) -> CheckResult {
        expect_run(
            imp,
            &policy,
            Script::repeating(vec![rate_limited(wait), data(2)]),
            Expected {
                calls: 1,
                waits: vec![],
                events: vec![stop(1, RateLimited, DelayBudget)],
                result: exhausted(1, RateLimited, DelayBudget),
            },
            "A server wait above max_delay stops with delay_budget; it is never shortened.",
        )
    }

    pub(crate) fn nan_is_ignored(imp: &Learner) -> CheckResult {
        one_wait(
            imp,
            f64::NAN,
            0.25,
            "A NaN server wait is unsupported: ignore it and use the backoff.",
        )
    }

    pub(crate) fn negative_is_ignored(imp: &Learner) -> CheckResult {
        one_wait(
            imp,
            -1.0,
            0.25,
            "A negative server wait is unsupported: ignore it and use the backoff.",
        )
    }

    pub(crate) fn infinite_stops(imp: &Learner) -> CheckResult {
        over_budget(imp, RetryPolicy::default(), f64::INFINITY)
    }

    pub(crate) fn huge_stops(imp: &Learner) -> CheckResult {
        over_budget(imp, RetryPolicy::default(), 1e300)
    }

    pub(crate) fn equal_to_budget_is_honoured(imp: &Learner) -> CheckResult {
        one_wait(
            imp,
            2.0,
            2.0,
            "A server wait equal to max_delay fits the budget: honour it.",
        )
    }

    pub(crate) fn just_above_budget_is_not_clamped(imp: &Learner) -> CheckResult {
        over_budget(imp, policy(3, 0.25, 1.5), 1.5f64.next_up())
    }

    pub(crate) fn smaller_than_backoff_keeps_backoff(imp: &Learner) -> CheckResult {
        expect_run(
            imp,
            &RetryPolicy::default(),
            Script::repeating(vec![server_error(), rate_limited(0.1), data(3)]),
            Expected {
                calls: 3,
                waits: vec![0.25, 0.5],
                events: vec![retry(1, ServerError, 0.25), retry(2, RateLimited, 0.5)],
                result: Ok(value(3)),
            },
            "Plan the larger of the backoff and a supported server wait.",
        )
    }

    pub(crate) fn larger_than_backoff_is_honoured(imp: &Learner) -> CheckResult {
        expect_run(
            imp,
            &RetryPolicy::default(),
            Script::repeating(vec![server_error(), rate_limited(1.25), data(3)]),
            Expected {
                calls: 3,
                waits: vec![0.25, 1.25],
                events: vec![retry(1, ServerError, 0.25), retry(2, RateLimited, 1.25)],
                result: Ok(value(3)),
            },
            "Plan the larger of the backoff and a supported server wait.",
        )
    }

    pub(crate) fn zero_keeps_backoff(imp: &Learner) -> CheckResult {
        one_wait(
            imp,
            0.0,
            0.25,
            "A server wait of 0 is supported and smaller than the backoff.",
        )
    }
}

mod outcomes {
    use super::*;

    pub(crate) fn callers_own_value(imp: &Learner) -> CheckResult {
        let own = json!({ "job_id": "fresh_2", "nonce": 0x5eed_u32, "items": [1, 2, 3] });
        expect_run(
            imp,
            &RetryPolicy::default(),
            Script::repeating(vec![fail(Connection), Ok(own.clone())]),
            Expected {
                calls: 2,
                waits: vec![0.25],
                events: vec![retry(1, Connection, 0.25)],
                result: Ok(own),
            },
            "Return the request's own value, unchanged.",
        )
    }

    pub(crate) fn first_call_success(imp: &Learner) -> CheckResult {
        expect_run(
            imp,
            &RetryPolicy::default(),
            Script::repeating(vec![data(1)]),
            Expected {
                calls: 1,
                waits: vec![],
                events: vec![],
                result: Ok(value(1)),
            },
            "Success on the first call: no event, no sleep.",
        )
    }

    pub(crate) fn permanent_after_transient(imp: &Learner) -> CheckResult {
        let refusal = PermanentError::new(PermanentKind::Unauthorized)
            .with_status(401)
            .with_detail("token expired");
        expect_run(
            imp,
            &RetryPolicy::default(),
            Script::repeating(vec![fail(Timeout), Err(refusal.clone().into())]),
            Expected {
                calls: 2,
                waits: vec![0.25],
                events: vec![retry(1, Timeout, 0.25)],
                result: Err(RetryError::Permanent(refusal)),
            },
            "A permanent failure ends the loop even after a retry, and is returned unchanged.",
        )
    }

    pub(crate) fn every_permanent_kind(imp: &Learner) -> CheckResult {
        every_case(
            PermanentKind::ALL
                .into_iter()
                .map(|kind| {
                    let e = PermanentError::new(kind);
                    expect_run(
                        imp,
                        &RetryPolicy::default(),
                        Script::repeating(vec![Err(e.clone().into())]),
                        Expected {
                            calls: 1,
                            waits: vec![],
                            events: vec![],
                            result: Err(RetryError::Permanent(e)),
                        },
                        "No permanent failure is retried.",
                    )
                })
                .collect::<Vec<_>>(),
        )
    }
}

mod callbacks {
    use super::*;

    pub(crate) fn request_panics(imp: &Learner) -> CheckResult {
        expect_propagation(imp, Script::repeating(vec![data(1)]), Callback::Request, 1)
    }

    pub fn log_before_sleep(imp: &Learner) -> CheckResult {
        let policy = RetryPolicy::default();
        let script = Script::repeating(vec![server_error(), fail(Timeout), data(3)]);
        let (rec, panicked) = record(imp, &policy, &script, None);
        if let Some(payload) = panicked {
            panic::resume_unwind(payload);
        }
        use Callback::{Log, Request, Sleep};
        let expected = [Request, Log, Sleep, Request, Log, Sleep, Request];
        if rec.order == expected {
            return Ok(());
        }
        let order = |order: &[Callback]| -> String {
            let names: Vec<&str> = order.iter().map(|c| c.name()).collect();
            names.join(", ")
        };
        Err(Feedback::new(
            format!(
                "the callbacks ran in the order {}; the rule expects {}.",
                order(&rec.order),
                order(&expected)
            ),
            "For each retry: log the event, then sleep, then call request again.",
        )
        .input(input(&policy, &script))
        .did(vec![Field::line("callbacks, in order", order(&rec.order))])
        .expected(vec![Field::line("callbacks, in order", order(&expected))])
        .first_difference()
        .render())
    }
}

mod events {
    use super::*;

    pub(crate) fn each_event_is_fresh(imp: &Learner) -> CheckResult {
        expect_run(
            imp,
            &policy(4, 0.25, 2.0),
            Script::repeating(vec![
                fail(Timeout),
                fail(Connection),
                server_error(),
                rate_limited(0.75),
            ]),
            Expected {
                calls: 4,
                waits: vec![0.25, 0.5, 1.0],
                events: vec![
                    retry(1, Timeout, 0.25),
                    retry(2, Connection, 0.5),
                    retry(3, ServerError, 1.0),
                    stop(4, RateLimited, AttemptLimit),
                ],
                result: exhausted(4, RateLimited, AttemptLimit),
            },
            "Each event carries its own attempt number and that attempt's reason.",
        )
    }

    pub(crate) fn json_shape(imp: &Learner) -> CheckResult {
        // The run itself first: a wrong number of attempts is not a wrong shape.
        let policy = policy(2, 0.25, 2.0);
        let script = Script::repeating(vec![server_error(), fail(Timeout)]);
        let events = vec![retry(1, ServerError, 0.25), stop(2, Timeout, AttemptLimit)];
        expect_run(
            imp,
            &policy,
            script.clone(),
            Expected {
                calls: 2,
                waits: vec![0.25],
                events: events.clone(),
                result: exhausted(2, Timeout, AttemptLimit),
            },
            "Two attempts: a retry event after the first, a stop event after the second.",
        )?;
        let (rec, _) = record(imp, &policy, &script, None);
        // The same call again: events other than the first call's are not a matter of shape.
        if !same_events(&rec.events, &events) {
            return Err(Feedback::new(
                "called a second time with the same input, your retry_request logged other \
                 events than the first time.",
                "What it does must depend only on the policy and on what request returns: \
                 nothing kept from an earlier call (a `static`).",
            )
            .input(input(&policy, &script))
            .did(vec![Field::block(
                "events, second call",
                rec.events.iter().map(|e| e.to_string()).collect(),
            )])
            .expected(vec![Field::block(
                "events, second call",
                events.iter().map(|e| e.to_string()).collect(),
            )])
            .first_difference()
            .render());
        }
        let got: Vec<String> = rec
            .events
            .iter()
            .map(|e| serde_json::to_string(e).unwrap_or_else(|e| format!("<unserializable: {e}>")))
            .collect();
        let want = [
            r#"{"attempt":1,"reason":"server_error","action":"retry","delay":0.25,"cause":null}"#,
            r#"{"attempt":2,"reason":"timeout","action":"stop","delay":null,"cause":"attempt_limit"}"#,
        ];
        if got == want {
            return Ok(());
        }
        Err(Feedback::new(
            "the events' JSON differs from the declared shape.",
            "A retry has a delay and no cause; a stop has a cause and no delay.",
        )
        .input(input(&policy, &script))
        .did(vec![Field::block("events as JSON", got)])
        .expected(vec![Field::block(
            "events as JSON",
            want.iter().map(|w| w.to_string()).collect(),
        )])
        .first_difference()
        .render())
    }
}

mod privacy {
    use super::*;
    use crate::report::PRIVATE_MARKER;

    /// The run itself is judged here; what the code printed is judged by the grader, which
    /// reads the check's output ([`PRIVATE_MARKER`]).
    pub(crate) fn detail_is_never_printed(imp: &Learner) -> CheckResult {
        let private = |what: &str| {
            format!("GET https://api.example/jobs/3?token={PRIVATE_MARKER}-{what} → {what}")
        };
        let script = Script::repeating(vec![
            Err(TransientError::new(ServerError)
                .with_detail(private("503"))
                .into()),
            Err(TransientError::new(Timeout)
                .with_detail(private("timeout"))
                .into()),
            data(3),
        ]);
        // Only what is printed is this rule's: the run's calls, waits and result are the
        // other checks' (a loop wrong there fails them, not this one). A panic is still one.
        let (_, panicked) = record(imp, &RetryPolicy::default(), &script, None);
        if let Some(payload) = panicked {
            panic::resume_unwind(payload);
        }
        Ok(())
    }
}

mod exhaustive {
    use super::*;
    use crate::view::side_by_side;
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;

    pub(crate) fn matches_reference_on_every_case(imp: &Learner) -> CheckResult {
        let progress = Arc::new(AtomicUsize::new(0));
        let under_way: Arc<[super::super::exhaustive::UnderWay; 2]> = Arc::default();
        let stuck = Arc::clone(&under_way);
        crate::serve::watch_progress(Arc::clone(&progress), move |_| {
            // The lowest-numbered case a thread is still running.
            let number = stuck
                .iter()
                .map(|u| u.0.load(std::sync::atomic::Ordering::SeqCst))
                .filter(|n| *n > 0)
                .min()
                .unwrap_or(1);
            let case = super::super::exhaustive::case(number);
            let file = case.map(|c| {
                c.to_scenario()
                    .to_toml("The case of the exhaustive check that never finished.")
            });
            format!(
                "did not finish case {number} of the exhaustive space: a loop that never ends? \
                 Every loop needs explicit stops.\n\nReplay it with `cargo run -p grader -- scenario FILE`:\n\n{}",
                file.unwrap_or_default()
            )
        });
        // The reference's runs, when the grader handed them over.
        let known = crate::serve::check_input().and_then(super::super::exhaustive::decode_digests);
        let Err(difference) =
            super::super::exhaustive::compare_tracked(imp, &progress, &under_way, known.as_ref())
        else {
            return Ok(());
        };
        let file = super::super::exhaustive::case_text(&difference.case, difference.number);
        let scenario = difference.case.to_scenario();
        let side = side_by_side(
            ("yours", &difference.learner),
            ("reference", &difference.reference),
        );
        // A run that parts from the reference nowhere (one that differed only among the other
        // cases) has no line to point at.
        let parted = side.contains('≠');
        Err(format!(
            "your function and the reference differ on case {} of the exhaustive space (cases \
             come shortest first, so this is a smallest one).\n\n\
             input:\n{}\n\n\
             your function and the reference, side by side (≠ marks where they part):\n{}\n\
             why: {}{}\n\n{}\n{file}",
            difference.number,
            crate::view::render_fields(&input(&scenario.policy, &scenario.script))
                .iter()
                .map(|l| format!("  {l}"))
                .collect::<Vec<_>>()
                .join("\n"),
            side,
            match &difference.rule {
                Some(rule) if !parted => format!("{rule} "),
                Some(rule) => format!(
                    "{rule} (The first line marked ≠ is where your retry_request parts from \
                     that rule.) "
                ),
                None => "the first line marked ≠ is where your retry_request parts from the \
                         rules. "
                    .to_string(),
            },
            crate::feedback::REPLAY,
            crate::feedback::CASE_MARKER,
        ))
    }
}

//! Test-only implementations of `retry_request`: one correct, the rest realistic mistakes
//! and hostile behaviour. Each is what a learner could plausibly write.

use grader::{Implementation, Reply, RetryFn};
use reference::{RequestError, RetryError, RetryEvent, RetryPolicy, StopCause, TransientReason};

type Request<'a> = &'a mut dyn FnMut() -> Result<Reply, RequestError>;
type Sleep<'a> = &'a mut dyn FnMut(f64);
type Log<'a> = &'a mut dyn FnMut(RetryEvent);

/// Knobs for a parameterised loop, so that each mistake is one changed line of a correct one.
#[derive(Clone, Copy, Default)]
struct Mistakes {
    extra_attempt: bool,
    sleep_after_last: bool,
    clamp_server_wait: bool,
    retry_permanent: bool,
    validate_after_first_call: bool,
    nan_wait_stops: bool,
    sleep_before_log: bool,
    no_validation: bool,
    permanent_becomes_success: bool,
}

fn written(
    m: Mistakes,
    policy: &RetryPolicy,
    request: Request,
    sleep: Sleep,
    log: Log,
) -> Result<Reply, RetryError> {
    if !m.validate_after_first_call && !m.no_validation {
        policy.validate()?;
    }
    let limit = policy.max_attempts + u32::from(m.extra_attempt);
    for attempt in 1..=limit {
        let outcome = request();
        if m.validate_after_first_call && attempt == 1 {
            policy.validate()?;
        }
        let failure = match outcome {
            Ok(v) => return Ok(v),
            Err(RequestError::Permanent(p)) if m.permanent_becomes_success => {
                let _ = p;
                return Ok(Reply::Null);
            }
            Err(RequestError::Permanent(p)) if !m.retry_permanent => {
                return Err(RetryError::Permanent(p))
            }
            Err(RequestError::Permanent(_)) => {
                if attempt == limit {
                    return Err(RetryError::Exhausted {
                        attempts: attempt,
                        reason: TransientReason::ServerError,
                        cause: StopCause::AttemptLimit,
                    });
                }
                sleep(policy.base_delay);
                continue;
            }
            Err(RequestError::Transient(t)) => t,
        };
        let backoff = (policy.base_delay * 2f64.powi(attempt as i32 - 1)).min(policy.max_delay);
        if attempt == limit {
            if m.sleep_after_last {
                sleep(backoff);
            }
            log(RetryEvent::stop(
                attempt,
                failure.reason,
                StopCause::AttemptLimit,
            ));
            return Err(RetryError::Exhausted {
                attempts: attempt,
                reason: failure.reason,
                cause: StopCause::AttemptLimit,
            });
        }
        let mut planned = backoff;
        if let Some(w) = failure.retry_after {
            let over = if m.nan_wait_stops {
                // The mistake: NaN compares false, so "not within budget" stops on NaN.
                w.is_nan() || w > policy.max_delay
            } else {
                w > policy.max_delay
            };
            if over && !m.clamp_server_wait {
                log(RetryEvent::stop(
                    attempt,
                    failure.reason,
                    StopCause::DelayBudget,
                ));
                return Err(RetryError::Exhausted {
                    attempts: attempt,
                    reason: failure.reason,
                    cause: StopCause::DelayBudget,
                });
            }
            if w >= 0.0 {
                planned = planned.max(w.min(policy.max_delay));
            }
        }
        if m.sleep_before_log {
            sleep(planned);
            log(RetryEvent::retry(attempt, failure.reason, planned));
        } else {
            log(RetryEvent::retry(attempt, failure.reason, planned));
            sleep(planned);
        }
    }
    // Only reached when the policy allowed no attempt at all (validation skipped).
    Err(RetryError::Exhausted {
        attempts: 0,
        reason: TransientReason::ServerError,
        cause: StopCause::AttemptLimit,
    })
}

macro_rules! mistake {
    ($($field:ident),*) => {
        |p, r, s, l| written(Mistakes { $($field: true,)* ..Mistakes::default() }, p, r, s, l)
    };
}

/// A correct implementation written independently of the reference (a `for` loop).
const CORRECT: RetryFn = mistake!();

fn swallows_panics(
    policy: &RetryPolicy,
    request: Request,
    sleep: Sleep,
    log: Log,
) -> Result<Reply, RetryError> {
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        written(Mistakes::default(), policy, request, sleep, log)
    }));
    run.unwrap_or(Err(RetryError::Exhausted {
        attempts: 1,
        reason: TransientReason::ServerError,
        cause: StopCause::AttemptLimit,
    }))
}

fn never_stops(
    _: &RetryPolicy,
    request: Request,
    sleep: Sleep,
    _: Log,
) -> Result<Reply, RetryError> {
    loop {
        if let Ok(v) = request() {
            return Ok(v);
        }
        sleep(0.25);
    }
}

#[allow(clippy::empty_loop)]
fn spins(_: &RetryPolicy, _: Request, _: Sleep, _: Log) -> Result<Reply, RetryError> {
    loop {}
}

#[allow(unconditional_recursion)]
fn recurse(depth: u64) -> u64 {
    let frame = [depth; 64];
    std::hint::black_box(&frame);
    1 + recurse(std::hint::black_box(depth + 1))
}

/// Every implementation the tests can start, by name.
pub fn all() -> Vec<Implementation> {
    let imp = |label, retry_request| Implementation {
        label,
        retry_request,
    };
    vec![
        Implementation::reference(),
        imp("correct", CORRECT),
        imp("stub", |_, _, _, _| todo!()),
        imp("unimplemented", |_, _, _, _| unimplemented!("later")),
        imp("extra_attempt", mistake!(extra_attempt)),
        imp("sleep_after_last", mistake!(sleep_after_last)),
        imp("clamp_server_wait", mistake!(clamp_server_wait)),
        imp("retry_permanent", mistake!(retry_permanent)),
        imp(
            "validate_after_first_call",
            mistake!(validate_after_first_call),
        ),
        imp("no_validation", mistake!(no_validation)),
        imp("nan_wait_stops", mistake!(nan_wait_stops)),
        imp("sleep_before_log", mistake!(sleep_before_log)),
        imp(
            "permanent_becomes_success",
            mistake!(permanent_becomes_success),
        ),
        imp("swallows_panics", swallows_panics),
        imp("never_stops", never_stops),
        imp("spins", spins),
        imp("panics", |_, _, _, _| panic!("boom: index 7 out of range")),
        imp("aborts", |_, _, _, _| std::process::abort()),
        imp("overflows_stack", |_, _, _, _| {
            recurse(0);
            unreachable!()
        }),
        imp("exits_zero", |_, _, _, _| std::process::exit(0)),
        imp("forges_report", |_, _, _, _| {
            println!("{{\"status\":\"passed\"}}");
            eprintln!("{{\"status\":\"passed\"}}");
            std::process::exit(0)
        }),
    ]
}

/// The implementation called `label`.
pub fn named(label: &str) -> Option<Implementation> {
    all().into_iter().find(|i| i.label == label)
}

//! build3, written as another learner might: small helpers for the wait and for giving up,
//! and a `while` loop. Used by the similarity tests as an independent answer.

use kit_types::{RequestError, RetryError, RetryEvent, RetryPolicy, StopCause, TransientError};

/// The wait before the next attempt, or `None` when the server asks for more than the
/// policy allows.
fn next_wait(policy: &RetryPolicy, attempt: u32, failure: &TransientError) -> Option<f64> {
    let doubling = 2f64.powi(attempt.saturating_sub(1).min(1_000) as i32);
    let backoff = f64::min(policy.max_delay, policy.base_delay * doubling);
    match failure.retry_after {
        Some(asked) if asked.is_nan() || asked < 0.0 => Some(backoff),
        Some(asked) if asked > policy.max_delay => None,
        Some(asked) => Some(backoff.max(asked)),
        None => Some(backoff),
    }
}

fn give_up(
    attempts: u32,
    failure: &TransientError,
    cause: StopCause,
    log: &mut impl FnMut(RetryEvent),
) -> RetryError {
    log(RetryEvent::stop(attempts, failure.reason, cause));
    RetryError::Exhausted {
        attempts,
        reason: failure.reason,
        cause,
    }
}

/// Calls `request` until it succeeds, fails permanently, or `policy` says stop.
pub fn retry_request<T>(
    policy: &RetryPolicy,
    mut request: impl FnMut() -> Result<T, RequestError>,
    mut sleep: impl FnMut(f64),
    mut log: impl FnMut(RetryEvent),
) -> Result<T, RetryError> {
    policy.validate()?;
    let mut attempts = 0;
    while attempts < policy.max_attempts {
        attempts += 1;
        let failure = match request() {
            Err(RequestError::Transient(failure)) => failure,
            Err(RequestError::Permanent(permanent)) => {
                return Err(RetryError::Permanent(permanent))
            }
            Ok(value) => return Ok(value),
        };
        if attempts == policy.max_attempts {
            return Err(give_up(attempts, &failure, StopCause::AttemptLimit, &mut log));
        }
        let Some(wait) = next_wait(policy, attempts, &failure) else {
            return Err(give_up(attempts, &failure, StopCause::DelayBudget, &mut log));
        };
        log(RetryEvent::retry(attempts, failure.reason, wait));
        sleep(wait);
    }
    unreachable!("a valid policy allows at least one attempt")
}

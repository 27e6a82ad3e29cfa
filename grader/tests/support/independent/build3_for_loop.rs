//! build3, written as a learner might without the reference: a `for` over the attempts and
//! a doubling loop for the backoff. Used by the similarity tests as an independent answer.

use kit_types::{RequestError, RetryError, RetryEvent, RetryPolicy, StopCause};

/// Calls `request` until it succeeds, fails permanently, or `policy` says stop.
pub fn retry_request<T>(
    policy: &RetryPolicy,
    mut request: impl FnMut() -> Result<T, RequestError>,
    mut sleep: impl FnMut(f64),
    mut log: impl FnMut(RetryEvent),
) -> Result<T, RetryError> {
    policy.validate()?;
    for attempt in 1..=policy.max_attempts {
        let transient = match request() {
            Ok(v) => return Ok(v),
            Err(RequestError::Permanent(e)) => return Err(RetryError::Permanent(e)),
            Err(RequestError::Transient(e)) => e,
        };
        if attempt == policy.max_attempts {
            log(RetryEvent::stop(
                attempt,
                transient.reason,
                StopCause::AttemptLimit,
            ));
            return Err(RetryError::Exhausted {
                attempts: attempt,
                reason: transient.reason,
                cause: StopCause::AttemptLimit,
            });
        }
        let mut delay = policy.base_delay;
        for _ in 1..attempt {
            delay *= 2.0;
        }
        if delay > policy.max_delay {
            delay = policy.max_delay;
        }
        if let Some(server) = transient.retry_after {
            if server > policy.max_delay {
                log(RetryEvent::stop(
                    attempt,
                    transient.reason,
                    StopCause::DelayBudget,
                ));
                return Err(RetryError::Exhausted {
                    attempts: attempt,
                    reason: transient.reason,
                    cause: StopCause::DelayBudget,
                });
            }
            if server > delay {
                delay = server;
            }
        }
        log(RetryEvent::retry(attempt, transient.reason, delay));
        sleep(delay);
    }
    unreachable!("a valid policy allows at least one attempt")
}

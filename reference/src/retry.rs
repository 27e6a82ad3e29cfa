//! The finished `retry_request`: the build3 lesson's reference answer.

use kit_types::{RequestError, RetryError, RetryEvent, RetryPolicy, StopCause};

/// Calls `request` until it succeeds, fails permanently, or a limit of `policy` says stop.
///
/// - The policy is validated first ([`RetryPolicy::validate`]); an invalid one is returned as
///   [`RetryError::InvalidPolicy`] before any callback runs.
/// - The first call is attempt 1; `request` is called at most `policy.max_attempts` times.
/// - `Ok(v)` is returned at once, and so is a permanent failure (as
///   [`RetryError::Permanent`]), with no event.
/// - After a transient failure of attempt `n` that is not the last, the planned delay is
///   `min(max_delay, base_delay * 2^(n-1))`, or the server's `retry_after` when it is a
///   supported (finite, non-negative) wait that is larger. A server wait above `max_delay`
///   stops the loop ([`StopCause::DelayBudget`]) rather than being shortened. The loop logs
///   a retry event, then calls `sleep(planned)`, then tries again.
/// - The last allowed attempt's failure logs a stop ([`StopCause::AttemptLimit`]) and
///   returns without sleeping.
///
/// A panic in any callback propagates. Nothing here bounds a callback's own running time or
/// the total elapsed time: those need a deadline (the stage 8 lesson).
///
/// ```
/// use reference::*;
/// let mut waits = Vec::new();
/// let result: Result<(), _> = retry_request(
///     &RetryPolicy::default(),
///     || Err(TransientError::new(TransientReason::RateLimited).with_retry_after(3.0).into()),
///     |secs| waits.push(secs),
///     |_event| {},
/// );
/// assert_eq!(
///     result,
///     Err(RetryError::Exhausted { attempts: 1, reason: TransientReason::RateLimited, cause: StopCause::DelayBudget })
/// );
/// assert!(waits.is_empty());
/// ```
pub fn retry_request<T>(
    policy: &RetryPolicy,
    mut request: impl FnMut() -> Result<T, RequestError>,
    mut sleep: impl FnMut(f64),
    mut log: impl FnMut(RetryEvent),
) -> Result<T, RetryError> {
    policy.validate()?;
    let mut attempt = 1;
    loop {
        let failure = match request() {
            Ok(value) => return Ok(value),
            Err(RequestError::Permanent(p)) => return Err(RetryError::Permanent(p)),
            Err(RequestError::Transient(t)) => t,
        };
        let reason = failure.reason;
        let stop = |cause| RetryError::Exhausted {
            attempts: attempt,
            reason,
            cause,
        };
        // The attempt limit is checked first: it wins when both limits apply.
        if attempt >= policy.max_attempts {
            log(RetryEvent::stop(attempt, reason, StopCause::AttemptLimit));
            return Err(stop(StopCause::AttemptLimit));
        }
        let backoff = (policy.base_delay * 2f64.powi(attempt as i32 - 1)).min(policy.max_delay);
        // NaN and negative waits are not a wait the server can mean: ignore them.
        let server_wait = failure.retry_after.filter(|w| *w >= 0.0);
        let planned = match server_wait {
            // Shortening the server's wait would ignore what it asked for: stop instead.
            Some(w) if w > policy.max_delay => {
                log(RetryEvent::stop(attempt, reason, StopCause::DelayBudget));
                return Err(stop(StopCause::DelayBudget));
            }
            Some(w) => backoff.max(w),
            None => backoff,
        };
        log(RetryEvent::retry(attempt, reason, planned));
        sleep(planned);
        attempt += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kit_types::{PermanentError, PermanentKind, RetryAction, TransientError, TransientReason};
    use std::cell::RefCell;

    struct Run<T> {
        calls: u32,
        waits: Vec<f64>,
        events: Vec<RetryEvent>,
        result: Result<T, RetryError>,
    }

    fn run<T: Clone>(policy: &RetryPolicy, script: &[Result<T, RequestError>]) -> Run<T> {
        let calls = RefCell::new(0u32);
        let mut waits = Vec::new();
        let mut events = Vec::new();
        let result = retry_request(
            policy,
            || {
                let mut n = calls.borrow_mut();
                *n += 1;
                let i = (*n as usize - 1).min(script.len() - 1);
                script[i].clone()
            },
            |s| waits.push(s),
            |e| events.push(e),
        );
        Run {
            calls: calls.into_inner(),
            waits,
            events,
            result,
        }
    }

    fn transient(reason: TransientReason) -> Result<&'static str, RequestError> {
        Err(TransientError::new(reason).into())
    }

    fn wait(secs: f64) -> Result<&'static str, RequestError> {
        Err(TransientError::new(TransientReason::RateLimited)
            .with_retry_after(secs)
            .into())
    }

    fn actions(events: &[RetryEvent]) -> Vec<RetryAction> {
        events.iter().map(|e| e.action).collect()
    }

    #[test]
    fn third_attempt_success() {
        let r = run(
            &RetryPolicy::default(),
            &[
                transient(TransientReason::ServerError),
                transient(TransientReason::ServerError),
                Ok("fresh_3"),
            ],
        );
        assert_eq!(r.calls, 3);
        assert_eq!(r.waits, [0.25, 0.5]);
        assert_eq!(actions(&r.events), [RetryAction::Retry, RetryAction::Retry]);
        assert_eq!(r.result, Ok("fresh_3"));
    }

    #[test]
    fn capped_exhaustion() {
        let policy = RetryPolicy {
            max_attempts: 5,
            base_delay: 1.0,
            max_delay: 1.5,
            ..RetryPolicy::default()
        };
        let r = run(&policy, &[transient(TransientReason::ServerError)]);
        assert_eq!(r.calls, 5);
        assert_eq!(r.waits, [1.0, 1.5, 1.5, 1.5]);
        assert_eq!(
            r.events.last(),
            Some(&RetryEvent::stop(
                5,
                TransientReason::ServerError,
                StopCause::AttemptLimit
            ))
        );
        assert_eq!(
            r.result,
            Err(RetryError::Exhausted {
                attempts: 5,
                reason: TransientReason::ServerError,
                cause: StopCause::AttemptLimit
            })
        );
    }

    #[test]
    fn server_waits() {
        let p = RetryPolicy::default();
        assert_eq!(run(&p, &[wait(1.5), Ok("x")]).waits, [1.5]);
        assert_eq!(
            run(&p, &[wait(2.0), Ok("x")]).waits,
            [2.0],
            "equal to budget"
        );
        assert_eq!(
            run(&p, &[wait(0.1), Ok("x")]).waits,
            [0.25],
            "below backoff"
        );
        assert_eq!(run(&p, &[wait(f64::NAN), Ok("x")]).waits, [0.25]);
        assert_eq!(run(&p, &[wait(-1.0), Ok("x")]).waits, [0.25]);
        for w in [3.0, f64::INFINITY, 1e300] {
            let r = run(&p, &[wait(w), Ok("x")]);
            assert_eq!(r.calls, 1);
            assert!(r.waits.is_empty());
            assert_eq!(
                r.events,
                [RetryEvent::stop(
                    1,
                    TransientReason::RateLimited,
                    StopCause::DelayBudget
                )]
            );
        }
    }

    #[test]
    fn attempt_limit_wins_over_budget() {
        let p = RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        };
        let r = run(&p, &[wait(100.0)]);
        assert_eq!(
            r.result,
            Err(RetryError::Exhausted {
                attempts: 1,
                reason: TransientReason::RateLimited,
                cause: StopCause::AttemptLimit
            })
        );
    }

    #[test]
    fn permanent_and_invalid() {
        let r = run(
            &RetryPolicy::default(),
            &[
                transient(TransientReason::Timeout),
                Err(PermanentError::new(PermanentKind::NotFound).into()),
            ],
        );
        assert_eq!(r.calls, 2);
        assert_eq!(r.waits, [0.25]);
        assert_eq!(
            r.result,
            Err(RetryError::Permanent(PermanentError::new(
                PermanentKind::NotFound
            )))
        );
        let bad = RetryPolicy {
            method: "POST".into(),
            ..RetryPolicy::default()
        };
        let r = run(&bad, &[Ok("x")]);
        assert_eq!(r.calls, 0);
        assert!(matches!(r.result, Err(RetryError::InvalidPolicy(_))));
    }
}

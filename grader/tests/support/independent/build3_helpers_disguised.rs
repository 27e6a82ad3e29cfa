// My retry solution.
use kit_types::{RequestError, RetryError, RetryEvent, RetryPolicy, StopCause, TransientError};

pub fn retry_request<T>(
    p: &RetryPolicy,
    mut call: impl FnMut() -> Result<T, RequestError>,
    mut wait_for: impl FnMut(f64),
    mut record: impl FnMut(RetryEvent),
) -> Result<T, RetryError> {
    p.validate()?;
    let mut tries = 0;
    while tries < p.max_attempts {
        tries += 1;
        let err = match call() {
            Err(RequestError::Transient(e)) => e,
            Err(RequestError::Permanent(perm)) => return Err(RetryError::Permanent(perm)),
            Ok(v) => return Ok(v),
        };
        if tries == p.max_attempts {
            return Err(stop_with(tries, &err, StopCause::AttemptLimit, &mut record));
        }
        let Some(secs) = delay(p, tries, &err) else {
            return Err(stop_with(tries, &err, StopCause::DelayBudget, &mut record));
        };
        record(RetryEvent::retry(tries, err.reason, secs));
        wait_for(secs);
    }
    unreachable!("never")
}

/* stop and log it */
fn stop_with(
    n: u32,
    e: &TransientError,
    why: StopCause,
    record: &mut impl FnMut(RetryEvent),
) -> RetryError {
    record(RetryEvent::stop(n, e.reason, why));
    RetryError::Exhausted {
        attempts: n,
        reason: e.reason,
        cause: why,
    }
}

fn delay(p: &RetryPolicy, n: u32, e: &TransientError) -> Option<f64> {
    let factor = 2f64.powi(n.saturating_sub(1).min(1_000) as i32);
    let exp = f64::min(p.max_delay, p.base_delay * factor);
    match e.retry_after {
        Some(s) if s.is_nan() || s < 0.0 => Some(exp),
        Some(s) if s > p.max_delay => None,
        Some(s) => Some(exp.max(s)),
        None => Some(exp),
    }
}

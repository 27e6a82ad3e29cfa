//! narrow · Narrow exception handling: `handle_attempt`, the finished answer.

use kit_types::{Handled, RequestError};

/// Runs one attempt of `request` and handles its result narrowly.
///
/// - `Ok(value)` → `Ok(Handled::Value(value))`: the very value, whatever it looks like.
/// - A declared transient failure → `Ok(Handled::TryAgain { reason, retry_after })`: its
///   category and the server's wait, as declared; its `detail` stays behind.
/// - Any other failure (permanent, a malformed reply, an undeclared status) → `Err` of the
///   very same error, for the caller to see.
/// - A panic of `request` is not caught: it goes on unwinding.
///
/// ```
/// use reference::{handle_attempt, Handled, PermanentError, PermanentKind, RequestError,
///     TransientError, TransientReason};
///
/// let next = handle_attempt(|| {
///     Err::<(), _>(TransientError::new(TransientReason::RateLimited).with_retry_after(2.0).into())
/// });
/// assert_eq!(
///     next,
///     Ok(Handled::TryAgain { reason: TransientReason::RateLimited, retry_after: Some(2.0) })
/// );
///
/// let missing = RequestError::from(PermanentError::new(PermanentKind::NotFound).with_status(404));
/// assert_eq!(handle_attempt(|| Err::<(), _>(missing.clone())), Err(missing));
/// assert_eq!(handle_attempt(|| Ok::<_, RequestError>(0)), Ok(Handled::Value(0)));
/// ```
pub fn handle_attempt<T>(
    request: impl FnOnce() -> Result<T, RequestError>,
) -> Result<Handled<T>, RequestError> {
    match request() {
        Ok(value) => Ok(Handled::Value(value)),
        Err(RequestError::Transient(failure)) => Ok(Handled::TryAgain {
            reason: failure.reason,
            retry_after: failure.retry_after,
        }),
        Err(other) => Err(other),
    }
}

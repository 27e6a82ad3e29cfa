//! What `retry_request` (the build3 lesson) returns when it gives no value.

use crate::{PermanentError, PolicyError, StopCause, TransientReason};
use thiserror::Error;

/// Why `retry_request` returned no value.
///
/// Its `Display` names controlled categories only; a failure's `detail` never appears.
///
/// ```
/// use kit_types::{RetryError, StopCause, TransientReason};
/// let e = RetryError::Exhausted {
///     attempts: 3,
///     reason: TransientReason::Timeout,
///     cause: StopCause::AttemptLimit,
/// };
/// assert_eq!(e.to_string(), "gave up after 3 attempt(s): last failure timeout, stopped by attempt_limit");
/// ```
#[derive(Debug, Clone, PartialEq, Error)]
pub enum RetryError {
    /// The policy was refused before any callback ran.
    #[error("invalid retry policy: {0}")]
    InvalidPolicy(#[from] PolicyError),
    /// A transient failure happened and a limit said not to try again.
    #[error("gave up after {attempts} attempt(s): last failure {reason}, stopped by {cause}")]
    Exhausted {
        /// How many times the request was called.
        attempts: u32,
        /// Why the last attempt failed.
        reason: TransientReason,
        /// Which limit stopped the loop.
        cause: StopCause,
    },
    /// The request failed in a way that repeating will not fix.
    #[error(transparent)]
    Permanent(#[from] PermanentError),
}

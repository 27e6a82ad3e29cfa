//! narrow · Narrow exception handling: what one attempt of a request comes to when it is
//! handled narrowly ([`Handled`]), and the function's type as the grader calls it
//! ([`AttemptFn`]).
//!
//! The lesson's function runs one attempt and keeps for itself only what it can act on: a
//! success, and the one failure worth another attempt, a declared transient one. Everything
//! else — a permanent failure, a malformed reply, a status no table declares — goes back to
//! the caller as the very error it was (`Err`), and a panic of the request goes on unwinding:
//! it is a bug, not a failure to handle.
//!
//! ```
//! use kit_types::{Handled, TransientReason};
//! let next: Handled<&str> = Handled::TryAgain {
//!     reason: TransientReason::RateLimited,
//!     retry_after: Some(2.0),
//! };
//! assert!(next.is_try_again());
//! assert!(!Handled::Value("fresh_3").is_try_again());
//! ```

use crate::{RequestError, TransientReason};

/// One attempt's result, handled: the value, or "try again". A failure the handler does not
/// handle is not here: it comes back as the `Err` beside this type.
#[derive(Debug, Clone, PartialEq)]
pub enum Handled<T> {
    /// The attempt succeeded: its value, exactly as the request returned it.
    Value(T),
    /// A declared transient failure: another attempt may succeed.
    TryAgain {
        /// Why the attempt failed: a category, never the failure's text.
        reason: TransientReason,
        /// The wait the server asked for, in seconds, as the failure declared it.
        retry_after: Option<f64>,
    },
}

impl<T> Handled<T> {
    /// Whether this says to try again.
    pub fn is_try_again(&self) -> bool {
        matches!(self, Handled::TryAgain { .. })
    }
}

/// The request the grader hands `handle_attempt`: one attempt, called at most once.
pub type Request<'a> = Box<dyn FnOnce() -> Result<crate::graded::Reply, RequestError> + 'a>;

/// narrow: `handle_attempt` with `T` a [`Reply`](crate::graded::Reply) and its request
/// boxed ([`Request`]), so that one compiled checker serves every implementation.
pub type AttemptFn = for<'a> fn(Request<'a>) -> Result<Handled<crate::graded::Reply>, RequestError>;

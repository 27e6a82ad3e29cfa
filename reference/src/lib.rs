#![warn(missing_docs)]
//! The kit's library: every type the exercises share, and the finished implementations
//! learners can compare their own work against.
//!
//! The build3 exercise is [`retry_request`]: call a fallible request again when it fails
//! in a way that is worth repeating, within a validated [`RetryPolicy`], and report each
//! planned retry or stop as a [`RetryEvent`].
//!
//! The stage 8 exercise is [`lookup_availability`] in [`gateway`]: one availability lookup
//! with bounded retries inside one deadline, behind a circuit breaker.
//!
//! Reading [`retry`]'s source is guided practice: the grader records a run against the
//! reference as guidance, not as independent evidence of your own work.
//!
//! ```
//! use reference::{retry_request, RequestError, RetryPolicy, TransientError, TransientReason};
//!
//! let mut calls = 0;
//! let mut waits = Vec::new();
//! let mut events = Vec::new();
//! let result = retry_request(
//!     &RetryPolicy::default(),
//!     || {
//!         calls += 1;
//!         if calls < 3 {
//!             Err(RequestError::from(TransientError::new(TransientReason::ServerError)))
//!         } else {
//!             Ok("fresh_3")
//!         }
//!     },
//!     |secs| waits.push(secs),
//!     |event| events.push(event),
//! );
//! assert_eq!(result, Ok("fresh_3"));
//! assert_eq!(calls, 3);
//! assert_eq!(waits, [0.25, 0.5]);
//! assert_eq!(events.len(), 2);
//! ```

pub mod errors;
pub mod events;
pub mod fetch;
pub mod gateway;
pub mod policy;
pub mod retry;

pub use errors::{PermanentError, PermanentKind, RequestError, TransientError, TransientReason};
pub use events::{RetryAction, RetryEvent, StopCause};
pub use fetch::{fetch, HttpReply, TransportFailure};
pub use gateway::{
    lookup_availability, Admission, Availability, Breaker, BreakerState, Clock, ConfigError,
    Counters, Failure, FailureCode, Gateway, GatewayConfig, Lookup, Outcome, Provider,
    ProviderReply,
};
pub use policy::{PolicyError, RetryPolicy};
pub use retry::{retry_request, RetryError};

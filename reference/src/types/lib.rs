#![warn(missing_docs)]
//! The types the kit's exercises share: what the learner's functions take and return, and
//! the fakes the grader (and the learner) test them with.
//!
//! This crate holds no answers. The learner's `practice` crate depends on it (and never on
//! `reference`, which holds the finished functions), so reading it is not guidance: open its
//! documentation with `cargo doc --open -p kit-types`, or its sources in
//! `reference/src/types/`. They sit beside the answers, where the lessons' contracts place
//! the types, but form this crate of their own: `reference` re-exports them and does not
//! compile them a second time.
//!
//! | lesson | the learner writes | its types |
//! |---|---|---|
//! | build2 | `fetch` | [`HttpReply`], [`TransportFailure`], [`RequestError`] |
//! | build3 | `retry_request` | [`RetryPolicy`], [`RequestError`], [`RetryEvent`], [`RetryError`] |
//! | stage8 | `lookup_availability` | [`gateway`]: [`Gateway`], [`Lookup`], [`Outcome`] |
//!
//! ```
//! use kit_types::{RequestError, RetryPolicy, TransientError, TransientReason};
//! let policy = RetryPolicy::default();
//! assert_eq!((policy.max_attempts, policy.base_delay, policy.max_delay), (3, 0.25, 2.0));
//! let failure: RequestError = TransientError::new(TransientReason::ServerError).into();
//! assert!(matches!(failure, RequestError::Transient(_)));
//! ```

pub mod errors;
pub mod events;
pub mod gateway;
pub mod graded;
pub mod http;
pub mod policy;
pub mod retry;

pub use errors::{PermanentError, PermanentKind, RequestError, TransientError, TransientReason};
pub use events::{RetryAction, RetryEvent, StopCause};
pub use gateway::{
    Admission, Availability, Breaker, BreakerState, Clock, ConfigError, Counters, Failure,
    FailureCode, Gateway, GatewayConfig, Lookup, Outcome, Provider, ProviderReply, SystemClock,
};
pub use http::{HttpReply, TransportFailure};
pub use policy::{PolicyError, RetryPolicy};
pub use retry::RetryError;

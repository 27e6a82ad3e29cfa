#![warn(missing_docs)]
//! The kit's finished answers, one per lesson, each documented:
//!
//! | lesson | answer | source |
//! |---|---|---|
//! | build2 | [`fetch()`] | `reference/src/fetch.rs` |
//! | build3 | [`retry_request`] | `reference/src/retry.rs` |
//! | stage8 | [`lookup_availability`] | `reference/src/gateway/lookup.rs` |
//!
//! Reading these answers, or running the grader `--against reference`, is guided practice:
//! the grader records a run against the reference as guidance, not as independent evidence
//! of your own work. The types the answers use are defined in `reference/src/types/`, which
//! is a crate of its own (`kit-types`, not a module of this one): it holds no answers and is
//! fine to read, and the practice crate depends on it alone. They are re-exported here, so
//! code written against `reference::…` paths keeps compiling.
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

pub mod fetch;
pub mod gateway;
pub mod retry;

pub use fetch::fetch;
pub use gateway::lookup_availability;
pub use kit_types::*;
pub use retry::retry_request;

/// The modules of the shared types, under their old paths (`reference::errors::…`).
pub use kit_types::{errors, events, http, policy};

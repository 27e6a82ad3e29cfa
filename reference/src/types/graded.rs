//! The lessons' functions as the grader calls them: each with its generic parameters fixed,
//! so that one compiled checker serves every implementation.
//!
//! Two crates meet on these types and must agree on them exactly: the grader's checks, and
//! the learner's practice crate when the grader builds it as a library for the checks to
//! load (see `practice/src/root.rs`). So they are written once, here, where both can see
//! them. Nothing here is an answer, and a learner never needs it.
//!
//! ```
//! use kit_types::graded::{RetryFn, Reply};
//! // Any function with `retry_request`'s signature, its `T` fixed to a `Reply`:
//! fn give_up(
//!     _: &kit_types::RetryPolicy,
//!     _: &mut dyn FnMut() -> Result<Reply, kit_types::RequestError>,
//!     _: &mut dyn FnMut(f64),
//!     _: &mut dyn FnMut(kit_types::RetryEvent),
//! ) -> Result<Reply, kit_types::RetryError> {
//!     Ok(Reply::Null)
//! }
//! let f: RetryFn = give_up;
//! # let _ = f;
//! ```

use crate::gateway::fakes::{FakeClock, ScriptedProvider};
use crate::{
    Gateway, HttpReply, Lookup, RequestError, RetryError, RetryEvent, RetryPolicy, TransportFailure,
};

/// build2: the transport a fetcher is given: one exchange, at most once.
pub type Transport<'a> = Box<dyn FnOnce(&str) -> Result<HttpReply, TransportFailure> + 'a>;

/// build2: `fetch` on a boxed [`Transport`].
pub type FetchFn = for<'a> fn(&str, &str, Transport<'a>) -> Result<serde_json::Value, RequestError>;

/// build3: the value the checks' request callbacks return: JSON, so that scenarios can
/// script any reply and a check can tell the caller's own value from a made-up one.
pub type Reply = serde_json::Value;

/// build3: `retry_request` with `T` a [`Reply`] and its callbacks borrowed as trait objects.
pub type RetryFn = fn(
    &RetryPolicy,
    &mut dyn FnMut() -> Result<Reply, RequestError>,
    &mut dyn FnMut(f64),
    &mut dyn FnMut(RetryEvent),
) -> Result<Reply, RetryError>;

/// stage8: the gateway the checks build: a scripted provider and a fake clock.
pub type TestGateway = Gateway<ScriptedProvider, FakeClock>;

/// stage8: `lookup_availability` on a [`TestGateway`].
pub type LookupFn = fn(&TestGateway, &str) -> Lookup;

/// The name under which a library built from the practice crate exports `lesson`'s
/// function: a `static` of that lesson's type above (`KIT_LEARNER_BUILD3: RetryFn`).
///
/// ```
/// assert_eq!(kit_types::graded::symbol("build3"), "KIT_LEARNER_BUILD3");
/// ```
pub fn symbol(lesson: &str) -> String {
    format!("KIT_LEARNER_{}", lesson.to_ascii_uppercase())
}

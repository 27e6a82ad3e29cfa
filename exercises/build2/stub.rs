//! build2 · Declared transient HTTP failures. Write `fetch` below.
//!
//! Lesson: `exercises/build2/lesson.md`. Check your work with
//! `cargo run -p grader -- build2`. To start over: `cargo run -p grader -- reset build2`
//! (that touches only this file).
//!
//! The types come from the kit's `kit-types` crate: `cargo doc --open -p kit-types`, or its
//! source in `reference/src/types/`. Reading them is not guidance. The finished answer is in
//! `reference/src/fetch.rs`: reading it, or running the grader `--against reference`, is
//! guidance, not your own work.

use kit_types::{HttpReply, RequestError, TransportFailure};
#[allow(unused_imports)] // the names the lesson's rules speak of
use kit_types::{PermanentError, PermanentKind, TransientError, TransientReason};

/// Performs one declared GET of `url` through `transport` and says what came back: the
/// body's JSON, or a declared error that tells a retry loop whether another attempt may help.
///
/// What to implement (the lesson has the table):
///
/// 1. A `method` other than exactly `"GET"`: refuse it before calling `transport`
///    (permanent `BadRequest`, no status).
/// 2. No reply (`Err(TransportFailure::…)`): transient `Timeout` or `Connection`.
/// 3. 502, 503, 504: transient `ServerError`. 429: transient `RateLimited`, with
///    `retry_after` from a `Retry-After` header in delay-seconds.
/// 4. 400, 401, 403, 404: permanent `BadRequest`, `Unauthorized`, `Forbidden`, `NotFound`,
///    each with its status. A 200 with a JSON body: `Ok(that JSON)`; any other 200:
///    permanent `MalformedResponse`. Every other status: permanent `Unexpected`.
#[allow(unused_variables)] // remove once your body uses all three arguments
pub fn fetch(
    method: &str,
    url: &str,
    transport: impl FnOnce(&str) -> Result<HttpReply, TransportFailure>,
) -> Result<serde_json::Value, RequestError> {
    todo!("write fetch (lesson: exercises/build2/lesson.md)")
}

//! build3 · Retry transient failures. Write `retry_request` below.
//!
//! Lesson: `exercises/build3/lesson.md`. Check your work with
//! `cargo run -p grader -- build3`. To start over: `cargo run -p grader -- reset build3`
//! (that touches only this file).
//!
//! The types come from the kit's `kit-types` crate: `cargo doc --open -p kit-types`, or its
//! source in `reference/src/types/`. Reading them is not guidance. The finished answer is in
//! `reference/src/retry.rs`: reading it, or running the grader `--against reference`, is
//! guidance, not your own work.

#[allow(unused_imports)] // the names the lesson's rules speak of
use kit_types::{PermanentError, PolicyError, StopCause, TransientError, TransientReason};
use kit_types::{RequestError, RetryError, RetryEvent, RetryPolicy};

/// Calls `request` until it succeeds, fails permanently, or `policy` says stop.
///
/// What to implement (the lesson has the rules and a worked example):
///
/// 1. Refuse an invalid `policy` before calling any callback
///    (`Err(RetryError::InvalidPolicy(..))`, same checks and order as the lesson).
/// 2. The first call of `request` is attempt 1; call it at most `policy.max_attempts` times.
/// 3. Return the request's own `Ok` value at once; return a permanent failure at once.
/// 4. After a transient failure that is not the last attempt, plan
///    `min(max_delay, base_delay * 2^(attempt - 1))`, or the server's supported, larger
///    `retry_after`; a server wait above `max_delay` stops instead. Log a retry event,
///    then `sleep(planned)`, then try again.
/// 5. After the last attempt fails, log a stop event and return
///    `Err(RetryError::Exhausted { .. })` without sleeping.
#[allow(unused_variables)] // remove once your body uses all four arguments
pub fn retry_request<T>(
    policy: &RetryPolicy,
    request: impl FnMut() -> Result<T, RequestError>,
    sleep: impl FnMut(f64),
    log: impl FnMut(RetryEvent),
) -> Result<T, RetryError> {
    todo!("write retry_request (lesson: exercises/build3/lesson.md)")
}

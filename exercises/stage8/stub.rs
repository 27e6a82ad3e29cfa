//! Stage 8: one lookup, one budget. Write `lookup_availability` below.
//!
//! Lesson: `exercises/stage8/lesson.md`. Check your work with
//! `cargo run -p grader -- stage8`. To start over: `cargo run -p grader -- reset stage8`
//! (that touches only this file).

#[allow(unused_imports)] // the names the lesson's rules speak of
use kit_types::{
    Admission, Availability, Failure, FailureCode, Outcome, ProviderReply, TransportFailure,
};
use kit_types::{Clock, Gateway, Lookup, Provider};

/// One logical availability lookup of `item_id` through `gateway`.
///
/// What to implement (the lesson has the tables):
///
/// 1. Count the lookup (`gateway.count_lookup()`), then ask `gateway.breaker().admit(now)`;
///    a rejection is `Failed(503, breaker_open)` with zero attempts.
/// 2. Call `gateway.provider().get(item_id, timeout)` at most `config.max_attempts` times,
///    each with `timeout = min(attempt_timeout, time left before the deadline)`, counting each
///    attempt (`gateway.count_attempt()`) and in this lookup's own `attempts`.
/// 3. Retry only timeouts, connection failures and 502/503/504, after a backoff that ends
///    before the deadline. Everything else ends the lookup at once (see the lesson's table).
/// 4. Tell the breaker once how the lookup ended.
#[allow(unused_variables)] // remove once your body uses both arguments
pub fn lookup_availability<P: Provider, C: Clock>(
    gateway: &Gateway<P, C>,
    item_id: &str,
) -> Lookup {
    todo!("write lookup_availability (lesson: exercises/stage8/lesson.md)")
}

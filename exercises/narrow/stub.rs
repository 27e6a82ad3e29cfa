//! narrow · Narrow exception handling. Write `handle_attempt` below.
//!
//! Lesson: `exercises/narrow/lesson.md`. Check your work with
//! `cargo run -p grader -- narrow`. To start over: `cargo run -p grader -- reset narrow`
//! (your file is backed up first).

use kit_types::{Handled, RequestError};

/// Runs one attempt of a request and handles its result narrowly (see the lesson).
#[allow(unused_variables)] // remove once your body calls the request
pub fn handle_attempt<T>(
    request: impl FnOnce() -> Result<T, RequestError>,
) -> Result<Handled<T>, RequestError> {
    todo!("write handle_attempt (lesson: exercises/narrow/lesson.md)")
}

//! What the grader checks: one set of functions, from the learner's crate or the reference.

use reference::gateway::fakes::{FakeClock, ScriptedProvider};
use reference::{Gateway, Lookup, RequestError, RetryError, RetryEvent, RetryPolicy};

/// The value the checks' request callbacks return: JSON, so that scenarios can script any
/// reply and a check can tell the caller's own value from a made-up one.
pub type Reply = serde_json::Value;

/// `retry_request` with its generic parameters fixed, so one checker serves every crate
/// that implements it.
///
/// ```
/// use grader::RetryFn;
/// let f: RetryFn = |p, r, s, l| reference::retry_request(p, r, s, l);
/// # let _ = f;
/// ```
pub type RetryFn = fn(
    &RetryPolicy,
    &mut dyn FnMut() -> Result<Reply, RequestError>,
    &mut dyn FnMut(f64),
    &mut dyn FnMut(RetryEvent),
) -> Result<Reply, RetryError>;

/// The gateway the stage 8 checks build: a scripted provider and a fake clock.
pub type TestGateway = Gateway<ScriptedProvider, FakeClock>;

/// `lookup_availability` on the checks' gateway type.
pub type LookupFn = fn(&TestGateway, &str) -> Lookup;

/// One implementation of the exercises, as a harness process links it.
#[derive(Debug, Clone, Copy)]
pub struct Implementation {
    /// Who wrote it, for messages: `"practice"`, `"reference"`, or a test's name.
    pub label: &'static str,
    /// The build3 function.
    pub retry_request: RetryFn,
    /// The stage 8 function.
    pub lookup_availability: LookupFn,
}

impl Implementation {
    /// The kit's finished implementation.
    pub fn reference() -> Self {
        Implementation {
            label: "reference",
            retry_request: |p, r, s, l| reference::retry_request(p, r, s, l),
            lookup_availability: |g, item| reference::lookup_availability(g, item),
        }
    }
}

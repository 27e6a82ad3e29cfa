//! What the gateway talks to: the provider, and the clock it measures its budget with.

use crate::TransportFailure;
use serde::{Deserialize, Serialize};

/// One reply from the rental provider.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ProviderReply {
    /// The HTTP status.
    pub status: u16,
    /// The body; a 200's body is declared as `{"item_id": "...", "available": true|false}`.
    pub body: String,
    /// The Retry-After header, if the provider sent one.
    pub retry_after: Option<String>,
}

/// The rental provider: one idempotent GET of an item's availability.
///
/// `timeout` is the most this attempt may take, in seconds; a provider that takes longer
/// answers `Err(TransportFailure::Timeout)`.
pub trait Provider: Sync {
    /// Performs one GET for `item_id`.
    fn get(&self, item_id: &str, timeout: f64) -> Result<ProviderReply, TransportFailure>;
}

/// The gateway's clock, in seconds. Injected so tests run on a fake one.
pub trait Clock: Sync {
    /// The current time.
    fn now(&self) -> f64;
    /// Waits `secs` seconds.
    fn sleep(&self, secs: f64);
}

/// The real clock: seconds since the Unix epoch, and real sleeping.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> f64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64())
    }

    fn sleep(&self, secs: f64) {
        if secs.is_finite() && secs > 0.0 {
            std::thread::sleep(std::time::Duration::from_secs_f64(secs));
        }
    }
}

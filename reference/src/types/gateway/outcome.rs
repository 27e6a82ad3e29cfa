//! How a lookup ends: the types of `lookup_availability` (the stage8 lesson).

use serde::{Deserialize, Serialize};
use std::fmt;

/// What the provider said about an item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Availability {
    /// The item asked for.
    pub item_id: String,
    /// Whether it can be rented now.
    pub available: bool,
}

/// Why a lookup failed, as the caller sees it. Serialized in snake_case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureCode {
    /// Timeouts, connection failures and 502/503/504 used up the attempts or the deadline.
    ProviderUnavailable,
    /// The provider answered 429: no retry inside this lookup.
    ProviderRateLimited,
    /// The breaker is open: the provider was not called.
    BreakerOpen,
    /// 400, 401 or 403: the integration itself is wrong.
    IntegrationRejected,
    /// 500 or another status this contract does not expect.
    UnexpectedResponse,
    /// A 200 whose body is not the declared shape.
    InvalidPayload,
}

impl FailureCode {
    /// Every code, in the order the contract lists them.
    pub const ALL: [FailureCode; 6] = [
        FailureCode::ProviderUnavailable,
        FailureCode::ProviderRateLimited,
        FailureCode::BreakerOpen,
        FailureCode::IntegrationRejected,
        FailureCode::UnexpectedResponse,
        FailureCode::InvalidPayload,
    ];

    /// The local status the caller gets: 503 when the provider is unavailable, rate-limited
    /// or behind an open breaker; 502 when it answered something unusable.
    ///
    /// ```
    /// use kit_types::FailureCode;
    /// assert_eq!(FailureCode::BreakerOpen.status(), 503);
    /// assert_eq!(FailureCode::InvalidPayload.status(), 502);
    /// ```
    pub fn status(self) -> u16 {
        match self {
            FailureCode::ProviderUnavailable
            | FailureCode::ProviderRateLimited
            | FailureCode::BreakerOpen => 503,
            FailureCode::IntegrationRejected
            | FailureCode::UnexpectedResponse
            | FailureCode::InvalidPayload => 502,
        }
    }

    /// The serialized name, e.g. `"breaker_open"`.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureCode::ProviderUnavailable => "provider_unavailable",
            FailureCode::ProviderRateLimited => "provider_rate_limited",
            FailureCode::BreakerOpen => "breaker_open",
            FailureCode::IntegrationRejected => "integration_rejected",
            FailureCode::UnexpectedResponse => "unexpected_response",
            FailureCode::InvalidPayload => "invalid_payload",
        }
    }
}

impl fmt::Display for FailureCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A bounded failure: a local status and a code, never a made-up answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    /// The local HTTP status for the caller (502 or 503).
    pub status: u16,
    /// Why.
    pub code: FailureCode,
}

impl Failure {
    /// The failure for `code`, with its local status.
    pub fn new(code: FailureCode) -> Self {
        Failure {
            status: code.status(),
            code,
        }
    }
}

/// How a lookup ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The provider answered with the item's availability.
    Available(Availability),
    /// The provider is reachable and has no such item (404).
    Missing,
    /// No answer could be had.
    Failed(Failure),
}

impl fmt::Display for Outcome {
    /// `Available(available = true)`, `Missing`, or `Failed(503 provider_unavailable)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Available(a) => write!(f, "Available(available = {})", a.available),
            Outcome::Missing => f.write_str("Missing"),
            Outcome::Failed(failure) => write!(f, "Failed({} {})", failure.status, failure.code),
        }
    }
}

/// One logical lookup's result and its own count of outbound attempts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lookup {
    /// How it ended.
    pub outcome: Outcome,
    /// Outbound attempts this lookup made (0 when the breaker rejected it).
    pub attempts: u32,
}

//! The gateway's settings and their validation.

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// How one logical lookup may spend its budget, and when the breaker opens.
///
/// ```
/// use kit_types::GatewayConfig;
/// let config = GatewayConfig::default();
/// assert_eq!((config.deadline, config.max_attempts, config.attempt_timeout), (1.0, 3, 0.4));
/// assert_eq!((config.failure_threshold, config.open_for), (3, 30.0));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GatewayConfig {
    /// Seconds one logical lookup may take in all: attempts and sleeps together.
    pub deadline: f64,
    /// Outbound attempts per lookup, the first included (1 to 5).
    pub max_attempts: u32,
    /// The longest one attempt may take (it also never exceeds what is left of the deadline).
    pub attempt_timeout: f64,
    /// Backoff after the first failed attempt; doubles after each further one.
    pub base_delay: f64,
    /// The longest backoff.
    pub max_delay: f64,
    /// Consecutive counted failed lookups that open the breaker.
    pub failure_threshold: u32,
    /// Seconds the breaker stays open before it lets one probe through.
    pub open_for: f64,
}

impl Default for GatewayConfig {
    fn default() -> Self {
        GatewayConfig {
            deadline: 1.0,
            max_attempts: 3,
            attempt_timeout: 0.4,
            base_delay: 0.05,
            max_delay: 0.2,
            failure_threshold: 3,
            open_for: 30.0,
        }
    }
}

/// Why a [`GatewayConfig`] was refused.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ConfigError {
    /// `max_attempts` is outside 1..=5.
    #[error("max_attempts = {0} is outside 1..=5")]
    AttemptsOutOfRange(u32),
    /// A duration is NaN, infinite or out of its range.
    #[error("{field} = {value} is not a valid number of seconds ({rule})")]
    BadSeconds {
        /// Which field.
        field: &'static str,
        /// Its value.
        value: f64,
        /// What it must be.
        rule: &'static str,
    },
    /// `base_delay` is larger than `max_delay`.
    #[error("base_delay = {base} is larger than max_delay = {max}")]
    BaseAboveMax {
        /// The base delay.
        base: f64,
        /// The largest delay.
        max: f64,
    },
    /// `failure_threshold` is 0.
    #[error("failure_threshold must be at least 1")]
    ZeroThreshold,
}

impl GatewayConfig {
    /// Checks every field; returns the first problem.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !(1..=5).contains(&self.max_attempts) {
            return Err(ConfigError::AttemptsOutOfRange(self.max_attempts));
        }
        let positive = |field, value: f64| {
            if value.is_finite() && value > 0.0 {
                Ok(())
            } else {
                Err(ConfigError::BadSeconds {
                    field,
                    value,
                    rule: "finite and above 0",
                })
            }
        };
        let non_negative = |field, value: f64| {
            if value.is_finite() && value >= 0.0 {
                Ok(())
            } else {
                Err(ConfigError::BadSeconds {
                    field,
                    value,
                    rule: "finite and at least 0",
                })
            }
        };
        positive("deadline", self.deadline)?;
        positive("attempt_timeout", self.attempt_timeout)?;
        non_negative("base_delay", self.base_delay)?;
        non_negative("max_delay", self.max_delay)?;
        non_negative("open_for", self.open_for)?;
        if self.base_delay > self.max_delay {
            return Err(ConfigError::BaseAboveMax {
                base: self.base_delay,
                max: self.max_delay,
            });
        }
        if self.failure_threshold == 0 {
            return Err(ConfigError::ZeroThreshold);
        }
        Ok(())
    }
}

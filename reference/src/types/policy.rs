//! The retry policy and its validation.

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// The only method this kit retries: a read that is safe to repeat.
pub const RETRYABLE_METHOD: &str = "GET";
/// The allowed range of `max_attempts` (attempts in total, the first call included).
pub const ATTEMPTS_RANGE: std::ops::RangeInclusive<u32> = 1..=5;
/// The allowed range of `base_delay` and `max_delay`, in seconds.
pub const DELAY_RANGE: std::ops::RangeInclusive<f64> = 0.0..=60.0;

/// How often to try and how long to wait in between.
///
/// The fields are public on purpose: an invalid policy can be built (or read from a file),
/// and `retry_request` (the build3 lesson) must refuse it before calling any callback.
/// Deserializes from TOML or JSON; missing fields take their defaults and unknown fields
/// are refused.
///
/// ```
/// use kit_types::RetryPolicy;
/// let policy: RetryPolicy = toml::from_str("max_attempts = 5\nbase_delay = 1.0").unwrap();
/// assert_eq!(policy.max_attempts, 5);
/// assert_eq!(policy.max_delay, 2.0); // the default
/// assert!(toml::from_str::<RetryPolicy>("retries = 3").is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RetryPolicy {
    /// The HTTP method the request uses. Only `"GET"` is accepted.
    pub method: String,
    /// Attempts in total, the first call included (1 to 5).
    pub max_attempts: u32,
    /// Seconds to wait after the first failed attempt; doubles after each further one.
    pub base_delay: f64,
    /// The delay budget: no planned wait is longer, and a server wait above it stops.
    pub max_delay: f64,
}

impl Default for RetryPolicy {
    /// `GET`, 3 attempts, 0.25 s base delay, 2 s budget.
    fn default() -> Self {
        RetryPolicy {
            method: RETRYABLE_METHOD.to_string(),
            max_attempts: 3,
            base_delay: 0.25,
            max_delay: 2.0,
        }
    }
}

/// Why a [`RetryPolicy`] was refused. Only the first problem found is reported.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum PolicyError {
    /// The method is not exactly `"GET"`.
    #[error("method {0:?} is not retried: only \"GET\" is")]
    UnsupportedMethod(String),
    /// `max_attempts` is outside `1..=5`.
    #[error("max_attempts = {0} is outside 1..=5")]
    AttemptsOutOfRange(u32),
    /// A delay is NaN or infinite.
    #[error("{field} is not a finite number")]
    DelayNotFinite {
        /// `"base_delay"` or `"max_delay"`.
        field: &'static str,
    },
    /// A delay is outside `0.0..=60.0` seconds.
    #[error("{field} = {value} is outside 0..=60 seconds")]
    DelayOutOfRange {
        /// `"base_delay"` or `"max_delay"`.
        field: &'static str,
        /// The refused value.
        value: f64,
    },
    /// `base_delay` is larger than `max_delay`.
    #[error("base_delay = {base} is larger than max_delay = {max}")]
    BaseAboveMax {
        /// The refused base delay.
        base: f64,
        /// The budget it exceeds.
        max: f64,
    },
}

impl RetryPolicy {
    /// Checks the policy in a fixed order and returns the first problem: the method, the
    /// attempt count, `base_delay` (finite, then in range), `max_delay` (finite, then in
    /// range), then `base_delay <= max_delay`.
    ///
    /// ```
    /// use kit_types::{PolicyError, RetryPolicy};
    /// let policy = RetryPolicy { max_attempts: 0, base_delay: f64::NAN, ..RetryPolicy::default() };
    /// assert_eq!(policy.validate(), Err(PolicyError::AttemptsOutOfRange(0)));
    /// assert_eq!(RetryPolicy::default().validate(), Ok(()));
    /// ```
    pub fn validate(&self) -> Result<(), PolicyError> {
        if self.method != RETRYABLE_METHOD {
            return Err(PolicyError::UnsupportedMethod(self.method.clone()));
        }
        if !ATTEMPTS_RANGE.contains(&self.max_attempts) {
            return Err(PolicyError::AttemptsOutOfRange(self.max_attempts));
        }
        check_delay("base_delay", self.base_delay)?;
        check_delay("max_delay", self.max_delay)?;
        if self.base_delay > self.max_delay {
            return Err(PolicyError::BaseAboveMax {
                base: self.base_delay,
                max: self.max_delay,
            });
        }
        Ok(())
    }
}

fn check_delay(field: &'static str, value: f64) -> Result<(), PolicyError> {
    if !value.is_finite() {
        return Err(PolicyError::DelayNotFinite { field });
    }
    if !DELAY_RANGE.contains(&value) {
        return Err(PolicyError::DelayOutOfRange { field, value });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(f: impl FnOnce(&mut RetryPolicy)) -> RetryPolicy {
        let mut p = RetryPolicy::default();
        f(&mut p);
        p
    }

    #[test]
    fn boundaries() {
        for n in [1, 5] {
            assert_eq!(with(|p| p.max_attempts = n).validate(), Ok(()));
        }
        for n in [0, 6, u32::MAX] {
            assert_eq!(
                with(|p| p.max_attempts = n).validate(),
                Err(PolicyError::AttemptsOutOfRange(n))
            );
        }
        assert_eq!(
            with(|p| {
                p.base_delay = 0.0;
                p.max_delay = 0.0
            })
            .validate(),
            Ok(())
        );
        assert_eq!(
            with(|p| {
                p.base_delay = 60.0;
                p.max_delay = 60.0
            })
            .validate(),
            Ok(())
        );
        let above = 60.0f64.next_up();
        assert_eq!(
            with(|p| p.max_delay = above).validate(),
            Err(PolicyError::DelayOutOfRange {
                field: "max_delay",
                value: above
            })
        );
        assert_eq!(
            with(|p| p.base_delay = -0.0).validate(),
            Ok(()),
            "-0.0 equals 0.0"
        );
    }

    #[test]
    fn order_of_checks() {
        let all_wrong = RetryPolicy {
            method: "POST".into(),
            max_attempts: 0,
            base_delay: f64::NAN,
            max_delay: -1.0,
        };
        assert_eq!(
            all_wrong.validate(),
            Err(PolicyError::UnsupportedMethod("POST".into()))
        );
        let p = RetryPolicy {
            method: "GET".into(),
            ..all_wrong
        };
        assert_eq!(p.validate(), Err(PolicyError::AttemptsOutOfRange(0)));
        let p = RetryPolicy {
            max_attempts: 3,
            ..p
        };
        assert_eq!(
            p.validate(),
            Err(PolicyError::DelayNotFinite {
                field: "base_delay"
            })
        );
        let p = RetryPolicy {
            base_delay: 100.0,
            max_delay: f64::INFINITY,
            ..p
        };
        assert_eq!(
            p.validate(),
            Err(PolicyError::DelayOutOfRange {
                field: "base_delay",
                value: 100.0
            }),
            "base_delay is checked fully before max_delay"
        );
        let p = RetryPolicy {
            base_delay: 3.0,
            ..p
        };
        assert_eq!(
            p.validate(),
            Err(PolicyError::DelayNotFinite { field: "max_delay" })
        );
        let p = RetryPolicy {
            max_delay: 2.0,
            ..p
        };
        assert_eq!(
            p.validate(),
            Err(PolicyError::BaseAboveMax {
                base: 3.0,
                max: 2.0
            })
        );
    }

    #[test]
    fn method_is_exact() {
        for m in ["get", "GET ", "POST", ""] {
            assert_eq!(
                with(|p| p.method = m.into()).validate(),
                Err(PolicyError::UnsupportedMethod(m.into()))
            );
        }
    }

    #[test]
    fn deserializes_from_toml_and_json() {
        let t: RetryPolicy = toml::from_str(
            "method = \"GET\"\nmax_attempts = 4\nbase_delay = 0.5\nmax_delay = 3.0\n",
        )
        .unwrap();
        let j: RetryPolicy = serde_json::from_str(
            r#"{"method":"GET","max_attempts":4,"base_delay":0.5,"max_delay":3.0}"#,
        )
        .unwrap();
        assert_eq!(t, j);
        assert_eq!(t.max_attempts, 4);
        let err = toml::from_str::<RetryPolicy>("max_retries = 4").unwrap_err();
        assert!(err.to_string().contains("unknown field"), "{err}");
        let err = serde_json::from_str::<RetryPolicy>(r#"{"jitter":true}"#).unwrap_err();
        assert!(err.to_string().contains("unknown field"), "{err}");
        assert_eq!(
            serde_json::from_str::<RetryPolicy>("{}").unwrap(),
            RetryPolicy::default()
        );
    }
}

//! The events a retry loop reports: one per failed attempt.

use crate::TransientReason;
use serde::{Deserialize, Serialize};
use std::fmt;

/// What the loop decided after a transient failure. Serialized `"retry"` or `"stop"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RetryAction {
    /// Wait the planned delay, then call the request again.
    Retry,
    /// Give up and return [`RetryError::Exhausted`](crate::RetryError::Exhausted).
    Stop,
}

/// Which limit ended the loop. Serialized `"attempt_limit"` or `"delay_budget"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopCause {
    /// The last allowed attempt failed.
    AttemptLimit,
    /// The server asked for a longer wait than `max_delay` allows.
    DelayBudget,
}

impl RetryAction {
    /// The serialized name.
    pub fn as_str(self) -> &'static str {
        match self {
            RetryAction::Retry => "retry",
            RetryAction::Stop => "stop",
        }
    }
}

impl StopCause {
    /// The serialized name.
    pub fn as_str(self) -> &'static str {
        match self {
            StopCause::AttemptLimit => "attempt_limit",
            StopCause::DelayBudget => "delay_budget",
        }
    }
}

impl fmt::Display for RetryAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for StopCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One planned retry or stop, built fresh for every failed attempt.
///
/// It holds controlled categories and numbers only, never the failure's `detail`.
///
/// ```
/// use kit_types::{RetryEvent, TransientReason};
/// let event = RetryEvent::retry(1, TransientReason::ServerError, 0.25);
/// assert_eq!(
///     serde_json::to_string(&event).unwrap(),
///     r#"{"attempt":1,"reason":"server_error","action":"retry","delay":0.25,"cause":null}"#
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetryEvent {
    /// The 1-based number of the attempt that just failed.
    pub attempt: u32,
    /// Why it failed.
    pub reason: TransientReason,
    /// What happens next.
    pub action: RetryAction,
    /// `Some(planned seconds)` on retry, `None` on stop.
    pub delay: Option<f64>,
    /// `None` on retry, `Some(..)` on stop.
    pub cause: Option<StopCause>,
}

impl RetryEvent {
    /// A planned retry after `delay` seconds.
    pub fn retry(attempt: u32, reason: TransientReason, delay: f64) -> Self {
        RetryEvent {
            attempt,
            reason,
            action: RetryAction::Retry,
            delay: Some(delay),
            cause: None,
        }
    }

    /// A stop for `cause`.
    pub fn stop(attempt: u32, reason: TransientReason, cause: StopCause) -> Self {
        RetryEvent {
            attempt,
            reason,
            action: RetryAction::Stop,
            delay: None,
            cause: Some(cause),
        }
    }
}

impl fmt::Display for RetryEvent {
    /// A compact form for traces: `#1 server_error retry 0.25s` or
    /// `#3 timeout stop (attempt_limit)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{} {} {}", self.attempt, self.reason, self.action)?;
        if let Some(d) = self.delay {
            write!(f, " {d}s")?;
        }
        if let Some(c) = self.cause {
            write!(f, " ({c})")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_event_json() {
        let e = RetryEvent::stop(3, TransientReason::Timeout, StopCause::AttemptLimit);
        let json = serde_json::to_string(&e).unwrap();
        assert_eq!(
            json,
            r#"{"attempt":3,"reason":"timeout","action":"stop","delay":null,"cause":"attempt_limit"}"#
        );
        assert_eq!(serde_json::from_str::<RetryEvent>(&json).unwrap(), e);
        assert_eq!(e.to_string(), "#3 timeout stop (attempt_limit)");
    }
}

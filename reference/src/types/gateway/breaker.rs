//! The circuit breaker: after enough consecutive failed lookups, stop calling the provider
//! for a while, then let one probe through.

use std::sync::Mutex;

/// Where the breaker stands.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BreakerState {
    /// Lookups go through; `failures` counted failed lookups in a row so far.
    Closed {
        /// Consecutive counted failures.
        failures: u32,
    },
    /// Lookups are rejected until the gateway's clock reaches `until`.
    Open {
        /// When a probe may go through.
        until: f64,
    },
    /// One probe may go through; `probing` while it is under way.
    HalfOpen {
        /// A probe lookup is running.
        probing: bool,
    },
}

/// What [`Breaker::admit`] decided for one lookup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// The breaker is closed: go ahead.
    Allowed,
    /// The breaker was open long enough: this lookup is the one probe.
    Probe,
    /// Rejected: answer `breaker_open` without calling the provider.
    Rejected,
}

/// A circuit breaker shared by every lookup of a gateway.
///
/// A lookup asks [`admit`](Breaker::admit) once before its first attempt, and reports once
/// when it ends: [`record_success`](Breaker::record_success) for an answer (available or
/// missing), [`record_failure`](Breaker::record_failure) for a failure that makes the
/// provider look unhealthy, [`record_neutral`](Breaker::record_neutral) for one that does
/// not (an integration rejection).
///
/// ```
/// use kit_types::{Admission, Breaker, BreakerState};
/// let breaker = Breaker::new(2, 30.0);
/// breaker.record_failure(0.0);
/// breaker.record_failure(1.0);
/// assert_eq!(breaker.state(), BreakerState::Open { until: 31.0 });
/// assert_eq!(breaker.admit(5.0), Admission::Rejected);
/// assert_eq!(breaker.admit(31.0), Admission::Probe);
/// assert_eq!(breaker.admit(31.0), Admission::Rejected, "one probe at a time");
/// breaker.record_success();
/// assert_eq!(breaker.state(), BreakerState::Closed { failures: 0 });
/// ```
#[derive(Debug)]
pub struct Breaker {
    threshold: u32,
    open_for: f64,
    state: Mutex<BreakerState>,
}

impl Breaker {
    /// A closed breaker that opens after `threshold` consecutive counted failures and stays
    /// open for `open_for` seconds.
    pub fn new(threshold: u32, open_for: f64) -> Self {
        Breaker {
            threshold: threshold.max(1),
            open_for,
            state: Mutex::new(BreakerState::Closed { failures: 0 }),
        }
    }

    fn with_state<R>(&self, f: impl FnOnce(&mut BreakerState) -> R) -> R {
        // A panic elsewhere cannot leave the state half-changed: every change is one write.
        let mut guard = self
            .state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        f(&mut guard)
    }

    /// The current state.
    pub fn state(&self) -> BreakerState {
        self.with_state(|s| *s)
    }

    /// Decides whether a lookup starting at `now` may call the provider.
    pub fn admit(&self, now: f64) -> Admission {
        self.with_state(|s| match *s {
            BreakerState::Closed { .. } => Admission::Allowed,
            BreakerState::Open { until } if now >= until => {
                *s = BreakerState::HalfOpen { probing: true };
                Admission::Probe
            }
            BreakerState::Open { .. } | BreakerState::HalfOpen { probing: true } => {
                Admission::Rejected
            }
            BreakerState::HalfOpen { probing: false } => {
                *s = BreakerState::HalfOpen { probing: true };
                Admission::Probe
            }
        })
    }

    /// A lookup got an answer (available or missing): close, and forget past failures.
    pub fn record_success(&self) {
        self.with_state(|s| *s = BreakerState::Closed { failures: 0 });
    }

    /// A lookup failed in a way that makes the provider look unhealthy, at time `now`.
    pub fn record_failure(&self, now: f64) {
        let (threshold, open_for) = (self.threshold, self.open_for);
        self.with_state(|s| {
            *s = match *s {
                BreakerState::Closed { failures } if failures + 1 < threshold => {
                    BreakerState::Closed {
                        failures: failures + 1,
                    }
                }
                _ => BreakerState::Open {
                    until: now + open_for,
                },
            }
        });
    }

    /// A lookup ended in a way that says nothing about the provider's health. A probe that
    /// ends so gives its place to the next lookup.
    pub fn record_neutral(&self) {
        self.with_state(|s| {
            if let BreakerState::HalfOpen { probing: true } = *s {
                *s = BreakerState::HalfOpen { probing: false };
            }
        });
    }
}

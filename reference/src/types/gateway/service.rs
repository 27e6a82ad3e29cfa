//! The gateway: configuration, provider, clock, breaker and counters in one shareable value.

use super::{Breaker, Clock, ConfigError, GatewayConfig, Provider};
use std::sync::atomic::{AtomicU64, Ordering};

/// A snapshot of the gateway's counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counters {
    /// Logical lookups asked for (breaker rejections included).
    pub logical_lookups: u64,
    /// Outbound attempts made to the provider.
    pub attempts: u64,
}

/// Everything one availability lookup needs, shared by every lookup (it is `Sync`).
#[derive(Debug)]
pub struct Gateway<P: Provider, C: Clock> {
    config: GatewayConfig,
    provider: P,
    clock: C,
    breaker: Breaker,
    lookups: AtomicU64,
    attempts: AtomicU64,
}

impl<P: Provider, C: Clock> Gateway<P, C> {
    /// A gateway with a closed breaker and zeroed counters; refuses an invalid config.
    pub fn new(config: GatewayConfig, provider: P, clock: C) -> Result<Self, ConfigError> {
        config.validate()?;
        let breaker = Breaker::new(config.failure_threshold, config.open_for);
        Ok(Gateway {
            config,
            provider,
            clock,
            breaker,
            lookups: AtomicU64::new(0),
            attempts: AtomicU64::new(0),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &GatewayConfig {
        &self.config
    }

    /// The provider.
    pub fn provider(&self) -> &P {
        &self.provider
    }

    /// The clock.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// The circuit breaker.
    pub fn breaker(&self) -> &Breaker {
        &self.breaker
    }

    /// The counters as they are now.
    pub fn counters(&self) -> Counters {
        Counters {
            logical_lookups: self.lookups.load(Ordering::SeqCst),
            attempts: self.attempts.load(Ordering::SeqCst),
        }
    }

    /// Counts one logical lookup. Call it once per lookup, breaker rejections included.
    pub fn count_lookup(&self) {
        self.lookups.fetch_add(1, Ordering::SeqCst);
    }

    /// Counts one outbound attempt. Call it once per call of the provider.
    pub fn count_attempt(&self) {
        self.attempts.fetch_add(1, Ordering::SeqCst);
    }
}

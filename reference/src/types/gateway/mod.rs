//! Stage 8's gateway: everything `lookup_availability` is given, and what it returns.
//!
//! A [`Gateway`] holds the configuration, the [`Provider`] (one idempotent GET), the
//! [`Clock`], the circuit [`Breaker`] and the global [`Counters`]. A lookup ends as a
//! [`Lookup`]: an [`Outcome`] and its own count of attempts.
//!
//! The provider and the clock are injected; [`fakes`] has a scripted provider and a fake
//! clock that advances only when code sleeps or an attempt takes time, so no test ever
//! really waits.
//!
//! ```
//! use kit_types::gateway::fakes::{FakeClock, ScriptedProvider, Step};
//! use kit_types::{Admission, Clock, Gateway, GatewayConfig, Provider};
//!
//! let clock = FakeClock::new();
//! let provider = ScriptedProvider::sequence(clock.clone(), vec![Step::status(503)]);
//! let gateway = Gateway::new(GatewayConfig::default(), provider, clock).unwrap();
//! assert_eq!(gateway.breaker().admit(gateway.clock().now()), Admission::Allowed);
//! let reply = gateway.provider().get("bike-7", 0.4).unwrap();
//! assert_eq!(reply.status, 503);
//! ```

mod breaker;
mod config;
pub mod fakes;
mod outcome;
mod provider;
mod service;

pub use breaker::{Admission, Breaker, BreakerState};
pub use config::{ConfigError, GatewayConfig};
pub use outcome::{Availability, Failure, FailureCode, Lookup, Outcome};
pub use provider::{Clock, Provider, ProviderReply, SystemClock};
pub use service::{Counters, Gateway};

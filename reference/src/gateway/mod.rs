//! Stage 8: one availability lookup, one budget.
//!
//! A [`Gateway`] looks an item's availability up at a rental provider through an idempotent
//! GET. [`lookup_availability`] is one *logical* lookup: at most `max_attempts` outbound
//! attempts that share one end-to-end deadline, behind a circuit [`Breaker`], with honest
//! [`Counters`] of logical lookups and outbound attempts.
//!
//! The provider and the clock are injected ([`Provider`], [`Clock`]); [`fakes`] has a
//! scripted provider and a fake clock that advances only when code sleeps or an attempt
//! takes time, so no test ever really waits.
//!
//! ```
//! use reference::gateway::fakes::{FakeClock, ScriptedProvider, Step};
//! use reference::{lookup_availability, Gateway, GatewayConfig, Outcome};
//!
//! let clock = FakeClock::new();
//! let provider = ScriptedProvider::sequence(clock.clone(), vec![
//!     Step::status(503),
//!     Step::status(503),
//!     Step::available("bike-7", true),
//! ]);
//! let gateway = Gateway::new(GatewayConfig::default(), provider, clock).unwrap();
//! let lookup = lookup_availability(&gateway, "bike-7");
//! assert!(matches!(lookup.outcome, Outcome::Available(ref a) if a.available));
//! assert_eq!(lookup.attempts, 3);
//! assert_eq!((gateway.counters().logical_lookups, gateway.counters().attempts), (1, 3));
//! ```

mod breaker;
mod config;
pub mod fakes;
mod lookup;
mod provider;
mod service;

pub use breaker::{Admission, Breaker, BreakerState};
pub use config::{ConfigError, GatewayConfig};
pub use lookup::{lookup_availability, Availability, Failure, FailureCode, Lookup, Outcome};
pub use provider::{Clock, Provider, ProviderReply, SystemClock};
pub use service::{Counters, Gateway};

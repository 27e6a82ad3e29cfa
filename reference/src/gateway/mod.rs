//! Stage 8: one availability lookup, one budget — the finished [`lookup_availability`].
//!
//! The gateway's types (the [`Gateway`], its [`Breaker`] and [`Counters`], the [`Lookup`]
//! it returns, and the [`fakes`] the tests run it on) live in `kit-types`; they are
//! re-exported here so that `reference::gateway::…` paths keep working.
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

mod lookup;

pub use kit_types::gateway::*;
pub use lookup::lookup_availability;

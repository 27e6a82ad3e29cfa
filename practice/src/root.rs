//! The practice crate's root. The kit owns this file (`cargo run -p grader -- dev update`
//! writes it from `exercises/lessons.toml`); you write in the lesson files:
//!
//! | lesson | your file | your function |
//! |---|---|---|
//! | build2 | `src/fetch.rs` | `fetch` |
//! | narrow | `src/narrow.rs` | `handle_attempt` |
//! | build3 | `src/lib.rs` | `retry_request` |
//! | stage8 | `src/gateway.rs` | `lookup_availability` |
//!
//! Each lesson's file is a module named after its lesson, compiled only when the lesson's
//! feature is on. The grader turns on one lesson at a time, so a half-written file never
//! blocks another lesson; your editor and a plain `cargo build` turn them all on.
//!
//! The shared types are re-exported here from `kit-types` (documented: `cargo doc --open -p
//! kit-types`), so your files can name them as `kit_types::…` or `crate::…`.

pub use kit_types::*;

#[cfg(feature = "build2")]
#[path = "fetch.rs"]
mod build2;
#[cfg(feature = "build2")]
pub use build2::fetch;

#[cfg(feature = "narrow")]
#[path = "narrow.rs"]
#[allow(hidden_glob_reexports)]
mod narrow;
#[cfg(feature = "narrow")]
pub use narrow::handle_attempt;

#[cfg(feature = "build3")]
#[path = "lib.rs"]
mod build3;
#[cfg(feature = "build3")]
pub use build3::retry_request;

#[cfg(feature = "stage8")]
#[path = "gateway.rs"]
mod stage8;
#[cfg(feature = "stage8")]
pub use stage8::lookup_availability;

// After an edit, the grader compiles this crate as a library that its checks load (with
// `--cfg kit_glue`), rather than linking a whole program around it. These are the names the
// checks look up, each lesson's function with its types fixed as the checks call it. A plain
// `cargo build` never compiles them.
#[cfg(all(kit_glue, feature = "build2"))]
#[unsafe(no_mangle)]
static KIT_LEARNER_BUILD2: kit_types::graded::FetchFn = |a0, a1, a2| build2::fetch(a0, a1, a2);
#[cfg(all(kit_glue, feature = "narrow"))]
#[unsafe(no_mangle)]
static KIT_LEARNER_NARROW: kit_types::narrow::AttemptFn = |a0| narrow::handle_attempt(a0);
#[cfg(all(kit_glue, feature = "build3"))]
#[unsafe(no_mangle)]
static KIT_LEARNER_BUILD3: kit_types::graded::RetryFn =
    |a0, a1, a2, a3| build3::retry_request(a0, a1, a2, a3);
#[cfg(all(kit_glue, feature = "stage8"))]
#[unsafe(no_mangle)]
static KIT_LEARNER_STAGE8: kit_types::graded::LookupFn =
    |a0, a1| stage8::lookup_availability(a0, a1);

//! One logical availability lookup: the stage8 lesson's reference answer.

use crate::fetch::parse_retry_after;
use kit_types::{
    Admission, Availability, Clock, Failure, FailureCode, Gateway, Lookup, Outcome, Provider,
    ProviderReply, TransportFailure,
};
use serde::Deserialize;

/// The declared shape of a 200's body.
#[derive(Deserialize)]
struct Body {
    item_id: String,
    available: bool,
}

/// A 200's body, when it has the declared shape: a JSON object with a string `item_id` and a
/// boolean `available`. Only an object will do: serde would fill `Body` from an array by
/// position, and `["bike-7", true]` is not what the provider declared.
fn declared_body(text: &str) -> Option<Body> {
    match serde_json::from_str::<serde_json::Value>(text).ok()? {
        object @ serde_json::Value::Object(_) => serde_json::from_value(object).ok(),
        _ => None,
    }
}

/// What one attempt's reply means for the lookup.
enum Verdict {
    Done(Outcome),
    /// Worth another attempt, after at least this many seconds if the provider said so.
    Retry(Option<f64>),
}

fn classify(item_id: &str, reply: Result<ProviderReply, TransportFailure>) -> Verdict {
    let failed = |code| Verdict::Done(Outcome::Failed(Failure::new(code)));
    let reply = match reply {
        Ok(reply) => reply,
        Err(TransportFailure::Timeout | TransportFailure::Connection) => {
            return Verdict::Retry(None)
        }
    };
    match reply.status {
        200 => match declared_body(&reply.body) {
            Some(body) if body.item_id == item_id => {
                Verdict::Done(Outcome::Available(Availability {
                    item_id: body.item_id,
                    available: body.available,
                }))
            }
            _ => failed(FailureCode::InvalidPayload),
        },
        404 => Verdict::Done(Outcome::Missing),
        429 => failed(FailureCode::ProviderRateLimited),
        400 | 401 | 403 => failed(FailureCode::IntegrationRejected),
        502..=504 => Verdict::Retry(reply.retry_after.as_deref().and_then(parse_retry_after)),
        _ => failed(FailureCode::UnexpectedResponse),
    }
}

/// Looks up `item_id` once, logically: at most `max_attempts` GETs, all inside one deadline.
///
/// 1. Counts the lookup, then asks the breaker; a rejection answers `breaker_open` (503)
///    with zero attempts and no provider call.
/// 2. Each attempt gets `min(attempt_timeout, time left before the deadline)` and is counted
///    both in this lookup and globally.
/// 3. Timeouts, connection failures and 502/503/504 are retried after
///    `min(max_delay, base_delay * 2^(n-1))`, or the provider's longer Retry-After, but only
///    when attempts are left and that sleep ends before the deadline; otherwise the lookup
///    ends as `provider_unavailable` (503) without sleeping. A long Retry-After never
///    stretches the deadline.
/// 4. 429 ends the lookup at once as `provider_rate_limited` (503), whatever Retry-After
///    says; 404 is `Missing`; 400/401/403 are `integration_rejected`, 500 and other statuses
///    `unexpected_response`, a malformed 200 `invalid_payload` (all 502).
/// 5. The breaker hears about the lookup once: success for an answer, a failure for a code
///    that makes the provider look unhealthy, nothing for an integration rejection.
pub fn lookup_availability<P: Provider, C: Clock>(
    gateway: &Gateway<P, C>,
    item_id: &str,
) -> Lookup {
    gateway.count_lookup();
    let config = gateway.config();
    let clock = gateway.clock();
    let deadline = clock.now() + config.deadline;
    if gateway.breaker().admit(clock.now()) == Admission::Rejected {
        return Lookup {
            outcome: Outcome::Failed(Failure::new(FailureCode::BreakerOpen)),
            attempts: 0,
        };
    }
    let mut attempts = 0;
    let outcome = loop {
        let timeout = config.attempt_timeout.min(deadline - clock.now());
        attempts += 1;
        gateway.count_attempt();
        let wait = match classify(item_id, gateway.provider().get(item_id, timeout)) {
            Verdict::Done(outcome) => break outcome,
            Verdict::Retry(wait) => wait,
        };
        if attempts >= config.max_attempts {
            break Outcome::Failed(Failure::new(FailureCode::ProviderUnavailable));
        }
        let backoff = (config.base_delay * 2f64.powi(attempts as i32 - 1)).min(config.max_delay);
        let pause = wait.map_or(backoff, |w| w.max(backoff));
        // Sleeping up to (or past) the deadline would leave no time for another attempt.
        if clock.now() + pause >= deadline {
            break Outcome::Failed(Failure::new(FailureCode::ProviderUnavailable));
        }
        clock.sleep(pause);
    };
    let breaker = gateway.breaker();
    match &outcome {
        Outcome::Available(_) | Outcome::Missing => breaker.record_success(),
        Outcome::Failed(f) if f.code == FailureCode::IntegrationRejected => {
            breaker.record_neutral()
        }
        Outcome::Failed(_) => breaker.record_failure(clock.now()),
    }
    Lookup { outcome, attempts }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kit_types::gateway::fakes::{FakeClock, ScriptedProvider, Step};
    use kit_types::{BreakerState, GatewayConfig};

    fn gateway(config: GatewayConfig, steps: Vec<Step>) -> Gateway<ScriptedProvider, FakeClock> {
        let clock = FakeClock::new();
        Gateway::new(
            config,
            ScriptedProvider::sequence(clock.clone(), steps),
            clock,
        )
        .unwrap()
    }

    fn failed(code: FailureCode) -> Outcome {
        Outcome::Failed(Failure::new(code))
    }

    #[test]
    fn two_503s_then_200_is_one_lookup_of_three_attempts() {
        let g = gateway(
            GatewayConfig::default(),
            vec![
                Step::status(503),
                Step::status(503),
                Step::available("b", false),
            ],
        );
        let l = lookup_availability(&g, "b");
        assert_eq!(
            l.outcome,
            Outcome::Available(Availability {
                item_id: "b".into(),
                available: false
            })
        );
        assert_eq!(l.attempts, 3);
        let waits: Vec<f64> = g.clock().sleeps().iter().map(|s| s.secs).collect();
        assert_eq!(waits, [0.05, 0.1]);
    }

    #[test]
    fn rate_limit_ends_at_once_whatever_retry_after_says() {
        for header in ["0", "1", "3600"] {
            let g = gateway(
                GatewayConfig::default(),
                vec![Step::status(429).with_retry_after(header)],
            );
            let l = lookup_availability(&g, "b");
            assert_eq!(
                (l.outcome, l.attempts),
                (failed(FailureCode::ProviderRateLimited), 1)
            );
            assert!(g.clock().sleeps().is_empty());
        }
    }

    #[test]
    fn a_long_retry_after_ends_the_lookup_inside_the_deadline() {
        let g = gateway(
            GatewayConfig::default(),
            vec![Step::status(503).with_retry_after("3600")],
        );
        let l = lookup_availability(&g, "b");
        assert_eq!(
            (l.outcome, l.attempts),
            (failed(FailureCode::ProviderUnavailable), 1)
        );
        assert!(g.clock().sleeps().is_empty());
        assert!(g.clock().now() <= 1.0);
    }

    #[test]
    fn attempts_share_the_deadline() {
        // Each attempt times out: 0.4 + 0.05 + 0.4 + 0.1 = 0.95, then only 0.05 is left.
        let g = gateway(
            GatewayConfig::default(),
            vec![Step::status(200).taking(10.0)],
        );
        let l = lookup_availability(&g, "b");
        assert_eq!(l.attempts, 3);
        let timeouts: Vec<f64> = g.provider().calls().iter().map(|c| c.timeout).collect();
        assert_eq!(timeouts.len(), 3);
        assert!((timeouts[2] - 0.05).abs() < 1e-9, "{timeouts:?}");
        assert!(g.clock().now() <= 1.0 + 1e-9);
    }

    #[test]
    fn the_breaker_hears_once_per_lookup_and_probes_once() {
        let g = gateway(GatewayConfig::default(), vec![Step::status(503)]);
        lookup_availability(&g, "b");
        assert_eq!(g.breaker().state(), BreakerState::Closed { failures: 1 });
        lookup_availability(&g, "b");
        lookup_availability(&g, "b");
        assert!(matches!(g.breaker().state(), BreakerState::Open { .. }));
        let calls = g.provider().calls().len();
        let rejected = lookup_availability(&g, "b");
        assert_eq!(
            (rejected.outcome, rejected.attempts),
            (failed(FailureCode::BreakerOpen), 0)
        );
        assert_eq!(g.provider().calls().len(), calls);
        assert_eq!(g.counters().logical_lookups, 4);
        g.clock().advance(30.0);
        let probe = lookup_availability(&g, "b");
        assert_eq!(probe.attempts, 3, "the probe is a full lookup");
        assert!(matches!(g.breaker().state(), BreakerState::Open { .. }));
    }

    #[test]
    fn classification_table() {
        let cases = [
            (Step::status(404), Outcome::Missing),
            (Step::status(400), failed(FailureCode::IntegrationRejected)),
            (Step::status(401), failed(FailureCode::IntegrationRejected)),
            (Step::status(403), failed(FailureCode::IntegrationRejected)),
            (Step::status(500), failed(FailureCode::UnexpectedResponse)),
            (Step::status(302), failed(FailureCode::UnexpectedResponse)),
            (Step::status(200), failed(FailureCode::InvalidPayload)),
            (
                Step::reply(kit_types::ProviderReply {
                    status: 200,
                    body: r#"["b", true]"#.into(),
                    retry_after: None,
                }),
                failed(FailureCode::InvalidPayload),
            ),
            (
                Step::available("other", true),
                failed(FailureCode::InvalidPayload),
            ),
        ];
        for (step, expected) in cases {
            let g = gateway(GatewayConfig::default(), vec![step.clone()]);
            let l = lookup_availability(&g, "b");
            assert_eq!((l.outcome, l.attempts), (expected, 1), "{step:?}");
        }
    }
}

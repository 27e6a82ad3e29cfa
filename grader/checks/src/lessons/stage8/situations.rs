//! The situations stage8's lesson asks the learner's own scenario files to cover (its "When
//! every check passes" list), each recognised in a parsed [`GatewayScenario`]. Their words are
//! in `exercises/stage8/info.toml`, under the same ids.
//!
//! Like every predicate, these read the file alone: the breaker's situation is recognised
//! from the lookups and the replies a correct gateway would meet, not from what the learner's
//! gateway did with them.

use super::gateway::Reply;
use super::scenario::GatewayScenario;
use crate::scenario::delay_seconds;
use crate::scenario::Situation;

/// The lesson's situations, in its order.
pub(crate) const SITUATIONS: &[Situation<GatewayScenario>] = &[
    Situation {
        id: "slow_provider",
        covered_by: slow_provider,
    },
    Situation {
        id: "long_retry_after",
        covered_by: long_retry_after,
    },
    Situation {
        id: "breaker_opens_and_probes",
        covered_by: breaker_opens_and_probes,
    },
];

/// How long the reply takes.
fn latency(reply: &Reply) -> f64 {
    match reply {
        Reply::Step(step) => step.latency,
        Reply::Available { latency, .. } => *latency,
    }
}

/// A reply that takes longer than any attempt may wait for it (`attempt_timeout`).
fn slow_provider(scenario: &GatewayScenario) -> bool {
    let timeout = scenario.config.attempt_timeout;
    scenario.replies.iter().any(|r| latency(r) > timeout)
}

/// A 502, 503 or 504 whose Retry-After, in delay-seconds, is at least the whole lookup's
/// `deadline`, and that arrives within its attempt's timeout.
fn long_retry_after(scenario: &GatewayScenario) -> bool {
    let config = &scenario.config;
    scenario.replies.iter().any(|r| {
        let Reply::Step(step) = r else { return false };
        let Ok(reply) = &step.reply else { return false };
        let seconds = reply.retry_after.as_deref().and_then(delay_seconds);
        (502..=504).contains(&reply.status)
            && step.latency <= config.attempt_timeout
            && seconds.is_some_and(|s| s >= config.deadline)
    })
}

/// A reply after which a lookup certainly fails and the breaker hears a failure: a transport
/// failure, a reply slower than any attempt's timeout, or a status other than an answer (200,
/// 404) or an integration rejection (400, 401, 403). A 200 is never counted, whatever its
/// body.
fn fails(reply: &Reply, attempt_timeout: f64) -> bool {
    if latency(reply) > attempt_timeout {
        return true;
    }
    match reply {
        Reply::Available { .. } => false,
        Reply::Step(step) => match &step.reply {
            Err(_) => true,
            Ok(r) => ![200, 404, 400, 401, 403].contains(&r.status),
        },
    }
}

/// Enough failing lookups to open the breaker, then, `open_for` seconds later at least, one
/// more lookup: the probe. The first `failure_threshold` lookups fail whatever attempts they
/// make: the provider's replies fail for `failure_threshold × max_attempts` calls, or for
/// ever; the probe's lookup comes after pauses (`after`) that add up to `open_for` or more
/// since the last of them ended.
fn breaker_opens_and_probes(scenario: &GatewayScenario) -> bool {
    let config = &scenario.config;
    let threshold = config.failure_threshold as usize;
    let failing = scenario
        .replies
        .iter()
        .take_while(|r| fails(r, config.attempt_timeout))
        .count();
    let all_fail_for_ever = scenario.forever && failing == scenario.replies.len();
    let enough_failures =
        all_fail_for_ever || failing >= threshold.saturating_mul(config.max_attempts as usize);
    let mut waited = 0.0;
    let probed = scenario.lookups.iter().skip(threshold).any(|(_, after)| {
        waited += after;
        waited >= config.open_for
    });
    threshold > 0 && enough_failures && probed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::covered;
    use std::path::Path;

    fn covers(body: &str) -> Vec<&'static str> {
        let text = format!("exercise = \"stage8\"\n{body}");
        covered(&GatewayScenario::parse(Path::new("s.toml"), &text).unwrap())
    }

    #[test]
    fn a_slow_provider() {
        assert_eq!(
            covers("[[outcome]]\navailable = true\nlatency = 10.0\nforever = true\n"),
            ["slow_provider"]
        );
        assert!(covers("[[outcome]]\navailable = true\nlatency = 0.1\n").is_empty());
    }

    #[test]
    fn a_long_retry_after() {
        let long = "[[outcome]]\nhttp = { status = 503, headers = { Retry-After = \"3600\" } }\nforever = true\n";
        assert_eq!(covers(long), ["long_retry_after"]);
        // Shorter than the deadline; and on a status whose Retry-After is not read.
        let short = "[[outcome]]\nhttp = { status = 503, headers = { Retry-After = \"0\" } }\n[[outcome]]\navailable = true\n";
        assert!(covers(short).is_empty());
        let on_500 = "[[outcome]]\nhttp = { status = 500, headers = { Retry-After = \"3600\" } }\n";
        assert!(covers(on_500).is_empty());
    }

    #[test]
    fn the_breaker_opening_and_probing() {
        let shipped = include_str!("../../../../../exercises/stage8/scenarios/breaker-probe.toml");
        let parsed = GatewayScenario::parse(Path::new("b.toml"), shipped).unwrap();
        assert_eq!(covered(&parsed), ["breaker_opens_and_probes"]);
        let lookups = "[[lookup]]\nitem = \"a\"\n".repeat(3);
        let failing = "[[outcome]]\ntransport = \"connection\"\nforever = true\n";
        let probe = "[[lookup]]\nitem = \"a\"\nafter = 30.0\n";
        assert_eq!(
            covers(&format!("{lookups}{probe}{failing}")),
            ["breaker_opens_and_probes"]
        );
        // No pause long enough for a probe; and too few failures to open it.
        let early = "[[lookup]]\nitem = \"a\"\nafter = 29.0\n";
        assert!(covers(&format!("{lookups}{early}{failing}")).is_empty());
        let few = "[[outcome]]\nhttp = { status = 503 }\n".repeat(8)
            + "[[outcome]]\navailable = true\nforever = true\n";
        assert!(covers(&format!("{lookups}{probe}{few}")).is_empty());
    }
}

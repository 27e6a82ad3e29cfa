//! The situations build3's lesson asks the learner's own scenario files to cover ("Show it
//! works on new inputs"), each recognised in a parsed [`Scenario`]. Their words are in
//! `exercises/build3/info.toml`, under the same ids.
//!
//! A raw reply (`http = { status = 404 }`) is already classified by the kit's GET fetcher when
//! the file is parsed, so `permanent = "not_found"` and `http = { status = 404 }` cover the
//! same situation.

use super::scenario::Scenario;
use super::Reply;
use crate::scenario::Situation;
use kit_types::{PermanentKind, RequestError, TransientError, TransientReason};

/// The lesson's situations, in its order.
pub(crate) const SITUATIONS: &[Situation<Scenario>] = &[
    Situation {
        id: "second_call_success",
        covered_by: second_call_success,
    },
    Situation {
        id: "always_times_out",
        covered_by: always_times_out,
    },
    Situation {
        id: "permanent_404",
        covered_by: permanent_404,
    },
    Situation {
        id: "server_wait_over_budget",
        covered_by: server_wait_over_budget,
    },
];

fn transient(step: &Result<Reply, RequestError>) -> Option<&TransientError> {
    match step {
        Err(RequestError::Transient(t)) => Some(t),
        _ => None,
    }
}

/// Whether the policy asks for a wait over its budget: a server wait above `max_delay`.
fn over_budget(scenario: &Scenario, t: &TransientError) -> bool {
    t.retry_after.is_some_and(|w| w > scenario.policy.max_delay)
}

/// A valid policy of two attempts or more, a first call that fails transiently with no wait
/// over the budget, and data on the second.
fn second_call_success(scenario: &Scenario) -> bool {
    let steps = &scenario.script.steps;
    scenario.policy.validate().is_ok()
        && scenario.policy.max_attempts >= 2
        && steps
            .first()
            .and_then(transient)
            .is_some_and(|t| !over_budget(scenario, t))
        && matches!(steps.get(1), Some(Ok(_)))
}

/// Every call times out, for as long as the code asks: only `timeout` outcomes, the last
/// with `forever = true`.
fn always_times_out(scenario: &Scenario) -> bool {
    let script = &scenario.script;
    script.repeat_last
        && script
            .steps
            .iter()
            .all(|s| transient(s).is_some_and(|t| t.reason == TransientReason::Timeout))
}

/// The first outcome that is not transient is a permanent `not_found`: the code gets to it.
fn permanent_404(scenario: &Scenario) -> bool {
    let first = scenario
        .script
        .steps
        .iter()
        .find(|s| transient(s).is_none());
    matches!(first, Some(Err(RequestError::Permanent(p))) if p.kind == PermanentKind::NotFound
        && p.status.is_none_or(|s| s == 404))
}

/// A valid policy, and among the first `max_attempts` outcomes, all transient, one whose
/// server wait is over `max_delay`.
fn server_wait_over_budget(scenario: &Scenario) -> bool {
    let policy = &scenario.policy;
    policy.validate().is_ok()
        && scenario
            .script
            .steps
            .iter()
            .take(policy.max_attempts as usize)
            .map_while(transient)
            .any(|t| over_budget(scenario, t))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::covered;
    use std::path::Path;

    fn covers(text: &str) -> Vec<&'static str> {
        covered(&Scenario::parse(Path::new("s.toml"), text).unwrap())
    }

    #[test]
    fn success_on_the_second_call() {
        let ok = "[[outcome]]\ntransient = \"timeout\"\n\n[[outcome]]\ndata = { job_id = \"2\" }\n";
        assert_eq!(covers(ok), ["second_call_success"]);
        // Data on the third call; and one attempt only.
        let third = "[[outcome]]\ntransient = \"timeout\"\n[[outcome]]\ntransient = \"timeout\"\n[[outcome]]\ndata = 3\n";
        assert!(covers(third).is_empty());
        let once = format!("[policy]\nmax_attempts = 1\n{ok}");
        assert!(covers(&once).is_empty());
    }

    #[test]
    fn a_request_that_always_times_out() {
        assert_eq!(
            covers("[[outcome]]\ntransient = \"timeout\"\nforever = true\n"),
            ["always_times_out"]
        );
        // Three timeouts that stop; and a connection failure forever.
        let three = "[[outcome]]\ntransient = \"timeout\"\n".repeat(3);
        assert!(covers(&three).is_empty());
        assert!(covers("[[outcome]]\ntransient = \"connection\"\nforever = true\n").is_empty());
    }

    #[test]
    fn a_permanent_404() {
        for text in [
            "[[outcome]]\nhttp = { status = 404 }\n",
            "[[outcome]]\ntransient = \"timeout\"\n[[outcome]]\npermanent = \"not_found\"\nstatus = 404\n",
        ] {
            assert_eq!(covers(text), ["permanent_404"], "{text}");
        }
        assert!(covers("[[outcome]]\nhttp = { status = 403 }\n").is_empty());
        // Never reached: the data comes first.
        assert!(covers("[[outcome]]\ndata = 1\n[[outcome]]\nhttp = { status = 404 }\n").is_empty());
    }

    #[test]
    fn a_server_wait_over_the_budget() {
        let over = "[[outcome]]\nhttp = { status = 429, headers = { Retry-After = \"30\" } }\n";
        assert_eq!(covers(over), ["server_wait_over_budget"]);
        let within =
            "[[outcome]]\ntransient = \"rate_limited\"\nretry_after = 1.5\n[[outcome]]\ndata = 1\n";
        assert_eq!(covers(within), ["second_call_success"]);
        // A budget raised above the wait.
        let raised = format!("[policy]\nmax_delay = 60.0\n{over}");
        assert!(covers(&raised).is_empty());
    }
}

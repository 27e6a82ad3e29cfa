//! The situations narrow's lesson asks the learner's own scenario files to cover ("Show it
//! works on new inputs"), each recognised in a parsed [`AttemptScenario`]. Their words are
//! in `exercises/narrow/info.toml`, under the same ids.

use super::attempt::Given;
use super::scenario::AttemptScenario;
use crate::scenario::Situation;
use kit_types::{PermanentKind, RequestError};
use serde_json::Value;

/// The lesson's situations, in its order.
pub(crate) const SITUATIONS: &[Situation<AttemptScenario>] = &[
    Situation {
        id: "falsy_success",
        covered_by: falsy_success,
    },
    Situation {
        id: "transient_without_wait",
        covered_by: transient_without_wait,
    },
    Situation {
        id: "malformed_reply",
        covered_by: malformed_reply,
    },
    Situation {
        id: "request_panics",
        covered_by: request_panics,
    },
];

/// A success whose value looks empty: `false`, `0`, `""`, `[]` or `{}`.
fn falsy_success(scenario: &AttemptScenario) -> bool {
    scenario.attempts.iter().any(|g| match g {
        Given::Returns(v) => match v {
            Value::Bool(b) => !b,
            Value::Number(n) => n.as_f64() == Some(0.0),
            Value::String(s) => s.is_empty(),
            Value::Array(a) => a.is_empty(),
            Value::Object(o) => o.is_empty(),
            Value::Null => false,
        },
        _ => false,
    })
}

/// A transient failure with no `retry_after`.
fn transient_without_wait(scenario: &AttemptScenario) -> bool {
    scenario
        .attempts
        .iter()
        .any(|g| matches!(g, Given::Fails(RequestError::Transient(t)) if t.retry_after.is_none()))
}

/// A permanent `malformed_response`.
fn malformed_reply(scenario: &AttemptScenario) -> bool {
    scenario.attempts.iter().any(|g| {
        matches!(g, Given::Fails(RequestError::Permanent(p)) if p.kind == PermanentKind::MalformedResponse)
    })
}

/// A request that panics.
fn request_panics(scenario: &AttemptScenario) -> bool {
    scenario
        .attempts
        .iter()
        .any(|g| matches!(g, Given::Panics(_)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::covered;
    use std::path::Path;

    fn covers(attempts: &str) -> Vec<&'static str> {
        let text = format!("exercise = \"narrow\"\n{attempts}");
        covered(&AttemptScenario::parse(Path::new("s.toml"), &text).unwrap())
    }

    #[test]
    fn each_situation_is_recognised_and_its_near_misses_are_not() {
        assert_eq!(covers("[[attempt]]\nreturns = 0\n"), ["falsy_success"]);
        assert!(covers("[[attempt]]\nreturns = 1\n").is_empty());
        assert_eq!(
            covers("[[attempt]]\ntransient = \"timeout\"\n"),
            ["transient_without_wait"]
        );
        assert!(covers("[[attempt]]\ntransient = \"timeout\"\nretry_after = 0.0\n").is_empty());
        assert_eq!(
            covers("[[attempt]]\npermanent = \"malformed_response\"\n"),
            ["malformed_reply"]
        );
        assert!(covers("[[attempt]]\npermanent = \"not_found\"\n").is_empty());
        assert_eq!(covers("[[attempt]]\npanics = \"x\"\n"), ["request_panics"]);
    }
}

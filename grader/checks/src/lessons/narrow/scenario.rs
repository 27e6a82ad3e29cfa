//! narrow scenario files: attempts handed to `handle_attempt`, each with what its request
//! does.
//!
//! ```toml
//! exercise = "narrow"
//!
//! [[attempt]]                      # one call of handle_attempt, on its own
//! returns = { job_id = "fresh_3" } # the request succeeds with this value (any TOML value)
//!
//! [[attempt]]
//! transient = "rate_limited"       # timeout, connection, server_error, rate_limited
//! retry_after = 3.0                # optional
//!
//! [[attempt]]
//! permanent = "not_found"          # unauthorized, forbidden, not_found, bad_request,
//! status = 404                     #   malformed_response, unexpected; status optional
//! detail = "GET /jobs/3 -> 404"    # optional, on either failure
//!
//! [[attempt]]
//! panics = "the request's own bug" # the request panics with this message
//! ```

use super::attempt::{describe_given, describe_ran, record_all, Given};
use super::Learner;
use crate::panics::is_stub_panic;
use crate::scenario::ScenarioError;
use crate::view::{Field, ScenarioRun};
use kit_types::{PermanentError, PermanentKind, RequestError, TransientError, TransientReason};
use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSpec {
    #[allow(dead_code)]
    // read by the registry to pick this format
    // `lesson = "..."` is read as well: the kit's word for what the key names.
    #[serde(alias = "lesson")]
    exercise: String,
    #[serde(default)]
    attempt: Vec<toml::Spanned<AttemptSpec>>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct AttemptSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    returns: Option<toml::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    transient: Option<TransientReason>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    retry_after: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    permanent: Option<PermanentKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    status: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    detail: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    panics: Option<String>,
}

/// A parsed narrow scenario: its attempts, in order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AttemptScenario {
    /// Each attempt handed to `handle_attempt`.
    pub(crate) attempts: Vec<Given>,
}

impl AttemptScenario {
    /// Parses narrow scenario text; `path` is used in messages only.
    pub(crate) fn parse(path: &Path, text: &str) -> Result<AttemptScenario, ScenarioError> {
        let file: FileSpec =
            toml::from_str(text).map_err(|e| ScenarioError::from_toml(path, text, &e))?;
        if file.attempt.is_empty() {
            return Err(ScenarioError::at(
                path,
                text,
                text.len(),
                "no [[attempt]]: add one, with what its request does (`returns`, `transient`, \
                 `permanent` or `panics`)"
                    .into(),
            ));
        }
        let mut attempts = Vec::new();
        for (i, spanned) in file.attempt.into_iter().enumerate() {
            let at = spanned.span().start;
            let spec = spanned.into_inner();
            let fail = |message: String| {
                ScenarioError::at(path, text, at, format!("attempt {}: {message}", i + 1))
            };
            let kinds = [
                spec.returns.is_some(),
                spec.transient.is_some(),
                spec.permanent.is_some(),
                spec.panics.is_some(),
            ];
            if kinds.iter().filter(|k| **k).count() != 1 {
                return Err(fail(
                    "say what its request does with exactly one of `returns = …`, `transient = \
                     \"…\"`, `permanent = \"…\"` or `panics = \"…\"`"
                        .into(),
                ));
            }
            if spec.retry_after.is_some() && spec.transient.is_none() {
                return Err(fail("`retry_after` goes with `transient` only".into()));
            }
            if spec.status.is_some() && spec.permanent.is_none() {
                return Err(fail("`status` goes with `permanent` only".into()));
            }
            if spec.detail.is_some() && spec.transient.is_none() && spec.permanent.is_none() {
                return Err(fail(
                    "`detail` goes with `transient` or `permanent` only".into(),
                ));
            }
            let detail = spec.detail.clone().unwrap_or_default();
            let given = if let Some(value) = spec.returns {
                let value = serde_json::to_value(value)
                    .map_err(|e| fail(format!("`returns` cannot be JSON: {e}")))?;
                Given::Returns(value)
            } else if let Some(reason) = spec.transient {
                let mut e = TransientError::new(reason).with_detail(detail);
                e.retry_after = spec.retry_after;
                Given::Fails(e.into())
            } else if let Some(kind) = spec.permanent {
                let mut e = PermanentError::new(kind).with_detail(detail);
                e.status = spec.status;
                Given::Fails(e.into())
            } else {
                Given::Panics(spec.panics.unwrap_or_default())
            };
            attempts.push(given);
        }
        Ok(AttemptScenario { attempts })
    }

    /// One line describing what the run uses.
    pub(crate) fn settings(&self) -> String {
        format!(
            "handle_attempt: {} independent attempt(s), each with its own request",
            self.attempts.len()
        )
    }
}

/// `given` as a scenario file, with a comment on top.
pub(crate) fn to_toml(given: &Given, comment: &str) -> String {
    let mut spec = AttemptSpec::default();
    match given {
        Given::Returns(v) => {
            spec.returns = toml::Value::try_from(v).ok().or_else(|| {
                // TOML has no null: a null value is written as its JSON text.
                Some(toml::Value::String(v.to_string()))
            })
        }
        Given::Fails(RequestError::Transient(t)) => {
            spec.transient = Some(t.reason);
            spec.retry_after = t.retry_after;
            spec.detail = (!t.detail.is_empty()).then(|| t.detail.clone());
        }
        Given::Fails(RequestError::Permanent(p)) => {
            spec.permanent = Some(p.kind);
            spec.status = p.status;
            spec.detail = (!p.detail.is_empty()).then(|| p.detail.clone());
        }
        Given::Panics(m) => spec.panics = Some(m.clone()),
    }
    #[derive(Serialize)]
    struct Out {
        exercise: &'static str,
        attempt: Vec<AttemptSpec>,
    }
    crate::scenario::commented_toml(
        comment,
        &Out {
            exercise: "narrow",
            attempt: vec![spec],
        },
    )
}

impl crate::scenario::Format for AttemptScenario {
    type Learner = Learner;

    const SITUATIONS: &'static [crate::scenario::Situation<Self>] = super::situations::SITUATIONS;

    fn parse(path: &Path, text: &str) -> Result<Self, ScenarioError> {
        AttemptScenario::parse(path, text)
    }

    fn settings(&self) -> String {
        AttemptScenario::settings(self)
    }

    fn run(&self, learner: &Learner) -> ScenarioRun {
        run(learner, self)
    }
}

/// Runs every attempt of `scenario` on `learner`, one line per attempt: what the request
/// does · what the handler did. A panic of the request that comes out of the handler is a
/// line like any other (that is the rule); the learner's own panic or `todo!()` ends the run.
pub(crate) fn run(learner: &Learner, scenario: &AttemptScenario) -> ScenarioRun {
    let mut lines = Vec::new();
    let mut ending = None;
    let runs = record_all(learner, &scenario.attempts);
    for (n, (given, ran)) in scenario.attempts.iter().zip(&runs).enumerate() {
        if let Err(panic) = &ran.ended {
            let the_requests = matches!(given, Given::Panics(m) if *m == panic.message);
            if !the_requests {
                ending = Some(if is_stub_panic(&panic.message) {
                    format!(
                        "unfinished: the function reached todo!() ({})",
                        panic.message
                    )
                } else {
                    format!("panicked: {}", panic.message)
                });
                break;
            }
        }
        lines.push(format!(
            "#{} {} · handle_attempt → {}",
            n + 1,
            describe_given(given),
            describe_ran(ran)
        ));
    }
    let finished = ending.is_none();
    ScenarioRun {
        fields: vec![Field::block("attempts", lines)],
        ending: ending.unwrap_or_else(|| format!("ended: {} attempt(s)", scenario.attempts.len())),
        finished,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<AttemptScenario, ScenarioError> {
        AttemptScenario::parse(Path::new("s.toml"), text)
    }

    #[test]
    fn each_kind_of_attempt_parses_and_a_wrong_one_names_its_line() {
        let s = parse(
            "exercise = \"narrow\"\n[[attempt]]\nreturns = { a = 1 }\n[[attempt]]\n\
             transient = \"timeout\"\nretry_after = 1.5\n[[attempt]]\npermanent = \"not_found\"\n\
             status = 404\n[[attempt]]\npanics = \"boom\"\n",
        )
        .unwrap();
        assert_eq!(s.attempts.len(), 4);
        assert_eq!(s.attempts[3], Given::Panics("boom".into()));
        let e =
            parse("exercise = \"narrow\"\n[[attempt]]\nreturns = 1\npanics = \"x\"\n").unwrap_err();
        assert!(
            e.to_string()
                .contains("attempt 1: say what its request does"),
            "{e}"
        );
        let e = parse("exercise = \"narrow\"\n[[attempt]]\nreturns = 1\nstatus = 3\n").unwrap_err();
        assert!(
            e.to_string()
                .contains("`status` goes with `permanent` only"),
            "{e}"
        );
    }

    #[test]
    fn a_case_written_as_a_file_reads_back_as_the_same_case() {
        for given in super::super::exhaustive::cases() {
            if given == Given::Returns(serde_json::Value::Null) {
                continue; // TOML has no null: written as its JSON text
            }
            let text = to_toml(&given, "a case");
            assert_eq!(
                parse(&text).unwrap().attempts,
                vec![given.clone()],
                "{text}"
            );
        }
    }
}

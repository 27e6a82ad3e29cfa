//! build3 scenario files: a learner's own script for one run of `retry_request`.
//!
//! ```toml
//! [policy]                 # optional; missing fields take the defaults
//! max_attempts = 3
//!
//! [[outcome]]              # what request returns on call 1
//! transient = "rate_limited"
//! retry_after = 1.5        # optional server wait; nan, inf and -1 are allowed
//!
//! [[outcome]]              # call 2: data, returned as JSON
//! data = { job_id = "fresh_2" }
//!
//! # Other outcomes:
//! #   permanent = "not_found"   (status = 404 optional)
//! #   http = { status = 429, headers = { Retry-After = "3" }, body = "" }
//! #       (a raw reply, classified by the kit's GET fetcher)
//! # `forever = true` on the last outcome repeats it for every further call.
//! ```
//!
//! A run records every call, wait and event and is rendered as a [`ScenarioRun`].

use super::recording::{describe_error, describe_outcome, record, Callback, Recording, Script};
use super::{Learner, Reply};
use crate::feedback::same_secs;
use crate::panics::{panic_message, CheckFailure};
use crate::scenario::{panic_ending, ScenarioError};
use crate::view::{Field, ScenarioRun};
use kit_types::HttpReply;
use kit_types::{
    PermanentError, PermanentKind, RequestError, RetryAction, RetryEvent, RetryPolicy, StopCause,
    TransientError, TransientReason,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::panic::{self, AssertUnwindSafe};
use std::path::Path;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSpec {
    #[serde(default)]
    #[allow(dead_code)]
    // read by AnyScenario to pick this format
    // `lesson = "..."` is read as well: the kit's word for what the key names.
    #[serde(alias = "lesson")]
    exercise: Option<String>,
    #[serde(default)]
    policy: Option<RetryPolicy>,
    #[serde(default)]
    outcome: Vec<toml::Spanned<OutcomeSpec>>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
struct OutcomeSpec {
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<toml::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    transient: Option<TransientReason>,
    #[serde(skip_serializing_if = "Option::is_none")]
    retry_after: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    permanent: Option<PermanentKind>,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    detail: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    http: Option<HttpSpec>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    forever: bool,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
struct HttpSpec {
    status: u16,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    body: String,
}

/// A parsed scenario: a policy and the script of outcomes.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// The policy (the default when the file has none).
    pub(crate) policy: RetryPolicy,
    /// What `request` returns, call by call.
    pub script: Script,
}

impl Scenario {
    /// One line describing the policy the run uses.
    pub(crate) fn settings(&self) -> String {
        let p = &self.policy;
        format!(
            "policy:  method {:?}, max_attempts {}, base_delay {:?}, max_delay {:?}",
            p.method, p.max_attempts, p.base_delay, p.max_delay
        )
    }

    /// Parses scenario text; `path` is used in error messages only.
    pub fn parse(path: &Path, text: &str) -> Result<Scenario, ScenarioError> {
        let file: FileSpec =
            toml::from_str(text).map_err(|e| ScenarioError::from_toml(path, text, &e))?;
        let (steps, forever) = crate::scenario::outcomes(
            path,
            text,
            file.outcome,
            "request returns on the first call",
            |spec: &OutcomeSpec| spec.forever,
            OutcomeSpec::to_outcome,
        )?;
        Ok(Scenario {
            policy: file.policy.unwrap_or_default(),
            script: Script {
                steps,
                repeat_last: forever,
            },
        })
    }

    /// The scenario as a file [`Scenario::parse`] reads back, with a comment on top.
    pub(crate) fn to_toml(&self, comment: &str) -> String {
        #[derive(Serialize)]
        struct Out<'a> {
            policy: &'a RetryPolicy,
            outcome: Vec<OutcomeSpec>,
        }
        let count = self.script.steps.len();
        let outcome = self
            .script
            .steps
            .iter()
            .enumerate()
            .map(|(i, step)| OutcomeSpec {
                forever: self.script.repeat_last && i + 1 == count,
                ..OutcomeSpec::from_outcome(step)
            })
            .collect();
        crate::scenario::commented_toml(
            comment,
            &Out {
                policy: &self.policy,
                outcome,
            },
        )
    }
}

impl OutcomeSpec {
    fn to_outcome(&self) -> Result<Result<Reply, RequestError>, String> {
        let kinds = [
            self.data.is_some(),
            self.transient.is_some(),
            self.permanent.is_some(),
            self.http.is_some(),
        ];
        match kinds.iter().filter(|k| **k).count() {
            0 => {
                return Err(
                    "say what the call returns: `data`, `transient`, `permanent` or `http`".into(),
                )
            }
            1 => {}
            _ => return Err("give only one of `data`, `transient`, `permanent` and `http`".into()),
        }
        if self.retry_after.is_some() && self.transient.is_none() {
            return Err("`retry_after` goes with `transient`".into());
        }
        if self.status.is_some() && self.permanent.is_none() {
            return Err(
                "`status` goes with `permanent` (an HTTP reply is `http = { status = ... }`)"
                    .into(),
            );
        }
        if self.detail.is_some() && self.transient.is_none() && self.permanent.is_none() {
            return Err("`detail` goes with `transient` or `permanent`".into());
        }
        let detail = self.detail.clone().unwrap_or_default();
        if let Some(data) = &self.data {
            return serde_json::to_value(data)
                .map(Ok)
                .map_err(|e| format!("`data` is not JSON: {e}"));
        }
        if let Some(reason) = self.transient {
            let mut e = TransientError::new(reason).with_detail(detail);
            e.retry_after = self.retry_after;
            return Ok(Err(e.into()));
        }
        if let Some(kind) = self.permanent {
            let mut e = PermanentError::new(kind).with_detail(detail);
            e.status = self.status;
            return Ok(Err(e.into()));
        }
        let http = self.http.clone().unwrap_or_default();
        let reply = HttpReply {
            status: http.status,
            headers: http.headers.into_iter().collect(),
            body: http.body,
        };
        classified(reply)
    }

    fn from_outcome(outcome: &Result<Reply, RequestError>) -> OutcomeSpec {
        match outcome {
            Ok(v) => OutcomeSpec {
                data: Some(
                    toml::Value::try_from(v).unwrap_or_else(|_| toml::Value::String(v.to_string())),
                ),
                ..OutcomeSpec::default()
            },
            Err(RequestError::Transient(t)) => OutcomeSpec {
                transient: Some(t.reason),
                retry_after: t.retry_after,
                ..OutcomeSpec::default()
            },
            Err(RequestError::Permanent(p)) => OutcomeSpec {
                permanent: Some(p.kind),
                status: p.status,
                ..OutcomeSpec::default()
            },
        }
    }
}

/// An event as JSON, keeping a NaN or infinite delay visible as text.
pub(crate) fn event_json(e: &RetryEvent) -> String {
    match e.delay {
        Some(d) if !d.is_finite() => format!(
            r#"{{"attempt":{},"reason":"{}","action":"{}","delay":"{d:?}","cause":{}}}"#,
            e.attempt,
            e.reason,
            e.action,
            e.cause.map_or("null".to_string(), |c| format!("\"{c}\""))
        ),
        // The event's own serialization keeps the documented field order.
        _ => serde_json::to_string(e).unwrap_or_else(|err| format!("<unserializable: {err}>")),
    }
}

impl crate::scenario::Format for Scenario {
    type Learner = Learner;

    const SITUATIONS: &'static [crate::scenario::Situation<Self>] = super::situations::SITUATIONS;

    fn parse(path: &Path, text: &str) -> Result<Self, ScenarioError> {
        Scenario::parse(path, text)
    }

    fn settings(&self) -> String {
        Scenario::settings(self)
    }

    fn run(&self, learner: &Learner) -> ScenarioRun {
        run(learner, self)
    }
}

/// Runs `scenario` against `imp` in this process. Loops are the caller's concern: the grader
/// runs this inside a harness process with a timeout.
pub fn run(imp: &Learner, scenario: &Scenario) -> ScenarioRun {
    let attempt = panic::catch_unwind(AssertUnwindSafe(|| {
        record(imp, &scenario.policy, &scenario.script, None)
    }));
    let (rec, payload) = match attempt {
        Ok(pair) => pair,
        Err(payload) => {
            let message = payload
                .downcast_ref::<CheckFailure>()
                .map(|CheckFailure(m)| m.clone())
                .unwrap_or_else(|| panic_message(payload.as_ref()));
            return ScenarioRun::stopped(format!(
                "error: {message}. Add outcomes, or `forever = true` on the last one."
            ));
        }
    };
    match payload {
        Some(payload) => from_recording(scenario, &rec, panic_ending(payload.as_ref()), false),
        None => render_recorded(scenario, &rec),
    }
}

/// A run of `scenario` already recorded, and not ended by a panic, shown as [`run`] shows
/// it: how the exhaustive check shows the reference's run, which a copy of the kit without
/// the answers reads back from its oracle.
pub(crate) fn render_recorded(scenario: &Scenario, rec: &Recording) -> ScenarioRun {
    let (ending, finished) = match &rec.result {
        Some(Ok(value)) => (format!("returned: {value}"), true),
        Some(Err(e)) => (format!("refused: {} — {e}", describe_error(e)), true),
        None => ("panicked".into(), false),
    };
    from_recording(scenario, rec, ending, finished)
}

/// The run, callback by callback, one line per call of `request`: what it returned, then
/// the event logged (with where its delay came from) and the sleep.
pub(crate) fn steps(scenario: &Scenario, rec: &Recording) -> Vec<String> {
    let policy = &scenario.policy;
    let outcome = |n: usize| {
        let steps = &scenario.script.steps;
        // Call 0 (an event logged before any request) has no outcome.
        n.checked_sub(1).and_then(|i| steps.get(i).or(steps.last()))
    };
    let mut lines: Vec<String> = Vec::new();
    let (mut call, mut event, mut wait) = (0usize, 0usize, 0usize);
    for callback in &rec.order {
        match callback {
            Callback::Request => {
                call += 1;
                let returned = outcome(call).map_or("nothing".into(), describe_outcome);
                lines.push(format!("call {call} → {returned}"));
            }
            Callback::Log => {
                let Some(e) = rec.events.get(event) else {
                    continue;
                };
                event += 1;
                let why = match (e.action, e.delay, e.cause) {
                    (RetryAction::Retry, Some(delay), _) => {
                        // A count the learner's code chose: kept to what a power of two can say.
                        let n = e.attempt.clamp(1, 1024) as i32;
                        let backoff = (policy.base_delay * 2f64.powi(n - 1)).min(policy.max_delay);
                        let server = outcome(call).and_then(|o| match o {
                            Err(RequestError::Transient(t)) => t.retry_after.filter(|w| *w >= 0.0),
                            _ => None,
                        });
                        match server {
                            Some(w) if w > backoff && same_secs(delay, w) => {
                                " (the server's wait, larger than the backoff)".to_string()
                            }
                            _ if same_secs(delay, backoff) => format!(
                                " (the backoff: min({:?}, {:?} × 2^{}))",
                                policy.max_delay,
                                policy.base_delay,
                                n - 1
                            ),
                            _ => format!(" (the backoff would be {backoff:?})"),
                        }
                    }
                    (RetryAction::Stop, _, Some(StopCause::DelayBudget)) => {
                        let server = outcome(call).and_then(|o| match o {
                            Err(RequestError::Transient(t)) => t.retry_after,
                            _ => None,
                        });
                        match server {
                            Some(w) if w > policy.max_delay => format!(
                                " (the server asked for {w:?}, more than max_delay {:?})",
                                policy.max_delay
                            ),
                            Some(w) if w.is_nan() => {
                                " (though a NaN wait is no wait: the rule ignores it)".to_string()
                            }
                            Some(w) if w < 0.0 => {
                                format!(" (though a negative wait ({w:?}) is ignored by the rule)")
                            }
                            Some(w) => format!(
                                " (though the server's wait {w:?} is within max_delay {:?})",
                                policy.max_delay
                            ),
                            None => " (though the server asked for no wait)".to_string(),
                        }
                    }
                    (RetryAction::Stop, _, Some(StopCause::AttemptLimit)) => format!(
                        " (attempt {} of max_attempts {})",
                        e.attempt, policy.max_attempts
                    ),
                    _ => String::new(),
                };
                match lines.last_mut() {
                    Some(line) => line.push_str(&format!(" → log {e}{why}")),
                    None => lines.push(format!("log {e}{why}")),
                }
            }
            Callback::Sleep => {
                let Some(w) = rec.waits.get(wait) else {
                    continue;
                };
                wait += 1;
                match lines.last_mut() {
                    Some(line) => line.push_str(&format!(" → sleep {w:?}")),
                    None => lines.push(format!("sleep {w:?}")),
                }
            }
        }
    }
    lines
}

fn from_recording(
    scenario: &Scenario,
    rec: &Recording,
    ending: String,
    finished: bool,
) -> ScenarioRun {
    let waits: Vec<String> = rec.waits.iter().map(|w| format!("{w:?}")).collect();
    let actions: Vec<String> = rec.events.iter().map(|e| e.action.to_string()).collect();
    ScenarioRun {
        fields: vec![
            Field::block("steps", steps(scenario, rec)),
            Field::line("calls", rec.calls.to_string()),
            Field::line("waits", format!("[{}]", waits.join(", "))),
            Field::line("actions", format!("[{}]", actions.join(", "))),
            Field::block("events", rec.events.iter().map(event_json).collect()),
        ],
        ending,
        finished,
    }
}

/// A raw reply, classified by the kit's GET fetcher (build2's answer).
#[cfg(feature = "answers")]
fn classified(reply: HttpReply) -> Result<Result<Reply, RequestError>, String> {
    Ok(reference::fetch("GET", "https://scenario.invalid/", |_| {
        Ok(reply)
    }))
}

/// A raw reply in a copy of the kit without the answers: build2's fetcher, which classifies
/// it, is not there.
#[cfg(not(feature = "answers"))]
fn classified(_: HttpReply) -> Result<Result<Reply, RequestError>, String> {
    Err(
        "an `http` outcome is classified by the kit's fetcher, which this copy of the kit \
         (made without the answers) does not hold: write the outcome as `data`, `transient` or \
         `permanent` instead"
            .into(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Scenario, ScenarioError> {
        Scenario::parse(Path::new("s.toml"), text)
    }

    /// A stop on a server wait the rule lets through is labelled with why the rule would
    /// not stop: never as a wait over the budget.
    #[test]
    fn a_budget_stop_on_a_wait_that_fits_says_so() {
        use kit_types::{RetryEvent, StopCause, TransientReason};
        for (wait, label) in [
            (
                "0.0",
                "(though the server's wait 0.0 is within max_delay 0.0)",
            ),
            ("nan", "(though a NaN wait is no wait: the rule ignores it)"),
            (
                "-1.0",
                "(though a negative wait (-1.0) is ignored by the rule)",
            ),
            ("0.5", "(the server asked for 0.5, more than max_delay 0.0)"),
        ] {
            let scenario = parse(&format!(
                "[policy]\nbase_delay = 0.0\nmax_delay = 0.0\n\n[[outcome]]\n\
                 transient = \"rate_limited\"\nretry_after = {wait}\n"
            ))
            .unwrap();
            let mut rec = Recording::empty();
            rec.calls = 1;
            rec.order = vec![Callback::Request, Callback::Log];
            rec.events = vec![RetryEvent::stop(
                1,
                TransientReason::RateLimited,
                StopCause::DelayBudget,
            )];
            let lines = steps(&scenario, &rec).join("\n");
            assert!(lines.contains(label), "{wait}: {lines}");
        }
    }

    #[test]
    fn reads_every_kind_of_outcome() {
        let s = parse(
            r#"
[policy]
max_attempts = 5

[[outcome]]
transient = "rate_limited"
retry_after = nan

[[outcome]]
http = { status = 429, headers = { Retry-After = "3" } }

[[outcome]]
permanent = "not_found"
status = 404

[[outcome]]
data = { job_id = "fresh_4", items = [1, 2] }
forever = true
"#,
        )
        .unwrap();
        assert_eq!(s.policy.max_attempts, 5);
        assert!(s.script.repeat_last);
        let Err(RequestError::Transient(t)) = &s.script.steps[0] else {
            panic!()
        };
        assert!(t.retry_after.unwrap().is_nan());
        let Err(RequestError::Transient(t)) = &s.script.steps[1] else {
            panic!()
        };
        assert_eq!(
            (t.reason, t.retry_after),
            (TransientReason::RateLimited, Some(3.0))
        );
        assert_eq!(
            s.script.steps[3],
            Ok(serde_json::json!({"job_id": "fresh_4", "items": [1, 2]}))
        );
    }

    #[test]
    fn errors_name_line_column_and_key() {
        let e = parse("[[outcome]]\ntransient = \"server_error\"\nwait = 3\n").unwrap_err();
        assert_eq!((e.line, e.column), (3, 1), "{e}");
        assert!(e.message.contains("unknown field `wait`"), "{e}");
        assert!(e.to_string().starts_with("s.toml:3:1: "), "{e}");

        let e = parse("[[outcome]]\ntransient = \"server_eror\"\n").unwrap_err();
        assert_eq!(e.line, 2, "{e}");

        let e = parse("[[outcome]]\ndata = 1\n\n[[outcome]]\ntransient = \"timeout\"\ndata = 2\n")
            .unwrap_err();
        assert_eq!(e.line, 4, "{e}");
        assert!(e.message.starts_with("outcome 2: give only one"), "{e}");

        let e = parse("[policy]\nretries = 3\n[[outcome]]\ndata = 1\n").unwrap_err();
        assert_eq!(e.line, 2, "{e}");

        let e =
            parse("[[outcome]]\ndata = 1\nforever = true\n[[outcome]]\ndata = 2\n").unwrap_err();
        assert!(
            e.message
                .contains("`forever` only goes on the last outcome"),
            "{e}"
        );

        assert!(parse("").unwrap_err().message.contains("no [[outcome]]"));
    }

    #[test]
    fn files_written_read_back_the_same() {
        let s = Scenario {
            policy: RetryPolicy {
                base_delay: f64::INFINITY,
                ..RetryPolicy::default()
            },
            script: Script {
                steps: vec![
                    Err(TransientError::new(TransientReason::Timeout)
                        .with_retry_after(f64::NEG_INFINITY)
                        .into()),
                    Err(PermanentError::new(PermanentKind::Forbidden)
                        .with_status(403)
                        .into()),
                    Ok(serde_json::json!({"job_id": "x"})),
                ],
                repeat_last: true,
            },
        };
        let text = s.to_toml("a comment\nover two lines");
        assert!(
            text.starts_with("# a comment\n# over two lines\n"),
            "{text}"
        );
        let back = parse(&text).unwrap();
        assert_eq!(back.script, s.script);
        assert!(back.policy.base_delay.is_infinite());
    }
}

//! Scenario files: a learner's own script for one run of `retry_request`.
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
//! A run records every call, wait and event; [`ScenarioRun`] is that record rendered
//! for people, and it is what the harness process sends back.

use crate::harness::panic_message;
use crate::outcome::is_stub_panic;
use crate::recording::{describe_error, record, CheckFailure, Recording, Script};
use crate::{Implementation, Reply};
use reference::fetch::{fetch, HttpReply};
use reference::{
    PermanentError, PermanentKind, RequestError, RetryEvent, RetryPolicy, TransientError,
    TransientReason,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// A scenario file that could not be used, with the place to look.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("{}:{line}:{column}: {message}", path.display())]
pub struct ScenarioError {
    /// The file.
    pub path: PathBuf,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is wrong, naming the key.
    pub message: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSpec {
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
    pub policy: RetryPolicy,
    /// What `request` returns, call by call.
    pub script: Script,
}

fn position(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

impl Scenario {
    /// Reads and checks a scenario file.
    pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
        let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
            path: path.to_path_buf(),
            line: 1,
            column: 1,
            message: format!("cannot read the file: {e}"),
        })?;
        Scenario::parse(path, &text)
    }

    /// Parses scenario text; `path` is used in error messages only.
    pub fn parse(path: &Path, text: &str) -> Result<Scenario, ScenarioError> {
        let error = |offset: usize, message: String| {
            let (line, column) = position(text, offset);
            ScenarioError {
                path: path.to_path_buf(),
                line,
                column,
                message,
            }
        };
        let file: FileSpec = toml::from_str(text).map_err(|e| {
            let offset = e.span().map_or(0, |s| s.start);
            error(offset, e.message().trim_end().to_string())
        })?;
        if file.outcome.is_empty() {
            return Err(error(
                text.len(),
                "no [[outcome]]: add what request returns on the first call".into(),
            ));
        }
        let count = file.outcome.len();
        let mut steps = Vec::with_capacity(count);
        let mut forever = false;
        for (i, spanned) in file.outcome.into_iter().enumerate() {
            let at = spanned.span().start;
            let spec = spanned.into_inner();
            let n = i + 1;
            if spec.forever && n != count {
                return Err(error(
                    at,
                    format!("outcome {n}: `forever` only goes on the last outcome"),
                ));
            }
            forever = spec.forever;
            steps.push(
                spec.to_outcome()
                    .map_err(|m| error(at, format!("outcome {n}: {m}")))?,
            );
        }
        Ok(Scenario {
            policy: file.policy.unwrap_or_default(),
            script: Script {
                steps,
                repeat_last: forever,
            },
        })
    }

    /// The scenario as a file [`Scenario::parse`] reads back, with a comment on top.
    pub fn to_toml(&self, comment: &str) -> String {
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
        let body = toml::to_string(&Out {
            policy: &self.policy,
            outcome,
        })
        .unwrap_or_else(|e| format!("# could not write this scenario: {e}\n"));
        let header: String = comment.lines().map(|l| format!("# {l}\n")).collect();
        format!("{header}{body}")
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
        Ok(fetch("GET", "https://scenario.invalid/", |_| Ok(reply)))
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

/// One run of a scenario, rendered for people. Floats are text, so NaN and infinity survive
/// the trip from the harness process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScenarioRun {
    /// How many times `request` was called.
    pub calls: u32,
    /// Each planned wait `sleep` received.
    pub waits: Vec<String>,
    /// Each event, as one JSON object.
    pub events: Vec<String>,
    /// The events' actions, in order.
    pub actions: Vec<String>,
    /// `returned: …`, `refused: …`, `panicked: …`, `unfinished: …` or `error: …`.
    pub ending: String,
}

/// An event as JSON, keeping a NaN or infinite delay visible as text.
pub fn event_json(e: &RetryEvent) -> String {
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

impl ScenarioRun {
    fn from_recording(rec: &Recording, ending: String) -> ScenarioRun {
        ScenarioRun {
            calls: rec.calls,
            waits: rec.waits.iter().map(|w| format!("{w:?}")).collect(),
            events: rec.events.iter().map(event_json).collect(),
            actions: rec.events.iter().map(|e| e.action.to_string()).collect(),
            ending,
        }
    }

    /// Whether the function returned (a value or a refusal), rather than panicking, reaching
    /// `todo!()` or running out of script.
    pub fn finished(&self) -> bool {
        self.ending.starts_with("returned: ") || self.ending.starts_with("refused: ")
    }

    /// The run as printed by `grader scenario`: one fact per line, events one per line.
    pub fn render(&self) -> Vec<String> {
        let mut lines = vec![
            format!("calls:   {}", self.calls),
            format!("waits:   [{}]", self.waits.join(", ")),
            format!("actions: [{}]", self.actions.join(", ")),
            "events:".to_string(),
        ];
        if self.events.is_empty() {
            lines.push("  (none)".into());
        }
        lines.extend(self.events.iter().map(|e| format!("  {e}")));
        lines.push(self.ending.clone());
        lines
    }
}

/// Two runs field by field: a field both runs agree on is shown once; a field where they
/// differ is marked `≠` and shows each run's value, one under the other.
///
/// ```
/// use grader::scenario::{side_by_side, ScenarioRun};
/// let run = |calls| ScenarioRun { calls, waits: vec![], events: vec![], actions: vec![], ending: "returned: 1".into() };
/// let text = side_by_side(("yours", &run(2)), ("reference", &run(1)));
/// assert!(text.contains("≠ calls\n    yours:     2\n    reference: 1\n"));
/// assert!(text.contains("  waits: [] (same)"));
/// ```
pub fn side_by_side(left: (&str, &ScenarioRun), right: (&str, &ScenarioRun)) -> String {
    let (a, b) = (left.1, right.1);
    let width = left.0.len().max(right.0.len()) + 1;
    let mut out = String::new();
    let mut field = |name: &str, x: Vec<String>, y: Vec<String>| {
        let one_line = |v: &[String]| v.len() == 1;
        if x == y {
            match x.as_slice() {
                [single] => out.push_str(&format!("  {name}: {single} (same)\n")),
                _ => {
                    out.push_str(&format!("  {name} (same):\n"));
                    x.iter().for_each(|l| out.push_str(&format!("      {l}\n")));
                }
            }
            return;
        }
        out.push_str(&format!("≠ {name}\n"));
        for (label, lines) in [(left.0, &x), (right.0, &y)] {
            let label = format!("{label}:");
            if one_line(lines) {
                out.push_str(&format!("    {label:width$} {}\n", lines[0]));
            } else {
                out.push_str(&format!(
                    "    {label}{}\n",
                    if lines.is_empty() { " (none)" } else { "" }
                ));
                lines
                    .iter()
                    .for_each(|l| out.push_str(&format!("      {l}\n")));
            }
        }
    };
    field(
        "calls",
        vec![a.calls.to_string()],
        vec![b.calls.to_string()],
    );
    field(
        "waits",
        vec![format!("[{}]", a.waits.join(", "))],
        vec![format!("[{}]", b.waits.join(", "))],
    );
    field(
        "actions",
        vec![format!("[{}]", a.actions.join(", "))],
        vec![format!("[{}]", b.actions.join(", "))],
    );
    field("events", a.events.clone(), b.events.clone());
    field("result", vec![a.ending.clone()], vec![b.ending.clone()]);
    out
}

/// Runs `scenario` against `imp` in this process. Loops are the caller's concern: the grader
/// runs this inside a harness process with a timeout.
pub fn run(imp: &Implementation, scenario: &Scenario) -> ScenarioRun {
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
            let ending =
                format!("error: {message}. Add outcomes, or `forever = true` on the last one.");
            return ScenarioRun {
                calls: scenario.script.steps.len() as u32 + 1,
                waits: Vec::new(),
                events: Vec::new(),
                actions: Vec::new(),
                ending,
            };
        }
    };
    let ending = match (&rec.result, payload) {
        (_, Some(payload)) => {
            let message = panic_message(payload.as_ref());
            if is_stub_panic(&message) {
                format!("unfinished: the function reached todo!() ({message})")
            } else {
                format!("panicked: {message}")
            }
        }
        (Some(Ok(value)), None) => format!("returned: {value}"),
        (Some(Err(e)), None) => format!("refused: {} — {e}", describe_error(e)),
        (None, None) => "panicked".into(),
    };
    ScenarioRun::from_recording(&rec, ending)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Scenario, ScenarioError> {
        Scenario::parse(Path::new("s.toml"), text)
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

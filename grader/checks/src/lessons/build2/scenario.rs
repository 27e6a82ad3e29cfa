//! build2 scenario files: calls of `fetch`, each with what its transport does.
//!
//! ```toml
//! exercise = "build2"
//!
//! [[call]]                 # one call of fetch, on its own
//! method = "GET"           # optional: GET
//! url = "https://api.example/jobs/3"   # optional
//! reply = { status = 429, headers = [["Retry-After", "3"]], body = "" }
//!
//! [[call]]
//! transport = "timeout"    # or "connection": no reply at all
//! ```
//!
//! `headers` is a list of `[name, value]` pairs, in the order the server sent them (a name
//! may come twice), or a table (`headers = { Retry-After = "3" }`).

use super::call::{describe_exchange, describe_result, record, Call, Exchange, URL};
use super::Learner;
use crate::scenario::{panic_ending, ScenarioError};
use crate::view::{Field, ScenarioRun};
use kit_types::{HttpReply, TransportFailure};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
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
    call: Vec<toml::Spanned<CallSpec>>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct CallSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    method: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reply: Option<ReplySpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    transport: Option<TransportFailure>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReplySpec {
    status: u16,
    #[serde(default)]
    headers: Headers,
    #[serde(default)]
    body: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
enum Headers {
    Pairs(Vec<(String, String)>),
    Table(BTreeMap<String, String>),
}

impl Default for Headers {
    fn default() -> Self {
        Headers::Pairs(Vec::new())
    }
}

impl Headers {
    fn pairs(&self) -> Vec<(String, String)> {
        match self {
            Headers::Pairs(p) => p.clone(),
            Headers::Table(t) => t.clone().into_iter().collect(),
        }
    }
}

/// A parsed build2 scenario: its calls, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchScenario {
    /// Each call of `fetch`.
    pub(crate) calls: Vec<Call>,
}

impl FetchScenario {
    /// Parses build2 scenario text; `path` is used in messages only.
    pub fn parse(path: &Path, text: &str) -> Result<FetchScenario, ScenarioError> {
        let file: FileSpec =
            toml::from_str(text).map_err(|e| ScenarioError::from_toml(path, text, &e))?;
        if file.call.is_empty() {
            return Err(ScenarioError::at(
                path,
                text,
                text.len(),
                "no [[call]]: add one, with the transport's `reply` or `transport` failure".into(),
            ));
        }
        let mut calls = Vec::new();
        for (i, spanned) in file.call.into_iter().enumerate() {
            let at = spanned.span().start;
            let spec = spanned.into_inner();
            let exchange = match (spec.reply, spec.transport) {
                (Some(r), None) => {
                    let mut reply = HttpReply::new(r.status, r.body);
                    reply.headers = r.headers.pairs();
                    Exchange::Reply(reply)
                }
                (None, Some(f)) => Exchange::Fails(f),
                (None, None) => {
                    return Err(ScenarioError::at(
                        path,
                        text,
                        at,
                        format!(
                            "call {}: say what the transport does: `reply = {{ status = … }}` or \
                             `transport = \"timeout\"`",
                            i + 1
                        ),
                    ))
                }
                (Some(_), Some(_)) => {
                    return Err(ScenarioError::at(
                        path,
                        text,
                        at,
                        format!("call {}: give `reply` or `transport`, not both", i + 1),
                    ))
                }
            };
            calls.push(Call {
                method: spec.method.unwrap_or_else(|| "GET".into()),
                url: spec.url.unwrap_or_else(|| URL.into()),
                exchange,
            });
        }
        Ok(FetchScenario { calls })
    }

    /// One line describing what the run uses.
    pub(crate) fn settings(&self) -> String {
        format!(
            "fetch:   {} independent call(s), each with its own transport",
            self.calls.len()
        )
    }
}

/// `call` as a scenario file, with a comment on top.
pub(crate) fn to_toml(call: &Call, comment: &str) -> String {
    let spec = CallSpec {
        method: Some(call.method.clone()),
        url: Some(call.url.clone()),
        reply: match &call.exchange {
            Exchange::Reply(r) => Some(ReplySpec {
                status: r.status,
                headers: Headers::Pairs(r.headers.clone()),
                body: r.body.clone(),
            }),
            Exchange::Fails(_) => None,
        },
        transport: match &call.exchange {
            Exchange::Fails(f) => Some(*f),
            Exchange::Reply(_) => None,
        },
    };
    #[derive(Serialize)]
    struct Out {
        exercise: &'static str,
        call: Vec<CallSpec>,
    }
    crate::scenario::commented_toml(
        comment,
        &Out {
            exercise: "build2",
            call: vec![spec],
        },
    )
}

impl crate::scenario::Format for FetchScenario {
    type Learner = Learner;

    const SITUATIONS: &'static [crate::scenario::Situation<Self>] = super::situations::SITUATIONS;

    fn parse(path: &Path, text: &str) -> Result<Self, ScenarioError> {
        FetchScenario::parse(path, text)
    }

    fn settings(&self) -> String {
        FetchScenario::settings(self)
    }

    fn run(&self, learner: &Learner) -> ScenarioRun {
        run(learner, self)
    }
}

/// Runs every call of `scenario` on `learner`, in this process, one line per call:
/// the arguments → what the transport did → what fetch returned.
pub fn run(learner: &Learner, scenario: &FetchScenario) -> ScenarioRun {
    let mut lines = Vec::new();
    let mut ending = None;
    for (n, call) in scenario.calls.iter().enumerate() {
        match record(learner, call) {
            Ok(rec) => {
                let transport = match rec.transport_calls.len() {
                    0 => "transport not called".to_string(),
                    1 => format!("transport {}", describe_exchange(&call.exchange)),
                    k => format!("transport called {k} times"),
                };
                lines.push(format!(
                    "#{} fetch({:?}, {:?}) → {transport} → {}",
                    n + 1,
                    call.method,
                    call.url,
                    describe_result(&rec.result)
                ));
            }
            Err(payload) => {
                ending = Some(panic_ending(payload.as_ref()));
                break;
            }
        }
    }
    let finished = ending.is_none();
    ScenarioRun {
        fields: vec![Field::block("calls", lines)],
        ending: ending.unwrap_or_else(|| format!("ended: {} call(s)", scenario.calls.len())),
        finished,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<FetchScenario, ScenarioError> {
        FetchScenario::parse(Path::new("f.toml"), text)
    }

    #[test]
    fn the_settings_line_and_the_run_name_nothing_twice() {
        let s = parse("exercise = \"build2\"\n[[call]]\nreply = { status = 503 }\n").unwrap();
        let run = run(&super::super::reference(), &s);
        let settings = s.settings();
        for field in &run.fields {
            assert!(
                !settings.starts_with(&format!("{}:", field.name)),
                "{settings:?} and the run's {:?}",
                field.name
            );
        }
    }

    #[test]
    fn reads_every_kind_of_call_and_writes_it_back() {
        let s = parse(
            "exercise = \"build2\"\n\
             [[call]]\nreply = { status = 429, headers = [[\"Retry-After\", \"3\"], [\"retry-after\", \"4\"]] }\n\
             [[call]]\nmethod = \"POST\"\nurl = \"https://x.test/\"\ntransport = \"connection\"\n\
             [[call]]\nreply = { status = 200, headers = { Retry-After = \"1\" }, body = '{\"a\":1}' }\n",
        )
        .unwrap();
        assert_eq!(s.calls.len(), 3);
        let Exchange::Reply(r) = &s.calls[0].exchange else {
            panic!()
        };
        assert_eq!(r.headers.len(), 2);
        assert_eq!(s.calls[1].method, "POST");
        let text = to_toml(&s.calls[0], "a case");
        let back = parse(&text).unwrap();
        assert_eq!(back.calls[0], s.calls[0]);
        let run = run(&super::super::reference(), &s);
        let lines = run.render().join("\n");
        assert!(
            lines.contains("→ transient rate_limited, retry_after 3.0"),
            "{lines}"
        );
        assert!(
            lines.contains("transport not called → permanent bad_request, no status"),
            "{lines}"
        );
    }

    #[test]
    fn errors_point_at_the_call() {
        let e = parse("exercise = \"build2\"\n[[call]]\nmethod = \"GET\"\n").unwrap_err();
        assert_eq!(e.line, 2, "{e}");
        assert!(
            e.message.starts_with("call 1: say what the transport does"),
            "{e}"
        );
        let e = parse("exercise = \"build2\"\n[[call]]\nreply = { status = 200, bdy = \"\" }\n")
            .unwrap_err();
        assert!(e.message.contains("unknown field `bdy`"), "{e}");
        assert!(parse("exercise = \"build2\"\n")
            .unwrap_err()
            .message
            .contains("no [[call]]"));
    }
}

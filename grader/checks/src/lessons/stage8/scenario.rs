//! stage8 scenario files: lookups through a gateway whose provider is scripted.
//!
//! ```toml
//! exercise = "stage8"
//!
//! [gateway]                # optional; missing fields take the kit's defaults
//! deadline = 1.0
//!
//! [[lookup]]               # optional; the default is one lookup of "bike-7"
//! item = "bike-7"
//! after = 0.0              # seconds the fake clock moves before this lookup
//!
//! [[outcome]]              # the provider's first call
//! http = { status = 503, headers = { Retry-After = "3600" } }
//! latency = 0.3            # optional: seconds the attempt takes
//!
//! [[outcome]]              # the second call
//! transport = "timeout"    # or "connection"
//!
//! [[outcome]]              # the third: a 200 with the declared body for the item asked
//! available = true
//! forever = true           # repeat it for every further call
//! ```

use super::gateway::{Observed, Reply, Script};
use super::Learner;
use crate::panics::CheckFailure;
use crate::scenario::{panic_ending, ScenarioError};
use crate::view::{Field, ScenarioRun};
use kit_types::gateway::fakes::Step;
use kit_types::{GatewayConfig, ProviderReply, TransportFailure};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::panic::{self, AssertUnwindSafe};
use std::path::Path;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSpec {
    #[allow(dead_code)]
    // read by AnyScenario to pick this format
    // `lesson = "..."` is read as well: the kit's word for what the key names.
    #[serde(alias = "lesson")]
    exercise: String,
    #[serde(default)]
    gateway: Option<toml::Spanned<GatewayConfig>>,
    #[serde(default)]
    lookup: Vec<LookupSpec>,
    #[serde(default)]
    outcome: Vec<toml::Spanned<OutcomeSpec>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LookupSpec {
    item: String,
    #[serde(default)]
    after: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OutcomeSpec {
    #[serde(default)]
    http: Option<HttpSpec>,
    #[serde(default)]
    transport: Option<TransportFailure>,
    #[serde(default)]
    available: Option<bool>,
    #[serde(default)]
    latency: f64,
    #[serde(default)]
    forever: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HttpSpec {
    status: u16,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    body: String,
}

/// A parsed stage8 scenario.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GatewayScenario {
    /// The gateway's configuration.
    pub(crate) config: GatewayConfig,
    /// The lookups, in order: item and the seconds the clock moves before it.
    pub(crate) lookups: Vec<(String, f64)>,
    /// What the provider does, call by call.
    pub(super) replies: Vec<Reply>,
    /// The last reply repeats for every further call.
    pub(super) forever: bool,
}

impl GatewayScenario {
    /// A scenario of `lookups` (item, seconds the clock moves first) on a gateway of
    /// `config` whose provider answers call n with `replies[n - 1]` (at least one), and
    /// past them with the last again when `forever`.
    pub(crate) fn new(
        config: GatewayConfig,
        lookups: Vec<(String, f64)>,
        replies: Vec<Reply>,
        forever: bool,
    ) -> GatewayScenario {
        GatewayScenario {
            config,
            lookups,
            replies,
            forever,
        }
    }

    /// The scenario as a file [`parse`](GatewayScenario::parse) reads back as it is, with
    /// `comment` (one or more lines) at the top.
    pub(crate) fn to_toml(&self, comment: &str) -> String {
        let mut out = String::new();
        for line in comment.lines() {
            out.push_str(&format!("# {line}\n"));
        }
        out.push_str("exercise = \"stage8\"\n\n[gateway]\n");
        let c = &self.config;
        out.push_str(&format!(
            "deadline = {:?}\nmax_attempts = {}\nattempt_timeout = {:?}\nbase_delay = {:?}\n\
             max_delay = {:?}\nfailure_threshold = {}\nopen_for = {:?}\n",
            c.deadline,
            c.max_attempts,
            c.attempt_timeout,
            c.base_delay,
            c.max_delay,
            c.failure_threshold,
            c.open_for
        ));
        for (item, after) in &self.lookups {
            out.push_str(&format!(
                "\n[[lookup]]\nitem = {}\nafter = {after:?}\n",
                toml_string(item)
            ));
        }
        let last = self.replies.len().saturating_sub(1);
        let first_item = self
            .lookups
            .first()
            .map_or("bike-7", |(item, _)| item.as_str());
        for (i, reply) in self.replies.iter().enumerate() {
            out.push_str("\n[[outcome]]\n");
            let latency = match reply {
                Reply::Available { available, latency } => {
                    out.push_str(&format!("available = {available}\n"));
                    *latency
                }
                // The declared answer for the item looked up reads as `available`.
                Reply::Step(step) if answer_for(step, first_item).is_some() => {
                    let available = answer_for(step, first_item).unwrap_or_default();
                    out.push_str(&format!("available = {available}\n"));
                    step.latency
                }
                Reply::Step(step) => {
                    match &step.reply {
                        Ok(r) => {
                            let mut fields = vec![format!("status = {}", r.status)];
                            if let Some(ra) = &r.retry_after {
                                fields.push(format!(
                                    "headers = {{ Retry-After = {} }}",
                                    toml_string(ra)
                                ));
                            }
                            if !r.body.is_empty() {
                                fields.push(format!("body = {}", toml_string(&r.body)));
                            }
                            out.push_str(&format!("http = {{ {} }}\n", fields.join(", ")));
                        }
                        Err(f) => out.push_str(&format!("transport = \"{f}\"\n")),
                    }
                    step.latency
                }
            };
            if latency != 0.0 {
                out.push_str(&format!("latency = {latency:?}\n"));
            }
            if i == last && self.forever {
                out.push_str("forever = true\n");
            }
        }
        out
    }

    /// One line describing the gateway's configuration.
    pub(crate) fn settings(&self) -> String {
        format!("gateway: {}", super::config_line(&self.config))
    }

    /// Parses stage8 scenario text; `path` is used in messages only.
    pub(crate) fn parse(path: &Path, text: &str) -> Result<GatewayScenario, ScenarioError> {
        let error = |offset: usize, message: String| ScenarioError::at(path, text, offset, message);
        let file: FileSpec =
            toml::from_str(text).map_err(|e| ScenarioError::from_toml(path, text, &e))?;
        let config = match file.gateway {
            Some(spanned) => {
                let at = spanned.span().start;
                let config = spanned.into_inner();
                config
                    .validate()
                    .map_err(|e| error(at, format!("[gateway]: {e}")))?;
                config
            }
            None => GatewayConfig::default(),
        };
        let (replies, forever) = crate::scenario::outcomes(
            path,
            text,
            file.outcome,
            "the provider does on its first call",
            |spec: &OutcomeSpec| spec.forever,
            OutcomeSpec::to_reply,
        )?;
        let lookups = if file.lookup.is_empty() {
            vec![("bike-7".to_string(), 0.0)]
        } else {
            file.lookup.into_iter().map(|l| (l.item, l.after)).collect()
        };
        Ok(GatewayScenario {
            config,
            lookups,
            replies,
            forever,
        })
    }
}

/// `Some(available)` when `step` is the declared 200 of `item` that `available = …` makes:
/// its body exactly, no Retry-After.
fn answer_for(step: &Step, item: &str) -> Option<bool> {
    let r = step.reply.as_ref().ok()?;
    [true, false].into_iter().find(|available| {
        r.retry_after.is_none()
            && r.status == 200
            && Step::available(item, *available).reply.as_ref().ok() == Some(r)
    })
}

/// `text` as a TOML basic string.
fn toml_string(text: &str) -> String {
    toml::Value::String(text.to_string()).to_string()
}

impl OutcomeSpec {
    fn to_reply(&self) -> Result<Reply, String> {
        let given = [
            self.http.is_some(),
            self.transport.is_some(),
            self.available.is_some(),
        ];
        match given.iter().filter(|g| **g).count() {
            0 => {
                return Err("say what the provider does: `http`, `transport` or `available`".into())
            }
            1 => {}
            _ => return Err("give only one of `http`, `transport` and `available`".into()),
        }
        if !(self.latency.is_finite() && self.latency >= 0.0) {
            return Err("`latency` is a number of seconds, at least 0".into());
        }
        if let Some(available) = self.available {
            return Ok(Reply::Available {
                available,
                latency: self.latency,
            });
        }
        let step = match (&self.http, self.transport) {
            (Some(http), _) => {
                let retry_after = http
                    .headers
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case("retry-after"))
                    .map(|(_, v)| v.clone());
                Step::reply(ProviderReply {
                    status: http.status,
                    body: http.body.clone(),
                    retry_after,
                })
            }
            (None, Some(failure)) => Step::fail(failure),
            (None, None) => unreachable!("one of the three was checked above"),
        };
        Ok(Reply::Step(step.taking(self.latency)))
    }
}

impl crate::scenario::Format for GatewayScenario {
    type Learner = Learner;

    const SITUATIONS: &'static [crate::scenario::Situation<Self>] = super::situations::SITUATIONS;

    fn parse(path: &Path, text: &str) -> Result<Self, ScenarioError> {
        GatewayScenario::parse(path, text)
    }

    fn settings(&self) -> String {
        GatewayScenario::settings(self)
    }

    fn run(&self, learner: &Learner) -> ScenarioRun {
        run(learner, self)
    }
}

/// Runs the scenario's lookups on `imp`, in this process, and tells each step: every
/// provider call with its timeout and reply, every sleep, how the lookup ended, the breaker
/// and the counters after it.
pub(crate) fn run(imp: &Learner, scenario: &GatewayScenario) -> ScenarioRun {
    let script = Script::Outcomes {
        replies: scenario.replies.clone(),
        forever: scenario.forever,
    };
    let gateway = match Observed::start(imp, scenario.config.clone(), script) {
        Ok(g) => g,
        Err(e) => return ScenarioRun::stopped(format!("error: {e}")),
    };
    let mut lines = Vec::new();
    let mut steps = Vec::new();
    let mut ending = None;
    for (n, (item, after)) in scenario.lookups.iter().enumerate() {
        gateway.advance(*after);
        let start = gateway.now();
        let (calls_before, sleeps_before) = (gateway.calls().len(), gateway.sleeps().len());
        steps.push(format!(
            "lookup {} of {item:?} at t={start:.3}; breaker {:?}",
            n + 1,
            gateway.breaker()
        ));
        let result = panic::catch_unwind(AssertUnwindSafe(|| gateway.lookup(item)));
        steps.extend(timeline(&gateway, calls_before, sleeps_before));
        match result {
            Ok(lookup) => {
                let counters = gateway.counters();
                steps.push(format!(
                    "  → {}, {}; breaker {:?}; counters logical_lookups {}, attempts {}",
                    lookup.outcome,
                    crate::feedback::plural(u64::from(lookup.attempts), "attempt"),
                    gateway.breaker(),
                    counters.logical_lookups,
                    counters.attempts
                ));
                lines.push(format!(
                    "#{} {item} at t={start:.3}: {}, {}",
                    n + 1,
                    lookup.outcome,
                    crate::feedback::plural(u64::from(lookup.attempts), "attempt")
                ));
            }
            Err(payload) => {
                ending = Some(match payload.downcast_ref::<CheckFailure>() {
                    Some(CheckFailure(m)) => {
                        format!("error: {m}. Add outcomes, or `forever = true` on the last one.")
                    }
                    None => panic_ending(payload.as_ref()),
                });
                break;
            }
        }
    }
    let finished = ending.is_none();
    let mut fields = vec![Field::block("steps", steps), Field::block("lookups", lines)];
    // The steps show every call and sleep; the totals follow.
    fields.extend(
        observed_fields(&gateway)
            .into_iter()
            .filter(|f| f.name == "counters" || f.name == "breaker"),
    );
    ScenarioRun {
        fields,
        ending: ending.unwrap_or_else(|| format!("ended: clock at t={:.3}", gateway.now())),
        finished,
    }
}

/// The calls and sleeps of one lookup (those after the first `calls_before` and
/// `sleeps_before`), in the order they happened.
fn timeline(gateway: &Observed, calls_before: usize, sleeps_before: usize) -> Vec<String> {
    let answers = gateway.answers();
    let mut events: Vec<(u64, String)> = Vec::new();
    for call in gateway.calls().iter().skip(calls_before) {
        let reply = answers
            .get(call.number as usize - 1)
            .map_or("?".to_string(), |step| answer(step, call.timeout));
        events.push((
            call.seq,
            format!(
                "  t={:.3} call {} (timeout {:.3}) → {reply}",
                call.at, call.number, call.timeout
            ),
        ));
    }
    for sleep in gateway.sleeps().iter().skip(sleeps_before) {
        events.push((
            sleep.seq,
            format!("  t={:.3} sleep {:?}", sleep.at, sleep.secs),
        ));
    }
    events.sort_by_key(|(seq, _)| *seq);
    events.into_iter().map(|(_, line)| line).collect()
}

/// What one call got, every field: `503, Retry-After "3600"`, `200 {"item_id":…}`, or the
/// transport's failure (a reply slower than the timeout is a timeout).
fn answer(step: &Step, timeout: f64) -> String {
    if step.latency > timeout {
        return format!("timeout (the reply would take {} s)", step.latency);
    }
    let took = if step.latency > 0.0 {
        format!(" after {} s", step.latency)
    } else {
        String::new()
    };
    match &step.reply {
        Ok(r) => {
            let mut text = r.status.to_string();
            if let Some(ra) = &r.retry_after {
                text.push_str(&format!(", Retry-After {ra:?}"));
            }
            if !r.body.is_empty() {
                text.push_str(&format!(" {}", r.body));
            }
            format!("{text}{took}")
        }
        Err(f) => format!("transport {f}{took}"),
    }
}

/// What a gateway saw: every provider call with its timeout, every sleep, the counters and
/// the breaker.
pub(crate) fn observed_fields(gateway: &Observed) -> Vec<Field> {
    let calls: Vec<String> = gateway
        .calls()
        .iter()
        .map(|c| format!("t={:.3} {} timeout {:.3}", c.at, c.item_id, c.timeout))
        .collect();
    let sleeps: Vec<String> = gateway
        .sleeps()
        .iter()
        .map(|s| format!("{:?} at t={:.3}", s.secs, s.at))
        .collect();
    let counters = gateway.counters();
    vec![
        Field::block("provider calls", calls),
        Field::line("sleeps", format!("[{}]", sleeps.join(", "))),
        Field::line(
            "counters",
            format!(
                "logical_lookups {}, attempts {}",
                counters.logical_lookups, counters.attempts
            ),
        ),
        Field::line("breaker", format!("{:?}", gateway.breaker())),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<GatewayScenario, ScenarioError> {
        GatewayScenario::parse(Path::new("g.toml"), text)
    }

    #[test]
    fn the_fixture_runs_on_the_reference() {
        let s = parse(
            "exercise = \"stage8\"\n[[outcome]]\nhttp = { status = 503 }\n[[outcome]]\nhttp = { status = 503 }\n\
             [[outcome]]\navailable = true\n",
        )
        .unwrap();
        let run = run(&super::super::reference(), &s);
        let text = run.render().join("\n");
        assert!(
            text.contains("#1 bike-7 at t=0.000: Available(available = true), 3 attempts"),
            "{text}"
        );
        assert!(
            text.contains("counters: logical_lookups 1, attempts 3"),
            "{text}"
        );
        assert!(
            text.contains("    t=0.000 sleep 0.05\n    t=0.050 call 2 (timeout 0.400) → 503\n"),
            "{text}"
        );
        assert!(run.finished());
    }

    #[test]
    fn errors_point_at_the_place() {
        let e = parse(
            "exercise = \"stage8\"\n[gateway]\nmax_attempts = 9\n[[outcome]]\navailable = true\n",
        )
        .unwrap_err();
        assert_eq!(e.line, 2, "{e}");
        assert!(e.message.contains("max_attempts = 9"), "{e}");
        let e = parse("exercise = \"stage8\"\n[[outcome]]\nstatus = 503\n").unwrap_err();
        assert_eq!(e.line, 3, "{e}");
        assert!(e.message.contains("unknown field `status`"), "{e}");
    }

    #[test]
    fn a_scenario_written_out_reads_back_the_same() {
        let s = parse(
            "exercise = \"stage8\"\n[gateway]\ndeadline = 2.0\nopen_for = 0.0\n\
             [[lookup]]\nitem = \"bike-7\"\n[[lookup]]\nitem = \"bike-7\"\nafter = 0.5\n\
             [[outcome]]\nhttp = { status = 504, headers = { Retry-After = \"0.5\" } }\n\
             [[outcome]]\ntransport = \"connection\"\nlatency = 0.25\n\
             [[outcome]]\nhttp = { status = 200, body = \"{}\" }\n\
             [[outcome]]\navailable = false\nlatency = 10.0\nforever = true\n",
        )
        .unwrap();
        let text = s.to_toml("a comment\non two lines");
        assert!(text.starts_with("# a comment\n# on two lines\n"), "{text}");
        assert_eq!(parse(&text).unwrap(), s, "{text}");
    }

    #[test]
    fn running_out_of_outcomes_is_an_error_line() {
        let s = parse("exercise = \"stage8\"\n[[outcome]]\nhttp = { status = 503 }\n").unwrap();
        let run = run(&super::super::reference(), &s);
        assert!(!run.finished());
        assert!(
            run.ending
                .starts_with("error: the provider was called 2 times"),
            "{}",
            run.ending
        );
    }
}

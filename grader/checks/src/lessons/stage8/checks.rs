//! stage8: `lookup_availability`. Every fact the course fixes, and the kit's decisions.
//!
//! Each check builds a gateway on a scripted provider and a fake clock (nothing really
//! sleeps), runs the learner's lookups, and compares outcomes, attempts, provider calls,
//! sleeps, counters and the breaker with `exercises/stage8/lesson.md`. A failure shows
//! the gateway's configuration and the provider's script, what the learner's lookups did,
//! what the rule expects, and where they first part. Last, an exhaustive comparison with the
//! reference ([`super::exhaustive`]) covers what the named checks sample.

use super::gateway::{pattern, pattern_step, Observed, Script};
use super::scenario::observed_fields;
use super::Learner;
use crate::feedback::every_case;
use crate::feedback::{same_waits, Feedback};
use crate::lesson::CheckResult;
use crate::view::Field;
use kit_types::gateway::fakes::Step;
use kit_types::{
    Availability, BreakerState, Failure, FailureCode, GatewayConfig, Lookup, Outcome,
    ProviderReply, TransportFailure,
};

crate::checks! { Learner;
    facts::fixture_503_503_200,
    facts::transient_failures_are_retried,
    facts::rate_limited_is_never_retried,
    facts::not_found_is_missing,
    facts::integration_rejections,
    facts::unexpected_statuses,
    facts::invalid_payloads,
    facts::extra_fields_are_ignored,
    facts::at_most_max_attempts,
    budget::attempt_timeout_shrinks_with_the_budget,
    budget::sleeps_end_before_the_deadline,
    budget::a_pause_that_reaches_the_deadline_ends_the_lookup,
    budget::long_retry_after_never_extends_the_deadline,
    budget::deadline_shorter_than_first_backoff,
    retry_after::a_retry_after_that_fits_is_honoured,
    retry_after::the_longer_of_backoff_and_retry_after,
    retry_after::only_delay_seconds_count,
    breaker::open_breaker_rejects_without_calling_the_provider,
    breaker::exhaustion_is_one_failure,
    breaker::unhealthy_failures_count,
    breaker::missing_and_rejections_do_not_count,
    breaker::rejections_do_not_reset_the_count,
    breaker::half_open_lets_exactly_one_probe,
    breaker::failed_probe_opens_again,
    breaker::rejected_probe_does_not_close_the_breaker,
    no_fallback::failed_lookups_are_never_available,
    counters::concurrent_lookups_add_up,
    exhaustive::matches_reference_on_every_case => 60 s,
}

// ---------- building blocks ----------

const ITEM: &str = "bike-7";

/// A gateway whose provider answers call n with `steps[n-1]`, then the last step for ever.
fn gateway(learner: &Learner, config: GatewayConfig, steps: Vec<Step>) -> Observed {
    scripted(learner, config, Script::Sequence(steps))
}

/// A gateway whose provider answers by `script`.
fn scripted(learner: &Learner, config: GatewayConfig, script: Script) -> Observed {
    Observed::start(learner, config, script).expect("the checks' configs are valid")
}

fn config(f: impl FnOnce(&mut GatewayConfig)) -> GatewayConfig {
    let mut c = GatewayConfig::default();
    f(&mut c);
    c
}

fn failed(code: FailureCode) -> Outcome {
    Outcome::Failed(Failure::new(code))
}

fn available(flag: bool) -> Outcome {
    Outcome::Available(Availability {
        item_id: ITEM.into(),
        available: flag,
    })
}

fn body_reply(body: &str) -> Step {
    Step::reply(ProviderReply {
        status: 200,
        body: body.into(),
        retry_after: None,
    })
}

fn lookup(g: &Observed) -> Lookup {
    g.lookup(ITEM)
}

/// One step of a provider script, every field: `503, Retry-After "3600", after 0.3 s`.
fn describe_step(s: &Step) -> String {
    let what = match &s.reply {
        Ok(r) => {
            let mut t = r.status.to_string();
            if let Some(ra) = &r.retry_after {
                t.push_str(&format!(", Retry-After {ra:?}"));
            }
            if r.status == 200 || !r.body.is_empty() {
                t.push_str(&format!(", body {:?}", r.body));
            }
            t
        }
        Err(f) => format!("transport {f}"),
    };
    if s.latency > 0.0 {
        format!("{what}, after {} s", s.latency)
    } else {
        what
    }
}

/// The script as the input section shows it: call 1 → …, then the last one for every
/// further call.
fn script_lines(steps: &[Step]) -> Vec<String> {
    let mut lines: Vec<String> = steps
        .iter()
        .enumerate()
        .map(|(i, s)| format!("call {} → {}", i + 1, describe_step(s)))
        .collect();
    lines.push("every later call → the same as the last".into());
    lines
}

/// The input of a check: the configuration, the provider's script, the lookups made.
fn input(cfg: &GatewayConfig, script: Vec<String>, lookups: &str) -> Vec<Field> {
    vec![
        Field::line("gateway", super::config_line(cfg)),
        Field::block("provider", script),
        Field::line("lookups", lookups),
    ]
}

/// What a gateway saw: every provider call, sleep, the counters, the breaker, the clock.
fn saw(g: &Observed) -> Vec<Field> {
    let mut fields = observed_fields(g);
    fields.push(Field::line("clock", format!("t={:.3}", g.now())));
    fields
}

fn lookup_line(n: usize, l: &Lookup) -> String {
    format!(
        "#{n} → {}, {}",
        l.outcome,
        crate::feedback::plural(u64::from(l.attempts), "attempt")
    )
}

/// Several lookups in a row, each with the breaker's state after it.
fn run_lookups(g: &Observed, n: usize) -> Vec<(Lookup, BreakerState)> {
    (0..n)
        .map(|_| {
            let l = lookup(g);
            (l, g.breaker())
        })
        .collect()
}

fn lookups_field(runs: &[(Lookup, BreakerState)]) -> Field {
    Field::block(
        "lookups",
        runs.iter()
            .enumerate()
            .map(|(i, (l, b))| format!("{}; breaker after: {b:?}", lookup_line(i + 1, l)))
            .collect(),
    )
}

/// One lookup on a fresh gateway: outcome, attempts, provider calls, counters and sleeps as
/// the rule says.
fn expect_single(
    learner: &Learner,
    cfg: GatewayConfig,
    steps: Vec<Step>,
    outcome: Outcome,
    attempts: u32,
    sleeps: &[f64],
    rule: &str,
) -> CheckResult {
    let g = gateway(learner, cfg.clone(), steps.clone());
    let got = lookup(&g);
    let slept: Vec<f64> = g.sleeps().iter().map(|s| s.secs).collect();
    let counters = g.counters();
    let calls = g.calls().len();
    let fields =
        |outcome: &Outcome, attempts: u32, calls: usize, lookups: u64, all: u64, sleeps: &[f64]| {
            vec![
                Field::line("outcome", outcome.to_string()),
                Field::line("attempts", attempts.to_string()),
                Field::line("calls to the provider", calls.to_string()),
                Field::line(
                    "counters",
                    format!("logical_lookups {lookups}, attempts {all}"),
                ),
                Field::line("sleeps", crate::feedback::fmt_secs(sleeps)),
            ]
        };
    let did = fields(
        &got.outcome,
        got.attempts,
        calls,
        counters.logical_lookups,
        counters.attempts,
        &slept,
    );
    let want = fields(
        &outcome,
        attempts,
        attempts as usize,
        1,
        u64::from(attempts),
        sleeps,
    );
    let summary = if got.outcome != outcome {
        format!(
            "the lookup ended {}; the rule expects {outcome}.",
            got.outcome
        )
    } else if got.attempts != attempts {
        format!(
            "the lookup reported {} attempt(s); the rule expects {attempts}.",
            got.attempts
        )
    } else if calls != attempts as usize {
        format!(
            "the provider was called {calls} time(s) but the lookup reported {} attempt(s): \
             count every call, and only calls.",
            got.attempts
        )
    } else if (counters.logical_lookups, counters.attempts) != (1, u64::from(attempts)) {
        format!(
            "the counters read logical_lookups {}, attempts {}; the rule expects 1 and {attempts}.",
            counters.logical_lookups, counters.attempts
        )
    } else if !same_waits(&slept, sleeps) {
        format!(
            "the clock slept {}; the rule expects {}.",
            crate::feedback::fmt_secs(&slept),
            crate::feedback::fmt_secs(sleeps)
        )
    } else {
        return Ok(());
    };
    // An answer the provider never gave is made up, whatever else the check is about.
    let answered = steps
        .iter()
        .any(|s| matches!(&s.reply, Ok(r) if r.status == 200));
    let why = match &got.outcome {
        Outcome::Available(_) if !answered => {
            "No fallback ever invents an answer: the provider never answered 200 here, so the \
             lookup is Failed with a local status and a code."
        }
        _ => rule,
    };
    let mut did = did;
    did.extend(
        saw(&g)
            .into_iter()
            .filter(|f| f.name != "counters" && f.name != "sleeps"),
    );
    Err(Feedback::new(summary, why)
        .input(input(
            &cfg,
            script_lines(&steps),
            "one lookup of \"bike-7\" at t=0",
        ))
        .did(did)
        .expected(want)
        .first_difference()
        .render())
}

fn ensure(ok: bool, what: impl FnOnce() -> String) -> CheckResult {
    if ok {
        Ok(())
    } else {
        Err(what())
    }
}

// ---------- the checks ----------

mod facts {
    use super::*;

    pub(crate) fn fixture_503_503_200(learner: &Learner) -> CheckResult {
        expect_single(
            learner,
            GatewayConfig::default(),
            vec![
                Step::status(503),
                Step::status(503),
                Step::available(ITEM, true),
            ],
            available(true),
            3,
            &[0.05, 0.1],
            "503, 503, 200: one logical lookup of three attempts, available. Count attempts in \
             the lookup and globally; count the lookup once.",
        )
    }

    pub(crate) fn transient_failures_are_retried(learner: &Learner) -> CheckResult {
        let firsts = [
            Step::fail(TransportFailure::Timeout),
            Step::fail(TransportFailure::Connection),
            Step::status(502),
            Step::status(503),
            Step::status(504),
        ];
        every_case(firsts.into_iter().map(|first| {
            expect_single(
                learner,
                GatewayConfig::default(),
                vec![first, Step::available(ITEM, false)],
                available(false),
                2,
                &[0.05],
                "Timeouts, connection failures and 502/503/504 get another attempt while the \
                 budget allows.",
            )
        }))
    }

    pub(crate) fn rate_limited_is_never_retried(learner: &Learner) -> CheckResult {
        let headers = [None, Some("0"), Some("1"), Some("3600"), Some("soon")];
        every_case(headers.into_iter().map(|h| {
            let step = match h {
                Some(v) => Step::status(429).with_retry_after(v),
                None => Step::status(429),
            };
            expect_single(
                learner,
                GatewayConfig::default(),
                vec![step, Step::available(ITEM, true)],
                failed(FailureCode::ProviderRateLimited),
                1,
                &[],
                "429 ends the lookup after one attempt with 503 provider_rate_limited, whatever \
                 Retry-After says: no retry, no sleep.",
            )
        }))
    }

    pub(crate) fn not_found_is_missing(learner: &Learner) -> CheckResult {
        expect_single(
            learner,
            GatewayConfig::default(),
            vec![Step::status(404), Step::available(ITEM, true)],
            Outcome::Missing,
            1,
            &[],
            "404 is a reachable, missing record: Missing after one attempt, not a failure.",
        )
    }

    pub(crate) fn integration_rejections(learner: &Learner) -> CheckResult {
        every_case([400, 401, 403].into_iter().map(|s| {
            expect_single(
                learner,
                GatewayConfig::default(),
                vec![Step::status(s), Step::available(ITEM, true)],
                failed(FailureCode::IntegrationRejected),
                1,
                &[],
                "400/401/403 mean the integration is wrong: 502 integration_rejected, one attempt.",
            )
        }))
    }

    pub(crate) fn unexpected_statuses(learner: &Learner) -> CheckResult {
        every_case([500, 501, 418, 301, 201, 204].into_iter().map(|s| {
            expect_single(
                learner,
                GatewayConfig::default(),
                vec![Step::status(s), Step::available(ITEM, true)],
                failed(FailureCode::UnexpectedResponse),
                1,
                &[],
                "500 and any status the contract does not list: 502 unexpected_response, no retry.",
            )
        }))
    }

    pub(crate) fn invalid_payloads(learner: &Learner) -> CheckResult {
        let bodies = [
            "",
            "not json",
            "[true]",
            r#"["bike-7", true]"#,
            r#"[{"item_id":"bike-7","available":true}]"#,
            r#"{"item_id":"bike-7"}"#,
            r#"{"item_id":"bike-7","available":"yes"}"#,
            r#"{"item_id":"bike-8","available":true}"#,
        ];
        every_case(bodies.into_iter().map(|body| {
            expect_single(
                learner,
                GatewayConfig::default(),
                vec![body_reply(body), Step::available(ITEM, true)],
                failed(FailureCode::InvalidPayload),
                1,
                &[],
                "A 200's declared body is a JSON object: {\"item_id\": <the item asked for>, \
                 \"available\": <bool>}. Anything else — an array, even one holding the right \
                 values — is 502 invalid_payload, not retried.",
            )
        }))
    }

    pub(crate) fn extra_fields_are_ignored(learner: &Learner) -> CheckResult {
        let bodies = [
            r#"{"item_id":"bike-7","available":true,"station":"north"}"#,
            r#"{"station":{"id":3},"available":true,"item_id":"bike-7","seen":[1,2]}"#,
        ];
        every_case(bodies.into_iter().map(|body| {
            expect_single(
                learner,
                GatewayConfig::default(),
                vec![body_reply(body)],
                available(true),
                1,
                &[],
                "A 200's declared body holds \"item_id\" and \"available\"; other fields are \
                 ignored, wherever they stand. Refusing a body for a field you do not read \
                 turns an answer into invalid_payload.",
            )
        }))
    }

    pub(crate) fn at_most_max_attempts(learner: &Learner) -> CheckResult {
        every_case(
            [
                (1, vec![]),
                (3, vec![0.05, 0.1]),
                (5, vec![0.05, 0.1, 0.2, 0.2]),
            ]
            .into_iter()
            .map(|(m, sleeps)| {
                expect_single(
                    learner,
                    config(|c| {
                        c.max_attempts = m;
                        c.deadline = 10.0;
                    }),
                    vec![Step::status(503)],
                    failed(FailureCode::ProviderUnavailable),
                    m,
                    &sleeps,
                    "A lookup makes at most max_attempts attempts, the first one included; then \
                     503 provider_unavailable.",
                )
            }),
        )
    }
}

mod budget {
    use super::*;

    pub(crate) fn attempt_timeout_shrinks_with_the_budget(learner: &Learner) -> CheckResult {
        // Every attempt times out: 0.4 + 0.05 + 0.4 + 0.1 leaves 0.05 for the third.
        let cfg = GatewayConfig::default();
        let steps = vec![Step::available(ITEM, true).taking(10.0)];
        let g = gateway(learner, cfg.clone(), steps.clone());
        let got = lookup(&g);
        let timeouts: Vec<f64> = g.calls().iter().map(|c| c.timeout).collect();
        let want = [0.4, 0.4, 0.05];
        if same_waits(&timeouts, &want) && got.outcome == failed(FailureCode::ProviderUnavailable) {
            return Ok(());
        }
        let mut did = vec![
            Field::line("attempt timeouts", crate::feedback::fmt_secs(&timeouts)),
            Field::line("outcome", got.outcome.to_string()),
        ];
        did.extend(saw(&g));
        Err(Feedback::new(
            format!(
                "the attempts were given {}; the rule expects {}.",
                crate::feedback::fmt_secs(&timeouts),
                crate::feedback::fmt_secs(&want)
            ),
            "Each attempt's timeout is the smaller of attempt_timeout and what is left of the \
             deadline: 0.4, then 0.4 after 0.45 s, then only 0.05 after 0.95 s.",
        )
        .input(input(&cfg, script_lines(&steps), "one lookup at t=0"))
        .did(did)
        .expected(vec![
            Field::line("attempt timeouts", crate::feedback::fmt_secs(&want)),
            Field::line(
                "outcome",
                failed(FailureCode::ProviderUnavailable).to_string(),
            ),
        ])
        .first_difference()
        .render())
    }

    /// Every sleep and attempt of the lookup ended by `deadline`.
    fn within_deadline(
        g: &Observed,
        cfg: &GatewayConfig,
        steps: &[Step],
        deadline: f64,
    ) -> CheckResult {
        let end = deadline + 1e-9;
        let fail = |summary: String| {
            Err(Feedback::new(
                summary,
                "A sleep never runs past the deadline, and no attempt is given time beyond it: \
                 when the pause does not fit, end the lookup instead.",
            )
            .input(input(cfg, script_lines(steps), "one lookup at t=0"))
            .did(saw(g))
            .render())
        };
        for s in g.sleeps() {
            if s.at + s.secs > end {
                return fail(format!(
                    "a sleep of {} s at t={:.3} ends at t={:.3}, past the deadline t={deadline:.3}.",
                    s.secs,
                    s.at,
                    s.at + s.secs
                ));
            }
        }
        for c in g.calls() {
            if c.at + c.timeout > end {
                return fail(format!(
                    "an attempt at t={:.3} was given {:.3} s, past the deadline t={deadline:.3}.",
                    c.at, c.timeout
                ));
            }
        }
        if g.now() > end {
            return fail(format!(
                "the lookup ended at t={:.3}, after its deadline t={deadline:.3}.",
                g.now()
            ));
        }
        Ok(())
    }

    pub(crate) fn sleeps_end_before_the_deadline(learner: &Learner) -> CheckResult {
        let cases = [
            (GatewayConfig::default(), Step::status(503).taking(0.3)),
            (
                config(|c| {
                    c.deadline = 0.5;
                    c.max_attempts = 5;
                    c.base_delay = 0.2;
                    c.max_delay = 0.2;
                }),
                Step::status(502).taking(0.1),
            ),
            (
                config(|c| {
                    c.deadline = 0.3;
                    c.max_attempts = 5;
                    c.attempt_timeout = 1.0;
                }),
                Step::fail(TransportFailure::Connection).taking(0.12),
            ),
        ];
        every_case(cases.into_iter().map(|(cfg, step)| {
            let steps = vec![step];
            let g = gateway(learner, cfg.clone(), steps.clone());
            let got = lookup(&g);
            within_deadline(&g, &cfg, &steps, cfg.deadline)?;
            if got.outcome == failed(FailureCode::ProviderUnavailable) {
                return Ok(());
            }
            Err(Feedback::new(
                format!(
                    "the lookup ended {}; the rule expects Failed(503 provider_unavailable).",
                    got.outcome
                ),
                "Retryable failures that use up the budget end as provider_unavailable.",
            )
            .input(input(&cfg, script_lines(&steps), "one lookup at t=0"))
            .did(saw(&g))
            .render())
        }))
    }

    pub(crate) fn a_pause_that_reaches_the_deadline_ends_the_lookup(
        learner: &Learner,
    ) -> CheckResult {
        // Sleeping until exactly the deadline leaves nothing for the next attempt: the pause
        // "reaches" the deadline, and the lookup ends without sleeping (now + pause >= deadline).
        every_case([
            // A pause longer than what is left: never shortened to fit.
            expect_single(
                learner,
                config(|c| {
                    c.deadline = 0.3;
                    c.base_delay = 0.2;
                    c.max_delay = 0.2;
                }),
                vec![Step::status(503).taking(0.2), Step::available(ITEM, true)],
                failed(FailureCode::ProviderUnavailable),
                1,
                &[],
                "A pause that does not fit ends the lookup: 0.2 + 0.2 > 0.3, so no sleep at all. \
                 Never shorten the pause to fit what is left (a 0.1 s sleep, then an attempt \
                 with nothing left): end the lookup instead.",
            ),
            expect_single(
                learner,
                config(|c| {
                    c.deadline = 0.25;
                    c.base_delay = 0.25;
                    c.max_delay = 0.25;
                }),
                vec![Step::status(503), Step::available(ITEM, true)],
                failed(FailureCode::ProviderUnavailable),
                1,
                &[],
                "A pause that reaches the deadline ends the lookup: 0 + 0.25 >= 0.25, so no sleep \
                 and no attempt with 0 s left. Compare with >=, not >.",
            ),
            expect_single(
                learner,
                config(|c| {
                    c.deadline = 0.3;
                    c.base_delay = 0.1;
                    c.max_delay = 0.1;
                }),
                vec![Step::status(503).taking(0.2), Step::available(ITEM, true)],
                failed(FailureCode::ProviderUnavailable),
                1,
                &[],
                "A pause that reaches the deadline ends the lookup: 0.2 + 0.1 >= 0.3, so no sleep \
                 and no attempt with 0 s left. Compare with >=, not >.",
            ),
        ])
    }

    pub(crate) fn long_retry_after_never_extends_the_deadline(learner: &Learner) -> CheckResult {
        let steps = vec![Step::status(503).with_retry_after("3600")];
        let result = expect_single(
            learner,
            GatewayConfig::default(),
            vec![
                Step::status(503).with_retry_after("3600"),
                Step::available(ITEM, true),
            ],
            failed(FailureCode::ProviderUnavailable),
            1,
            &[],
            "The provider asked for 3600 s; the lookup has 1 s in all. A long suggested wait \
             ends the lookup: never sleep it, never shorten it to fit.",
        );
        let cfg = GatewayConfig::default();
        let g = gateway(learner, cfg.clone(), steps.clone());
        lookup(&g);
        result.and(within_deadline(&g, &cfg, &steps, 1.0))
    }

    pub(crate) fn deadline_shorter_than_first_backoff(learner: &Learner) -> CheckResult {
        expect_single(
            learner,
            config(|c| c.deadline = 0.03),
            vec![Step::status(503), Step::available(ITEM, true)],
            failed(FailureCode::ProviderUnavailable),
            1,
            &[],
            "The deadline (0.03 s) is shorter than the first backoff (0.05 s): stop after one \
             attempt, without sleeping.",
        )
    }
}

mod retry_after {
    use super::*;

    /// A budget long enough for a 2 s wait.
    fn five_seconds() -> GatewayConfig {
        config(|c| c.deadline = 5.0)
    }

    pub(crate) fn a_retry_after_that_fits_is_honoured(learner: &Learner) -> CheckResult {
        every_case(["2", " 2\t"].into_iter().map(|value| {
            expect_single(
                learner,
                five_seconds(),
                vec![
                    Step::status(503).with_retry_after(value),
                    Step::available(ITEM, true),
                ],
                available(true),
                2,
                &[2.0],
                "A 502/503/504 whose Retry-After fits the deadline is retried after waiting that \
                 long: the provider said when to come back (here 2 s of a 5 s budget). Only a \
                 wait that reaches the deadline ends the lookup; one that fits never does.",
            )
        }))
    }

    pub(crate) fn the_longer_of_backoff_and_retry_after(learner: &Learner) -> CheckResult {
        // Retry-After 0 is shorter than every backoff here: the backoff is slept.
        every_case([
            expect_single(
                learner,
                five_seconds(),
                vec![
                    Step::status(503).with_retry_after("0"),
                    Step::available(ITEM, true),
                ],
                available(true),
                2,
                &[0.05],
                "The pause is the longer of the backoff and the provider's Retry-After: a \
                 Retry-After of 0 is shorter than the first backoff (0.05 s), so the lookup \
                 sleeps 0.05 s. Take max(backoff, retry_after), not the Retry-After in its place.",
            ),
            expect_single(
                learner,
                five_seconds(),
                vec![
                    Step::status(502).with_retry_after("0"),
                    Step::status(504).with_retry_after("0"),
                    Step::available(ITEM, true),
                ],
                available(true),
                3,
                &[0.05, 0.1],
                "The pause is the longer of the backoff and the provider's Retry-After: each \
                 Retry-After of 0 is shorter than its backoff (0.05 s, then 0.1 s). Take \
                 max(backoff, retry_after), not the Retry-After in its place.",
            ),
        ])
    }

    pub(crate) fn only_delay_seconds_count(learner: &Learner) -> CheckResult {
        let values = [
            "0.5",
            "1.5",
            "+1",
            "-1",
            "1e0",
            "0x10",
            "NaN",
            "inf",
            "Wed, 21 Oct 2015 07:28:00 GMT",
        ];
        every_case(values.into_iter().map(|value| {
            expect_single(
                learner,
                five_seconds(),
                vec![
                    Step::status(503).with_retry_after(value),
                    Step::available(ITEM, true),
                ],
                available(true),
                2,
                &[0.05],
                "A Retry-After counts only in delay-seconds: ASCII digits, with nothing but \
                 spaces and tabs around them. Anything else (a fraction, a sign, an exponent, a \
                 date) is no Retry-After at all, and the backoff alone sets the pause.",
            )
        }))
    }
}

mod breaker {
    use super::*;

    /// A failure of a breaker check: the script, every lookup with the breaker after it,
    /// what the rule expects, and why.
    fn breaker_failure(
        summary: String,
        why: &str,
        script: Vec<String>,
        what: &str,
        runs: &[(Lookup, BreakerState)],
        g: &Observed,
        expected: Vec<Field>,
    ) -> String {
        let mut did = vec![lookups_field(runs)];
        did.extend(saw(g));
        Feedback::new(summary, why)
            .input(input(g.config(), script, what))
            .did(did)
            .expected(expected)
            .render()
    }

    /// Opens the breaker with three exhausted lookups; on a wrong state, says after which
    /// lookup it went wrong (a breaker told once per attempt opens after the first).
    fn open_it(g: &Observed) -> Result<Vec<(Lookup, BreakerState)>, String> {
        let mut runs = Vec::new();
        for n in 1..=3u32 {
            let l = lookup(g);
            let state = g.breaker();
            runs.push((l, state));
            let want = if n < 3 {
                format!("Closed {{ failures: {n} }}")
            } else {
                "Open { until: … }".to_string()
            };
            let right = match state {
                BreakerState::Closed { failures } => n < 3 && failures == n,
                BreakerState::Open { .. } => n == 3,
                BreakerState::HalfOpen { .. } => false,
            };
            if !right {
                return Err(breaker_failure(
                    format!(
                        "after {n} exhausted lookup(s) of 3 attempts each the breaker is {state:?}; \
                         the rule expects {want}."
                    ),
                    "The breaker counts failed lookups, not attempts: tell it once, when the \
                     lookup ends (record_failure for an unhealthy failure). Three in a row open it.",
                    script_lines(&[Step::status(503)]),
                    "three lookups of \"bike-7\", each at the time the last one ended",
                    &runs,
                    g,
                    vec![Field::line("breaker after lookup", want)],
                ));
            }
        }
        Ok(runs)
    }

    pub(crate) fn open_breaker_rejects_without_calling_the_provider(
        learner: &Learner,
    ) -> CheckResult {
        let g = gateway(learner, GatewayConfig::default(), vec![Step::status(503)]);
        let mut runs = open_it(&g)?;
        let calls = g.calls().len();
        let before = g.counters();
        let rejected = lookup(&g);
        let after = g.counters();
        runs.push((rejected.clone(), g.breaker()));
        let extra_calls = g.calls().len() - calls;
        let ok = rejected.outcome == failed(FailureCode::BreakerOpen)
            && rejected.attempts == 0
            && extra_calls == 0
            // Counts the runner reported: never arithmetic that can overflow on them.
            && before.logical_lookups.checked_add(1) == Some(after.logical_lookups)
            && after.attempts == before.attempts;
        ensure(ok, || {
            breaker_failure(
                format!(
                    "with the breaker open, the 4th lookup ended {} with {} attempt(s) and {} \
                     provider call(s); counters went from {before:?} to {after:?}.",
                    rejected.outcome, rejected.attempts, extra_calls
                ),
                "An open breaker rejects the lookup before any attempt: Failed(503 breaker_open), \
                 0 attempts, no provider call — and it is still one logical lookup: count it.",
                script_lines(&[Step::status(503)]),
                "four lookups of \"bike-7\" in a row",
                &runs,
                &g,
                vec![
                    Field::line("lookup 4", "Failed(503 breaker_open), 0 attempt(s)"),
                    Field::line("provider calls by lookup 4", "0"),
                    Field::line("counters", "logical_lookups + 1, attempts unchanged"),
                ],
            )
        })
    }

    pub(crate) fn exhaustion_is_one_failure(learner: &Learner) -> CheckResult {
        let g = gateway(learner, GatewayConfig::default(), vec![Step::status(503)]);
        open_it(&g).map(|_| ())
    }

    pub(crate) fn unhealthy_failures_count(learner: &Learner) -> CheckResult {
        let steps = [
            Step::status(429),
            Step::status(500),
            Step::status(200),
            Step::fail(TransportFailure::Timeout),
        ];
        every_case(steps.into_iter().map(|step| {
            let g = gateway(learner, GatewayConfig::default(), vec![step.clone()]);
            let runs = run_lookups(&g, 3);
            ensure(matches!(g.breaker(), BreakerState::Open { .. }), || {
                breaker_failure(
                    format!(
                        "three lookups ending on {} left the breaker {:?}; the rule expects Open.",
                        describe_step(&step),
                        g.breaker()
                    ),
                    "provider_unavailable, provider_rate_limited, unexpected_response and \
                         invalid_payload each count as one failed lookup: record_failure once, \
                         when the lookup ends.",
                    script_lines(std::slice::from_ref(&step)),
                    "three lookups of \"bike-7\" in a row",
                    &runs,
                    &g,
                    vec![Field::line("breaker after lookup 3", "Open { until: … }")],
                )
            })
        }))
    }

    pub(crate) fn missing_and_rejections_do_not_count(learner: &Learner) -> CheckResult {
        // Lookups 1, 2, 4 and 5 fail fast (one 429 each); lookup 3 finds nothing.
        let g = scripted(
            learner,
            GatewayConfig::default(),
            Script::Numbered {
                number: 3,
                then: Step::status(404),
                otherwise: Step::status(429),
            },
        );
        let runs = run_lookups(&g, 5);
        let script = vec![
            "calls 1, 2, 4, 5 → 429".to_string(),
            "call 3 → 404".to_string(),
        ];
        let first = ensure(g.breaker() == BreakerState::Closed { failures: 2 }, || {
            breaker_failure(
                    format!(
                        "five lookups (rate-limited, rate-limited, missing, rate-limited, \
                         rate-limited) left the breaker {:?}; the rule expects Closed {{ failures: 2 }}.",
                        g.breaker()
                    ),
                    "Missing is an answer: record_success, which resets the count. Then two \
                     failures in a row.",
                    script,
                    "five lookups of \"bike-7\" in a row",
                    &runs,
                    &g,
                    vec![Field::line("breaker after lookup 5", "Closed { failures: 2 }")],
                )
        });
        let g = gateway(learner, GatewayConfig::default(), vec![Step::status(403)]);
        let runs = run_lookups(&g, 5);
        let second = ensure(g.breaker() == BreakerState::Closed { failures: 0 }, || {
            breaker_failure(
                format!(
                    "five integration rejections (403) left the breaker {:?}; the rule \
                         expects Closed {{ failures: 0 }}.",
                    g.breaker()
                ),
                "A rejection says the integration is wrong, not that the provider is \
                     unhealthy: it is not a failure for the breaker (record_neutral).",
                script_lines(&[Step::status(403)]),
                "five lookups of \"bike-7\" in a row",
                &runs,
                &g,
                vec![Field::line(
                    "breaker after each lookup",
                    "Closed { failures: 0 }",
                )],
            )
        });
        every_case([first, second])
    }

    pub(crate) fn rejections_do_not_reset_the_count(learner: &Learner) -> CheckResult {
        // fail, fail, 400, fail: the rejection neither counts nor resets, so three failures
        // in a row have been seen and the breaker opens.
        let g = scripted(
            learner,
            GatewayConfig::default(),
            Script::Numbered {
                number: 3,
                then: Step::status(400),
                otherwise: Step::status(429),
            },
        );
        let runs = run_lookups(&g, 4);
        ensure(matches!(g.breaker(), BreakerState::Open { .. }), || {
            breaker_failure(
                format!(
                    "lookups ending rate-limited, rate-limited, integration_rejected, \
                     rate-limited left the breaker {:?}; the rule expects Open.",
                    g.breaker()
                ),
                "A rejection says nothing about the provider's health: it neither counts as a \
                 failure nor resets the count. Tell the breaker nothing (record_neutral), not \
                 record_success.",
                vec!["calls 1, 2, 4 → 429".into(), "call 3 → 400".into()],
                "four lookups of \"bike-7\" in a row",
                &runs,
                &g,
                vec![
                    Field::line("breaker after lookup 3", "Closed { failures: 2 }"),
                    Field::line("breaker after lookup 4", "Open { until: … }"),
                ],
            )
        })
    }

    pub(crate) fn half_open_lets_exactly_one_probe(learner: &Learner) -> CheckResult {
        let g = scripted(learner, GatewayConfig::default(), Script::Probe);
        let script = vec![
            "until the breaker has been open 30 s: 503".to_string(),
            "then the first call (the probe): 200 available, held until another lookup has run"
                .to_string(),
            "any other call: 503".to_string(),
        ];
        let what = "three lookups that open the breaker; one at 29.9 s after it opened; then at \
                    30 s a probe and, while it is in flight, two other lookups";
        let mut runs = open_it(&g)?;
        g.advance(29.9);
        let early = lookup(&g);
        runs.push((early.clone(), g.breaker()));
        if early.outcome != failed(FailureCode::BreakerOpen) {
            return Err(breaker_failure(
                format!(
                    "29.9 s after the breaker opened (open_for = 30) a lookup ended {}; the rule \
                     expects Failed(503 breaker_open).",
                    early.outcome
                ),
                "The breaker stays open for open_for seconds: ask it (admit) before any attempt.",
                script,
                what,
                &runs,
                &g,
                vec![Field::line(
                    "lookup 4",
                    "Failed(503 breaker_open), 0 attempt(s)",
                )],
            ));
        }
        g.advance(0.1);
        let calls_before = g.calls().len();
        let (probe, others) = g.race(ITEM);
        runs.push((probe.clone(), g.breaker()));
        if others.is_empty() {
            let probe_calls = g.calls().len() - calls_before;
            return Err(breaker_failure(
                format!(
                    "30 s after the breaker opened, the probe lookup ended {} after {} provider \
                     call(s); the rule expects it to reach the provider and be answered.",
                    probe.outcome, probe_calls
                ),
                "After open_for seconds, admit lets exactly one probe lookup through: it calls \
                 the provider like any lookup.",
                script,
                what,
                &runs,
                &g,
                vec![Field::line(
                    "lookup 5 (the probe)",
                    "Available(available = true)",
                )],
            ));
        }
        for (n, other) in others.iter().enumerate() {
            runs.insert(runs.len() - 1, (other.clone(), g.breaker()));
            if other.outcome != failed(FailureCode::BreakerOpen) || other.attempts != 0 {
                let which = if n == 0 { "another" } else { "a second other" };
                return Err(breaker_failure(
                    format!(
                        "while the probe was in flight, {which} lookup ended {} with {} \
                         attempt(s); the rule expects Failed(503 breaker_open) with 0.",
                        other.outcome, other.attempts
                    ),
                    if n == 0 {
                        "Half-open lets exactly one probe through: every other lookup is \
                         rejected until the probe ends."
                    } else {
                        "Half-open lets exactly one probe through, until the probe itself \
                         ends: a rejected lookup must not give the probe's place away (a \
                         breaker_open rejection tells the breaker nothing — not even \
                         record_neutral, which frees the probe's place)."
                    },
                    script,
                    what,
                    &runs,
                    &g,
                    vec![Field::line(
                        "every other lookup",
                        "Failed(503 breaker_open), 0 attempt(s)",
                    )],
                ));
            }
        }
        ensure(
            probe.outcome == available(true) && g.breaker() == BreakerState::Closed { failures: 0 },
            || {
                breaker_failure(
                    format!(
                        "the probe ended {} and left the breaker {:?}; the rule expects \
                         Available and Closed {{ failures: 0 }}.",
                        probe.outcome,
                        g.breaker()
                    ),
                    "A successful probe closes the breaker: record_success when it ends.",
                    script,
                    what,
                    &runs,
                    &g,
                    vec![Field::line(
                        "breaker after the probe",
                        "Closed { failures: 0 }",
                    )],
                )
            },
        )
    }

    pub(crate) fn failed_probe_opens_again(learner: &Learner) -> CheckResult {
        let g = gateway(learner, GatewayConfig::default(), vec![Step::status(503)]);
        let mut runs = open_it(&g)?;
        g.advance(30.0);
        let calls = g.calls().len();
        let probe = lookup(&g);
        runs.push((probe.clone(), g.breaker()));
        let probe_calls = g.calls().len() - calls;
        let after = lookup(&g);
        runs.push((after.clone(), g.breaker()));
        ensure(
            probe.attempts == 3
                && probe_calls == 3
                && after.outcome == failed(FailureCode::BreakerOpen)
                && after.attempts == 0,
            || {
                breaker_failure(
                    format!(
                        "the probe made {} attempt(s) and ended {}; the next lookup ended {} \
                         with {} attempt(s).",
                        probe.attempts, probe.outcome, after.outcome, after.attempts
                    ),
                    "The probe is a full lookup (3 attempts); its failure opens the breaker \
                     again (record_failure), so the next lookup is rejected.",
                    script_lines(&[Step::status(503)]),
                    "three lookups that open the breaker; 30 s later the probe; then one more",
                    &runs,
                    &g,
                    vec![
                        Field::line(
                            "lookup 4 (the probe)",
                            "Failed(503 provider_unavailable), 3 attempt(s)",
                        ),
                        Field::line("lookup 5", "Failed(503 breaker_open), 0 attempt(s)"),
                    ],
                )
            },
        )
    }

    pub(crate) fn rejected_probe_does_not_close_the_breaker(learner: &Learner) -> CheckResult {
        // Open with three rate-limited lookups; 30 s later the probe gets a 400.
        let g = scripted(
            learner,
            GatewayConfig::default(),
            Script::From {
                from: 30.0,
                before: Step::status(429),
                after: Step::status(400),
            },
        );
        let mut runs = run_lookups(&g, 3);
        g.advance(30.0);
        runs.extend(run_lookups(&g, 1));
        let want = BreakerState::HalfOpen { probing: false };
        ensure(g.breaker() == want, || {
            breaker_failure(
                format!(
                    "a probe answered 400 left the breaker {:?}; the rule expects {want:?}.",
                    g.breaker()
                ),
                "A rejection says nothing about the provider's health: it does not close the \
                 breaker (that is record_success) nor open it again (record_failure). \
                 record_neutral gives the probe's place to the next lookup.",
                vec!["before t=30: 429".into(), "from t=30: 400".into()],
                "three lookups that open the breaker; 30 s later the probe",
                &runs,
                &g,
                vec![Field::line("breaker after the probe", format!("{want:?}"))],
            )
        })
    }
}

mod no_fallback {
    use super::*;

    pub(crate) fn failed_lookups_are_never_available(learner: &Learner) -> CheckResult {
        let scripts = [
            vec![Step::status(503)],
            vec![Step::fail(TransportFailure::Timeout)],
            vec![Step::status(429)],
            vec![Step::status(500)],
            vec![Step::status(401)],
            vec![body_reply("{}")],
        ];
        every_case(scripts.into_iter().map(|steps| {
            let g = gateway(learner, GatewayConfig::default(), steps.clone());
            // Four lookups: enough to open the breaker and see its rejection too.
            let runs = run_lookups(&g, 4);
            for (l, _) in &runs {
                let wrong = match &l.outcome {
                    Outcome::Failed(f) if f.status == f.code.status() => None,
                    Outcome::Failed(f) => Some(format!(
                        "{} has local status {}; the rule expects {}.",
                        f.code,
                        f.status,
                        f.code.status()
                    )),
                    other => Some(format!(
                        "a lookup that got no answer ended {other}; the rule expects Failed."
                    )),
                };
                if let Some(summary) = wrong {
                    let mut did = vec![lookups_field(&runs)];
                    did.extend(saw(&g));
                    return Err(Feedback::new(
                        summary,
                        "No fallback ever invents an answer: a lookup that got none is Failed \
                         with a local status (503 or 502) and a code.",
                    )
                    .input(input(
                        g.config(),
                        script_lines(&steps),
                        "four lookups of \"bike-7\" in a row",
                    ))
                    .did(did)
                    .render());
                }
            }
            Ok(())
        }))
    }
}

mod counters {
    use super::*;

    /// As many threads as a runner has for lookups at once.
    const THREADS: usize = kit_runner::stage8::session::THREADS;
    const PER_THREAD: usize = 1_000;
    const ROUNDS: usize = 5;

    fn expected_attempts(pattern: usize) -> u32 {
        [1, 2, 3, 3, 1, 1][pattern]
    }

    fn pattern_script(pattern: usize) -> Vec<String> {
        (1..=3)
            .map(|n| {
                format!(
                    "call {n} for the item → {}",
                    describe_step(&pattern_step(pattern, n, "item"))
                )
            })
            .collect()
    }

    pub(crate) fn concurrent_lookups_add_up(learner: &Learner) -> CheckResult {
        let cfg = config(|c| c.failure_threshold = u32::MAX);
        // First each script alone, on one thread: a wrong count there is not about
        // concurrency, and the message says what it is about.
        for p in 0..6 {
            let item = format!("solo-{p}");
            let g = scripted(learner, cfg.clone(), Script::Patterns);
            let l = g.lookup(&item);
            let want = expected_attempts(p);
            if l.attempts != want || g.counters().attempts != u64::from(want) {
                let mut did = vec![Field::line("lookup", lookup_line(1, &l))];
                did.extend(saw(&g));
                return Err(Feedback::new(
                    format!(
                        "one lookup alone reported {} attempt(s), and the counters read {}; this \
                         script takes {want}.",
                        l.attempts,
                        g.counters().attempts
                    ),
                    "Before concurrency: count each call of the provider, once, in the lookup \
                     and globally — and retry only what the rules retry (never 429, 404, a 200).",
                )
                .input(input(
                    &cfg,
                    pattern_script(p),
                    &format!("one lookup of {item:?}"),
                ))
                .did(did)
                .expected(vec![Field::line("attempts", want.to_string())])
                .render());
            }
        }
        for round in 1..=ROUNDS {
            // Each thread keeps its own fake time, and the breaker never opens, so every
            // lookup's attempts are known in advance.
            let g = Observed::per_thread(learner, cfg.clone(), Script::Patterns)
                .expect("the checks' configs are valid");
            let (per_thread, totals) = g.concurrent(THREADS, PER_THREAD);
            let mut sum = 0u64;
            for (t, lookups) in per_thread.into_iter().enumerate() {
                for (i, attempts) in lookups.into_iter().enumerate() {
                    let item = format!("t{t}-{i}");
                    let want = expected_attempts(pattern(&item));
                    ensure(attempts == want, || {
                        Feedback::new(
                            format!(
                                "round {round}: the lookup of {item} reported {attempts} \
                                 attempt(s); its script takes {want} (and one lookup alone \
                                 counted it right)."
                            ),
                            "Under concurrent lookups, a difference of global totals (after \
                             minus before) includes other lookups' attempts: count attempts in \
                             the lookup itself, in a local variable.",
                        )
                        .input(input(
                            &cfg,
                            pattern_script(pattern(&item)),
                            &format!("{THREADS} threads × {PER_THREAD} lookups, each item its own script"),
                        ))
                        .render()
                    })?;
                    sum += u64::from(attempts);
                }
            }
            let (c, calls) = (totals.counters, totals.calls);
            let total = (THREADS * PER_THREAD) as u64;
            ensure(totals.together, || {
                Feedback::new(
                    format!(
                        "round {round}: the {THREADS} threads' lookups never ran at once: each \
                         thread's first provider call waited up to 2 s for the others', and \
                         they did not all come."
                    ),
                    "Lookups run at once on one shared gateway: its counters and breaker are \
                     already safe to share. A lock of your own held for a whole lookup makes \
                     the gateway serve one lookup at a time (and hides a count taken from \
                     global totals): take none, and count attempts in the lookup itself.",
                )
                .input(input(
                    &cfg,
                    vec!["each item its own script".into()],
                    &format!("{THREADS} threads × {PER_THREAD} lookups at once"),
                ))
                .render()
            })?;
            ensure(
                c.logical_lookups == total && c.attempts == sum && calls == sum,
                || {
                    Feedback::new(
                        format!(
                            "round {round}: the counters read logical_lookups {}, attempts {}; \
                             the lookups reported {sum} attempts in all and the provider saw \
                             {calls} calls.",
                            c.logical_lookups, c.attempts
                        ),
                        "Every lookup counts once, every provider call once: the global counters \
                         add up to the lookups' own numbers.",
                    )
                    .expected(vec![
                        Field::line("logical_lookups", total.to_string()),
                        Field::line(
                            "attempts",
                            format!("{sum} (= the lookups' sum = the provider's calls)"),
                        ),
                    ])
                    .render()
                },
            )?;
        }
        Ok(())
    }
}

mod exhaustive {
    use super::*;
    use crate::view::side_by_side;
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;

    pub(crate) fn matches_reference_on_every_case(learner: &Learner) -> CheckResult {
        let progress = Arc::new(AtomicUsize::new(0));
        // A runner marks the case it runs: a stall names that one.
        let runner = match learner {
            Learner::Runner(runner) => Some(Arc::clone(runner)),
            Learner::Here(_) => None,
        };
        let under_way = Arc::new(AtomicUsize::new(0));
        let here = Arc::clone(&under_way);
        crate::serve::watch_progress(Arc::clone(&progress), move |_| {
            // The case a runner marked as started; here, the one the check runs.
            let marked = runner
                .as_ref()
                .and_then(|r| r.marks())
                .and_then(|marks| usize::try_from(marks[0]).ok())
                .filter(|n| *n > 0);
            let number =
                marked.unwrap_or_else(|| here.load(std::sync::atomic::Ordering::SeqCst).max(1));
            let file = super::super::exhaustive::case(number).map(|case| {
                super::super::exhaustive::to_scenario(&case)
                    .to_toml("The case of the exhaustive check that never finished.")
            });
            format!(
                "did not finish case {number} of the exhaustive space: a loop that never ends? \
                 Every loop needs explicit stops: at most max_attempts attempts per lookup, and \
                 no sleep that would reach the deadline.\n\nReplay it with \
                 `cargo run -p grader -- scenario FILE`:\n\n{}",
                file.unwrap_or_default()
            )
        });
        // The reference's runs, when the grader handed them over.
        let known = crate::serve::check_input().and_then(super::super::exhaustive::decode_digests);
        let Err(d) =
            super::super::exhaustive::compare(learner, &progress, &under_way, known.as_ref())
        else {
            return Ok(());
        };
        let file = super::super::exhaustive::case_text(&d.case, d.number);
        let script: Vec<String> = d
            .case
            .replies
            .iter()
            .enumerate()
            .map(|(i, r)| format!("call {} → {}", i + 1, describe_step(&r.step_for(ITEM))))
            .chain(["every later call → the same as the last".to_string()])
            .collect();
        let lookups: Vec<String> = d
            .case
            .afters
            .iter()
            .enumerate()
            .map(|(i, after)| format!("#{} of {ITEM:?}, {after:?} s after the last", i + 1))
            .collect();
        let input = vec![
            Field::line("gateway", super::super::config_line(&d.case.config)),
            Field::block("provider", script),
            Field::block("lookups", lookups),
        ];
        let side = side_by_side(("yours", &d.learner), ("reference", &d.reference));
        // A run that differed only when it was sent has no line to point at here.
        let why = if side.contains('≠') {
            "the first line marked ≠ is where your lookup_availability parts from the rules."
        } else {
            "the run shown, made again for this message, is the reference's, but the run your \
             code sent was not: see the first difference above."
        };
        Err(format!(
            "your lookup_availability and the reference differ on case {} of the {} cases of \
             the exhaustive space (they come shortest first, so this is a smallest one).\n\n\
             input:\n{}\n\n\
             first difference: {}\n\
             closest named check or rule: {}\n\n\
             your gateway and the reference's, side by side (≠ marks where they part):\n{}\n\
             why: {why} {}\n\n{}\n{file}",
            d.number,
            super::super::exhaustive::total(),
            crate::view::render_fields(&input)
                .iter()
                .map(|l| format!("  {l}"))
                .collect::<Vec<_>>()
                .join("\n"),
            d.first,
            d.closest,
            side,
            crate::feedback::REPLAY,
            crate::feedback::CASE_MARKER,
        ))
    }
}

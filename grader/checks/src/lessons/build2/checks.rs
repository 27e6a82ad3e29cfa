//! build2: `fetch`. One named check per rule of the fetcher's table (the contract is
//! `exercises/build2/lesson.md`, "The rules"), then an exhaustive comparison with the
//! reference.
//!
//! Each check scripts one exchange — the method and URL given to `fetch`, and what the
//! transport returns — and compares what the learner's fetcher did with what the rule
//! demands. A failure shows the exchange, both results, and the rule.

use super::call::{describe_result, excerpt, record, same_result, Call, Exchange, Recorded};
use super::Learner;
use crate::feedback::every_case;
use crate::feedback::Feedback;
use crate::lesson::CheckResult;
use crate::view::Field;
use kit_types::{
    HttpReply, PermanentError, PermanentKind, RequestError, TransientError, TransientReason,
    TransportFailure,
};
use serde_json::{json, Value};
use std::panic;

crate::checks! { Learner;
    method::only_exact_get_is_sent,
    method::get_calls_the_transport_once,
    no_reply::transport_failures_are_transient,
    statuses::server_errors_are_transient,
    statuses::client_errors_are_permanent,
    statuses::everything_else_is_unexpected,
    retry_after::read_on_429_as_delay_seconds,
    retry_after::spaces_and_tabs_around_are_allowed,
    retry_after::unsupported_values_give_none,
    retry_after::only_spaces_and_tabs_are_trimmed,
    retry_after::names_compare_case_insensitively,
    retry_after::first_header_wins,
    retry_after::only_429_reads_it,
    body::json_200_is_the_value_as_parsed,
    body::other_200_is_malformed,
    privacy::detail_keeps_at_most_200_characters_of_body,
    privacy::the_excerpt_ends_on_a_character_boundary,
    exhaustive::matches_reference_on_every_case => 60 s,
}

// ---------- building blocks ----------

type Want = Result<Value, RequestError>;

fn transient(reason: TransientReason, retry_after: Option<f64>) -> Want {
    let mut e = TransientError::new(reason);
    e.retry_after = retry_after;
    Err(e.into())
}

fn permanent(kind: PermanentKind, status: Option<u16>) -> Want {
    let mut e = PermanentError::new(kind);
    e.status = status;
    Err(e.into())
}

fn reply(status: u16) -> HttpReply {
    HttpReply::new(status, "")
}

fn rate_limited_with(headers: &[(&str, &str)]) -> HttpReply {
    let mut r = reply(429);
    for (n, v) in headers {
        r = r.with_header(*n, *v);
    }
    r
}

/// Runs the call; a panic of the learner's fetcher goes on to the harness, which reports it.
fn run(learner: &Learner, call: &Call) -> Recorded {
    match record(learner, call) {
        Ok(rec) => rec,
        Err(payload) => panic::resume_unwind(payload),
    }
}

/// The call's result and transport calls against what the rule demands.
fn expect(learner: &Learner, call: Call, want: Want, rule: &str) -> CheckResult {
    let rec = run(learner, &call);
    let want_calls = usize::from(call.method == "GET");
    let calls_field = |n: usize| Field::line("transport calls", n.to_string());
    let did = vec![
        calls_field(rec.transport_calls.len()),
        Field::line("returned", describe_result(&rec.result)),
    ];
    let expected = vec![
        calls_field(want_calls),
        Field::line("returned", describe_result(&want)),
    ];
    let summary = if rec.transport_calls.len() != want_calls {
        format!(
            "the transport was called {}; the rule expects {want_calls}.",
            crate::feedback::plural(rec.transport_calls.len() as u64, "time")
        )
    } else if !same_result(&rec.result, &want) {
        format!(
            "fetch returned {}; the rule expects {}.",
            describe_result(&rec.result),
            describe_result(&want)
        )
    } else {
        return Ok(());
    };
    let why = hint(&call, &rec, &want).unwrap_or_else(|| rule.to_string());
    Err(Feedback::new(summary, why)
        .input(vec![Field::line("call", call.describe())])
        .did(did)
        .expected(expected)
        .first_difference()
        .render())
}

/// Whether the call's Retry-After holds whitespace other than spaces and tabs (a line break,
/// a no-break space): then the rule about trimming says more than the general hint.
fn other_whitespace(call: &Call) -> bool {
    match &call.exchange {
        Exchange::Reply(r) => r.headers.iter().any(|(n, v)| {
            n.eq_ignore_ascii_case("retry-after")
                && v.chars()
                    .any(|c| c.is_whitespace() && c != ' ' && c != '\t')
        }),
        Exchange::Fails(_) => false,
    }
}

/// The likely cause, for the realistic mistakes whose result says which one it is.
fn hint(call: &Call, rec: &Recorded, want: &Want) -> Option<String> {
    let status = match &call.exchange {
        super::call::Exchange::Reply(r) => Some(r.status),
        super::call::Exchange::Fails(_) => None,
    };
    let got = &rec.result;
    match (status, got, want) {
        _ if call.method != "GET" && !rec.transport_calls.is_empty() => Some(format!(
            "{:?} is not exactly \"GET\": refuse it before calling the transport, as \
             permanent bad_request with no status. Compare the method as it is — case and \
             spaces included.",
            call.method
        )),
        (Some(429), Err(RequestError::Permanent(_)), _) => Some(
            "429 asks the client to slow down; it does not say the request is wrong. It is \
             transient rate_limited."
                .into(),
        ),
        (Some(500), Err(RequestError::Transient(_)), _) => Some(
            "500 is not one of the declared transient statuses (only 502, 503 and 504 are): \
             it is permanent unexpected. Nothing is guessed to be transient."
                .into(),
        ),
        (Some(s), Err(RequestError::Transient(t)), Err(RequestError::Transient(w)))
            if s != 429 && t.retry_after.is_some() && w.retry_after.is_none() =>
        {
            Some(format!(
                "Retry-After is read only on 429; on {s} it is ignored."
            ))
        }
        (Some(429), Err(RequestError::Transient(t)), Err(RequestError::Transient(w)))
            if t.retry_after.is_some() && w.retry_after.is_none() && !other_whitespace(call) =>
        {
            Some(
                "Only delay-seconds count: ASCII digits, with spaces or tabs around. An \
                 HTTP-date, a fraction, a sign, an empty value or any other text gives no \
                 retry_after — never a made-up 0."
                    .into(),
            )
        }
        (Some(200), Ok(_), Err(RequestError::Permanent(_))) => Some(
            "A 200 whose body is not JSON is permanent malformed_response (status 200): \
             never return a made-up value."
                .into(),
        ),
        _ => None,
    }
}

// ---------- the checks ----------

mod method {
    use super::*;

    pub(crate) fn only_exact_get_is_sent(learner: &Learner) -> CheckResult {
        every_case(
            ["POST", "get", "Get", "GET ", " GET", "PUT", "HEAD", ""].map(|m| {
                expect(
                    learner,
                    Call::get(HttpReply::new(200, r#"{"ok":true}"#)).with_method(m),
                    permanent(PermanentKind::BadRequest, None),
                    "Only exactly \"GET\" is a declared read: anything else is refused before the \
                 transport is called, as permanent bad_request with no status.",
                )
            }),
        )
    }

    pub(crate) fn get_calls_the_transport_once(learner: &Learner) -> CheckResult {
        let call = Call::get(HttpReply::new(200, r#"{"job_id":"fresh_3"}"#));
        let rec = run(learner, &call);
        if rec.transport_calls.len() == 1 && rec.transport_calls[0] == call.url {
            return Ok(());
        }
        let urls: Vec<String> = rec
            .transport_calls
            .iter()
            .map(|u| format!("{u:?}"))
            .collect();
        Err(Feedback::new(
            format!(
                "the transport was called {}, with [{}]; the rule expects once, with the URL.",
                crate::feedback::plural(rec.transport_calls.len() as u64, "time"),
                urls.join(", ")
            ),
            "A GET is sent once, to the URL fetch was given: call the transport with it.",
        )
        .input(vec![Field::line("call", call.describe())])
        .did(vec![Field::line(
            "transport calls",
            format!("[{}]", urls.join(", ")),
        )])
        .expected(vec![Field::line(
            "transport calls",
            format!("[{:?}]", call.url),
        )])
        .first_difference()
        .render())
    }
}

mod no_reply {
    use super::*;

    pub(crate) fn transport_failures_are_transient(learner: &Learner) -> CheckResult {
        every_case(
            [
                (TransportFailure::Timeout, TransientReason::Timeout),
                (TransportFailure::Connection, TransientReason::Connection),
            ]
            .map(|(failure, reason)| {
                expect(
                    learner,
                    Call::failing(failure),
                    transient(reason, None),
                    "No reply at all is transient: a timeout is timeout, a failed connection is \
                 connection.",
                )
            }),
        )
    }
}

mod statuses {
    use super::*;

    pub(crate) fn server_errors_are_transient(learner: &Learner) -> CheckResult {
        every_case([502, 503, 504].map(|s| {
            expect(
                learner,
                Call::get(HttpReply::new(s, "upstream down")),
                transient(TransientReason::ServerError, None),
                "502, 503 and 504 are declared transient: server_error.",
            )
        }))
    }

    pub(crate) fn client_errors_are_permanent(learner: &Learner) -> CheckResult {
        every_case(
            [
                (400, PermanentKind::BadRequest),
                (401, PermanentKind::Unauthorized),
                (403, PermanentKind::Forbidden),
                (404, PermanentKind::NotFound),
            ]
            .map(|(s, kind)| {
                expect(
                    learner,
                    Call::get(HttpReply::new(s, "{\"error\":\"no\"}")),
                    permanent(kind, Some(s)),
                    "400 bad_request, 401 unauthorized, 403 forbidden, 404 not_found: permanent, \
                     each with its status.",
                )
            }),
        )
    }

    pub(crate) fn everything_else_is_unexpected(learner: &Learner) -> CheckResult {
        every_case(
            [
                500, 100, 101, 201, 202, 204, 299, 301, 304, 402, 405, 409, 418, 422, 451, 501,
                505, 599,
            ]
            .map(|s| {
                expect(
                    learner,
                    Call::get(HttpReply::new(s, "{}")),
                    permanent(PermanentKind::Unexpected, Some(s)),
                    "500 and every status the table does not list are permanent unexpected, \
                     with their status: nothing is guessed to be transient, and no other 2xx \
                     is data.",
                )
            }),
        )
    }
}

mod retry_after {
    use super::*;

    fn on_429(
        learner: &Learner,
        headers: &[(&str, &str)],
        wait: Option<f64>,
        rule: &str,
    ) -> CheckResult {
        expect(
            learner,
            Call::get(rate_limited_with(headers)),
            transient(TransientReason::RateLimited, wait),
            rule,
        )
    }

    pub(crate) fn read_on_429_as_delay_seconds(learner: &Learner) -> CheckResult {
        let rule = "429 is transient rate_limited, with retry_after from Retry-After when it is \
                    delay-seconds: ASCII digits.";
        every_case([
            on_429(learner, &[], None, rule),
            on_429(learner, &[("Retry-After", "3")], Some(3.0), rule),
            on_429(learner, &[("Retry-After", "0")], Some(0.0), rule),
            on_429(learner, &[("Retry-After", "120")], Some(120.0), rule),
            on_429(learner, &[("Retry-After", "007")], Some(7.0), rule),
            on_429(
                learner,
                &[("Retry-After", "99999999999999999999")],
                Some(1e20),
                rule,
            ),
        ])
    }

    pub(crate) fn spaces_and_tabs_around_are_allowed(learner: &Learner) -> CheckResult {
        let rule = "Spaces and tabs around the digits are not part of the value: \" 3\\t\" is 3.";
        every_case(
            [" 3", "3 ", "\t3", " \t3\t "]
                .map(|v| on_429(learner, &[("Retry-After", v)], Some(3.0), rule)),
        )
    }

    pub(crate) fn only_spaces_and_tabs_are_trimmed(learner: &Learner) -> CheckResult {
        let rule = "Only spaces and tabs around the digits are trimmed: any other whitespace — a \
                    line break, a no-break space, a wide space — leaves a value that is not \
                    delay-seconds, so there is no retry_after. (str::trim removes them all: \
                    trim only ' ' and '\\t'.)";
        every_case(
            ["3\n", "\r3", "\u{a0}3", "3\u{2003}", "\u{b}3", "3\u{c}"]
                .map(|v| on_429(learner, &[("Retry-After", v)], None, rule)),
        )
    }

    pub(crate) fn unsupported_values_give_none(learner: &Learner) -> CheckResult {
        let rule = "An HTTP-date, a fraction, a sign, an empty value or any other text is not \
                    delay-seconds: the error is still rate_limited, with no retry_after.";
        every_case(
            [
                "Wed, 21 Oct 2015 07:28:00 GMT",
                "1.5",
                "-1",
                "+3",
                "",
                " ",
                "3s",
                "three",
                "3 4",
                "0x10",
                "١٢",
            ]
            .map(|v| on_429(learner, &[("Retry-After", v)], None, rule)),
        )
    }

    pub(crate) fn names_compare_case_insensitively(learner: &Learner) -> CheckResult {
        let rule = "Header names compare without regard to case: retry-after, RETRY-AFTER and \
                    Retry-After are the same header.";
        every_case(
            ["retry-after", "RETRY-AFTER", "rEtRy-AfTeR"]
                .map(|n| on_429(learner, &[(n, "4")], Some(4.0), rule)),
        )
    }

    pub(crate) fn first_header_wins(learner: &Learner) -> CheckResult {
        let rule = "When Retry-After comes more than once, the first one counts (even when it is \
                    not delay-seconds).";
        every_case([
            on_429(
                learner,
                &[("Retry-After", "5"), ("Retry-After", "7")],
                Some(5.0),
                rule,
            ),
            on_429(
                learner,
                &[("retry-after", "5"), ("Retry-After", "7")],
                Some(5.0),
                rule,
            ),
            on_429(
                learner,
                &[("Retry-After", "soon"), ("Retry-After", "7")],
                None,
                rule,
            ),
            on_429(
                learner,
                &[("X-Other", "1"), ("Retry-After", "7")],
                Some(7.0),
                rule,
            ),
        ])
    }

    pub(crate) fn only_429_reads_it(learner: &Learner) -> CheckResult {
        every_case([503, 502, 504].map(|s| {
            expect(
                learner,
                Call::get(reply(s).with_header("Retry-After", "3")),
                transient(TransientReason::ServerError, None),
                "Retry-After is read only on 429: a 502/503/504 has no retry_after.",
            )
        }))
    }
}

mod body {
    use super::*;

    pub(crate) fn json_200_is_the_value_as_parsed(learner: &Learner) -> CheckResult {
        let bodies = [
            r#"{"job_id":"fresh_3","state":"done"}"#,
            r#"  {"nested": {"a": [1, 2.5, null, true]}, "n": -7}  "#,
            "[1,2,3]",
            "42",
            "\"text\"",
            "null",
            "{}",
        ];
        every_case(bodies.map(|b| {
            let want: Value = serde_json::from_str(b).unwrap_or(json!("unparsable fixture"));
            expect(
                learner,
                Call::get(HttpReply::new(200, b)),
                Ok(want),
                "A 200 whose body is JSON returns that JSON, exactly as parsed: an object, an \
                 array or a scalar alike.",
            )
        }))
    }

    pub(crate) fn other_200_is_malformed(learner: &Learner) -> CheckResult {
        let bodies = [
            "",
            "<html>oops</html>",
            r#"{"job_id": "fresh_3""#,
            "nul",
            "{} {}",
            "'x'",
        ];
        every_case(bodies.map(|b| {
            expect(
                learner,
                Call::get(HttpReply::new(200, b)),
                permanent(PermanentKind::MalformedResponse, Some(200)),
                "A 200 whose body is not JSON (empty, cut short, HTML) is permanent \
                 malformed_response with status 200.",
            )
        }))
    }
}

mod privacy {
    use super::*;

    pub(crate) fn detail_keeps_at_most_200_characters_of_body(learner: &Learner) -> CheckResult {
        // A long body of one character that appears nowhere else in the exchange.
        let body = "ж".repeat(5_000);
        let calls = [
            Call::get(HttpReply::new(401, body.clone())),
            Call::get(HttpReply::new(200, body.clone())),
            Call::get(HttpReply::new(503, body.clone())),
        ];
        every_case(calls.map(|call| {
            let rec = run(learner, &call);
            let detail = match &rec.result {
                Err(RequestError::Transient(t)) => t.detail.clone(),
                Err(RequestError::Permanent(p)) => p.detail.clone(),
                Ok(_) => String::new(),
            };
            let kept = detail.chars().filter(|c| *c == 'ж').count();
            if kept <= 200 {
                return Ok(());
            }
            Err(Feedback::new(
                format!(
                    "the error's detail keeps {kept} characters of the body; the rule allows at most 200."
                ),
                "detail may keep raw context for debugging — the URL, the status, an excerpt of \
                 the body — but the excerpt is at most 200 characters: a body can be large and \
                 private.",
            )
            .input(vec![Field::line("call", call.describe())])
            .did(vec![Field::line("detail", excerpt(&detail, 120))])
            .render())
        }))
    }

    pub fn the_excerpt_ends_on_a_character_boundary(learner: &Learner) -> CheckResult {
        // One ASCII letter, then two-byte characters: byte 200 falls inside one of them.
        let body = format!("a{}", "ж".repeat(1_000));
        let calls = [
            Call::get(HttpReply::new(401, body.clone())),
            Call::get(HttpReply::new(200, body.clone())),
            Call::get(HttpReply::new(503, body.clone())),
        ];
        every_case(calls.map(|call| {
            let payload = match record(learner, &call) {
                Ok(_) => return Ok(()),
                Err(payload) => payload,
            };
            let message = crate::panics::panic_message(payload.as_ref());
            if !message.contains("char boundary") {
                // Not the cut: a panic like any other, reported as one.
                panic::resume_unwind(payload);
            }
            Err(Feedback::new(
                format!("fetch panicked while it cut the body: {message}."),
                "The excerpt is at most 200 characters, cut on a character's boundary: a body \
                 is text, and slicing it at byte 200 splits a character that crosses that \
                 byte (here 'ж', two bytes) and panics. Take characters, not bytes: \
                 body.chars().take(200).",
            )
            .input(vec![Field::line("call", call.describe())])
            .render())
        }))
    }
}

mod exhaustive {
    use super::*;
    use crate::view::side_by_side;
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;

    pub(crate) fn matches_reference_on_every_case(learner: &Learner) -> CheckResult {
        let progress = Arc::new(AtomicUsize::new(0));
        crate::serve::watch_progress(Arc::clone(&progress), |number| {
            let case = super::super::exhaustive::cases().nth(number.saturating_sub(1));
            format!(
                "did not finish case {number} of the exhaustive space: fetch makes one exchange \
                 and returns, so something loops.\n\nReplay it with `cargo run -p grader -- scenario FILE`:\n\n{}",
                case.map(|c| super::super::scenario::to_toml(&c, "The case of the exhaustive check that never finished."))
                    .unwrap_or_default()
            )
        });
        let Err(difference) = super::super::exhaustive::compare_with_progress(learner, &progress)
        else {
            return Ok(());
        };
        let file = super::super::exhaustive::case_text(&difference.case, difference.number);
        Err(format!(
            "your fetch and the reference differ on case {} of the exhaustive space.\n\n\
             input:\n  call: {}\n\n\
             your fetch and the reference, side by side (≠ marks where they part):\n{}\n\
             why: {}{}\n\n{}\n{file}",
            difference.number,
            difference.case.describe(),
            side_by_side(
                ("yours", &difference.learner),
                ("reference", &difference.reference)
            ),
            match &difference.rule {
                Some(rule) => format!(
                    "the rule here: {rule} (The first line marked ≠ is where your fetch parts \
                     from it.) "
                ),
                None =>
                    "the first line marked ≠ is where your fetch parts from the rules. ".to_string(),
            },
            crate::feedback::REPLAY,
            crate::feedback::CASE_MARKER,
        ))
    }
}

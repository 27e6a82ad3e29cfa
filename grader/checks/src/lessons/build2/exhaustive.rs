//! build2's exhaustive comparison: every case of a bounded space, run on the learner's
//! fetcher and on the reference, compared in every declared field.
//!
//! The space: a GET answered with every status from 100 to 599 × five bodies (empty, a JSON
//! object, a JSON array, a JSON scalar, text that is not JSON) × ten Retry-After variants
//! (absent, digits, padded digits, a fraction, a negative number, an HTTP-date, an empty
//! value, two headers, a lower-case name, a number too large for any budget); both
//! transport failures; and a POST and a lower-case `get`, which must not reach the
//! transport. About 25,000 cases, well under a second.

use super::call::{
    describe_exchange, describe_result, record, record_all, same_result, Call, Ran, Recorded,
};
use super::Learner;
use crate::panics::{is_stub_panic, panic_message};
use crate::view::{Field, ScenarioRun};
use kit_types::{HttpReply, TransportFailure};
use std::panic;
use std::sync::atomic::{AtomicUsize, Ordering};

const BODIES: [&str; 5] = [
    "",
    r#"{"job_id":"fresh_3","state":"done"}"#,
    "[1,2,3]",
    "42",
    "<html>oops</html>",
];

/// The Retry-After variants: the headers a reply carries.
fn retry_after_variants() -> [Vec<(&'static str, &'static str)>; 10] {
    [
        vec![],
        vec![("Retry-After", "3")],
        vec![("Retry-After", " 3\t")],
        vec![("Retry-After", "1.5")],
        vec![("Retry-After", "-1")],
        vec![("Retry-After", "Wed, 21 Oct 2015 07:28:00 GMT")],
        vec![("Retry-After", "")],
        vec![("Retry-After", "5"), ("Retry-After", "7")],
        vec![("retry-after", "4")],
        vec![("Retry-After", "99999999999999999999")],
    ]
}

/// Every case, in a fixed order: the methods and transport failures first, then every
/// status from 100 to 599.
pub(crate) fn cases() -> impl Iterator<Item = Call> {
    let refused = ["POST", "get"].into_iter().flat_map(|method| {
        [
            Call::get(HttpReply::new(200, BODIES[1])),
            Call::get(HttpReply::new(429, "").with_header("Retry-After", "3")),
            Call::failing(TransportFailure::Timeout),
        ]
        .map(move |c| c.with_method(method))
    });
    let failures = [TransportFailure::Timeout, TransportFailure::Connection].map(Call::failing);
    let replies = (100u16..=599).flat_map(|status| {
        BODIES.into_iter().flat_map(move |body| {
            retry_after_variants().into_iter().map(move |headers| {
                let mut reply = HttpReply::new(status, body);
                for (n, v) in headers {
                    reply = reply.with_header(n, v);
                }
                Call::get(reply)
            })
        })
    });
    refused.chain(failures).chain(replies)
}

/// Case `number` as the scenario file the check saves when it finds the first difference
/// there.
pub(crate) fn case_text(case: &Call, number: usize) -> String {
    super::scenario::to_toml(
        case,
        &format!(
            "Case {number} of build2's exhaustive check: the first place your fetch and the\n\
             reference differ. Replay it: {}",
            crate::feedback::REPLAY_COMMAND
        ),
    )
}

/// Whether `text` is exactly the file the check saves for some case of the space: that
/// case's number ([`crate::lesson::Lesson::saved_case`]).
pub(crate) fn saved_case(text: &str) -> Option<usize> {
    crate::feedback::saved_case_number(text, " of build2's exhaustive check:", |n| {
        Some(case_text(&cases().nth(n.checked_sub(1)?)?, n))
    })
}

/// The first case where the learner's fetcher differs from the reference's.
#[derive(Debug, Clone)]
pub struct Difference {
    /// Its 1-based number in [`cases`] order.
    pub(crate) number: usize,
    /// The case.
    pub(crate) case: Call,
    /// The learner's call, rendered.
    pub(crate) learner: ScenarioRun,
    /// The reference's call, rendered.
    pub(crate) reference: ScenarioRun,
    /// The lesson's rule the learner's call breaks there, when it can be told.
    pub(crate) rule: Option<String>,
}

/// The lesson's rule behind the first part where the learner's call of `case` differs from
/// the reference's: which method is sent, how a status is classified, how Retry-After is
/// read. `None` when neither ran to an end.
fn rule_broken(case: &Call, theirs: &Recorded, ours: &Recorded) -> Option<String> {
    use kit_types::RequestError::{Permanent, Transient};
    if theirs.transport_calls.len() != ours.transport_calls.len() {
        return Some(if ours.transport_calls.is_empty() {
            format!(
                "only the exact method \"GET\" is sent: {:?} is refused before the transport is \
                 called.",
                case.method
            )
        } else {
            "a GET is sent once: call the transport exactly one time.".to_string()
        });
    }
    let super::call::Exchange::Reply(reply) = &case.exchange else {
        return Some(
            "no reply at all (a timeout, a lost connection) is a transient failure of that \
             reason, with no retry_after."
                .to_string(),
        );
    };
    let status = reply.status;
    Some(match (&theirs.result, &ours.result) {
        (Err(Transient(a)), Err(Transient(b))) if a.reason == b.reason => format!(
            "Retry-After is read only on a 429 or 503, as delay-seconds: digits alone after \
             trimming spaces and tabs, the first such header; any other value is no \
             retry_after (here the reference reads {}).",
            b.retry_after
                .map_or("none".to_string(), |w| format!("{w:?} s"))
        ),
        (_, Ok(_)) => format!(
            "a {status} is a success: its body, parsed as JSON, is the data (a body that is not \
             JSON is null)."
        ),
        (_, Err(Transient(b))) => format!(
            "a {status} is a transient failure ({}): worth retrying.",
            b.reason
        ),
        (_, Err(Permanent(b))) => format!(
            "a {status} is a permanent failure ({}): retrying cannot fix it.",
            b.kind
        ),
    })
}

/// Runs every case on `learner` and on the reference; `Ok(n)` when all `n` agree. The number
/// of the case under way is stored in `progress` before each run.
///
/// A learner's `todo!()` propagates (the harness reports it as unfinished); any other panic
/// is a difference.
pub(crate) fn compare_with_progress(
    learner: &Learner,
    progress: &AtomicUsize,
) -> Result<usize, Box<Difference>> {
    let mut count = 0;
    let mut cases = cases().peekable();
    while cases.peek().is_some() {
        // A chunk at a time: in a runner, one question per chunk.
        let chunk: Vec<Call> = cases.by_ref().take(CHUNK).collect();
        // Fewer runs than cases only after a todo!(), which `judged` raises again.
        let runs = record_all(learner, &chunk);
        for (case, ran) in chunk.into_iter().zip(runs) {
            let i = count;
            count += 1;
            progress.store(i + 1, Ordering::SeqCst);
            let theirs = judged(ran);
            let ours = reference_run(i, &case);
            let same = match (&theirs, &ours) {
                (Ok(a), Ok(b)) => {
                    a.transport_calls.len() == b.transport_calls.len()
                        && same_result(&a.result, &b.result)
                }
                _ => false,
            };
            if !same {
                let rule = match (&theirs, &ours) {
                    (Ok(a), Ok(b)) => rule_broken(&case, a, b),
                    _ => None,
                };
                return Err(Box::new(Difference {
                    number: i + 1,
                    rule,
                    learner: render(&case, theirs),
                    reference: render(&case, ours),
                    case,
                }));
            }
        }
    }
    Ok(count)
}

/// How many cases go to the learner's fetcher at a time.
const CHUNK: usize = 1024;

/// The reference's run of 0-based case `index`, `case`: made here, or in a copy of the kit
/// without the answers read from its oracle ([`crate::oracle`]).
#[cfg(feature = "answers")]
fn reference_run(_index: usize, case: &Call) -> Result<Recorded, String> {
    guarded(&super::reference(), case)
}

/// The reference's run of 0-based case `index`, `case`: made here, or in a copy of the kit
/// without the answers read from its oracle ([`crate::oracle`]).
#[cfg(not(feature = "answers"))]
fn reference_run(index: usize, _case: &Call) -> Result<Recorded, String> {
    crate::oracle::oracle_run!("build2", cases().count(), index)
}

/// The reference's run of every case, as the bytes a copy of the kit without the answers
/// reads ([`crate::oracle::decode`]).
pub(crate) fn oracle() -> Vec<u8> {
    let runs: Vec<Vec<u8>> = cases()
        .enumerate()
        .map(|(index, case)| kit_runner::wire::encode(&reference_run(index, &case)))
        .collect();
    crate::oracle::encode("build2", runs.into_iter())
}

#[cfg_attr(not(feature = "answers"), allow(dead_code))]
fn guarded(learner: &Learner, case: &Call) -> Result<Recorded, String> {
    judged(record(learner, case))
}

/// A run as the comparison takes it: a learner's `todo!()` goes on as it came (the harness
/// reports it as unfinished); any other panic is a difference.
fn judged(ran: Ran) -> Result<Recorded, String> {
    ran.map_err(|payload| {
        let message = panic_message(payload.as_ref());
        if is_stub_panic(&message) {
            panic::resume_unwind(payload);
        }
        format!("panicked: {message}")
    })
}

/// One call as a scenario run: the transport's calls, then the result.
pub(crate) fn render(case: &Call, recorded: Result<Recorded, String>) -> ScenarioRun {
    match recorded {
        Err(ending) => ScenarioRun::stopped(ending),
        Ok(rec) => ScenarioRun {
            fields: vec![
                Field::line("transport calls", rec.transport_calls.len().to_string()),
                Field::line(
                    "transport",
                    if rec.transport_calls.is_empty() {
                        "not called".to_string()
                    } else {
                        describe_exchange(&case.exchange)
                    },
                ),
            ],
            ending: format!("returned: {}", describe_result(&rec.result)),
            finished: true,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::super::call::Exchange;
    use super::*;

    /// How many cases there are.
    fn count() -> usize {
        cases().count()
    }

    #[test]
    fn the_space_is_a_few_tens_of_thousands_of_cases() {
        let n = count();
        assert!((20_000..60_000).contains(&n), "{n} cases");
        assert!(cases().any(|c| matches!(&c.exchange, Exchange::Reply(r) if r.status == 599)));
        assert!(cases().any(|c| c.method == "get"));
    }

    #[test]
    fn the_reference_agrees_with_itself() {
        let n = compare_with_progress(&super::super::reference(), &AtomicUsize::new(0)).unwrap();
        assert_eq!(n, count());
    }
}

#[cfg(all(test, feature = "answers"))]
mod oracle_tests {
    use super::*;

    #[test]
    fn the_oracle_keeps_the_reference_run_of_every_case() {
        let bytes = oracle();
        let total = cases().count();
        let kept = crate::oracle::decode(&bytes, "build2", total).expect("reads back");
        for (index, case) in cases().enumerate().step_by(97) {
            let run: Result<Recorded, String> = kept.run(index).expect("a run per case");
            let want = reference_run(index, &case);
            assert_eq!(
                kit_runner::wire::encode(&run),
                kit_runner::wire::encode(&want)
            );
        }
    }
}

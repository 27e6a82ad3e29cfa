//! narrow's exhaustive comparison: every case of a bounded space, handed to the learner's
//! handler and compared with what the reference does, in every field (`detail` included:
//! a failure that goes back goes back unchanged).
//!
//! The space: seven success values (a job, and the six that look empty); every transient
//! reason × five server waits (none, 0, a fraction, a few seconds, two minutes) × with and
//! without detail; every permanent kind × four statuses (none, 200, 404, 500) × with and
//! without detail; two panics of the request. About a hundred cases.

use super::attempt::{describe_given, describe_ran, record_all, Given, Ran};
use super::checks::{meets, raise_learners_panic, values, want, why, Want};
use super::Learner;
use crate::feedback::{Feedback, CASE_MARKER};
use crate::lesson::CheckResult;
use crate::view::Field;
use kit_types::{PermanentError, PermanentKind, TransientError, TransientReason};

const WAITS: [Option<f64>; 5] = [None, Some(0.0), Some(0.5), Some(3.0), Some(120.0)];
const STATUSES: [Option<u16>; 4] = [None, Some(200), Some(404), Some(500)];
const DETAILS: [&str; 2] = ["", "GET https://api.example/jobs/3 → upstream said no"];

/// Every case, in a fixed order: successes, transient failures, permanent ones, panics.
pub(crate) fn cases() -> Vec<Given> {
    let mut out: Vec<Given> = values().into_iter().map(Given::Returns).collect();
    for reason in TransientReason::ALL {
        for wait in WAITS {
            for detail in DETAILS {
                let mut e = TransientError::new(reason).with_detail(detail);
                e.retry_after = wait;
                out.push(Given::Fails(e.into()));
            }
        }
    }
    for kind in PermanentKind::ALL {
        for status in STATUSES {
            for detail in DETAILS {
                let mut e = PermanentError::new(kind).with_detail(detail);
                e.status = status;
                out.push(Given::Fails(e.into()));
            }
        }
    }
    out.push(Given::Panics(
        "called `Option::unwrap()` on a `None` value".into(),
    ));
    out.push(Given::Panics("attempt to divide by zero".into()));
    out
}

/// Case `number` as the scenario file the check saves when it finds the first difference.
pub(crate) fn case_text(given: &Given, number: usize) -> String {
    super::scenario::to_toml(
        given,
        &format!(
            "Case {number} of narrow's exhaustive check: the first place your handle_attempt and\n\
             the reference differ. Replay it: {}",
            crate::feedback::REPLAY_COMMAND
        ),
    )
}

/// Whether `text` is exactly the file the check saves for some case: that case's number.
pub(crate) fn saved_case(text: &str) -> Option<usize> {
    crate::feedback::saved_case_number(text, " of narrow's exhaustive check:", |n| {
        Some(case_text(cases().get(n.checked_sub(1)?)?, n))
    })
}

/// The reference's run of 0-based case `index`, `given`, in this process (the judge's).
#[cfg(feature = "answers")]
fn reference_ran(_index: usize, given: &Given) -> Ran {
    match super::reference() {
        Learner::Here(f) => kit_runner::narrow::run(f, given),
        Learner::Runner(_) => unreachable!("the reference runs here"),
    }
}

/// The reference's run of 0-based case `index`, read from the oracle of a copy of the kit
/// without the answers ([`crate::oracle`]).
#[cfg(not(feature = "answers"))]
fn reference_ran(index: usize, _given: &Given) -> Ran {
    crate::oracle::oracle_run!("narrow", cases().len(), index)
}

/// The reference's run of every case, as the bytes a copy of the kit without the answers
/// reads ([`crate::oracle::decode`]).
pub(crate) fn oracle() -> Vec<u8> {
    let runs: Vec<Vec<u8>> = cases()
        .iter()
        .enumerate()
        .map(|(index, given)| kit_runner::wire::encode(&reference_ran(index, given)))
        .collect();
    crate::oracle::encode("narrow", runs.into_iter())
}

/// The check: the first case where the learner's handler and the reference differ fails it.
pub fn check(learner: &Learner) -> CheckResult {
    let cases = cases();
    let runs = record_all(learner, &cases);
    for (i, (given, ran)) in cases.iter().zip(&runs).enumerate() {
        raise_learners_panic(given, ran);
        let ours = reference_ran(i, given);
        // The rule, written out, and the reference agree; a case where they did not would be
        // the kit's bug, and is compared with the reference all the same.
        let same_as_reference = ran.calls == ours.calls
            && match (&ran.ended, &ours.ended) {
                (Ok(a), Ok(b)) => super::attempt::same_returned(a, b),
                (Err(a), Err(b)) => a.message == b.message,
                _ => false,
            };
        if same_as_reference {
            continue;
        }
        let number = i + 1;
        let rule = if meets(ran, &want(given)) {
            "the reference differs here.".to_string()
        } else {
            why(given, ran)
        };
        let summary = format!(
            "Case {number} of {}: handle_attempt gave {}; the reference gives {}.",
            cases.len(),
            describe_ran(ran),
            describe_ran(&ours)
        );
        let expected = match want(given) {
            Want::Returns(_) | Want::Unwinds(_) => describe_ran(&ours),
        };
        return Err(format!(
            "{}\n\n{}\n\n{CASE_MARKER}\n{}",
            Feedback::new(summary, rule)
                .input(vec![Field::line("attempt", describe_given(given))])
                .did(vec![Field::line("handler", describe_ran(ran))])
                .expected(vec![Field::line("handler", expected)])
                .first_difference()
                .render(),
            crate::feedback::REPLAY,
            case_text(given, number)
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_space_holds_every_kind_of_attempt_and_the_reference_meets_the_rule_on_each() {
        let cases = cases();
        assert_eq!(cases.len(), 7 + 4 * 5 * 2 + 6 * 4 * 2 + 2);
        for (i, given) in cases.iter().enumerate() {
            assert!(meets(&reference_ran(i, given), &want(given)), "{given:?}");
        }
        assert_eq!(check(&super::super::reference()), Ok(()));
    }

    #[test]
    fn a_saved_case_is_recognised_by_its_number() {
        let cases = cases();
        let text = case_text(&cases[9], 10);
        assert_eq!(saved_case(&text), Some(10));
        assert_eq!(saved_case(&format!("{text}# edited\n")), None);
    }
}

#[cfg(all(test, feature = "answers"))]
mod oracle_tests {
    use super::*;

    #[test]
    fn the_oracle_keeps_the_reference_run_of_every_case() {
        let bytes = oracle();
        let cases = cases();
        let kept = crate::oracle::decode(&bytes, "narrow", cases.len()).expect("reads back");
        for (index, given) in cases.iter().enumerate() {
            let run: Ran = kept.run(index).expect("a run per case");
            let want = reference_ran(index, given);
            assert_eq!(
                kit_runner::wire::encode(&run),
                kit_runner::wire::encode(&want)
            );
        }
    }
}

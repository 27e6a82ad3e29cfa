//! The exhaustive comparison: every case of a bounded space, run on the learner's code and
//! on the reference, compared call for call.
//!
//! The space:
//! - **Policies**: a grid of valid ones (1 to 5 attempts; zero, capped, equal and 60-second
//!   delays) and every kind of invalid one (method, attempts 0 and 6, NaN, infinite,
//!   negative and just-above-60 delays, base above max, several problems at once).
//! - **Scripts**: every sequence of outcomes up to `max_attempts + 1` long, where each
//!   position before the last is a transient failure and the last is a transient failure
//!   (repeated for every further call), a success or a permanent failure.
//!   Each transient failure ranges over every reason × every server wait (none, 0, below
//!   the backoff, between backoff and budget, equal to the budget, just above it, NaN,
//!   negative, infinite): at every position for policies of one or two attempts, and at the
//!   first position for longer ones. There, positions 2 and 3 range over every server wait
//!   with the reason rotating, and later positions over "no wait" and "above the budget",
//!   which keeps the space near 260,000 cases (every sequence over the full alphabet would
//!   be tens of millions for five attempts).
//!
//! Cases come shortest first, so the first difference is a smallest one.

use super::recording::{record, Recording, Script};
use super::scenario::Scenario;
use super::{Learner, Reply};
use crate::panics::{is_stub_panic, panic_message, CheckFailure};
use crate::view::ScenarioRun;
use kit_types::{
    PermanentError, PermanentKind, RequestError, RetryPolicy, TransientError, TransientReason,
};
use serde_json::json;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The longest script: `max_attempts + 1` for five attempts.
const LONGEST: usize = 6;

/// One case: a policy and a script.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// The policy.
    pub policy: RetryPolicy,
    /// What request returns.
    pub script: Script,
}

impl Case {
    /// The case as a scenario file.
    pub fn to_scenario(&self) -> Scenario {
        Scenario {
            policy: self.policy.clone(),
            script: self.script.clone(),
        }
    }
}

fn policy(method: &str, max_attempts: u32, base_delay: f64, max_delay: f64) -> RetryPolicy {
    RetryPolicy {
        method: method.to_string(),
        max_attempts,
        base_delay,
        max_delay,
    }
}

/// The valid policies of the grid.
pub fn valid_policies() -> Vec<RetryPolicy> {
    vec![
        policy("GET", 1, 0.25, 2.0),
        policy("GET", 2, 0.0, 0.0),
        policy("GET", 2, 0.25, 2.0),
        policy("GET", 3, 0.25, 2.0),
        policy("GET", 3, 0.5, 0.5),
        policy("GET", 4, 60.0, 60.0),
        policy("GET", 5, 1.0, 1.5),
    ]
}

/// The invalid policies of the grid: every check of the validation order, alone and mixed.
pub fn invalid_policies() -> Vec<RetryPolicy> {
    let above = 60.0f64.next_up();
    let mut list = vec![
        policy("POST", 3, 0.25, 2.0),
        policy("get", 3, 0.25, 2.0),
        policy("", 3, 0.25, 2.0),
        policy("GET", 0, 0.25, 2.0),
        policy("GET", 6, 0.25, 2.0),
        policy("GET", 3, 0.5, 0.25),
        policy("GET", 3, 60.0, 0.0),
        policy("POST", 0, f64::NAN, -1.0),
        policy("GET", 0, f64::NAN, -1.0),
        policy("GET", 3, 61.0, f64::NAN),
    ];
    for bad in [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        -0.5,
        above,
        1e300,
    ] {
        list.push(policy("GET", 3, bad, 2.0));
        list.push(policy("GET", 3, 0.0, bad));
    }
    list
}

/// The server waits tried at a position, for `p`.
fn waits(p: &RetryPolicy) -> [Option<f64>; 9] {
    [
        None,
        Some(0.0),
        Some(p.base_delay * 0.5),
        Some((p.base_delay + p.max_delay) * 0.5 + 0.125),
        Some(p.max_delay),
        Some(p.max_delay.next_up()),
        Some(f64::NAN),
        Some(-1.0),
        Some(f64::INFINITY),
    ]
}

fn transient(reason: TransientReason, wait: Option<f64>) -> Result<Reply, RequestError> {
    let mut e = TransientError::new(reason);
    e.retry_after = wait;
    Err(e.into())
}

/// The transient outcomes tried at 1-based `position`.
fn transients(p: &RetryPolicy, position: usize) -> Vec<Result<Reply, RequestError>> {
    let all = waits(p);
    let rotate = |j: usize| TransientReason::ALL[(position + j) % TransientReason::ALL.len()];
    // Policies of one or two attempts are small enough to try every reason with every wait
    // at every position; longer ones rotate the reason after the first position.
    let full = position == 1 || p.max_attempts <= 2;
    match position {
        _ if full => TransientReason::ALL
            .iter()
            .flat_map(|r| all.iter().map(move |w| transient(*r, *w)))
            .collect(),
        2 | 3 => all
            .iter()
            .enumerate()
            .map(|(j, w)| transient(rotate(j), *w))
            .collect(),
        _ => [None, Some(p.max_delay.next_up())]
            .into_iter()
            .enumerate()
            .map(|(j, w)| transient(rotate(j), w))
            .collect(),
    }
}

/// The outcomes that end a script at 1-based `position`.
fn endings(position: usize) -> [Result<Reply, RequestError>; 2] {
    let kind = PermanentKind::ALL[position % PermanentKind::ALL.len()];
    [
        Ok(json!({ "job_id": format!("fresh_{position}"), "call": position })),
        Err(PermanentError::new(kind)
            .with_status(400 + position as u16)
            .into()),
    ]
}

/// Every case, shortest scripts first.
pub fn cases() -> impl Iterator<Item = Case> {
    let invalid = invalid_policies().into_iter().flat_map(|policy| {
        let scripts = [
            Script::repeating(vec![Ok(json!({"job_id": "fresh_1"}))]),
            Script::repeating(vec![transient(TransientReason::ServerError, None)]),
            Script::repeating(vec![Err(
                PermanentError::new(PermanentKind::NotFound).into()
            )]),
        ];
        scripts.into_iter().map(move |script| Case {
            policy: policy.clone(),
            script,
        })
    });
    let valid = (1..=LONGEST).flat_map(|len| {
        valid_policies()
            .into_iter()
            .filter(move |p| len <= p.max_attempts as usize + 1)
            .flat_map(move |p| scripts_of_length(p, len))
    });
    invalid.chain(valid)
}

fn scripts_of_length(policy: RetryPolicy, len: usize) -> impl Iterator<Item = Case> {
    let mut columns: Vec<Vec<Result<Reply, RequestError>>> =
        (1..len).map(|pos| transients(&policy, pos)).collect();
    let mut last = transients(&policy, len);
    last.extend(endings(len));
    columns.push(last);
    let total: usize = columns.iter().map(Vec::len).product();
    (0..total).map(move |mut index| {
        // A mixed-radix counter: the last position varies fastest.
        let mut steps = vec![Ok(Reply::Null); columns.len()];
        for (slot, column) in steps.iter_mut().zip(&columns).rev() {
            *slot = column[index % column.len()].clone();
            index /= column.len();
        }
        Case {
            policy: policy.clone(),
            script: Script::repeating(steps),
        }
    })
}

/// The first case where the learner's run differs from the reference's.
#[derive(Debug, Clone)]
pub struct Difference {
    /// Its 1-based number in [`cases`] order.
    pub number: usize,
    /// The case.
    pub case: Case,
    /// The learner's run, rendered.
    pub learner: ScenarioRun,
    /// The reference's run, rendered.
    pub reference: ScenarioRun,
}

/// Runs every case on `imp` and on the reference. `Ok(n)`: all `n` cases agree.
///
/// A learner's `todo!()` propagates (the harness reports it as unfinished); any other
/// panic, and a runaway loop caught by the call guard, is a difference.
pub fn compare(imp: &Learner) -> Result<usize, Box<Difference>> {
    compare_with_progress(imp, &AtomicUsize::new(0))
}

/// [`compare`], storing the number of the case under way in `progress` before each run.
pub fn compare_with_progress(
    imp: &Learner,
    progress: &AtomicUsize,
) -> Result<usize, Box<Difference>> {
    let reference = super::reference();
    let mut count = 0;
    for (i, case) in cases().enumerate() {
        count += 1;
        progress.store(i + 1, Ordering::SeqCst);
        let theirs = guarded_record(imp, &case);
        let ours = guarded_record(&reference, &case);
        let same = match (&theirs, &ours) {
            (Ok(a), Ok(b)) => a.same_as(b),
            _ => false,
        };
        if !same {
            let scenario = case.to_scenario();
            return Err(Box::new(Difference {
                number: i + 1,
                learner: render(imp, &scenario, theirs),
                reference: render(&reference, &scenario, ours),
                case,
            }));
        }
    }
    Ok(count)
}

fn guarded_record(imp: &Learner, case: &Case) -> Result<Recording, String> {
    let run = panic::catch_unwind(AssertUnwindSafe(|| {
        record(imp, &case.policy, &case.script, None)
    }));
    match run {
        Ok((rec, None)) => Ok(rec),
        Ok((_, Some(payload))) => {
            let message = panic_message(payload.as_ref());
            if is_stub_panic(&message) {
                panic::resume_unwind(payload);
            }
            Err(format!("panicked: {message}"))
        }
        Err(payload) => match payload.downcast_ref::<CheckFailure>() {
            Some(CheckFailure(message)) => Err(format!("error: {message}")),
            None => Err(format!("panicked: {}", panic_message(payload.as_ref()))),
        },
    }
}

fn render(imp: &Learner, scenario: &Scenario, recorded: Result<Recording, String>) -> ScenarioRun {
    match recorded {
        // The scenario runner renders the same recording the same way every time.
        Ok(_) => super::scenario::run(imp, scenario),
        Err(ending) => ScenarioRun::stopped(ending),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_space_is_bounded_and_ordered_shortest_first() {
        let mut count = 0;
        let mut longest_so_far = 0;
        for case in cases() {
            count += 1;
            let len = case.script.steps.len();
            assert!(len >= longest_so_far, "shortest first");
            longest_so_far = len;
            assert!(len <= case.policy.max_attempts.max(1) as usize + 1);
        }
        assert!((200_000..400_000).contains(&count), "{count} cases");
    }

    #[test]
    fn two_attempt_policies_get_every_pair_of_failures() {
        let pairs = cases()
            .filter(|c| c.policy.max_attempts == 2 && c.policy.base_delay == 0.25)
            .filter(|c| c.script.steps.len() == 3)
            .count();
        assert_eq!(pairs, 36 * 36 * 38);
    }

    #[test]
    fn every_reason_meets_every_wait_on_the_first_call() {
        let firsts: Vec<_> = cases()
            .filter(|c| c.policy == RetryPolicy::default() && c.script.steps.len() == 1)
            .collect();
        assert_eq!(firsts.len(), 4 * 9 + 2);
    }

    #[test]
    fn the_reference_agrees_with_itself() {
        assert!(compare(&super::super::reference()).is_ok());
    }
}

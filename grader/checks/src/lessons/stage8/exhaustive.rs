//! The exhaustive comparison: every case of a bounded space, run on the learner's
//! `lookup_availability` and on the reference, each on a fresh gateway, compared in
//! everything the gateway shows: each lookup's result, every provider call (its timeout,
//! time and order), every sleep, the counters, the breaker and the clock after each lookup.
//!
//! The space (`kit_runner::stage8::space`, inputs only): six configurations × two lookup
//! plans (one lookup; a breaker's whole cycle: opened, rejecting, cooled down, probed,
//! and one more lookup) × provider scripts over thirteen replies (answers fast and slow,
//! 502/503/504 with and without Retry-After — `1`, `0`, `3600`, and `0.5`, which is not
//! delay-seconds —, a connection failure, an answer slower than any timeout, 404, 429,
//! 400, 500): every reply alone, every pair, every triple ending in an answer or a 503 (on
//! four of the configurations), and runs of one transient reply long enough to open the
//! breaker before every reply. 5,824 cases, shortest scripts first, so the first
//! difference is a smallest one. Lookups run one after the other, on one thread: the
//! concurrent ones are `counters::concurrent_lookups_add_up`'s.
//!
//! A sleep of 0 s is left out of the comparison: it moves no clock, and skipping it is no
//! mistake of the lesson's.
//!
//! The learner's side runs where the learner's code runs (a runner, in a grade) and tells
//! a digest of each case's run; the reference's digests are the judge's: handed over by
//! the grader ([`reference_digests`], made once per state of the kit) or made here.

use super::scenario::{self, GatewayScenario};
use super::Learner;
use crate::panics::{is_stub_panic, panic_message, CheckFailure};
use crate::view::ScenarioRun;
use kit_runner::remote::Runner;
use kit_runner::secs::same_secs;
use kit_runner::stage8::space::{self, Case, CaseRun, Space, ITEM};
use kit_runner::stage8::{Ask, Ending, Told};
use kit_runner::wire;
use kit_types::gateway::fakes::{Call, Sleep};
use kit_types::gateway::Counters;
#[cfg(feature = "answers")]
use kit_types::graded::LookupFn;
use kit_types::{BreakerState, Lookup, Outcome};
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The reference, as the function type the space runs.
#[cfg(feature = "answers")]
const REFERENCE: LookupFn = reference::lookup_availability;

/// Case number `number` (1-based), if the space has it.
pub fn case(number: usize) -> Option<Case> {
    Space::new().case(number.checked_sub(1)?)
}

/// The number of cases.
pub fn total() -> usize {
    space::total()
}

/// Case `number` as the scenario file the check saves when it finds the first difference
/// there.
pub fn case_text(case: &Case, number: usize) -> String {
    to_scenario(case).to_toml(&format!(
        "Case {number} of stage8's exhaustive check: the first place your lookup_availability\n\
         and the reference differ. Replay it: {}",
        crate::feedback::REPLAY_COMMAND
    ))
}

/// Whether `text` is exactly the file the check saves for some case of the space: that
/// case's number ([`crate::lesson::Lesson::saved_case`]).
pub(crate) fn saved_case(text: &str) -> Option<usize> {
    crate::feedback::saved_case_number(text, " of stage8's exhaustive check:", |n| {
        Some(case_text(&case(n)?, n))
    })
}

/// A case as a scenario file's contents (`cargo run -p grader -- scenario FILE` replays it).
pub(crate) fn to_scenario(case: &Case) -> GatewayScenario {
    GatewayScenario::new(
        case.config.clone(),
        case.afters
            .iter()
            .map(|after| (ITEM.to_string(), *after))
            .collect(),
        case.replies.clone(),
        true,
    )
}

/// The first case where the learner's gateway differs from the reference's.
#[derive(Debug, Clone)]
pub struct Difference {
    /// Its 1-based number in the space's order.
    pub(crate) number: usize,
    /// The case.
    pub(crate) case: Case,
    /// The first thing that differs, in words (`lookup 2: the learner's … ; the reference's …`).
    pub(crate) first: String,
    /// The named check or rule closest to that difference.
    pub(crate) closest: &'static str,
    /// The learner's run, rendered.
    pub(crate) learner: ScenarioRun,
    /// The reference's run, rendered.
    pub(crate) reference: ScenarioRun,
}

/// The reference's run of every case, as digests ([`space::digest`]): the grader makes them
/// once ([`reference_digests`]) and hands them to the check, which then runs only the
/// learner's code on a case whose digest matches. Without them (a harness run by hand, the
/// kit's own tests) the check runs the reference itself.
pub(crate) use crate::digests::Digests;

/// The first line of [`reference_digests`]' bytes: what they are, in which layout, and
/// from which state of the checks and the reference (see `grader/checks/build.rs`).
const DIGESTS_HEADER: &[u8] = concat!(
    "kit stage8 exhaustive reference digests v1 ",
    env!("KIT_CHECKS_STATE"),
    "\n"
)
.as_bytes();

/// Reads the bytes [`reference_digests`] made (`Digests::decode`).
pub fn decode_digests(bytes: &[u8]) -> Option<Digests> {
    let space = Space::new();
    Digests::decode(bytes, DIGESTS_HEADER, space.total(), |index| {
        reference_digest_of(&space, index)
    })
}

/// The reference's digest of 0-based case `index`, made here.
#[cfg(feature = "answers")]
fn reference_digest_of(space: &Space, index: usize) -> Option<u64> {
    let case = space.case(index)?;
    space::digest(&space::run_case(REFERENCE, &case).ok()?)
}

/// The reference's run of 0-based case `index`, `case`, as the judge compares it in full.
#[cfg(feature = "answers")]
fn reference_looked(_index: usize, case: &Case) -> Result<Vec<Looked>, String> {
    record(&super::reference(), case)
}

/// The reference's run of 0-based case `index`, shown as a scenario run (`scenario`).
#[cfg(feature = "answers")]
fn reference_shown(_index: usize, scenario: &GatewayScenario) -> ScenarioRun {
    scenario::run(&super::reference(), scenario)
}

/// The reference's side of 0-based case `index` in a copy of the kit without the answers,
/// read from its oracle ([`crate::oracle`]): the digest, the run, the run shown (as JSON).
#[cfg(not(feature = "answers"))]
fn from_oracle(index: usize) -> OracleEntry {
    crate::oracle::oracle_run!("stage8", space::total(), index)
}

/// The reference's digest of 0-based case `index`, from the oracle.
#[cfg(not(feature = "answers"))]
fn reference_digest_of(_space: &Space, index: usize) -> Option<u64> {
    from_oracle(index).0
}

/// The reference's run of 0-based case `index`, from the oracle.
#[cfg(not(feature = "answers"))]
fn reference_looked(index: usize, _case: &Case) -> Result<Vec<Looked>, String> {
    from_oracle(index).1 .0
}

/// The reference's run of 0-based case `index` shown as a scenario run, from the oracle.
#[cfg(not(feature = "answers"))]
fn reference_shown(index: usize, _scenario: &GatewayScenario) -> ScenarioRun {
    let shown = from_oracle(index).1 .1;
    serde_json::from_str(&shown).unwrap_or_else(|_| {
        panic!("the kit's own error: its stage8 oracle holds no run shown for case {index}")
    })
}

/// The reference's side of one case in the oracle: the digest of its run, the run as the
/// judge compares it, and the run shown as a scenario run (as JSON).
type OracleEntry = (Option<u64>, (Result<Vec<Looked>, String>, String));

/// The reference's side of every case, as the bytes a copy of the kit without the answers
/// reads ([`crate::oracle::decode`]).
pub(crate) fn oracle() -> Vec<u8> {
    let space = Space::new();
    let runs: Vec<Vec<u8>> = (0..space.total())
        .map(|index| {
            let case = space
                .case(index)
                .expect("every index below the total is a case");
            let shown = reference_shown(index, &to_scenario(&case));
            let entry: OracleEntry = (
                reference_digest_of(&space, index),
                (
                    reference_looked(index, &case),
                    serde_json::to_string(&shown).unwrap_or_default(),
                ),
            );
            wire::encode(&entry)
        })
        .collect();
    crate::oracle::encode("stage8", runs.into_iter())
}

/// Runs the reference on every case and returns the digests of its runs as bytes for
/// [`decode_digests`]. The grader calls it once per state of the checks and the reference,
/// keeps the bytes, and writes them to the exhaustive check's standard input.
pub fn reference_digests() -> Vec<u8> {
    let space = Space::new();
    let total = space.total();
    let digests = (0..total).map(|index| reference_digest_of(&space, index).unwrap_or(0));
    crate::digests::encode(DIGESTS_HEADER, total, digests)
}

/// How many cases the learner's side is asked for at a time: a runner's answer to one
/// question, and a step of the progress a stall is measured by.
const CHUNK: usize = 1024;

/// Runs every case on `imp` and on the reference; `Ok(n)`: all `n` cases agree. `progress`
/// grows while work goes on: by one per case judged, and per case the learner's side starts.
/// `under_way` holds the 1-based number of the case the learner's side runs here (a runner
/// marks its own on its page instead).
///
/// A learner's `todo!()` comes out as it went in (the harness reports it as unfinished);
/// any other panic, and a guard's stop, is a difference.
pub fn compare(
    imp: &Learner,
    progress: &AtomicUsize,
    under_way: &AtomicUsize,
    known: Option<&Digests>,
) -> Result<usize, Box<Difference>> {
    let space = Space::new();
    let total = space.total();
    let mut start = 0;
    while start < total {
        let count = CHUNK.min(total - start);
        let runs = learner_runs(imp, start, count, progress, under_way);
        let answered = runs.len();
        for (offset, run) in runs.into_iter().enumerate() {
            let index = start + offset;
            progress.fetch_add(1, Ordering::Relaxed);
            let same = match run {
                CaseRun::Ended(Ending::Panicked(reported)) if is_stub_panic(&reported.message) => {
                    panic::resume_unwind(Box::new(reported))
                }
                CaseRun::Ended(_) => false,
                CaseRun::Digest(digest) => {
                    let ours = known
                        .and_then(|k| k.get(index))
                        .or_else(|| reference_digest_of(&space, index));
                    // A digest that differs may still be the same run, a few ulps apart
                    // somewhere: compare in full the run of the case asked for again, which
                    // must be the run that gave this digest (a run that comes out right only
                    // when asked alone is no match: the difference then says the run
                    // changes from one time to the next).
                    Some(digest) == ours || same_in_full(imp, &space, index, digest, under_way)
                }
            };
            if !same {
                return Err(difference(imp, index));
            }
        }
        if answered < count {
            // Only a case that reached todo!() ends a stretch early, and it was raised above;
            // a runner that says less than it was asked is judged on the case it left out.
            return Err(difference(imp, start + answered));
        }
        start += count;
    }
    Ok(total)
}

/// The learner's runs of cases `start..start + count`: here, or asked of its runner (never
/// more runs than cases asked, at least one). While a runner works, each case it marks as
/// started moves `progress` on: a stretch of slow cases is no stall, and a stall is one case.
fn learner_runs(
    imp: &Learner,
    start: usize,
    count: usize,
    progress: &AtomicUsize,
    under_way: &AtomicUsize,
) -> Vec<CaseRun> {
    let runner = match imp {
        // One case at a time, each counted as it ends: a stall names the case under way.
        Learner::Here(f) => {
            let space = Space::new();
            let mut runs = Vec::with_capacity(count);
            for index in start..(start + count).min(space.total()) {
                under_way.store(index + 1, Ordering::Relaxed);
                let Some(run) = space::run_one(*f, &space, index) else {
                    break;
                };
                progress.fetch_add(1, Ordering::Relaxed);
                let stub = matches!(&run, CaseRun::Ended(Ending::Panicked(p))
                    if is_stub_panic(&p.message));
                runs.push(run);
                if stub {
                    break;
                }
            }
            return runs;
        }
        Learner::Runner(runner) => runner,
    };
    // Every few milliseconds while the runner works, a change of its mark counts as
    // progress: a stall then means a case that never ended.
    let mut seen = 0;
    let watch = || {
        let mark = runner.marks().map_or(0, |m| m[0]);
        if mark != seen {
            seen = mark;
            progress.fetch_add(1, Ordering::Relaxed);
        }
    };
    ask_stretch(runner, start, count, watch)
}

fn ask_stretch(runner: &Runner, start: usize, count: usize, watch: impl FnMut()) -> Vec<CaseRun> {
    let ask = wire::encode(&Ask::Space { start, count });
    runner.ask_ticking(&ask, std::time::Duration::from_millis(5), watch, |bytes| {
        // No more runs than cases asked: read before the rest is decoded.
        let claimed = bytes.get(1..9)?.try_into().ok().map(u64::from_le_bytes)?;
        if bytes.first() != Some(&4) || claimed > count as u64 {
            return None;
        }
        match wire::decode(bytes)? {
            Told::Space(runs) if (1..=count).contains(&runs.len()) => Some(runs),
            _ => None,
        }
    })
}

/// What one lookup of a case did, as the judge compares it in full.
#[derive(Debug, Clone, PartialEq)]
struct Looked {
    /// Its result, or how it ended (in words).
    ran: Result<Lookup, String>,
    calls: Vec<Call>,
    sleeps: Vec<Sleep>,
    counters: Counters,
    breaker: BreakerState,
    now: f64,
}

kit_runner::wire::wire_struct!(Looked {
    ran,
    calls,
    sleeps,
    counters,
    breaker,
    now,
});

/// Runs `case` on `imp` through the checks' own gateway ([`super::gateway::Observed`]), a
/// lookup at a time, and records everything each lookup showed. A `todo!()` goes on as it
/// came.
fn record(imp: &Learner, case: &Case) -> Result<Vec<Looked>, String> {
    let scenario = to_scenario(case);
    let setup = case.setup();
    let gateway =
        super::gateway::Observed::start(imp, scenario.config.clone(), setup.script.clone())?;
    let mut looked = Vec::new();
    for after in &case.afters {
        gateway.advance(*after);
        let (calls_before, sleeps_before) = (gateway.calls().len(), gateway.sleeps().len());
        let ran = panic::catch_unwind(AssertUnwindSafe(|| gateway.lookup(ITEM)));
        let ran = ran.map_err(|payload| {
            if let Some(CheckFailure(message)) = payload.downcast_ref::<CheckFailure>() {
                return format!("stopped: {message}");
            }
            let message = panic_message(payload.as_ref());
            if is_stub_panic(&message) {
                panic::resume_unwind(payload);
            }
            format!("panicked: {message}")
        });
        let ended = ran.is_err();
        looked.push(Looked {
            ran,
            calls: gateway.calls().split_off(calls_before),
            // A sleep of 0 s moves no clock and the lesson asks for none (as the digest).
            sleeps: gateway
                .sleeps()
                .split_off(sleeps_before)
                .into_iter()
                .filter(|s| !space::idle(s))
                .collect(),
            counters: gateway.counters(),
            breaker: gateway.breaker(),
            now: gateway.now(),
        });
        if ended {
            break;
        }
    }
    Ok(looked)
}

/// Whether the learner's run of 0-based case `index`, whose digest was `digest`, is the
/// reference's, compared in full (times to a few ulps). The case is run again, as the
/// space runs it, and told in full; that run is the one compared, and its digest must be
/// `digest`: the run judged is the run that was sent, whatever the learner's code keeps
/// from one run to the next.
///
/// `under_way` names the case while it runs here (a runner marks its own page).
fn same_in_full(
    imp: &Learner,
    space: &Space,
    index: usize,
    digest: u64,
    under_way: &AtomicUsize,
) -> bool {
    let Some(case) = space.case(index) else {
        return false;
    };
    under_way.store(index + 1, Ordering::Relaxed);
    let Some(record) = case_in_full(imp, index, &case) else {
        return false;
    };
    if space::digest(&record) != Some(digest) {
        return false;
    }
    let theirs: Vec<Looked> = record.per_lookup().into_iter().map(Looked::from).collect();
    match reference_looked(index, &case) {
        Ok(ours) => first_difference(&case, &theirs, &ours).is_none(),
        Err(_) => false,
    }
}

/// The learner's run of 0-based case `index` (`case`), as [`space::run_case`] records it:
/// here, or asked of its runner. `None` when its gateway was refused.
fn case_in_full(imp: &Learner, index: usize, case: &Case) -> Option<space::CaseRecord> {
    match imp {
        Learner::Here(f) => space::run_case(*f, case).ok(),
        Learner::Runner(runner) => {
            let ask = wire::encode(&Ask::Case { index });
            runner
                .ask(&ask, |bytes| match wire::decode(bytes)? {
                    Told::Case(run) => Some(run),
                    _ => None,
                })
                .ok()
        }
    }
}

impl From<space::LookupRun> for Looked {
    fn from(run: space::LookupRun) -> Looked {
        Looked {
            ran: run.ran.map_err(|ending| match ending {
                Ending::Panicked(reported) => format!("panicked: {}", reported.message),
                Ending::Guard(message) | Ending::Loop(message) => format!("stopped: {message}"),
            }),
            calls: run.calls,
            sleeps: run.sleeps,
            counters: run.counters,
            breaker: run.breaker,
            now: run.now,
        }
    }
}

fn same_call(a: &Call, b: &Call) -> bool {
    a.item_id == b.item_id
        && same_secs(a.timeout, b.timeout)
        && same_secs(a.at, b.at)
        && (a.number, a.number_for_item) == (b.number, b.number_for_item)
}

fn same_breaker(a: BreakerState, b: BreakerState) -> bool {
    match (a, b) {
        (BreakerState::Open { until: x }, BreakerState::Open { until: y }) => same_secs(x, y),
        _ => a == b,
    }
}

/// The order of one lookup's calls and sleeps: `c` for a call, `s` for a sleep.
fn order(l: &Looked) -> String {
    let mut events: Vec<(u64, char)> = l
        .calls
        .iter()
        .map(|c| (c.seq, 'c'))
        .chain(l.sleeps.iter().map(|s| (s.seq, 's')))
        .collect();
    events.sort();
    events.into_iter().map(|(_, e)| e).collect()
}

fn ran_text(ran: &Result<Lookup, String>) -> String {
    match ran {
        Ok(l) => format!(
            "{}, {}",
            l.outcome,
            crate::feedback::plural(u64::from(l.attempts), "attempt")
        ),
        Err(e) => e.clone(),
    }
}

/// Calls as the difference shows them: times to the millisecond, or with every digit when
/// `exact` (for two calls that print alike to the millisecond).
fn calls_text(exact: bool, calls: &[Call]) -> String {
    let secs = |x: f64| {
        if exact {
            format!("{x:?}")
        } else {
            format!("{x:.3}")
        }
    };
    let list: Vec<String> = calls
        .iter()
        .map(|c| format!("t={} timeout {}", secs(c.at), secs(c.timeout)))
        .collect();
    format!("[{}]", list.join(", "))
}

fn sleeps_text(sleeps: &[Sleep]) -> String {
    crate::feedback::fmt_secs(&sleeps.iter().map(|s| s.secs).collect::<Vec<_>>())
}

/// Whether a call of `looked` (either run's) got a 502, 503 or 504 with a Retry-After in
/// `case`: then a difference in the pause, the calls or the outcome is most likely about
/// reading it.
fn met_retry_after(case: &Case, looked: [&Looked; 2]) -> bool {
    let last = case.replies.len().saturating_sub(1);
    looked.iter().flat_map(|l| &l.calls).any(|call| {
        let i = usize::try_from(call.number.saturating_sub(1)).map_or(last, |i| i.min(last));
        matches!(
            case.replies.get(i).map(|r| r.step_for(ITEM).reply),
            Some(Ok(r)) if (502..=504).contains(&r.status) && r.retry_after.is_some()
        )
    })
}

/// The closest rule when a Retry-After was met ([`met_retry_after`]).
const RETRY_AFTER_RULE: &str = "the retry_after:: checks and \
    budget::long_retry_after_never_extends_the_deadline: a Retry-After in delay-seconds on a \
    502, 503 or 504 makes the pause max(backoff, retry_after), and a pause that reaches the \
    deadline ends the lookup without sleeping";

/// Where two runs of `case` first part, in words, with the named check closest to it;
/// `None` when they are the same.
fn first_difference(
    case: &Case,
    theirs: &[Looked],
    ours: &[Looked],
) -> Option<(String, &'static str)> {
    for (n, (a, b)) in theirs.iter().zip(ours).enumerate() {
        let n = n + 1;
        let retry_after = met_retry_after(case, [a, b]);
        let or_retry_after = |closest: &'static str| {
            if retry_after {
                RETRY_AFTER_RULE
            } else {
                closest
            }
        };
        let part = |what: &str, yours: String, reference: String, closest: &'static str| {
            Some((
                format!("lookup {n}, {what}: yours {yours}; the reference's {reference}"),
                closest,
            ))
        };
        let rejected = |l: &Looked| {
            matches!(&l.ran, Ok(Lookup { outcome: Outcome::Failed(f), .. })
                if f.code == kit_types::FailureCode::BreakerOpen)
        };
        if rejected(a) != rejected(b) {
            return part(
                "the breaker's admission",
                ran_text(&a.ran),
                ran_text(&b.ran),
                "breaker::open_breaker_rejects_without_calling_the_provider and \
                 breaker::half_open_lets_exactly_one_probe: ask the breaker once per lookup, \
                 before any call, and report to it once after",
            );
        }
        let (ra, rb) = (a.ran.as_ref().ok(), b.ran.as_ref().ok());
        if ra.map(|l| &l.outcome) != rb.map(|l| &l.outcome) {
            return part(
                "the outcome",
                ran_text(&a.ran),
                ran_text(&b.ran),
                or_retry_after(
                    "facts::transient_failures_are_retried and the classification checks \
                     (facts::), and budget:: when the lookup ran out of time",
                ),
            );
        }
        if a.calls.len() != b.calls.len() {
            return part(
                "provider calls",
                calls_text(false, &a.calls),
                calls_text(false, &b.calls),
                or_retry_after(
                    "facts::at_most_max_attempts and \
                     budget::a_pause_that_reaches_the_deadline_ends_the_lookup",
                ),
            );
        }
        let secs = |l: &Looked| l.sleeps.iter().map(|s| s.secs).collect::<Vec<_>>();
        let same_sleeps = crate::feedback::same_waits(&secs(a), &secs(b))
            && a.sleeps
                .iter()
                .zip(&b.sleeps)
                .all(|(x, y)| same_secs(x.at, y.at));
        if let Some(i) = (0..a.calls.len()).find(|i| !same_call(&a.calls[*i], &b.calls[*i])) {
            let (x, y) = (&a.calls[i], &b.calls[i]);
            // A call that differs only in when it was made was moved by a pause before it:
            // the sleeps are the difference to show.
            let only_later = x.item_id == y.item_id
                && same_secs(x.timeout, y.timeout)
                && (x.number, x.number_for_item) == (y.number, y.number_for_item);
            if !only_later || same_sleeps {
                let (mut yours, mut theirs) = (
                    calls_text(false, &a.calls[i..=i]),
                    calls_text(false, &b.calls[i..=i]),
                );
                if yours == theirs {
                    (yours, theirs) = (
                        calls_text(true, &a.calls[i..=i]),
                        calls_text(true, &b.calls[i..=i]),
                    );
                }
                return part(
                    &format!("provider call {}", x.number),
                    yours,
                    theirs,
                    "budget::attempt_timeout_shrinks_with_the_budget: each attempt gets \
                     min(attempt_timeout, time left before the deadline)",
                );
            }
        }
        if !same_sleeps {
            return part(
                "sleeps",
                sleeps_text(&a.sleeps),
                sleeps_text(&b.sleeps),
                or_retry_after(
                    "backoff and budget::sleeps_end_before_the_deadline: the pause is \
                     min(max_delay, base_delay * 2^(n-1)), slept only when it ends before \
                     the deadline",
                ),
            );
        }
        if order(a) != order(b) {
            return part(
                "the order of calls (c) and sleeps (s)",
                order(a),
                order(b),
                "facts::fixture_503_503_200: call, then sleep before the next call",
            );
        }
        if ra.map(|l| l.attempts) != rb.map(|l| l.attempts) {
            return part(
                "the attempts reported",
                ran_text(&a.ran),
                ran_text(&b.ran),
                "facts::fixture_503_503_200: count every provider call, once, in the lookup",
            );
        }
        if a.counters != b.counters {
            let c = |c: Counters| {
                format!(
                    "logical_lookups {}, attempts {}",
                    c.logical_lookups, c.attempts
                )
            };
            return part(
                "the counters",
                c(a.counters),
                c(b.counters),
                "facts::fixture_503_503_200 and counters::concurrent_lookups_add_up: count each \
                 lookup once (rejected ones too) and each attempt once",
            );
        }
        if !same_breaker(a.breaker, b.breaker) {
            return part(
                "the breaker after it",
                format!("{:?}", a.breaker),
                format!("{:?}", b.breaker),
                "breaker::exhaustion_is_one_failure, breaker::unhealthy_failures_count and \
                 breaker::missing_and_rejections_do_not_count: the breaker hears once per \
                 lookup, a failure only for an unhealthy provider",
            );
        }
        if !same_secs(a.now, b.now) {
            return part(
                "the clock after it",
                format!("t={:.3}", a.now),
                format!("t={:.3}", b.now),
                "budget::sleeps_end_before_the_deadline",
            );
        }
        if (a.ran.is_err() || b.ran.is_err()) && a.ran != b.ran {
            return part(
                "how it ended",
                ran_text(&a.ran),
                ran_text(&b.ran),
                "the lookup must return",
            );
        }
    }
    if theirs.len() != ours.len() {
        let n = theirs.len().min(ours.len());
        return Some((
            format!(
                "yours made {} lookup(s), the reference {} (lookup {n} did not return)",
                theirs.len(),
                ours.len()
            ),
            "every lookup returns",
        ));
    }
    None
}

/// The first difference, at 0-based `index`, shown: the case run once more on each side.
fn difference(imp: &Learner, index: usize) -> Box<Difference> {
    let case = Space::new()
        .case(index)
        .expect("the comparison stops only inside the space");
    let theirs = record(imp, &case);
    let ours = reference_looked(index, &case);
    let (first, closest) = match (&theirs, &ours) {
        (Ok(a), Ok(b)) => first_difference(&case, a, b).unwrap_or_else(|| {
            (
                "the digest your run sent differs from the reference's, though the lookups \
                 run again look the same: the run differs from one time to the next"
                    .to_string(),
                "a lookup depends only on the gateway and the item: no state of your own",
            )
        }),
        (Err(e), _) | (_, Err(e)) => (
            format!("the gateway was refused: {e}"),
            "every configuration of the space is valid",
        ),
    };
    let scenario = to_scenario(&case);
    Box::new(Difference {
        number: index + 1,
        first,
        closest,
        learner: scenario::run(imp, &scenario),
        reference: reference_shown(index, &scenario),
        case,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use kit_types::FailureCode;

    #[test]
    fn the_reference_agrees_with_itself() {
        let n = compare(
            &super::super::reference(),
            &AtomicUsize::new(0),
            &AtomicUsize::new(0),
            None,
        )
        .unwrap();
        assert_eq!(n, total());
    }

    #[test]
    fn handed_digests_are_taken_and_guarded() {
        let bytes = reference_digests();
        let known = decode_digests(&bytes).expect("the reference's own digests are taken");
        let n = compare(
            &super::super::reference(),
            &AtomicUsize::new(0),
            &AtomicUsize::new(0),
            Some(&known),
        );
        assert_eq!(n.ok(), Some(total()));
        assert!(decode_digests(&bytes[1..]).is_none(), "no header");
        assert!(
            decode_digests(&bytes[..bytes.len() - 8]).is_none(),
            "a case short"
        );
        // Every digest shifted by one case: the spot checks catch it.
        let header = DIGESTS_HEADER.len();
        let mut shifted = bytes[..header].to_vec();
        shifted.extend_from_slice(&bytes[header + 8..]);
        shifted.extend_from_slice(&bytes[header..header + 8]);
        assert!(decode_digests(&shifted).is_none(), "digests of other runs");
    }

    #[test]
    fn a_case_told_in_full_is_what_the_checks_gateway_records() {
        // The run compared in full when a digest differs is told by the space's own run of
        // the case; the difference shown is recorded through the checks' gateway. For the
        // same code they must be the same, lookup by lookup.
        let space = Space::new();
        for index in (0..space.total()).step_by(7) {
            let case = space.case(index).expect("a case");
            let told = space::run_case(REFERENCE, &case).expect("a valid gateway");
            let theirs: Vec<Looked> = told.per_lookup().into_iter().map(Looked::from).collect();
            let recorded = record(&super::super::reference(), &case).expect("recorded");
            assert_eq!(theirs, recorded, "case {}", index + 1);
            assert!(space::digest(&told).is_some(), "case {}", index + 1);
        }
    }

    /// Reports a rejected lookup as the provider's unavailability: a difference only where
    /// the breaker is open, in the second plan.
    fn rejection_as_unavailable(g: &super::super::TestGateway, item: &str) -> Lookup {
        let mut l = reference::lookup_availability(g, item);
        if let Outcome::Failed(f) = &mut l.outcome {
            if f.code == FailureCode::BreakerOpen {
                *f = kit_types::Failure::new(FailureCode::ProviderUnavailable);
            }
        }
        l
    }

    #[test]
    fn the_first_difference_is_the_smallest_numbered_one() {
        let wrong = Learner::Here(rejection_as_unavailable);
        let space = Space::new();
        let differs = |i: usize| match space::run_one(rejection_as_unavailable, &space, i) {
            Some(CaseRun::Digest(d)) => {
                Some(d) != reference_digest_of(&space, i)
                    && !same_in_full(&wrong, &space, i, d, &AtomicUsize::new(0))
            }
            _ => true,
        };
        let expected = (0..space.total())
            .find(|i| differs(*i))
            .expect("differs somewhere");
        let d = compare(&wrong, &AtomicUsize::new(0), &AtomicUsize::new(0), None)
            .expect_err("a difference");
        assert_eq!(d.number, expected + 1);
        assert!(d.first.contains("lookup "), "{}", d.first);
        assert!(d.closest.contains("breaker::"), "{}", d.closest);
    }
}

#[cfg(all(test, feature = "answers"))]
mod oracle_tests {
    use super::*;

    #[test]
    fn the_oracle_keeps_the_reference_side_of_every_case() {
        let bytes = oracle();
        let space = Space::new();
        let kept = crate::oracle::decode(&bytes, "stage8", space.total()).expect("reads back");
        for index in (0..space.total()).step_by(61) {
            let case = space.case(index).expect("a case");
            let (digest, (looked, shown)): OracleEntry = kept.run(index).expect("an entry");
            assert_eq!(digest, reference_digest_of(&space, index), "case {index}");
            assert_eq!(looked, reference_looked(index, &case), "case {index}");
            let shown: ScenarioRun = serde_json::from_str(&shown).expect("the run shown");
            assert_eq!(
                shown,
                reference_shown(index, &to_scenario(&case)),
                "case {index}"
            );
        }
    }
}

//! stage8's exhaustive space: every case of it, and one case's run on a fresh gateway
//! told as a digest. Inputs and observations only: what the reference does on them is the
//! judge's (`grader-checks`), never here.
//!
//! A case is a gateway configuration, a provider script (a list of replies, the last one
//! repeated for every further call) and a plan of lookups, one after the other on one
//! thread. The space, in order (shortest scripts first, so that the first difference found
//! is a smallest one):
//!
//! - `configs`: six configurations (the lesson's defaults; one attempt; two attempts that
//!   fill the deadline; zero delays with a cool-down of 0; a deadline shorter than the first
//!   backoff; a long deadline with four attempts).
//! - `plans`: one lookup; and a breaker's cycle: `failure_threshold + 1` lookups at once,
//!   then one halfway through the cool-down, one at its end (the probe) and one more.
//! - scripts over the `ALPHABET` of thirteen replies: every reply alone; every pair; every
//!   triple whose third is one of `LAST` (on four of the configurations); and runs of one
//!   transient reply, 4 or 9 calls long, enough to open the breaker, followed by every reply
//!   (so that the probe meets each).
//!
//! That is [`total`] = 5,824 cases: 156 + 2,028 + 2,704 + 936. The size is a choice of
//! speed: a correct lookup runs them all in well under 0.1 s on each side.

use super::session::{Payload, Reply, Script, Session, Setup, Standing};
use super::Ending;
use kit_types::gateway::fakes::{Call, Sleep, Step};
use kit_types::gateway::Counters;
use kit_types::graded::LookupFn;
use kit_types::{BreakerState, GatewayConfig, Lookup, Outcome, TransportFailure};

/// The item every lookup of the space asks for.
pub const ITEM: &str = "bike-7";

/// One case: a configuration, the provider's replies (the last repeats) and the lookups.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// The gateway's configuration.
    pub config: GatewayConfig,
    /// What call n gets: `replies[n - 1]`, and the last one for every further call.
    pub replies: Vec<Reply>,
    /// The lookups of [`ITEM`], in order: the seconds the clock moves before each.
    pub afters: Vec<f64>,
}

impl Case {
    /// The gateway the case runs on.
    pub fn setup(&self) -> Setup {
        Setup {
            config: self.config.clone(),
            per_thread: false,
            script: Script::Outcomes {
                replies: self.replies.clone(),
                forever: true,
            },
        }
    }
}

fn config(
    deadline: f64,
    max_attempts: u32,
    attempt_timeout: f64,
    (base_delay, max_delay): (f64, f64),
    failure_threshold: u32,
    open_for: f64,
) -> GatewayConfig {
    GatewayConfig {
        deadline,
        max_attempts,
        attempt_timeout,
        base_delay,
        max_delay,
        failure_threshold,
        open_for,
    }
}

/// The configurations of the space. Apart from the lesson's defaults their times are sums
/// of powers of two, so that any order of the same arithmetic gives the same bits.
pub(crate) fn configs() -> Vec<GatewayConfig> {
    vec![
        GatewayConfig::default(),
        config(2.0, 1, 0.5, (0.125, 0.5), 2, 1.0),
        config(1.0, 2, 0.5, (0.25, 0.25), 1, 2.0),
        config(0.5, 5, 0.125, (0.0, 0.0), 2, 0.0),
        config(0.25, 3, 1.0, (0.5, 1.0), 1, 1.0),
        config(4.0, 4, 1.0, (0.5, 1.0), 2, 5.0),
    ]
}

/// The lookup plans for `config`: the seconds the clock moves before each lookup.
pub(crate) fn plans(config: &GatewayConfig) -> Vec<Vec<f64>> {
    let mut cycle = vec![0.0; config.failure_threshold as usize + 1];
    cycle.extend([config.open_for * 0.5, config.open_for * 0.5, 0.0]);
    vec![vec![0.0], cycle]
}

fn status(code: u16, retry_after: Option<&str>) -> Reply {
    let step = Step::status(code);
    Reply::Step(match retry_after {
        Some(value) => step.with_retry_after(value),
        None => step,
    })
}

/// The replies a script is made of: answers fast and slow, the three transient statuses
/// with and without a Retry-After (in delay-seconds, `0`, an hour, and `0.5`, which is
/// not delay-seconds), transport failures at once and after the whole timeout, and the
/// statuses that end a lookup (404, 429, 400, 500).
pub(crate) const ALPHABET: usize = 13;

/// Reply `letter` of the [`ALPHABET`]. Answers are steps made once for [`ITEM`] (a
/// [`Reply::Available`] would write its body anew on every call, a fifth of the time).
pub(crate) fn reply(letter: usize) -> Reply {
    let answer = |available: bool, latency: f64| {
        Reply::Step(Step::available(ITEM, available).taking(latency))
    };
    match letter {
        0 => answer(true, 0.0),
        1 => answer(false, 0.375),
        2 => status(503, None),
        3 => status(502, Some("1")),
        4 => status(504, Some("0.5")),
        5 => status(503, Some("3600")),
        6 => status(503, Some("0")),
        7 => Reply::Step(Step::fail(TransportFailure::Connection)),
        8 => answer(true, 10.0),
        9 => status(404, None),
        10 => status(429, Some("1")),
        11 => status(400, None),
        _ => status(500, None),
    }
}

/// The letters a triple may end with: an answer, a plain 503.
pub(crate) const LAST: [usize; 2] = [0, 2];

/// The transient letters a run of them repeats, and how many calls a run is long.
const RUN_OF: [usize; 3] = [2, 5, 8];
const RUN_LENGTHS: [usize; 2] = [4, 9];

/// The configurations (by their place in [`configs`]) that triples run on: the lesson's
/// defaults, one attempt, zero delays, the long deadline. The other two, whose breaker
/// opens on the first failure, meet every single reply, pair and run.
const TRIPLE_CONFIGS: [usize; 4] = [0, 1, 3, 5];

/// The blocks of the space, in order, shortest scripts first: each a list of scripts (as
/// letters of the [`ALPHABET`]) and the configurations they run on.
fn blocks() -> Vec<(Vec<Vec<usize>>, Vec<usize>)> {
    let every_config: Vec<usize> = (0..configs().len()).collect();
    let singles = (0..ALPHABET).map(|a| vec![a]).collect();
    let pairs = (0..ALPHABET)
        .flat_map(|a| (0..ALPHABET).map(move |b| vec![a, b]))
        .collect();
    let triples = (0..ALPHABET)
        .flat_map(|a| (0..ALPHABET).flat_map(move |b| LAST.map(|c| vec![a, b, c])))
        .collect();
    let mut runs = Vec::new();
    for len in RUN_LENGTHS {
        for run in RUN_OF {
            for last in 0..ALPHABET {
                let mut script = vec![run; len];
                script.push(last);
                runs.push(script);
            }
        }
    }
    vec![
        (singles, every_config.clone()),
        (pairs, every_config.clone()),
        (triples, TRIPLE_CONFIGS.to_vec()),
        (runs, every_config),
    ]
}

/// The whole space, in order: the blocks one after the other; in a block, script by
/// script, each on every configuration of the block and every plan of it.
pub struct Space {
    configs: Vec<GatewayConfig>,
    blocks: Vec<(Vec<Vec<usize>>, Vec<usize>)>,
}

/// How many plans each configuration has.
const PLANS: usize = 2;

impl Space {
    /// The space.
    pub fn new() -> Space {
        Space {
            configs: configs(),
            blocks: blocks(),
        }
    }

    /// How many cases it holds.
    pub fn total(&self) -> usize {
        self.blocks
            .iter()
            .map(|(scripts, configs)| scripts.len() * configs.len() * PLANS)
            .sum()
    }

    /// Case `index` (0-based), if the space has it.
    pub fn case(&self, mut index: usize) -> Option<Case> {
        for (scripts, configs) in &self.blocks {
            let per_script = configs.len() * PLANS;
            let count = scripts.len() * per_script;
            if index >= count {
                index -= count;
                continue;
            }
            let script = &scripts[index / per_script];
            let config = &self.configs[configs[(index % per_script) / PLANS]];
            let afters = plans(config).swap_remove(index % PLANS);
            return Some(Case {
                config: config.clone(),
                replies: script.iter().map(|l| reply(*l)).collect(),
                afters,
            });
        }
        None
    }
}

impl Default for Space {
    fn default() -> Self {
        Space::new()
    }
}

/// The number of cases of the space.
pub fn total() -> usize {
    Space::new().total()
}

/// What one case did: after each lookup, its result and where the gateway stood; and every
/// provider call and sleep of the whole case. The standings' counts of calls and sleeps
/// say which lookup made which.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseRecord {
    /// Per lookup, in order: its result (or how it ended: then it is the last) and the
    /// gateway's standing after it.
    pub lookups: Vec<(Result<Lookup, Ending>, Standing)>,
    /// Every provider call.
    pub(crate) calls: Vec<Call>,
    /// Every sleep.
    pub(crate) sleeps: Vec<Sleep>,
}

/// One lookup of a [`CaseRecord`], as the judge compares it with the reference's in full.
#[derive(Debug, Clone, PartialEq)]
pub struct LookupRun {
    /// What it returned, or how it ended.
    pub ran: Result<Lookup, Ending>,
    /// The provider calls it made.
    pub calls: Vec<Call>,
    /// The sleeps it took, but those of 0 s ([`idle`]).
    pub sleeps: Vec<Sleep>,
    /// The counters after it.
    pub counters: Counters,
    /// The breaker after it.
    pub breaker: BreakerState,
    /// The clock after it.
    pub now: f64,
}

impl CaseRecord {
    /// The run, a lookup at a time: each lookup's calls and sleeps are those made since the
    /// one before it ended.
    pub fn per_lookup(&self) -> Vec<LookupRun> {
        let (mut calls_before, mut sleeps_before) = (0, 0);
        self.lookups
            .iter()
            .map(|(ran, standing)| {
                let calls = self.calls.get(calls_before..standing.answered);
                let sleeps = self.sleeps.get(sleeps_before..standing.sleeps);
                calls_before = standing.answered.max(calls_before);
                sleeps_before = standing.sleeps.max(sleeps_before);
                LookupRun {
                    ran: ran.clone(),
                    calls: calls.unwrap_or_default().to_vec(),
                    sleeps: sleeps
                        .unwrap_or_default()
                        .iter()
                        .filter(|s| !idle(s))
                        .cloned()
                        .collect(),
                    counters: standing.counters,
                    breaker: standing.breaker,
                    now: standing.now,
                }
            })
            .collect()
    }
}

/// Runs `case` on `f`, a lookup after the other, until one does not return. `Err`: the
/// configuration was refused.
pub fn run_case(f: LookupFn, case: &Case) -> Result<CaseRecord, kit_types::gateway::ConfigError> {
    let session = Session::start(&case.setup())?;
    let mut lookups = Vec::with_capacity(case.afters.len());
    for after in &case.afters {
        let ran: Result<Lookup, Payload> = session.lookup(f, ITEM, *after);
        // At once: an ending reads the panic's location.
        let ran = ran.map_err(|payload| Ending::of(&payload));
        let ended = ran.is_err();
        lookups.push((ran, session.standing()));
        if ended {
            break;
        }
    }
    let (calls, sleeps) = session.everything();
    Ok(CaseRecord {
        lookups,
        calls,
        sleeps,
    })
}

/// What one case of the space did, as a runner tells it.
#[derive(Debug, Clone, PartialEq)]
pub enum CaseRun {
    /// Every lookup returned, and this is the [`digest`] of the run.
    Digest(u64),
    /// A lookup did not return: how it ended.
    Ended(Ending),
}

/// The digest of a run whose lookups all returned: every field of every lookup's result,
/// every standing, every call and every sleep, times in nanoseconds (so that two orders of
/// the same arithmetic, a few ulps apart, still agree). Never 0; `None` when a lookup did
/// not return.
///
/// A sleep of 0 s is left out, and the order of calls and sleeps is read without it: it
/// moves no clock, and the lesson asks for none (`if pause > 0.0 { sleep(pause) }` and a
/// plain `sleep(pause)` do the same).
pub fn digest(record: &CaseRecord) -> Option<u64> {
    let mut d = Digest::new();
    let CaseRecord {
        lookups,
        calls,
        sleeps,
    } = record;
    let idle_seqs: Vec<u64> = sleeps.iter().filter(|s| idle(s)).map(|s| s.seq).collect();
    // A call's or a sleep's place among the calls and sleeps that count.
    let place = |seq: u64| seq - idle_seqs.partition_point(|i| *i < seq) as u64;
    let counted = |count: usize| sleeps.iter().take(count).filter(|s| !idle(s)).count();
    d.word(lookups.len() as u64);
    for (ran, standing) in lookups {
        d.lookup(ran.as_ref().ok()?);
        d.standing(&Standing {
            sleeps: counted(standing.sleeps),
            ..*standing
        });
    }
    d.word(calls.len() as u64);
    for call in calls {
        d.call(&Call {
            seq: place(call.seq),
            ..call.clone()
        });
    }
    d.word(counted(sleeps.len()) as u64);
    for sleep in sleeps.iter().filter(|s| !idle(s)) {
        let Sleep { at, secs, seq } = sleep;
        d.secs(*at);
        d.secs(*secs);
        d.word(place(*seq));
    }
    Some(d.finish().max(1))
}

/// Whether `sleep` is one of 0 s, which the comparison leaves out ([`digest`]).
pub fn idle(sleep: &Sleep) -> bool {
    sleep.secs == 0.0
}

/// Cases `start..start + count` of the space on `f`, in order, each marked on the runner's
/// page as it runs; shorter than asked after a case that reached `todo!()` (the last then
/// says so).
pub fn run_stretch(f: LookupFn, start: usize, count: usize) -> Vec<CaseRun> {
    let space = Space::new();
    let end = start.saturating_add(count).min(space.total());
    let mut runs = Vec::with_capacity(end.saturating_sub(start));
    for index in start..end {
        crate::cases::mark(0, index as u64 + 1);
        let Some(run) = run_one(f, &space, index) else {
            break;
        };
        let stub = matches!(&run, CaseRun::Ended(Ending::Panicked(p))
            if crate::panics::is_stub_panic(&p.message));
        runs.push(run);
        if stub {
            break;
        }
    }
    crate::cases::mark(0, 0);
    runs
}

/// Case `index` of `space` on `f`, told as a runner tells it; `None` past the space.
pub fn run_one(f: LookupFn, space: &Space, index: usize) -> Option<CaseRun> {
    let case = space.case(index)?;
    Some(match run_case(f, &case) {
        Ok(record) => match record.lookups.last() {
            Some((Err(ending), _)) => CaseRun::Ended(ending.clone()),
            _ => CaseRun::Digest(digest(&record).unwrap_or(0)),
        },
        Err(e) => CaseRun::Ended(Ending::Guard(e.to_string())),
    })
}

/// Words folded into 64 bits: a multiply and a rotate per word, splitmix64's finalizer at
/// the end (as build3's digest).
struct Digest(u64);

impl Digest {
    fn new() -> Self {
        Digest(0x5851_F42D_4C95_7F2D)
    }

    fn word(&mut self, w: u64) {
        self.0 = (self.0 ^ w)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_left(29);
    }

    /// A time, in whole nanoseconds; infinities and NaN as words of their own. The space's
    /// times are sums of round decimals, far from a half nanosecond, so two orders of the
    /// same arithmetic (a few ulps apart) still agree; a time off by more than the full
    /// comparison forgives (a part in 10⁹) does not.
    fn secs(&mut self, x: f64) {
        if x.is_finite() {
            self.word((x * 1e9).round() as i64 as u64);
        } else {
            self.word(x.to_bits() ^ 0xFFFF);
        }
    }

    fn text(&mut self, s: &str) {
        self.word(s.len() as u64);
        for chunk in s.as_bytes().chunks(8) {
            let mut bytes = [0u8; 8];
            bytes[..chunk.len()].copy_from_slice(chunk);
            self.word(u64::from_le_bytes(bytes));
        }
    }

    /// Every field, taken apart without `..`: a field added to a type stops the build here
    /// until the digest covers it.
    fn lookup(&mut self, lookup: &Lookup) {
        let Lookup { outcome, attempts } = lookup;
        self.word(u64::from(*attempts));
        match outcome {
            Outcome::Available(a) => {
                self.word(1);
                self.text(&a.item_id);
                self.word(u64::from(a.available));
            }
            Outcome::Missing => self.word(2),
            Outcome::Failed(f) => {
                self.word(3);
                self.word(u64::from(f.status));
                self.text(f.code.as_str());
            }
        }
    }

    fn standing(&mut self, standing: &Standing) {
        let Standing {
            answered,
            sleeps,
            counters,
            breaker,
            now,
        } = standing;
        self.word(*answered as u64);
        self.word(*sleeps as u64);
        let Counters {
            logical_lookups,
            attempts,
        } = counters;
        self.word(*logical_lookups);
        self.word(*attempts);
        match breaker {
            BreakerState::Closed { failures } => {
                self.word(10);
                self.word(u64::from(*failures));
            }
            BreakerState::Open { until } => {
                self.word(11);
                self.secs(*until);
            }
            BreakerState::HalfOpen { probing } => {
                self.word(12);
                self.word(u64::from(*probing));
            }
        }
        self.secs(*now);
    }

    fn call(&mut self, call: &Call) {
        let Call {
            item_id,
            timeout,
            at,
            number,
            number_for_item,
            seq,
        } = call;
        self.text(item_id);
        self.secs(*timeout);
        self.secs(*at);
        self.word(*number);
        self.word(*number_for_item);
        self.word(*seq);
    }

    fn finish(self) -> u64 {
        let mut x = self.0;
        x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        x ^ (x >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_space_is_bounded_and_every_case_is_valid() {
        let space = Space::new();
        assert_eq!(space.total(), 5_824);
        assert!(space.case(space.total()).is_none());
        let mut longest = 0;
        for index in 0..space.total() {
            let case = space.case(index).expect("in the space");
            assert!(case.config.validate().is_ok());
            assert!(case.replies.len() >= longest, "shortest first");
            longest = case.replies.len();
        }
    }

    #[test]
    fn a_digest_tells_runs_apart_and_forgives_ulps() {
        let f: LookupFn = |g, item| {
            g.count_lookup();
            let _ = kit_types::Provider::get(g.provider(), item, g.config().attempt_timeout);
            g.count_attempt();
            Lookup {
                outcome: Outcome::Missing,
                attempts: 1,
            }
        };
        let case = Space::new().case(0).expect("a case");
        let record = run_case(f, &case).expect("a valid config");
        let base = digest(&record).expect("returned");
        let mut nudged = record.clone();
        nudged.lookups[0].1.now = nudged.lookups[0].1.now.next_up();
        nudged.calls[0].timeout = nudged.calls[0].timeout.next_down();
        assert_eq!(digest(&nudged), Some(base));
        let mut other = record.clone();
        other.lookups[0].1.counters.attempts += 1;
        assert_ne!(digest(&other), Some(base));
        let mut later = record.clone();
        later.calls[0].seq += 1;
        assert_ne!(digest(&later), Some(base));
        // 40 ns more than the reference's is more than the full comparison forgives.
        let mut slower = record.clone();
        slower.lookups[0].1.now += 4e-8;
        assert_ne!(digest(&slower), Some(base));
    }

    #[test]
    fn a_sleep_of_zero_seconds_is_left_out() {
        // Zero delays (the fourth configuration), a 503 then an answer: sleep(0) between.
        let f: LookupFn = |g, item| {
            g.count_lookup();
            let mut attempts = 0;
            loop {
                attempts += 1;
                g.count_attempt();
                let reply = kit_types::Provider::get(g.provider(), item, 0.125);
                if matches!(&reply, Ok(r) if r.status == 200) {
                    g.breaker().record_success();
                    return Lookup {
                        outcome: Outcome::Missing,
                        attempts,
                    };
                }
                kit_types::Clock::sleep(g.clock(), 0.0);
            }
        };
        let case = Case {
            config: configs()[3].clone(),
            replies: vec![reply(2), reply(0)],
            afters: vec![0.0],
        };
        let slept = run_case(f, &case).expect("valid");
        assert_eq!(slept.sleeps.len(), 1);
        let mut skipped = slept.clone();
        skipped.sleeps.clear();
        skipped.lookups[0].1.sleeps = 0;
        skipped.calls[1].seq -= 1;
        assert_eq!(digest(&skipped), digest(&slept));
    }
}

//! The exhaustive check's space: every case of it, as blocks of one policy each. Inputs
//! only: what the reference does on them is the judge's (`grader-checks`), never here.
//!
//! See the exhaustive check (`grader/checks/src/lessons/build3/exhaustive.rs`) for what the
//! space covers and why.

use super::recording::{fresh, Script};
use kit_types::graded::Reply;
use kit_types::{
    PermanentError, PermanentKind, RequestError, RetryPolicy, TransientError, TransientReason,
};
use serde_json::json;

/// Walks the cases of `blocks` in increasing order, writing each one's script into one
/// buffer, and within a block only the outcomes that changed since the last case.
pub struct Walk<'a> {
    blocks: &'a [Block],
    block: usize,
    /// The block and index whose script `script` holds.
    held: Option<(usize, usize)>,
    script: Script,
    /// The held script's digits, one per column of its block (the index in mixed radix).
    digits: Vec<usize>,
}

impl<'a> Walk<'a> {
    /// A walk from the first case of `blocks`.
    pub fn new(blocks: &'a [Block]) -> Self {
        Walk {
            blocks,
            block: 0,
            held: None,
            script: Script::repeating(Vec::new()),
            digits: Vec::new(),
        }
    }

    /// Case `index` (0-based; never below the one asked for before): its policy and script.
    pub fn case(&mut self, index: usize) -> (&'a RetryPolicy, &Script) {
        while self.blocks[self.block].start + self.blocks[self.block].count <= index {
            self.block += 1;
        }
        let b = &self.blocks[self.block];
        if self.held == Some((self.block, index.wrapping_sub(1))) {
            b.step(&mut self.digits, &mut self.script.steps);
        } else {
            // A new block, or a jump (a thread's next turn): made from the index.
            b.digits_into(index - b.start, &mut self.digits);
            b.write(&self.digits, &mut self.script.steps);
        }
        self.held = Some((self.block, index));
        (&b.policy, &self.script)
    }
}

/// The total number of cases in `blocks`.
pub fn total(blocks: &[Block]) -> usize {
    blocks.iter().map(|b| b.count).sum()
}

/// The longest script: `max_attempts + 1` for five attempts.
pub const LONGEST: usize = 6;

fn policy(method: &str, max_attempts: u32, base_delay: f64, max_delay: f64) -> RetryPolicy {
    RetryPolicy {
        method: method.to_string(),
        max_attempts,
        base_delay,
        max_delay,
    }
}

/// The valid policies of the grid.
pub(crate) fn valid_policies() -> Vec<RetryPolicy> {
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
pub(crate) fn invalid_policies() -> Vec<RetryPolicy> {
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
        // A number, distinct per call: the caller's own value, without an allocation per case.
        Ok(Reply::from(position as u64)),
        Err(PermanentError::new(kind)
            .with_status(400 + position as u16)
            .into()),
    ]
}

/// One block of the space: one policy, and every script of one length as a mixed-radix
/// number over its columns (the last position varies fastest).
pub struct Block {
    /// The policy of every case of the block.
    pub policy: RetryPolicy,
    columns: Vec<Vec<Result<Reply, RequestError>>>,
    /// The 0-based index of the block's first case in the space.
    pub start: usize,
    /// How many cases it holds.
    pub count: usize,
}

impl Block {
    /// Script number `index`'s digits, one per column, into `digits`.
    fn digits_into(&self, mut index: usize, digits: &mut Vec<usize>) {
        digits.clear();
        digits.resize(self.columns.len(), 0);
        for (digit, column) in digits.iter_mut().zip(&self.columns).rev() {
            *digit = index % column.len();
            index /= column.len();
        }
    }

    /// From the script whose digits are `digits` (held in `steps`) to the next one of the
    /// block, as an odometer turns: the last column moves, and a column that wraps moves the
    /// one before it. The walk's common step: no division, and only the outcomes that change
    /// are written (divisions were a tenth of the exhaustive check's time).
    fn step(&self, digits: &mut [usize], steps: &mut [Result<Reply, RequestError>]) {
        let columns = self
            .columns
            .iter()
            .zip(digits.iter_mut())
            .zip(steps.iter_mut());
        for ((column, digit), slot) in columns.rev() {
            *digit += 1;
            if *digit < column.len() {
                *slot = fresh(&column[*digit]);
                return;
            }
            *digit = 0;
            *slot = fresh(&column[0]);
        }
    }

    /// Writes script number `index` of this block into `steps`.
    pub fn script_into(&self, index: usize, steps: &mut Vec<Result<Reply, RequestError>>) {
        let mut digits = Vec::new();
        self.digits_into(index, &mut digits);
        self.write(&digits, steps);
    }

    /// Writes the script whose digits are `digits` into `steps`, every outcome.
    fn write(&self, digits: &[usize], steps: &mut Vec<Result<Reply, RequestError>>) {
        steps.clear();
        let outcomes = self.columns.iter().zip(digits);
        steps.extend(outcomes.map(|(column, digit)| fresh(&column[*digit])));
    }
}

/// The whole space, made once per process: a runner answers the exhaustive check's questions
/// from it, and making it again for each of them (tens of questions, each on two threads)
/// was a twentieth of the check's time.
pub fn shared() -> &'static [Block] {
    static BLOCKS: std::sync::OnceLock<Vec<Block>> = std::sync::OnceLock::new();
    BLOCKS.get_or_init(blocks)
}

/// The whole space, as blocks in order, shortest scripts first.
pub fn blocks() -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut start = 0;
    let mut push = |policy: RetryPolicy, columns: Vec<Vec<Result<Reply, RequestError>>>| {
        let count = columns.iter().map(Vec::len).product();
        blocks.push(Block {
            policy,
            columns,
            start,
            count,
        });
        start += count;
    };
    for policy in invalid_policies() {
        push(
            policy,
            vec![vec![
                Ok(json!({"job_id": "fresh_1"})),
                transient(TransientReason::ServerError, None),
                Err(PermanentError::new(PermanentKind::NotFound).into()),
            ]],
        );
    }
    for len in 1..=LONGEST {
        for policy in valid_policies() {
            if len > policy.max_attempts as usize + 1 {
                continue;
            }
            let mut columns: Vec<Vec<Result<Reply, RequestError>>> =
                (1..len).map(|pos| transients(&policy, pos)).collect();
            let mut last = transients(&policy, len);
            last.extend(endings(len));
            columns.push(last);
            push(policy, columns);
        }
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Script number `index` of the space, made from nothing: its policy and its outcomes,
    /// as `Debug` shows them (a NaN wait is never `==` to itself, but shows the same).
    fn made_alone(blocks: &[Block], index: usize) -> (String, String) {
        let b = blocks
            .iter()
            .find(|b| b.start <= index && index < b.start + b.count)
            .expect("in the space");
        let mut steps = Vec::new();
        b.script_into(index - b.start, &mut steps);
        (format!("{:?}", b.policy), format!("{steps:?}"))
    }

    #[test]
    fn a_walk_gives_every_case_as_made_alone() {
        let blocks = blocks();
        let mut walk = Walk::new(&blocks);
        for index in 0..total(&blocks) {
            let (policy, script) = walk.case(index);
            let walked = (format!("{policy:?}"), format!("{:?}", script.steps));
            assert_eq!(walked, made_alone(&blocks, index), "case {index}");
        }
    }

    #[test]
    fn a_walk_that_skips_ahead_gives_the_cases_it_lands_on() {
        let blocks = blocks();
        let end = total(&blocks);
        // Turns as threads take them: runs of cases with gaps between them, some of which
        // cross a block's end.
        let mut walk = Walk::new(&blocks);
        let mut index = 0;
        let mut gap = 1;
        while index < end {
            for i in index..(index + 300).min(end) {
                let (_, script) = walk.case(i);
                assert_eq!(
                    format!("{:?}", script.steps),
                    made_alone(&blocks, i).1,
                    "case {i}"
                );
            }
            index += 300 + gap;
            gap = gap * 7 % 997 + 1;
        }
    }
}

//! The reference's runs of an exhaustive check's space, kept as data: what a copy of the kit
//! without the answers (built without the `answers` feature, as `bundle classroom
//! --without-answers` makes it) compares the learner's runs with, in place of running the
//! reference.
//!
//! A space of a few hundred thousand cases has only a few thousand different reference runs,
//! so the data is each different run once ([`kit_runner::wire`]'s exact form, floats
//! included) and, per case, the number of its run, deflated. The bytes are made by the kit with the
//! answers ([`encode`], each lesson's `exhaustive::oracle`) and written by the bundle to
//! `grader/checks/oracle/LESSON.bin`, which the copy compiles in (`oracle_run!`).

use kit_runner::wire::{self, Wire};

/// The first line of a lesson's oracle bytes: what they are and for which space.
fn header(lesson: &str, total: usize) -> String {
    format!("kit {lesson} exhaustive oracle v1 cases={total}\n")
}

/// The reference's run of every case of a space, as [`decode`] reads them.
#[derive(Debug)]
#[cfg_attr(feature = "answers", allow(dead_code))]
pub(crate) struct Oracle {
    /// Each different run once, in its wire form.
    runs: Vec<Vec<u8>>,
    /// Per case, in the space's order, the index of its run in `runs`.
    cases: Vec<u32>,
}

#[cfg_attr(feature = "answers", allow(dead_code))]
impl Oracle {
    /// The reference's run of 0-based case `index`; `None` past the space or when the bytes
    /// there are not a `T`.
    pub(crate) fn run<T: Wire>(&self, index: usize) -> Option<T> {
        let run = self
            .runs
            .get(usize::try_from(*self.cases.get(index)?).ok()?)?;
        wire::decode(run)
    }
}

/// How large the inflated data may be: well above any lesson's (stage8's, the largest, is
/// under 10 MiB), and a bound on what a damaged file can make this allocate.
const MAX_INFLATED: usize = 256 << 20;

/// The bytes of `runs`, one per case of `lesson`'s space in order (each a wire encoding):
/// the header, then deflated: the number of different runs, each as a length and its bytes,
/// then per case the number of its run; every number a little-endian `u32`.
pub(crate) fn encode(lesson: &str, runs: impl ExactSizeIterator<Item = Vec<u8>>) -> Vec<u8> {
    let total = runs.len();
    let mut distinct: Vec<Vec<u8>> = Vec::new();
    let mut seen = std::collections::HashMap::new();
    let mut cases = Vec::with_capacity(total);
    for run in runs {
        let next = distinct.len();
        let index = *seen.entry(run.clone()).or_insert_with(|| {
            distinct.push(run);
            next
        });
        cases.push(index);
    }
    let mut out = Vec::new();
    let number = |n: usize, out: &mut Vec<u8>| {
        out.extend_from_slice(&u32::try_from(n).unwrap_or(u32::MAX).to_le_bytes());
    };
    number(distinct.len(), &mut out);
    for run in &distinct {
        number(run.len(), &mut out);
        out.extend_from_slice(run);
    }
    for case in cases {
        number(case, &mut out);
    }
    pack(lesson, total, &out)
}

/// The header for `lesson`'s space of `total` cases, then `body` deflated.
fn pack(lesson: &str, total: usize, body: &[u8]) -> Vec<u8> {
    let mut bytes = header(lesson, total).into_bytes();
    bytes.extend_from_slice(&miniz_oxide::deflate::compress_to_vec(body, 9));
    bytes
}

/// Reads bytes [`encode`] made for `lesson`'s space of `total` cases; `None` unless they are
/// whole and for that space, and every case names a run they hold.
#[cfg_attr(feature = "answers", allow(dead_code))]
pub(crate) fn decode(bytes: &[u8], lesson: &str, total: usize) -> Option<Oracle> {
    fn number(rest: &mut &[u8]) -> Option<usize> {
        let (n, tail) = rest.split_first_chunk::<4>()?;
        *rest = tail;
        usize::try_from(u32::from_le_bytes(*n)).ok()
    }
    let deflated = bytes.strip_prefix(header(lesson, total).as_bytes())?;
    let body = miniz_oxide::inflate::decompress_to_vec_with_limit(deflated, MAX_INFLATED).ok()?;
    let mut rest = body.as_slice();
    let count = number(&mut rest)?;
    let mut runs = Vec::with_capacity(count.min(1 << 20));
    for _ in 0..count {
        let len = number(&mut rest)?;
        let (run, tail) = rest.split_at_checked(len)?;
        runs.push(run.to_vec());
        rest = tail;
    }
    let mut cases = Vec::with_capacity(total);
    for _ in 0..total {
        let case = number(&mut rest)?;
        if case >= runs.len() {
            return None;
        }
        cases.push(u32::try_from(case).ok()?);
    }
    rest.is_empty().then_some(Oracle { runs, cases })
}

/// The reference's run of 0-based case `index` of `lesson`'s space, from `oracle` (the
/// lesson's compiled-in bytes, decoded). Without it this is the kit's fault, never the
/// learner's: the panic names the kit.
#[cfg(not(feature = "answers"))]
pub(crate) fn run<T: Wire>(oracle: &Option<Oracle>, lesson: &str, index: usize) -> T {
    oracle
        .as_ref()
        .and_then(|o| o.run(index))
        .unwrap_or_else(|| {
            panic!(
                "the kit's own error: this copy of the kit has no answers, and its \
                 grader/checks/oracle/{lesson}.bin does not fit its {lesson} checks (case \
                 {index}). Make the template again with `bundle classroom --without-answers`."
            )
        })
}

/// The reference's run of 0-based case `index` of `lesson`'s space of `total` cases, from
/// `grader/checks/oracle/LESSON.bin`, compiled in and read once (a copy of the kit without the
/// answers has the file): `oracle_run!("build2", cases().count(), index)`. A missing or
/// unreadable run panics as the kit's fault ([`run`]).
#[cfg(not(feature = "answers"))]
macro_rules! oracle_run {
    ($lesson:literal, $total:expr, $index:expr) => {{
        static ORACLE: std::sync::LazyLock<Option<$crate::oracle::Oracle>> =
            std::sync::LazyLock::new(|| {
                let bytes = include_bytes!(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/oracle/",
                    $lesson,
                    ".bin"
                ));
                $crate::oracle::decode(bytes, $lesson, $total)
            });
        $crate::oracle::run(&ORACLE, $lesson, $index)
    }};
}
#[cfg(not(feature = "answers"))]
pub(crate) use oracle_run;

/// Whether this build holds the kit's answers (the `answers` feature): `--against
/// reference` and a scenario run on the reference need them; without them the exhaustive
/// checks read the reference's runs from oracle data (`grader/checks/oracle/`).
pub const ANSWERS: bool = cfg!(feature = "answers");

#[cfg(test)]
mod tests {
    use super::*;

    fn runs() -> Vec<Vec<u8>> {
        [7usize, 3, 7, 7, 3, 9]
            .iter()
            .map(|n| wire::encode(&Ok::<usize, String>(*n)))
            .collect()
    }

    #[test]
    fn each_run_is_kept_once_and_read_back_per_case() {
        let bytes = encode("demo", runs().into_iter());
        let oracle = decode(&bytes, "demo", 6).expect("read back");
        assert_eq!(oracle.runs.len(), 3, "7, 3 and 9 once each");
        let read: Vec<Result<usize, String>> = (0..6).map(|i| oracle.run(i).unwrap()).collect();
        assert_eq!(read, [7, 3, 7, 7, 3, 9].map(Ok));
        assert_eq!(
            oracle.run::<Result<usize, String>>(6),
            None,
            "past the space"
        );
    }

    #[test]
    fn bytes_of_another_lesson_or_space_or_cut_short_are_refused() {
        let bytes = encode("demo", runs().into_iter());
        assert!(decode(&bytes, "other", 6).is_none(), "another lesson");
        assert!(decode(&bytes, "demo", 5).is_none(), "another space");
        assert!(
            decode(&bytes[..bytes.len() - 1], "demo", 6).is_none(),
            "deflate cut short"
        );
        // The inflated body, damaged: it must be whole, and name only runs it holds.
        let body = miniz_oxide::inflate::decompress_to_vec(&bytes[header("demo", 6).len()..])
            .expect("inflates");
        assert!(
            decode(&pack("demo", 6, &body), "demo", 6).is_some(),
            "as made"
        );
        assert!(
            decode(&pack("demo", 6, &body[..body.len() - 1]), "demo", 6).is_none(),
            "cut"
        );
        let mut longer = body.clone();
        longer.push(0);
        assert!(
            decode(&pack("demo", 6, &longer), "demo", 6).is_none(),
            "a byte more"
        );
        let mut wrong = body.clone();
        let at = wrong.len() - 4;
        wrong[at..].copy_from_slice(&99u32.to_le_bytes());
        assert!(
            decode(&pack("demo", 6, &wrong), "demo", 6).is_none(),
            "a run out of range"
        );
        assert!(decode(b"kit demo exhaustive oracle v1 cases=6\n\x00", "demo", 6).is_none());
    }
}

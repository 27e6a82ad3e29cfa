//! The reference's runs of an exhaustive check's space, as one digest per case: made once
//! by the trusted side ([`encode`]), handed to the check on its standard input, and taken
//! back only when they are what this code would make ([`Digests::decode`]). The learner's
//! process never sees them.

/// How many cases, spread over the space, a harness runs on the reference to check handed
/// digests before trusting them.
const SPOT_CHECKS: usize = 32;

/// One digest per case of a space, in its order; 0 for a case whose run has none (a
/// recording with a NaN, or a run that did not end normally).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Digests(pub(crate) Vec<u64>);

impl Digests {
    /// The digest of the reference's run of 0-based case `index`, when it has one.
    pub(crate) fn get(&self, index: usize) -> Option<u64> {
        self.0.get(index).copied().filter(|d| *d != 0)
    }

    /// Reads bytes made by [`encode`] with `header`; `None` unless they start with it (made
    /// from the same state of the checks and the reference as this code), hold one digest
    /// for each of the space's `total` cases, and agree with `reference(index)`, the
    /// reference's digest of a case made here, on a sample of cases (a last guard against a
    /// digest that changed).
    pub(crate) fn decode(
        bytes: &[u8],
        header: &[u8],
        total: usize,
        mut reference: impl FnMut(usize) -> Option<u64>,
    ) -> Option<Digests> {
        let body = bytes.strip_prefix(header)?;
        if body.len() != total * 8 {
            return None;
        }
        let digests = Digests(
            body.chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
                .collect(),
        );
        // In a copy without the answers `reference` reads the compiled-in oracle, which is
        // cheap: every digest is checked there, so a kept file cannot stand in for it.
        let checks = if crate::ANSWERS { SPOT_CHECKS } else { total };
        let agrees = (0..checks)
            .map(|k| k * total / checks)
            .all(|index| reference(index) == digests.get(index));
        agrees.then_some(digests)
    }
}

/// `header`, then each of `digests` (0 for a case with none) as 8 little-endian bytes: what
/// [`Digests::decode`] reads.
pub(crate) fn encode(header: &[u8], total: usize, digests: impl Iterator<Item = u64>) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(header.len() + total * 8);
    bytes.extend_from_slice(header);
    for digest in digests {
        bytes.extend_from_slice(&digest.to_le_bytes());
    }
    bytes
}

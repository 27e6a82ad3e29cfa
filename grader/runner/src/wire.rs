//! How the judge and a runner write values to each other: a small binary form, exact for
//! every float (a NaN or an infinite wait must cross as it is, which JSON cannot do).
//!
//! Frames on the stream are a little-endian `u32` length, then that many bytes. Reading
//! never trusts the other side: a value that does not decode is `None`, never a panic, and
//! no length is believed beyond what the frame holds.

use kit_types::{
    PermanentError, PermanentKind, PolicyError, RequestError, RetryAction, RetryError, RetryEvent,
    RetryPolicy, StopCause, TransientError, TransientReason, TransportFailure,
};
use std::io::{Read, Write};

/// The largest frame either side reads (a chunk of the exhaustive check is well below it).
pub(crate) const MAX_FRAME: usize = 64 << 20;

/// A value that crosses between the judge and a runner.
pub trait Wire: Sized {
    /// Appends the value to `out`.
    fn put(&self, out: &mut Vec<u8>);
    /// Reads a value from the front of `input`, advancing it; `None` when the bytes there
    /// are not one.
    fn take(input: &mut &[u8]) -> Option<Self>;
}

/// The bytes of `value`.
pub fn encode<T: Wire>(value: &T) -> Vec<u8> {
    let mut out = Vec::new();
    value.put(&mut out);
    out
}

/// The value `bytes` hold, all of them; `None` when they hold anything else.
pub fn decode<T: Wire>(mut bytes: &[u8]) -> Option<T> {
    let value = T::take(&mut bytes)?;
    bytes.is_empty().then_some(value)
}

/// Writes one frame.
pub fn write_frame(to: &mut impl Write, bytes: &[u8]) -> std::io::Result<()> {
    let len = u32::try_from(bytes.len())
        .ok()
        .filter(|n| *n as usize <= MAX_FRAME)
        .ok_or_else(|| std::io::Error::other("a frame too large to send"))?;
    let mut framed = Vec::with_capacity(4 + bytes.len());
    framed.extend_from_slice(&len.to_le_bytes());
    framed.extend_from_slice(bytes);
    to.write_all(&framed)?;
    to.flush()
}

/// Reads one frame; `Ok(None)` at a clean end of the stream (before a frame starts).
pub(crate) fn read_frame(from: &mut impl Read) -> std::io::Result<Option<Vec<u8>>> {
    let mut len = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        match from.read(&mut len[got..]) {
            Ok(0) if got == 0 => return Ok(None),
            Ok(0) => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    let len = u32::from_le_bytes(len) as usize;
    if len > MAX_FRAME {
        return Err(std::io::Error::other("a frame larger than allowed"));
    }
    let mut bytes = vec![0u8; len];
    from.read_exact(&mut bytes)?;
    Ok(Some(bytes))
}

fn take_bytes<'a>(input: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
    if input.len() < n {
        return None;
    }
    let (head, rest) = input.split_at(n);
    *input = rest;
    Some(head)
}

macro_rules! wire_int {
    ($($t:ty),*) => {$(
        impl Wire for $t {
            fn put(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn take(input: &mut &[u8]) -> Option<Self> {
                let bytes = take_bytes(input, std::mem::size_of::<$t>())?;
                Some(<$t>::from_le_bytes(bytes.try_into().ok()?))
            }
        }
    )*};
}
wire_int!(u8, u16, u32, u64);

impl Wire for usize {
    fn put(&self, out: &mut Vec<u8>) {
        (*self as u64).put(out);
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        usize::try_from(u64::take(input)?).ok()
    }
}

impl Wire for f64 {
    fn put(&self, out: &mut Vec<u8>) {
        self.to_bits().put(out);
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        Some(f64::from_bits(u64::take(input)?))
    }
}

impl Wire for bool {
    fn put(&self, out: &mut Vec<u8>) {
        out.push(u8::from(*self));
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        match u8::take(input)? {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }
}

impl Wire for String {
    fn put(&self, out: &mut Vec<u8>) {
        self.len().put(out);
        out.extend_from_slice(self.as_bytes());
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        let len = usize::take(input)?;
        let bytes = take_bytes(input, len)?;
        String::from_utf8(bytes.to_vec()).ok()
    }
}

impl<T: Wire> Wire for Option<T> {
    fn put(&self, out: &mut Vec<u8>) {
        match self {
            None => out.push(0),
            Some(v) => {
                out.push(1);
                v.put(out);
            }
        }
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        match u8::take(input)? {
            0 => Some(None),
            1 => Some(Some(T::take(input)?)),
            _ => None,
        }
    }
}

impl<T: Wire, E: Wire> Wire for Result<T, E> {
    fn put(&self, out: &mut Vec<u8>) {
        match self {
            Ok(v) => {
                out.push(0);
                v.put(out);
            }
            Err(e) => {
                out.push(1);
                e.put(out);
            }
        }
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        match u8::take(input)? {
            0 => Some(Ok(T::take(input)?)),
            1 => Some(Err(E::take(input)?)),
            _ => None,
        }
    }
}

impl<T: Wire> Wire for Vec<T> {
    fn put(&self, out: &mut Vec<u8>) {
        self.len().put(out);
        for item in self {
            item.put(out);
        }
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        let len = usize::take(input)?;
        // Every value takes at least a byte: a length past what is left is a lie.
        if len > input.len() {
            return None;
        }
        // Grown as the values decode, not allocated on the other side's word.
        let mut items = Vec::with_capacity(len.min(1024));
        for _ in 0..len {
            items.push(T::take(input)?);
        }
        Some(items)
    }
}

impl<A: Wire, B: Wire> Wire for (A, B) {
    fn put(&self, out: &mut Vec<u8>) {
        self.0.put(out);
        self.1.put(out);
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        Some((A::take(input)?, B::take(input)?))
    }
}

impl Wire for serde_json::Value {
    fn put(&self, out: &mut Vec<u8>) {
        self.to_string().put(out);
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        serde_json::from_str(&String::take(input)?).ok()
    }
}

/// A `&'static str` field (the name of a policy's delay): the two names the types use are
/// shared; any other text a runner sends is kept for the life of the process.
fn take_static(input: &mut &[u8]) -> Option<&'static str> {
    let text = String::take(input)?;
    Some(match text.as_str() {
        "base_delay" => "base_delay",
        "max_delay" => "max_delay",
        _ => Box::leak(text.into_boxed_str()),
    })
}

/// A struct as its fields, one after the other in the order given: `wire_struct!(T { a, b })`.
/// Every field must be named (the struct literal of `take` does not build otherwise), and a
/// field's place in the list is its place on the wire. Exported for the judge's own types
/// (`grader-checks`), as `kit_runner::wire::wire_struct!`.
#[macro_export]
macro_rules! wire_struct {
    ($t:path { $($field:ident),+ $(,)? }) => {
        impl $crate::wire::Wire for $t {
            fn put(&self, out: &mut Vec<u8>) {
                $($crate::wire::Wire::put(&self.$field, out);)+
            }
            fn take(input: &mut &[u8]) -> Option<Self> {
                Some(Self {
                    $($field: $crate::wire::Wire::take(input)?,)+
                })
            }
        }
    };
}
pub use crate::wire_struct;

/// An enum without fields, as its position in a list of every variant.
macro_rules! wire_unit_enum {
    ($t:ty, $all:expr) => {
        impl Wire for $t {
            fn put(&self, out: &mut Vec<u8>) {
                let i = $all.iter().position(|v| v == self).unwrap_or(0);
                out.push(i as u8);
            }
            fn take(input: &mut &[u8]) -> Option<Self> {
                $all.get(u8::take(input)? as usize).copied()
            }
        }
    };
}
// The types' own lists where they have one: a variant added there crosses at once.
wire_unit_enum!(TransientReason, TransientReason::ALL);
wire_unit_enum!(PermanentKind, PermanentKind::ALL);
wire_unit_enum!(RetryAction, [RetryAction::Retry, RetryAction::Stop]);
wire_unit_enum!(
    TransportFailure,
    [TransportFailure::Timeout, TransportFailure::Connection]
);
wire_unit_enum!(StopCause, [StopCause::AttemptLimit, StopCause::DelayBudget]);

wire_struct!(RetryPolicy {
    method,
    max_attempts,
    base_delay,
    max_delay
});

impl Wire for TransientError {
    fn put(&self, out: &mut Vec<u8>) {
        self.reason.put(out);
        self.retry_after.put(out);
        self.detail.put(out);
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        let mut e = TransientError::new(TransientReason::take(input)?);
        e.retry_after = Wire::take(input)?;
        e.detail = String::take(input)?;
        Some(e)
    }
}

impl Wire for PermanentError {
    fn put(&self, out: &mut Vec<u8>) {
        self.kind.put(out);
        self.status.put(out);
        self.detail.put(out);
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        let mut e = PermanentError::new(PermanentKind::take(input)?);
        e.status = Wire::take(input)?;
        e.detail = String::take(input)?;
        Some(e)
    }
}

impl Wire for RequestError {
    fn put(&self, out: &mut Vec<u8>) {
        match self {
            RequestError::Transient(t) => {
                out.push(0);
                t.put(out);
            }
            RequestError::Permanent(p) => {
                out.push(1);
                p.put(out);
            }
        }
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        match u8::take(input)? {
            0 => Some(RequestError::Transient(TransientError::take(input)?)),
            1 => Some(RequestError::Permanent(PermanentError::take(input)?)),
            _ => None,
        }
    }
}

wire_struct!(RetryEvent {
    attempt,
    reason,
    action,
    delay,
    cause
});

impl Wire for PolicyError {
    fn put(&self, out: &mut Vec<u8>) {
        match self {
            PolicyError::UnsupportedMethod(m) => {
                out.push(0);
                m.put(out);
            }
            PolicyError::AttemptsOutOfRange(n) => {
                out.push(1);
                n.put(out);
            }
            PolicyError::DelayNotFinite { field } => {
                out.push(2);
                field.to_string().put(out);
            }
            PolicyError::DelayOutOfRange { field, value } => {
                out.push(3);
                field.to_string().put(out);
                value.put(out);
            }
            PolicyError::BaseAboveMax { base, max } => {
                out.push(4);
                base.put(out);
                max.put(out);
            }
        }
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        Some(match u8::take(input)? {
            0 => PolicyError::UnsupportedMethod(String::take(input)?),
            1 => PolicyError::AttemptsOutOfRange(u32::take(input)?),
            2 => PolicyError::DelayNotFinite {
                field: take_static(input)?,
            },
            3 => PolicyError::DelayOutOfRange {
                field: take_static(input)?,
                value: f64::take(input)?,
            },
            4 => PolicyError::BaseAboveMax {
                base: f64::take(input)?,
                max: f64::take(input)?,
            },
            _ => return None,
        })
    }
}

impl Wire for RetryError {
    fn put(&self, out: &mut Vec<u8>) {
        match self {
            RetryError::InvalidPolicy(p) => {
                out.push(0);
                p.put(out);
            }
            RetryError::Exhausted {
                attempts,
                reason,
                cause,
            } => {
                out.push(1);
                attempts.put(out);
                reason.put(out);
                cause.put(out);
            }
            RetryError::Permanent(p) => {
                out.push(2);
                p.put(out);
            }
        }
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        Some(match u8::take(input)? {
            0 => RetryError::InvalidPolicy(PolicyError::take(input)?),
            1 => RetryError::Exhausted {
                attempts: u32::take(input)?,
                reason: TransientReason::take(input)?,
                cause: StopCause::take(input)?,
            },
            2 => RetryError::Permanent(PermanentError::take(input)?),
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<T: Wire + PartialEq + std::fmt::Debug>(value: T) {
        let bytes = encode(&value);
        assert_eq!(decode::<T>(&bytes).as_ref(), Some(&value));
        // Every value shorter than its bytes, or with a byte more, is refused.
        for cut in 0..bytes.len() {
            assert!(
                decode::<T>(&bytes[..cut]).is_none(),
                "{value:?} cut at {cut}"
            );
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(decode::<T>(&longer).is_none());
    }

    #[test]
    fn every_kind_of_value_crosses_as_it_is() {
        round_trip(RetryPolicy {
            method: "GET".into(),
            max_attempts: 3,
            base_delay: f64::INFINITY,
            max_delay: -0.0,
        });
        let mut t = TransientError::new(TransientReason::RateLimited);
        t.retry_after = Some(60f64.next_up());
        t.detail = "token=sk-1".into();
        round_trip(RequestError::from(t));
        round_trip(RequestError::from(
            PermanentError::new(PermanentKind::NotFound).with_status(404),
        ));
        round_trip(RetryEvent::stop(
            2,
            TransientReason::Timeout,
            StopCause::DelayBudget,
        ));
        round_trip(RetryError::Exhausted {
            attempts: 5,
            reason: TransientReason::Connection,
            cause: StopCause::AttemptLimit,
        });
        round_trip(RetryError::InvalidPolicy(PolicyError::DelayOutOfRange {
            field: "max_delay",
            value: 61.0,
        }));
        round_trip(Ok::<serde_json::Value, RetryError>(
            serde_json::json!({"job_id": "fresh_1"}),
        ));
        round_trip(vec![Some(1.5f64), None]);
    }

    #[test]
    fn a_nan_crosses_as_a_nan() {
        let bytes = encode(&Some(f64::NAN));
        let back = decode::<Option<f64>>(&bytes).unwrap().unwrap();
        assert!(back.is_nan());
    }

    #[test]
    fn a_length_that_promises_more_than_the_frame_holds_is_refused() {
        let mut bytes = Vec::new();
        (u64::MAX as usize).put(&mut bytes);
        assert!(decode::<Vec<u8>>(&bytes).is_none());
        assert!(decode::<String>(&bytes).is_none());
    }

    #[test]
    fn frames_cross_a_stream_and_a_clean_end_is_none() {
        let mut stream = Vec::new();
        write_frame(&mut stream, b"one").unwrap();
        write_frame(&mut stream, b"").unwrap();
        let mut reading = stream.as_slice();
        assert_eq!(read_frame(&mut reading).unwrap().unwrap(), b"one");
        assert_eq!(read_frame(&mut reading).unwrap().unwrap(), b"");
        assert!(read_frame(&mut reading).unwrap().is_none());
        // A frame cut in its length or in its bytes is an error, never a shorter frame.
        let mut half = &stream[..2];
        assert!(read_frame(&mut half).is_err());
        let mut cut = &stream[..5];
        assert!(read_frame(&mut cut).is_err());
    }
}

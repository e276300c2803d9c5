//! The numpy dtypes and chunk shapes that filters' configurations name.

use crate::error::DecodeError;

/// A numeric numpy dtype such as `<u2`, `>f4` or `|u1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Dtype {
    pub(crate) kind: Kind,
    /// Bytes per value: 1, 2, 4 or 8.
    pub(crate) size: usize,
    pub(crate) big_endian: bool,
}

/// What the bytes of a value are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Signed,
    Unsigned,
    Float,
}

impl Dtype {
    /// The dtype of a numpy type string: `<u2`, `>f8`, `|i1`, `u1`; also the
    /// names numcodecs accepts (`uint16`, `float32`), native byte order.
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        let named = [
            ("int8", "i1"),
            ("uint8", "u1"),
            ("int16", "i2"),
            ("uint16", "u2"),
            ("int32", "i4"),
            ("uint32", "u4"),
            ("int64", "i8"),
            ("uint64", "u8"),
            ("float32", "f4"),
            ("float64", "f8"),
        ];
        let text = named.iter().find(|(name, _)| *name == text).map_or(text, |(_, code)| code);
        let (order, code) = match text.as_bytes().first() {
            Some(b'<' | b'>' | b'|' | b'=') => (text.as_bytes()[0], &text[1..]),
            _ => (b'=', text),
        };
        let kind = match code.as_bytes().first() {
            Some(b'i') => Kind::Signed,
            Some(b'u') => Kind::Unsigned,
            Some(b'f') => Kind::Float,
            _ => return Err(format!("dtype {text:?} is not a numeric type of 1 to 8 bytes")),
        };
        let size: usize = code[1..].parse().map_err(|_| format!("dtype {text:?} has no size"))?;
        let valid = match kind {
            Kind::Float => [4, 8].contains(&size),
            _ => [1, 2, 4, 8].contains(&size),
        };
        if !valid {
            return Err(format!("dtype {text:?} is not a numeric type of 1 to 8 bytes"));
        }
        let big_endian = match order {
            b'>' => true,
            b'<' | b'|' => false,
            _ => cfg!(target_endian = "big"),
        };
        Ok(Self { kind, size, big_endian })
    }

    /// The value at `bytes` (`size` of them) as the bits of a u64, read in the dtype's byte order.
    pub(crate) fn read(self, bytes: &[u8]) -> u64 {
        let mut word = [0u8; 8];
        word[..self.size].copy_from_slice(&bytes[..self.size]);
        if self.big_endian {
            word[..self.size].reverse();
        }
        u64::from_le_bytes(word)
    }

    /// Writes the low `size` bytes of `bits` into `bytes` in the dtype's byte order.
    pub(crate) fn write(self, bits: u64, bytes: &mut [u8]) {
        let word = bits.to_le_bytes();
        bytes[..self.size].copy_from_slice(&word[..self.size]);
        if self.big_endian {
            bytes[..self.size].reverse();
        }
    }
}

/// A chunk's shape, split at one axis: `outer` rows of `length` steps along
/// the axis, each step `inner` values (the dimensions after the axis).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Split {
    pub(crate) outer: usize,
    pub(crate) length: usize,
    pub(crate) inner: usize,
}

impl Split {
    /// `shape` split at `axis` (negative from the end, as numpy counts).
    pub(crate) fn new(shape: &[u64], axis: i64) -> Result<Self, String> {
        let rank = i64::try_from(shape.len()).map_err(|_| "a shape of too many dimensions".to_owned())?;
        let at = if axis < 0 { axis + rank } else { axis };
        let at = usize::try_from(at)
            .ok()
            .filter(|&at| at < shape.len())
            .ok_or_else(|| format!("axis {axis} is not an axis of the shape {shape:?}"))?;
        let product = |dims: &[u64]| -> Result<usize, String> {
            dims.iter().try_fold(1usize, |n, &d| {
                usize::try_from(d)
                    .ok()
                    .and_then(|d| n.checked_mul(d))
                    .ok_or_else(|| format!("the shape {shape:?} is too large"))
            })
        };
        Ok(Self { outer: product(&shape[..at])?, length: product(&shape[at..=at])?, inner: product(&shape[at + 1..])? })
    }

    /// The number of values.
    pub(crate) fn values(self) -> Option<usize> {
        self.outer.checked_mul(self.length)?.checked_mul(self.inner)
    }

    /// An error unless `bytes` holds exactly the values of this shape of `dtype`.
    pub(crate) fn check(self, bytes: usize, dtype: Dtype) -> Result<(), DecodeError> {
        let expected = self.values().and_then(|n| n.checked_mul(dtype.size));
        if expected == Some(bytes) {
            Ok(())
        } else {
            Err(DecodeError::Layout(format!(
                "the chunk holds {bytes} bytes, where its configured shape needs {}",
                expected.map_or_else(|| "more than 2^64".to_owned(), |n| n.to_string())
            )))
        }
    }
}

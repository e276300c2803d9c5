//! numcodecs' filters that zarrs lacks, decoded as numcodecs decodes them:
//! `delta` (a cumulative sum), `astype` and `quantize` (a cast: quantizing
//! is lossy when encoding, a cast when decoding) and `bitround` (nothing to
//! undo); and `fixedscaleoffset`, which zarrs has but computes in f32 (an
//! offset of 273.15 is 273.149993896..., an int32 above 2^24 is rounded),
//! where numcodecs computes in float64. Casts are numpy's: floats to integers truncate toward zero,
//! integers to narrower integers wrap, to floats round to nearest.

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::decode_only::Decode;
use crate::error::DecodeError;
use crate::layout::{Dtype, Kind};

/// A value read from a chunk, exactly.
#[derive(Clone, Copy, Debug)]
enum Number {
    Integer(i128),
    Float(f64),
}

impl Dtype {
    fn value(self, bytes: &[u8]) -> Number {
        let bits = self.read(bytes);
        let shift = 64 - 8 * u32::try_from(self.size).unwrap_or(8);
        #[expect(
            clippy::cast_possible_wrap,
            clippy::cast_possible_truncation,
            reason = "two's complement, sign-extended"
        )]
        match (self.kind, self.size) {
            (Kind::Unsigned, _) => Number::Integer(i128::from(bits)),
            (Kind::Signed, _) => Number::Integer(i128::from(((bits << shift) as i64) >> shift)),
            (Kind::Float, 4) => Number::Float(f64::from(f32::from_bits(bits as u32))),
            (Kind::Float, _) => Number::Float(f64::from_bits(bits)),
        }
    }

    /// `value` cast to this type (as numpy's `astype`), as bits.
    fn cast(self, value: Number) -> u64 {
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss,
            reason = "numpy's casts: wrapping, truncating and rounding are what they do"
        )]
        match (self.kind, self.size, value) {
            (Kind::Float, 4, Number::Integer(i)) => u64::from((i as f32).to_bits()),
            (Kind::Float, 4, Number::Float(f)) => u64::from((f as f32).to_bits()),
            (Kind::Float, _, Number::Integer(i)) => (i as f64).to_bits(),
            (Kind::Float, _, Number::Float(f)) => f.to_bits(),
            // Integers wrap to the width (the low `size` bytes are written).
            (_, _, Number::Integer(i)) => i as u64,
            (Kind::Unsigned, _, Number::Float(f)) if f < 0.0 => f.trunc() as i64 as u64,
            (_, _, Number::Float(f)) => f.trunc() as i128 as u64,
        }
    }

    /// `a + b` in this type, as bits: wrapping for integers, IEEE for floats.
    fn add(self, a: u64, b: u64) -> u64 {
        match (self.kind, self.size) {
            #[expect(clippy::cast_possible_truncation, reason = "the low 32 bits hold the float")]
            (Kind::Float, 4) => u64::from((f32::from_bits(a as u32) + f32::from_bits(b as u32)).to_bits()),
            (Kind::Float, _) => (f64::from_bits(a) + f64::from_bits(b)).to_bits(),
            _ => a.wrapping_add(b),
        }
    }
}

fn parse(field: &str, text: &str) -> Result<Dtype, String> {
    Dtype::parse(text).map_err(|reason| format!("{field}: {reason}"))
}

/// A filter's `dtype` (what it decodes to) and `astype` (what is stored;
/// `dtype` where absent), as numcodecs' `delta` and `fixedscaleoffset` write them.
#[derive(Clone, Debug)]
struct Types {
    written: (String, Option<String>),
    dtype: Dtype,
    astype: Dtype,
}

impl Types {
    fn new(dtype: String, astype: Option<String>) -> Result<Self, String> {
        let (parsed, stored) = (parse("dtype", &dtype)?, parse("astype", astype.as_deref().unwrap_or(&dtype))?);
        Ok(Self { dtype: parsed, astype: stored, written: (dtype, astype) })
    }

    /// The two fields, `astype` written out.
    fn insert_into(&self, map: &mut Map<String, Value>) {
        let (dtype, astype) = &self.written;
        map.insert("dtype".into(), dtype.clone().into());
        map.insert("astype".into(), astype.clone().unwrap_or_else(|| dtype.clone()).into());
    }
}

/// Every value of `encoded` (of `from`) through `step` (given the value read
/// and the previous output, as bits of `to`), written as `to`.
fn each(
    encoded: &[u8],
    size: usize,
    from: Dtype,
    to: Dtype,
    mut step: impl FnMut(Number, Option<u64>) -> u64,
) -> Result<Vec<u8>, DecodeError> {
    if !encoded.len().is_multiple_of(from.size) {
        return Err(DecodeError::Layout(format!("{} bytes are not values of {} bytes", encoded.len(), from.size)));
    }
    let count = encoded.len() / from.size;
    if count.saturating_mul(to.size) > size {
        return Err(DecodeError::TooLong { size });
    }
    let mut decoded = vec![0u8; count * to.size];
    let mut previous = None;
    for (input, output) in encoded.chunks_exact(from.size).zip(decoded.chunks_exact_mut(to.size)) {
        let bits = step(from.value(input), previous);
        to.write(bits, output);
        previous = Some(bits);
    }
    Ok(decoded)
}

/// numcodecs' `delta`: `{"dtype": "<i4", "astype": "<i2"}`; decoded, the
/// cumulative sum of the differences, in `dtype`.
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct DeltaConfiguration {
    dtype: String,
    #[serde(default)]
    astype: Option<String>,
}

#[derive(Clone, Debug)]
pub(crate) struct NumcodecsDelta {
    types: Types,
}

impl NumcodecsDelta {
    pub(crate) fn new(written: DeltaConfiguration) -> Result<Self, String> {
        Ok(Self { types: Types::new(written.dtype, written.astype)? })
    }
}

impl Decode for NumcodecsDelta {
    const ID: &'static str = "delta";

    fn configuration(&self) -> Map<String, Value> {
        let mut map = Map::new();
        self.types.insert_into(&mut map);
        map
    }

    fn decode(&self, encoded: &[u8], size: usize) -> Result<Vec<u8>, DecodeError> {
        let dtype = self.types.dtype;
        each(encoded, size, self.types.astype, dtype, |value, previous| {
            let value = dtype.cast(value);
            previous.map_or(value, |p| dtype.add(p, value))
        })
    }
}

/// numcodecs' `astype` (`encode_dtype`, `decode_dtype`) and `quantize`
/// (`astype`, `dtype`, `digits`): decoding casts from the first to the second.
#[derive(Clone, Debug)]
pub(crate) struct Cast<const QUANTIZE: bool> {
    written: Map<String, Value>,
    from: Dtype,
    to: Dtype,
}

/// `astype`'s configuration.
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct AstypeConfiguration {
    encode_dtype: String,
    decode_dtype: String,
}

/// `quantize`'s configuration.
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct QuantizeConfiguration {
    digits: i64,
    dtype: String,
    #[serde(default)]
    astype: Option<String>,
}

impl Cast<false> {
    pub(crate) fn astype(written: AstypeConfiguration) -> Result<Self, String> {
        let (from, to) = (parse("encode_dtype", &written.encode_dtype)?, parse("decode_dtype", &written.decode_dtype)?);
        let mut map = Map::new();
        map.insert("encode_dtype".into(), written.encode_dtype.into());
        map.insert("decode_dtype".into(), written.decode_dtype.into());
        Ok(Self { written: map, from, to })
    }
}

impl Cast<true> {
    pub(crate) fn quantize(written: QuantizeConfiguration) -> Result<Self, String> {
        let astype = written.astype.unwrap_or_else(|| written.dtype.clone());
        let (from, to) = (parse("astype", &astype)?, parse("dtype", &written.dtype)?);
        let mut map = Map::new();
        map.insert("digits".into(), written.digits.into());
        map.insert("dtype".into(), written.dtype.into());
        map.insert("astype".into(), astype.into());
        Ok(Self { written: map, from, to })
    }
}

impl<const QUANTIZE: bool> Decode for Cast<QUANTIZE> {
    const ID: &'static str = if QUANTIZE { "quantize" } else { "astype" };

    fn configuration(&self) -> Map<String, Value> {
        self.written.clone()
    }

    fn decode(&self, encoded: &[u8], size: usize) -> Result<Vec<u8>, DecodeError> {
        each(encoded, size, self.from, self.to, |value, _| self.to.cast(value))
    }
}

/// numcodecs' `fixedscaleoffset`: `{"scale": 10, "offset": 273.15,
/// "dtype": "<f8", "astype": "<i2"}`; decoded, `stored / scale + offset`
/// cast to `dtype`, computed as numpy computes it (NEP 50): in float32
/// for float32 stored values, in float64 otherwise.
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct FixedScaleOffsetConfiguration {
    scale: f64,
    offset: f64,
    dtype: String,
    #[serde(default)]
    astype: Option<String>,
}

#[derive(Clone, Debug)]
pub(crate) struct FixedScaleOffset {
    scale: f64,
    offset: f64,
    types: Types,
}

impl FixedScaleOffset {
    pub(crate) fn new(written: FixedScaleOffsetConfiguration) -> Result<Self, String> {
        let types = Types::new(written.dtype, written.astype)?;
        Ok(Self { scale: written.scale, offset: written.offset, types })
    }
}

impl Decode for FixedScaleOffset {
    const ID: &'static str = "fixedscaleoffset";

    fn configuration(&self) -> Map<String, Value> {
        let mut map = Map::new();
        map.insert("scale".into(), self.scale.into());
        map.insert("offset".into(), self.offset.into());
        self.types.insert_into(&mut map);
        map
    }

    fn decode(&self, encoded: &[u8], size: usize) -> Result<Vec<u8>, DecodeError> {
        let (from, to) = (self.types.astype, self.types.dtype);
        let (scale, offset) = (self.scale, self.offset);
        each(encoded, size, from, to, |value, _| {
            #[expect(clippy::cast_precision_loss, clippy::cast_possible_truncation, reason = "numpy's arithmetic")]
            let value = match value {
                Number::Float(f) if from.size == 4 => f64::from(f as f32 / scale as f32 + offset as f32),
                Number::Float(f) => f / scale + offset,
                Number::Integer(i) => i as f64 / scale + offset,
            };
            to.cast(Number::Float(value))
        })
    }
}

/// numcodecs' `bitround`: the mantissa's low bits were zeroed when encoding;
/// decoding gives the bytes back.
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct BitRound {
    keepbits: i64,
}

impl Decode for BitRound {
    const ID: &'static str = "bitround";
    const SAME_SIZE: bool = true;

    fn configuration(&self) -> Map<String, Value> {
        let mut map = Map::new();
        map.insert("keepbits".into(), self.keepbits.into());
        map
    }

    fn decode(&self, encoded: &[u8], size: usize) -> Result<Vec<u8>, DecodeError> {
        if encoded.len() > size {
            return Err(DecodeError::TooLong { size });
        }
        Ok(encoded.to_vec())
    }
}

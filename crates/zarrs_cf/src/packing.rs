//! Packed and masked values (CF section 8.1 and 2.5.1) decoded as xarray's
//! `decode_cf` decodes them: `_Unsigned` first, then the fill values and
//! `missing_value` masked, then `scale_factor` and `add_offset` applied, in
//! the floating-point type xarray picks. The valid range, which xarray does
//! not apply, is an option (on by default, as netCDF4-python and CF have it).

use serde_json::{Map, Value};

/// How the values of an array are stored: a number type of some width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Stored {
    /// Booleans, one byte each.
    Bool,
    /// Signed integers of this many bytes.
    Int(usize),
    /// Unsigned integers of this many bytes.
    Uint(usize),
    /// Floats of this many bytes (2, 4 or 8).
    Float(usize),
}

impl Stored {
    /// The stored type of a Zarr V2 `dtype` (`<i2`) or V3 `data_type` (`int16`), if it is a number type.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        let v2 = name.strip_prefix(['<', '>', '|', '=']).and_then(|body| {
            let size: usize = body.get(1..)?.parse().ok()?;
            Some(match body.get(..1)? {
                "b" if size == 1 => Self::Bool,
                "i" if matches!(size, 1 | 2 | 4 | 8) => Self::Int(size),
                "u" if matches!(size, 1 | 2 | 4 | 8) => Self::Uint(size),
                "f" if matches!(size, 2 | 4 | 8) => Self::Float(size),
                _ => return None,
            })
        });
        if v2.is_some() {
            return v2;
        }
        Some(match name {
            "bool" => Self::Bool,
            "int8" => Self::Int(1),
            "int16" => Self::Int(2),
            "int32" => Self::Int(4),
            "int64" => Self::Int(8),
            "uint8" => Self::Uint(1),
            "uint16" => Self::Uint(2),
            "uint32" => Self::Uint(4),
            "uint64" => Self::Uint(8),
            "float16" => Self::Float(2),
            "float32" => Self::Float(4),
            "float64" => Self::Float(8),
            _ => return None,
        })
    }

    /// The bytes of one value.
    #[must_use]
    pub fn size(self) -> usize {
        match self {
            Self::Bool => 1,
            Self::Int(n) | Self::Uint(n) | Self::Float(n) => n,
        }
    }

    /// The `NumPy` name of the type (`int16`).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Bool => "bool",
            Self::Int(1) => "int8",
            Self::Int(2) => "int16",
            Self::Int(4) => "int32",
            Self::Int(_) => "int64",
            Self::Uint(1) => "uint8",
            Self::Uint(2) => "uint16",
            Self::Uint(4) => "uint32",
            Self::Uint(_) => "uint64",
            Self::Float(2) => "float16",
            Self::Float(4) => "float32",
            Self::Float(_) => "float64",
        }
    }

    /// One value, from its bytes in native byte order (as zarrs decodes them), as a float.
    #[expect(clippy::cast_precision_loss, reason = "64-bit integers beyond 2^53 round, as in NumPy's float64")]
    pub(crate) fn value(self, bytes: &[u8]) -> f64 {
        let array = |bytes: &[u8]| -> [u8; 8] {
            let mut out = [0; 8];
            out[..bytes.len()].copy_from_slice(bytes);
            out
        };
        let b = array(bytes);
        match self {
            Self::Bool => f64::from(u8::from(b[0] != 0)),
            Self::Int(1) => f64::from(i8::from_ne_bytes([b[0]])),
            Self::Int(2) => f64::from(i16::from_ne_bytes([b[0], b[1]])),
            Self::Int(4) => f64::from(i32::from_ne_bytes([b[0], b[1], b[2], b[3]])),
            Self::Int(_) => i64::from_ne_bytes(b) as f64,
            Self::Uint(1) => f64::from(b[0]),
            Self::Uint(2) => f64::from(u16::from_ne_bytes([b[0], b[1]])),
            Self::Uint(4) => f64::from(u32::from_ne_bytes([b[0], b[1], b[2], b[3]])),
            Self::Uint(_) => u64::from_ne_bytes(b) as f64,
            Self::Float(2) => half_to_f64(u16::from_ne_bytes([b[0], b[1]])),
            Self::Float(4) => f64::from(f32::from_ne_bytes([b[0], b[1], b[2], b[3]])),
            Self::Float(_) => f64::from_ne_bytes(b),
        }
    }

    /// The same bits read as the integer type of the other signedness (`_Unsigned`).
    fn flipped(self) -> Self {
        match self {
            Self::Int(n) => Self::Uint(n),
            Self::Uint(n) => Self::Int(n),
            other => other,
        }
    }

    /// `value`, a number of the type `self`, as the type of the other signedness reads its bits.
    fn reinterpret(self, value: f64) -> f64 {
        let modulus = 2f64.powi(8 * i32::try_from(self.size()).unwrap_or(8));
        match self {
            Self::Int(_) if value < 0.0 => value + modulus,
            Self::Uint(_) if value >= modulus / 2.0 => value - modulus,
            _ => value,
        }
    }
}

/// An IEEE half-precision float.
fn half_to_f64(bits: u16) -> f64 {
    let sign = if bits & 0x8000 == 0 { 1.0 } else { -1.0 };
    let exponent = i32::from((bits >> 10) & 0x1f);
    let fraction = f64::from(bits & 0x3ff);
    sign * match exponent {
        0 => fraction * 2f64.powi(-24),
        31 if fraction == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        _ => (1.0 + fraction / 1024.0) * 2f64.powi(exponent - 15),
    }
}

/// The type the decoded values have, as xarray's `decode_cf` would give them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Decoded {
    /// As stored (nothing to decode).
    Stored(Stored),
    /// 32-bit floats.
    Float32,
    /// 64-bit floats.
    Float64,
}

impl Decoded {
    /// The `NumPy` name of the type.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Stored(stored) => stored.name(),
            Self::Float32 => "float32",
            Self::Float64 => "float64",
        }
    }
}

/// What to decode, read from a variable's attributes and fill value.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Packing {
    /// The type to read the stored bytes as: the stored type, with its signedness flipped by `_Unsigned`.
    pub(crate) stored: Stored,
    /// Whether `_Unsigned` flips the signedness of the stored integers.
    pub(crate) flip: bool,
    /// The values that mean "missing", as the stored type reads them.
    pub(crate) missing: Vec<f64>,
    pub(crate) scale_factor: Option<f64>,
    pub(crate) add_offset: Option<f64>,
    /// The valid range (inclusive), of stored values.
    pub(crate) valid: (Option<f64>, Option<f64>),
    pub(crate) decoded: Decoded,
}

/// A JSON number, or the spellings of non-finite numbers Zarr uses.
fn number(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => match s.as_str() {
            "NaN" | "nan" => Some(f64::NAN),
            "Infinity" | "inf" => Some(f64::INFINITY),
            "-Infinity" | "-inf" => Some(f64::NEG_INFINITY),
            _ => None,
        },
        Value::Array(items) if items.len() == 1 => number(&items[0]),
        _ => None,
    }
}

/// A V3 array's `_FillValue` attribute: a number, or a float as xarray's V3 backend writes it
/// (base64 of its little-endian float64 bytes, xarray's `FillValueCoder`).
fn fill_attribute(value: &Value) -> Vec<f64> {
    use base64::Engine as _;
    let encoded = value
        .as_str()
        .and_then(|text| base64::engine::general_purpose::STANDARD.decode(text).ok())
        .and_then(|bytes| <[u8; 8]>::try_from(bytes).ok());
    match encoded {
        Some(bytes) => vec![f64::from_le_bytes(bytes)],
        None => numbers(value),
    }
}

/// Every number of an attribute that may hold one or a list.
fn numbers(value: &Value) -> Vec<f64> {
    match value {
        Value::Array(items) => items.iter().filter_map(number).collect(),
        other => number(other).into_iter().collect(),
    }
}

impl Packing {
    /// The decoding of an array stored as `stored`, with these attributes and
    /// fill value (the Zarr V2 `fill_value`, which xarray reads as `_FillValue`;
    /// `None` for V3 arrays, whose `_FillValue` is an attribute). `time`: the
    /// values are times, which stay numbers here (masked, but not made floats).
    pub(crate) fn new(
        stored: Stored,
        attributes: &Map<String, Value>,
        fill_value: Option<&Value>,
        valid_range: bool,
    ) -> Self {
        let unsigned = attributes.get("_Unsigned").and_then(Value::as_str);
        let flip = matches!((stored, unsigned), (Stored::Int(_), Some("true")) | (Stored::Uint(_), Some("false")));
        let mut missing: Vec<f64> = match fill_value.filter(|v| !v.is_null()) {
            Some(fill) => numbers(fill),
            None => attributes.get("_FillValue").map(fill_attribute).unwrap_or_default(),
        };
        missing.extend(attributes.get("missing_value").map(numbers).unwrap_or_default());
        if matches!(stored, Stored::Int(_) | Stored::Uint(_) | Stored::Bool) {
            // xarray drops a NaN fill value of an integer array.
            missing.retain(|v| !v.is_nan());
        }
        let scale = attributes.get("scale_factor");
        let offset = attributes.get("add_offset");
        let stored_read = if flip { stored.flipped() } else { stored };
        if flip {
            missing = missing.into_iter().map(|v| stored.reinterpret(v)).collect();
        }
        let decoded = decoded_type(stored_read, scale, offset, !missing.is_empty());
        let valid = if valid_range { valid_range_of(attributes) } else { (None, None) };
        // Masking and valid ranges need room for NaN.
        let decoded = match decoded {
            Decoded::Stored(s) if valid.0.is_some() || valid.1.is_some() => promote(s),
            other => other,
        };
        Self {
            stored: stored_read,
            flip,
            missing,
            scale_factor: scale.and_then(number),
            add_offset: offset.and_then(number),
            valid,
            decoded,
        }
    }

    /// Whether decoding changes anything.
    pub(crate) fn is_identity(&self) -> bool {
        matches!(self.decoded, Decoded::Stored(_)) && !self.flip
    }

    /// One value, decoded from the stored value `raw` (its bytes read as [`Packing::stored`]).
    #[expect(
        clippy::cast_possible_truncation,
        clippy::float_cmp,
        reason = "compared as xarray compares, in the decoded type"
    )]
    pub(crate) fn decode(&self, raw: f64) -> f64 {
        // xarray casts to the decoded type, then compares with each fill value cast to it.
        let in_type = |v: f64| if self.decoded == Decoded::Float32 { f64::from(v as f32) } else { v };
        let value = in_type(raw);
        if self.missing.iter().any(|&m| in_type(m) == value) {
            return f64::NAN;
        }
        if self.valid.0.is_some_and(|low| raw < low) || self.valid.1.is_some_and(|high| raw > high) {
            return f64::NAN;
        }
        let mut value = value;
        if let Some(scale) = self.scale_factor {
            value *= scale;
        }
        if let Some(offset) = self.add_offset {
            value += offset;
        }
        in_type(value)
    }
}

/// `valid_range`, or `valid_min` and `valid_max`.
fn valid_range_of(attributes: &Map<String, Value>) -> (Option<f64>, Option<f64>) {
    if let Some(range) = attributes.get("valid_range").map(numbers)
        && let [low, high] = range[..]
    {
        return (Some(low), Some(high));
    }
    (attributes.get("valid_min").and_then(number), attributes.get("valid_max").and_then(number))
}

/// `NumPy`'s `maybe_promote` for a type that must hold NaN: small integers and
/// 32-bit floats to float32, the rest to float64.
fn promote(stored: Stored) -> Decoded {
    match stored {
        Stored::Float(2 | 4) | Stored::Bool | Stored::Int(1 | 2) | Stored::Uint(1 | 2) => Decoded::Float32,
        _ => Decoded::Float64,
    }
}

/// xarray's choice of the decoded type (`CFMaskCoder`, then
/// `CFScaleOffsetCoder._choose_float_dtype`). Attributes read from JSON are
/// Python floats (float64) or ints, never float32, so packed values always
/// decode to float64 (an integer `scale_factor` alone keeps integers in
/// xarray, as int64, which float64 holds exactly up to 2^53).
fn decoded_type(stored: Stored, scale: Option<&Value>, offset: Option<&Value>, masked: bool) -> Decoded {
    if scale.is_some() || offset.is_some() {
        return Decoded::Float64;
    }
    if masked {
        return promote(stored);
    }
    Decoded::Stored(stored)
}

#[cfg(test)]
#[expect(clippy::float_cmp, reason = "decoding must be exact")]
mod tests {
    use super::*;
    use serde_json::json;

    #[expect(clippy::needless_pass_by_value, reason = "called with json! values")]
    fn packing(stored: &str, attributes: Value, fill: Value) -> Packing {
        let Value::Object(attributes) = attributes else { panic!("an object") };
        Packing::new(Stored::from_name(stored).unwrap(), &attributes, Some(&fill), true)
    }

    #[test]
    fn types_as_xarray_picks_them() {
        let t = |stored, attributes, fill| packing(stored, attributes, fill).decoded;
        assert_eq!(t("<i2", json!({}), Value::Null), Decoded::Stored(Stored::Int(2)));
        assert_eq!(t("<i2", json!({}), json!(-32767)), Decoded::Float32);
        assert_eq!(t("<i4", json!({}), json!(-9999)), Decoded::Float64);
        assert_eq!(t("<f4", json!({}), json!("NaN")), Decoded::Float32);
        assert_eq!(t("<i2", json!({"scale_factor": 0.01}), Value::Null), Decoded::Float64);
        assert_eq!(t("<i2", json!({"scale_factor": 0.01, "add_offset": 273.15}), json!(-32767)), Decoded::Float64);
        assert_eq!(t("|u1", json!({"valid_max": 200}), Value::Null), Decoded::Float32);
        assert_eq!(t("int16", json!({"_FillValue": 7}), Value::Null), Decoded::Float32);
        // A V3 float's `_FillValue` as xarray writes it: base64 of its float64 bytes (-999).
        assert_eq!(super::fill_attribute(&json!("AAAAAAA4j8A=")), [-999.0]);
        assert_eq!(super::fill_attribute(&json!("NaN")).len(), 1);
    }

    #[test]
    fn masking_then_scaling() {
        let p = packing("<i2", json!({"scale_factor": 0.01, "add_offset": 273.15}), json!(-32767));
        assert!(p.decode(-32767.0).is_nan());
        assert_eq!(p.decode(100.0), 100.0 * 0.01 + 273.15);
        // A float32 array's fill value is compared as float32 (1e20 is not exactly a float32).
        let p = packing("<f4", json!({}), json!(1e20));
        assert!(p.decode(f64::from(1e20f32)).is_nan());
        let p = packing("<f4", json!({"missing_value": [-1, -2]}), Value::Null);
        assert!(p.decode(-2.0).is_nan() && p.decode(-1.0).is_nan() && p.decode(0.0) == 0.0);
        let p = packing("<i2", json!({"valid_range": [0, 100]}), Value::Null);
        assert!(p.decode(-1.0).is_nan() && p.decode(101.0).is_nan() && p.decode(100.0) == 100.0);
        // An integer array's NaN fill value is dropped, as xarray drops it.
        assert!(packing("<i4", json!({}), json!("NaN")).missing.is_empty());
    }

    #[test]
    fn unsigned_flips_the_bits() {
        let p = packing("|i1", json!({"_Unsigned": "true"}), json!(-1));
        assert_eq!(p.stored, Stored::Uint(1));
        assert_eq!(p.decoded, Decoded::Float32);
        assert_eq!(p.decode(254.0), 254.0);
        assert!(p.decode(255.0).is_nan(), "the fill value -1 is 255 unsigned");
        let p = packing("|u1", json!({"_Unsigned": "false"}), json!(255));
        assert_eq!(p.stored, Stored::Int(1));
        assert_eq!(p.decode(-56.0), -56.0);
        assert!(p.decode(-1.0).is_nan(), "the fill value 255 is -1 signed");
        assert!(!packing("<f4", json!({"_Unsigned": "true"}), Value::Null).flip);
    }

    #[test]
    fn half_floats() {
        assert_eq!(half_to_f64(0x3c00), 1.0);
        assert_eq!(half_to_f64(0xc000), -2.0);
        assert_eq!(half_to_f64(0x0001), 2f64.powi(-24));
        assert!(half_to_f64(0x7e00).is_nan());
        assert_eq!(half_to_f64(0x7c00), f64::INFINITY);
    }
}

//! HDF5 element types as zarr v2 (numpy) dtypes, h5py's conventions
//! included (a FALSE/TRUE enum is bool, an `r`/`i` float pair is complex),
//! and the values of those types: fill values and attributes.

use hdf5_reader::ByteOrder;
use hdf5_reader::Datatype;
use hdf5_reader::messages::datatype::{StringSize, VarLenKind};

use crate::zarr::Fill;

/// What the elements of an array are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// An integer of `size` bytes.
    Int { size: u8, signed: bool, order: ByteOrder },
    /// A float of `size` bytes (2, 4 or 8).
    Float { size: u8, order: ByteOrder },
    /// h5py's bool: a one-byte enum of FALSE = 0 and TRUE = 1.
    Bool,
    /// h5py's complex: two floats of `size` bytes each, `r` then `i`.
    Complex { size: u8, order: ByteOrder },
    /// A fixed-length string of `n` bytes.
    Bytes(u32),
    /// A variable-length string.
    VlenString,
}

/// An element type and its zarr v2 dtype.
#[derive(Clone, Debug)]
pub(crate) struct Dtype {
    /// numpy's `.str` of it: `"<f4"`, `"|u1"`, `"|S5"`, `"|O"`.
    pub(crate) numpy: String,
    /// Bytes per element as stored.
    pub(crate) itemsize: u64,
    pub(crate) kind: Kind,
}

/// The zarr dtype of an HDF5 type, or why it has none.
pub(crate) fn dtype(datatype: &Datatype) -> Result<Dtype, String> {
    let order_char = |size: u8, order: ByteOrder| match (size, order) {
        (1, _) => '|',
        (_, ByteOrder::LittleEndian) => '<',
        (_, ByteOrder::BigEndian) => '>',
    };
    let made = |numpy: String, itemsize: u64, kind: Kind| Ok(Dtype { numpy, itemsize, kind });
    match datatype {
        Datatype::FixedPoint { size: size @ (1 | 2 | 4 | 8), signed, byte_order } => made(
            format!("{}{}{size}", order_char(*size, *byte_order), if *signed { 'i' } else { 'u' }),
            u64::from(*size),
            Kind::Int { size: *size, signed: *signed, order: *byte_order },
        ),
        Datatype::FloatingPoint { size: size @ (2 | 4 | 8), byte_order } => made(
            format!("{}f{size}", order_char(*size, *byte_order)),
            u64::from(*size),
            Kind::Float { size: *size, order: *byte_order },
        ),
        Datatype::Enum { base, members } => {
            let is_bool = matches!(**base, Datatype::FixedPoint { size: 1, .. })
                && members.len() == 2
                && members.iter().any(|m| m.name == "FALSE" && m.value == [0])
                && members.iter().any(|m| m.name == "TRUE" && m.value == [1]);
            if is_bool { made("|b1".to_owned(), 1, Kind::Bool) } else { dtype(base) }
        }
        Datatype::Compound { size, fields } => match fields.as_slice() {
            [r, i] if r.name == "r" && i.name == "i" && r.datatype == i.datatype && r.byte_offset == 0 => {
                match &r.datatype {
                    Datatype::FloatingPoint { size: part @ (4 | 8), byte_order }
                        if u64::from(i.byte_offset) == u64::from(*part) && u64::from(*size) == 2 * u64::from(*part) =>
                    {
                        made(
                            format!("{}c{}", order_char(2, *byte_order), 2 * part),
                            u64::from(*size),
                            Kind::Complex { size: *part, order: *byte_order },
                        )
                    }
                    _ => Err("a compound type (only h5py's complex pairs are referenced)".to_owned()),
                }
            }
            _ => Err("a compound type (only h5py's complex pairs are referenced)".to_owned()),
        },
        Datatype::String { size: StringSize::Fixed(n), .. } if *n > 0 => {
            made(format!("|S{n}"), u64::from(*n), Kind::Bytes(*n))
        }
        Datatype::String { size: StringSize::Variable, .. } => made("|O".to_owned(), 0, Kind::VlenString),
        Datatype::VarLen { base, kind: VarLenKind::String, .. } if base.is_vlen_string_base() => {
            made("|O".to_owned(), 0, Kind::VlenString)
        }
        other => Err(format!("HDF5 type {} has no zarr v2 dtype", type_name(other))),
    }
}

fn type_name(datatype: &Datatype) -> &'static str {
    match datatype {
        Datatype::FixedPoint { .. } => "integer of this size",
        Datatype::FloatingPoint { .. } => "float of this size",
        Datatype::String { .. } => "string of length 0",
        Datatype::Compound { .. } => "compound",
        Datatype::Array { .. } => "array",
        Datatype::Enum { .. } => "enum",
        Datatype::VarLen { .. } => "variable-length sequence",
        Datatype::Opaque { .. } => "opaque",
        Datatype::Reference { .. } => "reference",
        Datatype::Bitfield { .. } => "bitfield",
    }
}

/// The integer in `bytes` (1 to 8 of them).
pub(crate) fn int_at(bytes: &[u8], signed: bool, order: ByteOrder) -> i128 {
    let mut value: u64 = 0;
    let mut push = |b: u8| value = (value << 8) | u64::from(b);
    match order {
        ByteOrder::BigEndian => bytes.iter().copied().for_each(&mut push),
        ByteOrder::LittleEndian => bytes.iter().rev().copied().for_each(&mut push),
    }
    let bits = 8 * u32::try_from(bytes.len()).unwrap_or(u32::MAX);
    if signed && bits < 64 && value >> (bits - 1) & 1 == 1 {
        i128::from(value) - (1i128 << bits)
    } else if signed && bits == 64 {
        #[expect(clippy::cast_possible_wrap, reason = "the two's complement of a signed 64-bit value")]
        i128::from(value as i64)
    } else {
        i128::from(value)
    }
}

/// The float in `bytes` (2, 4 or 8 of them).
pub(crate) fn float_at(bytes: &[u8], order: ByteOrder) -> f64 {
    let bits = u64::try_from(int_at(bytes, false, order)).unwrap_or(0);
    match bytes.len() {
        2 => half_to_f64(bits),
        #[expect(clippy::cast_possible_truncation, reason = "a 4-byte value")]
        4 => f64::from(f32::from_bits(bits as u32)),
        _ => f64::from_bits(bits),
    }
}

/// An IEEE half-precision float, widened.
fn half_to_f64(bits: u64) -> f64 {
    let sign = if bits >> 15 & 1 == 1 { -1.0 } else { 1.0 };
    let exponent = (bits >> 10 & 0x1f) as i32;
    #[expect(clippy::cast_precision_loss, reason = "10 bits of mantissa")]
    let mantissa = (bits & 0x3ff) as f64;
    sign * match exponent {
        0 => mantissa * 2f64.powi(-24),
        0x1f if mantissa == 0.0 => f64::INFINITY,
        0x1f => f64::NAN,
        e => (1.0 + mantissa / 1024.0) * 2f64.powi(e - 15),
    }
}

/// The fill value of one element `bytes` of `kind`.
pub(crate) fn fill_of(kind: Kind, bytes: &[u8]) -> Fill {
    match kind {
        Kind::Int { signed, order, .. } => Fill::Integer(int_at(bytes, signed, order)),
        Kind::Float { order, .. } => Fill::Float(float_at(bytes, order)),
        Kind::Bool => Fill::Bool(bytes.iter().any(|&b| b != 0)),
        Kind::Complex { size, order } => {
            let (re, im) = bytes.split_at(usize::from(size).min(bytes.len()));
            Fill::Complex(float_at(re, order), float_at(im, order))
        }
        Kind::Bytes(_) => Fill::Bytes(bytes.to_vec()),
        Kind::VlenString => Fill::Null,
    }
}

/// kerchunk's fill value of an array of `kind`: null for netCDF-4 variables (`netcdf`: one of
/// netCDF-4's attributes) and times (`time`: units "... since ...") unless a `_FillValue`
/// `attribute` gives one; else the `stored` fill value (HDF5's, zero when undefined; a string's
/// with its trailing NULs cut, a space for none); then the attribute's, in the array's type.
pub(crate) fn kerchunk_fill(
    kind: Kind,
    stored: Option<Fill>,
    netcdf: bool,
    time: bool,
    attribute: Option<Fill>,
) -> Fill {
    let fill = match kind {
        Kind::Bytes(_) => {
            let bytes = match stored {
                Some(Fill::Bytes(bytes)) => bytes,
                _ => Vec::new(),
            };
            let trimmed = bytes.iter().rposition(|&b| b != 0).map_or(&[][..], |end| &bytes[..=end]);
            Fill::Bytes(if trimmed.is_empty() { b" ".to_vec() } else { trimmed.to_vec() })
        }
        Kind::VlenString => Fill::Null,
        _ if netcdf || time => Fill::Null,
        kind => stored.unwrap_or_else(|| zero_fill(kind)),
    };
    attribute.unwrap_or(fill)
}

/// A number (`integer` if it is one, and as a float) in an array of `kind`, as numpy converts
/// it: a signed value wraps into an unsigned type, a double rounds to a float, a float
/// truncates to an integer; `None` for a kind no number converts to.
pub(crate) fn number_in(kind: Kind, integer: Option<i128>, float: f64) -> Option<Fill> {
    Some(match kind {
        Kind::Int { size, signed, .. } => {
            let bits = 8 * u32::from(size);
            let wrapped = integer? & ((1i128 << bits) - 1);
            Fill::Integer(if signed && wrapped >> (bits - 1) & 1 == 1 { wrapped - (1i128 << bits) } else { wrapped })
        }
        #[expect(clippy::cast_possible_truncation, reason = "the value in the array's own type")]
        Kind::Float { size: 4, .. } => Fill::Float(f64::from(float as f32)),
        Kind::Float { .. } => Fill::Float(float),
        Kind::Bool => Fill::Bool(float != 0.0),
        Kind::Complex { .. } => Fill::Complex(float, 0.0),
        Kind::Bytes(_) | Kind::VlenString => return None,
    })
}

/// The zero of `kind`: what h5py reports as the fill of a dataset whose
/// fill value is undefined.
pub(crate) fn zero_fill(kind: Kind) -> Fill {
    match kind {
        Kind::Int { .. } => Fill::Integer(0),
        Kind::Float { .. } => Fill::Float(0.0),
        Kind::Bool => Fill::Bool(false),
        Kind::Complex { .. } => Fill::Complex(0.0, 0.0),
        Kind::Bytes(_) => Fill::Bytes(Vec::new()),
        Kind::VlenString => Fill::Null,
    }
}

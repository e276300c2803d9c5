//! `grib`: kerchunk's codec for GRIB messages (`kerchunk.codecs.GRIBCodec`),
//! which `scan_grib` writes as the only filter of every array it references
//! in a GRIB file: a chunk is one whole message, decoded to the values of
//! its first field.
//!
//! The values are eccodes', bit for bit (see [`unpack`]), NaN exactly where
//! the bitmap or complex packing's missing-value management says a point is
//! missing. kerchunk's Python codec also turns a decoded value that happens
//! to equal the message's `missingValue` (9999) into NaN; this codec does
//! not: a real 9999 stays 9999.
//!
//! | template | packing | decoded |
//! |---|---|---|
//! | 5.0 | simple | yes |
//! | 5.2, 5.3 | complex, with spatial differencing of order 1 and 2 | yes |
//! | 5.4 | IEEE floats, 32 and 64 bits | yes |
//! | 5.41 | PNG | yes (the `png` crate) |
//! | 5.42 | CCSDS (ECMWF's open data) | yes (the `rust-aec` crate) |
//! | GRIB1 | simple packing of grid points, with or without a bitmap | yes ([`edition1`]) |
//! | 5.40 | JPEG 2000, lossless and lossy | yes (the `hayro-jpeg2000` crate) |
//!
//! `var` `latitude` and `longitude` are the coordinates of a projected
//! grid's points, which kerchunk references to the message ([`grid`]):
//! Lambert conformal (HRRR's), polar stereographic, Lambert azimuthal equal
//! area and rotated latitude/longitude, on a sphere or an ellipsoid where
//! eccodes computes one; other projections are an error naming them.

mod bits;
mod edition1;
mod message;
mod unpack;

use serde::Deserialize;
use serde_json::{Map, Value};

use grib_grids::Coordinate;

use crate::decode_only::Decode;
use crate::error::DecodeError;

/// kerchunk's configuration: `{"id": "grib", "var": "t", "dtype": "float64"}`.
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct GribConfiguration {
    var: String,
    #[serde(default)]
    dtype: Option<String>,
}

/// What a decoded value is written as: the codec's `dtype`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Output {
    Float64,
    Float32,
    /// numpy's `astype(int64)`, which kerchunk's scalar coordinates ask of the values.
    Int64,
}

impl Output {
    fn size(self) -> usize {
        match self {
            Self::Float32 => 4,
            Self::Float64 | Self::Int64 => 8,
        }
    }
}

/// The `grib` codec: the values of a message's first field.
#[derive(Clone, Debug)]
pub(crate) struct Grib {
    written: GribConfiguration,
    output: Output,
}

impl Grib {
    /// The codec for a configuration, or why it cannot decode it.
    pub(crate) fn new(written: GribConfiguration) -> Result<Self, String> {
        // kerchunk's defaults: float64 for coordinates, float32 for values.
        let coordinate = matches!(written.var.as_str(), "latitude" | "longitude");
        let default = if coordinate { "float64" } else { "float32" };
        let output = match written.dtype.as_deref().unwrap_or(default) {
            "float64" | "<f8" | "f8" => Output::Float64,
            "float32" | "<f4" | "f4" => Output::Float32,
            "int64" | "<i8" | "i8" => Output::Int64,
            other => return Err(format!("dtype {other:?} (float64, float32 and int64 are decoded)")),
        };
        Ok(Self { written, output })
    }
}

impl Decode for Grib {
    const ID: &'static str = "grib";

    fn configuration(&self) -> Map<String, Value> {
        let mut map = Map::new();
        map.insert("var".into(), self.written.var.clone().into());
        if let Some(dtype) = &self.written.dtype {
            map.insert("dtype".into(), dtype.clone().into());
        }
        map
    }

    fn decode(&self, encoded: &[u8], size: usize) -> Result<Vec<u8>, DecodeError> {
        let edition1 = encoded.get(..4) == Some(b"GRIB") && encoded.get(7) == Some(&1);
        let field = if edition1 { None } else { Some(message::first_field(encoded)?) };
        let points = match &field {
            Some(field) => field.points()?,
            // Known once the sections are read; bounded by the chunk meanwhile.
            None => size / self.output.size(),
        };
        if points.saturating_mul(self.output.size()) > size {
            return Err(DecodeError::TooLong { size });
        }
        // Each value written once, straight into the chunk's bytes.
        // At most the chunk's size: checked above.
        let capacity = points * self.output.size();
        let mut out = Vec::with_capacity(capacity);
        let mut emit = |value: f64| {
            if out.len() < capacity {
                match self.output {
                    Output::Float64 => out.extend_from_slice(&value.to_le_bytes()),
                    #[expect(clippy::cast_possible_truncation, reason = "float32 asked for, as numpy's astype rounds")]
                    Output::Float32 => out.extend_from_slice(&(value as f32).to_le_bytes()),
                    #[expect(clippy::cast_possible_truncation, reason = "int64 asked for, as numpy's astype truncates")]
                    Output::Int64 => out.extend_from_slice(&(value as i64).to_le_bytes()),
                }
            }
        };
        let count = match (self.written.var.as_str(), field) {
            (var @ ("latitude" | "longitude"), None) => {
                return Err(DecodeError::Layout(format!("the {var} of a GRIB1 grid is not decoded")));
            }
            (_, None) => edition1::values(encoded, points, &mut emit).map_err(|error| match error {
                // The limit is in points there; the chunk's size is what the error names.
                DecodeError::TooLong { .. } => DecodeError::TooLong { size },
                other => other,
            })?,
            ("latitude", Some(field)) => emit_all(coordinates(&field, Coordinate::Latitude, points)?, &mut emit),
            ("longitude", Some(field)) => emit_all(coordinates(&field, Coordinate::Longitude, points)?, &mut emit),
            (_, Some(field)) => values(&field, points, &mut emit)?,
        };
        let points = if edition1 { count } else { points };
        if count != points {
            return Err(DecodeError::Layout(format!("{count} values for {points} points")));
        }
        Ok(out)
    }
}

fn emit_all(values: Vec<f64>, emit: &mut impl FnMut(f64)) -> usize {
    let count = values.len();
    values.into_iter().for_each(emit);
    count
}

/// The field's values at its `points`, NaN where missing, each given to `emit`; returns how many.
fn values(field: &message::Field<'_>, points: usize, emit: &mut impl FnMut(f64)) -> Result<usize, DecodeError> {
    match field.bitmap_bits()? {
        None => unpack::packed_values(field, points, emit),
        Some(bitmap) => {
            let mut packed = Vec::new();
            unpack::packed_values(field, points, &mut |value| packed.push(value))?;
            expand(&packed, bitmap, points, emit)?;
            Ok(points)
        }
    }
}

/// The packed values spread over the points the bitmap marks present
/// (its bits most significant first), NaN at the others.
fn expand(packed: &[f64], bitmap: &[u8], points: usize, emit: &mut impl FnMut(f64)) -> Result<(), DecodeError> {
    if bitmap.len().saturating_mul(8) < points {
        return Err(DecodeError::Layout(format!("a bitmap of {} bits for {points} points", bitmap.len() * 8)));
    }
    let present = |i: usize| bitmap[i / 8] & (0x80 >> (i % 8)) != 0;
    let marked = (0..points).filter(|&i| present(i)).count();
    if marked != packed.len() {
        return Err(DecodeError::Layout(format!(
            "the bitmap marks {marked} points present, for {} values",
            packed.len()
        )));
    }
    let mut values = packed.iter();
    for i in 0..points {
        emit(if present(i) { values.next().copied().unwrap_or(f64::NAN) } else { f64::NAN });
    }
    Ok(())
}

/// The `coordinate` of every point of the field's grid, by `grib_grids`.
fn coordinates(field: &message::Field<'_>, coordinate: Coordinate, limit: usize) -> Result<Vec<f64>, DecodeError> {
    grib_grids::coordinates(field.grid, coordinate, limit).map_err(|error| match error {
        grib_grids::GridError::TooLarge { limit } => DecodeError::TooLong { size: limit },
        other => DecodeError::Layout(other.to_string()),
    })
}

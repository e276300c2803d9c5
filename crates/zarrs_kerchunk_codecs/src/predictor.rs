//! TIFF's predictors as tifffile's zarr store writes them, filters after
//! the compressor: `imagecodecs_delta` (horizontal differencing, predictor
//! 2) and `imagecodecs_floatpred` (floating point, predictor 3, TIFF
//! Technical Note 3). Both run on the decompressed bytes, in the file's
//! byte order, before zarrs' bytes codec reads the values.

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::decode_only::Decode;
use crate::error::DecodeError;
use crate::layout::{Dtype, Kind, Split};

/// The configuration both write: `{"axis": -1, "dist": 1, "dtype": "<u2", "shape": [256, 256]}`.
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct PredictorConfiguration {
    #[serde(default = "last")]
    axis: i64,
    #[serde(default = "one")]
    dist: u64,
    dtype: String,
    shape: Vec<u64>,
}

fn last() -> i64 {
    -1
}

fn one() -> u64 {
    1
}

/// A predictor's configuration, checked.
#[derive(Clone, Debug)]
struct Layout {
    written: PredictorConfiguration,
    dtype: Dtype,
    split: Split,
    dist: usize,
}

impl Layout {
    fn new(written: PredictorConfiguration) -> Result<Self, String> {
        let dtype = Dtype::parse(&written.dtype)?;
        let split = Split::new(&written.shape, written.axis)?;
        split.values().ok_or_else(|| format!("the shape {:?} is too large", written.shape))?;
        let dist = usize::try_from(written.dist)
            .ok()
            .filter(|&d| d > 0)
            .ok_or_else(|| format!("dist {} is not a distance", written.dist))?;
        Ok(Self { written, dtype, split, dist })
    }

    fn configuration(&self) -> Map<String, Value> {
        let mut map = Map::new();
        map.insert("axis".into(), self.written.axis.into());
        map.insert("dist".into(), self.written.dist.into());
        map.insert("dtype".into(), self.written.dtype.clone().into());
        map.insert("shape".into(), self.written.shape.clone().into());
        map
    }

    /// The bytes of the chunk, checked against the shape and within `size`.
    fn check(&self, encoded: &[u8], size: usize) -> Result<(), DecodeError> {
        if encoded.len() > size {
            return Err(DecodeError::TooLong { size });
        }
        self.split.check(encoded.len(), self.dtype)
    }
}

/// `imagecodecs_delta`: each value along the axis is the sum of itself and
/// the value `dist` steps before, wrapping for integers.
#[derive(Clone, Debug)]
pub(crate) struct Delta(Layout);

impl Delta {
    pub(crate) fn new(configuration: PredictorConfiguration) -> Result<Self, String> {
        Layout::new(configuration).map(Self)
    }
}

impl Decode for Delta {
    const ID: &'static str = "imagecodecs_delta";
    const SAME_SIZE: bool = true;

    fn configuration(&self) -> Map<String, Value> {
        self.0.configuration()
    }

    fn decode(&self, encoded: &[u8], size: usize) -> Result<Vec<u8>, DecodeError> {
        let Layout { dtype, split, dist, .. } = self.0;
        self.0.check(encoded, size)?;
        let mut decoded = encoded.to_vec();
        let step = split.inner * dtype.size;
        let row = split.length * step;
        for values in decoded.chunks_exact_mut(row) {
            // From `dist` steps on, each byte of a step adds the step `dist` before.
            if dtype.size == 1 {
                for at in dist * step..row {
                    values[at] = values[at].wrapping_add(values[at - dist * step]);
                }
                continue;
            }
            for at in (dist * step..row).step_by(dtype.size) {
                let (before, here) = values.split_at_mut(at);
                let previous = dtype.read(&before[at - dist * step..]);
                let sum = add(dtype, dtype.read(here), previous);
                dtype.write(sum, here);
            }
        }
        Ok(decoded)
    }
}

/// `a + b` in `dtype`, as bits: wrapping for integers, IEEE for floats.
fn add(dtype: Dtype, a: u64, b: u64) -> u64 {
    match (dtype.kind, dtype.size) {
        (Kind::Float, 4) => {
            #[expect(clippy::cast_possible_truncation, reason = "the low 32 bits hold the float")]
            let sum = f32::from_bits(a as u32) + f32::from_bits(b as u32);
            u64::from(sum.to_bits())
        }
        (Kind::Float, _) => (f64::from_bits(a) + f64::from_bits(b)).to_bits(),
        // The low `size` bytes are written: the carry out of them is dropped.
        _ => a.wrapping_add(b),
    }
}

/// `imagecodecs_floatpred`: each row along the axis was split into byte
/// planes, most significant first, and the planes differenced byte by byte.
#[derive(Clone, Debug)]
pub(crate) struct FloatPredictor(Layout);

impl FloatPredictor {
    pub(crate) fn new(configuration: PredictorConfiguration) -> Result<Self, String> {
        let layout = Layout::new(configuration)?;
        if layout.dtype.kind != Kind::Float {
            return Err(format!("dtype {:?} is not a float type", layout.written.dtype));
        }
        Ok(Self(layout))
    }
}

impl Decode for FloatPredictor {
    const ID: &'static str = "imagecodecs_floatpred";
    const SAME_SIZE: bool = true;

    fn configuration(&self) -> Map<String, Value> {
        self.0.configuration()
    }

    fn decode(&self, encoded: &[u8], size: usize) -> Result<Vec<u8>, DecodeError> {
        let Layout { dtype, split, dist, .. } = self.0;
        self.0.check(encoded, size)?;
        let count = split.length * split.inner;
        let row = count * dtype.size;
        let stride = split.inner * dist;
        let mut planes = vec![0u8; row];
        let mut decoded = vec![0u8; encoded.len()];
        for (input, output) in encoded.chunks_exact(row).zip(decoded.chunks_exact_mut(row)) {
            // Undo the byte differencing over the whole row of planes.
            planes.copy_from_slice(input);
            for at in stride..row {
                planes[at] = planes[at].wrapping_add(planes[at - stride]);
            }
            // Plane p holds byte p, most significant first, of every value.
            for (value, out) in output.chunks_exact_mut(dtype.size).enumerate() {
                for (p, byte) in out.iter_mut().enumerate() {
                    let from_most = if dtype.big_endian { p } else { dtype.size - 1 - p };
                    *byte = planes[from_most * count + value];
                }
            }
        }
        Ok(decoded)
    }
}

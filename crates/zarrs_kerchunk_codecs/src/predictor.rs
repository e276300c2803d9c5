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
        // Rows of no value cannot be walked (and a tile has none).
        if split.length == 0 || split.inner == 0 {
            return Err(format!("the shape {:?} has an empty dimension", written.shape));
        }
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
        // A row is the values along the axis; each step of it, `inner` values.
        let (step, row) = (split.inner * dist, split.length * split.inner);
        let big = dtype.big_endian;
        match (dtype.kind, dtype.size) {
            (_, 1) => undo_delta::<u8>(&mut decoded, row, step, big),
            (Kind::Float, 4) => undo_delta::<f32>(&mut decoded, row, step, big),
            (Kind::Float, _) => undo_delta::<f64>(&mut decoded, row, step, big),
            (_, 2) => undo_delta::<u16>(&mut decoded, row, step, big),
            (_, 4) => undo_delta::<u32>(&mut decoded, row, step, big),
            _ => undo_delta::<u64>(&mut decoded, row, step, big),
        }
        Ok(decoded)
    }
}

/// A sample type of the predictors, loaded and stored in either byte order.
trait Sample: Copy {
    const SIZE: usize;
    fn load(bytes: &[u8], big: bool) -> Self;
    fn store(self, bytes: &mut [u8], big: bool);
    /// The sum TIFF's predictor 2 undoes: wrapping for integers (signed
    /// ones wrap alike), IEEE for floats.
    fn sum(self, other: Self) -> Self;
}

macro_rules! sample {
    ($type:ty, $sum:expr) => {
        impl Sample for $type {
            const SIZE: usize = std::mem::size_of::<$type>();

            #[inline]
            fn load(bytes: &[u8], big: bool) -> Self {
                let word = bytes[..Self::SIZE].try_into().unwrap_or_default();
                if big { <$type>::from_be_bytes(word) } else { <$type>::from_le_bytes(word) }
            }

            #[inline]
            fn store(self, bytes: &mut [u8], big: bool) {
                let word = if big { self.to_be_bytes() } else { self.to_le_bytes() };
                bytes[..Self::SIZE].copy_from_slice(&word);
            }

            #[inline]
            fn sum(self, other: Self) -> Self {
                let add: fn(Self, Self) -> Self = $sum;
                add(self, other)
            }
        }
    };
}

sample!(u8, u8::wrapping_add);
sample!(u16, u16::wrapping_add);
sample!(u32, u32::wrapping_add);
sample!(u64, u64::wrapping_add);
sample!(f32, |a, b| a + b);
sample!(f64, |a, b| a + b);

/// Each value of each row of `row` values, from `step` values on, plus the
/// value `step` before it (already summed), in place.
fn undo_delta<T: Sample>(bytes: &mut [u8], row: usize, step: usize, big: bool) {
    for values in bytes.chunks_exact_mut(row * T::SIZE) {
        // One running sum per lane, held in a register: reading back the
        // value just stored would wait on the store at every value.
        for lane in 0..step.min(row) {
            let mut sum = T::load(&values[lane * T::SIZE..], big);
            for at in (lane + step..row).step_by(step) {
                let here = &mut values[at * T::SIZE..];
                sum = T::load(here, big).sum(sum);
                sum.store(here, big);
            }
        }
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
            // The byte planes' differences undone as predictor 2 undoes a row of bytes.
            undo_delta::<u8>(&mut planes, row, stride, false);
            // Plane k holds byte k, most significant first, of every value.
            match dtype.size {
                4 => interleave::<4>(&planes, output, dtype.big_endian),
                8 => interleave::<8>(&planes, output, dtype.big_endian),
                _ => {
                    for (k, plane) in planes.chunks_exact(count).enumerate() {
                        let at = if dtype.big_endian { k } else { dtype.size - 1 - k };
                        for (byte, &value) in output[at..].iter_mut().step_by(dtype.size).zip(plane) {
                            *byte = value;
                        }
                    }
                }
            }
        }
        Ok(decoded)
    }
}

/// The values of `N` bytes whose byte planes (most significant first, one
/// after another) are `planes`, written to `output` in the dtype's order.
fn interleave<const N: usize>(planes: &[u8], output: &mut [u8], big_endian: bool) {
    let count = planes.len() / N;
    for (value, out) in output.chunks_exact_mut(N).enumerate() {
        let mut word = [0u8; N];
        for (k, byte) in word.iter_mut().enumerate() {
            *byte = planes[k * count + value];
        }
        if !big_endian {
            word.reverse();
        }
        out.copy_from_slice(&word);
    }
}

#[cfg(test)]
mod tests {
    use super::{Delta, FloatPredictor, PredictorConfiguration};
    use crate::decode_only::Decode;

    fn configuration(shape: &str) -> PredictorConfiguration {
        serde_json::from_str(&format!(r#"{{"dtype": "<f4", "shape": {shape}, "axis": -1}}"#)).unwrap()
    }

    /// Rows of no value (an empty axis, or nothing after it) are refused when the codec is made:
    /// they could not be walked (a zero-length chunk of them panicked). No rows at all is an
    /// empty chunk, decoded as one.
    #[test]
    fn empty_rows_are_refused() {
        for shape in ["[4, 0]", "[0]"] {
            assert!(Delta::new(configuration(shape)).unwrap_err().contains("empty dimension"), "{shape}");
            assert!(FloatPredictor::new(configuration(shape)).unwrap_err().contains("empty dimension"), "{shape}");
        }
        assert!(Delta::new(configuration("[3, 0, 2]")).unwrap().decode(&[], 0).unwrap().is_empty());
        assert!(FloatPredictor::new(configuration("[3, 0, 2]")).unwrap().decode(&[], 0).unwrap().is_empty());
    }
}

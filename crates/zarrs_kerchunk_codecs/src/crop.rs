//! `zarrs_kerchunk.crop`: chunks stored larger than their place in the grid,
//! cropped to it. HDF5 stores a dataset's last chunk whole (padded past the
//! dataset's end); files of uneven length concatenated on a rectilinear grid
//! put such a chunk in the middle of the combined array, where the grid says
//! it is shorter than it is stored. Zarr has no standard form for this yet
//! (zarr-extensions #74 and #75), so this project defines one.
//!
//! An array-to-array codec, listed first: its configuration is the
//! `stored_chunk_shape`. A chunk whose place is `shape` is stored (and
//! decoded by the codecs after this one) at `max(shape, stored_chunk_shape)`
//! along each axis, and cropped to `shape`: a chunk at least as large as the
//! stored shape is stored as it is. An array-to-array codec rather than a
//! bytes-to-bytes one after the array-to-bytes codec, because that is where
//! both zarrs and zarr-python tell a codec the chunk's shape (zarrs tells a
//! bytes-to-bytes codec only a byte count).
//!
//! ```json
//! {"name": "zarrs_kerchunk.crop", "configuration": {"stored_chunk_shape": [10, 4]}}
//! ```

use std::any::Any;
use std::borrow::Cow;
use std::num::NonZeroU64;
use std::sync::Arc;

use serde::Deserialize;
use zarrs::array::codec::api::{
    ArrayBytes, ArrayCodecTraits, ArrayPartialDecoderTraits, ArrayToArrayCodecTraits, AsyncArrayPartialDecoderTraits,
    CodecError, CodecMetadataOptions, CodecOptions, CodecTraits, PartialDecoderCapability, PartialEncoderCapability,
    RecommendedConcurrency,
};
use zarrs::array::{ChunkShape, DataType, FillValue};
use zarrs::metadata::Configuration;
use zarrs::plugin::{ExtensionName, ZarrVersion};

/// The codec's name in Zarr v3 metadata (it has none in v2, whose grids are regular).
pub const NAME: &str = "zarrs_kerchunk.crop";

/// The codec's configuration.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CropConfiguration {
    /// The shape every chunk smaller than it along an axis is stored at along that axis.
    stored_chunk_shape: Vec<NonZeroU64>,
}

/// Chunks stored at `stored` where their place is smaller, cropped to their place.
#[derive(Clone, Debug)]
pub(crate) struct Crop {
    stored: Vec<NonZeroU64>,
}

impl Crop {
    pub(crate) fn new(configuration: CropConfiguration) -> Result<Self, String> {
        if configuration.stored_chunk_shape.is_empty() {
            return Err("a stored chunk shape of no dimensions".into());
        }
        Ok(Self { stored: configuration.stored_chunk_shape })
    }

    /// The shape a chunk whose place is `shape` is stored at.
    fn stored_shape(&self, shape: &[NonZeroU64]) -> Result<ChunkShape, CodecError> {
        if shape.len() != self.stored.len() {
            return Err(CodecError::Other(format!(
                "{NAME}: a chunk of {} dimensions, where the stored chunk shape has {}",
                shape.len(),
                self.stored.len()
            )));
        }
        Ok(shape.iter().zip(&self.stored).map(|(&place, &stored)| place.max(stored)).collect())
    }
}

impl ExtensionName for Crop {
    fn name(&self, _version: ZarrVersion) -> Option<Cow<'static, str>> {
        Some(Cow::Borrowed(NAME))
    }
}

impl CodecTraits for Crop {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn configuration(&self, _version: ZarrVersion, _options: &CodecMetadataOptions) -> Option<Configuration> {
        let shape: Vec<u64> = self.stored.iter().map(|n| n.get()).collect();
        let configuration = serde_json::json!({ "stored_chunk_shape": shape });
        configuration.as_object().cloned().map(Configuration::from)
    }

    fn partial_decoder_capability(&self) -> PartialDecoderCapability {
        PartialDecoderCapability { partial_read: false, partial_decode: false }
    }

    fn partial_encoder_capability(&self) -> PartialEncoderCapability {
        PartialEncoderCapability { partial_encode: false }
    }
}

impl ArrayCodecTraits for Crop {
    fn recommended_concurrency(
        &self,
        _shape: &[NonZeroU64],
        _data_type: &DataType,
    ) -> Result<RecommendedConcurrency, CodecError> {
        Ok(RecommendedConcurrency::new_maximum(1))
    }
}

#[async_trait::async_trait]
impl ArrayToArrayCodecTraits for Crop {
    fn into_dyn(self: Arc<Self>) -> Arc<dyn ArrayToArrayCodecTraits> {
        self
    }

    fn encoded_data_type(&self, decoded_data_type: &DataType) -> Result<DataType, CodecError> {
        Ok(decoded_data_type.clone())
    }

    fn encoded_fill_value(&self, _data_type: &DataType, fill_value: &FillValue) -> Result<FillValue, CodecError> {
        Ok(fill_value.clone())
    }

    fn encoded_shape(&self, decoded_shape: &[NonZeroU64]) -> Result<ChunkShape, CodecError> {
        self.stored_shape(decoded_shape)
    }

    fn decoded_shape(&self, _encoded_shape: &[NonZeroU64]) -> Result<Option<ChunkShape>, CodecError> {
        // A stored shape is many places' (any smaller along an axis).
        Ok(None)
    }

    /// A region of a chunk's place is the same region of its stored chunk (cropping keeps the
    /// origin): the decoder of the stored chunk reads it as it is.
    fn partial_decoder(
        self: Arc<Self>,
        input_handle: Arc<dyn ArrayPartialDecoderTraits>,
        _shape: &[NonZeroU64],
        _data_type: &DataType,
        _fill_value: &FillValue,
        _options: &CodecOptions,
    ) -> Result<Arc<dyn ArrayPartialDecoderTraits>, CodecError> {
        Ok(input_handle)
    }

    /// As [`partial_decoder`](Self::partial_decoder).
    async fn async_partial_decoder(
        self: Arc<Self>,
        input_handle: Arc<dyn AsyncArrayPartialDecoderTraits>,
        _shape: &[NonZeroU64],
        _data_type: &DataType,
        _fill_value: &FillValue,
        _options: &CodecOptions,
    ) -> Result<Arc<dyn AsyncArrayPartialDecoderTraits>, CodecError> {
        Ok(input_handle)
    }

    /// Pads the chunk to its stored shape with the fill value.
    fn encode<'a>(
        &self,
        bytes: ArrayBytes<'a>,
        shape: &[NonZeroU64],
        data_type: &DataType,
        fill_value: &FillValue,
        _options: &CodecOptions,
    ) -> Result<ArrayBytes<'a>, CodecError> {
        let stored = self.stored_shape(shape)?;
        if stored.as_slice() == shape {
            return Ok(bytes);
        }
        let size = element_size(data_type)?;
        let place = fixed(&bytes, shape, size)?;
        if fill_value.size() != size {
            return Err(CodecError::Other(format!("{NAME}: a fill value of {} bytes", fill_value.size())));
        }
        let mut padded = fill_value.as_ne_bytes().repeat(elements(&stored)?);
        copy_block(place, shape, &mut padded, &stored, size, Direction::IntoLarger);
        Ok(ArrayBytes::new_flen(padded))
    }

    /// Crops the chunk, decoded at its stored shape, to its place.
    fn decode<'a>(
        &self,
        bytes: ArrayBytes<'a>,
        shape: &[NonZeroU64],
        data_type: &DataType,
        _fill_value: &FillValue,
        _options: &CodecOptions,
    ) -> Result<ArrayBytes<'a>, CodecError> {
        let stored = self.stored_shape(shape)?;
        if stored.as_slice() == shape {
            return Ok(bytes);
        }
        let size = element_size(data_type)?;
        let whole = fixed(&bytes, &stored, size)?;
        let mut cropped = vec![0u8; elements(shape)?.checked_mul(size).ok_or_else(too_large)?];
        copy_block(whole, &stored, &mut cropped, shape, size, Direction::FromLarger);
        Ok(ArrayBytes::new_flen(cropped))
    }
}

/// The bytes of one element of `data_type`, which must have a fixed size.
fn element_size(data_type: &DataType) -> Result<usize, CodecError> {
    data_type.fixed_size().ok_or_else(|| CodecError::Other(format!("{NAME}: a data type of variable size")))
}

/// The number of elements of a chunk of `shape`.
fn elements(shape: &[NonZeroU64]) -> Result<usize, CodecError> {
    shape.iter().try_fold(1usize, |n, &d| n.checked_mul(usize::try_from(d.get()).ok()?)).ok_or_else(too_large)
}

fn too_large() -> CodecError {
    CodecError::Other(format!("{NAME}: a chunk larger than memory"))
}

/// The bytes of `array`, which must be a chunk of `shape` of `size`-byte elements.
fn fixed<'b>(array: &'b ArrayBytes<'_>, shape: &[NonZeroU64], size: usize) -> Result<&'b [u8], CodecError> {
    let ArrayBytes::Fixed(bytes) = array else {
        return Err(CodecError::Other(format!("{NAME}: elements of variable size")));
    };
    let expected = elements(shape)?.checked_mul(size).ok_or_else(too_large)?;
    if bytes.len() != expected {
        return Err(CodecError::Other(format!(
            "{NAME}: {} bytes, where a chunk of shape {shape:?} is {expected}",
            bytes.len()
        )));
    }
    Ok(bytes)
}

/// Which way [`copy_block`] copies.
#[derive(Clone, Copy)]
enum Direction {
    /// From the larger chunk's corner block into the smaller one.
    FromLarger,
    /// From the smaller chunk into the larger one's corner block.
    IntoLarger,
}

/// Copies the block at the origin of the larger of two C-order chunks (`from`
/// of `from_shape`, `to` of `to_shape`) that the smaller one fills, a row of
/// the last axis at a time.
fn copy_block(
    from: &[u8],
    from_shape: &[NonZeroU64],
    to: &mut [u8],
    to_shape: &[NonZeroU64],
    size: usize,
    direction: Direction,
) {
    let (large, small) = match direction {
        Direction::FromLarger => (from_shape, to_shape),
        Direction::IntoLarger => (to_shape, from_shape),
    };
    let extent = |shape: &[NonZeroU64], axis: usize| usize::try_from(shape[axis].get()).unwrap_or(usize::MAX);
    let last = small.len() - 1;
    let row = extent(small, last) * size;
    // The strides, in elements, of the larger chunk.
    let mut strides = vec![1usize; large.len()];
    for axis in (0..last).rev() {
        strides[axis] = strides[axis + 1] * extent(large, axis + 1);
    }
    let rows: usize = (0..last).map(|axis| extent(small, axis)).product();
    let mut index = vec![0usize; last];
    for small_row in 0..rows {
        let large_at = index.iter().zip(&strides).map(|(i, s)| i * s).sum::<usize>() * size;
        let small_at = small_row * row;
        match direction {
            Direction::FromLarger => to[small_at..small_at + row].copy_from_slice(&from[large_at..large_at + row]),
            Direction::IntoLarger => to[large_at..large_at + row].copy_from_slice(&from[small_at..small_at + row]),
        }
        // The next row's index, the last of the leading axes fastest.
        for axis in (0..last).rev() {
            index[axis] += 1;
            if index[axis] < extent(small, axis) {
                break;
            }
            index[axis] = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(dims: &[u64]) -> Vec<NonZeroU64> {
        dims.iter().map(|&d| NonZeroU64::new(d).unwrap()).collect()
    }

    fn crop(stored: &[u64]) -> Crop {
        Crop::new(CropConfiguration { stored_chunk_shape: shape(stored) }).unwrap()
    }

    /// A 4x3 chunk stored at 4x3 and placed as 2x3, then as 4x2 and 1x1: the corner block.
    #[test]
    fn a_chunk_is_cropped_to_its_place_along_every_axis() {
        let codec = crop(&[4, 3]);
        let stored: Vec<u8> = (0..12).collect();
        let fill = FillValue::from(0u8);
        let decode = |place: &[u64]| -> Vec<u8> {
            let bytes = ArrayBytes::new_flen(stored.clone());
            let out = codec
                .decode(bytes, &shape(place), &zarrs::array::data_type::uint8(), &fill, &CodecOptions::default())
                .unwrap();
            out.into_fixed().unwrap().into_owned()
        };
        assert_eq!(decode(&[2, 3]), [0, 1, 2, 3, 4, 5]);
        assert_eq!(decode(&[4, 2]), [0, 1, 3, 4, 6, 7, 9, 10]);
        assert_eq!(decode(&[1, 1]), [0]);
        assert_eq!(decode(&[4, 3]), stored);
        // Larger than stored along an axis: stored at its place there.
        assert_eq!(codec.encoded_shape(&shape(&[6, 2])).unwrap(), shape(&[6, 3]));
    }

    /// Encoding pads with the fill value; decoding the padded chunk gives the chunk back.
    #[test]
    fn a_padded_chunk_decodes_to_what_was_encoded() {
        let codec = crop(&[3, 2]);
        let place = shape(&[2, 1]);
        let values: Vec<u8> = [1u16, 2].iter().flat_map(|v| v.to_ne_bytes()).collect();
        let fill = FillValue::from(9u16);
        let options = CodecOptions::default();
        let encoded = codec.encode(
            ArrayBytes::new_flen(values.clone()),
            &place,
            &zarrs::array::data_type::uint16(),
            &fill,
            &options,
        );
        let encoded = encoded.unwrap().into_fixed().unwrap().into_owned();
        let expected: Vec<u8> = [1u16, 9, 2, 9, 9, 9].iter().flat_map(|v| v.to_ne_bytes()).collect();
        assert_eq!(encoded, expected);
        let decoded =
            codec.decode(ArrayBytes::new_flen(encoded), &place, &zarrs::array::data_type::uint16(), &fill, &options);
        assert_eq!(decoded.unwrap().into_fixed().unwrap().into_owned(), values);
    }

    /// Bytes that are not a chunk of the stored shape, or another number of dimensions, are
    /// errors saying so.
    #[test]
    fn what_does_not_fit_is_refused() {
        let codec = crop(&[4, 3]);
        let fill = FillValue::from(0u8);
        let options = CodecOptions::default();
        let error = codec.decode(
            ArrayBytes::new_flen(vec![0; 11]),
            &shape(&[2, 3]),
            &zarrs::array::data_type::uint8(),
            &fill,
            &options,
        );
        assert_eq!(
            error.unwrap_err().to_string(),
            "zarrs_kerchunk.crop: 11 bytes, where a chunk of shape [4, 3] is 12"
        );
        let error = codec.decode(
            ArrayBytes::new_flen(vec![0; 4]),
            &shape(&[4]),
            &zarrs::array::data_type::uint8(),
            &fill,
            &options,
        );
        assert_eq!(
            error.unwrap_err().to_string(),
            "zarrs_kerchunk.crop: a chunk of 1 dimensions, where the stored chunk shape has 2"
        );
    }
}

//! `imagecodecs_lerc`: TIFF tiles and strips compressed with Esri's LERC
//! (compression 34887), as GDAL writes them under its three creation
//! options, all of which tifffile (and so kerchunk) names with this one id:
//! `LERC` (the blob itself), `LERC_DEFLATE` (the blob in a zlib stream) and
//! `LERC_ZSTD` (in a Zstandard frame). Decoded by `lerc-rs`, a pure-Rust
//! LERC 1 and 2 decoder, into the blob's samples (bands, rows, columns and
//! values per pixel, in that order), little-endian; pixels LERC's mask marks
//! invalid are 0. Lossy LERC (`MAX_Z_ERROR`) is dequantised arithmetically,
//! so decoders agree on it exactly.

use crate::bounded::read_bounded;
use crate::decode_only::Decode;
use crate::error::DecodeError;

/// `imagecodecs_lerc`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Lerc;

/// Zstandard's frame magic, little-endian.
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];

/// A LERC blob can be larger than the samples it holds (its header, masks
/// and incompressible values): the wrapped blob is allowed this much more.
fn blob_limit(size: usize) -> usize {
    size.saturating_mul(2).saturating_add(1 << 16)
}

impl Decode for Lerc {
    const ID: &'static str = "imagecodecs_lerc";

    fn decode(&self, encoded: &[u8], size: usize) -> Result<Vec<u8>, DecodeError> {
        let unwrapped;
        let blob = if encoded.starts_with(b"Lerc2 ") || encoded.starts_with(b"CntZImage ") {
            encoded
        } else if encoded.starts_with(&ZSTD_MAGIC) {
            let decoder = ruzstd::decoding::StreamingDecoder::new(encoded).map_err(DecodeError::corrupt)?;
            unwrapped = read_bounded(decoder, blob_limit(size), encoded.len().saturating_mul(4))?;
            &unwrapped
        } else {
            let decoder = flate2::read::ZlibDecoder::new(encoded);
            unwrapped = read_bounded(decoder, blob_limit(size), encoded.len().saturating_mul(4))?;
            &unwrapped
        };
        let info = ::lerc::decode_info(blob).map_err(DecodeError::corrupt)?;
        let samples = [info.width, info.height, info.depth, info.bands]
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(usize::try_from(d).ok()?));
        if samples.and_then(|n| n.checked_mul(info.data_type.size())).is_none_or(|bytes| bytes > size) {
            return Err(DecodeError::TooLong { size });
        }
        let image = ::lerc::decode(blob).map_err(DecodeError::corrupt)?;
        Ok(little_endian(image.data))
    }
}

/// The samples' bytes, little-endian (as imagecodecs returns them on the
/// machines kerchunk runs on).
fn little_endian(data: ::lerc::SampleData) -> Vec<u8> {
    use ::lerc::SampleData;
    fn bytes<T, const N: usize>(values: Vec<T>, to_le: fn(T) -> [u8; N]) -> Vec<u8> {
        values.into_iter().flat_map(to_le).collect()
    }
    match data {
        SampleData::I8(values) => bytes(values, i8::to_le_bytes),
        SampleData::U8(values) => values,
        SampleData::I16(values) => bytes(values, i16::to_le_bytes),
        SampleData::U16(values) => bytes(values, u16::to_le_bytes),
        SampleData::I32(values) => bytes(values, i32::to_le_bytes),
        SampleData::U32(values) => bytes(values, u32::to_le_bytes),
        SampleData::F32(values) => bytes(values, f32::to_le_bytes),
        SampleData::F64(values) => bytes(values, f64::to_le_bytes),
    }
}

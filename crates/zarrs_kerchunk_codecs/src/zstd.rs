//! `imagecodecs_zstd`: Zstandard (TIFF compression 50000), as tifffile's
//! zarr store names it, decoded in pure Rust by ruzstd, or by the C library
//! with the feature `zstd-c`.

use crate::bounded::read_bounded;
use crate::decode_only::Decode;
use crate::error::DecodeError;

/// Zstandard frames, one after another, decoded by ruzstd.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Zstd;

impl Decode for Zstd {
    const ID: &'static str = "imagecodecs_zstd";

    fn decode(&self, encoded: &[u8], size: usize) -> Result<Vec<u8>, DecodeError> {
        let mut source = encoded;
        let mut decoded = Vec::new();
        // A chunk may hold several frames (zstd's own tool concatenates them).
        while !source.is_empty() {
            let left = source.len();
            let room = size - decoded.len();
            let capacity = encoded.len().saturating_mul(8);
            #[cfg(feature = "zstd-c")]
            let frame = read_bounded(
                zstd::stream::read::Decoder::with_buffer(&mut source).map_err(DecodeError::corrupt)?.single_frame(),
                room,
                capacity,
            );
            #[cfg(not(feature = "zstd-c"))]
            let frame = read_bounded(
                ruzstd::decoding::StreamingDecoder::new(&mut source).map_err(DecodeError::corrupt)?,
                room,
                capacity,
            );
            decoded.extend(frame.map_err(|error| match error {
                DecodeError::TooLong { .. } => DecodeError::TooLong { size },
                other => other,
            })?);
            // Each frame moves on through the chunk, or the loop would never end.
            if source.len() == left {
                let at = encoded.len() - left;
                return Err(DecodeError::Layout(format!("a Zstandard frame at byte {at} that reads nothing")));
            }
        }
        Ok(decoded)
    }
}

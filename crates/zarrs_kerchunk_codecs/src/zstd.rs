//! `imagecodecs_zstd`: Zstandard (TIFF compression 50000), as tifffile's
//! zarr store names it, decoded in pure Rust by ruzstd, or by the C library
//! with the feature `zstd-c`.

use crate::bounded::read_bounded;
use crate::decode_only::Decode;
use crate::error::DecodeError;

/// Zstandard frames, one after another, decoded by ruzstd, or by the C
/// library with the feature `zstd-c`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Zstd;

impl Decode for Zstd {
    const ID: &'static str = "imagecodecs_zstd";

    fn decode(&self, encoded: &[u8], size: usize) -> Result<Vec<u8>, DecodeError> {
        #[cfg(feature = "zstd-c")]
        let frame = |source: &mut &[u8], room, capacity| {
            let decoder = zstd::stream::read::Decoder::with_buffer(source).map_err(DecodeError::corrupt)?;
            read_bounded(decoder.single_frame(), room, capacity)
        };
        #[cfg(not(feature = "zstd-c"))]
        let frame = pure_frame;
        frames(encoded, size, frame)
    }
}

/// [`Zstd`] through ruzstd whatever the features: the decoder of builds
/// without `zstd-c`, so that every build's tests check it.
#[cfg(test)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PureZstd;

#[cfg(test)]
impl Decode for PureZstd {
    const ID: &'static str = "imagecodecs_zstd";

    fn decode(&self, encoded: &[u8], size: usize) -> Result<Vec<u8>, DecodeError> {
        frames(encoded, size, pure_frame)
    }
}

/// One frame from the start of `source`, by ruzstd, at most `room` bytes.
#[cfg(any(test, not(feature = "zstd-c")))]
fn pure_frame(source: &mut &[u8], room: usize, capacity: usize) -> Result<Vec<u8>, DecodeError> {
    read_bounded(ruzstd::decoding::StreamingDecoder::new(source).map_err(DecodeError::corrupt)?, room, capacity)
}

/// The frames of `encoded`, each read by `frame` from what is left, into
/// one chunk of at most `size` bytes.
fn frames(
    encoded: &[u8],
    size: usize,
    frame: impl Fn(&mut &[u8], usize, usize) -> Result<Vec<u8>, DecodeError>,
) -> Result<Vec<u8>, DecodeError> {
    let mut source = encoded;
    let mut decoded = Vec::new();
    // A chunk may hold several frames (zstd's own tool concatenates them).
    while !source.is_empty() {
        let left = source.len();
        let room = size - decoded.len();
        let capacity = encoded.len().saturating_mul(8);
        decoded.extend(frame(&mut source, room, capacity).map_err(|error| match error {
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

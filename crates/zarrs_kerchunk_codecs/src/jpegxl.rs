//! `imagecodecs_jpegxl`: TIFF tiles compressed as JPEG XL (compression
//! 50002, which tifffile writes, and GDAL's `GTiff` where it is built with
//! libjxl), decoded by `jxl-oxide`, a pure-Rust JPEG XL decoder, into the
//! tile's samples interleaved by pixel: 8-bit images one byte a sample,
//! up to 16 bits two (little-endian), as imagecodecs returns them. Lossless
//! integer images decode exactly; lossy ones within the decoders' rounding.

use crate::decode_only::Decode;
use crate::error::DecodeError;

/// `imagecodecs_jpegxl`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct JpegXl;

impl Decode for JpegXl {
    const ID: &'static str = "imagecodecs_jpegxl";

    fn decode(&self, encoded: &[u8], size: usize) -> Result<Vec<u8>, DecodeError> {
        // The decoder's own buffers are held to a few times the tile's samples (as f32 or i32).
        let tracker = jxl_oxide::AllocTracker::with_limit(size.saturating_mul(16).saturating_add(1 << 20));
        let image = jxl_oxide::JxlImage::builder()
            .alloc_tracker(tracker)
            .read(std::io::Cursor::new(encoded))
            .map_err(|e| DecodeError::in_format("JPEG XL", e))?;
        let bits = image.image_header().metadata.bit_depth.bits_per_sample();
        let item = match bits {
            1..=8 => 1,
            9..=16 => 2,
            _ => return Err(DecodeError::Layout(format!("JPEG XL of {bits} bits a sample (at most 16 are decoded)"))),
        };
        let render = image.render_frame(0).map_err(|e| DecodeError::in_format("JPEG XL", e))?;
        let mut stream = render.stream();
        let samples = [stream.width(), stream.height(), stream.channels()]
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(usize::try_from(d).ok()?));
        let Some(samples) = samples.filter(|n| n.saturating_mul(item) <= size) else {
            return Err(DecodeError::TooLong { size });
        };
        if item == 1 {
            let mut out = vec![0u8; samples];
            stream.write_to_buffer(&mut out);
            return Ok(out);
        }
        let mut wide = vec![0u16; samples];
        stream.write_to_buffer(&mut wide);
        Ok(wide.into_iter().flat_map(u16::to_le_bytes).collect())
    }
}

//! `imagecodecs_lzw`: TIFF's LZW (compression 5), as tifffile's zarr store
//! names it.

use crate::decode_only::Decode;
use crate::error::DecodeError;

/// TIFF's LZW: codes of 9 to 12 bits, most significant bit first, the code
/// size switching one code early (TIFF 6.0, section 13), decoded by weezl.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Lzw;

impl Decode for Lzw {
    const ID: &'static str = "imagecodecs_lzw";

    fn decode(&self, encoded: &[u8], size: usize) -> Result<Vec<u8>, DecodeError> {
        let mut lzw = weezl::decode::Decoder::with_tiff_size_switch(weezl::BitOrder::Msb, 8);
        // One byte more than the chunk: a stream that fills it goes on too long.
        let mut output = vec![0u8; size.saturating_add(1).min(bound(encoded.len()))];
        let (mut read, mut written) = (0, 0);
        loop {
            let result = lzw.decode_bytes(&encoded[read..], &mut output[written..]);
            read += result.consumed_in;
            written += result.consumed_out;
            match result.status.map_err(DecodeError::corrupt)? {
                weezl::LzwStatus::Done => break,
                // The input ran out without an end code: TIFF writers may omit it.
                weezl::LzwStatus::NoProgress if read == encoded.len() => break,
                weezl::LzwStatus::NoProgress | weezl::LzwStatus::Ok if written == output.len() => {
                    if written > size {
                        return Err(DecodeError::TooLong { size });
                    }
                    // The buffer was bounded by what the input could give; it gives more.
                    output.resize(output.len().saturating_mul(2).min(size.saturating_add(1)), 0);
                }
                weezl::LzwStatus::NoProgress => return Err(DecodeError::Truncated { decoded: written, size }),
                weezl::LzwStatus::Ok => {}
            }
        }
        if written > size {
            return Err(DecodeError::TooLong { size });
        }
        output.truncate(written);
        Ok(output)
    }
}

/// The most a stream of `len` bytes can decode to: a 12-bit code stands for
/// at most 4 096 bytes, so 1.5 bytes give at most 4 096 (bounded first
/// buffer; it grows if the stream really gives more).
fn bound(len: usize) -> usize {
    len.saturating_mul(2731).saturating_add(4096)
}

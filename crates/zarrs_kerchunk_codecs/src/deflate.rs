//! `deflate`: kerchunk's codec for raw deflate streams (RFC 1951, no zlib
//! header), such as the members of a zip archive.

use crate::bounded::read_bounded;
use crate::decode_only::Decode;
use crate::error::DecodeError;

/// A raw deflate stream, inflated by zlib-rs through flate2.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Deflate;

/// How far one byte of deflate can inflate (a 258-byte match in 2 bits).
const MAX_INFLATION: usize = 1032;

impl Decode for Deflate {
    const ID: &'static str = "deflate";

    fn decode(&self, encoded: &[u8], size: usize) -> Result<Vec<u8>, DecodeError> {
        let first = encoded.len().saturating_mul(MAX_INFLATION);
        read_bounded(flate2::read::DeflateDecoder::new(encoded), size, first)
    }
}

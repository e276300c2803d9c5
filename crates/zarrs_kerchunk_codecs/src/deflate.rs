//! `deflate`: kerchunk's codec for the DEFLATE members of a zip archive
//! (`kerchunk.codecs.DeflateCodec`). kerchunk's `utils.dereference_archives`
//! points such a member's reference at its local file header, so a chunk is
//! the 30-octet header, the file name, the extra field, then the raw
//! deflate stream (RFC 1951) of the member.

use crate::bounded::read_bounded;
use crate::decode_only::Decode;
use crate::error::DecodeError;

/// A zip member: its local file header skipped, its stream inflated by
/// zlib-rs through flate2.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Deflate;

/// How far one byte of deflate can inflate (a 258-byte match in 2 bits).
const MAX_INFLATION: usize = 1032;

/// A local file header's signature and length (APPNOTE 4.3.7).
const SIGNATURE: &[u8] = b"PK\x03\x04";
const HEADER: usize = 30;

/// The member's deflate stream: what follows the local file header, its
/// file name and its extra field. The header's compressed size is not
/// needed (a deflate stream ends itself), and is 0 in archives written as
/// streams.
fn member_stream(chunk: &[u8]) -> Result<&[u8], DecodeError> {
    let invalid = |reason: String| DecodeError::Layout(format!("not a zip member's local file header: {reason}"));
    if chunk.len() < HEADER || &chunk[..4] != SIGNATURE {
        return Err(invalid(format!("{} octets without the signature PK\\3\\4", chunk.len().min(HEADER))));
    }
    let method = u16::from_le_bytes([chunk[8], chunk[9]]);
    if method != 8 {
        return Err(invalid(format!("compression method {method} (8, DEFLATE, is decoded)")));
    }
    let name = usize::from(u16::from_le_bytes([chunk[26], chunk[27]]));
    let extra = usize::from(u16::from_le_bytes([chunk[28], chunk[29]]));
    chunk
        .get(HEADER + name + extra..)
        .ok_or_else(|| invalid(format!("a name of {name} and an extra field of {extra} octets run past the chunk")))
}

impl Decode for Deflate {
    const ID: &'static str = "deflate";

    fn decode(&self, encoded: &[u8], size: usize) -> Result<Vec<u8>, DecodeError> {
        let stream = member_stream(encoded)?;
        let first = stream.len().saturating_mul(MAX_INFLATION);
        read_bounded(flate2::read::DeflateDecoder::new(stream), size, first)
    }
}

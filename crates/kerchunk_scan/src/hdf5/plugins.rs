//! Decoders for the HDF5 filters outside the HDF5 library that kerchunk holds
//! decoded when an array is small: h5py's LZF (filter 32000), HDF5's LZ4
//! plugin (32004) and the bitshuffle plugin (32008, uncompressed or with
//! LZ4). hdf5-reader 0.12.1's own LZ4 reads a block size before every block,
//! where the plugin writes one for the chunk, so a chunk of several blocks
//! failed ("truncated block data"); this one follows the plugin. References cannot point at
//! their chunks (zarr has no codec for them), so only arrays under the
//! inline threshold are decoded, whole, through these.
//!
//! Each bounds what it writes: LZF (the `lzf` crate, a pure-Rust port of
//! liblzf) by the chunk size h5py records in the filter's values, LZ4 and
//! bitshuffle by what LZ4 can expand their input to.

use hdf5_reader::error::Error;
use hdf5_reader::filters::FilterRegistry;
use hdf5_reader::messages::filter_pipeline::FilterDescription;

/// The most bytes a filter here writes for one chunk.
const MOST: usize = 64 << 20;

fn failed(filter: &str, reason: impl Into<String>) -> Error {
    Error::DecompressionError(format!("{filter}: {}", reason.into()))
}

/// The built-in filters, and these.
pub(crate) fn registry() -> FilterRegistry {
    let mut registry = FilterRegistry::new();
    registry.register(32000, Box::new(|filter, data, _| lzf(filter, data)));
    registry.register(32004, Box::new(|_, data, _| lz4(data)));
    registry.register(32008, Box::new(bitshuffle));
    registry
}

/// h5py's LZF: a chunk compressed whole by liblzf; its values are the
/// filter's version, LZF's, and the chunk's size in bytes, which bounds the
/// output (as does what LZF can expand its input to: 264 bytes from 3).
fn lzf(filter: &FilterDescription, data: &[u8]) -> Result<Vec<u8>, Error> {
    let size = filter.client_data.get(2).map_or(MOST, |&s| usize::try_from(s).unwrap_or(MOST));
    let size = size.min(MOST).min(data.len().saturating_mul(88));
    lzf::decompress(data, size).map_err(|e| failed("lzf", format!("{e:?}")))
}

/// HDF5's LZ4 plugin: the chunk's size (8 bytes) and block size (4), then
/// each block's compressed size (4) and its LZ4 block, a block stored as it
/// is where compressing did not shrink it.
fn lz4(data: &[u8]) -> Result<Vec<u8>, Error> {
    let header = data.get(..12).ok_or_else(|| failed("lz4", "no 12-byte header"))?;
    let total = usize::try_from(u64::from_be_bytes(header[..8].try_into().unwrap_or_default())).unwrap_or(usize::MAX);
    let block = usize::try_from(u32::from_be_bytes(header[8..12].try_into().unwrap_or_default())).unwrap_or(0);
    if total > MOST || total > data.len().saturating_mul(256) || (block == 0 && total > 0) {
        return Err(failed("lz4", format!("a header of {total} bytes in blocks of {block}")));
    }
    let mut out = Vec::with_capacity(total);
    let mut at = 12;
    while out.len() < total {
        let expected = block.min(total - out.len());
        let length = data
            .get(at..at + 4)
            .map(|b| u32::from_be_bytes(b.try_into().unwrap_or_default()) as usize)
            .ok_or_else(|| failed("lz4", "a block's length past the input"))?;
        let stored = data.get(at + 4..at + 4 + length).ok_or_else(|| failed("lz4", "a block past the input"))?;
        if length == expected {
            out.extend_from_slice(stored);
        } else {
            let decoded = lz4_flex::block::decompress(stored, expected).map_err(|e| failed("lz4", e.to_string()))?;
            out.extend(decoded);
        }
        at += 4 + length;
    }
    Ok(out)
}

/// bitshuffle's default block: 8 KiB of elements, in a multiple of 8, at least 128.
fn default_block(element: usize) -> usize {
    ((8192 / element.max(1)) / 8 * 8).max(128)
}

/// The bitshuffle plugin: blocks of elements whose bits were transposed,
/// each LZ4-compressed (after a 12-byte header of the total size and the
/// block size in bytes) or not; the last `n % 8` elements are stored as they are.
/// Its values are the plugin's version (two), the element size, the block
/// size in elements (0: the default) and the compression (0 none, 2 LZ4).
fn bitshuffle(filter: &FilterDescription, data: &[u8], element_size: usize) -> Result<Vec<u8>, Error> {
    let value = |i: usize| filter.client_data.get(i).map(|&v| usize::try_from(v).unwrap_or(0));
    let element = value(2).filter(|&e| e > 0).unwrap_or(element_size).max(1);
    match value(4).unwrap_or(0) {
        0 => {
            let block = value(3).filter(|&b| b > 0).unwrap_or_else(|| default_block(element));
            Ok(unshuffle_all(data, element, block))
        }
        2 => {
            let header = data.get(..12).ok_or_else(|| failed("bitshuffle", "no 12-byte header"))?;
            let total =
                usize::try_from(u64::from_be_bytes(header[..8].try_into().unwrap_or_default())).unwrap_or(usize::MAX);
            let block_bytes =
                usize::try_from(u32::from_be_bytes(header[8..12].try_into().unwrap_or_default())).unwrap_or(0);
            if total > MOST || total > data.len().saturating_mul(256) || block_bytes == 0 || block_bytes % element != 0
            {
                return Err(failed("bitshuffle", format!("a header of {total} bytes in blocks of {block_bytes}")));
            }
            let (elements, block) = (total / element, block_bytes / element);
            let mut out = Vec::with_capacity(total);
            let mut at = 12;
            let mut done = 0;
            while done + 8 <= elements {
                let count = if elements - done >= block { block } else { (elements - done) / 8 * 8 };
                let length = data
                    .get(at..at + 4)
                    .map(|b| u32::from_be_bytes(b.try_into().unwrap_or_default()) as usize)
                    .ok_or_else(|| failed("bitshuffle", "a block's length past the input"))?;
                let compressed =
                    data.get(at + 4..at + 4 + length).ok_or_else(|| failed("bitshuffle", "a block past the input"))?;
                let shuffled = lz4_flex::block::decompress(compressed, count * element)
                    .map_err(|e| failed("bitshuffle", format!("LZ4: {e}")))?;
                out.extend(unshuffle(&shuffled, element, count));
                at += 4 + length;
                done += count;
            }
            // The last elements, fewer than 8, as they are.
            let rest = data
                .get(at..at + (elements - done) * element)
                .ok_or_else(|| failed("bitshuffle", "the last elements past the input"))?;
            out.extend_from_slice(rest);
            Ok(out)
        }
        other => Err(failed("bitshuffle", format!("compression {other} (3 is zstd) is not decoded"))),
    }
}

/// An uncompressed bitshuffled buffer: whole blocks, then the rest in a
/// multiple of 8, then the last elements as they are.
fn unshuffle_all(data: &[u8], element: usize, block: usize) -> Vec<u8> {
    let elements = data.len() / element;
    let mut out = Vec::with_capacity(data.len());
    let mut done = 0;
    while done + 8 <= elements {
        let count = if elements - done >= block { block } else { (elements - done) / 8 * 8 };
        out.extend(unshuffle(&data[done * element..(done + count) * element], element, count));
        done += count;
    }
    out.extend_from_slice(&data[done * element..]);
    out
}

/// One block of `count` elements (a multiple of 8) of `element` bytes whose
/// bits were transposed: bit `b` of byte `j` of element `i` is bit
/// `(j * 8 + b) * count + i` of the block, counted from each byte's lowest bit.
fn unshuffle(block: &[u8], element: usize, count: usize) -> Vec<u8> {
    let mut out = vec![0u8; count * element];
    for j in 0..element {
        for b in 0..8 {
            let row = (j * 8 + b) * count;
            for i in 0..count {
                let bit = row + i;
                if block.get(bit / 8).is_some_and(|byte| byte >> (bit % 8) & 1 == 1) {
                    out[i * element + j] |= 1 << b;
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(id: u16, client_data: Vec<u32>) -> FilterDescription {
        FilterDescription { id, name: None, client_data }
    }

    /// Damaged input is an error, never a panic or an allocation of what a header claims.
    #[test]
    fn damaged_input_is_an_error() {
        let lzf_filter = filter(32000, vec![4, 1, 100]);
        // A reference before anything was written; a literal run past the input; too much output.
        assert!(lzf(&lzf_filter, &[0x20, 0x00]).is_err());
        assert!(lzf(&lzf_filter, &[0x05, 1, 2]).is_err());
        assert!(lzf(&filter(32000, vec![4, 1, 2]), &[0x02, 1, 2, 3]).is_err());
        assert_eq!(lzf(&lzf_filter, &[0x02, 1, 2, 3, 0x20, 0x02]).unwrap(), [1, 2, 3, 1, 2, 3]);
        // LZ4: a header claiming a gigabyte from a few bytes; a block past the input.
        let mut claim = vec![0, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 1, 0];
        assert!(lz4(&claim).is_err());
        claim[4] = 0;
        claim[7] = 8;
        claim.extend([0, 0, 0, 9, 1]);
        assert!(lz4(&claim).is_err());
        // bitshuffle: zstd is refused by name; a header past the input.
        let zstd = filter(32008, vec![0, 3, 4, 0, 3]);
        assert!(bitshuffle(&zstd, &[0; 16], 4).unwrap_err().to_string().contains("zstd"));
        assert!(bitshuffle(&filter(32008, vec![0, 3, 4, 0, 2]), &[0; 4], 4).is_err());
    }

    /// Eight one-byte elements, bit-transposed: element i's bit b is bit b * 8 + i.
    #[test]
    fn bits_go_back_to_their_elements() {
        let elements: Vec<u8> = (0..8).map(|i| 1 << i).collect();
        // Element i has only bit i set: in the transposed block, row b holds element b's bit.
        let transposed: Vec<u8> = (0..8).map(|b| 1 << b).collect();
        assert_eq!(unshuffle(&transposed, 1, 8), elements);
    }
}

//! The byte formats of HDF5's LZ4 filter plugin (32004) and the bitshuffle
//! plugin (32008), decoded in pure Rust.
//!
//! - [`lz4_blocks`]: HDF5's LZ4 plugin, which imagecodecs names `lz4h5`: the
//!   chunk's size (8 bytes, big-endian) and block size (4), then each
//!   block's stored size (4) and the block, LZ4-compressed, or as it is
//!   where compressing did not shrink it.
//! - [`bitunshuffle`]: the bitshuffle plugin without compression (and
//!   imagecodecs' `bitshuffle`): blocks of elements whose bits were
//!   transposed, the last elements (fewer than 8) as they are.
//! - [`bitshuffle_lz4`]: the bitshuffle plugin with LZ4: the same 12-byte
//!   header, then each transposed block LZ4-compressed after its size, the
//!   last elements (fewer than 8) as they are.
//!
//! Every decoder stops at a bound the caller gives (`most` bytes): a header
//! that claims more is an error before anything is allocated for it.
//!
//! ```
//! // A chunk of HDF5's LZ4 plugin whose one block is stored as it is.
//! let mut chunk = 5u64.to_be_bytes().to_vec();
//! chunk.extend(5u32.to_be_bytes());
//! chunk.extend(5u32.to_be_bytes());
//! chunk.extend(b"hello");
//! assert_eq!(hdf5_plugin_filters::lz4_blocks(&chunk, 1 << 20)?, b"hello");
//! # Ok::<(), hdf5_plugin_filters::FilterError>(())
//! ```

/// Why a chunk could not be decoded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FilterError {
    /// The bytes are not what the plugin writes: cut short, or a header or
    /// block that contradicts itself or the bound.
    #[error("{filter}: {reason}")]
    Corrupt {
        /// `lz4` or `bitshuffle`.
        filter: &'static str,
        /// What was wrong, and where.
        reason: String,
    },
    /// A block of [`lz4_blocks`] whose stored size equals its decoded size
    /// (so the LZ4 plugin stored it as it is) and that is also a valid LZ4
    /// block of that size (as the bitshuffle plugin, which never stores a
    /// block as it is, would write it): which it is cannot be told.
    #[error(
        "lz4: block {block} is {size} bytes both as stored and as decoded, and reads as LZ4 too: \
         whether it was stored as it is cannot be told"
    )]
    Ambiguous {
        /// The block's index in the chunk, from 0.
        block: usize,
        /// Its size in bytes.
        size: usize,
    },
}

fn corrupt(filter: &'static str, reason: impl Into<String>) -> FilterError {
    FilterError::Corrupt { filter, reason: reason.into() }
}

/// The 12-byte header both plugins write: the chunk's decoded size and the
/// block size, in bytes, refused if more than `most` bytes or than the
/// input could hold (LZ4 writes at most 255 bytes from 1).
fn header(filter: &'static str, data: &[u8], most: usize) -> Result<(usize, usize), FilterError> {
    let (Some(total), Some(block)) = (data.get(..8), data.get(8..12)) else {
        return Err(corrupt(filter, format!("{} bytes, short of the 12-byte header", data.len())));
    };
    let total = u64::from_be_bytes(total.try_into().unwrap_or_default());
    let block = u32::from_be_bytes(block.try_into().unwrap_or_default());
    let (total, block) = (usize::try_from(total).unwrap_or(usize::MAX), usize::try_from(block).unwrap_or(0));
    if total > most || total > data.len().saturating_mul(255) || (block == 0 && total > 0) {
        return Err(corrupt(filter, format!("a header of {total} bytes in blocks of {block} (at most {most} here)")));
    }
    Ok((total, block))
}

/// The stored block at `at`: its 4-byte size, then its bytes.
fn stored_block<'a>(filter: &'static str, data: &'a [u8], at: usize) -> Result<&'a [u8], FilterError> {
    let length = data
        .get(at..at.saturating_add(4))
        .map(|b| u32::from_be_bytes(b.try_into().unwrap_or_default()) as usize)
        .ok_or_else(|| corrupt(filter, format!("a block's size at byte {at}, past the input")))?;
    data.get(at + 4..(at + 4).saturating_add(length))
        .ok_or_else(|| corrupt(filter, format!("a block of {length} bytes at byte {at}, past the input")))
}

fn lz4(filter: &'static str, block: &[u8], size: usize) -> Result<Vec<u8>, FilterError> {
    let decoded = lz4_flex::block::decompress(block, size).map_err(|e| corrupt(filter, format!("LZ4: {e}")))?;
    if decoded.len() == size {
        Ok(decoded)
    } else {
        Err(corrupt(filter, format!("an LZ4 block of {} bytes where {size} were due", decoded.len())))
    }
}

/// A chunk of HDF5's LZ4 plugin (imagecodecs' `lz4h5`), of at most `most`
/// bytes decoded.
///
/// # Errors
///
/// [`FilterError::Corrupt`] for a chunk cut short or whose header or blocks
/// contradict each other or `most`; [`FilterError::Ambiguous`] for a block
/// that reads both as stored and as LZ4 (the plugin and imagecodecs take it
/// as stored; the bitshuffle plugin would have meant LZ4).
pub fn lz4_blocks(data: &[u8], most: usize) -> Result<Vec<u8>, FilterError> {
    let (total, block) = header("lz4", data, most)?;
    let mut out = Vec::with_capacity(total);
    let mut at = 12;
    while out.len() < total {
        let due = block.min(total - out.len());
        let stored = stored_block("lz4", data, at)?;
        if stored.len() == due {
            if lz4("lz4", stored, due).is_ok() {
                return Err(FilterError::Ambiguous { block: (at - 12) / block.max(1), size: due });
            }
            out.extend_from_slice(stored);
        } else {
            out.extend(lz4("lz4", stored, due)?);
        }
        at += 4 + stored.len();
    }
    Ok(out)
}

/// bitshuffle's default block: 8 KiB of elements, in a multiple of 8, at
/// least 128 elements (`bshuf_default_block_size`).
#[must_use]
pub fn default_block(element: usize) -> usize {
    ((8192 / element.max(1)) / 8 * 8).max(128)
}

/// Bitshuffled bytes without compression (the bitshuffle plugin with
/// compression 0, imagecodecs' `bitshuffle`): elements of `element` bytes
/// in blocks of `block` elements (0: [`default_block`]), whole blocks, then
/// the rest in a multiple of 8, then the last elements and any bytes past
/// the last whole element as they are.
#[must_use]
pub fn bitunshuffle(data: &[u8], element: usize, block: usize) -> Vec<u8> {
    let element = element.max(1);
    let block = if block == 0 { default_block(element) } else { block };
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

/// A chunk of the bitshuffle plugin with LZ4 (compression 2), of elements
/// of `element` bytes, at most `most` bytes decoded.
///
/// # Errors
///
/// [`FilterError::Corrupt`] for a chunk cut short, a header whose block is
/// not whole elements, or blocks that do not decode to their size.
pub fn bitshuffle_lz4(data: &[u8], element: usize, most: usize) -> Result<Vec<u8>, FilterError> {
    let element = element.max(1);
    let (total, block_bytes) = header("bitshuffle", data, most)?;
    if !block_bytes.is_multiple_of(element) {
        return Err(corrupt("bitshuffle", format!("blocks of {block_bytes} bytes for elements of {element}")));
    }
    let (elements, block) = (total / element, block_bytes / element);
    let mut out = Vec::with_capacity(total);
    let mut at = 12;
    let mut done = 0;
    while done + 8 <= elements {
        let count = if elements - done >= block { block } else { (elements - done) / 8 * 8 };
        let stored = stored_block("bitshuffle", data, at)?;
        out.extend(unshuffle(&lz4("bitshuffle", stored, count * element)?, element, count));
        at += 4 + stored.len();
        done += count;
    }
    // The last elements, fewer than 8, as they are.
    let rest = total - out.len();
    let last = data
        .get(at..at + rest)
        .ok_or_else(|| corrupt("bitshuffle", format!("the last {rest} bytes at byte {at}, past the input")))?;
    out.extend_from_slice(last);
    Ok(out)
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

    fn chunk(total: u64, block: u32, blocks: &[&[u8]]) -> Vec<u8> {
        let mut out = total.to_be_bytes().to_vec();
        out.extend(block.to_be_bytes());
        for b in blocks {
            out.extend(u32::try_from(b.len()).unwrap().to_be_bytes());
            out.extend(*b);
        }
        out
    }

    /// Damaged input is an error naming what is wrong, never a panic or an
    /// allocation of what a header claims.
    #[test]
    fn damaged_input_is_an_error() {
        let message = |r: Result<Vec<u8>, FilterError>| r.unwrap_err().to_string();
        // A header claiming a gigabyte from a few bytes.
        let claim = chunk(1 << 30, 1 << 16, &[]);
        assert_eq!(
            message(lz4_blocks(&claim, usize::MAX)),
            format!("lz4: a header of {} bytes in blocks of 65536 (at most {} here)", 1 << 30, usize::MAX)
        );
        assert!(message(lz4_blocks(&chunk(8, 8, &[]), 4)).starts_with("lz4: a header of 8 bytes"));
        // A block past the input.
        let mut cut = chunk(8, 8, &[&[1; 9]]);
        cut.truncate(20);
        assert_eq!(message(lz4_blocks(&cut, 64)), "lz4: a block of 9 bytes at byte 12, past the input");
        assert_eq!(message(lz4_blocks(&[0; 4], 64)), "lz4: 4 bytes, short of the 12-byte header");
        // bitshuffle: blocks that are not whole elements; the last bytes missing.
        assert_eq!(
            message(bitshuffle_lz4(&chunk(12, 6, &[]), 4, 64)),
            "bitshuffle: blocks of 6 bytes for elements of 4"
        );
        assert_eq!(
            message(bitshuffle_lz4(&chunk(12, 32, &[]), 4, 64)),
            "bitshuffle: the last 12 bytes at byte 12, past the input"
        );
    }

    /// A block stored as it is, and one compressed: LZ4 of eight `7`s (a
    /// literal then a match of the one before).
    #[test]
    fn blocks_stored_and_compressed() {
        let compressed = lz4_flex::block::compress(&[7; 16]);
        assert!(compressed.len() < 16);
        let data = chunk(19, 16, &[&compressed, b"abc"]);
        let mut expected = vec![7; 16];
        expected.extend(b"abc");
        assert_eq!(lz4_blocks(&data, 64).unwrap(), expected);
    }

    /// A block whose stored size equals its decoded size and that is valid
    /// LZ4 of that size too is refused, not guessed.
    #[test]
    fn a_block_of_both_readings_is_refused() {
        // 13 bytes of LZ4 that decode to 13: four literals and a match of four at offset
        // four, then a last run of five literals.
        let both = [0x40, 1, 2, 3, 4, 4, 0, 0x50, 5, 6, 7, 8, 9];
        assert_eq!(lz4_flex::block::decompress(&both, 13).unwrap(), [1, 2, 3, 4, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
        let error = lz4_blocks(&chunk(13, 13, &[&both]), 64).unwrap_err();
        assert!(matches!(error, FilterError::Ambiguous { block: 0, size: 13 }), "{error}");
        // The same bytes as a 14-byte block's stored form are LZ4 alone: not ambiguous.
        assert!(matches!(lz4_blocks(&chunk(14, 14, &[&both]), 64), Err(FilterError::Corrupt { .. })));
    }

    /// Eight one-byte elements, bit-transposed: element i's bit b is bit b * 8 + i.
    #[test]
    fn bits_go_back_to_their_elements() {
        let elements: Vec<u8> = (0..8).map(|i| 1 << i).collect();
        let transposed: Vec<u8> = (0..8).map(|b| 1 << b).collect();
        assert_eq!(unshuffle(&transposed, 1, 8), elements);
        // Nine elements: the ninth stays as it is.
        let mut nine = transposed.clone();
        nine.push(0xAA);
        let mut expected = elements;
        expected.push(0xAA);
        assert_eq!(bitunshuffle(&nine, 1, 0), expected);
    }
}

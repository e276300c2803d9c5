//! Chunks stored under other filters than the rest of their array, written
//! again under the array's.
//!
//! HDF5 records, per chunk, which filters of the pipeline it skipped (its
//! filter mask): a filter that failed on a chunk (deflate that would not
//! shrink it) or a chunk written directly (`H5Dwrite_chunk`). A zarr array
//! has one filter list, so the array takes the mask most of its chunks have
//! (the first chunk's among equals, as kerchunk takes the first chunk's), and
//! each other chunk is read, decoded under its own mask and encoded under
//! the array's, to be held in the references (kerchunk does the same for
//! chunks under its inline threshold, and fails on the others). Encoders:
//! deflate (flate2), shuffle, and Zstandard (ruzstd, frames stored
//! uncompressed). Other filters cannot be written here: such arrays are
//! left out, naming the filter.

use hdf5_reader::filters::apply_pipeline_with_limit;
use hdf5_reader::messages::filter_pipeline::FilterDescription;

use super::layout::{DEFLATE, SHUFFLE, ZSTD, known_name};
use super::plugins;

/// The mask the array takes: the most common one, the first chunk's among equals.
pub(crate) fn array_mask(masks: &[u32]) -> u32 {
    let mut best = (0, 0usize);
    for (i, &mask) in masks.iter().enumerate() {
        // Counted from its first occurrence, so that an earlier mask wins a tie.
        if masks[..i].contains(&mask) {
            continue;
        }
        let count = masks.iter().filter(|&&m| m == mask).count();
        if count > best.1 {
            best = (mask, count);
        }
    }
    best.0
}

/// A chunk stored under `stored_mask`, decoded (to at most `size` bytes of
/// elements of `itemsize` bytes) and encoded again under `array_mask`; or
/// why it cannot be.
pub(crate) fn reencode(
    pipeline: &[FilterDescription],
    stored: &[u8],
    stored_mask: u32,
    array_mask: u32,
    itemsize: usize,
    size: usize,
) -> Result<Vec<u8>, String> {
    // Every filter the array applies must have an encoder here, before anything is decoded.
    let applied: Vec<&FilterDescription> =
        pipeline.iter().enumerate().filter(|(i, _)| !skipped(array_mask, *i)).map(|(_, f)| f).collect();
    if let Some(filter) = applied.iter().find(|f| !matches!(f.id, DEFLATE | SHUFFLE | ZSTD)) {
        let name = known_name(filter.id, filter.name.as_deref());
        return Err(format!("the {name} filter (id {}) cannot be written again here", filter.id));
    }
    let registry = plugins::registry();
    let mut data = apply_pipeline_with_limit(stored, pipeline, stored_mask, itemsize, Some(&registry), Some(size))
        .map_err(|e| format!("its chunk under mask {stored_mask:#x} did not decode: {e}"))?;
    for filter in applied {
        data = match filter.id {
            DEFLATE => deflate(&data, filter.client_data.first().copied().unwrap_or(6)),
            SHUFFLE => shuffle(&data, itemsize),
            _ => ruzstd::encoding::compress_to_vec(&data[..], ruzstd::encoding::CompressionLevel::Uncompressed),
        };
    }
    Ok(data)
}

fn skipped(mask: u32, filter: usize) -> bool {
    filter < 32 && mask >> filter & 1 == 1
}

fn deflate(data: &[u8], level: u32) -> Vec<u8> {
    use std::io::Write as _;
    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::new(level.min(9)));
    // Writing into a Vec cannot fail.
    let _ = encoder.write_all(data);
    encoder.finish().unwrap_or_default()
}

/// HDF5's (and numcodecs') shuffle: byte `j` of every element together, in
/// order of `j`; bytes past the last whole element stay at the end.
fn shuffle(data: &[u8], itemsize: usize) -> Vec<u8> {
    let itemsize = itemsize.max(1);
    let elements = data.len() / itemsize;
    let mut out = Vec::with_capacity(data.len());
    for j in 0..itemsize {
        out.extend((0..elements).map(|i| data[i * itemsize + j]));
    }
    out.extend_from_slice(&data[elements * itemsize..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_most_common_mask_the_first_among_equals() {
        assert_eq!(array_mask(&[0x2, 0x3, 0x0]), 0x2);
        assert_eq!(array_mask(&[0x1, 0x0, 0x0]), 0x0);
        assert_eq!(array_mask(&[0x0, 0x1]), 0x0);
        assert_eq!(array_mask(&[]), 0);
    }

    #[test]
    fn shuffled_bytes_by_their_place_in_the_element() {
        assert_eq!(shuffle(&[1, 2, 3, 4, 5, 6, 7], 3), [1, 4, 2, 5, 3, 6, 7]);
    }
}

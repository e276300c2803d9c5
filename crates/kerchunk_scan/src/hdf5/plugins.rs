//! Decoders for the HDF5 filters outside the HDF5 library that kerchunk holds
//! decoded when an array is small: h5py's LZF (filter 32000), HDF5's LZ4
//! plugin (32004), the bitshuffle plugin (32008, uncompressed or with
//! LZ4) and Zstandard (32015, by ruzstd), LZ4 and bitshuffle through `hdf5_plugin_filters` (hdf5-reader 0.12.1's
//! own LZ4 reads a block size before every block, where the plugin writes
//! one for the chunk, so a chunk of several blocks failed). Arrays are
//! decoded, whole, through these when they are under the inline threshold,
//! or when no zarr codec can describe their chunks; so are chunks stored
//! under another filter mask than their array's (`reencode`).
//!
//! Each bounds what it writes: LZF (the `lzf` crate, a pure-Rust port of
//! liblzf) by the chunk size h5py records in the filter's values, LZ4 and
//! bitshuffle by what LZ4 can expand their input to and by `MOST`.

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
    registry.register(32015, Box::new(|_, data, _| zstd(data)));
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

/// The Zstandard plugin (32015): frames, one after another, read by ruzstd
/// to at most `MOST` bytes.
fn zstd(data: &[u8]) -> Result<Vec<u8>, Error> {
    use std::io::Read as _;
    let mut out = Vec::new();
    let mut source = data;
    while !source.is_empty() {
        let left = source.len();
        let decoder =
            ruzstd::decoding::StreamingDecoder::new(&mut source).map_err(|e| failed("zstd", e.to_string()))?;
        let room = (MOST - out.len()) as u64 + 1;
        decoder.take(room).read_to_end(&mut out).map_err(|e| failed("zstd", e.to_string()))?;
        if out.len() > MOST {
            return Err(failed("zstd", format!("more than {MOST} bytes")));
        }
        if source.len() == left {
            return Err(failed("zstd", "a frame that reads nothing"));
        }
    }
    Ok(out)
}

/// HDF5's LZ4 plugin, as `hdf5_plugin_filters` reads it.
fn lz4(data: &[u8]) -> Result<Vec<u8>, Error> {
    hdf5_plugin_filters::lz4_blocks(data, MOST).map_err(|e| Error::DecompressionError(e.to_string()))
}

/// The bitshuffle plugin, as `hdf5_plugin_filters` reads it. Its values are
/// the plugin's version (two), the element size, the block size in elements
/// (0: the default) and the compression (0 none, 2 LZ4).
fn bitshuffle(filter: &FilterDescription, data: &[u8], element_size: usize) -> Result<Vec<u8>, Error> {
    let value = |i: usize| filter.client_data.get(i).map(|&v| usize::try_from(v).unwrap_or(0));
    let element = value(2).filter(|&e| e > 0).unwrap_or(element_size).max(1);
    match value(4).unwrap_or(0) {
        0 => Ok(hdf5_plugin_filters::bitunshuffle(data, element, value(3).unwrap_or(0))),
        2 => hdf5_plugin_filters::bitshuffle_lz4(data, element, MOST)
            .map_err(|e| Error::DecompressionError(e.to_string())),
        other => Err(failed("bitshuffle", format!("compression {other} (3 is zstd) is not decoded"))),
    }
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
        // bitshuffle: zstd is refused by name; a header past the input.
        let zstd = filter(32008, vec![0, 3, 4, 0, 3]);
        assert!(bitshuffle(&zstd, &[0; 16], 4).unwrap_err().to_string().contains("zstd"));
        assert!(bitshuffle(&filter(32008, vec![0, 3, 4, 0, 2]), &[0; 4], 4).is_err());
    }
}

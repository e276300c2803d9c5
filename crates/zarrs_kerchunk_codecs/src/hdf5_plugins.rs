//! `imagecodecs_lz4h5` and `imagecodecs_bitshuffle`: HDF5's LZ4 plugin
//! (filter 32004) and the bitshuffle plugin (32008), under the ids
//! imagecodecs registers for zarr-python, decoded by `hdf5_plugin_filters`.
//! The scanner writes the bitshuffle plugin with LZ4 as `imagecodecs_lz4h5`
//! then `imagecodecs_bitshuffle`, whose formats it then is.
//!
//! `imagecodecs_bitshuffle` decodes with its configured `itemsize`, as
//! imagecodecs does given bytes; given a numpy array, imagecodecs takes the
//! array's element size instead, so in zarr-python it reads right only after
//! a codec that returns bytes (such as `imagecodecs_lz4h5`), and the scanner
//! writes it nowhere else.

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::decode_only::Decode;
use crate::error::DecodeError;

/// HDF5's LZ4 plugin: a header, then blocks LZ4-compressed or stored as they
/// are. imagecodecs' `level` and `blocksize` only encode.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Lz4h5;

impl Decode for Lz4h5 {
    const ID: &'static str = "imagecodecs_lz4h5";

    fn decode(&self, encoded: &[u8], size: usize) -> Result<Vec<u8>, DecodeError> {
        hdf5_plugin_filters::lz4_blocks(encoded, size).map_err(DecodeError::corrupt)
    }
}

/// Bits transposed in blocks of `blocksize` elements (0: bitshuffle's
/// default) of `itemsize` bytes, as imagecodecs' `bitshuffle` configures it.
#[derive(Clone, Copy, Debug, Deserialize)]
pub(crate) struct Bitshuffle {
    #[serde(default = "one")]
    itemsize: usize,
    #[serde(default)]
    blocksize: usize,
}

const fn one() -> usize {
    1
}

impl Bitshuffle {
    pub(crate) fn new(configuration: Self) -> Result<Self, String> {
        if configuration.itemsize == 0 || !configuration.blocksize.is_multiple_of(8) {
            return Err(format!(
                "itemsize {} and blocksize {}: bitshuffle takes elements of a byte or more, in blocks of a multiple of 8",
                configuration.itemsize, configuration.blocksize
            ));
        }
        Ok(configuration)
    }
}

impl Decode for Bitshuffle {
    const ID: &'static str = "imagecodecs_bitshuffle";
    const SAME_SIZE: bool = true;

    fn configuration(&self) -> Map<String, Value> {
        Map::from_iter([("itemsize".to_owned(), self.itemsize.into()), ("blocksize".to_owned(), self.blocksize.into())])
    }

    fn decode(&self, encoded: &[u8], size: usize) -> Result<Vec<u8>, DecodeError> {
        if encoded.len() > size {
            return Err(DecodeError::TooLong { size });
        }
        Ok(hdf5_plugin_filters::bitunshuffle(encoded, self.itemsize, self.blocksize))
    }
}

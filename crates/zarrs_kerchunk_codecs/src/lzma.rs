//! `lzma`: numcodecs' LZMA codec, which tifffile's zarr store uses for TIFF
//! compression 34925, decoded in pure Rust by lzma-rust2.

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::bounded::read_bounded;
use crate::decode_only::Decode;
use crate::error::DecodeError;

/// Python's `lzma` containers, as numcodecs' `format` numbers them.
const FORMAT_AUTO: i64 = 0;
const FORMAT_XZ: i64 = 1;
const FORMAT_ALONE: i64 = 2;

/// numcodecs' configuration: `format` (default XZ; the other fields only
/// matter to encoding, but a raw stream's `filters` would matter, and raw
/// streams are refused).
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct LzmaConfiguration {
    #[serde(default = "xz")]
    format: i64,
    #[serde(default)]
    check: Option<i64>,
    #[serde(default)]
    preset: Option<Value>,
    #[serde(default)]
    filters: Option<Value>,
}

fn xz() -> i64 {
    FORMAT_XZ
}

/// numcodecs' `lzma`, for its XZ and LZMA-alone containers.
#[derive(Clone, Debug)]
pub(crate) struct Lzma(pub(crate) LzmaConfiguration);

impl Lzma {
    /// The codec for a configuration, or why it cannot decode it.
    pub(crate) fn new(configuration: LzmaConfiguration) -> Result<Self, String> {
        match configuration.format {
            FORMAT_AUTO | FORMAT_XZ | FORMAT_ALONE => Ok(Self(configuration)),
            other => Err(format!("lzma: format {other} (raw LZMA streams) is not supported; 0, 1 and 2 are")),
        }
    }
}

impl Decode for Lzma {
    const ID: &'static str = "lzma";

    fn configuration(&self) -> Map<String, Value> {
        let mut map = Map::new();
        map.insert("format".into(), self.0.format.into());
        for (name, value) in [("check", self.0.check.map(Value::from)), ("preset", self.0.preset.clone())] {
            map.insert(name.into(), value.unwrap_or(Value::Null));
        }
        map.insert("filters".into(), self.0.filters.clone().unwrap_or(Value::Null));
        map
    }

    fn decode(&self, encoded: &[u8], size: usize) -> Result<Vec<u8>, DecodeError> {
        // Python's FORMAT_AUTO reads either container; XZ starts with FD 37 7A 58 5A 00.
        let xz = self.0.format == FORMAT_XZ || (self.0.format == FORMAT_AUTO && encoded.starts_with(b"\xFD7zXZ\0"));
        // The dictionary a stream asks for is allocated before anything is
        // decoded: at most what xz's presets use (64 MiB), or the chunk.
        let limit_kb = u32::try_from(size.max(MAX_PRESET_DICTIONARY) / 1024).unwrap_or(u32::MAX);
        let first = encoded.len().saturating_mul(8);
        if xz {
            read_bounded(lzma_rust2::XzReader::new_mem_limit(encoded, true, limit_kb), size, first)
        } else {
            let reader =
                lzma_rust2::LzmaReader::new_mem_limit(encoded, limit_kb, None).map_err(DecodeError::corrupt)?;
            read_bounded(reader, size, first)
        }
    }
}

/// The dictionary of xz's largest preset (9).
const MAX_PRESET_DICTIONARY: usize = 64 << 20;

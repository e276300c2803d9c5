//! `fill_hdf_strings`: kerchunk's filter for HDF5 variable-length strings
//! (`kerchunk.codecs.FillStringsCodec`). A chunk holds one 16-byte global
//! heap id per value; the filter's `id_map` maps each id (its trailing NULs
//! stripped, as numpy's `S16` strips them) to its string
//! (`vlen_encode="encode"`), or the filter maps none (`"null"`: kerchunk's
//! codec gives `None`, which text cannot hold: the empty string here) or
//! gives every value one string (`id_map` a string).
//!
//! The store serves these arrays with `vlen-utf8` before the filter
//! (`kerchunk::zarr::metadata`), so this decodes the ids into `vlen-utf8`'s
//! encoding (a little-endian `u32` count, then each string's `u32` length
//! and UTF-8 bytes), which zarrs reads as text, at most 2 GiB a chunk. Compound types with string
//! fields (`dtype` a list of fields) have no zarrs type: refused.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::decode_only::Decode;
use crate::error::DecodeError;

/// kerchunk's configuration: `{"dtype": "S16", "id_map": {...} | "text" | null}`.
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct FillHdfStringsConfiguration {
    dtype: String,
    #[serde(default)]
    id_map: Value,
}

/// What each heap id becomes.
#[derive(Clone, Debug)]
enum Strings {
    Mapped(HashMap<Vec<u8>, String>),
    Every(String),
}

#[derive(Clone, Debug)]
pub(crate) struct FillHdfStrings {
    written: FillHdfStringsConfiguration,
    strings: Strings,
}

/// The size of an HDF5 global heap id.
const ID: usize = 16;

/// The most text one chunk decodes to: zarrs gives text chunks no size to
/// stop at, and a long `id_map` string repeated by many ids could ask for
/// terabytes. The store's default largest chunk (`Limits`), 2 GiB.
const MAX_TEXT: usize = 2 << 30;

impl FillHdfStrings {
    pub(crate) fn new(written: FillHdfStringsConfiguration) -> Result<Self, String> {
        if written.dtype != "S16" && written.dtype != "|S16" {
            return Err(format!(
                "dtype {:?} (heap ids of S16 are decoded; compound fields have no zarrs type)",
                written.dtype
            ));
        }
        let strings = match &written.id_map {
            Value::Null => Strings::Every(String::new()),
            Value::String(text) => Strings::Every(text.clone()),
            Value::Object(map) => Strings::Mapped(
                map.iter()
                    .map(|(id, text)| match text.as_str() {
                        Some(text) => Ok((id.as_bytes().to_vec(), text.to_owned())),
                        None => Err(format!("id_map value {text} is not a string")),
                    })
                    .collect::<Result<_, _>>()?,
            ),
            other => return Err(format!("id_map {other} is neither a map, a string nor null")),
        };
        Ok(Self { written, strings })
    }
}

impl Decode for FillHdfStrings {
    const ID: &'static str = "fill_hdf_strings";
    const VARIABLE: bool = true;

    fn configuration(&self) -> Map<String, Value> {
        let mut map = Map::new();
        map.insert("dtype".into(), self.written.dtype.clone().into());
        map.insert("id_map".into(), self.written.id_map.clone());
        map
    }

    fn decode(&self, encoded: &[u8], size: usize) -> Result<Vec<u8>, DecodeError> {
        let size = size.min(MAX_TEXT);
        if !encoded.len().is_multiple_of(ID) {
            return Err(DecodeError::Layout(format!("{} bytes are not heap ids of {ID} bytes", encoded.len())));
        }
        let count = u32::try_from(encoded.len() / ID).map_err(|_| DecodeError::TooLong { size })?;
        // vlen-utf8's count comes first, whatever follows.
        if size < 4 {
            return Err(DecodeError::TooLong { size });
        }
        let mut out = count.to_le_bytes().to_vec();
        for id in encoded.chunks_exact(ID) {
            let text = match &self.strings {
                Strings::Every(text) => text,
                Strings::Mapped(map) => {
                    let key = &id[..id.iter().rposition(|&b| b != 0).map_or(0, |last| last + 1)];
                    map.get(key).ok_or_else(|| {
                        DecodeError::Layout(format!("heap id {key:02x?} is not in the filter's id_map"))
                    })?
                }
            };
            let length = u32::try_from(text.len()).map_err(|_| DecodeError::TooLong { size })?;
            if out.len().saturating_add(4 + text.len()) > size {
                return Err(DecodeError::TooLong { size });
            }
            out.extend_from_slice(&length.to_le_bytes());
            out.extend_from_slice(text.as_bytes());
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::{FillHdfStrings, FillHdfStringsConfiguration};
    use crate::decode_only::Decode;

    fn codec(configuration: &str) -> Result<FillHdfStrings, String> {
        FillHdfStrings::new(serde_json::from_str::<FillHdfStringsConfiguration>(configuration).unwrap())
    }

    #[test]
    fn ids_become_vlen_utf8_text() {
        let codec = codec(r#"{"dtype": "S16", "id_map": {"ab": "x", "c": "yz"}}"#).unwrap();
        let mut ids = [0u8; 32];
        ids[..2].copy_from_slice(b"ab");
        ids[16] = b'c';
        let text = codec.decode(&ids, 1000).unwrap();
        assert_eq!(text, [&2u32.to_le_bytes()[..], &1u32.to_le_bytes(), b"x", &2u32.to_le_bytes(), b"yz"].concat());
        // An id the map lacks, a chunk that is not ids, and text past the chunk's size are errors.
        assert!(codec.decode(&[b'q'; 16], 1000).unwrap_err().to_string().contains("not in the filter's id_map"));
        assert!(codec.decode(&[0; 15], 1000).is_err());
        assert!(codec.decode(&ids, 10).is_err());
        // Even no ids decode to vlen-utf8's count: more than a chunk of 0 bytes (found by fuzzing).
        assert!(codec.decode(&[], 0).is_err());
    }

    #[test]
    fn compound_types_are_refused() {
        let error = codec(r#"{"dtype": "[('a', 'S16'), ('b', '<i4')]", "id_map": null}"#).unwrap_err();
        assert!(error.contains("compound"), "{error}");
    }
}

//! fsspec's parquet reference layout (`LazyReferenceMapper`): the
//! `.zmetadata` document, and where the reference of each chunk key lives.
//!
//! ```text
//! <root>/.zmetadata                 {"metadata": {<key>: <JSON object>}, "record_size": N}
//! <root>/<array path>/refs.<n>.parq rows of (path, offset, size, raw)
//! ```
//!
//! The reference of chunk key `<array>/i.j.k` is row `c % N` of
//! `<array>/refs.<c / N>.parq`, where `c` is the C-order index of `(i, j, k)`
//! in the array's chunk grid (a scalar array has the one chunk `0`).

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use serde_json::Value;

use crate::error::ParseError;
use crate::zarr::grid::ChunkGrid;
use crate::zarr::lenient;

/// The parsed `.zmetadata` of a parquet reference root.
#[derive(Debug)]
pub struct ParquetLayout {
    /// Metadata keys (`.zgroup`, `x/.zarray`, ...) and the JSON text served for them.
    metadata: BTreeMap<String, Bytes>,
    record_size: u64,
    /// Each array path with its chunk grid (keys joined by `.`, as fsspec reads them).
    grids: BTreeMap<Arc<str>, ChunkGrid>,
    /// The metadata as a zarr consolidated `.zmetadata` document.
    consolidated: Bytes,
}

/// One record file: `<field>/refs.<index>.parq`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RecordId {
    /// The array's path in the hierarchy.
    pub field: Arc<str>,
    /// The record's number: it holds the chunks of C-order positions
    /// `index * record_size ..`.
    pub index: u64,
}

impl RecordId {
    /// The record file's path relative to the root.
    #[must_use]
    pub fn file(&self) -> String {
        format!("{}/refs.{}.parq", self.field, self.index)
    }
}

impl ParquetLayout {
    /// Parse a `.zmetadata` document (bare `NaN`/`Infinity` accepted); `file` names it in errors.
    ///
    /// # Errors
    /// [`ParseError::Json`] if it is not JSON, [`ParseError::ParquetMetadata`]
    /// if it is not the layout's (a record size, metadata objects, arrays with chunk grids).
    pub fn parse(bytes: &[u8], file: &str) -> Result<Self, ParseError> {
        let invalid = |reason: String| ParseError::ParquetMetadata { location: file.to_owned(), reason };
        let doc = lenient::parse_json_lenient(bytes)
            .map_err(|source| ParseError::Json { location: file.to_owned(), source })?;
        let record_size = match doc.get("record_size") {
            Some(Value::Number(n)) if n.as_u64().is_some_and(|n| n > 0) => n.as_u64().unwrap_or_default(),
            other => {
                let found = other.map_or_else(|| "nothing".to_owned(), ToString::to_string);
                return Err(invalid(format!("\"record_size\" must be a positive integer, found {found}")));
            }
        };
        let Some(Value::Object(entries)) = doc.get("metadata") else {
            return Err(invalid("\"metadata\" must be an object".into()));
        };
        Self::from_metadata(entries, record_size, file)
    }

    /// The layout of `entries` (metadata keys and their JSON objects, or JSON text) at `record_size` rows per file.
    ///
    /// # Errors
    /// [`ParseError::ParquetMetadata`] if an entry is not JSON or an array has no usable chunk grid.
    ///
    /// # Panics
    /// Never: a JSON value always serialises.
    pub fn from_metadata(
        entries: &serde_json::Map<String, Value>,
        record_size: u64,
        file: &str,
    ) -> Result<Self, ParseError> {
        let invalid = |reason: String| ParseError::ParquetMetadata { location: file.to_owned(), reason };
        let mut metadata = BTreeMap::new();
        let mut grids = BTreeMap::new();
        let mut objects = serde_json::Map::new();
        for (key, value) in entries {
            // Writers store objects; the spec's older wording has JSON text.
            let object = match value {
                Value::String(text) => {
                    lenient::parse_json_lenient(text.as_bytes()).map_err(|e| invalid(format!("{key}: {e}")))?
                }
                Value::Object(_) => value.clone(),
                other => return Err(invalid(format!("metadata {key:?} must be an object, found {other}"))),
            };
            if let Some(field) = key.strip_suffix("/.zarray") {
                let grid = ChunkGrid::from_zarray(&object).map_err(|reason| invalid(format!("{key}: {reason}")))?;
                grids.insert(Arc::from(field), grid.dotted());
            }
            // A Zarr V3 set's arrays (files of uneven length combined): their keys `field/c/0/1`.
            if let Some(field) = key.strip_suffix("/zarr.json")
                && object["node_type"] == "array"
            {
                let grid = ChunkGrid::from_zarr_json(&object).map_err(|reason| invalid(format!("{key}: {reason}")))?;
                grids.insert(Arc::from(field), grid);
            }
            metadata.insert(key.clone(), Bytes::from(serde_json::to_vec(&object).expect("JSON values serialise")));
            objects.insert(key.clone(), object);
        }
        let consolidated = Bytes::from(
            serde_json::to_vec(&serde_json::json!({
                "metadata": objects,
                "zarr_consolidated_format": 1,
            }))
            .expect("JSON values serialise"),
        );
        Ok(Self { metadata, record_size, grids, consolidated })
    }

    /// The rows of each record file.
    pub fn record_size(&self) -> u64 {
        self.record_size
    }

    /// The JSON text of a metadata key.
    pub fn metadata(&self, key: &str) -> Option<&Bytes> {
        self.metadata.get(key)
    }

    /// The metadata as a zarr consolidated `.zmetadata` document.
    pub fn consolidated(&self) -> &Bytes {
        &self.consolidated
    }

    /// The metadata keys and their objects, as `.zmetadata` holds them.
    pub fn metadata_objects(&self) -> serde_json::Map<String, Value> {
        match serde_json::from_slice::<Value>(&self.consolidated) {
            Ok(Value::Object(mut doc)) => match doc.remove("metadata") {
                Some(Value::Object(objects)) => objects,
                _ => serde_json::Map::new(),
            },
            _ => serde_json::Map::new(),
        }
    }

    /// The `.zmetadata` document of this layout.
    ///
    /// # Panics
    /// Never: a JSON value always serialises.
    pub fn zmetadata(&self) -> Vec<u8> {
        let doc = serde_json::json!({"metadata": self.metadata_objects(), "record_size": self.record_size});
        serde_json::to_vec(&doc).expect("JSON values serialise")
    }

    /// Every metadata key, sorted.
    pub fn metadata_keys(&self) -> impl Iterator<Item = &str> {
        self.metadata.keys().map(String::as_str)
    }

    /// Every array path with its chunk grid.
    pub fn arrays(&self) -> impl Iterator<Item = (&Arc<str>, &[u64])> {
        self.grids.iter().map(|(field, grid)| (field, grid.dims()))
    }

    /// Where the reference of `key` lives, if `key` is a chunk key inside an array's grid.
    pub fn locate(&self, key: &str) -> Option<(RecordId, usize)> {
        let (field, chunk) = self.split(key)?;
        let (field, grid) = self.grids.get_key_value(field)?;
        // fsspec reads each index with Python's `int`, so `07` is chunk 7.
        let linear = grid.position(chunk, false)?;
        let row = usize::try_from(linear % self.record_size).ok()?;
        Some((RecordId { field: Arc::clone(field), index: linear / self.record_size }, row))
    }

    /// A chunk key as its array's path and the chunk's name in it: `a/b/0.1` in the folder,
    /// `a/b/c/0/1` (Zarr V3) before the `c` of an array with V3 keys.
    fn split<'k>(&self, key: &'k str) -> Option<(&'k str, &'k str)> {
        let mut at = key.len();
        while let Some(slash) = key[..at].rfind("/c") {
            let (field, chunk) = (&key[..slash], &key[slash + 1..]);
            if (chunk == "c" || chunk.starts_with("c/")) && self.grids.get(field).is_some_and(ChunkGrid::is_v3) {
                return Some((field, chunk));
            }
            at = slash;
        }
        key.rsplit_once('/')
    }

    /// The chunk key of row `row` of `record`, if that row lies inside the grid.
    pub fn chunk_key(&self, record: &RecordId, row: u64) -> Option<String> {
        let grid = self.grids.get(&record.field)?;
        let linear = record.index.checked_mul(self.record_size)?.checked_add(row)?;
        Some(format!("{}/{}", record.field, grid.chunk_name(linear)?))
    }

    /// The number of record files an array has (some may not exist).
    pub fn record_count(&self, field: &str) -> u64 {
        self.grids.get(field).map_or(0, |grid| grid.count().div_ceil(self.record_size))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ZMETADATA: &str = r#"{"record_size": 4, "metadata": {
        ".zgroup": {"zarr_format": 2},
        "a/.zarray": {"shape": [7], "chunks": [1], "dtype": "<i4", "fill_value": NaN},
        "deep/x/.zarray": "{\"shape\": [5, 6], \"chunks\": [2, 4]}",
        "sc/.zarray": {"shape": [], "chunks": []},
        "empty/.zarray": {"shape": [0, 9], "chunks": [0, 9]}}}"#;

    fn layout() -> ParquetLayout {
        ParquetLayout::parse(ZMETADATA.as_bytes(), "root/.zmetadata").unwrap()
    }

    #[test]
    fn locates_chunk_keys() {
        let l = layout();
        let at = |key: &str| l.locate(key).map(|(r, row)| (r.file(), row));
        assert_eq!(at("a/0"), Some(("a/refs.0.parq".into(), 0)));
        assert_eq!(at("a/5"), Some(("a/refs.1.parq".into(), 1)));
        // deep/x: grid 3 x 2, C order.
        assert_eq!(at("deep/x/2.1"), Some(("deep/x/refs.1.parq".into(), 1)));
        assert_eq!(at("sc/0"), Some(("sc/refs.0.parq".into(), 0)));
        for outside in [
            "a/7",
            "a/-1",
            "a/x",
            "a/0.0",
            "a/",
            "deep/x/3.0",
            "deep/x/0",
            "deep/x/0.1.",
            "sc/1",
            "empty/0.0",
            "nope/0",
            "a/+1",
        ] {
            assert_eq!(at(outside), None, "{outside}");
        }
        assert_eq!(l.record_count("a"), 2);
        assert_eq!(l.record_count("empty"), 0);
    }

    #[test]
    fn chunk_keys_invert_locate() {
        let l = layout();
        for key in ["a/0", "a/6", "deep/x/0.0", "deep/x/2.1", "sc/0"] {
            let (record, row) = l.locate(key).unwrap();
            assert_eq!(l.chunk_key(&record, row as u64).as_deref(), Some(key));
        }
        let (record, _) = l.locate("a/6").unwrap();
        assert_eq!(l.chunk_key(&record, 3), None, "past the end of the grid");
    }

    #[test]
    fn metadata_is_served_as_json() {
        let l = layout();
        assert_eq!(l.metadata(".zgroup").map(|b| &b[..]), Some(&br#"{"zarr_format":2}"#[..]));
        assert!(std::str::from_utf8(l.metadata("a/.zarray").unwrap()).unwrap().contains(r#""fill_value":"NaN""#));
        assert_eq!(l.metadata_keys().count(), 5);
        let consolidated: Value = serde_json::from_slice(l.consolidated()).unwrap();
        assert_eq!(consolidated["zarr_consolidated_format"], 1);
        assert_eq!(consolidated["metadata"]["deep/x/.zarray"]["chunks"], serde_json::json!([2, 4]));
    }

    #[test]
    fn bad_zmetadata() {
        for (doc, needle) in [
            (r#"{"record_size": 0, "metadata": {}}"#, "record_size"),
            (r#"{"record_size": 1.5, "metadata": {}}"#, "record_size"),
            (r#"{"record_size": "10", "metadata": {}}"#, "record_size"),
            (r#"{"metadata": {}}"#, "record_size"),
            (r#"{"record_size": 10}"#, "metadata"),
            (r#"{"record_size": 10, "metadata": {"a/.zarray": {"shape": [3], "chunks": [0]}}}"#, "chunk length"),
            (r#"{"record_size": 10, "metadata": {"a/.zarray": {"shape": [3, 3], "chunks": [1]}}}"#, "dimensions"),
            ("{not json", "root/.zmetadata"),
        ] {
            let err = ParquetLayout::parse(doc.as_bytes(), "root/.zmetadata").unwrap_err().to_string();
            assert!(err.contains(needle) && err.contains("root/.zmetadata"), "{doc}: {err}");
        }
    }
}

//! Kerchunk reference sets, written with Zarr v2's metadata, as Zarr v3: each
//! group's and array's `.zgroup`, `.zarray` and `.zattrs` one `zarr.json`,
//! chunk keys in v3's default encoding (`t/c/0/1`), and, for arrays whose
//! chunks along one axis are not all one length (files of uneven length
//! concatenated), the rectilinear chunk grid that zarrs 0.23, zarr-python 3.4
//! (with `zarr.config.set({"array.rectilinear_chunks": True})`) and icechunk 2
//! read, with [`CROP_CODEC`] for chunks stored larger than their place.
//!
//! What changes in each array's metadata, and why, is [`array_v3`]'s to say;
//! the whole set is [`set_v3`]'s. The chunks themselves are the same bytes:
//! only their keys change.
//!
//! ```
//! use std::collections::BTreeMap;
//! use kerchunk::ReferenceSetBuilder;
//! use kerchunk_v3::{Uneven, set_v3};
//!
//! // Two files of 3 and 2 steps, one chunk each, concatenated along time.
//! let mut builder = ReferenceSetBuilder::new();
//! builder.insert_inline(".zgroup", br#"{"zarr_format":2}"#);
//! builder.insert_inline("t/.zarray", br#"{"shape":[5],"chunks":[3],"dtype":"<f4","fill_value":null,"compressor":null,"filters":null,"order":"C","zarr_format":2}"#);
//! builder.insert_inline("t/.zattrs", br#"{"_ARRAY_DIMENSIONS":["time"]}"#);
//! builder.insert_range("t/0", Some("a.nc"), 100, 12);
//! builder.insert_range("t/1", Some("b.nc"), 100, 8);
//! let uneven = BTreeMap::from([("t".to_owned(), Uneven { axis: 0, edges: vec![3, 2], stored: None })]);
//! let v3 = set_v3(&builder.build(), &uneven)?;
//! let array: serde_json::Value = match v3.get("t/zarr.json") {
//!     Some(kerchunk::Reference::Inline(bytes)) => serde_json::from_slice(bytes)?,
//!     other => panic!("{other:?}"),
//! };
//! assert_eq!(array["chunk_grid"]["configuration"]["chunk_shapes"], serde_json::json!([[3, 2]]));
//! assert_eq!(array["dimension_names"], serde_json::json!(["time"]));
//! assert!(v3.get("t/c/1").is_some() && v3.get("t/1").is_none());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod error;
mod grid;
mod metadata;
mod v2;

use std::collections::{BTreeMap, BTreeSet};

use kerchunk::{Reference, ReferenceSet, ReferenceSetBuilder};
use serde_json::{Map, Value};
use zarrs::metadata::ChunkKeySeparator;

pub use error::MetadataError;
pub use grid::{CROP_CODEC, EDGES, Uneven, chunk_key, edges_of};
pub use metadata::{array_v3, fill_value_of_attribute, group_v3, parse_v2};
pub use v2::{V2Node, node_v2};

/// A Zarr v3 `set` that [`set_v3`] wrote, in the Zarr v2 form it came from, as appending reads
/// it: each node's `zarr.json` as `.zgroup` or `.zarray` and `.zattrs` ([`node_v2`]; an array
/// uneven along one axis keeps its chunks there under [`EDGES`]; an array without a
/// `_FillValue` attribute had no fill value, `null`), each chunk under its v2 key (`t/3.0`,
/// `t/0` for a 0-d array).
///
/// # Errors
/// [`MetadataError`] naming the node or the key: metadata that is not inline JSON, a node v2
/// cannot express ([`node_v2`]), or a key that is neither a node's `zarr.json` nor a chunk of
/// an array under v3's default keys.
pub fn set_v2(set: &ReferenceSet) -> Result<ReferenceSet, MetadataError> {
    let mut builder = ReferenceSetBuilder::new();
    let mut arrays: BTreeMap<String, usize> = BTreeMap::new();
    for (key, reference) in set.iter() {
        let Some(path) = key.strip_suffix("zarr.json").map(|path| path.trim_end_matches('/')) else { continue };
        if !(path.is_empty() || key.ends_with("/zarr.json")) {
            continue;
        }
        let Reference::Inline(bytes) = reference else {
            return Err(MetadataError::new(path, "its zarr.json is not held inline"));
        };
        let mut node = node_v2(path, bytes)?;
        // A v2 fill value becomes the `_FillValue` attribute (`array_v3`): without one, the set
        // this came from had none (`null`), whatever v3's `fill_value` says.
        let attribute =
            serde_json::from_slice::<Value>(bytes).ok().and_then(|v3| v3.pointer("/attributes/_FillValue").cloned());
        if node.is_array && attribute.is_none() {
            node.document["fill_value"] = Value::Null;
        }
        let document = if node.is_array { ".zarray" } else { ".zgroup" };
        let folder = |name: &str| if path.is_empty() { name.to_owned() } else { format!("{path}/{name}") };
        builder.insert_inline(&folder(document), node.document.to_string().as_bytes());
        if !node.attributes.is_empty() {
            builder.insert_inline(&folder(".zattrs"), Value::Object(node.attributes).to_string().as_bytes());
        }
        if node.is_array {
            arrays.insert(path.to_owned(), node.document["shape"].as_array().map_or(0, Vec::len));
        }
    }
    for (key, reference) in set.iter() {
        if key == "zarr.json" || key.ends_with("/zarr.json") {
            continue;
        }
        let not_a_chunk =
            || MetadataError::new(key.as_ref(), "the key is neither a node's zarr.json nor a chunk of an array");
        let (path, rest) = match key.rsplit_once("/c/") {
            Some((path, rest)) if arrays.contains_key(path) => (path, Some(rest)),
            _ => match key.strip_suffix("/c").or_else(|| (key == "c").then_some("")) {
                Some(path) if arrays.get(path) == Some(&0) => (path, None),
                _ => match key.strip_prefix("c/") {
                    Some(rest) if arrays.contains_key("") => ("", Some(rest)),
                    _ => return Err(not_a_chunk()),
                },
            },
        };
        let name = match rest {
            None => "0".to_owned(),
            Some(rest)
                if rest.split('/').count() == arrays[path] && rest.split('/').all(|i| i.parse::<u64>().is_ok()) =>
            {
                rest.replace('/', ".")
            }
            Some(_) => return Err(not_a_chunk()),
        };
        let v2_key = if path.is_empty() { name } else { format!("{path}/{name}") };
        builder.insert_reference(&v2_key, reference);
    }
    Ok(builder.build())
}

/// `set`, whose metadata is Zarr v2's, as Zarr v3: every group (and every
/// folder above a node, which v3 makes a group) and every array one
/// `zarr.json` ([`group_v3`], [`array_v3`]), each array in `uneven` on a
/// rectilinear chunk grid (with [`CROP_CODEC`] first among its codecs where
/// its chunks are stored larger), every chunk under its v3 key
/// ([`chunk_key`]); consolidated metadata (`.zmetadata`) is left out, v3
/// having none.
///
/// # Errors
/// [`MetadataError`] naming the node or the key: metadata that is not inline
/// JSON, an array v3 cannot express ([`array_v3`]), a group and an array at
/// one path, an `uneven` axis past an array's dimensions, or a key that is
/// neither metadata nor a chunk of an array.
pub fn set_v3(set: &ReferenceSet, uneven: &BTreeMap<String, Uneven>) -> Result<ReferenceSet, MetadataError> {
    let mut documents: BTreeMap<String, BTreeMap<&'static str, Vec<u8>>> = BTreeMap::new();
    for (key, reference) in set.iter() {
        let (folder, name) = key.rsplit_once('/').unwrap_or(("", key.as_ref()));
        let document = match name {
            ".zgroup" => ".zgroup",
            ".zarray" => ".zarray",
            ".zattrs" => ".zattrs",
            _ => continue,
        };
        let Reference::Inline(bytes) = reference else {
            return Err(MetadataError::new(folder, format!("its {document} is not held inline")));
        };
        documents.entry(folder.to_owned()).or_default().insert(document, bytes.to_vec());
    }
    let mut builder = ReferenceSetBuilder::new();
    let mut arrays: BTreeMap<String, (usize, ChunkKeySeparator)> = BTreeMap::new();
    let mut groups: BTreeSet<String> = BTreeSet::new();
    for (path, node) in &documents {
        let attributes = attributes(path, node.get(".zattrs"))?;
        if let Some(zarray) = node.get(".zarray") {
            if node.contains_key(".zgroup") {
                return Err(MetadataError::new(path, "a group and an array at one path"));
            }
            let mut document = array_v3(path, zarray, attributes)?;
            let v2 = parse_v2(zarray).map_err(|reason| MetadataError::new(path, reason))?;
            if let Some(uneven) = uneven.get(path) {
                let chunks: Vec<u64> = v2.chunks.iter().map(|c| c.get()).collect();
                rectilinear(path, &mut document, uneven, &v2.shape, &chunks)?;
            }
            arrays.insert(path.clone(), (v2.shape.len(), v2.dimension_separator));
            builder.insert_inline(&node_key(path), document.to_string().as_bytes());
        } else if node.contains_key(".zgroup") {
            groups.insert(path.clone());
            builder.insert_inline(&node_key(path), group_v3(&attributes).to_string().as_bytes());
        }
    }
    if let Some(path) = uneven.keys().find(|path| !arrays.contains_key(*path)) {
        return Err(MetadataError::new(path, "it has uneven chunks, and no .zarray"));
    }
    // Every folder above a node is a group, written or not.
    for path in arrays.keys().chain(groups.clone().iter()) {
        let mut folder = path.as_str();
        while !folder.is_empty() {
            folder = folder.rsplit_once('/').map_or("", |(parent, _)| parent);
            if arrays.contains_key(folder) {
                return Err(MetadataError::new(folder, "an array with a node below it"));
            }
            if groups.insert(folder.to_owned()) {
                builder.insert_inline(&node_key(folder), group_v3(&Map::new()).to_string().as_bytes());
            }
        }
    }
    for (key, reference) in set.iter() {
        let (_, name) = key.rsplit_once('/').unwrap_or(("", key.as_ref()));
        if matches!(name, ".zgroup" | ".zarray" | ".zattrs" | ".zmetadata") {
            continue;
        }
        let (path, indices) = locate(&arrays, &key)
            .ok_or_else(|| MetadataError::new(key.as_ref(), "the key is neither metadata nor a chunk of an array"))?;
        builder.insert_reference(&chunk_key(path, &indices), reference);
    }
    Ok(builder.build())
}

/// The array's v3 `document` on the rectilinear grid of `uneven`, with the crop codec first
/// where chunks are stored larger.
fn rectilinear(
    path: &str,
    document: &mut Value,
    uneven: &Uneven,
    shape: &[u64],
    chunks: &[u64],
) -> Result<(), MetadataError> {
    if uneven.axis >= chunks.len() {
        return Err(MetadataError::new(
            path,
            format!("uneven along axis {}, of {} dimensions", uneven.axis, chunks.len()),
        ));
    }
    document["chunk_grid"] = uneven.chunk_grid(shape, chunks);
    if let (Some(crop), Some(Value::Array(codecs))) = (uneven.crop_codec(chunks), document.get_mut("codecs")) {
        codecs.insert(0, crop);
    }
    Ok(())
}

/// The `.zattrs` of the node at `path`, or none.
fn attributes(path: &str, zattrs: Option<&Vec<u8>>) -> Result<Map<String, Value>, MetadataError> {
    let Some(bytes) = zattrs else { return Ok(Map::new()) };
    match serde_json::from_slice(bytes) {
        Ok(Value::Object(attributes)) => Ok(attributes),
        Ok(_) => Err(MetadataError::new(path, "its .zattrs is not a JSON object")),
        Err(e) => Err(MetadataError::new(path, format!("its .zattrs is not JSON: {e}"))),
    }
}

/// The `zarr.json` key of the node at `path`.
fn node_key(path: &str) -> String {
    if path.is_empty() { "zarr.json".to_owned() } else { format!("{path}/zarr.json") }
}

/// The array `key` is a chunk of, and the chunk's indices: `a/b/0.1` is the array `a/b`'s
/// (its folder, `.` separated); `a/b/0/1` an array's as many folders up as it has dimensions.
fn locate<'a>(arrays: &'a BTreeMap<String, (usize, ChunkKeySeparator)>, key: &str) -> Option<(&'a str, Vec<u64>)> {
    let indices = |text: &str, ndim: usize, separator: char| -> Option<Vec<u64>> {
        if ndim == 0 {
            return (text == "0").then(Vec::new);
        }
        let indices: Vec<u64> = text.split(separator).map(str::parse).collect::<Result<_, _>>().ok()?;
        (indices.len() == ndim).then_some(indices)
    };
    let (folder, last) = key.rsplit_once('/').unwrap_or(("", key));
    if let Some((path, &(ndim, separator))) = arrays.get_key_value(folder)
        && (separator == ChunkKeySeparator::Dot || ndim <= 1)
    {
        return Some((path, indices(last, ndim, '.')?));
    }
    // `/`-separated: the array is ndim folders up (the root's, all of them).
    for (ndim, (start, _)) in key.rmatch_indices('/').enumerate().map(|(n, found)| (n + 1, found)) {
        if let Some((path, &(dims, ChunkKeySeparator::Slash))) = arrays.get_key_value(&key[..start])
            && dims == ndim
        {
            return Some((path, indices(&key[start + 1..], ndim, '/')?));
        }
    }
    if let Some((path, &(ndim, ChunkKeySeparator::Slash))) = arrays.get_key_value("") {
        return Some((path, indices(key, ndim, '/')?));
    }
    None
}

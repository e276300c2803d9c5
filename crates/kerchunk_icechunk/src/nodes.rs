//! The groups and arrays of a reference set's metadata, as Zarr v3's `zarr.json`.

use std::collections::{BTreeMap, BTreeSet};

use bytes::Bytes;
use serde_json::{Map, Value};

use crate::chunks::ChunkLayout;
use crate::error::{ExportError, MetadataError};

/// The groups and arrays of the references' metadata, as `zarr.json`.
pub(crate) struct Nodes {
    /// Each group's path and document, outermost first, with a group for
    /// every folder above a node that has none.
    pub(crate) groups: Vec<(String, Value)>,
    /// Each array's path, document and chunk layout.
    pub(crate) arrays: Vec<(String, Value, ChunkLayout)>,
}

impl Nodes {
    /// The nodes of `metadata` (keys to their bytes).
    pub(crate) fn of(metadata: &BTreeMap<String, Bytes>) -> Result<Self, ExportError> {
        let mut groups: BTreeSet<(usize, String)> = BTreeSet::new();
        let mut array_paths: Vec<String> = Vec::new();
        for key in metadata.keys() {
            let (folder, name) = key.rsplit_once('/').unwrap_or(("", key.as_str()));
            match name {
                ".zgroup" => {
                    groups.insert((depth(folder), folder.to_owned()));
                }
                ".zarray" => array_paths.push(folder.to_owned()),
                _ => {}
            }
        }
        // Every folder above a node is a group, written or not.
        let above: Vec<String> = groups.iter().map(|(_, p)| p.clone()).chain(array_paths.iter().cloned()).collect();
        for path in above {
            let mut folder = path.as_str();
            while !folder.is_empty() {
                folder = folder.rsplit_once('/').map_or("", |(parent, _)| parent);
                groups.insert((depth(folder), folder.to_owned()));
            }
        }
        let mut nodes = Self { groups: Vec::new(), arrays: Vec::new() };
        for (_, path) in groups {
            if array_paths.contains(&path) {
                return Err(reference_error(format!("{path}/.zgroup"), "a group and an array at one path"));
            }
            let document = kerchunk_v3::group_v3(&attributes(metadata, &path)?);
            nodes.groups.push((path, document));
        }
        for path in array_paths {
            let zarray_key = if path.is_empty() { ".zarray".to_owned() } else { format!("{path}/.zarray") };
            let zarray = &metadata[&zarray_key];
            let v3 = kerchunk_v3::array_v3(&path, zarray, attributes(metadata, &path)?)?;
            let v2 = kerchunk_v3::parse_v2(zarray).map_err(|reason| MetadataError::new(path.clone(), reason))?;
            nodes.arrays.push((path, v3, ChunkLayout::of(&v2)));
        }
        Ok(nodes)
    }
}

impl Nodes {
    /// The nodes of a Zarr v3 set (files of uneven length combined), from its `zarr.json`
    /// documents by key: each written as it is, with a group for every folder above a node
    /// that has none.
    pub(crate) fn of_v3(documents: &BTreeMap<String, Bytes>) -> Result<Self, ExportError> {
        let mut groups: BTreeMap<(usize, String), Value> = BTreeMap::new();
        let mut arrays = Vec::new();
        for (key, bytes) in documents {
            let path = key.strip_suffix("zarr.json").unwrap_or_default().trim_end_matches('/').to_owned();
            let node: Value =
                serde_json::from_slice(bytes).map_err(|e| reference_error(key.clone(), format!("not JSON: {e}")))?;
            match node["node_type"].as_str() {
                Some("group") => {
                    groups.insert((depth(&path), path), node);
                }
                Some("array") => {
                    let layout = ChunkLayout::of_v3(&node).map_err(|reason| reference_error(key.clone(), reason))?;
                    arrays.push((path, node, layout));
                }
                other => return Err(reference_error(key.clone(), format!("its node_type is {other:?}"))),
            }
        }
        let above: Vec<String> =
            groups.keys().map(|(_, p)| p.clone()).chain(arrays.iter().map(|(p, _, _)| p.clone())).collect();
        for path in above {
            let mut folder = path.as_str();
            while !folder.is_empty() {
                folder = folder.rsplit_once('/').map_or("", |(parent, _)| parent);
                groups.entry((depth(folder), folder.to_owned())).or_insert_with(|| kerchunk_v3::group_v3(&Map::new()));
            }
        }
        if let Some((path, _, _)) = arrays.iter().find(|(path, _, _)| groups.contains_key(&(depth(path), path.clone())))
        {
            return Err(reference_error(node_key(path), "a group and an array at one path"));
        }
        Ok(Self { groups: groups.into_iter().map(|((_, path), node)| (path, node)).collect(), arrays })
    }
}

/// How many folders deep `path` is (`""` 0, `a` 1, `a/b` 2).
fn depth(path: &str) -> usize {
    if path.is_empty() { 0 } else { path.matches('/').count() + 1 }
}

/// The `.zattrs` of the node at `path`, or none.
fn attributes(metadata: &BTreeMap<String, Bytes>, path: &str) -> Result<Map<String, Value>, ExportError> {
    let key = if path.is_empty() { ".zattrs".to_owned() } else { format!("{path}/.zattrs") };
    let Some(bytes) = metadata.get(&key) else { return Ok(Map::new()) };
    match serde_json::from_slice(bytes) {
        Ok(Value::Object(attributes)) => Ok(attributes),
        Ok(_) => Err(reference_error(key, "not a JSON object")),
        Err(e) => Err(reference_error(key, format!("not JSON: {e}"))),
    }
}

/// The `zarr.json` key of the node at `path`.
pub(crate) fn node_key(path: &str) -> String {
    if path.is_empty() { "zarr.json".to_owned() } else { format!("{path}/zarr.json") }
}

/// The metadata at `key` has no place in a repository, for `reason`.
fn reference_error(key: String, reason: impl Into<String>) -> ExportError {
    ExportError::Reference { key, reason: reason.into() }
}

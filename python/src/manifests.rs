//! A scanned file as VirtualiZarr's manifests need it (`zarrs_kerchunk.virtualizarr`): every
//! group's attributes, and every array's metadata with its chunk references as columns (an
//! index into the set's URLs, the offsets and the lengths, as little-endian bytes), so that the
//! Python side builds a `ChunkManifest` from arrays, never from a dictionary per chunk. Inline
//! chunks come apart, by position.

use std::collections::{BTreeMap, HashMap};

use kerchunk_scan::ScanOptions;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};
use zarrs_kerchunk::kerchunk::{Reference, ReferenceSet};
use zarrs_kerchunk_tools::make::make_references;

use crate::errors::{Error, Kind};
use crate::runtime;
use crate::scan::{ScanArguments, make_error};
use crate::tools::WriteOptions;

pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(scan_manifests, module)?)?;
    Ok(())
}

/// The URL index of a chunk with no reference: a missing chunk, read as the fill value.
const MISSING: u32 = u32::MAX;

/// The most chunks an array's manifest is built for: its columns are dense over the chunk grid
/// (20 bytes a chunk here, more in VirtualiZarr's arrays), and a file may declare any grid. The
/// scanner's own default bound on a file's references (`ScanOptions::with_max_references`).
const MAX_CHUNKS: u64 = 10_000_000;

/// One array's chunk references, as columns over its chunk grid (C order).
#[derive(Default)]
struct Columns {
    zarray: String,
    zattrs: String,
    grid: Vec<u64>,
    url_index: Vec<u32>,
    offsets: Vec<u64>,
    lengths: Vec<u64>,
    inlined: Vec<(Vec<u64>, Vec<u8>)>,
}

/// The manifests of the file at `url` (a path or URL), scanned with `arguments` (those of
/// `tools.scan`) and read with `options`' stores: `{"urls": [...], "groups": {path: attrs},
/// "arrays": {path: {...}}}`. Target URLs are absolute (`file://` for local files).
#[pyfunction]
#[expect(clippy::needless_pass_by_value, reason = "pyo3 extracts arguments by value")]
fn scan_manifests(
    py: Python<'_>,
    url: String,
    arguments: ScanArguments,
    options: WriteOptions,
) -> PyResult<Bound<'_, PyDict>> {
    runtime::check_process()?;
    let registry = options.registry()?;
    let (scan_options, _): (ScanOptions, _) = arguments.prepared()?;
    // Zarr 3 readers take CF's `_FillValue` from the attributes only: keep it there, as
    // VirtualiZarr's HDF parser does.
    let scan_options = scan_options.with_fill_value_attribute(true);
    let (urls, groups, arrays) = py.detach(|| -> Result<_, Error> {
        let made = make_references(std::slice::from_ref(&url), None, &scan_options, 1, &registry, absolute_url, || {})
            .map_err(|e| make_error(&e))?;
        columns(&made.references)
    })?;
    let result = PyDict::new(py);
    result.set_item("urls", PyList::new(py, &urls)?)?;
    result.set_item("groups", groups)?;
    let out = PyDict::new(py);
    for (path, columns) in arrays {
        let array = PyDict::new(py);
        array.set_item("zarray", columns.zarray)?;
        array.set_item("zattrs", columns.zattrs)?;
        array.set_item("grid", columns.grid)?;
        array.set_item("url_index", PyBytes::new(py, &le_bytes(&columns.url_index, u32::to_le_bytes)))?;
        array.set_item("offsets", PyBytes::new(py, &le_bytes(&columns.offsets, u64::to_le_bytes)))?;
        array.set_item("lengths", PyBytes::new(py, &le_bytes(&columns.lengths, u64::to_le_bytes)))?;
        let inlined = PyDict::new(py);
        for (position, bytes) in columns.inlined {
            inlined.set_item(PyTuple::new(py, position)?, PyBytes::new(py, &bytes))?;
        }
        array.set_item("inlined", inlined)?;
        out.set_item(path, array)?;
    }
    result.set_item("arrays", out)?;
    Ok(result)
}

/// `file` as an absolute URL: a local path as `file://`.
fn absolute_url(file: &str) -> String {
    if file.contains("://") {
        return file.to_owned();
    }
    std::path::absolute(file)
        .ok()
        .and_then(|path| url::Url::from_file_path(path).ok())
        .map_or_else(|| file.to_owned(), String::from)
}

fn le_bytes<T: Copy, const N: usize>(values: &[T], to_le: fn(T) -> [u8; N]) -> Vec<u8> {
    values.iter().flat_map(|&value| to_le(value)).collect()
}

/// The set's URLs, its groups' attributes (JSON text, by path) and its arrays' columns.
#[expect(clippy::type_complexity, reason = "the three parts of one answer")]
fn columns(set: &ReferenceSet) -> Result<(Vec<String>, BTreeMap<String, String>, BTreeMap<String, Columns>), Error> {
    let invalid = |key: &str, why: &str| Error::new(Kind::Invalid, format!("{key}: {why}"));
    let text = |key: &str| -> Result<Option<String>, Error> {
        match set.get(key) {
            None => Ok(None),
            Some(Reference::Inline(bytes)) => {
                String::from_utf8(bytes.to_vec()).map(Some).map_err(|_| invalid(key, "metadata that is not UTF-8"))
            }
            Some(_) => Err(invalid(key, "metadata that is not inline")),
        }
    };
    let (mut groups, mut arrays) = (BTreeMap::new(), BTreeMap::new());
    let mut separators = HashMap::new();
    for (key, _) in set.iter() {
        let (node, name) = key.rsplit_once('/').map_or(("", key.as_ref()), |(node, name)| (node, name));
        match name {
            ".zgroup" => {
                groups.insert(node.to_owned(), text(&prefixed(node, ".zattrs"))?.unwrap_or_else(|| "{}".into()));
            }
            ".zarray" => {
                let zarray = text(&key)?.unwrap_or_default();
                let metadata: serde_json::Value =
                    serde_json::from_str(&zarray).map_err(|e| invalid(&key, &format!("not JSON: {e}")))?;
                let shape = dims(&metadata["shape"]).ok_or_else(|| invalid(&key, "no shape"))?;
                let chunks = dims(&metadata["chunks"]).ok_or_else(|| invalid(&key, "no chunks"))?;
                if shape.len() != chunks.len() || chunks.contains(&0) && shape.iter().any(|&n| n > 0) {
                    return Err(invalid(&key, "chunks that do not fit its shape"));
                }
                let grid: Vec<u64> = shape.iter().zip(&chunks).map(|(&n, &c)| n.div_ceil(c.max(1))).collect();
                // Checked: a file may declare a grid whose count overflows.
                let chunks_in_grid = grid.iter().try_fold(1u64, |n, &g| n.checked_mul(g)).unwrap_or(u64::MAX);
                if chunks_in_grid > MAX_CHUNKS {
                    let why = format!(
                        "a grid of {chunks_in_grid} chunks, more than the {MAX_CHUNKS} a manifest is built for"
                    );
                    return Err(invalid(&key, &why));
                }
                let count = usize::try_from(chunks_in_grid).map_err(|_| invalid(&key, "too many chunks"))?;
                let separator = metadata["dimension_separator"].as_str().unwrap_or(".").to_owned();
                separators.insert(node.to_owned(), separator);
                arrays.insert(
                    node.to_owned(),
                    Columns {
                        zattrs: text(&prefixed(node, ".zattrs"))?.unwrap_or_else(|| "{}".into()),
                        zarray,
                        grid,
                        url_index: vec![MISSING; count],
                        offsets: vec![0; count],
                        lengths: vec![0; count],
                        inlined: Vec::new(),
                    },
                );
            }
            _ => {}
        }
    }
    let mut urls: Vec<String> = Vec::new();
    let mut url_ids: HashMap<String, u32> = HashMap::new();
    for (path, columns) in &mut arrays {
        let prefix = prefixed(path, "");
        let separator = separators.get(path).map_or(".", String::as_str);
        for key in set.keys_with_prefix(&prefix) {
            let rest = &key[prefix.len()..];
            if rest.starts_with(".z") || (separator != "/" && rest.contains('/')) {
                continue;
            }
            let Some(position) = chunk_position(rest, separator, &columns.grid) else {
                return Err(invalid(&key, "a chunk key outside the array's chunk grid"));
            };
            let index = flat_index(&position, &columns.grid);
            match set.get(&key) {
                Some(Reference::Inline(bytes)) => columns.inlined.push((position, bytes.to_vec())),
                Some(Reference::Range { url: Some(url), offset, length }) => {
                    let next = u32::try_from(urls.len()).map_err(|_| invalid(&key, "too many target files"))?;
                    let id = *url_ids.entry(url.to_owned()).or_insert_with(|| {
                        urls.push(url.to_owned());
                        next
                    });
                    (columns.url_index[index], columns.offsets[index], columns.lengths[index]) = (id, offset, length);
                }
                Some(Reference::Whole { .. } | Reference::Range { url: None, .. }) => {
                    return Err(invalid(
                        &key,
                        "a reference VirtualiZarr's manifests cannot hold (a whole file or no URL)",
                    ));
                }
                Some(Reference::Malformed { reason }) => return Err(invalid(&key, reason)),
                None => {}
            }
        }
    }
    Ok((urls, groups, arrays))
}

/// `name` under the node at `path` (`""`: the root).
fn prefixed(path: &str, name: &str) -> String {
    if path.is_empty() { name.to_owned() } else { format!("{path}/{name}") }
}

fn dims(value: &serde_json::Value) -> Option<Vec<u64>> {
    value.as_array()?.iter().map(serde_json::Value::as_u64).collect()
}

/// The chunk position a key's last part names (`0`: a scalar's one chunk), if inside `grid`.
fn chunk_position(rest: &str, separator: &str, grid: &[u64]) -> Option<Vec<u64>> {
    let position: Vec<u64> = rest.split(separator).map(|part| part.parse().ok()).collect::<Option<_>>()?;
    if grid.is_empty() {
        return (position == [0]).then(Vec::new);
    }
    (position.len() == grid.len() && position.iter().zip(grid).all(|(p, g)| p < g)).then_some(position)
}

/// The C-order index of `position` in `grid`.
fn flat_index(position: &[u64], grid: &[u64]) -> usize {
    let index = position.iter().zip(grid).fold(0u64, |index, (&p, &g)| index * g + p);
    usize::try_from(index).unwrap_or(usize::MAX)
}

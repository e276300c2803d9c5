//! Zarr v3 `zarr.json` back to the Zarr v2 documents kerchunk holds
//! (`.zarray`, `.zattrs`, `.zgroup`): the inverse of [`array_v3`](crate::array_v3)
//! for what it writes, and for what `VirtualiZarr` writes (numcodecs' codecs
//! under `numcodecs.<id>`, v3's `zstd`, `gzip`, `blosc`). A rectilinear grid
//! uneven along one axis comes back with its chunks along that axis under
//! [`EDGES`], for combining to continue it. What v2 cannot
//! express otherwise (sharding, a partial transpose, a data type numpy has no
//! code for, chunks uneven along two axes) is an error naming the array.

use serde_json::{Map, Value, json};

use crate::error::MetadataError;
use crate::grid::{CROP_CODEC, EDGES};

/// The v2 documents of a node: `(".zarray" or ".zgroup", ".zattrs")`.
pub struct V2Node {
    /// `.zarray` for an array, `.zgroup` for a group.
    pub document: Value,
    /// `.zattrs`, with `_ARRAY_DIMENSIONS` for an array that names its dimensions.
    pub attributes: Map<String, Value>,
    /// Whether it is an array.
    pub is_array: bool,
}

/// The v2 documents of the node at `path` whose `zarr.json` is `zarr_json`.
///
/// # Errors
/// [`MetadataError`] naming `path`: not a v3 node, or an array v2 cannot express.
pub fn node_v2(path: &str, zarr_json: &[u8]) -> Result<V2Node, MetadataError> {
    let fail = |reason: String| MetadataError::new(path, reason);
    let v3: Map<String, Value> =
        serde_json::from_slice(zarr_json).map_err(|e| fail(format!("its zarr.json is not a JSON object: {e}")))?;
    let mut attributes = match v3.get("attributes") {
        Some(Value::Object(attributes)) => attributes.clone(),
        _ => Map::new(),
    };
    match v3.get("node_type").and_then(Value::as_str) {
        Some("group") => Ok(V2Node { document: json!({"zarr_format": 2}), attributes, is_array: false }),
        Some("array") => {
            if let Some(Value::Array(names)) = v3.get("dimension_names")
                && names.iter().all(Value::is_string)
            {
                attributes.insert("_ARRAY_DIMENSIONS".into(), Value::Array(names.clone()));
            }
            let mut document = array_v2(&v3).map_err(fail)?;
            // xarray's v3 backend masks with the `_FillValue` attribute (in its own encoding),
            // its v2 backend with `fill_value`: the attribute becomes the v2 fill value.
            let data_type = v3.get("data_type").cloned().unwrap_or(Value::Null);
            if let Some(fill) =
                attributes.get("_FillValue").and_then(|a| crate::metadata::fill_value_of_attribute(a, &data_type))
            {
                document["fill_value"] = fill;
                attributes.remove("_FillValue");
            }
            Ok(V2Node { document, attributes, is_array: true })
        }
        other => Err(fail(format!("its zarr.json's node_type is {other:?}"))),
    }
}

fn array_v2(v3: &Map<String, Value>) -> Result<Value, String> {
    let shape = v3.get("shape").cloned().ok_or("no shape")?;
    let grid = v3.get("chunk_grid").ok_or("no chunk_grid")?;
    let codecs = v3.get("codecs").and_then(Value::as_array).ok_or("no codecs")?;
    // The crop codec, first, belongs to an uneven grid's chunks; the rest is v2's chain.
    let crop = codecs.first().filter(|codec| codec.get("name").and_then(Value::as_str) == Some(CROP_CODEC));
    let codecs = if crop.is_some() { &codecs[1..] } else { &codecs[..] };
    let (chunks, uneven) = match grid.get("name").and_then(Value::as_str) {
        Some("regular") if crop.is_none() => {
            (grid.pointer("/configuration/chunk_shape").cloned().ok_or("no chunk_shape")?, None)
        }
        Some("rectilinear") => rectilinear_v2(&shape, grid, crop)?,
        _ => return Err(format!("its chunk grid {grid} is neither regular nor rectilinear on one axis")),
    };
    let chain = Chain::of(codecs, shape.as_array().map_or(0, Vec::len))?;
    let data_type = v3.get("data_type").ok_or("no data_type")?;
    let dtype = numpy_type(data_type, chain.big_endian)?;
    Ok(json!({
        "zarr_format": 2,
        "shape": shape,
        "chunks": chunks,
        "dtype": dtype,
        "fill_value": v3.get("fill_value").cloned().unwrap_or(Value::Null),
        "order": if chain.fortran { "F" } else { "C" },
        "filters": if chain.filters.is_empty() { Value::Null } else { Value::Array(chain.filters) },
        "compressor": chain.compressor.unwrap_or(Value::Null),
        "dimension_separator": ".",
    }))
    .map(|mut document| {
        if let Some(uneven) = uneven {
            document[EDGES] = uneven;
        }
        document
    })
}

/// A rectilinear `grid` of an array of `shape` as v2's `chunks`, and the uneven axis's chunks
/// as [`EDGES`] holds them: every axis but one is one length (its last chunk may
/// pass the end), that one any lengths, the chunks `crop` names stored at its length there.
fn rectilinear_v2(shape: &Value, grid: &Value, crop: Option<&Value>) -> Result<(Value, Option<Value>), String> {
    let shape: Vec<u64> = serde_json::from_value(shape.clone()).map_err(|e| format!("its shape: {e}"))?;
    let shapes = grid.pointer("/configuration/chunk_shapes").and_then(Value::as_array).ok_or("no chunk_shapes")?;
    if shapes.len() != shape.len() {
        return Err("its chunk_shapes do not match its shape".into());
    }
    let mut chunks = Vec::with_capacity(shape.len());
    let mut uneven = None;
    for (axis, (extents, &length)) in shapes.iter().zip(&shape).enumerate() {
        let edges = expand(extents, length).ok_or_else(|| format!("its chunk_shapes {extents} are not lengths"))?;
        let (first, before_last) = (edges.first().copied().unwrap_or(1), &edges[..edges.len().saturating_sub(1)]);
        let last_fits = edges.last().is_none_or(|&last| last <= first);
        if before_last.iter().all(|&edge| edge == first) && last_fits {
            chunks.push(first);
            continue;
        }
        if uneven.is_some() {
            return Err("its chunks are uneven along two axes, which combining does not continue".into());
        }
        let stored = crop.and_then(|crop| crop.pointer(&format!("/configuration/stored_chunk_shape/{axis}"))?.as_u64());
        chunks.push(stored.unwrap_or_else(|| edges.iter().copied().max().unwrap_or(1)));
        uneven = Some(json!({"axis": axis, "edges": edges, "stored": stored}));
    }
    if uneven.is_none() && crop.is_some() {
        return Err(format!("the codec {CROP_CODEC} on a grid no chunk of which it crops"));
    }
    Ok((json!(chunks), uneven))
}

/// A rectilinear axis's chunk lengths: one number (every chunk that long; one is listed) or a
/// list of lengths and `[length, count]` runs, of at most one chunk an element of the axis's
/// `length` (and one more): a hostile count is refused, not allocated.
fn expand(extents: &Value, length: u64) -> Option<Vec<u64>> {
    let most = usize::try_from(length.saturating_add(1)).unwrap_or(usize::MAX);
    match extents {
        Value::Number(length) => Some(vec![length.as_u64().filter(|&l| l > 0)?]),
        Value::Array(runs) => {
            let mut edges = Vec::new();
            for run in runs {
                match run {
                    Value::Array(pair) => {
                        let (length, count) = (pair.first()?.as_u64()?, pair.get(1)?.as_u64()?);
                        let count = usize::try_from(count).ok().filter(|&c| c <= most - edges.len().min(most))?;
                        edges.extend(std::iter::repeat_n(length, count));
                    }
                    single => edges.push(single.as_u64()?),
                }
                if edges.len() > most {
                    return None;
                }
            }
            (!edges.is_empty() && edges.iter().all(|&edge| edge > 0)).then_some(edges)
        }
        _ => None,
    }
}

/// A v3 codec chain as v2's order, filters and compressor.
struct Chain {
    fortran: bool,
    big_endian: bool,
    filters: Vec<Value>,
    compressor: Option<Value>,
}

impl Chain {
    fn of(codecs: &[Value], dimensions: usize) -> Result<Self, String> {
        let mut chain = Self { fortran: false, big_endian: false, filters: Vec::new(), compressor: None };
        let mut after_bytes = Vec::new();
        let mut seen_bytes = false;
        for (n, codec) in codecs.iter().enumerate() {
            let name =
                codec.get("name").and_then(Value::as_str).ok_or_else(|| format!("a codec without a name: {codec}"))?;
            let configuration = codec.get("configuration").and_then(Value::as_object).cloned().unwrap_or_default();
            match name {
                "transpose" => {
                    let reversed: Vec<Value> = (0..dimensions).rev().map(Value::from).collect();
                    if n != 0 || configuration.get("order") != Some(&Value::Array(reversed)) {
                        return Err("a transpose other than Fortran order first".into());
                    }
                    chain.fortran = true;
                }
                "bytes" => {
                    seen_bytes = true;
                    chain.big_endian = configuration.get("endian").and_then(Value::as_str) == Some("big");
                }
                "vlen-utf8" | "vlen-bytes" => {
                    seen_bytes = true;
                    chain.filters.push(json!({"id": name}));
                }
                _ if seen_bytes => after_bytes.push(v2_codec(name, configuration)?),
                _ => chain.filters.push(v2_codec(name, configuration)?),
            }
        }
        // v2 runs the filters, then the compressor: the last codec on bytes is the compressor.
        chain.compressor = after_bytes.pop();
        chain.filters.extend(after_bytes);
        Ok(chain)
    }
}

/// A v3 codec (other than `bytes` and `transpose`) as v2's `{"id": ..., ...}`.
fn v2_codec(name: &str, mut configuration: Map<String, Value>) -> Result<Value, String> {
    let id = match name {
        "zstd" | "gzip" | "crc32c" => name,
        "blosc" => {
            // numcodecs: 0 none, 1 bytes, 2 bits.
            let shuffle = match configuration.get("shuffle").and_then(Value::as_str) {
                Some("noshuffle") => 0,
                Some("bitshuffle") => 2,
                _ => 1,
            };
            configuration.insert("shuffle".into(), Value::from(shuffle));
            configuration.remove("typesize");
            "blosc"
        }
        _ => name.strip_prefix("numcodecs.").ok_or_else(|| format!("the codec {name} has no Zarr v2 form"))?,
    };
    configuration.insert("id".into(), Value::from(id));
    Ok(Value::Object(configuration))
}

/// numpy's code for a v3 data type, as v2 writes it.
fn numpy_type(data_type: &Value, big_endian: bool) -> Result<String, String> {
    let order = if big_endian { '>' } else { '<' };
    let name = match data_type {
        Value::String(name) => name.as_str(),
        Value::Object(object) => object.get("name").and_then(Value::as_str).unwrap_or_default(),
        _ => "",
    };
    let length = || data_type.pointer("/configuration/length_bytes").and_then(Value::as_u64);
    let (kind, size) = match name {
        "bool" => return Ok("|b1".into()),
        "int8" => return Ok("|i1".into()),
        "uint8" => return Ok("|u1".into()),
        "string" | "variable_length_bytes" => return Ok("|O".into()),
        "null_terminated_bytes" => return Ok(format!("|S{}", length().ok_or("bytes of no length")?)),
        "fixed_length_utf32" => return Ok(format!("{order}U{}", length().ok_or("text of no length")? / 4)),
        "int16" => ('i', 2),
        "int32" => ('i', 4),
        "int64" => ('i', 8),
        "uint16" => ('u', 2),
        "uint32" => ('u', 4),
        "uint64" => ('u', 8),
        "float16" => ('f', 2),
        "float32" => ('f', 4),
        "float64" => ('f', 8),
        "complex64" => ('c', 8),
        "complex128" => ('c', 16),
        other => return Err(format!("its data type {other:?} has no Zarr v2 form here")),
    };
    Ok(format!("{order}{kind}{size}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array_v3;

    /// What `array_v3` writes comes back as the `.zarray` it came from.
    #[test]
    fn v3_written_here_comes_back_as_it_was() {
        for zarray in [
            json!({"zarr_format": 2, "shape": [4, 6], "chunks": [2, 3], "dtype": "<f4",
                "compressor": {"id": "zlib", "level": 4}, "fill_value": "NaN", "order": "C",
                "filters": [{"id": "shuffle", "elementsize": 4}], "dimension_separator": "."}),
            json!({"zarr_format": 2, "shape": [3, 5], "chunks": [3, 5], "dtype": ">i2",
                "compressor": {"id": "blosc", "cname": "zstd", "clevel": 3, "shuffle": 2, "blocksize": 0},
                "fill_value": -1, "order": "F", "filters": [{"id": "delta", "dtype": ">i2"}],
                "dimension_separator": "."}),
            json!({"zarr_format": 2, "shape": [4], "chunks": [4], "dtype": "|O", "compressor": null,
                "fill_value": "", "order": "C", "filters": [{"id": "vlen-utf8"}], "dimension_separator": "."}),
        ] {
            let attributes = json!({"_ARRAY_DIMENSIONS": vec!["d"; zarray["shape"].as_array().unwrap().len()]});
            let v3 = array_v3("a", zarray.to_string().as_bytes(), attributes.as_object().unwrap().clone()).unwrap();
            let back = node_v2("a", v3.to_string().as_bytes()).unwrap();
            assert!(back.is_array);
            assert_eq!(back.document, zarray);
            assert_eq!(Value::Object(back.attributes), attributes);
        }
    }

    /// A rectilinear grid's runs are counted against the axis before any is laid out: a hostile
    /// count is an error, not an allocation.
    #[test]
    fn a_hostile_run_is_refused() {
        let node = json!({"zarr_format": 3, "node_type": "array", "shape": [10], "data_type": "float32",
            "chunk_grid": {"name": "rectilinear", "configuration": {"kind": "inline",
            "chunk_shapes": [[[1, 4_000_000_000_u64]]]}},
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}], "fill_value": 0});
        let error = node_v2("t", node.to_string().as_bytes()).err().unwrap().to_string();
        assert!(error.contains("are not lengths"), "{error}");
    }

    #[test]
    fn what_v2_cannot_hold_is_an_error_naming_the_node() {
        let sharded = json!({"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "float32",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
            "codecs": [{"name": "sharding_indexed", "configuration": {}}], "fill_value": 0});
        let error = node_v2("x/y", sharded.to_string().as_bytes()).err().unwrap().to_string();
        assert!(error.contains("x/y") && error.contains("sharding_indexed"), "{error}");
    }
}

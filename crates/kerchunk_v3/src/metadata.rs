//! Zarr v2 metadata (`.zarray`, `.zgroup`, `.zattrs`) as the Zarr v3
//! `zarr.json` an icechunk repository holds.
//!
//! What changes, and why:
//! - chunk keys use v3's default encoding (`c/0/1`): icechunk stores chunks
//!   by their indices, and readers ask for them in that form;
//! - `_ARRAY_DIMENSIONS` becomes `dimension_names`;
//! - a `null` fill value (v2's "undefined") becomes NaN for floats, `false`
//!   for booleans and 0 otherwise, as `VirtualiZarr` writes it: v3 has no
//!   undefined fill value;
//! - v2's `zstd`, `gzip` and `blosc` become v3's codecs of those names; every
//!   other codec keeps its numcodecs id as `numcodecs.<id>`, as zarr-python
//!   names numcodecs' codecs in v3 (`numcodecs.zlib`, `numcodecs.shuffle`);
//! - `order: "F"` becomes a `transpose` codec.

use base64::Engine as _;
use serde_json::{Map, Value, json};
use zarrs::metadata::v2::{ArrayMetadataV2, ArrayMetadataV2Order, MetadataV2, data_type_metadata_v2_to_endianness};
use zarrs::metadata::{Endianness, FillValueMetadata};

use crate::error::MetadataError;

/// numcodecs' filters that map arrays to arrays: in v3 they come before the
/// `bytes` codec, every other filter and the compressor after it.
const ARRAY_TO_ARRAY: [&str; 5] = ["delta", "fixedscaleoffset", "quantize", "bitround", "astype"];

/// Variable-length strings and bytes: in v3 their codecs take the `bytes`
/// codec's place, over v3's `string` and `variable_length_bytes` types.
const VARIABLE_LENGTH: [&str; 2] = ["vlen-utf8", "vlen-bytes"];

/// numcodecs' other codecs that make bytes of an array (ragged arrays,
/// pcodec, zfpy, packbits): not written, for now.
const ARRAY_TO_BYTES: [&str; 4] = ["vlen-array", "pcodec", "zfpy", "packbits"];

/// The `zarr.json` of the group whose `.zattrs` are `attributes`.
#[must_use]
pub fn group_v3(attributes: &Map<String, Value>) -> Value {
    json!({"zarr_format": 3, "node_type": "group", "attributes": attributes})
}

/// The `zarr.json` of the array at `path` whose `.zarray` is `zarray` and
/// whose `.zattrs` are `attributes`.
///
/// # Errors
/// [`MetadataError`] naming `path`: the `.zarray` is not Zarr v2 array
/// metadata, or v3 cannot express it (structured or object data types,
/// variable-length codecs, a filter that makes arrays after one that makes bytes).
pub fn array_v3(path: &str, zarray: &[u8], mut attributes: Map<String, Value>) -> Result<Value, MetadataError> {
    let fail = |reason: String| MetadataError { path: path.to_owned(), reason };
    let v2 = parse_v2(zarray).map_err(fail)?;
    let (data_type, fill_value) = if let Some(text) = text_type(&v2) {
        text
    } else {
        let data_type = zarrs::convert::data_type_metadata_v2_to_v3(&v2.dtype).map_err(|e| fail(e.to_string()))?;
        let fill_value = match &v2.fill_value {
            FillValueMetadata::Null => undefined_fill(data_type.name()),
            other => {
                zarrs::convert::fill_value_metadata_v2_to_v3(other, &data_type).map_err(|e| fail(e.to_string()))?
            }
        };
        (serde_json::to_value(&data_type).map_err(|e| fail(e.to_string()))?, fill_value)
    };
    let endianness = data_type_metadata_v2_to_endianness(&v2.dtype).map_err(|e| fail(e.to_string()))?;
    let codecs = codecs(&v2, endianness).map_err(fail)?;
    if !attributes.contains_key("_FillValue")
        && let Some(fill) = xarray_fill_value(&v2)
    {
        attributes.insert("_FillValue".into(), fill);
    }
    let dimension_names = match attributes.remove("_ARRAY_DIMENSIONS") {
        Some(Value::Array(names)) if names.len() == v2.shape.len() => Value::Array(names),
        Some(other) => return Err(fail(format!("its _ARRAY_DIMENSIONS {other} do not name its dimensions"))),
        None => Value::Null,
    };
    let mut metadata = json!({
        "zarr_format": 3,
        "node_type": "array",
        "shape": v2.shape,
        "data_type": data_type,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": v2.chunks}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": fill_value,
        "codecs": codecs,
        "attributes": attributes,
    });
    if !dimension_names.is_null() {
        metadata["dimension_names"] = dimension_names;
    }
    Ok(metadata)
}

/// The `_FillValue` attribute xarray's v3 backend masks with, for a v2 array's
/// `fill_value` (which xarray's v2 backend masks with itself, and its v3 one
/// does not): an integer as it is, a float as base64 of its little-endian
/// float64 bytes (xarray's `FillValueCoder`). `None` for no fill value, and
/// for other types (booleans, text), left as v3's `fill_value` alone.
fn xarray_fill_value(v2: &ArrayMetadataV2) -> Option<Value> {
    let zarrs::metadata::v2::DataTypeMetadataV2::Simple(name) = &v2.dtype else { return None };
    let fill = serde_json::to_value(&v2.fill_value).ok()?;
    match name.get(1..2)? {
        "i" | "u" => fill.as_i64().map(Value::from).or_else(|| fill.as_u64().map(Value::from)),
        "f" => {
            let value = match &fill {
                Value::String(text) => match text.as_str() {
                    "NaN" => f64::NAN,
                    "Infinity" => f64::INFINITY,
                    "-Infinity" => f64::NEG_INFINITY,
                    _ => return None,
                },
                other => other.as_f64()?,
            };
            Some(Value::from(base64::engine::general_purpose::STANDARD.encode(value.to_le_bytes())))
        }
        _ => None,
    }
}

/// The value of a `_FillValue` attribute as xarray's v3 backend writes it
/// (see [`array_v3`]) for an array of the v3 `data_type`, as v2's
/// `fill_value` writes it: `None` where it is not in that form.
#[must_use]
pub fn fill_value_of_attribute(attribute: &Value, data_type: &Value) -> Option<Value> {
    let name = data_type.as_str()?;
    if name.starts_with("int") || name.starts_with("uint") {
        return attribute.is_i64().then(|| attribute.clone()).or_else(|| attribute.is_u64().then(|| attribute.clone()));
    }
    if !name.starts_with("float") {
        return None;
    }
    let bytes = base64::engine::general_purpose::STANDARD.decode(attribute.as_str()?).ok()?;
    let value = f64::from_le_bytes(bytes.try_into().ok()?);
    Some(if value.is_nan() {
        Value::from("NaN")
    } else if value.is_infinite() {
        Value::from(if value > 0.0 { "Infinity" } else { "-Infinity" })
    } else {
        Value::from(value)
    })
}

/// `zarray` as Zarr v2 array metadata. An empty dimension's chunks of 0
/// (as kerchunk writes them for HDF4's and HDF5's empty datasets) become 1:
/// v3's chunks are at least 1, and such an array has no chunk either way.
///
/// # Errors
/// Why `zarray` is not Zarr v2 array metadata.
pub fn parse_v2(zarray: &[u8]) -> Result<ArrayMetadataV2, String> {
    let not_v2 = |e: serde_json::Error| format!("its .zarray is not Zarr v2 array metadata: {e}");
    let mut document: Value = serde_json::from_slice(zarray).map_err(not_v2)?;
    if let (Some(Value::Array(shape)), Some(Value::Array(chunks))) =
        (document.get("shape").cloned(), document.get_mut("chunks"))
    {
        for (extent, chunk) in shape.iter().zip(chunks.iter_mut()) {
            if extent.as_u64() == Some(0) && chunk.as_u64() == Some(0) {
                *chunk = Value::from(1);
            }
        }
    }
    serde_json::from_value(document).map_err(not_v2)
}

/// The v3 data type and fill value of text and bytes, which zarrs does not
/// convert, named as zarr-python names them: fixed-length bytes (`|S5`) as
/// `null_terminated_bytes`, fixed-length text (`<U5`) as
/// `fixed_length_utf32`, variable-length text as `string` and bytes as
/// `variable_length_bytes`. `None` for any other type.
fn text_type(v2: &ArrayMetadataV2) -> Option<(Value, FillValueMetadata)> {
    let zarrs::metadata::v2::DataTypeMetadataV2::Simple(name) = &v2.dtype else { return None };
    let fill = |undefined: FillValueMetadata| match &v2.fill_value {
        FillValueMetadata::Null => undefined,
        other => other.clone(),
    };
    if let Some(length) = name.strip_prefix("|S").and_then(|n| n.parse::<u64>().ok()) {
        let data_type = json!({"name": "null_terminated_bytes", "configuration": {"length_bytes": length}});
        return Some((data_type, fill(FillValueMetadata::from(""))));
    }
    // Four bytes a character; a length past u64 (from a hostile `.zarray`) is left to zarrs, which refuses it.
    let characters = name.get(2..).filter(|_| name.get(1..2) == Some("U")).and_then(|n| n.parse::<u64>().ok());
    if let Some(length) = characters.and_then(|n| n.checked_mul(4)) {
        let data_type = json!({"name": "fixed_length_utf32", "configuration": {"length_bytes": length}});
        return Some((data_type, fill(FillValueMetadata::from(""))));
    }
    if name == "|O" {
        let first = v2.filters.as_ref()?.first()?.id();
        let data_type = match first {
            "vlen-utf8" => "string",
            "vlen-bytes" => "variable_length_bytes",
            _ => return None,
        };
        return Some((Value::from(data_type), fill(FillValueMetadata::from(""))));
    }
    None
}

/// v3's fill value for v2's `null`, as `VirtualiZarr` chooses it.
fn undefined_fill(type_name: &str) -> FillValueMetadata {
    if type_name.starts_with("float") || type_name.starts_with("bfloat") {
        FillValueMetadata::from("NaN")
    } else if type_name.starts_with("complex") {
        FillValueMetadata::from(vec![FillValueMetadata::from("NaN"), FillValueMetadata::from("NaN")])
    } else if type_name == "bool" {
        FillValueMetadata::from(false)
    } else {
        FillValueMetadata::from(0)
    }
}

/// The v3 codec chain of `v2`'s order, filters and compressor.
fn codecs(v2: &ArrayMetadataV2, endianness: Option<Endianness>) -> Result<Vec<Value>, String> {
    let mut before_bytes = Vec::new();
    if v2.order == ArrayMetadataV2Order::F {
        let reversed: Vec<usize> = (0..v2.shape.len()).rev().collect();
        before_bytes.push(json!({"name": "transpose", "configuration": {"order": reversed}}));
    }
    let mut after_bytes = Vec::new();
    let mut to_bytes = None;
    for filter in v2.filters.iter().flatten() {
        let id = filter.id();
        if VARIABLE_LENGTH.contains(&id) && to_bytes.is_none() && after_bytes.is_empty() {
            to_bytes = Some(json!({"name": id, "configuration": {}}));
            continue;
        }
        if ARRAY_TO_BYTES.contains(&id) || VARIABLE_LENGTH.contains(&id) {
            return Err(format!("its filter {id} makes bytes of arrays in a way not written as Zarr v3 yet"));
        }
        if ARRAY_TO_ARRAY.contains(&id) {
            if !after_bytes.is_empty() {
                return Err(format!("its filter {id} works on arrays, after a filter that makes bytes"));
            }
            if to_bytes.is_some() {
                return Err(format!("its filter {id} works on arrays, after a variable-length codec"));
            }
            before_bytes.push(numcodecs(filter));
        } else {
            after_bytes.push(bytes_to_bytes(filter, v2)?);
        }
    }
    if let Some(compressor) = &v2.compressor {
        let id = compressor.id();
        if ARRAY_TO_BYTES.contains(&id) || VARIABLE_LENGTH.contains(&id) || ARRAY_TO_ARRAY.contains(&id) {
            return Err(format!("its compressor {id} is not one Zarr v3 takes after its bytes"));
        }
        after_bytes.push(bytes_to_bytes(compressor, v2)?);
    }
    let endian = match endianness {
        Some(Endianness::Big) => "big",
        _ => "little",
    };
    let mut chain = before_bytes;
    chain.push(to_bytes.unwrap_or_else(|| json!({"name": "bytes", "configuration": {"endian": endian}})));
    chain.extend(after_bytes);
    Ok(chain)
}

/// numcodecs' defaults for parameters a v2 configuration may leave out and
/// v3 readers (zarrs) require: `Zlib(level=1)`, `BZ2(level=1)`, `Shuffle(elementsize=4)`.
const DEFAULTS: [(&str, &str, i64); 3] = [("zlib", "level", 1), ("bz2", "level", 1), ("shuffle", "elementsize", 4)];

/// A numcodecs codec as zarr-python names it in v3: `numcodecs.<id>`, its
/// configuration without the id, numcodecs' defaults written out.
fn numcodecs(codec: &MetadataV2) -> Value {
    let mut configuration: Map<String, Value> = codec.configuration().clone().into();
    for (id, key, value) in DEFAULTS {
        if codec.id() == id && !configuration.contains_key(key) {
            configuration.insert(key.to_owned(), Value::from(value));
        }
    }
    json!({"name": format!("numcodecs.{}", codec.id()), "configuration": configuration})
}

/// A compressor, or a filter after the bytes, in v3: `zstd`, `gzip` and
/// `blosc` as v3's own codecs (which zarrs and zarr-python both read), any
/// other as [`numcodecs`].
fn bytes_to_bytes(compressor: &MetadataV2, v2: &ArrayMetadataV2) -> Result<Value, String> {
    let configuration = compressor.configuration();
    let number = |key: &str, default: i64| configuration.get(key).and_then(Value::as_i64).unwrap_or(default);
    Ok(match compressor.id() {
        "zstd" => json!({"name": "zstd", "configuration": {
            "level": number("level", 0),
            "checksum": configuration.get("checksum").and_then(Value::as_bool).unwrap_or(false),
        }}),
        "gzip" => json!({"name": "gzip", "configuration": {"level": number("level", 1)}}),
        "blosc" => {
            let typesize = item_size(v2).ok_or_else(|| format!("blosc over data type {:?}", v2.dtype))?;
            // numcodecs: 0 none, 1 bytes, 2 bits, -1 bits for one-byte items and bytes otherwise.
            let shuffle = match (number("shuffle", 1), typesize) {
                (0, _) => "noshuffle",
                (2, _) | (-1, 1) => "bitshuffle",
                (1 | -1, _) => "shuffle",
                (other, _) => return Err(format!("blosc with shuffle {other}")),
            };
            json!({"name": "blosc", "configuration": {
                "cname": configuration.get("cname").and_then(Value::as_str).unwrap_or("lz4"),
                "clevel": number("clevel", 5),
                "shuffle": shuffle,
                "typesize": typesize,
                "blocksize": number("blocksize", 0),
            }})
        }
        _ => numcodecs(compressor),
    })
}

/// The size in bytes of one item of `v2`'s data type (`<f8`: 8), where it has one.
fn item_size(v2: &ArrayMetadataV2) -> Option<u64> {
    let zarrs::metadata::v2::DataTypeMetadataV2::Simple(name) = &v2.dtype else { return None };
    let digits: String = name.chars().skip(2).take_while(char::is_ascii_digit).collect();
    let size: u64 = digits.parse().ok()?;
    // Complex types count both halves; datetimes (`<M8[ns]`) are 8 bytes as written.
    Some(size)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v3(zarray: &Value, attributes: &Value) -> Value {
        let attributes = attributes.as_object().cloned().unwrap_or_default();
        array_v3("a/b", zarray.to_string().as_bytes(), attributes).unwrap()
    }

    #[test]
    fn an_hdf5_chunked_array_becomes_v3() {
        let zarray = json!({"zarr_format": 2, "shape": [4, 6], "chunks": [2, 3], "dtype": "<f4",
            "compressor": {"id": "zlib", "level": 4}, "fill_value": null, "order": "C",
            "filters": [{"id": "shuffle"}]});
        let metadata = v3(&zarray, &json!({"_ARRAY_DIMENSIONS": ["y", "x"], "units": "K"}));
        assert_eq!(metadata["chunk_key_encoding"], json!({"name": "default", "configuration": {"separator": "/"}}));
        assert_eq!(metadata["data_type"], "float32");
        assert_eq!(metadata["fill_value"], "NaN");
        assert_eq!(metadata["dimension_names"], json!(["y", "x"]));
        assert_eq!(metadata["attributes"], json!({"units": "K"}));
        assert_eq!(metadata["chunk_grid"]["configuration"]["chunk_shape"], json!([2, 3]));
        assert_eq!(
            metadata["codecs"],
            json!([
                {"name": "bytes", "configuration": {"endian": "little"}},
                {"name": "numcodecs.shuffle", "configuration": {"elementsize": 4}},
                {"name": "numcodecs.zlib", "configuration": {"level": 4}},
            ])
        );
    }

    #[test]
    fn big_endian_fortran_order_and_blosc() {
        let zarray = json!({"zarr_format": 2, "shape": [3, 5], "chunks": [3, 5], "dtype": ">i2",
            "compressor": {"id": "blosc", "cname": "zstd", "clevel": 3, "shuffle": 2, "blocksize": 0},
            "fill_value": -1, "order": "F", "filters": [{"id": "delta", "dtype": ">i2"}]});
        let metadata = v3(&zarray, &json!({}));
        assert_eq!(metadata["fill_value"], -1);
        // Where xarray's v3 backend masks with it, in its encoding.
        assert_eq!(metadata["attributes"], json!({"_FillValue": -1}));
        assert!(metadata.get("dimension_names").is_none());
        assert_eq!(
            metadata["codecs"],
            json!([
                {"name": "transpose", "configuration": {"order": [1, 0]}},
                {"name": "numcodecs.delta", "configuration": {"dtype": ">i2"}},
                {"name": "bytes", "configuration": {"endian": "big"}},
                {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 3, "shuffle": "bitshuffle",
                    "typesize": 2, "blocksize": 0}},
            ])
        );
    }

    /// A float's fill value as xarray's `FillValueCoder` encodes it (base64 of little-endian f64),
    /// and back; an attribute of the file's own is kept.
    #[test]
    fn fill_values_are_attributes_where_xarray_reads_them() {
        let zarray = |fill: Value| {
            json!({"zarr_format": 2, "shape": [2], "chunks": [2], "dtype": "<f4", "compressor": null,
                "fill_value": fill, "order": "C", "filters": null})
        };
        // base64.standard_b64encode(struct.pack("<d", -999.0)), and of NaN.
        for (fill, encoded) in [(json!(-999.0), "AAAAAAA4j8A="), (json!("NaN"), "AAAAAAAA+H8=")] {
            let metadata = v3(&zarray(fill.clone()), &json!({}));
            assert_eq!(metadata["attributes"]["_FillValue"], encoded);
            assert_eq!(fill_value_of_attribute(&json!(encoded), &json!("float32")), Some(fill));
        }
        let metadata = v3(&zarray(json!(1.5)), &json!({"_FillValue": "kept"}));
        assert_eq!(metadata["attributes"]["_FillValue"], "kept");
        assert_eq!(fill_value_of_attribute(&json!(-7), &json!("int16")), Some(json!(-7)));
        assert_eq!(fill_value_of_attribute(&json!("text"), &json!("string")), None);
    }

    #[test]
    fn text_and_bytes_are_named_as_zarr_python_names_them() {
        let base = |dtype: &str, fill: Value, filters: Value| {
            json!({"zarr_format": 2, "shape": [4], "chunks": [4], "dtype": dtype, "compressor": null,
                "fill_value": fill, "order": "C", "filters": filters})
        };
        let bytes = v3(&base("|S5", json!("IA=="), Value::Null), &json!({}));
        assert_eq!(bytes["data_type"], json!({"name": "null_terminated_bytes", "configuration": {"length_bytes": 5}}));
        assert_eq!(bytes["fill_value"], "IA==");
        let text = v3(&base("|O", Value::Null, json!([{"id": "vlen-utf8"}])), &json!({}));
        assert_eq!((&text["data_type"], &text["fill_value"]), (&json!("string"), &json!("")));
        assert_eq!(text["codecs"], json!([{"name": "vlen-utf8", "configuration": {}}]));
        let empty = json!({"zarr_format": 2, "shape": [0], "chunks": [0], "dtype": "<f4", "compressor": null,
            "fill_value": 0.0, "order": "C", "filters": null});
        assert_eq!(v3(&empty, &json!({}))["chunk_grid"]["configuration"]["chunk_shape"], json!([1]));
        let text = v3(&base("<U3", json!(""), Value::Null), &json!({}));
        assert_eq!(text["data_type"], json!({"name": "fixed_length_utf32", "configuration": {"length_bytes": 12}}));
        // A length whose bytes overflow is an error naming the array, not an overflow.
        let huge = base("<U5000000000000000000", json!(""), Value::Null);
        let error = array_v3("a/b", huge.to_string().as_bytes(), Map::new()).unwrap_err().to_string();
        assert!(error.contains("a/b"), "{error}");
    }

    #[test]
    fn what_v3_cannot_hold_is_an_error_naming_the_array() {
        for (zarray, expected) in [
            (
                json!({"zarr_format": 2, "shape": [2], "chunks": [2], "dtype": "|O", "compressor": null,
                "fill_value": null, "order": "C", "filters": [{"id": "vlen-array", "dtype": "<i4"}]}),
                "a/b",
            ),
            (
                json!({"zarr_format": 2, "shape": [2], "chunks": [2], "dtype": "<f8", "compressor": null,
                "fill_value": null, "order": "C", "filters": [{"id": "shuffle"}, {"id": "delta", "dtype": "<f8"}]}),
                "after a filter that makes bytes",
            ),
            (json!({"shape": [2]}), "not Zarr v2 array metadata"),
        ] {
            let error = array_v3("a/b", zarray.to_string().as_bytes(), Map::new()).unwrap_err().to_string();
            assert!(error.contains(expected) && error.contains("a/b"), "{error}");
        }
    }
}

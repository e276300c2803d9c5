//! Zarr V2 metadata that kerchunk writes but zarrs cannot open as written,
//! served rewritten to an exact equivalent.
//!
//! Every rewrite lives here, each with a test. They apply when a store serves
//! a `.zarray`, `.zattrs` or `.zgroup` key (and nowhere else), and only when
//! they change something: metadata that zarrs already accepts is served
//! byte for byte as the reference set holds it.
//!
//! | rewrite | kerchunk writes | served as | why it is exact |
//! |---|---|---|---|
//! | non-finite numbers | bare `NaN`, `Infinity`, `-Infinity` tokens (Python's `json`) | the strings `"NaN"`, `"Infinity"`, `"-Infinity"` | the zarr V2 spelling of non-finite fill values; zarrs rejects the bare tokens as invalid JSON |
//! | blosc as a filter | `compressor: null`, `filters: [.., {"id": "blosc"}]` (HDF5 filter 32001) | blosc moved to `compressor` | filters then compressor run in sequence, so the last filter and the compressor are the same step; zarrs only builds blosc as a compressor |
//! | zlib/gzip level | `{"id": "zlib"}` with no `level` | `level: 1` added | the level only matters when compressing; zarrs requires the field |
//! | single-byte byte order | `<u1`, `>i1`, `<b1`, ... | `\|u1`, `\|i1`, `\|b1` | byte order is meaningless for one byte; zarrs only accepts `\|` |
//! | fixed-length bytes | `\|S<n>` with a base64 fill value | `\|V<n>` (raw bytes) with the fill zero-padded to `n` bytes | numpy `S<n>` values are `n` raw bytes, zero-padded, which is what `\|V<n>` reads; zarrs has no `S` type |
//! | empty dimensions | `"shape": [0], "chunks": [0]` (kerchunk's HDF4 scanner) | chunk length 1 for each empty dimension | an empty dimension has no chunk to read whatever its length; zarrs refuses a chunk length of 0, fsspec + zarr read an empty array |
//! | null fill for raw bytes and text | `\|V<n>` or `<U<n>` with `fill_value: null` | `n` zero bytes / `n` NUL characters | numpy's default for these dtypes; zarrs rejects `null` for them |
//! | HDF5 strings as heap ids | `\|O` with the one filter `fill_hdf_strings` (kerchunk's `vlen_encode="encode"` or `"null"`, with zarr-python 2) | `vlen-utf8` before that filter | zarrs reads `\|O` as text through `vlen-utf8`, which the filter's decoding (`zarrs_kerchunk_codecs`) feeds |
//! | `fixedscaleoffset` types | a `>i2` array whose filter decodes to `<f8` (kerchunk's FITS images with BSCALE/BZERO); a `<f8` array stored as `>i4` | the array's dtype the filter's `dtype`, in `astype`'s byte order (`>f8`) | numcodecs returns the filter's `dtype` whatever the array says; zarrs takes the stored bytes' order from the array's dtype, and refuses an array dtype that is not the filter's |
//!
//! A dtype or codec that has no exact equivalent in zarrs is refused here with
//! an error naming the array and the dtype or codec, instead of a bare
//! "not supported" from deep inside zarrs. So is an array whose numbers a
//! reader cannot hold: a chunk grid of more than 2^64 chunks, or a chunk
//! larger than the configured limit (before any fill value is padded to the
//! dtype's size).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Map, Value};

use super::grid::{ChunkGrid, GridError};
use super::lenient;
use super::{fixed_scale_offset, hdf_strings};

/// Numcodecs codec ids that neither zarrs nor this workspace's codecs
/// (`zarrs_kerchunk_codecs`) decode in any configuration: what a reader
/// without a codec registry to ask refuses ([`listed_as_decodable`]).
/// `zarrs_kerchunk_codecs`' tests keep it in step with both.
/// (`lz4` in kerchunk output is HDF5's framing, which numcodecs' lz4 does not read either.)
pub const UNDECODABLE_CODECS: &[&str] =
    &["lz4", "categorize", "packbits", "crc32", "jenkins_lookup3", "imagecodecs_lzf", "szip"];

/// Whether a reader has a decoder for a numcodecs codec id: asked of every
/// codec of an array's metadata before zarrs sees it, so that an array no
/// codec decodes is refused naming the array and the codec. A reader with
/// zarrs asks zarrs' registry (`zarrs_kerchunk_codecs::is_decodable`).
pub type CodecCheck = fn(&str) -> bool;

/// The [`CodecCheck`] of a reader with no registry to ask: every id but
/// those in [`UNDECODABLE_CODECS`].
#[must_use]
pub fn listed_as_decodable(id: &str) -> bool {
    !UNDECODABLE_CODECS.contains(&id)
}

/// Whether `key` names Zarr V2 metadata that this module may rewrite.
#[must_use]
pub fn is_metadata_key(key: &str) -> bool {
    let name = key.rsplit('/').next().unwrap_or(key);
    matches!(name, ".zarray" | ".zattrs" | ".zgroup")
}

/// An array whose data zarrs cannot decode.
#[derive(Debug, thiserror::Error)]
pub enum Unsupported {
    #[error("array {array:?}: codec {codec:?} has no decoder (in zarrs, or registered with it)")]
    /// A codec zarrs has no decoder for.
    Codec {
        /// The array's key prefix.
        array: String,
        /// The codec's numcodecs id.
        codec: String,
    },
    #[error("array {array:?}: dtype {dtype:?} (datetime64/timedelta64) has no Zarr V2 equivalent in zarrs")]
    /// A dtype zarrs cannot read.
    Dtype {
        /// The array's key prefix.
        array: String,
        /// The numpy dtype.
        dtype: String,
    },
    #[error("array {array:?}: its chunk grid has more than 2^64 chunks")]
    /// A chunk grid of more than 2^64 chunks.
    GridTooLarge {
        /// The array's key prefix.
        array: String,
    },
    #[error(
        "array {array:?}: a chunk of {bytes} bytes is larger than the limit of {limit} (Limits::with_max_chunk_bytes)"
    )]
    /// A chunk larger than the limit.
    ChunkTooLarge {
        /// The array's key prefix.
        array: String,
        /// The chunk's size.
        bytes: u128,
        /// The limit.
        limit: u64,
    },
}

/// The metadata document to serve for `key`, or `None` to serve `raw` unchanged.
///
/// # Errors
/// [`Unsupported`], naming the array and the dtype that zarrs cannot read or
/// the codec that `decodable` has no decoder for, or the grid or chunk size
/// no reader can hold (`max_chunk_bytes`).
///
/// # Panics
/// Never: a JSON value always serialises.
pub fn rewrite(
    key: &str,
    raw: &[u8],
    max_chunk_bytes: u64,
    decodable: CodecCheck,
) -> Result<Option<Vec<u8>>, Unsupported> {
    let quoted = lenient::quote_non_finite(raw);
    let Ok(mut doc) = serde_json::from_slice::<Value>(quoted.as_deref().unwrap_or(raw)) else {
        return Ok(None); // not JSON: let zarrs report it
    };
    let mut changed = quoted.is_some();
    if let Some(array) = key.strip_suffix(".zarray")
        && let Value::Object(meta) = &mut doc
    {
        let array = array_name(array);
        refuse_unsupported(array, meta, decodable)?;
        refuse_oversized(array, meta, max_chunk_bytes)?;
        changed |= blosc_filter_to_compressor(meta);
        changed |= default_deflate_level(meta);
        changed |= single_byte_order(meta);
        changed |= empty_dimension_chunks(meta);
        changed |= fixed_bytes_as_raw(meta);
        changed |= null_fill_for_raw_and_text(meta);
        changed |= fixed_scale_offset::decoded_type(meta);
        changed |= hdf_strings::as_text(meta);
    }
    Ok(changed.then(|| serde_json::to_vec(&doc).expect("JSON values serialise")))
}

/// Check the metadata document `key` holds, served as written, against the
/// limits every reader needs: `Ok` unless it is a `.zarray` whose chunk grid
/// or chunk size [`rewrite`] would refuse too.
///
/// # Errors
/// [`Unsupported::GridTooLarge`] or [`Unsupported::ChunkTooLarge`], naming the array.
pub fn check_size(key: &str, raw: &[u8], max_chunk_bytes: u64) -> Result<(), Unsupported> {
    let Some(array) = key.strip_suffix(".zarray") else { return Ok(()) };
    let quoted = lenient::quote_non_finite(raw);
    let Ok(Value::Object(meta)) = serde_json::from_slice::<Value>(quoted.as_deref().unwrap_or(raw)) else {
        return Ok(()); // not a JSON object: the reader reports it
    };
    refuse_oversized(array_name(array), &meta, max_chunk_bytes)
}

/// The array a `.zarray` key's prefix names, as errors show it.
fn array_name(prefix: &str) -> &str {
    let array = prefix.trim_end_matches('/');
    if array.is_empty() { "/" } else { array }
}

fn codecs(meta: &Map<String, Value>) -> impl Iterator<Item = &Value> {
    let filters = meta.get("filters").and_then(Value::as_array).into_iter().flatten();
    filters.chain(meta.get("compressor").filter(|c| !c.is_null()))
}

fn codec_id(codec: &Value) -> Option<&str> {
    codec.get("id").and_then(Value::as_str)
}

fn refuse_unsupported(array: &str, meta: &Map<String, Value>, decodable: CodecCheck) -> Result<(), Unsupported> {
    if let Some(id) = codecs(meta).filter_map(codec_id).find(|id| !decodable(id)) {
        return Err(Unsupported::Codec { array: array.to_owned(), codec: id.to_owned() });
    }
    if let Some(dtype) = meta.get("dtype").and_then(Value::as_str)
        && matches!(dtype.get(1..2), Some("M" | "m"))
    {
        return Err(Unsupported::Dtype { array: array.to_owned(), dtype: dtype.to_owned() });
    }
    Ok(())
}

/// Refuse a grid whose chunk count overflows `u64`, and a chunk of more than
/// `limit` bytes (its shape times the dtype's item size), before anything is
/// allocated for it.
fn refuse_oversized(array: &str, meta: &Map<String, Value>, limit: u64) -> Result<(), Unsupported> {
    if let Err(GridError::TooLarge) = ChunkGrid::from_zarray(&Value::Object(meta.clone())) {
        return Err(Unsupported::GridTooLarge { array: array.to_owned() });
    }
    let mut chunks = meta.get("chunks").and_then(Value::as_array).into_iter().flatten().map(Value::as_u64);
    let elements = chunks.try_fold(1u128, |n, c| Some(n.saturating_mul(u128::from(c?))));
    let item = meta.get("dtype").and_then(Value::as_str).and_then(item_size);
    if let (Some(elements), Some(item)) = (elements, item) {
        let bytes = elements.saturating_mul(item);
        if bytes > u128::from(limit) {
            return Err(Unsupported::ChunkTooLarge { array: array.to_owned(), bytes, limit });
        }
    }
    Ok(())
}

/// The bytes one element of a numpy dtype string takes (`<f8`: 8, `<U3`: 12), if it says.
fn item_size(dtype: &str) -> Option<u128> {
    let body = dtype.strip_prefix(['<', '>', '|', '=']).unwrap_or(dtype);
    let kind = body.chars().next()?;
    let count: u128 = body[kind.len_utf8()..].parse().ok()?;
    Some(if kind == 'U' { count.saturating_mul(4) } else { count })
}

/// blosc as the last filter with no compressor → blosc as the compressor.
fn blosc_filter_to_compressor(meta: &mut Map<String, Value>) -> bool {
    if !meta.get("compressor").is_none_or(Value::is_null) {
        return false;
    }
    let Some(Value::Array(filters)) = meta.get_mut("filters") else { return false };
    if filters.last().and_then(codec_id) != Some("blosc") {
        return false;
    }
    let blosc = filters.pop().expect("checked above");
    if filters.is_empty() {
        meta.insert("filters".into(), Value::Null);
    }
    meta.insert("compressor".into(), blosc);
    true
}

/// zlib or gzip without a level → level 1.
fn default_deflate_level(meta: &mut Map<String, Value>) -> bool {
    let mut changed = false;
    let mut fix = |codec: &mut Value| {
        if let Value::Object(c) = codec
            && matches!(c.get("id").and_then(Value::as_str), Some("zlib" | "gzip"))
            && !c.contains_key("level")
        {
            c.insert("level".into(), Value::from(1));
            changed = true;
        }
    };
    if let Some(Value::Array(filters)) = meta.get_mut("filters") {
        filters.iter_mut().for_each(&mut fix);
    }
    if let Some(compressor) = meta.get_mut("compressor") {
        fix(compressor);
    }
    changed
}

/// `<u1`, `>i1`, `<b1`, ... → `|u1`, `|i1`, `|b1`.
fn single_byte_order(meta: &mut Map<String, Value>) -> bool {
    let Some(Value::String(dtype)) = meta.get_mut("dtype") else { return false };
    if matches!(dtype.as_str(), "<u1" | ">u1" | "<i1" | ">i1" | "<b1" | ">b1") {
        dtype.replace_range(0..1, "|");
        return true;
    }
    false
}

/// A chunk length of 0 along an empty dimension (shape 0) → 1.
fn empty_dimension_chunks(meta: &mut Map<String, Value>) -> bool {
    let shape: Vec<Option<u64>> =
        meta.get("shape").and_then(Value::as_array).map(|s| s.iter().map(Value::as_u64).collect()).unwrap_or_default();
    let Some(Value::Array(chunks)) = meta.get_mut("chunks") else { return false };
    let mut changed = false;
    for (chunk, length) in chunks.iter_mut().zip(shape) {
        if length == Some(0) && chunk.as_u64() == Some(0) {
            *chunk = Value::from(1);
            changed = true;
        }
    }
    changed
}

/// `|S<n>` → `|V<n>`, with the fill value zero-padded to `n` bytes.
fn fixed_bytes_as_raw(meta: &mut Map<String, Value>) -> bool {
    let Some(n) =
        meta.get("dtype").and_then(Value::as_str).and_then(|d| d.strip_prefix("|S")).and_then(|n| n.parse().ok())
    else {
        return false;
    };
    let mut fill = match meta.get("fill_value") {
        Some(Value::String(encoded)) => BASE64.decode(encoded).unwrap_or_default(),
        _ => Vec::new(),
    };
    fill.resize(n, 0);
    meta.insert("dtype".into(), Value::from(format!("|V{n}")));
    meta.insert("fill_value".into(), Value::from(BASE64.encode(fill)));
    true
}

/// `|V<n>` / `<U<n>` with a null fill value → zeros.
fn null_fill_for_raw_and_text(meta: &mut Map<String, Value>) -> bool {
    if !meta.get("fill_value").is_none_or(Value::is_null) {
        return false;
    }
    let Some(dtype) = meta.get("dtype").and_then(Value::as_str) else { return false };
    let fill = if let Some(n) = dtype.strip_prefix("|V").and_then(|n| n.parse::<usize>().ok()) {
        Value::from(BASE64.encode(vec![0u8; n]))
    } else if let Some(n) =
        dtype.strip_prefix(['<', '>', '|']).and_then(|d| d.strip_prefix('U')).and_then(|n| n.parse::<usize>().ok())
    {
        Value::from("\0".repeat(n))
    } else {
        return false;
    };
    meta.insert("fill_value".into(), fill);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewritten(raw: &str) -> Value {
        let out = rewrite("grp/x/.zarray", raw.as_bytes(), u64::MAX, listed_as_decodable).unwrap().expect("a rewrite");
        serde_json::from_slice(&out).unwrap()
    }

    #[test]
    fn untouched_metadata_is_served_as_is() {
        let raw =
            r#"{"dtype": "<f4", "compressor": null, "filters": [{"id": "zlib", "level": 4}], "fill_value": "NaN"}"#;
        assert_eq!(rewrite("x/.zarray", raw.as_bytes(), u64::MAX, listed_as_decodable).unwrap(), None);
        assert_eq!(rewrite(".zattrs", br#"{"a": 1}"#, u64::MAX, listed_as_decodable).unwrap(), None);
        assert!(!is_metadata_key("x/0") && is_metadata_key(".zgroup") && is_metadata_key("a/b/.zattrs"));
    }

    #[test]
    fn non_finite_tokens() {
        let out =
            rewrite(".zattrs", br#"{"_FillValue": NaN, "max": Infinity, "s": "NaN"}"#, u64::MAX, listed_as_decodable)
                .unwrap()
                .unwrap();
        assert_eq!(out, br#"{"_FillValue":"NaN","max":"Infinity","s":"NaN"}"#);
        assert_eq!(rewritten(r#"{"dtype": "<f8", "fill_value": -Infinity}"#)["fill_value"], "-Infinity");
    }

    #[test]
    fn blosc_filter_becomes_compressor() {
        let doc = rewritten(
            r#"{"compressor": null, "filters": [{"id": "shuffle", "elementsize": 4}, {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1}]}"#,
        );
        assert_eq!(doc["compressor"]["id"], "blosc");
        assert_eq!(doc["filters"].as_array().unwrap().len(), 1);
        let doc = rewritten(
            r#"{"compressor": null, "filters": [{"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1}]}"#,
        );
        assert!(doc["filters"].is_null());
        // blosc before another filter is not the last step: left alone.
        let raw = r#"{"compressor": null, "filters": [{"id": "blosc"}, {"id": "shuffle", "elementsize": 4}]}"#;
        assert_eq!(rewrite("x/.zarray", raw.as_bytes(), u64::MAX, listed_as_decodable).unwrap(), None);
    }

    #[test]
    fn deflate_level() {
        let doc = rewritten(r#"{"compressor": {"id": "gzip"}, "filters": [{"id": "zlib"}]}"#);
        assert_eq!(doc["filters"][0]["level"], 1);
        assert_eq!(doc["compressor"]["level"], 1);
    }

    #[test]
    fn single_byte_types() {
        assert_eq!(rewritten(r#"{"dtype": "<u1"}"#)["dtype"], "|u1");
        assert_eq!(rewritten(r#"{"dtype": ">b1"}"#)["dtype"], "|b1");
    }

    #[test]
    fn fixed_bytes() {
        let doc = rewritten(r#"{"dtype": "|S5", "fill_value": "IA=="}"#);
        assert_eq!(doc["dtype"], "|V5");
        assert_eq!(BASE64.decode(doc["fill_value"].as_str().unwrap()).unwrap(), b" \0\0\0\0");
        let doc = rewritten(r#"{"dtype": "|S3", "fill_value": null}"#);
        assert_eq!(doc["fill_value"], "AAAA");
    }

    #[test]
    fn null_fills() {
        assert_eq!(rewritten(r#"{"dtype": "|V2", "fill_value": null}"#)["fill_value"], "AAA=");
        assert_eq!(rewritten(r#"{"dtype": "<U3", "fill_value": null}"#)["fill_value"], "\0\0\0");
    }

    #[test]
    fn unsupported_forms_name_array_and_codec() {
        let err = rewrite(
            "grp/x/.zarray",
            br#"{"dtype": "<f4", "compressor": {"id": "lz4"}}"#,
            u64::MAX,
            listed_as_decodable,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("grp/x") && err.contains("lz4"), "{err}");
        // A reader's registry decides where there is one.
        let grib = br#"{"dtype": "<f8", "filters": [{"id": "grib", "var": "t"}]}"#;
        assert!(rewrite("t/.zarray", grib, u64::MAX, listed_as_decodable).is_ok());
        let err = rewrite("t/.zarray", grib, u64::MAX, |id| id != "grib").unwrap_err().to_string();
        assert!(err.contains("\"t\"") && err.contains("grib"), "{err}");
        let err =
            rewrite("t/.zarray", br#"{"dtype": "<M8[ns]"}"#, u64::MAX, listed_as_decodable).unwrap_err().to_string();
        assert!(err.contains("\"t\"") && err.contains("<M8[ns]"), "{err}");
    }

    /// Grids no reader can hold and chunks over the limit are refused before
    /// any fill value is padded; a chunk at the limit is served.
    #[test]
    fn oversized_arrays_are_refused_before_allocating() {
        let zarray = |shape: &str, chunks: &str, dtype: &str| {
            format!(
                r#"{{"shape": {shape}, "chunks": {chunks}, "dtype": "{dtype}", "fill_value": null, "zarr_format": 2}}"#
            )
        };
        let huge_fixed = zarray("[1]", "[1]", "|S1000000000000");
        let err = rewrite("a/.zarray", huge_fixed.as_bytes(), 1 << 30, listed_as_decodable).unwrap_err().to_string();
        assert!(err.contains("\"a\"") && err.contains("1000000000000 bytes"), "{err}");
        for dtype in ["|V1000000000000", "<U1000000000000"] {
            let doc = zarray("[1]", "[1]", dtype);
            assert!(matches!(
                rewrite("a/.zarray", doc.as_bytes(), 1 << 30, listed_as_decodable),
                Err(Unsupported::ChunkTooLarge { .. })
            ));
        }
        let overflow = zarray("[1099511627776, 1099511627776]", "[1, 1]", "<f4");
        let err = rewrite("g/.zarray", overflow.as_bytes(), u64::MAX, listed_as_decodable).unwrap_err();
        assert!(matches!(err, Unsupported::GridTooLarge { .. }), "{err}");
        // 1000 x 1000 elements of 8 bytes: the limit itself, and one byte less.
        let doc = zarray("[5000, 5000]", "[1000, 1000]", "<f8");
        assert!(rewrite("x/.zarray", doc.as_bytes(), 8_000_000, listed_as_decodable).is_ok());
        let err = rewrite("x/.zarray", doc.as_bytes(), 7_999_999, listed_as_decodable).unwrap_err();
        assert!(matches!(err, Unsupported::ChunkTooLarge { bytes: 8_000_000, .. }), "{err}");
    }

    /// Served as written, a document keeps kerchunk's spelling and its
    /// codecs, but the size limits still hold.
    #[test]
    fn check_size_refuses_only_what_no_reader_can_hold() {
        let delta = r#"{"shape": [4], "chunks": [2], "dtype": "|S5", "fill_value": NaN, "zarr_format": 2,
            "compressor": null, "filters": [{"id": "categorize", "dtype": "<i4"}], "order": "C"}"#;
        assert!(rewrite("d/.zarray", delta.as_bytes(), 1 << 30, listed_as_decodable).is_err());
        assert!(check_size("d/.zarray", delta.as_bytes(), 1 << 30).is_ok());
        let err = check_size("d/.zarray", delta.as_bytes(), 9).unwrap_err();
        assert!(matches!(&err, Unsupported::ChunkTooLarge { array, bytes: 10, .. } if array == "d"), "{err}");
        let huge = r#"{"shape": [1099511627776, 1099511627776], "chunks": [1, 1], "dtype": "<f4"}"#;
        assert!(matches!(check_size(".zarray", huge.as_bytes(), u64::MAX), Err(Unsupported::GridTooLarge { .. })));
        assert!(check_size("d/.zattrs", b"not json", 1).is_ok());
        assert!(check_size("d/.zarray", b"not json", 1).is_ok());
    }

    #[test]
    fn empty_dimensions_get_chunk_length_one() {
        let doc = rewritten(r#"{"shape": [0, 3], "chunks": [0, 3], "dtype": "<f4", "fill_value": 0}"#);
        assert_eq!(doc["chunks"], serde_json::json!([1, 3]));
        // A chunk length of 0 along a non-empty dimension stays, for zarrs to refuse.
        let raw = r#"{"shape": [2], "chunks": [0], "dtype": "<f4", "fill_value": 0}"#;
        assert_eq!(rewrite("x/.zarray", raw.as_bytes(), u64::MAX, listed_as_decodable).unwrap(), None);
    }
}

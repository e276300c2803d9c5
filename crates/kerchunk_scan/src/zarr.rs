//! The zarr v2 metadata a scan writes: `.zarray` with the keys in the order
//! zarr-python writes them (kerchunk's output), and attributes as JSON with
//! bare `NaN`/`Infinity` for non-finite numbers, as Python's JSON writes them
//! and every reader of kerchunk references accepts.

use std::fmt::Write as _;

use base64::Engine as _;

/// A `.zarray`'s `fill_value`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Fill {
    /// `null`: no fill value.
    Null,
    /// An integer.
    Integer(i128),
    /// A float (`"NaN"`, `"Infinity"` and `"-Infinity"` are strings in zarr v2).
    Float(f64),
    /// Bytes of a fixed-length string type: base64 in zarr v2.
    Bytes(Vec<u8>),
    /// A bool.
    Bool(bool),
    /// A complex number: `[re, im]`.
    Complex(f64, f64),
}

/// The `.zarray` of an uncompressed, unfiltered zarr v2 array.
pub(crate) fn zarray(shape: &[u64], chunks: &[u64], dtype: &str, fill: &Fill) -> String {
    zarray_with_filters(shape, chunks, dtype, fill, &[])
}

/// The `.zarray` of a zarr v2 array whose chunks pass through `filters`
/// (each a codec's JSON, in the order they were applied when writing) and no
/// compressor, as kerchunk writes HDF5 pipelines.
pub(crate) fn zarray_with_filters(
    shape: &[u64],
    chunks: &[u64],
    dtype: &str,
    fill: &Fill,
    filters: &[String],
) -> String {
    let filters = if filters.is_empty() { "null".to_owned() } else { format!("[{}]", filters.join(",")) };
    format!(
        r#"{{"shape":{},"chunks":{},"dtype":"{dtype}","fill_value":{},"order":"C","filters":{filters},"dimension_separator":".","compressor":null,"zarr_format":2}}"#,
        list(shape),
        list(chunks),
        fill_json(fill),
    )
}

fn fill_json(fill: &Fill) -> String {
    let float = |f: f64| {
        if f.is_nan() {
            "\"NaN\"".to_owned()
        } else if f.is_infinite() {
            (if f > 0.0 { "\"Infinity\"" } else { "\"-Infinity\"" }).to_owned()
        } else {
            format!("{f:?}")
        }
    };
    match fill {
        Fill::Null => "null".to_owned(),
        Fill::Integer(n) => n.to_string(),
        Fill::Float(f) => float(*f),
        Fill::Bytes(bytes) => format!("\"{}\"", base64::engine::general_purpose::STANDARD.encode(bytes)),
        Fill::Bool(b) => b.to_string(),
        Fill::Complex(re, im) => format!("[{},{}]", float(*re), float(*im)),
    }
}

fn list(values: &[u64]) -> String {
    let items: Vec<String> = values.iter().map(u64::to_string).collect();
    format!("[{}]", items.join(","))
}

/// An attribute value, as JSON.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum AttrValue {
    /// Text.
    Text(String),
    /// Integers: one is written as a number, more as a list.
    Integers(Vec<i128>),
    /// Floats, written in the shortest form that reads back to the same
    /// value of their type (`f32` ones as `f32`).
    Floats(Vec<FloatValue>),
    /// A list of text, always written as a list (`_ARRAY_DIMENSIONS`).
    Texts(Vec<String>),
    /// JSON written as it is (nested lists, bools).
    Json(String),
}

/// A float attribute value and the width it was stored at.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum FloatValue {
    F32(f32),
    F64(f64),
}

/// A `.zattrs` document: `attributes` in order.
pub(crate) fn zattrs(attributes: &[(String, AttrValue)]) -> String {
    let mut out = String::from("{");
    for (i, (name, value)) in attributes.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&string(name));
        out.push(':');
        match value {
            AttrValue::Text(text) => out.push_str(&string(text)),
            AttrValue::Texts(texts) => {
                let items: Vec<String> = texts.iter().map(|t| string(t)).collect();
                out.push('[');
                out.push_str(&items.join(","));
                out.push(']');
            }
            AttrValue::Json(json) => out.push_str(json),
            AttrValue::Integers(values) => one_or_list(&mut out, values, |out, n| {
                let _ = write!(out, "{n}");
            }),
            AttrValue::Floats(values) => one_or_list(&mut out, values, |out, f| float(out, *f)),
        }
    }
    out.push('}');
    out
}

/// One value as itself, more as a list.
fn one_or_list<T>(out: &mut String, values: &[T], mut item: impl FnMut(&mut String, &T)) {
    if let [only] = values {
        item(out, only);
        return;
    }
    out.push('[');
    for (i, value) in values.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        item(out, value);
    }
    out.push(']');
}

pub(crate) fn float(out: &mut String, value: FloatValue) {
    let (finite, text) = match value {
        // The value itself, as a double: what kerchunk writes (numpy's `float(np.float32(x))`) and
        // what a JSON reader reads back. The shortest text of the `f32` (`0.1`) reads back as
        // another number (0.1, not 0.10000000149011612).
        FloatValue::F32(f) => (f.is_finite(), format!("{:?}", f64::from(f))),
        FloatValue::F64(f) => (f.is_finite(), format!("{f:?}")),
    };
    if finite {
        out.push_str(&text);
    } else if text == "NaN" {
        out.push_str("NaN");
    } else if text.starts_with('-') {
        out.push_str("-Infinity");
    } else {
        out.push_str("Infinity");
    }
}

/// A JSON string.
pub(crate) fn string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Metadata and small arrays as JSON values (the GRIB and TIFF scanners,
/// whose attributes come as `serde_json` maps).
pub(crate) mod json {
    use kerchunk::ReferenceSetBuilder;
    use serde_json::{Map, Value, json};

    /// A `.zattrs` of `attributes` and the array's dimension names.
    pub(crate) fn attributes_json(mut attributes: Map<String, Value>, dimensions: &[&str]) -> Vec<u8> {
        attributes.insert("_ARRAY_DIMENSIONS".into(), json!(dimensions));
        serde_json::to_vec(&Value::Object(attributes)).unwrap_or_default()
    }

    /// A `.zarray` whose chunks pass through `filters` (a list, or null) and
    /// `compressor` (null for none).
    pub(crate) fn zarray(
        shape: &[u64],
        chunks: &[u64],
        dtype: &str,
        fill: &Value,
        (compressor, filters): (&Value, &Value),
    ) -> Vec<u8> {
        serde_json::to_vec(&json!({
            "shape": shape, "chunks": chunks, "dtype": dtype, "fill_value": fill, "order": "C",
            "filters": filters, "dimension_separator": ".", "compressor": compressor, "zarr_format": 2,
        }))
        .unwrap_or_default()
    }

    /// The key of the chunk at `indices` of the array at `path` (`path/0` for a 0-d array).
    pub(crate) fn chunk_key(path: &str, indices: &[u64]) -> String {
        if indices.is_empty() {
            return format!("{path}/0");
        }
        let indices: Vec<String> = indices.iter().map(u64::to_string).collect();
        format!("{path}/{}", indices.join("."))
    }

    /// An inline array of little-endian values.
    pub(crate) fn inline_array(
        builder: &mut ReferenceSetBuilder,
        path: &str,
        (dtype, shape, bytes): (&str, &[u64], &[u8]),
        attributes: Map<String, Value>,
        dimensions: &[&str],
    ) {
        builder.insert_inline(
            &format!("{path}/.zarray"),
            &zarray(shape, shape, dtype, &Value::Null, (&Value::Null, &Value::Null)),
        );
        builder.insert_inline(&format!("{path}/.zattrs"), &attributes_json(attributes, dimensions));
        builder.insert_inline(&chunk_key(path, &vec![0; shape.len()]), bytes);
    }

    /// `values` as little-endian bytes.
    pub(crate) fn f64_bytes(values: impl IntoIterator<Item = f64>) -> Vec<u8> {
        values.into_iter().flat_map(f64::to_le_bytes).collect()
    }

    /// `values` as little-endian bytes.
    pub(crate) fn i64_bytes(values: impl IntoIterator<Item = i64>) -> Vec<u8> {
        values.into_iter().flat_map(i64::to_le_bytes).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zarray_in_zarr_pythons_key_order() {
        assert_eq!(
            zarray(&[4, 6], &[1, 6], ">f4", &Fill::Float(-1.0)),
            r#"{"shape":[4,6],"chunks":[1,6],"dtype":">f4","fill_value":-1.0,"order":"C","filters":null,"dimension_separator":".","compressor":null,"zarr_format":2}"#
        );
        assert!(
            zarray(&[], &[], ">f8", &Fill::Float(f64::NAN))
                .contains(r#""shape":[],"chunks":[],"dtype":">f8","fill_value":"NaN""#)
        );
        assert!(zarray(&[1], &[1], "|S1", &Fill::Bytes(b"x".to_vec())).contains(r#""fill_value":"eA==""#));
        assert!(zarray(&[1], &[1], ">i4", &Fill::Null).contains(r#""fill_value":null"#));
    }

    #[test]
    fn attributes_keep_their_order_and_types() {
        let attributes = vec![
            ("title".to_owned(), AttrValue::Text("a \"test\"\n".into())),
            ("one".to_owned(), AttrValue::Integers(vec![7])),
            ("range".to_owned(), AttrValue::Floats(vec![FloatValue::F32(0.1), FloatValue::F64(f64::NAN)])),
            ("inf".to_owned(), AttrValue::Floats(vec![FloatValue::F64(f64::NEG_INFINITY)])),
        ];
        // 0.10000000149011612: Python's json.dumps(float(numpy.float32(0.1))), as kerchunk writes it.
        assert_eq!(
            zattrs(&attributes),
            r#"{"title":"a \"test\"\n","one":7,"range":[0.10000000149011612,NaN],"inf":-Infinity}"#
        );
    }
}

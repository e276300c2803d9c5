//! Arrays as the commands read them: metadata through the store (as zarrs
//! sees it, rewrites included), values decoded by zarrs.

use std::ops::Range;
use std::sync::Arc;

use serde_json::Value;
use zarrs::array::{Array, ArrayBytes};
use zarrs_kerchunk::ReferenceStore;
use zarrs_storage::{ReadableStorageTraits, StoreKey};

use crate::outcome::Result;

/// A JSON document of the store, if the key has one.
pub(crate) fn read_json(store: &ReferenceStore, key: &str) -> Result<Option<Value>> {
    let Some(bytes) = store.get(&StoreKey::new(key)?)? else { return Ok(None) };
    Ok(Some(serde_json::from_slice(&bytes).map_err(|e| format!("{key} is not JSON: {e}"))?))
}

/// The key of the metadata document `document` (`.zarray`, `.zattrs`) of the
/// node at `path`: at the root (a single-level TIFF's array) it has no prefix.
pub(crate) fn metadata_key(path: &str, document: &str) -> String {
    match path.trim_matches('/') {
        "" => document.to_owned(),
        name => format!("{name}/{document}"),
    }
}

/// An array, by its path, with the `.zarray` the store serves for it.
pub(crate) struct NamedArray {
    /// The path, with a leading `/`.
    pub(crate) path: String,
    pub(crate) zarray: Value,
    array: Array<ReferenceStore>,
}

impl NamedArray {
    /// The array at `path` (with or without a leading `/`), of Zarr v2 or v3.
    pub(crate) fn open(store: &ReferenceStore, path: &str) -> Result<Self> {
        let name = path.trim_start_matches('/');
        let zarray = match read_json(store, &metadata_key(name, ".zarray"))? {
            Some(zarray) => zarray,
            None => read_json(store, &metadata_key(name, "zarr.json"))?
                .filter(|node| node["node_type"] == "array")
                .map(|node| v2_summary(&node))
                .ok_or_else(|| format!("no array at /{name}"))?,
        };
        Self::with_metadata(store, name, zarray)
    }

    /// The array at `path`, whose `.zarray` the caller has read.
    pub(crate) fn with_metadata(store: &ReferenceStore, path: &str, zarray: Value) -> Result<Self> {
        let path = format!("/{}", path.trim_start_matches('/'));
        let array = Array::open(Arc::new(store.clone()), &path)?;
        Ok(Self { path, zarray, array })
    }

    pub(crate) fn shape(&self) -> &[u64] {
        self.array.shape()
    }

    /// The `NumPy` type string of the `.zarray`, if it is one.
    pub(crate) fn descr(&self) -> Option<&str> {
        self.zarray["dtype"].as_str()
    }

    /// The elements of `ranges` (one per dimension), decoded in native byte
    /// order, and how to read them; `None` for elements of variable length.
    pub(crate) fn read(&self, ranges: &[Range<u64>]) -> Result<Option<(Element, Vec<u8>)>> {
        let bytes = self.array.retrieve_array_subset::<ArrayBytes>(&ranges)?;
        let Ok(bytes) = bytes.into_fixed() else { return Ok(None) };
        let count: u64 = ranges.iter().map(|r| r.end - r.start).product();
        let size = if count == 0 { 1 } else { bytes.len() / usize::try_from(count)? };
        Ok(Some((element_of(self.descr().unwrap_or("?"), size), bytes.into_owned())))
    }
}

impl NamedArray {
    /// The elements of the block `ranges` of a text array (`|O` with `vlen-utf8`, which zarrs
    /// reads as strings), in C order; `None` for any other data type.
    pub(crate) fn read_texts(&self, ranges: &[Range<u64>]) -> Result<Option<Vec<String>>> {
        use zarrs::plugin::{ExtensionName, ZarrVersion};
        if self.array.data_type().name(ZarrVersion::V3).as_deref() != Some("string") {
            return Ok(None);
        }
        Ok(Some(self.array.retrieve_array_subset::<Vec<String>>(&ranges)?))
    }
}

/// A Zarr v3 array's `zarr.json` summed up as the fields of a `.zarray` the commands read: the
/// `NumPy` type of its data type (native order, as zarrs decodes), its shape, its chunks (a
/// rectilinear grid's edges as written), its codecs (as `filters`, in order), and the fill value
/// xarray masks with (its `_FillValue` attribute, else none).
pub(crate) fn v2_summary(node: &Value) -> Value {
    let dtype = match node["data_type"].as_str() {
        Some("bool") => "|b1",
        Some("int8") => "|i1",
        Some("uint8") => "|u1",
        Some("int16") => "<i2",
        Some("uint16") => "<u2",
        Some("int32") => "<i4",
        Some("uint32") => "<u4",
        Some("int64") => "<i8",
        Some("uint64") => "<u8",
        Some("float16") => "<f2",
        Some("float32") => "<f4",
        Some("float64") => "<f8",
        _ => "?",
    };
    let grid = &node["chunk_grid"]["configuration"];
    let chunks = grid.get("chunk_shape").or_else(|| grid.get("chunk_shapes")).cloned().unwrap_or(Value::Null);
    let codecs = node["codecs"].as_array().map(|codecs| {
        let named = codecs.iter().map(|codec| {
            let mut entry = codec["configuration"].as_object().cloned().unwrap_or_default();
            entry.insert("id".into(), codec["name"].clone());
            Value::Object(entry)
        });
        Value::Array(named.collect())
    });
    let fill = node["attributes"]
        .get("_FillValue")
        .and_then(|attribute| kerchunk_v3::fill_value_of_attribute(attribute, &node["data_type"]))
        .unwrap_or(Value::Null);
    serde_json::json!({
        "zarr_format": 3,
        "shape": node["shape"],
        "chunks": chunks,
        "dtype": dtype,
        "filters": codecs.unwrap_or(Value::Null),
        "compressor": Value::Null,
        "fill_value": fill,
    })
}

/// How to read one element of the decoded bytes (native byte order, as zarrs decodes them).
#[derive(Clone, Copy)]
pub(crate) enum Element {
    Bool,
    Int(usize),
    Uint(usize),
    Float(usize),
    /// Anything else: only written to `.npy`, as it is.
    Other(usize),
}

/// How to read elements of the `NumPy` type `descr`, `size` bytes each as decoded.
fn element_of(descr: &str, size: usize) -> Element {
    let declared = descr.get(2..).and_then(|n| n.parse::<usize>().ok());
    match (descr.get(1..2), declared) {
        (Some("b"), Some(1)) if size == 1 => Element::Bool,
        (Some("i"), Some(n @ (1 | 2 | 4 | 8))) if n == size => Element::Int(size),
        (Some("u"), Some(n @ (1 | 2 | 4 | 8))) if n == size => Element::Uint(size),
        (Some("f"), Some(n @ (4 | 8))) if n == size => Element::Float(size),
        _ => Element::Other(size.max(1)),
    }
}

impl Element {
    /// The bytes of one element.
    pub(crate) fn size(self) -> usize {
        match self {
            Self::Bool => 1,
            Self::Int(n) | Self::Uint(n) | Self::Float(n) | Self::Other(n) => n,
        }
    }
}

/// One element's bytes as the array `from_ne_bytes` takes. Callers pass
/// chunks of [`Element::size`] bytes, and [`element_of`] names a width only
/// when it is that size, so the lengths always agree.
pub(crate) fn fixed<const N: usize>(bytes: &[u8]) -> [u8; N] {
    bytes.try_into().expect("one element's bytes")
}

/// One numeric element as a float (`NaN` for anything that is not a number).
#[expect(clippy::cast_precision_loss, reason = "values are drawn as colours")]
pub(crate) fn value_of(element: Element, bytes: &[u8]) -> f64 {
    match element {
        Element::Bool | Element::Uint(1) => f64::from(bytes[0]),
        Element::Int(1) => f64::from(i8::from_ne_bytes(fixed(bytes))),
        Element::Int(2) => f64::from(i16::from_ne_bytes(fixed(bytes))),
        Element::Int(4) => f64::from(i32::from_ne_bytes(fixed(bytes))),
        Element::Int(_) => i64::from_ne_bytes(fixed(bytes)) as f64,
        Element::Uint(2) => f64::from(u16::from_ne_bytes(fixed(bytes))),
        Element::Uint(4) => f64::from(u32::from_ne_bytes(fixed(bytes))),
        Element::Uint(_) => u64::from_ne_bytes(fixed(bytes)) as f64,
        Element::Float(4) => f64::from(f32::from_ne_bytes(fixed(bytes))),
        Element::Float(_) => f64::from_ne_bytes(fixed(bytes)),
        Element::Other(_) => f64::NAN,
    }
}

//! A reference set handed to Python as kerchunk's `refs` dict, the value a kerchunk JSON document
//! holds for each key (what `json.load` of the written document gives, without writing it): inline
//! bytes as text or `base64:` text, ranges as `[url, offset, length]`, whole files as `[url]`.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use futures::{FutureExt as _, StreamExt as _};
use kerchunk::{OwnedReference, ReferenceSetBuilder, ReferenceSource, Walk};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use zarrs_kerchunk::ReferenceStoreBuilder;
use zarrs_storage::{ReadableStorageTraits as _, StoreKey};

use crate::errors::{Error, Kind, open_error, read_error};

/// Which range references are read and held inline, as kerchunk's `MultiZarrToZarr` holds
/// them below its `inline_threshold`: those shorter than `below` bytes, but for the chunks of
/// coordinates (arrays some array's `_ARRAY_DIMENSIONS` names) and of the arrays `kept` names.
pub(crate) struct Inlining<'a> {
    pub(crate) below: u64,
    pub(crate) kept: &'a [String],
    /// Makes the store the references are read through.
    pub(crate) builder: &'a ReferenceStoreBuilder,
    /// Where the references would be written: their relative URLs resolve against it.
    pub(crate) base: &'a str,
}

/// Every reference of `source` in kerchunk's `refs` dict, in the order the writers write
/// them (metadata first), the small chunks `inlining` names read and held inline (with the GIL
/// released). Each URL becomes one Python string, shared by every reference to it.
///
/// # Errors
/// The source's error; a malformed reference (which no document can hold), naming its key; a
/// failed read of a chunk to inline, naming the key, the URL and the cause.
pub(crate) fn refs_dict<'py>(
    py: Python<'py>,
    source: &dyn ReferenceSource,
    inlining: &Inlining<'_>,
) -> PyResult<Bound<'py, PyDict>> {
    let refs = PyDict::new(py);
    let mut urls = HashMap::new();
    let mut coordinates: HashSet<String> = inlining.kept.iter().cloned().collect();
    let mut small = Vec::new();
    let mut walk = source.walk(Walk::All);
    // Walking a combined or in-memory set reads nothing: each step is ready when asked.
    while let Some(entry) = walk.next().now_or_never().unwrap_or_else(|| futures::executor::block_on(walk.next())) {
        let (key, reference) = entry.map_err(|e| Error::new(Kind::Read, kerchunk::error_chain(&e)))?;
        let value = match &reference {
            OwnedReference::Inline(bytes) => {
                if key.ends_with("/.zattrs") {
                    coordinates.extend(dimension_names(bytes));
                }
                PyString::new(py, &kerchunk::inline_json_string(bytes)).into_any()
            }
            OwnedReference::Whole { url } => PyList::new(py, [url_object(py, &mut urls, url.as_ref())])?.into_any(),
            OwnedReference::Range { url, offset, length } => {
                if *length < inlining.below && !coordinates.contains(array_of(&key)) {
                    // In its place now, its bytes once read.
                    refs.set_item(&key, py.None())?;
                    small.push((key, reference));
                    continue;
                }
                let url = url_object(py, &mut urls, url.as_ref());
                PyList::new(py, [url, offset.into_pyobject(py)?.into_any(), length.into_pyobject(py)?.into_any()])?
                    .into_any()
            }
            OwnedReference::Malformed { reason } => {
                let message = format!("key {key:?} has a malformed reference, which cannot be written: {reason}");
                return Err(Error::new(Kind::Invalid, message).into());
            }
        };
        refs.set_item(key, value)?;
    }
    if !small.is_empty() {
        for (key, bytes) in py.detach(|| read_inline(&small, inlining))? {
            refs.set_item(key, PyString::new(py, &kerchunk::inline_json_string(&bytes)))?;
        }
    }
    Ok(refs)
}

/// The names an array's `.zattrs` gives its dimensions.
fn dimension_names(zattrs: &[u8]) -> Vec<String> {
    let Ok(attributes) = serde_json::from_slice::<serde_json::Value>(zattrs) else { return Vec::new() };
    let dimensions = attributes.get("_ARRAY_DIMENSIONS").and_then(serde_json::Value::as_array);
    dimensions.into_iter().flatten().filter_map(|name| name.as_str().map(str::to_owned)).collect()
}

/// The array a key is of: the path before its last `/` (`""` at the root).
fn array_of(key: &str) -> &str {
    key.rsplit_once('/').map_or("", |(array, _)| array)
}

/// The bytes of the range references `small`, read through a store over them alone.
fn read_inline<'k>(
    small: &'k [(String, OwnedReference)],
    inlining: &Inlining<'_>,
) -> Result<Vec<(&'k str, zarrs_storage::Bytes)>, Error> {
    let mut references = ReferenceSetBuilder::new();
    for (key, reference) in small {
        references.insert_reference(key, reference.as_reference());
    }
    let store = inlining.builder.build(references.build(), inlining.base).map_err(|e| open_error(inlining.base, &e))?;
    let keys = small
        .iter()
        .map(|(key, _)| StoreKey::new(key).map_err(|e| Error::new(Kind::Invalid, format!("key {key:?}: {e}"))))
        .collect::<Result<Vec<_>, _>>()?;
    store.prefetch(keys.iter().cloned()).map_err(|e| read_error(&e))?;
    small
        .iter()
        .zip(&keys)
        .map(|((key, _), store_key)| {
            let bytes = store.get(store_key).map_err(|e| read_error(&e))?;
            let bytes = bytes.ok_or_else(|| Error::new(Kind::Read, format!("{key}: its reference gave no bytes")))?;
            Ok((key.as_str(), bytes))
        })
        .collect()
}

/// `url` as a Python string (`None` for a null URL), made once per URL.
fn url_object<'py>(
    py: Python<'py>,
    urls: &mut HashMap<Arc<str>, Bound<'py, PyString>>,
    url: Option<&Arc<str>>,
) -> Bound<'py, PyAny> {
    match url {
        None => py.None().into_bound(py),
        Some(url) => urls.entry(Arc::clone(url)).or_insert_with(|| PyString::new(py, url)).clone().into_any(),
    }
}

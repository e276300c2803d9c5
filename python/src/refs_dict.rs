//! A reference set handed to Python as kerchunk's `refs` dict, the value a kerchunk JSON document
//! holds for each key (what `json.load` of the written document gives, without writing it): inline
//! bytes as text or `base64:` text, ranges as `[url, offset, length]`, whole files as `[url]`.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::mpsc::SyncSender;

use futures::{FutureExt as _, StreamExt as _};
use kerchunk::{OwnedReference, ReferenceSetBuilder, ReferenceSource, SourceError, Walk};
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

/// How many references the walk hands over at a time.
const BATCH: usize = 4096;

/// Every reference of `source` in kerchunk's `refs` dict, in the order the writers write
/// them (metadata first), the small chunks `inlining` names read and held inline (with the GIL
/// released). Each URL becomes one Python string, shared by every reference to it.
///
/// The source is walked on a thread of its own, a batch of references ahead of this one, which
/// holds the GIL to make their Python objects: the two took about as long as each other, one
/// after the other.
///
/// # Errors
/// The source's error; a malformed reference (which no document can hold), naming its key; a
/// failed read of a chunk to inline, naming the key, the URL and the cause.
pub(crate) fn refs_dict<'py>(
    py: Python<'py>,
    source: &dyn ReferenceSource,
    inlining: &Inlining<'_>,
) -> PyResult<Bound<'py, PyDict>> {
    let mut dict = RefsDict::new(py, inlining);
    std::thread::scope(|scope| {
        let (send, batches) = std::sync::mpsc::sync_channel(2);
        scope.spawn(move || walk_in_batches(source, &send));
        // Returning early drops `batches`, which stops the walk at its next batch.
        for batch in batches {
            for (key, reference) in batch.map_err(|e| Error::new(Kind::Read, kerchunk::error_chain(&e)))?.entries() {
                dict.insert(key, reference)?;
            }
        }
        PyResult::Ok(())
    })?;
    dict.finish()
}

/// Every reference of `source`, as its walk gives them, sent in batches of [`BATCH`] until the
/// walk ends, fails (its error sent last) or nobody receives.
fn walk_in_batches(source: &dyn ReferenceSource, send: &SyncSender<Result<Batch, SourceError>>) {
    let mut walk = source.walk(Walk::All);
    let mut batch = Batch::default();
    // Walking a combined or in-memory set reads nothing: each step is ready when asked.
    while let Some(entry) = walk.next().now_or_never().unwrap_or_else(|| futures::executor::block_on(walk.next())) {
        match entry {
            Ok((key, reference)) => batch.push(&key, reference),
            Err(error) => {
                // The references before it first, as a walk on this thread would have.
                let _ = send.send(Ok(std::mem::take(&mut batch)));
                let _ = send.send(Err(error));
                return;
            }
        }
        if batch.references.len() == BATCH && send.send(Ok(std::mem::take(&mut batch))).is_err() {
            return;
        }
    }
    let _ = send.send(Ok(batch));
}

/// References as the walk hands them over, their keys in one text: the thread that makes
/// their Python objects frees one allocation a batch, not one a key made by the walk's thread
/// (a free from another thread's memory, which took a fifth of that thread's time).
#[derive(Default)]
struct Batch {
    keys: String,
    /// Where each key ends in `keys`.
    ends: Vec<usize>,
    references: Vec<OwnedReference>,
}

impl Batch {
    fn push(&mut self, key: &str, reference: OwnedReference) {
        self.keys.push_str(key);
        self.ends.push(self.keys.len());
        self.references.push(reference);
    }

    /// Each key with its reference, in the order pushed.
    fn entries(&self) -> impl Iterator<Item = (&str, &OwnedReference)> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        let keys = starts.zip(&self.ends).map(|(start, &end)| &self.keys[start..end]);
        keys.zip(&self.references)
    }
}

/// The `refs` dict as it is filled, a reference at a time, in the walk's order.
struct RefsDict<'py, 'a> {
    py: Python<'py>,
    refs: Bound<'py, PyDict>,
    inlining: &'a Inlining<'a>,
    urls: Urls<'py>,
    /// The arrays whose chunks are not inlined: coordinates, as each `.zattrs` met names them
    /// (metadata comes first), and those `inlining` keeps.
    coordinates: HashSet<String>,
    /// The range references to read and inline, each in its place in the dict already.
    small: Vec<(String, OwnedReference)>,
}

impl<'py, 'a> RefsDict<'py, 'a> {
    fn new(py: Python<'py>, inlining: &'a Inlining<'a>) -> Self {
        let coordinates = inlining.kept.iter().cloned().collect();
        Self { py, refs: PyDict::new(py), inlining, urls: Urls::default(), coordinates, small: Vec::new() }
    }

    /// `reference` added under `key`: its value now, or `None` for a small chunk read later.
    fn insert(&mut self, key: &str, reference: &OwnedReference) -> PyResult<()> {
        let py = self.py;
        let value = match reference {
            OwnedReference::Inline(bytes) => {
                if key.ends_with("/.zattrs") {
                    self.coordinates.extend(dimension_names(bytes));
                }
                PyString::new(py, &kerchunk::inline_json_string(bytes)).into_any()
            }
            OwnedReference::Whole { url } => PyList::new(py, [self.urls.object(py, url.as_ref())])?.into_any(),
            OwnedReference::Range { url, offset, length } => {
                if *length < self.inlining.below && !self.coordinates.contains(array_of(key)) {
                    // In its place now, its bytes once read.
                    self.refs.set_item(key, py.None())?;
                    self.small.push((key.to_owned(), reference.clone()));
                    return Ok(());
                }
                let url = self.urls.object(py, url.as_ref());
                PyList::new(py, [url, offset.into_pyobject(py)?.into_any(), length.into_pyobject(py)?.into_any()])?
                    .into_any()
            }
            OwnedReference::Malformed { reason } => {
                let message = format!("key {key:?} has a malformed reference, which cannot be written: {reason}");
                return Err(Error::new(Kind::Invalid, message).into());
            }
        };
        self.refs.set_item(key, value)
    }

    /// The dict, its small chunks read (with the GIL released) and inlined.
    fn finish(self) -> PyResult<Bound<'py, PyDict>> {
        if !self.small.is_empty() {
            for (key, bytes) in self.py.detach(|| read_inline(&self.small, self.inlining))? {
                self.refs.set_item(key, PyString::new(self.py, &kerchunk::inline_json_string(&bytes)))?;
            }
        }
        Ok(self.refs)
    }
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

/// The Python string of each URL, made once per URL.
#[derive(Default)]
struct Urls<'py> {
    /// By the address of the text a reference shares with the others of its set, which is
    /// kept alive here so that no other text takes its address: found without hashing the text.
    by_address: HashMap<usize, (Arc<str>, Bound<'py, PyString>)>,
    /// By the text, for the same URL shared by several sets.
    by_text: HashMap<Arc<str>, Bound<'py, PyString>>,
}

impl<'py> Urls<'py> {
    /// `url` as a Python string (`None` for a null URL).
    fn object(&mut self, py: Python<'py>, url: Option<&Arc<str>>) -> Bound<'py, PyAny> {
        let Some(url) = url else { return py.None().into_bound(py) };
        let address = Arc::as_ptr(url).cast::<u8>() as usize;
        if let Some((_, object)) = self.by_address.get(&address) {
            return object.clone().into_any();
        }
        let object = self.by_text.entry(Arc::clone(url)).or_insert_with(|| PyString::new(py, url)).clone();
        self.by_address.insert(address, (Arc::clone(url), object.clone()));
        object.into_any()
    }
}

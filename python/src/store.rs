//! `StoreHandle`: one opened reference set, as the Python `ReferenceStore`
//! holds it. Async methods return awaitables that run on the shared tokio
//! runtime without the GIL; `*_sync` methods block with the GIL released.

use std::sync::Arc;

use bytes::Bytes;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use pyo3_bytes::PyBytes;
use zarrs_kerchunk::kerchunk::{Lookup, SourceError, error_chain};
use zarrs_kerchunk::{AsyncReferenceStore, MetadataView, ReferenceStore};
use zarrs_kerchunk_tools::icechunk::{IcechunkLocation, open_icechunk};
use zarrs_storage::byte_range::ByteRange;
use zarrs_storage::{
    AsyncListableStorageTraits, AsyncReadableStorageTraits, ListableStorageTraits, ReadableStorageTraits, StoreKey,
    StorePrefix,
};

use crate::errors::{Error, Kind, icechunk_error, open_error, read_error};
use crate::options::StoreOptions;
use crate::runtime;

/// An opened reference set: stores over one core. zarr-python reads the
/// metadata documents as written (`sync`, `store`); the zarrs arrays of the
/// engine and the tools read them as zarrs needs them (`zarrs`).
#[pyclass(module = "zarrs_kerchunk._rs", frozen, weakref)]
pub(crate) struct StoreHandle {
    zarrs: Arc<ReferenceStore>,
    sync: Arc<ReferenceStore>,
    store: Arc<AsyncReferenceStore>,
    location: String,
}

/// A byte request of zarr's, relative to the value of a key (for a
/// reference, its window of the target): `("range", start, end)`,
/// `("offset", start, 0)` or `("suffix", length, 0)`.
type Request = (String, u64, u64);

#[pymethods]
impl StoreHandle {
    /// Open the references at `location` with `options`, with the GIL released.
    #[staticmethod]
    #[pyo3(signature = (location, options=None))]
    fn open(py: Python<'_>, location: String, options: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        runtime::check_process()?;
        let options = StoreOptions::extract(options)?;
        let builder = options.builder(runtime::handle())?;
        // An icechunk repository (`icechunk://PATH[@REF]`) is read back as references.
        let repository = IcechunkLocation::parse(&location).map(|l| l.with_options(options.repository_options()));
        let zarrs = py.detach(|| match &repository {
            Some(repository) => open_icechunk(&builder, repository).map_err(|e| icechunk_error(&e)),
            None => builder.open(&location).map_err(|e| open_error(&location, &e)),
        })?;
        let sync = zarrs.with_metadata_view(MetadataView::AsWritten);
        let store = sync.to_async();
        Ok(Self { zarrs: Arc::new(zarrs), sync: Arc::new(sync), store: Arc::new(store), location })
    }

    /// Where the references were opened from, as given.
    #[getter]
    pub(crate) fn location(&self) -> &str {
        &self.location
    }

    /// The value of `key`, or the bytes `request` asks of it; `None` if the set has no such key.
    #[pyo3(signature = (key, request=None))]
    fn get<'py>(&self, py: Python<'py>, key: &str, request: Option<Request>) -> PyResult<Bound<'py, PyAny>> {
        runtime::check_process()?;
        let (store, key) = (Arc::clone(&self.store), store_key(key)?);
        let request = parse_request(request)?;
        pyo3_async_runtimes::tokio::future_into_py(py, async move {
            Ok(get_async(&store, &key, request).await?.map(PyBytes::new))
        })
    }

    /// [`get`](Self::get), blocking: for zarr's sync protocol and for threads.
    #[pyo3(signature = (key, request=None))]
    fn get_sync(&self, py: Python<'_>, key: &str, request: Option<Request>) -> PyResult<Option<PyBytes>> {
        runtime::check_process()?;
        let (store, key) = (Arc::clone(&self.sync), store_key(key)?);
        let request = parse_request(request)?;
        Ok(py.detach(|| get_sync(&store, &key, request))?.map(PyBytes::new))
    }

    /// The values of many keys (or parts of them), in order, read concurrently.
    fn get_many<'py>(&self, py: Python<'py>, requests: Vec<(String, Option<Request>)>) -> PyResult<Bound<'py, PyAny>> {
        runtime::check_process()?;
        let store = Arc::clone(&self.store);
        let requests = requests
            .into_iter()
            .map(|(key, request)| Ok((store_key(&key)?, parse_request(request)?)))
            .collect::<PyResult<Vec<_>>>()?;
        pyo3_async_runtimes::tokio::future_into_py(py, async move {
            let reads = requests.iter().map(|(key, request)| get_async(&store, key, *request));
            let values = futures::future::try_join_all(reads).await?;
            Ok(values.into_iter().map(|value| value.map(PyBytes::new)).collect::<Vec<_>>())
        })
    }

    /// Whether the set has `key` (a key, never a bare prefix), from the references alone:
    /// no target is asked, not even for a whole-file reference's size.
    fn exists<'py>(&self, py: Python<'py>, key: String) -> PyResult<Bound<'py, PyAny>> {
        runtime::check_process()?;
        let store = Arc::clone(&self.store);
        pyo3_async_runtimes::tokio::future_into_py(py, async move {
            let failed =
                |e: &SourceError| Error::new(Kind::Read, format!("cannot look up key {key:?}: {}", error_chain(e)));
            // A malformed reference is a key too: its reads fail, but it exists.
            let found = match store.source().lookup(&key).map_err(|e| failed(&e))? {
                Lookup::Ready(reference) => reference.is_some(),
                Lookup::Pending(pending) => pending.await.map_err(|e| failed(&e))?.is_some(),
            };
            Ok(found)
        })
    }

    /// The size of `key`'s value in bytes; `None` if the set has no such key.
    fn size<'py>(&self, py: Python<'py>, key: &str) -> PyResult<Bound<'py, PyAny>> {
        runtime::check_process()?;
        let (store, key) = (Arc::clone(&self.store), store_key(key)?);
        pyo3_async_runtimes::tokio::future_into_py(py, async move {
            Ok(store.size_key(&key).await.map_err(|e| read_error(&e))?)
        })
    }

    /// Every key under `prefix` (`""`: every key), whole keys from the root.
    fn list_prefix<'py>(&self, py: Python<'py>, prefix: &str) -> PyResult<Bound<'py, PyAny>> {
        runtime::check_process()?;
        let (store, prefix) = (Arc::clone(&self.store), store_prefix(prefix)?);
        pyo3_async_runtimes::tokio::future_into_py(py, async move {
            let keys = store.list_prefix(&prefix).await.map_err(|e| read_error(&e))?;
            Ok(keys.into_iter().map(|key| key.as_str().to_owned()).collect::<Vec<_>>())
        })
    }

    /// The names of the keys and folders directly under `prefix` (`""`: the root).
    fn list_dir<'py>(&self, py: Python<'py>, prefix: &str) -> PyResult<Bound<'py, PyAny>> {
        runtime::check_process()?;
        let (store, prefix) = (Arc::clone(&self.store), store_prefix(prefix)?);
        pyo3_async_runtimes::tokio::future_into_py(py, async move {
            let listing = store.list_dir(&prefix).await.map_err(|e| read_error(&e))?;
            let name = |path: &str| path.strip_prefix(prefix.as_str()).unwrap_or(path).trim_end_matches('/').to_owned();
            let keys = listing.keys().iter().map(|key| name(key.as_str()));
            let folders = listing.prefixes().iter().map(|folder| name(folder.as_str()));
            Ok(keys.chain(folders).collect::<Vec<_>>())
        })
    }

    /// Every key of the set, listed without the GIL (for tools and tests).
    fn keys_sync(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        runtime::check_process()?;
        let store = Arc::clone(&self.sync);
        let keys = py.detach(|| store.list()).map_err(|e| read_error(&e))?;
        Ok(keys.into_iter().map(|key| key.as_str().to_owned()).collect())
    }
}

impl StoreHandle {
    /// The sync store with metadata as zarrs reads it, for zarrs arrays and the tools.
    pub(crate) fn zarrs_store(&self) -> &Arc<ReferenceStore> {
        &self.zarrs
    }
}

/// A request, parsed: where it starts, and how it ends.
#[derive(Clone, Copy, Debug)]
enum Wanted {
    /// `[start, end)`, with `end` clamped to the value's end.
    Range(u64, u64),
    /// From `start` to the end.
    From(u64),
    /// The last `length` bytes (all of them if the value is shorter).
    Suffix(u64),
}

fn parse_request(request: Option<Request>) -> PyResult<Option<Wanted>> {
    let Some((kind, a, b)) = request else { return Ok(None) };
    Ok(Some(match kind.as_str() {
        "range" if b >= a => Wanted::Range(a, b),
        "range" => return Err(PyValueError::new_err(format!("Unexpected byte_range, got end {b} before start {a}"))),
        "offset" => Wanted::From(a),
        "suffix" => Wanted::Suffix(a),
        _ => return Err(PyValueError::new_err(format!("Unexpected byte_range, got {kind:?}"))),
    }))
}

fn store_key(key: &str) -> PyResult<StoreKey> {
    StoreKey::new(key).map_err(|e| Error::new(Kind::Invalid, format!("invalid key {key:?}: {e}")).into())
}

/// `prefix` as a store prefix: a non-empty prefix names a folder, so
/// `"arr"` lists `"arr/…"` and never `"arr2/…"`.
fn store_prefix(prefix: &str) -> PyResult<StorePrefix> {
    let folder = if prefix.is_empty() || prefix.ends_with('/') { prefix.to_owned() } else { format!("{prefix}/") };
    StorePrefix::new(folder.trim_start_matches('/'))
        .map_err(|e| Error::new(Kind::Invalid, format!("invalid prefix {prefix:?}: {e}")).into())
}

/// The byte range of a value of `size` bytes that `wanted` asks for, clamped to it.
fn clamp(wanted: Wanted, size: u64) -> ByteRange {
    match wanted {
        Wanted::Range(start, end) => {
            let start = start.min(size);
            ByteRange::FromStart(start, Some(end.min(size) - start))
        }
        Wanted::From(start) => ByteRange::FromStart(start.min(size), None),
        Wanted::Suffix(length) => ByteRange::Suffix(length.min(size)),
    }
}

async fn get_async(
    store: &AsyncReferenceStore,
    key: &StoreKey,
    wanted: Option<Wanted>,
) -> Result<Option<Bytes>, Error> {
    let failed = |e: zarrs_storage::StorageError| read_error(&e);
    let Some(wanted) = wanted else { return store.get(key).await.map_err(failed) };
    let Some(size) = store.size_key(key).await.map_err(failed)? else { return Ok(None) };
    let range = clamp(wanted, size);
    store.get_partial(key, range).await.map_err(failed)
}

fn get_sync(store: &ReferenceStore, key: &StoreKey, wanted: Option<Wanted>) -> Result<Option<Bytes>, Error> {
    let failed = |e: zarrs_storage::StorageError| read_error(&e);
    let Some(wanted) = wanted else { return store.get(key).map_err(failed) };
    let Some(size) = store.size_key(key).map_err(failed)? else { return Ok(None) };
    store.get_partial(key, clamp(wanted, size)).map_err(failed)
}

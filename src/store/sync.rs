//! The sync store.

use std::sync::Arc;

use zarrs_storage::byte_range::ByteRangeIterator;
use zarrs_storage::{
    ListableStorageTraits, MaybeBytes, MaybeBytesIterator, ReadableStorageTraits, StorageError, StoreKey, StoreKeys,
    StoreKeysPrefixes, StorePrefix,
};

use bytes::Bytes;
use zarrs_storage::byte_range::ByteRange;

use super::runtime::BlockingRuntime;
use super::{Core, Listing, Lookup, Plan, SizePlan, Value, records, region};
use crate::fetch::{self, Request};
use crate::resolve::Source;
use crate::{OwnedReference, ReferenceSet};

/// A kerchunk reference set as a sync zarrs store.
///
/// Local targets are read on the calling thread with positioned reads;
/// remote targets through `object_store` on an internal tokio runtime, so
/// the store works from plain threads, rayon workers and inside other
/// runtimes alike. Cloning is cheap and shares the references.
///
/// ```
/// use std::sync::Arc;
/// use zarrs_kerchunk::ReferenceStore;
/// # let location = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/nc4_deflate_shuffle/refs.json");
/// let store = Arc::new(ReferenceStore::open(location)?);
/// let array = zarrs::array::Array::open(store, "/temp")?;
/// let temp: ndarray::ArrayD<f32> = array.retrieve_array_subset(&array.subset_all())?;
/// assert_eq!(temp.shape(), [5, 7, 9]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct ReferenceStore {
    core: Arc<Core>,
    runtime: Arc<BlockingRuntime>,
}

impl ReferenceStore {
    pub(crate) fn from_core(core: Arc<Core>, runtime: Arc<BlockingRuntime>) -> Self {
        Self { core, runtime }
    }

    /// Open the reference file at `location` (a local path or a URL) with default options.
    ///
    /// See [`ReferenceStoreBuilder`](crate::ReferenceStoreBuilder) for credentials,
    /// endpoints, a default target and template overrides.
    ///
    /// # Errors
    /// [`ReferenceError`](crate::ReferenceError) if the file cannot be read or parsed.
    pub fn open(location: &str) -> Result<Self, crate::ReferenceError> {
        crate::ReferenceStoreBuilder::new().open(location)
    }

    /// The references this store serves, if they are a JSON set (a parquet
    /// root's references stay on disk and are loaded a record at a time).
    #[must_use]
    pub fn references(&self) -> Option<&ReferenceSet> {
        self.core.references()
    }

    /// The reference of `key`, without reading its target: inline bytes, or
    /// the URL (as written) and range it points to. `None` if the key has none.
    ///
    /// # Errors
    /// [`StorageError`] if the parquet record file holding the key cannot be read.
    pub fn reference(&self, key: &StoreKey) -> Result<Option<OwnedReference>, StorageError> {
        Ok(self.value(key)?.map(|value| self.core.owned(value)))
    }

    /// What `key` holds, loading its parquet record first if needed.
    fn value(&self, key: &StoreKey) -> Result<Option<Value>, StorageError> {
        match self.core.lookup(key)? {
            Lookup::Missing => Ok(None),
            Lookup::Found(value) => Ok(Some(value)),
            Lookup::Load { record, row } => {
                let loaded = self.runtime.block_on(async move { record.load().await }).and_then(|r| r);
                Core::loaded_value(key, loaded, row)
            }
        }
    }

    /// Read the values of `keys` now, in one batch: ranges of the same file
    /// are merged into larger reads and many reads run at once (see
    /// [`ReferenceStoreBuilder::with_fetch_concurrency`](crate::ReferenceStoreBuilder::with_fetch_concurrency)).
    /// Later reads of these keys are answered from memory; a whole read of a
    /// key releases its bytes, and [`clear_prefetched`](Self::clear_prefetched) releases the rest.
    /// Returns the number of bytes read ahead.
    ///
    /// zarrs reads the chunks of a sync request from its few rayon threads,
    /// one request each; prefetching a subset's chunk keys first (see
    /// [`prefetch_region`](Self::prefetch_region) and the `open_virtual`
    /// example's `--prefetch`) turns that into a few large concurrent reads,
    /// which matters when latency, not bandwidth, is the limit.
    ///
    /// # Errors
    /// [`StorageError`] naming a key, its target and the cause if a read fails.
    pub fn prefetch<I: IntoIterator<Item = StoreKey>>(&self, keys: I) -> Result<u64, StorageError> {
        let values = keys
            .into_iter()
            .map(|key| Ok(self.value(&key)?.map(|value| (key, value))))
            .filter_map(Result::transpose)
            .collect::<Result<Vec<_>, StorageError>>()?;
        let prefetch = self.core.plan_prefetch(values)?;
        let (requests, options) = (prefetch.requests(), self.core.batch_options());
        let fetched = self
            .runtime
            .block_on(fetch::read_batch(requests, options))
            .map_err(|cause| StorageError::Other(format!("prefetch failed: {cause}")))?;
        self.core.keep_prefetched(prefetch, fetched)
    }

    /// [`prefetch`](Self::prefetch) every chunk of the array at `array` (a
    /// zarrs node path such as `/temp`) that holds part of `region`, one
    /// range of element indices per dimension. Call it before zarrs reads
    /// that region, so that zarrs decodes from memory.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use zarrs_kerchunk::ReferenceStore;
    /// # let location = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/nc4_deflate_shuffle/refs.json");
    /// let store = Arc::new(ReferenceStore::open(location)?);
    /// let array = zarrs::array::Array::open(store.clone(), "/temp")?;
    /// store.prefetch_region("/temp", &[1..3, 0..7, 0..9])?;
    /// let temp: ndarray::ArrayD<f32> = array.retrieve_array_subset(&[1..3, 0..7, 0..9])?;
    /// assert_eq!(temp.shape(), [2, 7, 9]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`StorageError`] if the array has no readable `.zarray`, `region` does
    /// not fit the array, or a read fails (naming the key, target and cause).
    pub fn prefetch_region(&self, array: &str, region: &[std::ops::Range<u64>]) -> Result<u64, StorageError> {
        let zarray = self.get(&region::zarray_key(array)?)?;
        self.prefetch(region::chunk_keys(array, zarray, region)?)
    }

    /// Release every prefetched value not yet read.
    pub fn clear_prefetched(&self) {
        self.core.clear_prefetched();
    }

    /// The value of `key`, whole (`ranges` is `None`) or in parts.
    fn read(&self, key: &StoreKey, ranges: Option<Vec<ByteRange>>) -> Result<Option<Vec<Bytes>>, StorageError> {
        if let Some(values) = self.core.read_prefetched(key, ranges.as_deref()) {
            return values.map(Some);
        }
        let Some(value) = self.value(key)? else { return Ok(None) };
        match self.core.plan(key, value, ranges)? {
            Plan::Ready(values) => Ok(Some(values)),
            Plan::Fetch(mut fetch) => {
                let requests = std::mem::take(&mut fetch.requests);
                let fetched = read_blocking(&self.runtime, &fetch.resolved.source, requests);
                fetch.finish(fetched).map(Some)
            }
        }
    }

    /// Finish a listing by loading the records it needs.
    fn complete(&self, mut listing: Listing) -> Result<Listing, StorageError> {
        let pending = std::mem::take(&mut listing.pending);
        if !pending.is_empty() {
            let loaded = self.runtime.block_on(records::load_all(pending)).and_then(|r| r);
            self.core.add_loaded_records(&mut listing, loaded)?;
        }
        Ok(listing)
    }
}

/// Read from a source on this thread (local files) or on the runtime (everything else).
fn read_blocking(
    runtime: &BlockingRuntime,
    source: &Source,
    requests: Vec<Request>,
) -> Result<Vec<bytes::Bytes>, String> {
    match source {
        Source::Local(path) => fetch::read_local(path, &requests),
        Source::Object { .. } => {
            let source = source.clone();
            runtime.block_on(async move { fetch::read_async(&source, requests).await })?
        }
    }
}

impl ReadableStorageTraits for ReferenceStore {
    fn get(&self, key: &StoreKey) -> Result<MaybeBytes, StorageError> {
        Ok(self.read(key, None)?.and_then(|v| v.into_iter().next()))
    }

    fn get_partial_many<'a>(
        &'a self,
        key: &StoreKey,
        byte_ranges: ByteRangeIterator<'a>,
    ) -> Result<MaybeBytesIterator<'a>, StorageError> {
        let values = self.read(key, Some(byte_ranges.collect()))?;
        Ok(values.map(|values| Box::new(values.into_iter().map(Ok)) as _))
    }

    fn size_key(&self, key: &StoreKey) -> Result<Option<u64>, StorageError> {
        let Some(value) = self.value(key)? else { return Ok(None) };
        match self.core.plan_size(key, value)? {
            SizePlan::Known(size) => Ok(Some(size)),
            SizePlan::Document => Ok(self.get(key)?.map(|v| v.len() as u64)),
            SizePlan::Stat(resolved) => {
                let size = match &resolved.source {
                    Source::Local(path) => fetch::size_local(path),
                    source @ Source::Object { .. } => {
                        let source = source.clone();
                        self.runtime.block_on(async move { fetch::size_async(&source).await }).and_then(|r| r)
                    }
                };
                size.map(Some).map_err(|cause| resolved.error(key.as_str(), &cause))
            }
        }
    }

    fn supports_get_partial(&self) -> bool {
        true
    }
}

impl ListableStorageTraits for ReferenceStore {
    fn list(&self) -> Result<StoreKeys, StorageError> {
        self.list_prefix(&StorePrefix::root())
    }

    fn list_prefix(&self, prefix: &StorePrefix) -> Result<StoreKeys, StorageError> {
        Ok(self.complete(self.core.list_prefix(prefix)?)?.into_keys())
    }

    fn list_dir(&self, prefix: &StorePrefix) -> Result<StoreKeysPrefixes, StorageError> {
        Ok(self.complete(self.core.list_dir(prefix)?)?.into_keys_prefixes())
    }

    fn size_prefix(&self, prefix: &StorePrefix) -> Result<u64, StorageError> {
        self.list_prefix(prefix)?.iter().try_fold(0, |total, key| Ok(total + self.size_key(key)?.unwrap_or(0)))
    }
}

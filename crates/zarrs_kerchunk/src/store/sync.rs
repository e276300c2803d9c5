//! The sync store.

use std::sync::Arc;

use bytes::Bytes;
use zarrs_storage::byte_range::ByteRangeIterator;
use zarrs_storage::{
    ListableStorageTraits, MaybeBytes, MaybeBytesIterator, ReadableStorageTraits, StorageError, StoreKey, StoreKeys,
    StoreKeysPrefixes, StorePrefix,
};

use kerchunk::{Listing, OwnedReference, PendingReference, ReferenceSet, ReferenceSource, SourceError};

use super::core::source_error;
use super::read::{self, Io};
use super::read_ahead::{Issue, Taken};
use super::runtime::IoRuntime;
use super::{Core, MetadataView, listing, region};
use crate::error::ReadError;
use crate::fetch::{self, Request};
use crate::resolve::Source;

/// A kerchunk reference set as a sync zarrs store.
///
/// Local targets are read on the calling thread with positioned reads;
/// remote targets through `object_store` on a tokio runtime (one shared by
/// the process, or the caller's: [`ReferenceStoreBuilder::with_runtime`](crate::ReferenceStoreBuilder::with_runtime)),
/// so the store works from plain threads, rayon workers and inside other
/// runtimes alike. Cloning is cheap and shares the references.
///
/// ```
/// use std::sync::Arc;
/// use zarrs_kerchunk::ReferenceStore;
/// # let location = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/nc4_deflate_shuffle/refs.json");
/// let store = Arc::new(ReferenceStore::open(location)?);
/// let array = zarrs::array::Array::open(store, "/temp")?;
/// let temp: ndarray::ArrayD<f32> = array.retrieve_array_subset(&array.subset_all())?;
/// assert_eq!(temp.shape(), [5, 7, 9]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct ReferenceStore {
    core: Arc<Core>,
    runtime: IoRuntime,
    metadata: MetadataView,
}

impl ReferenceStore {
    pub(crate) fn from_core(core: Arc<Core>, runtime: IoRuntime) -> Self {
        Self { core, runtime, metadata: MetadataView::default() }
    }

    /// This store, serving metadata documents in `view`; it shares the
    /// references and everything read so far with `self`.
    ///
    /// ```
    /// use zarrs_kerchunk::kerchunk::OwnedReference;
    /// use zarrs_kerchunk::{MetadataView, ReferenceStore};
    /// use zarrs_storage::{ReadableStorageTraits, StoreKey};
    /// # let location = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/nc4_deflate_shuffle/refs.json");
    /// let store = ReferenceStore::open(location)?;
    /// let as_written = store.with_metadata_view(MetadataView::AsWritten);
    /// let key = StoreKey::new("temp/.zarray")?;
    /// let Some(OwnedReference::Inline(written)) = store.reference(&key)? else { panic!("inline") };
    /// assert_eq!(as_written.get(&key)?, Some(written));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_metadata_view(&self, view: MetadataView) -> Self {
        Self { core: Arc::clone(&self.core), runtime: self.runtime.clone(), metadata: view }
    }

    /// How this store serves metadata documents.
    #[must_use]
    pub fn metadata_view(&self) -> MetadataView {
        self.metadata
    }

    /// The references this store serves, if they are a JSON set in memory (a
    /// parquet root's references stay in their files and are loaded a record at a time).
    #[must_use]
    pub fn references(&self) -> Option<&ReferenceSet> {
        self.core.source().in_memory()
    }

    /// An async store over the same references, sharing everything this one
    /// holds, with the same [`MetadataView`].
    #[must_use]
    pub fn to_async(&self) -> crate::AsyncReferenceStore {
        crate::AsyncReferenceStore::from_core(Arc::clone(&self.core)).with_metadata_view(self.metadata)
    }

    /// The runtime that drives this store's remote reads.
    pub(crate) fn runtime(&self) -> &IoRuntime {
        &self.runtime
    }

    /// What every store over these references shares.
    pub(crate) fn core(&self) -> &Core {
        &self.core
    }

    /// The source of the references this store serves: what the writers and the tools read.
    #[must_use]
    pub fn source(&self) -> &Arc<dyn ReferenceSource> {
        self.core.source()
    }

    /// The reference of `key`, without reading its target: inline bytes, or
    /// the URL (as written) and range it points to. `None` if the key has none.
    ///
    /// # Errors
    /// [`StorageError`] if the parquet record file holding the key cannot be read.
    pub fn reference(&self, key: &StoreKey) -> Result<Option<OwnedReference>, StorageError> {
        self.value(key)
    }

    /// What `key` holds, after the source's read if it needs one.
    fn value(&self, key: &StoreKey) -> Result<Option<OwnedReference>, StorageError> {
        read::at_once(self.core.value(key, &self.io()))
    }

    /// How this store waits: on its runtime, or on the calling thread.
    fn io(&self) -> Blocking<'_> {
        Blocking { runtime: &self.runtime }
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
            .map_err(|cause| StorageError::Other(format!("prefetch failed: {}", kerchunk::error_chain(&cause))))?;
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
    /// # let location = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/nc4_deflate_shuffle/refs.json");
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
        let grid = match region::known_grid(self.source().as_ref(), array) {
            Some(grid) => Some(grid),
            None => region::read_grid(self.get(&region::zarray_key(array)?)?),
        };
        self.prefetch(region::chunk_keys(array, grid, region)?)
    }

    /// Release every prefetched value not yet read.
    pub fn clear_prefetched(&self) {
        self.core.clear_prefetched();
    }

    /// The keys and folders of a listing, after the source's reads if it needs any.
    fn complete(&self, prefix: &StorePrefix, dir: bool) -> Result<(Vec<String>, Vec<String>), StorageError> {
        let Listing { mut keys, prefixes, pending, .. } = self.core.list(prefix.as_str(), dir)?;
        if let Some(pending) = pending {
            let more = self.runtime.block_on(pending).unwrap_or_else(|e| Err(SourceError::Runtime(e.into())));
            keys.extend(more.map_err(|e| source_error(prefix.as_str(), &e))?);
        }
        Ok((keys, prefixes))
    }
}

/// The sync store's waits: each blocks before it returns, on the runtime
/// (remote reads, a source's reads) or on the calling thread (local files).
struct Blocking<'a> {
    runtime: &'a IoRuntime,
}

impl Io for Blocking<'_> {
    async fn pending(&self, pending: PendingReference) -> Result<Option<OwnedReference>, SourceError> {
        self.runtime.block_on(pending).unwrap_or_else(|e| Err(SourceError::Runtime(e.into())))
    }

    async fn read_ahead(&self, taken: Taken) -> Option<Bytes> {
        self.runtime.block_on_here(taken.bytes()).ok().flatten()
    }

    async fn fetch(&self, source: &Source, requests: Vec<Request>) -> Result<Vec<Bytes>, ReadError> {
        match source {
            Source::Local { path, pin } => fetch::read_local(path, pin.as_deref(), &requests),
            Source::Object { .. } => {
                let source = source.clone();
                self.runtime.block_on(async move { fetch::read_async(&source, requests).await })?
            }
        }
    }

    async fn size(&self, source: &Source) -> Result<u64, ReadError> {
        match source {
            Source::Local { path, pin } => fetch::size_local(path, pin.as_deref()),
            Source::Object { .. } => {
                let source = source.clone();
                self.runtime.block_on(async move { fetch::size_async(&source).await }).and_then(|r| r)
            }
        }
    }

    fn spawn(&self, issue: Issue) {
        self.runtime.spawn(issue.run());
    }

    fn can_spawn(&self) -> bool {
        true
    }
}

impl ReadableStorageTraits for ReferenceStore {
    fn get(&self, key: &StoreKey) -> Result<MaybeBytes, StorageError> {
        Ok(read::at_once(self.core.read(key, None, self.metadata, &self.io()))?.and_then(|v| v.into_iter().next()))
    }

    fn get_partial_many<'a>(
        &'a self,
        key: &StoreKey,
        byte_ranges: ByteRangeIterator<'a>,
    ) -> Result<MaybeBytesIterator<'a>, StorageError> {
        let values = read::at_once(self.core.read(key, Some(byte_ranges.collect()), self.metadata, &self.io()))?;
        Ok(values.map(|values| Box::new(values.into_iter().map(Ok)) as _))
    }

    fn size_key(&self, key: &StoreKey) -> Result<Option<u64>, StorageError> {
        read::at_once(self.core.size(key, self.metadata, &self.io()))
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
        Ok(listing::into_keys(self.complete(prefix, false)?.0))
    }

    fn list_dir(&self, prefix: &StorePrefix) -> Result<StoreKeysPrefixes, StorageError> {
        let (keys, prefixes) = self.complete(prefix, true)?;
        Ok(listing::into_keys_prefixes(keys, prefixes))
    }

    fn size_prefix(&self, prefix: &StorePrefix) -> Result<u64, StorageError> {
        self.list_prefix(prefix)?.iter().try_fold(0, |total, key| Ok(total + self.size_key(key)?.unwrap_or(0)))
    }
}

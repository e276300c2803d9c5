//! The async store.

use std::sync::Arc;

use bytes::Bytes;
use futures::StreamExt;
use zarrs_storage::byte_range::ByteRangeIterator;
use zarrs_storage::{
    AsyncListableStorageTraits, AsyncMaybeBytesIterator, AsyncReadableStorageTraits, MaybeBytes, StorageError,
    StoreKey, StoreKeys, StoreKeysPrefixes, StorePrefix,
};

use kerchunk::{Listing, OwnedReference, PendingReference, ReferenceSet, ReferenceSource, SourceError};

use super::core::source_error;
use super::read::Io;
use super::read_ahead::{Issue, Taken};
use super::{Core, MetadataView, listing, region};
use crate::error::ReadError;
use crate::fetch::{self, Request};
use crate::resolve::Source;

/// A kerchunk reference set as an async zarrs store.
///
/// Reads run on the caller's runtime: remote targets through `object_store`,
/// local files on tokio's blocking pool. Cloning is cheap and shares the
/// references.
///
/// ```
/// use std::sync::Arc;
/// use zarrs_kerchunk::AsyncReferenceStore;
/// # tokio::runtime::Runtime::new()?.block_on(async {
/// # let location = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/nc4_deflate_shuffle/refs.json");
/// let store = Arc::new(AsyncReferenceStore::open(location).await?);
/// let array = zarrs::array::Array::async_open(store, "/pres").await?;
/// let pres: ndarray::ArrayD<f64> = array.async_retrieve_array_subset(&array.subset_all()).await?;
/// assert_eq!(pres.shape(), [7, 9]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct AsyncReferenceStore {
    core: Arc<Core>,
    metadata: MetadataView,
}

impl AsyncReferenceStore {
    pub(crate) fn from_core(core: Arc<Core>) -> Self {
        Self { core, metadata: MetadataView::default() }
    }

    /// This store, serving metadata documents in `view`; it shares the
    /// references and everything read so far with `self`.
    #[must_use]
    pub fn with_metadata_view(&self, view: MetadataView) -> Self {
        Self { core: Arc::clone(&self.core), metadata: view }
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

    /// The source of the references this store serves: what the writers and the tools read.
    #[must_use]
    pub fn source(&self) -> &Arc<dyn ReferenceSource> {
        self.core.source()
    }

    pub(crate) fn core(&self) -> &Core {
        &self.core
    }

    /// The reference of `key`, without reading its target: inline bytes, or
    /// the URL (as written) and range it points to. `None` if the key has none.
    ///
    /// # Errors
    /// [`StorageError`] if the parquet record file holding the key cannot be read.
    pub async fn reference(&self, key: &StoreKey) -> Result<Option<OwnedReference>, StorageError> {
        self.value(key).await
    }

    /// What `key` holds, after the source's read if it needs one.
    async fn value(&self, key: &StoreKey) -> Result<Option<OwnedReference>, StorageError> {
        self.core.value(key, &Awaiting).await
    }

    /// Read the values of `keys` now, in one batch; see [`ReferenceStore::prefetch`](crate::ReferenceStore::prefetch).
    ///
    /// # Errors
    /// [`StorageError`] naming a key, its target and the cause if a read fails.
    pub async fn prefetch<I: IntoIterator<Item = StoreKey>>(&self, keys: I) -> Result<u64, StorageError> {
        let mut values = Vec::new();
        for key in keys {
            if let Some(value) = self.value(&key).await? {
                values.push((key, value));
            }
        }
        let prefetch = self.core.plan_prefetch(values)?;
        let fetched = fetch::read_batch(prefetch.requests(), self.core.batch_options()).await;
        self.core.keep_prefetched(prefetch, fetched)
    }

    /// [`prefetch`](Self::prefetch) every chunk of the array at `array` (a
    /// zarrs node path such as `/temp`) that holds part of `region`, one
    /// range of element indices per dimension; see
    /// [`ReferenceStore::prefetch_region`](crate::ReferenceStore::prefetch_region).
    ///
    /// # Errors
    /// [`StorageError`] if the array has no readable `.zarray`, `region` does
    /// not fit the array, or a read fails (naming the key, target and cause).
    pub async fn prefetch_region(&self, array: &str, region: &[std::ops::Range<u64>]) -> Result<u64, StorageError> {
        let grid = match region::known_grid(self.source().as_ref(), array) {
            Some(grid) => Some(grid),
            None => region::read_grid(self.get(&region::zarray_key(array)?).await?),
        };
        self.prefetch(region::chunk_keys(array, grid, region)?).await
    }

    /// Release every prefetched value not yet read.
    pub fn clear_prefetched(&self) {
        self.core.clear_prefetched();
    }

    /// The keys and folders of a listing, after the source's reads if it needs any.
    async fn complete(&self, prefix: &StorePrefix, dir: bool) -> Result<(Vec<String>, Vec<String>), StorageError> {
        let Listing { mut keys, prefixes, pending, .. } = self.core.list(prefix.as_str(), dir)?;
        if let Some(pending) = pending {
            keys.extend(pending.await.map_err(|e| source_error(prefix.as_str(), &e))?);
        }
        Ok((keys, prefixes))
    }
}

/// The async store's waits: each awaited on the caller's runtime.
struct Awaiting;

impl Io for Awaiting {
    async fn pending(&self, pending: PendingReference) -> Result<Option<OwnedReference>, SourceError> {
        pending.await
    }

    async fn read_ahead(&self, taken: Taken) -> Option<Bytes> {
        taken.bytes().await
    }

    async fn fetch(&self, source: &Source, requests: Vec<Request>) -> Result<Vec<Bytes>, ReadError> {
        fetch::read_async(source, requests).await
    }

    async fn size(&self, source: &Source) -> Result<u64, ReadError> {
        fetch::size_async(source).await
    }

    /// Reads ahead run on the caller's runtime, if there is one.
    fn spawn(&self, issue: Issue) {
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            drop(runtime.spawn(issue.run()));
        }
    }

    fn can_spawn(&self) -> bool {
        tokio::runtime::Handle::try_current().is_ok()
    }
}

#[async_trait::async_trait]
impl AsyncReadableStorageTraits for AsyncReferenceStore {
    async fn get(&self, key: &StoreKey) -> Result<MaybeBytes, StorageError> {
        Ok(self.core.read(key, None, self.metadata, &Awaiting).await?.and_then(|v| v.into_iter().next()))
    }

    async fn get_partial_many<'a>(
        &'a self,
        key: &StoreKey,
        byte_ranges: ByteRangeIterator<'a>,
    ) -> Result<AsyncMaybeBytesIterator<'a>, StorageError> {
        let values = self.core.read(key, Some(byte_ranges.collect()), self.metadata, &Awaiting).await?;
        Ok(values.map(|values| futures::stream::iter(values.into_iter().map(Ok)).boxed()))
    }

    async fn size_key(&self, key: &StoreKey) -> Result<Option<u64>, StorageError> {
        self.core.size(key, self.metadata, &Awaiting).await
    }

    fn supports_get_partial(&self) -> bool {
        true
    }
}

#[async_trait::async_trait]
impl AsyncListableStorageTraits for AsyncReferenceStore {
    async fn list(&self) -> Result<StoreKeys, StorageError> {
        self.list_prefix(&StorePrefix::root()).await
    }

    async fn list_prefix(&self, prefix: &StorePrefix) -> Result<StoreKeys, StorageError> {
        Ok(listing::into_keys(self.complete(prefix, false).await?.0))
    }

    async fn list_dir(&self, prefix: &StorePrefix) -> Result<StoreKeysPrefixes, StorageError> {
        let (keys, prefixes) = self.complete(prefix, true).await?;
        Ok(listing::into_keys_prefixes(keys, prefixes))
    }

    async fn size_prefix(&self, prefix: &StorePrefix) -> Result<u64, StorageError> {
        let mut total = 0;
        for key in self.list_prefix(prefix).await? {
            total += self.size_key(&key).await?.unwrap_or(0);
        }
        Ok(total)
    }
}

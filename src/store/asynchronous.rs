//! The async store.

use std::sync::Arc;

use futures::StreamExt;
use zarrs_storage::byte_range::ByteRangeIterator;
use zarrs_storage::{
    AsyncListableStorageTraits, AsyncMaybeBytesIterator, AsyncReadableStorageTraits, MaybeBytes, StorageError,
    StoreKey, StoreKeys, StoreKeysPrefixes, StorePrefix,
};

use super::{Core, Plan, SizePlan};
use crate::ReferenceSet;
use crate::fetch;

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
/// # let location = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/nc4_deflate_shuffle/refs.json");
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
}

impl AsyncReferenceStore {
    pub(crate) fn from_core(core: Arc<Core>) -> Self {
        Self { core }
    }

    /// Open the reference file at `location` (a local path or a URL) with default options.
    ///
    /// See [`ReferenceStoreBuilder`](crate::ReferenceStoreBuilder) for credentials,
    /// endpoints, a default target and template overrides.
    ///
    /// # Errors
    /// [`ReferenceError`](crate::ReferenceError) if the file cannot be read or parsed.
    pub async fn open(location: &str) -> Result<Self, crate::ReferenceError> {
        crate::ReferenceStoreBuilder::new().open_async(location).await
    }

    /// The references this store serves.
    #[must_use]
    pub fn references(&self) -> &ReferenceSet {
        self.core.references()
    }

    async fn carry_out(&self, plan: Plan) -> Result<Option<Vec<bytes::Bytes>>, StorageError> {
        match plan {
            Plan::Missing => Ok(None),
            Plan::Ready(values) => Ok(Some(values)),
            Plan::Fetch(mut fetch) => {
                let requests = std::mem::take(&mut fetch.requests);
                let fetched = fetch::read_async(&fetch.resolved.source, requests).await;
                fetch.finish(fetched).map(Some)
            }
        }
    }
}

#[async_trait::async_trait]
impl AsyncReadableStorageTraits for AsyncReferenceStore {
    async fn get(&self, key: &StoreKey) -> Result<MaybeBytes, StorageError> {
        Ok(self.carry_out(self.core.plan_get(key)?).await?.and_then(|v| v.into_iter().next()))
    }

    async fn get_partial_many<'a>(
        &'a self,
        key: &StoreKey,
        byte_ranges: ByteRangeIterator<'a>,
    ) -> Result<AsyncMaybeBytesIterator<'a>, StorageError> {
        let plan = self.core.plan_get_partial(key, byte_ranges.collect())?;
        Ok(self.carry_out(plan).await?.map(|values| futures::stream::iter(values.into_iter().map(Ok)).boxed()))
    }

    async fn size_key(&self, key: &StoreKey) -> Result<Option<u64>, StorageError> {
        match self.core.plan_size(key)? {
            SizePlan::Known(size) => Ok(size),
            SizePlan::Document => Ok(self.get(key).await?.map(|v| v.len() as u64)),
            SizePlan::Stat(resolved, key) => {
                fetch::size_async(&resolved.source).await.map(Some).map_err(|cause| resolved.error(&key, &cause))
            }
        }
    }

    fn supports_get_partial(&self) -> bool {
        true
    }
}

#[async_trait::async_trait]
impl AsyncListableStorageTraits for AsyncReferenceStore {
    async fn list(&self) -> Result<StoreKeys, StorageError> {
        Ok(self.core.list_prefix(&StorePrefix::root()))
    }

    async fn list_prefix(&self, prefix: &StorePrefix) -> Result<StoreKeys, StorageError> {
        Ok(self.core.list_prefix(prefix))
    }

    async fn list_dir(&self, prefix: &StorePrefix) -> Result<StoreKeysPrefixes, StorageError> {
        Ok(self.core.list_dir(prefix))
    }

    async fn size_prefix(&self, prefix: &StorePrefix) -> Result<u64, StorageError> {
        let mut total = 0;
        for key in self.core.list_prefix(prefix) {
            total += self.size_key(&key).await?.unwrap_or(0);
        }
        Ok(total)
    }
}

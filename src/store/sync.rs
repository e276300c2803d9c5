//! The sync store.

use std::sync::Arc;

use zarrs_storage::byte_range::ByteRangeIterator;
use zarrs_storage::{
    ListableStorageTraits, MaybeBytes, MaybeBytesIterator, ReadableStorageTraits, StorageError, StoreKey, StoreKeys,
    StoreKeysPrefixes, StorePrefix,
};

use super::runtime::BlockingRuntime;
use super::{Core, Fetch, Plan, SizePlan};
use crate::ReferenceSet;
use crate::fetch::{self, Request};
use crate::resolve::Source;

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

    /// The references this store serves.
    #[must_use]
    pub fn references(&self) -> &ReferenceSet {
        self.core.references()
    }

    fn fetch(&self, mut fetch: Fetch) -> Result<Vec<bytes::Bytes>, StorageError> {
        let requests = std::mem::take(&mut fetch.requests);
        let fetched = read_blocking(&self.runtime, &fetch.resolved.source, requests);
        fetch.finish(fetched)
    }

    fn carry_out(&self, plan: Plan) -> Result<Option<Vec<bytes::Bytes>>, StorageError> {
        match plan {
            Plan::Missing => Ok(None),
            Plan::Ready(values) => Ok(Some(values)),
            Plan::Fetch(fetch) => self.fetch(fetch).map(Some),
        }
    }
}

/// Read from a source on this thread (local files) or on the runtime (everything else).
pub(crate) fn read_blocking(
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
        Ok(self.carry_out(self.core.plan_get(key)?)?.and_then(|v| v.into_iter().next()))
    }

    fn get_partial_many<'a>(
        &'a self,
        key: &StoreKey,
        byte_ranges: ByteRangeIterator<'a>,
    ) -> Result<MaybeBytesIterator<'a>, StorageError> {
        let plan = self.core.plan_get_partial(key, byte_ranges.collect())?;
        Ok(self.carry_out(plan)?.map(|values| Box::new(values.into_iter().map(Ok)) as _))
    }

    fn size_key(&self, key: &StoreKey) -> Result<Option<u64>, StorageError> {
        match self.core.plan_size(key)? {
            SizePlan::Known(size) => Ok(size),
            SizePlan::Document => Ok(self.get(key)?.map(|v| v.len() as u64)),
            SizePlan::Stat(resolved, key) => {
                let size = match &resolved.source {
                    Source::Local(path) => fetch::size_local(path),
                    source @ Source::Object { .. } => {
                        let source = source.clone();
                        self.runtime.block_on(async move { fetch::size_async(&source).await }).and_then(|r| r)
                    }
                };
                size.map(Some).map_err(|cause| resolved.error(&key, &cause))
            }
        }
    }

    fn supports_get_partial(&self) -> bool {
        true
    }
}

impl ListableStorageTraits for ReferenceStore {
    fn list(&self) -> Result<StoreKeys, StorageError> {
        Ok(self.core.list_prefix(&StorePrefix::root()))
    }

    fn list_prefix(&self, prefix: &StorePrefix) -> Result<StoreKeys, StorageError> {
        Ok(self.core.list_prefix(prefix))
    }

    fn list_dir(&self, prefix: &StorePrefix) -> Result<StoreKeysPrefixes, StorageError> {
        Ok(self.core.list_dir(prefix))
    }

    fn size_prefix(&self, prefix: &StorePrefix) -> Result<u64, StorageError> {
        self.core.list_prefix(prefix).iter().try_fold(0, |total, key| Ok(total + self.size_key(key)?.unwrap_or(0)))
    }
}

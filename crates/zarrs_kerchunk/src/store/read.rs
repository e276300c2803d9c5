//! One read of a key, as both stores make it. The sequence lives here once:
//! values prefetched, then chunks read ahead, then the source's reference,
//! the plan, the read-ahead it may start, the fetch and its check. The sync
//! and async stores only say how to wait for each step ([`Io`]): the async
//! store awaits, the sync one blocks on its runtime or reads local files on
//! the calling thread.

use bytes::Bytes;
use futures::FutureExt;
use kerchunk::{Lookup, OwnedReference, PendingReference, SourceError};
use zarrs_storage::byte_range::ByteRange;
use zarrs_storage::{StorageError, StoreKey};

use super::Core;
use super::core::{MetadataView, Plan, SizePlan, source_error};
use super::read_ahead::{Issue, Taken};
use crate::error::ReadError;
use crate::fetch::Request;
use crate::resolve::Source;

/// How a store waits for the I/O of a read.
pub(crate) trait Io {
    /// The reference a source knows once it has read (a parquet record).
    async fn pending(&self, pending: PendingReference) -> Result<Option<OwnedReference>, SourceError>;

    /// The bytes of a chunk read ahead, or `None` if that read failed (the chunk is then read again).
    async fn read_ahead(&self, taken: Taken) -> Option<Bytes>;

    /// Exactly the bytes of `requests`, from `source`.
    async fn fetch(&self, source: &Source, requests: Vec<Request>) -> Result<Vec<Bytes>, ReadError>;

    /// The size of the target `source`.
    async fn size(&self, source: &Source) -> Result<u64, ReadError>;

    /// Start reads ahead in the background, if this store can (`issue` is dropped, and its budget given back, if not).
    fn spawn(&self, issue: Issue);

    /// Whether [`spawn`](Self::spawn) can start anything now: no reads ahead are planned if not.
    fn can_spawn(&self) -> bool;
}

impl Core {
    /// The value of `key`, whole (`ranges` is `None`) or in parts, metadata in `view`.
    pub(crate) async fn read(
        &self,
        key: &StoreKey,
        ranges: Option<Vec<ByteRange>>,
        view: MetadataView,
        io: &impl Io,
    ) -> Result<Option<Vec<Bytes>>, StorageError> {
        if let Some(values) = self.read_prefetched(key, ranges.as_deref()) {
            return values.map(Some);
        }
        if ranges.is_none()
            && let Some(taken) = self.take_read_ahead(key)
            // A failed read-ahead is read again below, where its error is reported.
            && let Some(bytes) = io.read_ahead(taken).await
        {
            self.follow(key, bytes.len() as u64, io);
            return Ok(Some(vec![bytes]));
        }
        let Some(value) = self.value(key, io).await? else { return Ok(None) };
        match self.plan(key, value, ranges, view)? {
            Plan::Ready(values) => Ok(Some(values)),
            Plan::Fetch(mut fetch) => {
                if let Some(length) = fetch.whole_remote_chunk() {
                    self.follow(key, length, io);
                }
                let requests = std::mem::take(&mut fetch.requests);
                let fetched = io.fetch(&fetch.resolved.source, requests).await;
                fetch.finish(fetched).map(Some)
            }
        }
    }

    /// The size of the value of `key` (metadata in `view`), reading as little as it can.
    pub(crate) async fn size(
        &self,
        key: &StoreKey,
        view: MetadataView,
        io: &impl Io,
    ) -> Result<Option<u64>, StorageError> {
        let Some(value) = self.value(key, io).await? else { return Ok(None) };
        match self.plan_size(key, value, view)? {
            SizePlan::Known(size) => Ok(Some(size)),
            SizePlan::Document => {
                Ok(self.read(key, None, view, io).await?.and_then(|v| v.first().map(|v| v.len() as u64)))
            }
            SizePlan::Stat(resolved) => {
                io.size(&resolved.source).await.map(Some).map_err(|cause| resolved.error(key.as_str(), &cause))
            }
        }
    }

    /// The reference of `key`, after the source's read if it needs one.
    pub(crate) async fn value(&self, key: &StoreKey, io: &impl Io) -> Result<Option<OwnedReference>, StorageError> {
        match self.lookup(key)? {
            Lookup::Ready(value) => Ok(value),
            Lookup::Pending(pending) => io.pending(pending).await.map_err(|e| source_error(key.as_str(), &e)),
        }
    }

    /// Follow a whole read of the remote chunk `key`: read the chunks after
    /// it in the background if it continues a sequential run.
    fn follow(&self, key: &StoreKey, length: u64, io: &impl Io) {
        if io.can_spawn()
            && let Some(issue) = self.read_ahead(key, length)
        {
            io.spawn(issue);
        }
    }
}

/// The result of `read`, whose every wait the sync store's [`Io`] makes
/// before it returns: so it is ready at its first poll.
pub(crate) fn at_once<T>(read: impl Future<Output = Result<T, StorageError>>) -> Result<T, StorageError> {
    read.now_or_never().unwrap_or_else(|| {
        Err(StorageError::Other("internal error: a sync read waited for I/O it did not block on".into()))
    })
}

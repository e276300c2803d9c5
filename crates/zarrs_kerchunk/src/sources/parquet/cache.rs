//! The decoded record files of a parquet reference root: loaded on demand,
//! kept in an LRU bounded in records and in bytes, and loaded once however
//! many requests wait for the same record.

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use tokio::task::JoinError;

use lru::LruCache;
use tokio::sync::OnceCell;

use kerchunk::{RecordError, SourceError};

use crate::error::ReadError;
use crate::fetch;
use crate::resolve::Source;
use kerchunk::parquet::{Record, RecordId};

/// Where a record is being loaded (or has been): waiters share the one load.
pub(crate) type Slot = Arc<OnceCell<Arc<Record>>>;

/// How many decoded record files a parquet store keeps in memory.
///
/// A record holds the references of `record_size` consecutive chunks of one
/// array. The least recently used records are dropped once either bound is
/// exceeded; the record in use is always kept.
///
/// ```
/// use zarrs_kerchunk::{RecordCacheOptions, ReferenceStoreBuilder};
/// let builder = ReferenceStoreBuilder::new()
///     .with_record_cache(RecordCacheOptions::default().with_max_records(512).with_max_bytes(1 << 30));
/// # let _ = builder;
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordCacheOptions {
    max_records: usize,
    max_bytes: usize,
    decode_deadline: Duration,
}

impl Default for RecordCacheOptions {
    /// 128 records (fsspec's default `cache_size`), 256 MiB, and 30 s to decode a record file.
    fn default() -> Self {
        Self { max_records: 128, max_bytes: 256 << 20, decode_deadline: Duration::from_secs(30) }
    }
}

impl RecordCacheOptions {
    /// Keep at most `records` decoded record files (at least one is always kept).
    #[must_use]
    pub fn with_max_records(mut self, records: usize) -> Self {
        self.max_records = records;
        self
    }

    /// Keep at most about `bytes` bytes of decoded record files.
    #[must_use]
    pub fn with_max_bytes(mut self, bytes: usize) -> Self {
        self.max_bytes = bytes;
        self
    }

    /// Give up on a record file whose decoding takes longer than `deadline`
    /// (default 30 s; a record of 10^5 rows takes milliseconds) with
    /// [`RecordError::TooSlow`]. The parquet crate
    /// can spin for minutes on some corrupt page headers; past the deadline
    /// the read fails, while the thread decoding it runs on until it ends.
    #[must_use]
    pub fn with_decode_deadline(mut self, deadline: Duration) -> Self {
        self.decode_deadline = deadline;
        self
    }
}

/// The LRU of decoded records.
#[derive(Debug)]
pub(crate) struct RecordCache {
    options: RecordCacheOptions,
    inner: Mutex<Inner>,
}

#[derive(Debug)]
struct Inner {
    lru: LruCache<RecordId, CachedRecord>,
    /// The sum of `CachedRecord::bytes`.
    bytes: usize,
}

#[derive(Debug)]
struct CachedRecord {
    slot: Slot,
    /// The decoded size, once loaded.
    bytes: usize,
}

impl RecordCache {
    pub(crate) fn new(options: RecordCacheOptions) -> Self {
        Self { options, inner: Mutex::new(Inner { lru: LruCache::unbounded(), bytes: 0 }) }
    }

    /// The slot of `id`, created if absent; marks the record as most recently used.
    pub(crate) fn slot(&self, id: &RecordId) -> Slot {
        let mut inner = self.lock();
        if let Some(entry) = inner.lru.get(id) {
            return Arc::clone(&entry.slot);
        }
        let slot = Slot::default();
        inner.lru.put(id.clone(), CachedRecord { slot: Arc::clone(&slot), bytes: 0 });
        self.evict(&mut inner);
        slot
    }

    /// The record `id` if it is loaded and cached.
    pub(crate) fn get(&self, id: &RecordId) -> Option<Arc<Record>> {
        self.lock().lru.get(id).and_then(|entry| entry.slot.get().cloned())
    }

    /// Count a freshly loaded record against the byte bound.
    fn loaded(&self, id: &RecordId, record: &Record) {
        let mut inner = self.lock();
        let Some(entry) = inner.lru.peek_mut(id) else { return };
        if entry.bytes == 0 {
            let bytes = record.memory_size().max(1);
            entry.bytes = bytes;
            inner.bytes += bytes;
            self.evict(&mut inner);
        }
    }

    /// Drop least recently used records until both bounds hold, keeping the most recent one.
    fn evict(&self, inner: &mut Inner) {
        let max_records = NonZeroUsize::new(self.options.max_records).map_or(1, NonZeroUsize::get);
        while inner.lru.len() > 1 && (inner.lru.len() > max_records || inner.bytes > self.options.max_bytes) {
            if let Some((_, entry)) = inner.lru.pop_lru() {
                inner.bytes -= entry.bytes;
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    #[cfg(test)]
    fn cached(&self) -> (usize, usize) {
        let inner = self.lock();
        (inner.lru.len(), inner.bytes)
    }
}

/// A record to load before a request can be planned.
#[derive(Debug)]
pub(crate) struct RecordFetch {
    pub(crate) id: RecordId,
    pub(crate) slot: Slot,
    pub(crate) cache: Arc<RecordCache>,
    pub(crate) source: Source,
    /// Where the record file is, for messages.
    pub(crate) location: String,
    /// The largest record file to read, in bytes.
    pub(crate) max_file_bytes: u64,
}

impl RecordFetch {
    /// The decoded record: loaded now, or by the request already loading it.
    /// A record file that does not exist is a record of missing keys.
    pub(crate) async fn load(&self) -> Result<Arc<Record>, SourceError> {
        let location = || self.location.clone();
        let record = self
            .slot
            .get_or_try_init(|| async {
                let bytes = fetch::read_if_exists(&self.source, self.max_file_bytes).await.map_err(|source| {
                    SourceError::Fetch { what: "parquet record file", location: location(), source: source.into() }
                })?;
                let record = match bytes {
                    None => Record::absent(),
                    // Decoding a record file is CPU work (milliseconds for 10^5 rows).
                    Some(bytes) => decode_within(bytes, self.cache.options.decode_deadline)
                        .await
                        .map_err(|e| SourceError::Fetch {
                            what: "parquet record file",
                            location: location(),
                            source: ReadError::Task(e).into(),
                        })?
                        .map_err(|source| SourceError::Record { location: location(), source })?,
                };
                Ok::<_, SourceError>(Arc::new(record))
            })
            .await?;
        self.cache.loaded(&self.id, record);
        Ok(Arc::clone(record))
    }
}

/// `file` decoded on the blocking pool (it is CPU work: milliseconds for 10^5
/// rows), or [`RecordError::TooSlow`] past `deadline`. Outside a tokio
/// runtime it is decoded in place, with no deadline.
async fn decode_within(file: Bytes, deadline: Duration) -> Result<Result<Record, RecordError>, JoinError> {
    if tokio::runtime::Handle::try_current().is_err() {
        return Ok(Record::decode(file));
    }
    let decode = fetch::off_the_executor(move || Record::decode(file));
    tokio::time::timeout(deadline, decode).await.unwrap_or(Ok(Err(RecordError::TooSlow { after: deadline })))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(index: u64) -> RecordId {
        RecordId { field: Arc::from("a"), index }
    }

    #[test]
    fn least_recently_used_records_go_first() {
        let cache = RecordCache::new(RecordCacheOptions::default().with_max_records(2));
        let first = cache.slot(&id(0));
        cache.slot(&id(1));
        assert!(Arc::ptr_eq(&first, &cache.slot(&id(0))), "a cached slot is shared");
        cache.slot(&id(2)); // evicts 1, the least recently used
        assert_eq!(cache.cached().0, 2);
        assert!(Arc::ptr_eq(&first, &cache.slot(&id(0))));
        first.set(Arc::new(Record::absent())).unwrap();
        assert!(cache.get(&id(0)).is_some());
        assert!(cache.get(&id(1)).is_none());
    }

    #[test]
    fn the_byte_bound_keeps_the_newest_record() {
        let cache = RecordCache::new(RecordCacheOptions::default().with_max_bytes(1));
        for i in 0..3 {
            let slot = cache.slot(&id(i));
            slot.set(Arc::new(Record::absent())).unwrap();
            cache.loaded(&id(i), slot.get().unwrap());
            assert_eq!(cache.cached(), (1, 1));
        }
        assert!(cache.get(&id(2)).is_some());
    }
}

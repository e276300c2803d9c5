//! The HDF5 parser reads through a blocking [`Storage`]: this one serves it
//! from an object store, in blocks, from a thread where blocking is allowed,
//! counting what it reads and refusing to read more than the metadata budget.

use std::ops::Range;
use std::sync::{Arc, Mutex};

use futures::{StreamExt, TryStreamExt};
use hdf5_reader::{Storage, StorageBuffer};
use object_store::ObjectStore;
use object_store::path::Path;
use tokio::runtime::Handle;

use crate::error::ScanError;
use crate::read::{Blocks, ReadStats, fetch_exact};

/// The most bytes one prefetch request reads.
const RUN_BYTES: u64 = 8 << 20;
/// Prefetch requests made at once.
const CONCURRENT_RUNS: usize = 8;

/// A file of an object store as the HDF5 parser's storage.
pub(crate) struct StoreStorage {
    store: Arc<dyn ObjectStore>,
    path: Path,
    url: String,
    runtime: Handle,
    budget: u64,
    read_ahead: u64,
    state: Mutex<State>,
}

struct State {
    blocks: Blocks,
    stats: ReadStats,
    /// Where the last fetch ended, and how far the next one reads when it
    /// starts there: B-tree nodes written between the chunks they index are
    /// read in file order, and a read-ahead that doubles on each such read
    /// (as fsspec's does, up to [`ScanOptions::with_read_ahead_bytes`])
    /// makes those reads few.
    ///
    /// [`ScanOptions::with_read_ahead_bytes`]: crate::ScanOptions::with_read_ahead_bytes
    last_end: u64,
    ahead: u64,
    /// Why the last read failed, kept because the parser's error type
    /// cannot carry it: a store's failure ends the scan, whatever object the
    /// parser was reading.
    failure: Option<ScanError>,
}

impl StoreStorage {
    /// The file at `path`, of which `blocks` were read already (counted in
    /// `stats`), read on at most to `budget` bytes in all, reading ahead up
    /// to `read_ahead` bytes, with requests run on `runtime`.
    pub(crate) fn new(
        store: Arc<dyn ObjectStore>,
        path: Path,
        url: String,
        runtime: Handle,
        (blocks, stats): (Blocks, ReadStats),
        (budget, read_ahead): (u64, u64),
    ) -> Self {
        let shared = Mutex::new(State { blocks, stats, last_end: 0, ahead: 0, failure: None });
        Self { store, path, url, runtime, budget, read_ahead, state: shared }
    }

    /// What was read so far.
    pub(crate) fn stats(&self) -> ReadStats {
        self.lock().stats
    }

    /// The failure that ended a read, once: the store's error, or the budget.
    pub(crate) fn take_failure(&self) -> Option<ScanError> {
        self.lock().failure.take()
    }

    /// The bytes of `range`, inside the file.
    pub(crate) fn bytes(&self, range: Range<u64>) -> Result<bytes::Bytes, ScanError> {
        let mut state = self.lock();
        if let Some(mut fetch) = state.blocks.missing(&range) {
            let most = (self.read_ahead / state.blocks.block()) * state.blocks.block();
            // In order: at the last fetch's end, or past blocks held since
            // then, within the distance the last fetch read ahead.
            let in_order = (state.last_end..=state.last_end.saturating_add(state.ahead)).contains(&fetch.start);
            state.ahead = if in_order { (state.ahead * 2).min(most) } else { 0 };
            let asked = fetch.end;
            if state.stats.bytes.saturating_add(asked - fetch.start) > self.budget {
                return Err(ScanError::HeaderTooLarge { url: self.url.clone(), limit: self.budget });
            }
            // Reading ahead never spends budget the parser may need: it
            // stops at the budget left (in whole blocks).
            let left = self.budget - state.stats.bytes;
            let reach = fetch.start.saturating_add(state.ahead.min(left / state.blocks.block() * state.blocks.block()));
            fetch.end = state.blocks.missing_until(asked, reach).max(asked);
            if state.ahead == 0 {
                state.ahead = fetch.end - fetch.start;
            }
            state.last_end = fetch.end;
            let length = fetch.end - fetch.start;
            // Blocking here is allowed: the parser runs on a blocking thread
            // (`spawn_blocking`) or in `block_in_place`, never as a task on a worker.
            let fetched = self.runtime.block_on(fetch_exact(&self.store, &self.path, &self.url, fetch.clone()))?;
            state.stats.requests += 1;
            state.stats.bytes += length;
            state.blocks.insert(&fetch, &fetched);
        }
        Ok(state.blocks.assemble(&range))
    }

    /// Fetch the missing blocks of `ranges` (inside the file) ahead of
    /// [`StoreStorage::bytes`]: runs of consecutive blocks up to 8 MiB a
    /// request, eight requests at once.
    pub(crate) fn prefetch(&self, ranges: &[Range<u64>]) -> Result<(), ScanError> {
        let mut state = self.lock();
        let runs = state.blocks.missing_runs(ranges, RUN_BYTES);
        let total: u64 = runs.iter().map(|r| r.end - r.start).sum();
        if state.stats.bytes.saturating_add(total) > self.budget {
            return Err(ScanError::HeaderTooLarge { url: self.url.clone(), limit: self.budget });
        }
        let requests = runs.iter().map(|run| fetch_exact(&self.store, &self.path, &self.url, run.clone()));
        let fetched: Vec<bytes::Bytes> =
            self.runtime.block_on(futures::stream::iter(requests).buffered(CONCURRENT_RUNS).try_collect())?;
        for (run, bytes) in runs.iter().zip(&fetched) {
            state.stats.requests += 1;
            state.stats.bytes += bytes.len() as u64;
            state.blocks.insert(run, bytes);
        }
        Ok(())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while the lock was held left whole blocks or none.
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Storage for StoreStorage {
    fn len(&self) -> u64 {
        self.lock().blocks.size()
    }

    fn read_range(&self, offset: u64, len: usize) -> hdf5_reader::error::Result<StorageBuffer> {
        let size = self.len();
        let end = offset.checked_add(len as u64).filter(|&end| end <= size).ok_or(
            hdf5_reader::error::Error::UnexpectedEof {
                offset,
                needed: len as u64,
                available: size.saturating_sub(offset),
            },
        )?;
        match self.bytes(offset..end) {
            Ok(bytes) => StorageBuffer::from_shared_owner(Arc::new(bytes), 0, len),
            Err(failure) => {
                let message = failure.to_string();
                self.lock().failure = Some(failure);
                Err(hdf5_reader::error::Error::Other(message))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use object_store::ObjectStoreExt;
    use object_store::memory::InMemory;

    use super::*;

    /// A file read in order, a few bytes every block: each read that
    /// starts where the last ended reads twice as far, so 256 blocks cost
    /// 9 requests, each byte read once; without read-ahead, 256.
    #[test]
    fn reads_in_file_order_are_read_ahead() {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
        let path = Path::from("f.h5");
        runtime.block_on(store.put(&path, vec![7u8; 1 << 20].into())).unwrap();
        // A 1 MiB file in 4 KiB blocks, read with a metadata budget and a read-ahead.
        let open = |budget: u64, read_ahead: u64| {
            StoreStorage::new(
                Arc::clone(&store),
                path.clone(),
                "f.h5".into(),
                runtime.handle().clone(),
                (Blocks::new(1 << 20, 4096), ReadStats::default()),
                (budget, read_ahead),
            )
        };
        for (read_ahead, requests) in [(4 << 20, 9), (0, 256)] {
            let storage = open(u64::MAX, read_ahead);
            for block in 0..256 {
                assert_eq!(&storage.bytes(block * 4096..block * 4096 + 10).unwrap()[..], &[7; 10]);
            }
            assert_eq!((storage.stats().requests, storage.stats().bytes), (requests, 1 << 20), "{read_ahead}");
        }
        // With a budget of 64 KiB, reading ahead stops at it: the 16 blocks
        // the budget allows are read, the 17th is refused.
        let storage = open(64 << 10, 4 << 20);
        for block in 0..16 {
            storage.bytes(block * 4096..block * 4096 + 10).unwrap();
        }
        assert_eq!(storage.stats().bytes, 64 << 10);
        assert!(matches!(storage.bytes(16 * 4096..16 * 4096 + 10), Err(ScanError::HeaderTooLarge { .. })));
    }
}

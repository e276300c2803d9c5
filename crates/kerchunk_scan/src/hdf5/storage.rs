//! The HDF5 parser reads through a blocking [`Storage`]: this one serves it
//! from an object store, in blocks, from a thread where blocking is allowed,
//! counting what it reads and refusing to read more than the metadata budget.

use std::ops::Range;
use std::sync::{Arc, Mutex};

use hdf5_reader::{Storage, StorageBuffer};
use object_store::ObjectStore;
use object_store::path::Path;
use tokio::runtime::Handle;

use crate::error::ScanError;
use crate::read::{Blocks, ReadStats, fetch_exact};

/// A file of an object store as the HDF5 parser's storage.
pub(crate) struct StoreStorage {
    store: Arc<dyn ObjectStore>,
    path: Path,
    url: String,
    runtime: Handle,
    budget: u64,
    state: Mutex<State>,
}

struct State {
    blocks: Blocks,
    stats: ReadStats,
    /// Why the last read failed, kept because the parser's error type
    /// cannot carry it: a store's failure ends the scan, whatever object the
    /// parser was reading.
    failure: Option<ScanError>,
}

impl StoreStorage {
    /// The file at `path`, of which `blocks` were read already (counted in
    /// `stats`), read on at most to `budget` bytes in all, with requests
    /// run on `runtime`.
    pub(crate) fn new(
        store: Arc<dyn ObjectStore>,
        path: Path,
        url: String,
        runtime: Handle,
        (blocks, stats): (Blocks, ReadStats),
        budget: u64,
    ) -> Self {
        Self { store, path, url, runtime, budget, state: Mutex::new(State { blocks, stats, failure: None }) }
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
        if let Some(fetch) = state.blocks.missing(&range) {
            let length = fetch.end - fetch.start;
            if state.stats.bytes.saturating_add(length) > self.budget {
                return Err(ScanError::HeaderTooLarge { url: self.url.clone(), limit: self.budget });
            }
            // Blocking here is allowed: the parser runs on a blocking thread
            // (`spawn_blocking`), never on one of the runtime's workers.
            let fetched = self.runtime.block_on(fetch_exact(&self.store, &self.path, &self.url, fetch.clone()))?;
            state.stats.requests += 1;
            state.stats.bytes += length;
            state.blocks.insert(&fetch, &fetched);
        }
        Ok(state.blocks.assemble(&range))
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

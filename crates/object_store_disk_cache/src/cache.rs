//! The cache's folder and what one process knows of it: which version of each
//! object it has checked, which ranges each version's folder holds, and what
//! its reads cost.

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use object_store::ObjectStore;

use crate::entry::{self, Described, Unusable};
use crate::error::CacheError;
use crate::evict;
use crate::layout::{self, Layout, Piece, Ranges};
use crate::store::CachedStore;

/// The size a cache keeps under unless told otherwise: 10 GiB.
pub const DEFAULT_MAX_BYTES: u64 = 10 << 30;

/// What a read lacks is fetched in one request where the pieces are less
/// than this apart, unless told otherwise: 64 KiB, fsspec's gap.
pub const DEFAULT_MERGE_GAP: u64 = 64 << 10;

/// A range's file read less recently than this has its time set again when read.
const TOUCH_AFTER: Duration = Duration::from_mins(1);

/// A folder of cached byte ranges of objects, shared by every process that
/// opens it, and what this process knows of it. Wrap a store with
/// [`wrap`](Self::wrap) (or [`CachedStore::new`]) to read through it.
///
/// What it promises:
/// - **never stale**: a range is served only for the version of the object
///   (its ETag, else its size and last-modified time) it was read from, and
///   that version is checked with one metadata request per object per
///   process (none for a read that names its version with `If-Match`, such
///   as a pinned one, unless [`with_pinned_revalidation`](Self::with_pinned_revalidation));
/// - **never corrupt**: each range carries a checksum, checked on every
///   read; a damaged file is removed and its range fetched again;
/// - **shared**: files are written whole and renamed into place, so
///   processes never see each other's partial files, and no lock is held;
/// - **bounded**: the least recently read ranges are removed once the cache
///   holds more than [`max_bytes`](Self::max_bytes), approximately (each
///   process counts its own writes between sweeps of the folder, so the
///   cache may overshoot by what other processes wrote meanwhile).
///
/// The cache never fails a read: a range that cannot be written (a full
/// disk, a read-only folder) is served from the store and counted in
/// [`CacheStats::write_failures`].
pub struct DiskCache {
    root: PathBuf,
    layout: Layout,
    max_bytes: u64,
    merge_gap: u64,
    revalidate_pinned: bool,
    /// The version of each object checked in this process, by URL.
    checked: Mutex<HashMap<String, Arc<tokio::sync::OnceCell<Described>>>>,
    /// Versions named by ETag alone, as a pinned read names them, found on disk.
    pinned: Mutex<HashMap<(String, String), Described>>,
    /// The ranges each version's folder holds, as last listed or written by this process.
    ranges: Mutex<HashMap<PathBuf, Ranges>>,
    /// Range files whose time this process set.
    touched: Mutex<HashSet<PathBuf>>,
    /// The stores wrapped so far, by the inner store and the URL of its root,
    /// so that one store is always wrapped by the same decorator.
    wrapped: Mutex<HashMap<(usize, String), Wrapped>>,
    /// Bytes in the folder at the last sweep (`u64::MAX`: not swept yet), and written since.
    swept_bytes: AtomicU64,
    written_since_sweep: AtomicU64,
    sweeping: Mutex<()>,
    pub(crate) stats: Counters,
}

/// A store, and its decorator.
type Wrapped = (Arc<dyn ObjectStore>, Arc<dyn ObjectStore>);

/// What reads through a cache cost, counted since it was opened in this process.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CacheStats {
    /// Metadata (HEAD) requests made to check an object's version.
    pub metadata_requests: u64,
    /// Ranges read from the store (after coalescing, and only what the cache lacked).
    pub fetched_ranges: u64,
    /// Bytes read from the store.
    pub fetched_bytes: u64,
    /// Reads answered from the cache alone, with no request.
    pub served_reads: u64,
    /// Bytes answered from the cache.
    pub served_bytes: u64,
    /// Cached files found damaged (checksum, length or header), removed and fetched again.
    pub discarded: u64,
    /// Ranges that could not be written to the cache (served from the store all the same).
    pub write_failures: u64,
    /// Cached files removed to keep the cache under its size.
    pub evicted: u64,
}

#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) metadata_requests: AtomicU64,
    pub(crate) fetched_ranges: AtomicU64,
    pub(crate) fetched_bytes: AtomicU64,
    pub(crate) served_reads: AtomicU64,
    pub(crate) served_bytes: AtomicU64,
    pub(crate) discarded: AtomicU64,
    pub(crate) write_failures: AtomicU64,
    pub(crate) evicted: AtomicU64,
}

impl Counters {
    pub(crate) fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

// What it is, not what it holds: the stores it wraps may show credentials.
impl std::fmt::Debug for DiskCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DiskCache")
            .field("dir", &self.root)
            .field("max_bytes", &self.max_bytes)
            .field("merge_gap", &self.merge_gap)
            .field("revalidate_pinned", &self.revalidate_pinned)
            .finish_non_exhaustive()
    }
}

impl DiskCache {
    /// The cache in the folder `dir` (created if need be), kept under
    /// [`DEFAULT_MAX_BYTES`].
    ///
    /// # Errors
    /// [`CacheError::Folder`] if the folder cannot be created.
    pub fn new(dir: impl AsRef<Path>) -> Result<Self, CacheError> {
        let root = dir.as_ref().to_path_buf();
        let layout = Layout::create(&root).map_err(|source| CacheError::Folder { path: root.clone(), source })?;
        Ok(Self {
            root,
            layout,
            max_bytes: DEFAULT_MAX_BYTES,
            merge_gap: DEFAULT_MERGE_GAP,
            revalidate_pinned: false,
            checked: Mutex::default(),
            pinned: Mutex::default(),
            ranges: Mutex::default(),
            touched: Mutex::default(),
            wrapped: Mutex::default(),
            swept_bytes: AtomicU64::new(u64::MAX),
            written_since_sweep: AtomicU64::new(0),
            sweeping: Mutex::new(()),
            stats: Counters::default(),
        })
    }

    /// Keep the cache under `bytes` (approximately: see [`DiskCache`]).
    #[must_use]
    pub fn with_max_bytes(mut self, bytes: u64) -> Self {
        self.max_bytes = bytes;
        self
    }

    /// Fetch what one `get_ranges` lacks in one request where the pieces
    /// are less than `bytes` apart (default [`DEFAULT_MERGE_GAP`]); the bytes
    /// between them are cached too.
    #[must_use]
    pub fn with_merge_gap(mut self, bytes: u64) -> Self {
        self.merge_gap = bytes;
        self
    }

    /// Check the version of objects that reads name with `If-Match` (pinned
    /// reads) too, with one metadata request per object per process. Off by
    /// default: a range cached for an ETag is that ETag's bytes.
    #[must_use]
    pub fn with_pinned_revalidation(mut self, revalidate: bool) -> Self {
        self.revalidate_pinned = revalidate;
        self
    }

    /// The cache's folder.
    pub fn dir(&self) -> &Path {
        &self.root
    }

    /// The size the cache is kept under, in bytes.
    pub fn max_bytes(&self) -> u64 {
        self.max_bytes
    }

    /// What reads through this cache have cost so far, in this process.
    pub fn stats(&self) -> CacheStats {
        let get = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        let s = &self.stats;
        CacheStats {
            metadata_requests: get(&s.metadata_requests),
            fetched_ranges: get(&s.fetched_ranges),
            fetched_bytes: get(&s.fetched_bytes),
            served_reads: get(&s.served_reads),
            served_bytes: get(&s.served_bytes),
            discarded: get(&s.discarded),
            write_failures: get(&s.write_failures),
            evicted: get(&s.evicted),
        }
    }

    /// `store`, whose root is at `root_url` (such as `s3://bucket/` or
    /// `https://host/`), read through this cache: the same decorator for the
    /// same store and root each time.
    pub fn wrap(self: &Arc<Self>, root_url: &str, store: Arc<dyn ObjectStore>) -> Arc<dyn ObjectStore> {
        let key = (Arc::as_ptr(&store).cast::<()>() as usize, root_url.to_owned());
        let mut wrapped = lock(&self.wrapped);
        // The inner store is kept with its decorator, so that its address is never reused by another.
        let (_, cached) = wrapped.entry(key).or_insert_with(|| {
            let cached: Arc<dyn ObjectStore> =
                Arc::new(CachedStore::new(Arc::clone(&store), Arc::clone(self), root_url));
            (store, cached)
        });
        Arc::clone(cached)
    }

    pub(crate) fn merge_gap(&self) -> u64 {
        self.merge_gap
    }

    pub(crate) fn revalidates_pinned(&self) -> bool {
        self.revalidate_pinned
    }

    /// The once-cell of the version of `url` checked in this process.
    pub(crate) fn checked_cell(&self, url: &str) -> Arc<tokio::sync::OnceCell<Described>> {
        Arc::clone(lock(&self.checked).entry(url.to_owned()).or_default())
    }

    /// The version of `url` checked in this process, if it was.
    pub(crate) fn checked(&self, url: &str) -> Option<Described> {
        lock(&self.checked).get(url).and_then(|cell| cell.get().cloned())
    }

    /// Forget what this process checked of `url` (it was written or removed through the store).
    pub(crate) fn forget(&self, url: &str) {
        lock(&self.checked).remove(url);
        lock(&self.pinned).retain(|(pinned, _), _| pinned != url);
    }

    /// A version just checked: ranges of the object's other versions can never be served again.
    pub(crate) fn remove_other_versions(&self, what: &Described) {
        let keep = self.layout.version(what);
        for version in std::fs::read_dir(self.layout.object(&what.url)).into_iter().flatten().flatten() {
            if version.path() != keep {
                let _ = std::fs::remove_dir_all(version.path());
                lock(&self.ranges).remove(&version.path());
            }
        }
    }

    /// The version of `url` whose ETag is `etag`, as a cached range of it records it; no request.
    pub(crate) fn pinned_version(&self, url: &str, etag: &str) -> Option<Described> {
        let key = (url.to_owned(), etag.to_owned());
        if let Some(known) = lock(&self.pinned).get(&key) {
            return Some(known.clone());
        }
        let folder = self.layout.version_of_etag(url, etag);
        let found = Ranges::listed(&folder).iter().find_map(|listed| {
            let file = layout::range_file(&folder, &listed);
            match entry::read_described(&file) {
                Ok((what, range)) if what.url == url && what.etag.as_deref() == Some(etag) && range == listed => {
                    Some(what)
                }
                Ok(_) | Err(Unusable::Damaged(_)) => {
                    self.discard(&folder, &file, &listed);
                    None
                }
                Err(Unusable::Missing | Unusable::Io) => None,
            }
        })?;
        lock(&self.pinned).insert(key, found.clone());
        Some(found)
    }

    /// `wanted` of `what`'s version, as pieces of the ranges the cache holds
    /// (as this process knows them) and gaps; `fresh`: the ranges listed
    /// from the folder again (other processes may have added some).
    pub(crate) fn plan(&self, what: &Described, wanted: &Range<u64>, fresh: bool) -> Vec<Piece> {
        let folder = self.layout.version(what);
        let mut ranges = lock(&self.ranges);
        if fresh || !ranges.contains_key(&folder) {
            let listed = Ranges::listed(&folder);
            ranges.insert(folder.clone(), listed);
        }
        ranges.get(&folder).map(|held| layout::pieces(held, wanted)).unwrap_or_default()
    }

    /// The cached bytes of `take`, inside the cached range `from` of `what`.
    pub(crate) fn read(&self, what: &Described, from: &Range<u64>, take: &Range<u64>) -> Result<Bytes, Unusable> {
        let folder = self.layout.version(what);
        let file = layout::range_file(&folder, from);
        match entry::read(&file, what, from) {
            Ok(bytes) => {
                self.touch(&file);
                let start = usize::try_from(take.start - from.start).unwrap_or(usize::MAX);
                let end = usize::try_from(take.end - from.start).unwrap_or(usize::MAX);
                Ok(bytes.slice(start..end))
            }
            Err(Unusable::Damaged(why)) => {
                self.discard(&folder, &file, from);
                Err(Unusable::Damaged(why))
            }
            Err(Unusable::Missing) => {
                if let Some(ranges) = lock(&self.ranges).get_mut(&folder) {
                    ranges.remove(from);
                }
                Err(Unusable::Missing)
            }
            Err(e) => Err(e),
        }
    }

    /// Store `bytes`, the range `range` of `what`, for every process; a
    /// failure is counted, never returned.
    pub(crate) fn write(&self, what: &Described, range: &Range<u64>, bytes: &[u8]) {
        let folder = self.layout.version(what);
        let encoded = entry::encode(what, range, bytes);
        let file = layout::range_file(&folder, range);
        if entry::write_atomically(self.layout.temporary(), &file, &encoded).is_err() {
            Counters::add(&self.stats.write_failures, 1);
            return;
        }
        lock(&self.ranges).entry(folder).or_default().insert(range);
        self.written_since_sweep.fetch_add(encoded.len() as u64, Ordering::Relaxed);
        self.sweep_if_due();
    }

    /// Sweep the folder when this process does not know its size yet, or
    /// when what it wrote since may have taken it past its size.
    fn sweep_if_due(&self) {
        let (swept, written) =
            (self.swept_bytes.load(Ordering::Relaxed), self.written_since_sweep.load(Ordering::Relaxed));
        let due = swept == u64::MAX || swept.saturating_add(written) > self.max_bytes || written > self.max_bytes / 8;
        if !due {
            return;
        }
        // One sweep at a time in a process; the others go on writing.
        let Ok(_sweeping) = self.sweeping.try_lock() else { return };
        self.written_since_sweep.store(0, Ordering::Relaxed);
        let swept = evict::sweep(&self.layout, self.max_bytes);
        self.swept_bytes.store(swept.bytes, Ordering::Relaxed);
        Counters::add(&self.stats.evicted, swept.evicted);
        if swept.evicted > 0 {
            // The ranges this process listed may be gone: list them again when next read.
            lock(&self.ranges).clear();
        }
    }

    /// Remove a damaged file and forget its range.
    fn discard(&self, folder: &Path, file: &Path, range: &Range<u64>) {
        let _ = std::fs::remove_file(file);
        Counters::add(&self.stats.discarded, 1);
        if let Some(ranges) = lock(&self.ranges).get_mut(folder) {
            ranges.remove(range);
        }
    }

    /// Mark a range's file as read now, for eviction: once per process, and
    /// only if it was not marked in the last minute.
    fn touch(&self, file: &Path) {
        if !lock(&self.touched).insert(file.to_path_buf()) {
            return;
        }
        let now = SystemTime::now();
        let recent = std::fs::metadata(file)
            .and_then(|meta| meta.modified())
            .is_ok_and(|modified| now.duration_since(modified).unwrap_or_default() < TOUCH_AFTER);
        if !recent && let Ok(handle) = std::fs::File::options().write(true).open(file) {
            let _ = handle.set_modified(now);
        }
    }
}

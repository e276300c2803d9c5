//! A verified disk cache for [`object_store`]: the byte ranges a program
//! reads, kept in a folder that any number of processes share, served only
//! for the version of the object they came from, and checked on every read.
//!
//! [`CachedStore`] wraps any [`ObjectStore`](object_store::ObjectStore), as
//! `object_store`'s own decorators do; a [`DiskCache`] is the folder and
//! what one process knows of it.
//!
//! - **Never stale.** A cached range is keyed by the object's URL, its
//!   version (ETag, else size and last-modified time) and its offsets. Each
//!   object's version is checked with one `HEAD` per process; a read that
//!   names its version (`If-Match`, as a pinned read does) needs none. A
//!   range the cache lacks is fetched with `If-Match` on that version.
//!   A store whose ETag is made from a one-second modification time (nginx's
//!   is) cannot show a rewrite of the same size within that second: nor can
//!   this cache.
//! - **Never corrupt.** Each cached range carries an XXH3-64 checksum of its
//!   bytes and of what it is, checked on every read; a torn, truncated or
//!   altered file is removed and its range fetched again. Files are written
//!   to a temporary name and renamed, so a process killed mid-write leaves
//!   nothing that can be read.
//! - **Shared.** No lock is held across reads: processes and Dask workers on
//!   one machine use one folder at once.
//! - **Bounded.** Least recently read ranges are evicted past
//!   [`DiskCache::max_bytes`] (approximately: see [`DiskCache`]).
//!
//! ```
//! use std::sync::Arc;
//! use object_store::{ObjectStore, ObjectStoreExt, memory::InMemory, path::Path};
//! use object_store_disk_cache::DiskCache;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let folder = tempfile::tempdir()?;
//! let remote: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
//! remote.put(&Path::from("a/data.bin"), vec![7u8; 1000].into()).await?;
//!
//! let cache = Arc::new(DiskCache::new(folder.path())?.with_max_bytes(1 << 30));
//! let store = cache.wrap("memory:///", remote);
//! let cold = store.get_range(&Path::from("a/data.bin"), 100..200).await?;
//! let warm = store.get_range(&Path::from("a/data.bin"), 120..180).await?;
//! assert_eq!(warm, cold.slice(20..80));
//! let stats = cache.stats();
//! assert_eq!((stats.metadata_requests, stats.fetched_ranges, stats.served_reads), (1, 1, 1));
//! # Ok(())
//! # }
//! ```

mod cache;
mod entry;
mod error;
mod evict;
mod layout;
mod store;

pub use cache::{CacheStats, DEFAULT_MAX_BYTES, DEFAULT_MERGE_GAP, DiskCache};
pub use error::CacheError;
pub use store::CachedStore;

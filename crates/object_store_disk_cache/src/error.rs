//! What can go wrong opening a cache. Reads through a cache fail only as
//! their store's reads fail: a cache that cannot be read or written is
//! bypassed, never an error.

use std::path::PathBuf;

/// An error opening a [`DiskCache`](crate::DiskCache).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CacheError {
    /// The cache's folder could not be created.
    #[error("cannot use the cache folder {}: {source}", path.display())]
    Folder {
        /// The folder.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

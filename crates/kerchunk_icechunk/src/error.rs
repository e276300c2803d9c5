//! What can go wrong writing references into an icechunk repository.

use zarrs_kerchunk::ReadError;

/// An array whose Zarr v2 metadata cannot be written as Zarr v3.
#[derive(Debug, thiserror::Error)]
#[error("the array {path:?} cannot be written as Zarr v3: {reason}")]
#[non_exhaustive]
pub struct MetadataError {
    /// The array's path in the references (`""` for an array at the root).
    pub path: String,
    /// Why.
    pub reason: String,
}

/// Why references could not be written into an icechunk repository.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExportError {
    /// An array's metadata cannot be written as Zarr v3.
    #[error(transparent)]
    Metadata(#[from] MetadataError),
    /// A reference that has no place in a repository: a key that is no
    /// chunk of any array, a malformed reference, metadata in a target file.
    #[error("the key {key:?}: {reason}")]
    Reference {
        /// The key, as the references write it.
        key: String,
        /// Why.
        reason: String,
    },
    /// A whole-file reference's target, whose length icechunk needs, could
    /// not be reached.
    #[error("the key {key:?}: its target {url} could not be measured: {source}")]
    Target {
        /// The key.
        key: String,
        /// The target.
        url: String,
        /// The read's error.
        #[source]
        source: ReadError,
    },
    /// The references could not be read.
    #[error("the references could not be read: {0}")]
    Source(#[source] kerchunk::SourceError),
    /// The repository refused a write, or could not be reached.
    #[error("the icechunk repository {location}: {what}: {source}")]
    Repository {
        /// The repository.
        location: String,
        /// What was being done.
        what: String,
        /// icechunk's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

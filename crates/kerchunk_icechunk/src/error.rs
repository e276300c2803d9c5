//! What can go wrong writing references into an icechunk repository, or reading them back.

use zarrs_kerchunk::ReadError;

pub use kerchunk_v3::MetadataError;

/// A step of a repository's that failed: icechunk's error, where it happened.
#[derive(Debug, thiserror::Error)]
#[error("the icechunk repository {location}: {what}: {source}")]
#[non_exhaustive]
pub struct RepositoryError {
    /// The repository.
    pub location: String,
    /// What was being done.
    pub what: String,
    /// icechunk's error, or the reason.
    #[source]
    pub source: Box<dyn std::error::Error + Send + Sync>,
}

impl RepositoryError {
    /// A failure of `what` at `location`, from its cause.
    pub(crate) fn at<E: Into<Box<dyn std::error::Error + Send + Sync>>>(
        location: &str,
        what: impl Into<String>,
    ) -> impl FnOnce(E) -> Self {
        let (location, what) = (location.to_owned(), what.into());
        move |source| Self { location, what, source: source.into() }
    }
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
    #[error(transparent)]
    Repository(#[from] RepositoryError),
}

/// Why a repository could not be read back as references.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    /// There is no repository there.
    #[error("no icechunk repository at {location}")]
    NotFound {
        /// Where one was looked for.
        location: String,
    },
    /// A node's metadata cannot be written as Zarr v2.
    #[error(transparent)]
    Metadata(#[from] MetadataError),
    /// The repository could not be opened or read.
    #[error(transparent)]
    Repository(#[from] RepositoryError),
}

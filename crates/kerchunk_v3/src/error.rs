//! A node whose metadata cannot be written in the other Zarr version.

/// A node whose metadata cannot be written in the other Zarr version (an
/// array's v2 metadata as v3, or a node's v3 metadata as v2), or a key of
/// the set that belongs to no node.
#[derive(Debug, thiserror::Error)]
#[error("the node {path:?} cannot be converted between Zarr v2 and v3: {reason}")]
#[non_exhaustive]
pub struct MetadataError {
    /// The node's path in the references (`""` for the root).
    pub path: String,
    /// Why.
    pub reason: String,
}

impl MetadataError {
    /// The node at `path` cannot be converted, for `reason`.
    #[must_use]
    pub fn new(path: impl Into<String>, reason: impl Into<String>) -> Self {
        Self { path: path.into(), reason: reason.into() }
    }
}

//! Why sets could not be combined: each error names the file (or set) and the array.

/// Why reference sets could not be combined.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CombineError {
    /// An array differs between the sets in more than its length along the
    /// dimension (its metadata, a value that must be the same, an attribute
    /// that changes what its values decode to), or the coordinate is missing
    /// or cannot order them.
    #[error("cannot combine {file}: {array:?}: {reason}")]
    Combine {
        /// The file or set, as combining names it.
        file: String,
        /// The array.
        array: String,
        /// What differs.
        reason: String,
    },
}

//! The error returned when a reference set cannot be opened.

/// Why a reference set could not be opened or parsed.
///
/// Errors that happen later, while a store serves a key, are
/// [`zarrs_storage::StorageError`]s whose message names the key, the target URL
/// and the cause.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReferenceError {
    /// The reference file itself could not be read.
    #[error("cannot read reference file {location}: {reason}")]
    Read {
        /// Where the reference file was looked for.
        location: String,
        /// What went wrong.
        reason: String,
    },
    /// The reference file is not valid JSON (after decompression and NaN leniency).
    #[error("reference file {location} is not valid JSON: {reason}")]
    Json {
        /// Where the reference file was read from.
        location: String,
        /// The parser's message, with line and column.
        reason: String,
    },
    /// The reference file is compressed and could not be decompressed.
    #[error("cannot decompress reference file ({format}): {reason}")]
    Decompress {
        /// `gzip` or `zstd`.
        format: &'static str,
        /// What went wrong.
        reason: String,
    },
    /// The `.zmetadata` of a parquet reference root is valid JSON but not what the layout requires.
    #[error("invalid parquet reference metadata {location}: {reason}")]
    ParquetMetadata {
        /// Where the `.zmetadata` was read from.
        location: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The document's structure is not a kerchunk reference set.
    #[error("invalid reference set: {0}")]
    Structure(String),
    /// `version` is present but is not 1.
    #[error("unsupported reference spec version {0} (only version 1, or no version for version 0, is defined)")]
    UnsupportedVersion(String),
    /// One reference is malformed.
    #[error("invalid reference for key {key:?}: {reason}")]
    InvalidReference {
        /// The key whose value is malformed.
        key: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A template could not be rendered.
    #[error("template error in {context}: {reason}")]
    Template {
        /// Where the template occurs: a key, a `gen` entry or a template name.
        context: String,
        /// The renderer's message.
        reason: String,
    },
    /// A location or URL could not be understood.
    #[error("invalid location {location:?}: {reason}")]
    InvalidLocation {
        /// The location as given.
        location: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A target store could not be created for a URL.
    #[error("cannot create an object store for {url}: {reason}")]
    ObjectStore {
        /// The URL whose store could not be created.
        url: String,
        /// The `object_store` message.
        reason: String,
    },
}

/// Why a reference set could not be written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    /// The references to write could not be read (a parquet record file, say).
    #[error("cannot read the references to write: {0}")]
    Read(#[from] zarrs_storage::StorageError),
    /// A key the output format cannot hold.
    #[error("cannot write key {key:?}: {reason}")]
    Unrepresentable {
        /// The key.
        key: String,
        /// Why the format cannot hold it.
        reason: String,
    },
    /// The output could not be written.
    #[error("cannot write {location}: {reason}")]
    Write {
        /// The file or object being written.
        location: String,
        /// What went wrong.
        reason: String,
    },
}

/// An error and its causes, each cause that adds something new appended after a colon.
pub(crate) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

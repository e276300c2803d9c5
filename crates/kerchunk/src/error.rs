//! The format's errors, typed, each keeping its cause as a `source`:
//! parsing a document a [`ParseError`], a source of references a
//! [`SourceError`], writing a [`WriteError`], a parquet record file a
//! `RecordError`. The crates that read targets (the store) have their own.

/// Why a reference document could not be parsed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ParseError {
    /// The document could not be read from its reader.
    #[error("cannot read reference file {location}: {}", io_message(.source))]
    Io {
        /// Where the reference file was read from.
        location: String,
        /// The reader's error.
        #[source]
        source: std::io::Error,
    },
    /// The reference file is not valid JSON (after decompression and NaN leniency).
    #[error("reference file {location} is not valid JSON: {source}")]
    Json {
        /// Where the reference file was read from.
        location: String,
        /// The parser's error, with line and column.
        #[source]
        source: serde_json::Error,
    },
    /// The reference file is not UTF-8 text.
    #[error("reference file {location} is not valid JSON: not UTF-8: {source}")]
    NotUtf8 {
        /// Where the reference file was read from.
        location: String,
        /// Where the text stops being UTF-8.
        #[source]
        source: std::str::Utf8Error,
    },
    /// The streamed parser met text that is not JSON; the document is then
    /// read whole to report the line and column (see [`ParseError::Json`]).
    #[error("reference file {location} is not valid JSON: expected {expected} at byte {offset}")]
    Syntax {
        /// Where the reference file was read from.
        location: String,
        /// The byte offset in the (decompressed) document.
        offset: u64,
        /// What the parser expected there.
        expected: &'static str,
    },
    /// The reference document is larger than
    /// [`Limits::with_max_document_bytes`](crate::Limits::with_max_document_bytes) allows.
    #[error("reference file {location} is larger than the limit of {limit} bytes (Limits::with_max_document_bytes)")]
    TooLarge {
        /// Where the reference file was read from.
        location: String,
        /// The limit, in bytes after decompression.
        limit: u64,
    },
    /// Reading the document needed more memory than the process could have:
    /// one member longer than the memory left (its size is within the limits).
    #[error(
        "reference file {location}: cannot allocate {bytes} bytes to read one of its members \
         (the process's memory is limited; Limits::with_max_document_bytes bounds a document)"
    )]
    OutOfMemory {
        /// Where the reference file was read from.
        location: String,
        /// The allocation that failed.
        bytes: u64,
    },
    /// The reference file is compressed and could not be decompressed.
    #[error("cannot decompress reference file ({format}): {source}")]
    Decompress {
        /// `gzip` or `zstd`.
        format: &'static str,
        /// The decoder's error.
        #[source]
        source: std::io::Error,
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
        /// What went wrong, with the renderer's message.
        reason: String,
        /// The renderer's error, if it was the renderer that failed.
        #[source]
        source: Option<minijinja::Error>,
    },
}

impl ParseError {
    /// Whether the document is not JSON text ([`Json`](Self::Json) or
    /// [`Syntax`](Self::Syntax)): a streamed read that fails so may still be
    /// read whole, where bare `NaN` tokens are accepted and a syntax error is
    /// reported with its line and column.
    #[must_use]
    pub fn is_not_json(&self) -> bool {
        matches!(self, Self::Json { .. } | Self::Syntax { .. })
    }
}

fn io_message(error: &std::io::Error) -> String {
    match error.kind() {
        std::io::ErrorKind::NotFound => format!("file not found ({error})"),
        _ => error.to_string(),
    }
}

/// Why a parquet record file could not be decoded or encoded.
#[cfg(feature = "parquet")]
#[cfg_attr(docsrs, doc(cfg(feature = "parquet")))]
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecordError {
    /// The parquet crate cannot read the file.
    #[error("not a readable parquet file: {0}")]
    Parquet(#[source] parquet::errors::ParquetError),
    /// The parquet crate cannot decode the file's data.
    #[error("cannot decode the parquet data: {0}")]
    Decode(#[source] arrow_schema::ArrowError),
    /// A column cannot be converted to the layout's type.
    #[error("column {column:?} of type {data_type} is not usable: {source}")]
    Cast {
        /// The column.
        column: &'static str,
        /// Its type in the file.
        data_type: String,
        /// Arrow's error.
        #[source]
        source: arrow_schema::ArrowError,
    },
    /// The file's columns or values are not those of the layout.
    #[error("{0}")]
    Layout(String),
    /// The parquet crate cannot encode the record.
    #[error("{0}")]
    Encode(#[source] parquet::errors::ParquetError),
    /// The parquet crate panicked while decoding the file (a bug in it, met
    /// on a corrupt file); the panic's message.
    #[error("the parquet decoder failed on corrupt data: {0}")]
    Panicked(String),
    /// Decoding the file took longer than the reader's deadline: the parquet
    /// crate can spin for minutes on a corrupt page header.
    #[error(
        "decoding took longer than {after:?}, so the file is likely corrupt \
         (RecordCacheOptions::with_decode_deadline)"
    )]
    TooSlow {
        /// The deadline.
        after: std::time::Duration,
    },
}

/// A cause from outside this crate (a read, a runtime), kept whole.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Why a [`ReferenceSource`](crate::ReferenceSource) could not answer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SourceError {
    /// A file holding references could not be located or read; the cause
    /// is the reader's own error (the store's `ResolveError` or `ReadError`).
    #[error("{what} {location}: {source}")]
    Fetch {
        /// What the file is, for messages (`parquet record file`).
        what: &'static str,
        /// Where it was, or would be, read from.
        location: String,
        /// The cause.
        #[source]
        source: BoxError,
    },
    /// A parquet record file could not be decoded.
    #[cfg(feature = "parquet")]
    #[cfg_attr(docsrs, doc(cfg(feature = "parquet")))]
    #[error("parquet record file {location}: {source}")]
    Record {
        /// Where it was read from.
        location: String,
        /// The cause.
        #[source]
        source: RecordError,
    },
    /// The run time the source reads on failed (a task, a runtime).
    #[error(transparent)]
    Runtime(BoxError),
    /// Listing a prefix, or walking the whole root, would read more record
    /// files than one listing or walk may.
    #[error(
        "{} would read {records} record files, more than the limit of {limit}",
        .prefix.as_ref().map_or_else(|| "walking every reference of the root".to_owned(), |p| format!("listing {p:?}"))
    )]
    TooManyRecords {
        /// The prefix listed; `None` for a walk of the whole root.
        prefix: Option<String>,
        /// How many record files the arrays under it have.
        records: u64,
        /// The most one listing or walk reads.
        limit: u64,
    },
}

/// Why a reference set could not be written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    /// The references to write could not be read (a parquet record file, say).
    #[error("cannot read the references to write: {0}")]
    Read(#[from] SourceError),
    /// A key the output format cannot hold.
    #[error("cannot write key {key:?}: {reason}")]
    Unrepresentable {
        /// The key.
        key: String,
        /// Why the format cannot hold it.
        reason: String,
    },
    /// The output could not be written.
    #[error("cannot write {location}: {source}")]
    Io {
        /// The file being written.
        location: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The output could not be stored where it goes (an object store's put); the
    /// cause is the store's own error.
    #[error("cannot write {location}: {source}")]
    Put {
        /// The object being written.
        location: String,
        /// The cause.
        #[source]
        source: BoxError,
    },
    /// A record file could not be encoded.
    #[cfg(feature = "parquet")]
    #[cfg_attr(docsrs, doc(cfg(feature = "parquet")))]
    #[error("cannot encode {location}: {source}")]
    Encode {
        /// The record file.
        location: String,
        /// The cause.
        #[source]
        source: RecordError,
    },
    /// The task doing blocking writes failed.
    #[error("the writing task failed: {0}")]
    Task(#[source] BoxError),
}

/// An error and its causes as one line: each cause that adds something new
/// is appended after a colon. This is how typed errors become text where
/// only text can go (a zarrs `StorageError`, a template's message).
#[must_use]
pub fn error_chain(error: &dyn std::error::Error) -> String {
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

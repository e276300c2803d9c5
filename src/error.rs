//! The errors of every layer, typed, each keeping its cause as a `source`.
//!
//! Each layer returns its own error: parsing a document a [`ReferenceError`],
//! resolving a URL a [`ResolveError`], reading bytes a [`ReadError`], a
//! source of references a [`SourceError`], writing a [`WriteError`]. They
//! are flattened into text only at the zarrs boundary, where
//! [`zarrs_storage::StorageError`] can hold nothing else; that text still
//! names the key, the URL and every cause.

use std::ops::Range;
use std::path::PathBuf;

/// Why a reference set could not be opened or parsed.
///
/// Errors that happen later, while a store serves a key, are
/// [`zarrs_storage::StorageError`]s whose message names the key, the target URL
/// and the cause.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReferenceError {
    /// The reference file itself could not be read.
    #[error("cannot read reference file {location}: {source}")]
    Read {
        /// Where the reference file was looked for.
        location: String,
        /// What went wrong.
        #[source]
        source: ReadError,
    },
    /// The reference file was not found.
    #[error("cannot read reference file {location}: {reason}")]
    NotFound {
        /// Where the reference file was looked for.
        location: String,
        /// What was looked for.
        reason: String,
    },
    /// The location of the reference file, or a store registered for a prefix, cannot be used.
    #[error("cannot open {location}: {source}")]
    Resolve {
        /// The location as given.
        location: String,
        /// Why it cannot be used.
        #[source]
        source: ResolveError,
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
    /// read whole to report the line and column (see [`ReferenceError::Json`]).
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

/// Why a URL or location could not be turned into a place to read from.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ResolveError {
    /// The text is not a usable location.
    #[error("invalid location {location:?}: {reason}")]
    InvalidLocation {
        /// The location as written.
        location: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A reference file read from a remote location points at a local file.
    #[error(
        "a remote reference file may not read local files (see ReferenceStoreBuilder::allow_local_files_from_remote_references)"
    )]
    LocalFromRemote,
    /// A target URL outside every prefix allowed by
    /// [`ReferenceStoreBuilder::with_allowed_prefixes`](crate::ReferenceStoreBuilder::with_allowed_prefixes).
    #[error("{url} lies outside the allowed prefixes ({allowed}); see ReferenceStoreBuilder::with_allowed_prefixes")]
    NotAllowed {
        /// The target URL, resolved.
        url: String,
        /// The allowed prefixes, comma-separated.
        allowed: String,
    },
    /// A URL in a remote reference set with whitespace or control characters,
    /// which different readers would take to mean different files.
    #[error("the URL {url:?} has whitespace or control characters, which a remote reference set may not use")]
    Ambiguous {
        /// The URL as written.
        url: String,
    },
    /// A `null` URL, with no default target configured.
    #[error("the reference has a null URL and no default target is set (ReferenceStoreBuilder::with_target)")]
    NoDefaultTarget,
    /// The location cannot be written as a URL (a relative local path that cannot be made absolute).
    #[error("cannot express {0} as a URL")]
    NotAUrl(String),
    /// No object store serves the URL, and none could be created for it.
    #[error("{url}: {source}")]
    ObjectStore {
        /// The URL.
        url: String,
        /// `object_store`'s error.
        #[source]
        source: Box<object_store::Error>,
    },
}

/// Why bytes could not be read from a target, a reference file or a record file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// A local file could not be opened or read.
    #[error("{}", io_message(.source))]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The object store failed.
    #[error(transparent)]
    ObjectStore(Box<object_store::Error>),
    /// The requested bytes lie past the end of a local file.
    #[error(
        "bytes {}..{} lie past the end of the target file{}: the reference does not match the file",
        .range.start, .range.end, .file_len.map_or_else(String::new, |n| format!(" of {n} bytes"))
    )]
    PastEnd {
        /// The requested range.
        range: Range<u64>,
        /// The file's length, if known.
        file_len: Option<u64>,
    },
    /// The target answered with another number of bytes than requested.
    #[error(
        "asked for bytes {}..{} ({} bytes) but the target returned {got} bytes: {}",
        .range.start, .range.end, .range.end - .range.start,
        if *.got > .range.end - .range.start { "the server ignored the range asked for" }
        else { "the transfer broke off, or the reference does not match the target" }
    )]
    WrongLength {
        /// The requested range.
        range: Range<u64>,
        /// How many bytes came back.
        got: u64,
    },
    /// The file is larger than the reader may hold.
    #[error("the file is larger than the limit of {limit} bytes (Limits::with_max_document_bytes)")]
    TooLarge {
        /// The limit, in bytes.
        limit: u64,
    },
    /// The target changed while the reference set was being read: its
    /// offsets describe the version first read, and no bytes of another are
    /// returned.
    #[error(
        "the target changed while being read: its version (ETag) was {was}{}; the references describe the version first read",
        .now.as_ref().map_or_else(|| ", and the store refused to serve that version".to_owned(), |now| format!(", now {now}"))
    )]
    Changed {
        /// The ETag of the version first read.
        was: String,
        /// The ETag the store answered with, if it said.
        now: Option<String>,
    },
    /// The target is not what it was when it was pinned
    /// ([`ReferenceStoreBuilder::with_pins`](crate::ReferenceStoreBuilder::with_pins)):
    /// its references may no longer describe it, and none of its bytes are returned.
    #[error("the target changed since it was pinned: pinned {pinned}; found {found}")]
    Stale {
        /// What the pin recorded.
        pinned: String,
        /// What the read found.
        found: String,
    },
    /// One read of a target took longer than the deadline
    /// ([`ReferenceStoreBuilder::with_read_deadline`](crate::ReferenceStoreBuilder::with_read_deadline)).
    #[error("the read did not finish within {after:?} (ReferenceStoreBuilder::with_read_deadline)")]
    Deadline {
        /// The deadline.
        after: std::time::Duration,
    },
    /// The store answered fewer ranges than were asked of it.
    #[error("the store returned fewer ranges than requested")]
    MissingRanges,
    /// The I/O task was cancelled or panicked.
    #[error("I/O task failed: {0}")]
    Task(#[source] tokio::task::JoinError),
    /// The runtime for remote reads could not start.
    #[error("cannot start the I/O runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// Where to read could not be resolved.
    #[error(transparent)]
    Resolve(#[from] ResolveError),
}

impl From<object_store::Error> for ReadError {
    fn from(error: object_store::Error) -> Self {
        Self::ObjectStore(Box::new(error))
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
    /// Decoding the file took longer than the deadline
    /// ([`RecordCacheOptions::with_decode_deadline`](crate::RecordCacheOptions::with_decode_deadline)):
    /// the parquet crate can spin for minutes on a corrupt page header.
    #[error(
        "decoding took longer than {after:?}, so the file is likely corrupt \
         (RecordCacheOptions::with_decode_deadline)"
    )]
    TooSlow {
        /// The deadline.
        after: std::time::Duration,
    },
}

/// Why [`stats`](crate::inspect::stats), [`audit`](crate::inspect::audit) or
/// [`pin`](crate::inspect::pin) could not finish. A target that is missing,
/// short or changed is not an error: the audit reports it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InspectError {
    /// The references could not be walked.
    #[error("cannot walk the references: {0}")]
    Source(#[from] SourceError),
    /// A metadata document could not be read.
    #[error("{0}")]
    Storage(#[from] zarrs_storage::StorageError),
    /// The I/O runtime failed.
    #[error("{0}")]
    Runtime(#[from] ReadError),
}

/// Why a source of references could not answer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SourceError {
    /// A file holding references cannot be located.
    #[error("{what} {location}: {source}")]
    Resolve {
        /// What the file is, for messages (`parquet record file`).
        what: &'static str,
        /// Where it would be.
        location: String,
        /// The cause.
        #[source]
        source: ResolveError,
    },
    /// A file holding references could not be read.
    #[error("{what} {location}: {source}")]
    Read {
        /// What the file is, for messages (`parquet record file`).
        what: &'static str,
        /// Where it was read from.
        location: String,
        /// The cause.
        #[source]
        source: ReadError,
    },
    /// A parquet record file could not be decoded.
    #[cfg(feature = "parquet")]
    #[error("parquet record file {location}: {source}")]
    Record {
        /// Where it was read from.
        location: String,
        /// The cause.
        #[source]
        source: RecordError,
    },
    /// The run time for the source's reads failed.
    #[error(transparent)]
    Runtime(ReadError),
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
    /// The output object could not be put.
    #[error("cannot write {location}: {source}")]
    ObjectStore {
        /// The object being written.
        location: String,
        /// The cause.
        #[source]
        source: object_store::Error,
    },
    /// A record file could not be encoded.
    #[cfg(feature = "parquet")]
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
    Task(#[source] tokio::task::JoinError),
}

/// An error and its causes, each cause that adds something new appended after
/// a colon: how typed errors become text at the zarrs boundary.
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

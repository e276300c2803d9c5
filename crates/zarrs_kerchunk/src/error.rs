//! The store's errors, typed, each keeping its cause as a `source`.
//!
//! Opening references returns an [`OpenError`], resolving a URL a
//! [`ResolveError`], reading bytes a [`ReadError`]; parsing, sources and
//! writing have the format crate's errors ([`kerchunk::ParseError`],
//! [`kerchunk::SourceError`], [`kerchunk::WriteError`]). They are flattened
//! into text only at the zarrs boundary, where
//! [`zarrs_storage::StorageError`] can hold nothing else; that text still
//! names the key, the URL and every cause.

use std::ops::Range;
use std::path::PathBuf;

use kerchunk::ParseError;

/// Why a reference set could not be opened.
///
/// Errors that happen later, while a store serves a key, are
/// [`zarrs_storage::StorageError`]s whose message names the key, the target URL
/// and the cause.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
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
    /// The references are not a valid reference set.
    #[error(transparent)]
    Parse(#[from] ParseError),
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
    /// The bytes read could not be held: the process's memory is limited
    /// (a container's limit, `ulimit -v`) below what the limits allow.
    #[error("cannot allocate {bytes} bytes to hold what was read (the process's memory is limited)")]
    OutOfMemory {
        /// The size that could not be had.
        bytes: usize,
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

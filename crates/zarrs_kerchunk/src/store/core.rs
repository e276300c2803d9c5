//! What the sync and async stores share: a request for a key becomes a
//! [`Plan`] (the answer, or the reads to make and how to finish them). No
//! I/O happens here.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError, RwLock};

use bytes::Bytes;
use object_store::GetRange;
use zarrs_storage::byte_range::{ByteRange, InvalidByteRangeError};
use zarrs_storage::{StorageError, StoreKey};

use super::read_ahead::{Issue, ReadAhead, Taken, Wanted};
use kerchunk::{SourceError, error_chain};

use crate::error::{ReadError, ResolveError};
use crate::fetch::{BatchOptions, FileRequests, Request};
use crate::resolve::{Location, Resolver, Source};
use kerchunk::zarr::metadata;
use kerchunk::{Listing, Lookup, OwnedReference, ReferenceSource};

/// What an array's metadata is checked against before zarrs reads it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MetadataPolicy {
    /// The largest chunk an array's metadata may declare, in bytes.
    pub(crate) max_chunk_bytes: u64,
    /// Which codec ids have a decoder: an array with another is refused, naming it.
    pub(crate) decodable: metadata::CodecCheck,
}

/// At most this many resolved target URLs are remembered (a set may name millions of files).
const MAX_REMEMBERED_TARGETS: usize = 65_536;

/// How a store serves the set's metadata documents (`.zarray`, `.zattrs`, `.zgroup`).
///
/// Both views refuse an array whose chunk is larger than
/// [`Limits::with_max_chunk_bytes`](kerchunk::Limits::with_max_chunk_bytes)
/// or whose chunk grid has more than 2^64 chunks, before any reader allocates for it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum MetadataView {
    /// What zarrs needs: kerchunk's spellings that zarrs cannot open are
    /// rewritten to exact equivalents, and arrays whose codecs or dtypes zarrs
    /// cannot decode are refused with an error naming them (see
    /// [`kerchunk::zarr::metadata`]). The view of every zarrs array.
    #[default]
    Zarrs,
    /// Byte for byte as the references hold them, for readers other than
    /// zarrs (zarr-python reads `|S5` as bytes, and decodes numcodecs filters
    /// such as `delta` that zarrs lacks).
    AsWritten,
}

/// A resolution, as remembered: resolution is deterministic, so failures are kept too.
pub(crate) type Resolution = Result<Resolved, Arc<ResolveError>>;

/// What every store shares: the references and how to reach their targets.
#[derive(Debug)]
pub(crate) struct Core {
    source: Arc<dyn ReferenceSource>,
    /// Where the references were read from; relative URLs resolve against its folder.
    location: Location,
    resolver: Arc<Resolver>,
    /// The target URLs resolved so far.
    targets: RwLock<HashMap<Arc<str>, Resolution>>,
    /// Where `null` URLs point, if configured, and its resolution.
    default_target: Option<String>,
    default_resolution: OnceLock<Resolution>,
    /// How batches (prefetches) are read.
    batch: BatchOptions,
    /// What arrays' metadata is checked against.
    policy: MetadataPolicy,
    /// Values read ahead by a prefetch, until read whole or cleared.
    prefetched: Mutex<HashMap<Box<str>, Bytes>>,
    /// Chunks read ahead of sequential reads.
    read_ahead: ReadAhead,
}

/// A target URL, resolved.
#[derive(Clone, Debug)]
pub(crate) struct Resolved {
    pub(crate) source: Source,
    /// The absolute location, for messages.
    shown: String,
    /// The location as a URL (`file://` for a local file), as reports and pins name it.
    url: String,
}

impl Resolved {
    /// The location as a URL (`file://` for a local file), as reports and pins name it.
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// The error for a failed read of `key` from this target.
    pub(crate) fn error(&self, key: &str, cause: &ReadError) -> StorageError {
        StorageError::Other(format!("cannot read key {key:?}: reference target {}: {}", self.shown, error_chain(cause)))
    }
}

/// How to answer a read.
pub(crate) enum Plan {
    /// The answer, with no I/O.
    Ready(Vec<Bytes>),
    /// Reads to make first.
    Fetch(Fetch),
}

/// Reads of one target for one key, and how to turn their results into the answer.
pub(crate) struct Fetch {
    key: String,
    pub(crate) resolved: Resolved,
    pub(crate) requests: Vec<Request>,
    serve: Serve,
    /// The length of the chunk, if this is a whole read of a chunk's range.
    whole_chunk: Option<u64>,
}

/// What to serve from the fetched bytes.
enum Serve {
    /// The bytes as fetched, one value per request.
    AsFetched,
    /// Parts of a range reference: the bytes as fetched, but for the last
    /// request's, a check that the whole reference fits its target.
    Parts,
    /// A metadata document (one whole-value request): rewritten (checked
    /// against this policy), then sliced by these ranges (`None`: whole).
    Metadata { ranges: Option<Vec<ByteRange>>, policy: MetadataPolicy, view: MetadataView },
}

impl Fetch {
    /// The length of the chunk this reads whole from a remote target, if it
    /// does: the reads that read-ahead follows.
    pub(crate) fn whole_remote_chunk(&self) -> Option<u64> {
        self.whole_chunk.filter(|_| self.resolved.source.is_remote())
    }

    /// Turn the read results into the answer, with errors naming key, URL and cause.
    pub(crate) fn finish(self, fetched: Result<Vec<Bytes>, ReadError>) -> Result<Vec<Bytes>, StorageError> {
        let fetched = fetched.map_err(|cause| self.resolved.error(&self.key, &cause))?;
        match self.serve {
            Serve::AsFetched => Ok(fetched),
            Serve::Parts => {
                let mut parts = fetched;
                parts.pop();
                Ok(parts)
            }
            Serve::Metadata { ranges, policy, view } => {
                let document = fetched.into_iter().next().unwrap_or_default();
                let served = serve_metadata(&self.key, document, policy, view)?;
                match ranges {
                    None => Ok(vec![served]),
                    Some(ranges) => slice_ranges(&served, ranges),
                }
            }
        }
    }
}

/// A key and the bytes of its file it needs (`None`: the whole file).
type KeyRange = (StoreKey, Option<std::ops::Range<u64>>);

/// The files a prefetch reads, each with the keys it serves and their ranges (`None`: the whole file).
pub(crate) struct Prefetch {
    files: Vec<(Resolved, Vec<KeyRange>)>,
}

impl Prefetch {
    /// The requests for [`read_batch`](crate::fetch::read_batch).
    pub(crate) fn requests(&self) -> Vec<FileRequests> {
        self.files
            .iter()
            .map(|(resolved, keys)| (resolved.source.clone(), keys.iter().map(|(_, range)| range.clone()).collect()))
            .collect()
    }
}

/// How to answer `size_key`.
pub(crate) enum SizePlan {
    Known(u64),
    /// The size of a whole target file, which must be asked of its source.
    Stat(Resolved),
    /// A metadata key served from a target: its size is that of the rewritten document.
    Document,
}

/// A failure of the source of references, as the store reports it for `key`.
pub(crate) fn source_error(key: &str, error: &SourceError) -> StorageError {
    StorageError::Other(format!("cannot read key {key:?}: {}", error_chain(error)))
}

impl Core {
    pub(crate) fn new(
        source: Arc<dyn ReferenceSource>,
        location: Location,
        resolver: Arc<Resolver>,
        default_target: Option<String>,
        batch: BatchOptions,
        policy: MetadataPolicy,
        read_ahead: u64,
    ) -> Self {
        Self {
            source,
            location,
            resolver,
            targets: RwLock::default(),
            default_target,
            default_resolution: OnceLock::new(),
            batch,
            policy,
            prefetched: Mutex::default(),
            read_ahead: ReadAhead::new(read_ahead, batch),
        }
    }

    pub(crate) fn source(&self) -> &Arc<dyn ReferenceSource> {
        &self.source
    }

    pub(crate) fn batch_options(&self) -> BatchOptions {
        self.batch
    }

    /// What `key` holds, or the read that will tell.
    pub(crate) fn lookup(&self, key: &StoreKey) -> Result<Lookup, StorageError> {
        self.source.lookup(key.as_str()).map_err(|e| source_error(key.as_str(), &e))
    }

    /// The listing of the keys under `prefix`; `dir`: only those directly under it.
    pub(crate) fn list(&self, prefix: &str, dir: bool) -> Result<Listing, StorageError> {
        let listing = if dir { self.source.list_dir(prefix) } else { self.source.list_prefix(prefix) };
        listing.map_err(|e| StorageError::Other(format!("cannot list {prefix:?}: {}", error_chain(&e))))
    }

    /// Group the references of `values` by target file for one batch read.
    /// Inline values and metadata are not prefetched (they need no read, or a rewrite).
    pub(crate) fn plan_prefetch(&self, values: Vec<(StoreKey, OwnedReference)>) -> Result<Prefetch, StorageError> {
        let mut files: Vec<(Resolved, Vec<KeyRange>)> = Vec::new();
        let mut by_location: HashMap<String, usize> = HashMap::new();
        for (key, value) in values {
            if metadata::is_metadata_key(key.as_str()) {
                continue;
            }
            let (url, range) = match value {
                // Its read fails when it is made, not the batch's.
                OwnedReference::Inline(_) | OwnedReference::Malformed { .. } => continue,
                OwnedReference::Whole { url } => (url, None),
                OwnedReference::Range { url, offset, length } => (url, Some(byte_range(&key, offset, length)?)),
            };
            let resolved = self.resolve_for(&key, url.as_ref())?;
            let index = *by_location.entry(resolved.shown.clone()).or_insert_with(|| {
                files.push((resolved, Vec::new()));
                files.len() - 1
            });
            files[index].1.push((key, range));
        }
        Ok(Prefetch { files })
    }

    /// Keep what a batch read for `prefetch`; returns the number of bytes kept.
    pub(crate) fn keep_prefetched(
        &self,
        prefetch: Prefetch,
        fetched: Vec<Result<Vec<Bytes>, ReadError>>,
    ) -> Result<u64, StorageError> {
        let mut kept = 0;
        let mut prefetched = self.prefetched.lock().unwrap_or_else(PoisonError::into_inner);
        for ((resolved, keys), values) in prefetch.files.into_iter().zip(fetched) {
            let values = values.map_err(|cause| resolved.error(keys[0].0.as_str(), &cause))?;
            for ((key, _), value) in keys.into_iter().zip(values) {
                kept += value.len() as u64;
                prefetched.insert(key.as_str().into(), value);
            }
        }
        Ok(kept)
    }

    /// A read of `key` answered from prefetched bytes; a whole read releases them.
    pub(crate) fn read_prefetched(
        &self,
        key: &StoreKey,
        ranges: Option<&[ByteRange]>,
    ) -> Option<Result<Vec<Bytes>, StorageError>> {
        let mut prefetched = self.prefetched.lock().unwrap_or_else(PoisonError::into_inner);
        if prefetched.is_empty() {
            return None;
        }
        match ranges {
            None => prefetched.remove(key.as_str()).map(|value| Ok(vec![value])),
            Some(ranges) => prefetched.get(key.as_str()).map(|value| slice_ranges(value, ranges.to_vec())),
        }
    }

    /// Drop every prefetched value not yet read, and everything read ahead.
    pub(crate) fn clear_prefetched(&self) {
        self.prefetched.lock().unwrap_or_else(PoisonError::into_inner).clear();
        self.read_ahead.clear();
    }

    /// The chunk `key`, if it was read ahead of an earlier read.
    pub(crate) fn take_read_ahead(&self, key: &StoreKey) -> Option<Taken> {
        self.read_ahead.take(key.as_str())
    }

    /// After a whole read of the remote chunk `key` of `length` bytes: the
    /// chunks to read ahead of it (held here until read, or dropped), and
    /// the reads that fetch them, to be run in the background.
    pub(crate) fn read_ahead(&self, key: &StoreKey, length: u64) -> Option<Issue> {
        // The reservation is given back if planning fails (dropped on return).
        let Wanted { reservation, chunks } = self.read_ahead.follow(key.as_str(), length, &*self.source)?;
        let values = chunks.into_iter().filter_map(|(key, value)| Some((StoreKey::new(key).ok()?, value)));
        let mut prefetch = self.plan_prefetch(values.collect()).ok()?;
        // Local files are read on the calling thread, faster than held copies.
        prefetch.files.retain(|(resolved, _)| resolved.source.is_remote());
        let placed = prefetch
            .files
            .iter()
            .enumerate()
            .flat_map(|(file, (_, keys))| {
                keys.iter().enumerate().filter_map(move |(index, (key, range))| {
                    let range = range.as_ref()?;
                    Some((key.as_str().to_owned(), file, index, range.end - range.start))
                })
            })
            .collect();
        self.read_ahead.hold(reservation, placed, prefetch.requests())
    }

    /// The source of a target URL (`None`: the default target), resolved once.
    pub(crate) fn resolve(&self, url: Option<&Arc<str>>) -> Resolution {
        let Some(url) = url else {
            let resolve_default = || match &self.default_target {
                None => Err(Arc::new(ResolveError::NoDefaultTarget)),
                Some(text) => self.resolve_text(text),
            };
            return self.default_resolution.get_or_init(resolve_default).clone();
        };
        if let Some(resolution) = self.targets.read().unwrap_or_else(PoisonError::into_inner).get(url) {
            return resolution.clone();
        }
        let resolution = self.resolve_text(url);
        let mut targets = self.targets.write().unwrap_or_else(PoisonError::into_inner);
        if targets.len() >= MAX_REMEMBERED_TARGETS {
            targets.clear();
        }
        targets.insert(Arc::clone(url), resolution.clone());
        resolution
    }

    fn resolve_text(&self, text: &str) -> Resolution {
        let (location, source) = self.resolver.target(text, &self.location)?;
        Ok(Resolved { source, shown: location.to_string(), url: location.to_url()?.into() })
    }

    /// [`resolve`](Self::resolve), with a failure reported for `key`.
    fn resolve_for(&self, key: &StoreKey, url: Option<&Arc<str>>) -> Result<Resolved, StorageError> {
        self.resolve(url).map_err(|cause| {
            let written = url.map_or("null", |url| url);
            StorageError::Other(format!(
                "cannot read key {:?}: reference target {written:?}: {}",
                key.as_str(),
                error_chain(&*cause)
            ))
        })
    }

    /// How to read `value`, the value of `key`: whole (`ranges` is `None`) or
    /// in parts, metadata in the `view` asked for.
    pub(crate) fn plan(
        &self,
        key: &StoreKey,
        value: OwnedReference,
        ranges: Option<Vec<ByteRange>>,
        view: MetadataView,
    ) -> Result<Plan, StorageError> {
        let is_metadata = metadata::is_metadata_key(key.as_str());
        let whole_chunk = match &value {
            OwnedReference::Range { length, .. } if ranges.is_none() && !is_metadata => Some(*length),
            _ => None,
        };
        let fetch = |url: Option<Arc<str>>, requests: Vec<Request>, serve: Serve| {
            let resolved = self.resolve_for(key, url.as_ref())?;
            Ok(Plan::Fetch(Fetch { key: key.as_str().to_owned(), resolved, requests, serve, whole_chunk }))
        };
        match value {
            OwnedReference::Malformed { reason } => Err(malformed(key, &reason)),
            OwnedReference::Inline(mut value) => {
                if is_metadata {
                    value = serve_metadata(key.as_str(), value, self.policy, view)?;
                }
                Ok(Plan::Ready(match ranges {
                    None => vec![value],
                    Some(ranges) => slice_ranges(&value, ranges)?,
                }))
            }
            OwnedReference::Whole { url } if is_metadata => {
                fetch(url, vec![Request::Whole], Serve::Metadata { ranges, policy: self.policy, view })
            }
            OwnedReference::Range { url, offset, length } if is_metadata => fetch(
                url,
                vec![Request::Part(GetRange::Bounded(byte_range(key, offset, length)?))],
                Serve::Metadata { ranges, policy: self.policy, view },
            ),
            OwnedReference::Whole { url } => {
                let requests = match ranges {
                    None => vec![Request::Whole],
                    Some(ranges) => ranges.into_iter().map(whole_file_request).collect(),
                };
                fetch(url, requests, Serve::AsFetched)
            }
            OwnedReference::Range { url, offset, length } => {
                let whole = byte_range(key, offset, length)?;
                match ranges {
                    None => fetch(url, vec![Request::Part(GetRange::Bounded(whole))], Serve::AsFetched),
                    Some(ranges) => {
                        let mut requests = ranges
                            .into_iter()
                            .map(|r| {
                                check_range(r, length)?;
                                // Within `whole`, whose end did not overflow.
                                Ok(Request::Part(GetRange::Bounded(offset + r.start(length)..offset + r.end(length))))
                            })
                            .collect::<Result<Vec<_>, StorageError>>()?;
                        // A reference that does not fit its target is an error for every read of it,
                        // parts included, as it is for a whole read.
                        requests.push(Request::Fits(whole.end));
                        fetch(url, requests, Serve::Parts)
                    }
                }
            }
        }
    }

    /// How to know the size of `value`, the value of `key` (metadata in `view`).
    pub(crate) fn plan_size(
        &self,
        key: &StoreKey,
        value: OwnedReference,
        view: MetadataView,
    ) -> Result<SizePlan, StorageError> {
        if metadata::is_metadata_key(key.as_str()) {
            return match self.plan(key, value, None, view)? {
                Plan::Ready(values) => Ok(SizePlan::Known(values.first().map_or(0, |v| v.len() as u64))),
                Plan::Fetch(_) => Ok(SizePlan::Document),
            };
        }
        match value {
            OwnedReference::Malformed { reason } => Err(malformed(key, &reason)),
            OwnedReference::Inline(value) => Ok(SizePlan::Known(value.len() as u64)),
            OwnedReference::Range { length, .. } => Ok(SizePlan::Known(length)),
            OwnedReference::Whole { url } => Ok(SizePlan::Stat(self.resolve_for(key, url.as_ref())?)),
        }
    }
}

/// A partial read of a whole-file reference, whose length is not known in advance.
fn whole_file_request(range: ByteRange) -> Request {
    match range {
        ByteRange::FromStart(0, None) => Request::Whole,
        ByteRange::FromStart(start, None) => Request::Part(GetRange::Offset(start)),
        ByteRange::FromStart(start, Some(len)) => Request::Part(GetRange::Bounded(start..start.saturating_add(len))),
        ByteRange::Suffix(len) => Request::Part(GetRange::Suffix(len)),
    }
}

/// A range must lie inside a value of `size` bytes (checked before `ByteRange::start`, which underflows).
fn check_range(range: ByteRange, size: u64) -> Result<(), StorageError> {
    let inside = match range {
        ByteRange::FromStart(offset, len) => offset.checked_add(len.unwrap_or(0)).is_some_and(|end| end <= size),
        ByteRange::Suffix(len) => len <= size,
    };
    if inside { Ok(()) } else { Err(InvalidByteRangeError::new(range, size).into()) }
}

fn slice_ranges(value: &Bytes, ranges: Vec<ByteRange>) -> Result<Vec<Bytes>, StorageError> {
    let size = value.len() as u64;
    ranges
        .into_iter()
        .map(|range| {
            check_range(range, size)?;
            #[expect(clippy::cast_possible_truncation, reason = "inside a value that is in memory")]
            Ok(value.slice(range.start(size) as usize..range.end(size) as usize))
        })
        .collect()
}

/// The metadata document `key` holds, as `view` serves it.
fn serve_metadata(
    key: &str,
    document: Bytes,
    policy: MetadataPolicy,
    view: MetadataView,
) -> Result<Bytes, StorageError> {
    let served = match view {
        MetadataView::Zarrs => {
            metadata::rewrite(key, &document, policy.max_chunk_bytes, policy.decodable).map(|rewritten| match rewritten
            {
                None => document,
                Some(rewritten) => Bytes::from(rewritten),
            })
        }
        MetadataView::AsWritten => metadata::check_size(key, &document, policy.max_chunk_bytes).map(|()| document),
    };
    served.map_err(|unsupported| {
        StorageError::InvalidMetadata(
            StoreKey::new(key).unwrap_or_else(|_| StoreKey::new("").expect("the empty key is valid")),
            unsupported.to_string(),
        )
    })
}

/// The error of every read of a key whose reference is malformed.
fn malformed(key: &StoreKey, reason: &str) -> StorageError {
    StorageError::Other(format!("cannot read key {:?}: its reference is malformed: {reason}", key.as_str()))
}

/// The bytes `[offset, offset + length)` that `key`'s reference names, or an
/// error naming the key if the end lies past `u64::MAX` (a reference made by
/// hand, or by a source of one's own, may say so).
fn byte_range(key: &StoreKey, offset: u64, length: u64) -> Result<std::ops::Range<u64>, StorageError> {
    let end = offset.checked_add(length).ok_or_else(|| {
        StorageError::Other(format!(
            "cannot read key {:?}: its reference's offset {offset} + length {length} lies past the largest file offset",
            key.as_str()
        ))
    })?;
    Ok(offset..end)
}

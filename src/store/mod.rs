//! The zarrs stores over a [`ReferenceSet`].
//!
//! All the logic is in [`Core`]: a request for a key becomes a [`Plan`]
//! (the answer, or the reads to make and how to finish them). The sync
//! [`ReferenceStore`] and the async [`AsyncReferenceStore`] only carry out
//! the reads their own way.

mod asynchronous;
mod listing;
mod runtime;
mod sync;

use std::sync::OnceLock;

use bytes::Bytes;
use object_store::GetRange;
use zarrs_storage::byte_range::{ByteRange, InvalidByteRangeError};
use zarrs_storage::{StorageError, StoreKey};

pub use asynchronous::AsyncReferenceStore;
pub(crate) use runtime::BlockingRuntime;
pub use sync::ReferenceStore;
pub(crate) use sync::read_blocking;

use crate::fetch::Request;
use crate::metadata;
use crate::model::{Reference, ReferenceSet, UrlId};
use crate::resolve::{Location, Resolver, Source};

/// What every store shares: the references and how to reach their targets.
#[derive(Debug)]
pub(crate) struct Core {
    refs: ReferenceSet,
    /// Where the reference file was read from; relative URLs resolve against it.
    location: Location,
    resolver: Resolver,
    /// The resolved source of each interned URL, filled on first use.
    sources: Vec<OnceLock<Result<Resolved, String>>>,
    /// Where `null` URLs point, if configured.
    target: Option<String>,
    target_source: OnceLock<Result<Resolved, String>>,
}

/// A target URL, resolved.
#[derive(Clone, Debug)]
pub(crate) struct Resolved {
    source: Source,
    /// The absolute location, for messages.
    shown: String,
}

impl Resolved {
    /// The error for a failed read of `key` from this target.
    pub(crate) fn error(&self, key: &str, cause: &str) -> StorageError {
        StorageError::Other(format!("cannot read key {key:?}: reference target {}: {cause}", self.shown))
    }
}

/// How to answer one request.
pub(crate) enum Plan {
    /// The key has no reference.
    Missing,
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
}

/// What to serve from the fetched bytes.
pub(crate) enum Serve {
    /// The bytes as fetched, one value per request.
    AsFetched,
    /// A metadata document (one whole-value request): rewritten, then sliced by these ranges (`None`: whole).
    Metadata(Option<Vec<ByteRange>>),
}

impl Fetch {
    /// Turn the read results into the answer, with errors naming key, URL and cause.
    pub(crate) fn finish(self, fetched: Result<Vec<Bytes>, String>) -> Result<Vec<Bytes>, StorageError> {
        let fetched = fetched.map_err(|cause| self.resolved.error(&self.key, &cause))?;
        match self.serve {
            Serve::AsFetched => Ok(fetched),
            Serve::Metadata(ranges) => {
                let document = fetched.into_iter().next().unwrap_or_default();
                let served = serve_metadata(&self.key, document)?;
                match ranges {
                    None => Ok(vec![served]),
                    Some(ranges) => slice_ranges(&served, ranges),
                }
            }
        }
    }
}

/// How to answer `size_key`.
pub(crate) enum SizePlan {
    Known(Option<u64>),
    /// The size of a whole target file, which must be asked of its source.
    Stat(Resolved, String),
    /// A metadata key served from a target: its size is that of the rewritten document.
    Document,
}

impl Core {
    pub(crate) fn new(refs: ReferenceSet, location: Location, resolver: Resolver, target: Option<String>) -> Self {
        let sources = std::iter::repeat_with(OnceLock::new).take(refs.urls().len()).collect();
        Self { refs, location, resolver, sources, target, target_source: OnceLock::new() }
    }

    pub(crate) fn references(&self) -> &ReferenceSet {
        &self.refs
    }

    /// The source of an interned URL, resolved once.
    fn resolve(&self, url: UrlId) -> Result<Resolved, String> {
        let (cell, text) = match url.index() {
            Some(i) => (&self.sources[i], &*self.refs.urls()[i]),
            None => (
                &self.target_source,
                self.target.as_deref().ok_or(
                    "the reference has a null URL and no default target is set (ReferenceStoreBuilder::with_target)",
                )?,
            ),
        };
        cell.get_or_init(|| {
            let location = self.location.join(text).map_err(|e| e.to_string())?;
            let source = self.resolver.source(&location, &self.location).map_err(|e| format!("{location}: {e}"))?;
            Ok(Resolved { source, shown: location.to_string() })
        })
        .clone()
    }

    fn unresolvable(key: &StoreKey, url: UrlId, refs: &ReferenceSet, cause: &str) -> StorageError {
        let written = refs.url(url).unwrap_or("null");
        StorageError::Other(format!("cannot read key {:?}: reference target {written:?}: {cause}", key.as_str()))
    }

    /// The whole value of `key`.
    pub(crate) fn plan_get(&self, key: &StoreKey) -> Result<Plan, StorageError> {
        self.plan(key, None)
    }

    /// Parts of the value of `key`.
    pub(crate) fn plan_get_partial(&self, key: &StoreKey, ranges: Vec<ByteRange>) -> Result<Plan, StorageError> {
        self.plan(key, Some(ranges))
    }

    fn plan(&self, key: &StoreKey, ranges: Option<Vec<ByteRange>>) -> Result<Plan, StorageError> {
        let Some(reference) = self.refs.get(key.as_str()) else { return Ok(Plan::Missing) };
        let is_metadata = metadata::is_metadata_key(key.as_str());
        let fetch = |url: UrlId, requests: Vec<Request>, serve: Serve| {
            let resolved = self.resolve(url).map_err(|cause| Self::unresolvable(key, url, &self.refs, &cause))?;
            Ok(Plan::Fetch(Fetch { key: key.as_str().to_owned(), resolved, requests, serve }))
        };
        match reference {
            Reference::Inline(_) => {
                let mut value = self.refs.inline_bytes(key.as_str()).expect("inline reference");
                if is_metadata {
                    value = serve_metadata(key.as_str(), value)?;
                }
                Ok(Plan::Ready(match ranges {
                    None => vec![value],
                    Some(ranges) => slice_ranges(&value, ranges)?,
                }))
            }
            Reference::Whole(url) if is_metadata => fetch(url, vec![Request::Whole], Serve::Metadata(ranges)),
            Reference::Range { url, offset, length } if is_metadata => {
                fetch(url, vec![Request::Part(GetRange::Bounded(offset..offset + length))], Serve::Metadata(ranges))
            }
            Reference::Whole(url) => {
                let requests = match ranges {
                    None => vec![Request::Whole],
                    Some(ranges) => ranges.into_iter().map(whole_file_request).collect(),
                };
                fetch(url, requests, Serve::AsFetched)
            }
            Reference::Range { url, offset, length } => {
                let requests = match ranges {
                    None => vec![Request::Part(GetRange::Bounded(offset..offset + length))],
                    Some(ranges) => ranges
                        .into_iter()
                        .map(|r| {
                            check_range(r, length)?;
                            Ok(Request::Part(GetRange::Bounded(offset + r.start(length)..offset + r.end(length))))
                        })
                        .collect::<Result<_, StorageError>>()?,
                };
                fetch(url, requests, Serve::AsFetched)
            }
        }
    }

    /// The size of the value of `key`.
    pub(crate) fn plan_size(&self, key: &StoreKey) -> Result<SizePlan, StorageError> {
        let Some(reference) = self.refs.get(key.as_str()) else { return Ok(SizePlan::Known(None)) };
        if metadata::is_metadata_key(key.as_str()) {
            return match self.plan_get(key)? {
                Plan::Ready(values) => Ok(SizePlan::Known(values.first().map(|v| v.len() as u64))),
                _ => Ok(SizePlan::Document),
            };
        }
        match reference {
            Reference::Inline(value) => Ok(SizePlan::Known(Some(value.len() as u64))),
            Reference::Range { length, .. } => Ok(SizePlan::Known(Some(length))),
            Reference::Whole(url) => {
                let resolved = self.resolve(url).map_err(|cause| Self::unresolvable(key, url, &self.refs, &cause))?;
                Ok(SizePlan::Stat(resolved, key.as_str().to_owned()))
            }
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
            #[allow(clippy::cast_possible_truncation)] // inside a value that is in memory
            Ok(value.slice(range.start(size) as usize..range.end(size) as usize))
        })
        .collect()
}

fn serve_metadata(key: &str, document: Bytes) -> Result<Bytes, StorageError> {
    match metadata::rewrite(key, &document) {
        Ok(None) => Ok(document),
        Ok(Some(rewritten)) => Ok(Bytes::from(rewritten)),
        Err(reason) => Err(StorageError::InvalidMetadata(
            StoreKey::new(key).unwrap_or_else(|_| StoreKey::new("").expect("the empty key is valid")),
            reason,
        )),
    }
}

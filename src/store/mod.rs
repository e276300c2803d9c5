//! The zarrs stores over a [`ReferenceSet`].
//!
//! All the logic is in [`Core`]: a request for a key becomes a [`Plan`]
//! (the answer, or the reads to make and how to finish them). The sync
//! [`ReferenceStore`] and the async [`AsyncReferenceStore`] only carry out
//! the reads their own way.

mod asynchronous;
mod export;
mod listing;
mod parquet;
mod records;
mod region;
mod runtime;
mod sync;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use bytes::Bytes;
use object_store::GetRange;
use zarrs_storage::byte_range::{ByteRange, InvalidByteRangeError};
use zarrs_storage::{StorageError, StoreKey};

pub use asynchronous::AsyncReferenceStore;
pub use export::Progress;
pub(crate) use listing::Listing;
pub(crate) use parquet::ParquetIndex;
pub use records::RecordCacheOptions;
pub(crate) use records::RecordFetch;
pub(crate) use runtime::BlockingRuntime;
pub use sync::ReferenceStore;

use crate::fetch::{BatchOptions, Request};
use crate::metadata;
use crate::model::{OwnedReference, Reference, ReferenceSet, UrlId};
use crate::parquet::Record;
use crate::resolve::{Location, Resolver, Source};

/// Where the references of a store live.
#[derive(Debug)]
pub(crate) enum Index {
    /// A JSON reference set, all in memory.
    Json(ReferenceSet),
    /// A parquet reference root, whose record files are loaded on demand.
    Parquet(ParquetIndex),
}

/// What every store shares: the references and how to reach their targets.
#[derive(Debug)]
pub(crate) struct Core {
    index: Index,
    /// Where the references were read from; relative URLs resolve against its folder.
    location: Location,
    resolver: Resolver,
    /// The resolved source of each interned URL of a JSON set, filled on first use.
    sources: Vec<OnceLock<Result<Resolved, String>>>,
    /// The resolved sources of parquet paths seen so far.
    paths: Mutex<HashMap<Arc<str>, Result<Resolved, String>>>,
    /// Where `null` URLs point, if configured.
    target: Option<String>,
    target_source: OnceLock<Result<Resolved, String>>,
    /// How batches (prefetches) are read.
    batch: BatchOptions,
    /// Values read ahead by a prefetch, until read whole or cleared.
    prefetched: Mutex<HashMap<Box<str>, Bytes>>,
}

/// At most this many resolved parquet paths are remembered (a set may name millions of files).
const MAX_REMEMBERED_PATHS: usize = 65_536;

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

/// The target file of a reference.
#[derive(Clone, Debug)]
pub(crate) enum Target {
    /// An interned URL of a JSON set.
    Url(UrlId),
    /// A path from a parquet record.
    Path(Arc<str>),
}

/// What a key holds, found in the references.
#[derive(Clone, Debug)]
pub(crate) enum Value {
    Inline(Bytes),
    Whole(Target),
    Range { target: Target, offset: u64, length: u64 },
}

/// The outcome of looking a key up.
pub(crate) enum Lookup {
    /// The key has no reference.
    Missing,
    Found(Value),
    /// The key's reference is row `row` of a record file that must be loaded first.
    Load {
        record: RecordFetch,
        row: usize,
    },
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

/// A key and the bytes of its file it needs (`None`: the whole file).
type KeyRange = (StoreKey, Option<std::ops::Range<u64>>);

/// The files a prefetch reads, each with the keys it serves and their ranges (`None`: the whole file).
pub(crate) struct Prefetch {
    files: Vec<(Resolved, Vec<KeyRange>)>,
}

impl Prefetch {
    /// The requests for [`fetch::read_batch`](crate::fetch::read_batch).
    pub(crate) fn requests(&self) -> Vec<crate::fetch::FileRequests> {
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

impl Core {
    pub(crate) fn new(index: Index, location: Location, resolver: Resolver, target: Option<String>) -> Self {
        let urls = match &index {
            Index::Json(refs) => refs.urls().len(),
            Index::Parquet(_) => 0,
        };
        let sources = std::iter::repeat_with(OnceLock::new).take(urls).collect();
        Self {
            index,
            location,
            resolver,
            sources,
            paths: Mutex::default(),
            target,
            target_source: OnceLock::new(),
            batch: BatchOptions::default(),
            prefetched: Mutex::default(),
        }
    }

    /// Read batches with these options.
    pub(crate) fn with_batch_options(mut self, batch: BatchOptions) -> Self {
        self.batch = batch;
        self
    }

    pub(crate) fn batch_options(&self) -> BatchOptions {
        self.batch
    }

    /// Group the references of `values` by target file for one batch read.
    /// Inline values and metadata are not prefetched (they need no read, or a rewrite).
    pub(crate) fn plan_prefetch(&self, values: Vec<(StoreKey, Value)>) -> Result<Prefetch, StorageError> {
        let mut files: Vec<(Resolved, Vec<KeyRange>)> = Vec::new();
        let mut by_location: HashMap<String, usize> = HashMap::new();
        for (key, value) in values {
            if metadata::is_metadata_key(key.as_str()) {
                continue;
            }
            let (target, range) = match value {
                Value::Inline(_) => continue,
                Value::Whole(target) => (target, None),
                Value::Range { target, offset, length } => (target, Some(offset..offset + length)),
            };
            let resolved = self.resolve(&target).map_err(|cause| self.unresolvable(&key, &target, &cause))?;
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
        fetched: Vec<Result<Vec<Bytes>, String>>,
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

    /// Drop every prefetched value not yet read.
    pub(crate) fn clear_prefetched(&self) {
        self.prefetched.lock().unwrap_or_else(PoisonError::into_inner).clear();
    }

    /// The in-memory references of a JSON set.
    pub(crate) fn references(&self) -> Option<&ReferenceSet> {
        match &self.index {
            Index::Json(refs) => Some(refs),
            Index::Parquet(_) => None,
        }
    }

    /// What `key` holds, or which record must be loaded to know.
    pub(crate) fn lookup(&self, key: &StoreKey) -> Result<Lookup, StorageError> {
        match &self.index {
            Index::Json(refs) => Ok(match refs.get(key.as_str()) {
                None => Lookup::Missing,
                Some(Reference::Inline(_)) => {
                    Lookup::Found(Value::Inline(refs.inline_bytes(key.as_str()).expect("inline reference")))
                }
                Some(Reference::Whole(url)) => Lookup::Found(Value::Whole(Target::Url(url))),
                Some(Reference::Range { url, offset, length }) => {
                    Lookup::Found(Value::Range { target: Target::Url(url), offset, length })
                }
            }),
            Index::Parquet(index) => self.lookup_parquet(index, key),
        }
    }

    /// What row `row` of a loaded record holds, or the error loading it.
    pub(crate) fn loaded_value(
        key: &StoreKey,
        record: Result<Arc<Record>, String>,
        row: usize,
    ) -> Result<Option<Value>, StorageError> {
        let record =
            record.map_err(|cause| StorageError::Other(format!("cannot read key {:?}: {cause}", key.as_str())))?;
        Ok(parquet::row_value(&record, row))
    }

    /// A value as the public, owned form.
    pub(crate) fn owned(&self, value: Value) -> OwnedReference {
        let url = |target: Target| match target {
            Target::Url(url) => self.references().and_then(|refs| refs.url(url)).map(str::to_owned),
            Target::Path(path) => Some(path.to_string()),
        };
        match value {
            Value::Inline(bytes) => OwnedReference::Inline(bytes),
            Value::Whole(target) => OwnedReference::Whole { url: url(target) },
            Value::Range { target, offset, length } => OwnedReference::Range { url: url(target), offset, length },
        }
    }

    /// The source of a target, resolved once.
    fn resolve(&self, target: &Target) -> Result<Resolved, String> {
        match target {
            Target::Url(url) => {
                let (cell, text) = match url.index() {
                    Some(i) => (&self.sources[i], self.references().map_or("", |refs| &*refs.urls()[i])),
                    None => (
                        &self.target_source,
                        self.target.as_deref().ok_or(
                            "the reference has a null URL and no default target is set (ReferenceStoreBuilder::with_target)",
                        )?,
                    ),
                };
                cell.get_or_init(|| self.resolve_text(text)).clone()
            }
            Target::Path(path) => {
                let mut paths = self.paths.lock().unwrap_or_else(PoisonError::into_inner);
                if let Some(resolved) = paths.get(path) {
                    return resolved.clone();
                }
                if paths.len() >= MAX_REMEMBERED_PATHS {
                    paths.clear();
                }
                let resolved = self.resolve_text(path);
                paths.insert(Arc::clone(path), resolved.clone());
                resolved
            }
        }
    }

    fn resolve_text(&self, text: &str) -> Result<Resolved, String> {
        let location = self.location.join(text).map_err(|e| e.to_string())?;
        let source = self.resolver.source(&location, &self.location).map_err(|e| format!("{location}: {e}"))?;
        Ok(Resolved { source, shown: location.to_string() })
    }

    fn unresolvable(&self, key: &StoreKey, target: &Target, cause: &str) -> StorageError {
        let written = match target {
            Target::Url(url) => self.references().and_then(|refs| refs.url(*url)).unwrap_or("null"),
            Target::Path(path) => path,
        };
        StorageError::Other(format!("cannot read key {:?}: reference target {written:?}: {cause}", key.as_str()))
    }

    /// How to read `value`, the value of `key`: whole (`ranges` is `None`) or in parts.
    pub(crate) fn plan(
        &self,
        key: &StoreKey,
        value: Value,
        ranges: Option<Vec<ByteRange>>,
    ) -> Result<Plan, StorageError> {
        let is_metadata = metadata::is_metadata_key(key.as_str());
        let fetch = |target: Target, requests: Vec<Request>, serve: Serve| {
            let resolved = self.resolve(&target).map_err(|cause| self.unresolvable(key, &target, &cause))?;
            Ok(Plan::Fetch(Fetch { key: key.as_str().to_owned(), resolved, requests, serve }))
        };
        match value {
            Value::Inline(mut value) => {
                if is_metadata {
                    value = serve_metadata(key.as_str(), value)?;
                }
                Ok(Plan::Ready(match ranges {
                    None => vec![value],
                    Some(ranges) => slice_ranges(&value, ranges)?,
                }))
            }
            Value::Whole(target) if is_metadata => fetch(target, vec![Request::Whole], Serve::Metadata(ranges)),
            Value::Range { target, offset, length } if is_metadata => {
                fetch(target, vec![Request::Part(GetRange::Bounded(offset..offset + length))], Serve::Metadata(ranges))
            }
            Value::Whole(target) => {
                let requests = match ranges {
                    None => vec![Request::Whole],
                    Some(ranges) => ranges.into_iter().map(whole_file_request).collect(),
                };
                fetch(target, requests, Serve::AsFetched)
            }
            Value::Range { target, offset, length } => {
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
                fetch(target, requests, Serve::AsFetched)
            }
        }
    }

    /// How to know the size of `value`, the value of `key`.
    pub(crate) fn plan_size(&self, key: &StoreKey, value: Value) -> Result<SizePlan, StorageError> {
        if metadata::is_metadata_key(key.as_str()) {
            return match self.plan(key, value, None)? {
                Plan::Ready(values) => Ok(SizePlan::Known(values.first().map_or(0, |v| v.len() as u64))),
                Plan::Fetch(_) => Ok(SizePlan::Document),
            };
        }
        match value {
            Value::Inline(value) => Ok(SizePlan::Known(value.len() as u64)),
            Value::Range { length, .. } => Ok(SizePlan::Known(length)),
            Value::Whole(target) => {
                let resolved = self.resolve(&target).map_err(|cause| self.unresolvable(key, &target, &cause))?;
                Ok(SizePlan::Stat(resolved))
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

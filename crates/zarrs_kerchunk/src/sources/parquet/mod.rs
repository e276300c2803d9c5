//! A parquet reference root as a [`ReferenceSource`]: metadata from
//! `.zmetadata`, chunk references from record files loaded through the
//! record cache.

mod cache;

use std::sync::Arc;

use futures::stream::{self, BoxStream, FuturesOrdered};
use futures::{StreamExt, TryStreamExt};

pub use cache::RecordCacheOptions;
use cache::{RecordCache, RecordFetch};

use crate::resolve::{Location, Resolver};
use kerchunk::SourceError;
use kerchunk::parquet::{ParquetLayout, Record, RecordId, Row};
use kerchunk::{Listing, Lookup, OwnedReference, ReferenceSource, Walk};

/// The key of the consolidated metadata document synthesised from `.zmetadata`.
const CONSOLIDATED_KEY: &str = ".zmetadata";

/// The most record files one listing or walk reads: both read the records
/// one at a time (a few in flight), but an astronomical grid must not turn
/// into that many requests.
const MAX_LISTED_RECORD_FILES: u64 = 1 << 20;

/// The record files of arrays with `counts` record files each, if one
/// listing of `prefix` (`None`: a walk of the whole root) may read them all.
fn within_record_bound(prefix: Option<&str>, counts: impl Iterator<Item = u64>) -> Result<u64, SourceError> {
    let records = counts.fold(0u64, u64::saturating_add);
    if records > MAX_LISTED_RECORD_FILES {
        let (prefix, limit) = (prefix.map(str::to_owned), MAX_LISTED_RECORD_FILES);
        return Err(SourceError::TooManyRecords { prefix, records, limit });
    }
    Ok(records)
}

/// A parquet reference root: its layout and the records loaded so far.
#[derive(Debug)]
pub(crate) struct ParquetRoot {
    layout: Arc<ParquetLayout>,
    files: RecordFiles,
}

/// Where a root's record files are, and the cache of those loaded.
#[derive(Clone, Debug)]
struct RecordFiles {
    records: Arc<RecordCache>,
    /// The root folder; record files are found below it.
    root: Location,
    resolver: Arc<Resolver>,
    /// The largest record file to read, in bytes.
    max_file_bytes: u64,
}

impl RecordFiles {
    /// How to load record `id`; `cached`: keep it in the record cache (a
    /// writer reads each record once, so it does not).
    fn fetch(&self, id: RecordId, cached: bool) -> Result<RecordFetch, SourceError> {
        let file = id.file();
        let unresolvable = |source: crate::error::ResolveError| SourceError::Fetch {
            what: "parquet record file",
            location: file.clone(),
            source: source.into(),
        };
        let location = self.root.child(&file).map_err(unresolvable)?;
        let source = self.resolver.source(&location, &self.root).map_err(unresolvable)?;
        let slot = if cached { self.records.slot(&id) } else { cache::Slot::default() };
        let (cache, location, max_file_bytes) = (Arc::clone(&self.records), location.to_string(), self.max_file_bytes);
        Ok(RecordFetch { id, slot, cache, source, location, max_file_bytes })
    }
}

impl ParquetRoot {
    pub(crate) fn new(
        layout: ParquetLayout,
        cache: RecordCacheOptions,
        root: Location,
        resolver: Arc<Resolver>,
        max_file_bytes: u64,
    ) -> Self {
        let files = RecordFiles { records: Arc::new(RecordCache::new(cache)), root, resolver, max_file_bytes };
        Self { layout: Arc::new(layout), files }
    }

    /// Every metadata key, the synthesised consolidated document included.
    fn metadata_keys(&self) -> impl Iterator<Item = &str> {
        std::iter::once(CONSOLIDATED_KEY).chain(self.layout.metadata_keys())
    }

    /// `listing` of `prefix`, with the chunk keys of the arrays at `fields`,
    /// known once their records are read: one at a time, a few in flight,
    /// each dropped once its keys are taken.
    fn pending_chunk_keys<'a>(
        &self,
        prefix: &str,
        fields: impl Iterator<Item = &'a Arc<str>>,
        mut listing: Listing,
    ) -> Result<Listing, SourceError> {
        let arrays: Vec<(Arc<str>, u64)> =
            fields.map(|field| (Arc::clone(field), self.layout.record_count(field))).collect();
        let records = within_record_bound(Some(prefix), arrays.iter().map(|(_, count)| *count))?;
        if records == 0 {
            return Ok(listing);
        }
        let (layout, files) = (Arc::clone(&self.layout), self.files.clone());
        listing.pending = Some(Box::pin(async move {
            /// Record files are small; a few in flight hide the latency of remote roots.
            const IN_FLIGHT: usize = 8;
            let mut in_flight = FuturesOrdered::new();
            let mut keys = Vec::new();
            let mut take = |(id, record): (RecordId, Arc<Record>)| keys.extend(present_keys(&layout, &id, &record));
            for (field, count) in arrays {
                for index in 0..count {
                    let fetch = files.fetch(RecordId { field: Arc::clone(&field), index }, true)?;
                    in_flight.push_back(async move { fetch.load().await.map(|record| (fetch.id, record)) });
                    if in_flight.len() >= IN_FLIGHT
                        && let Some(loaded) = in_flight.next().await
                    {
                        take(loaded?);
                    }
                }
            }
            while let Some(loaded) = in_flight.next().await {
                take(loaded?);
            }
            Ok(keys)
        }));
        Ok(listing)
    }
}

/// The keys of the rows of `record` that hold a reference.
fn present_keys<'a>(
    layout: &'a ParquetLayout,
    id: &'a RecordId,
    record: &'a Record,
) -> impl Iterator<Item = String> + 'a {
    (0..record.len())
        .filter(|&row| record.row(row) != Row::Missing)
        .filter_map(move |row| layout.chunk_key(id, row as u64))
}

/// What row `row` of a record holds.
fn row_reference(record: &Record, row: usize) -> Option<OwnedReference> {
    match record.row(row) {
        Row::Missing => None,
        Row::Inline(_) => record.inline_bytes(row).map(OwnedReference::Inline),
        Row::Whole(path) => Some(OwnedReference::Whole { url: Some(Arc::clone(path)) }),
        Row::Range { path, offset, size } => {
            Some(OwnedReference::Range { url: Some(Arc::clone(path)), offset, length: size })
        }
        Row::Malformed(reason) => Some(OwnedReference::Malformed { reason: Arc::from(reason) }),
    }
}

impl ReferenceSource for ParquetRoot {
    fn lookup(&self, key: &str) -> Result<Lookup, SourceError> {
        let layout = &self.layout;
        if key == CONSOLIDATED_KEY {
            return Ok(Lookup::Ready(Some(OwnedReference::Inline(layout.consolidated().clone()))));
        }
        if let Some(document) = layout.metadata(key) {
            return Ok(Lookup::Ready(Some(OwnedReference::Inline(document.clone()))));
        }
        let Some((id, row)) = layout.locate(key) else { return Ok(Lookup::Ready(None)) };
        if let Some(record) = self.files.records.get(&id) {
            return Ok(Lookup::Ready(row_reference(&record, row)));
        }
        let fetch = self.files.fetch(id, true)?;
        Ok(Lookup::Pending(Box::pin(async move { Ok(row_reference(&*fetch.load().await?, row)) })))
    }

    /// Metadata keys, then the chunk keys of every array under `prefix`,
    /// which are known once their records are loaded.
    fn list_prefix(&self, prefix: &str) -> Result<Listing, SourceError> {
        let keys = self.metadata_keys().filter(|k| k.starts_with(prefix)).map(str::to_owned).collect();
        let fields =
            self.layout.arrays().map(|(field, _)| field).filter(|field| format!("{field}/").starts_with(prefix));
        self.pending_chunk_keys(prefix, fields, Listing::ready(keys, Vec::new()))
    }

    /// Only an array's own folder needs its records (for its chunk keys);
    /// listing groups reads no record.
    fn list_dir(&self, prefix: &str) -> Result<Listing, SourceError> {
        let mut listing = Listing::default();
        for key in self.metadata_keys() {
            let Some(rest) = key.strip_prefix(prefix) else { continue };
            match rest.split_once('/') {
                Some((child, _)) => listing.prefixes.push(format!("{prefix}{child}/")),
                None => listing.keys.push(key.to_owned()),
            }
        }
        let array =
            self.layout.arrays().map(|(field, _)| field).find(|field| prefix.strip_suffix('/') == Some(&***field));
        self.pending_chunk_keys(prefix, array.into_iter(), listing)
    }

    fn holds_only_dotted_chunk_keys(&self) -> bool {
        true
    }

    /// The metadata as written in `.zmetadata`, then each array's chunks in
    /// grid order, one record file at a time, outside the record cache.
    fn walk(&self, walk: Walk) -> BoxStream<'_, Result<(String, OwnedReference), SourceError>> {
        let metadata = self.layout.metadata_keys().map(|key| {
            let document = self.layout.metadata(key).expect("a listed key").clone();
            Ok((key.to_owned(), OwnedReference::Inline(document)))
        });
        let metadata = stream::iter(metadata.collect::<Vec<_>>());
        if walk == Walk::Metadata {
            return Box::pin(metadata);
        }
        let counts = self.layout.arrays().map(|(field, _)| self.layout.record_count(field));
        if let Err(error) = within_record_bound(None, counts) {
            return Box::pin(metadata.chain(stream::once(async move { Err(error) })));
        }
        let ids = self.layout.arrays().flat_map(|(field, _)| {
            (0..self.layout.record_count(field)).map(|index| RecordId { field: Arc::clone(field), index })
        });
        // Lazily: a grid may name more record files than fit in memory as ids.
        let chunks = stream::iter(ids)
            .then(move |id| async move {
                let record = self.files.fetch(id.clone(), false)?.load().await?;
                // The rows are visited as the stream is read: the record is held, not copied.
                let references = (0..record.len()).filter_map(move |row| {
                    let reference = row_reference(&record, row)?;
                    Some(Ok((self.layout.chunk_key(&id, row as u64)?, reference)))
                });
                Ok::<_, SourceError>(stream::iter(references))
            })
            .try_flatten();
        Box::pin(metadata.chain(chunks))
    }
}

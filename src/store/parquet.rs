//! The store core over a parquet reference root: metadata from `.zmetadata`,
//! chunk references from record files loaded through the record cache.

use std::sync::Arc;

use zarrs_storage::{StorageError, StoreKey, StorePrefix};

use super::records::{RecordCache, RecordCacheOptions, RecordFetch, Slot};
use super::{Core, Listing, Lookup, Resolved, Target, Value};
use crate::parquet::{ParquetLayout, Record, RecordId, Row};

/// The key of the consolidated metadata document synthesised from `.zmetadata`.
const CONSOLIDATED_KEY: &str = ".zmetadata";

/// A parquet reference root: its layout and the records loaded so far.
#[derive(Debug)]
pub(crate) struct ParquetIndex {
    pub(super) layout: ParquetLayout,
    records: Arc<RecordCache>,
}

impl ParquetIndex {
    pub(crate) fn new(layout: ParquetLayout, cache: RecordCacheOptions) -> Self {
        Self { layout, records: Arc::new(RecordCache::new(cache)) }
    }
}

/// Every metadata key of a root, the synthesised consolidated document included.
fn metadata_keys(layout: &ParquetLayout) -> impl Iterator<Item = &str> {
    std::iter::once(CONSOLIDATED_KEY).chain(layout.metadata_keys())
}

/// What row `row` of a record holds.
pub(super) fn row_value(record: &Record, row: usize) -> Option<Value> {
    match record.row(row) {
        Row::Missing => None,
        Row::Inline(_) => record.inline_bytes(row).map(Value::Inline),
        Row::Whole(path) => Some(Value::Whole(Target::Path(Arc::clone(path)))),
        Row::Range { path, offset, size } => {
            Some(Value::Range { target: Target::Path(Arc::clone(path)), offset, length: size })
        }
    }
}

impl Core {
    pub(super) fn lookup_parquet(&self, index: &ParquetIndex, key: &StoreKey) -> Result<Lookup, StorageError> {
        let layout = &index.layout;
        if key.as_str() == CONSOLIDATED_KEY {
            return Ok(Lookup::Found(Value::Inline(layout.consolidated().clone())));
        }
        if let Some(document) = layout.metadata(key.as_str()) {
            return Ok(Lookup::Found(Value::Inline(document.clone())));
        }
        let Some((id, row)) = layout.locate(key.as_str()) else { return Ok(Lookup::Missing) };
        if let Some(record) = index.records.get(&id) {
            return Ok(row_value(&record, row).map_or(Lookup::Missing, Lookup::Found));
        }
        let record = self
            .record_fetch(index, id, true)
            .map_err(|cause| StorageError::Other(format!("cannot read key {:?}: {cause}", key.as_str())))?;
        Ok(Lookup::Load { record, row })
    }

    /// How to load record `id`; `cached`: keep it in the record cache (a
    /// conversion reads each record once, so it does not).
    pub(super) fn record_fetch(&self, index: &ParquetIndex, id: RecordId, cached: bool) -> Result<RecordFetch, String> {
        let location = self.location.child(&id.file()).map_err(|e| e.to_string())?;
        let source = self.resolver.source(&location, &self.location).map_err(|e| format!("{location}: {e}"))?;
        Ok(RecordFetch {
            slot: if cached { index.records.slot(&id) } else { Slot::default() },
            cache: Arc::clone(&index.records),
            id,
            resolved: Resolved { source, shown: location.to_string() },
        })
    }

    /// Every key under `prefix`: metadata keys, then the chunk keys of every
    /// array under it, which are known once the records in `Listing::pending` are loaded.
    pub(super) fn list_prefix_parquet(
        &self,
        index: &ParquetIndex,
        prefix: &StorePrefix,
    ) -> Result<Listing, StorageError> {
        let mut listing = Listing::default();
        let layout = &index.layout;
        let prefix = prefix.as_str();
        listing.keys.extend(metadata_keys(layout).filter(|k| k.starts_with(prefix)).map(str::to_owned));
        for (field, _) in layout.arrays().filter(|(field, _)| format!("{field}/").starts_with(prefix)) {
            self.pend_records(index, field, &mut listing)?;
        }
        Ok(listing)
    }

    /// The keys and folders directly under `prefix`. Only an array's own folder
    /// needs its records (for its chunk keys); listing groups reads no record.
    pub(super) fn list_dir_parquet(&self, index: &ParquetIndex, prefix: &StorePrefix) -> Result<Listing, StorageError> {
        let mut listing = Listing::default();
        let layout = &index.layout;
        let prefix = prefix.as_str();
        for key in metadata_keys(layout) {
            let Some(rest) = key.strip_prefix(prefix) else { continue };
            match rest.split_once('/') {
                Some((child, _)) => listing.prefixes.push(format!("{prefix}{child}/")),
                None => listing.keys.push(key.to_owned()),
            }
        }
        if let Some((field, _)) = layout.arrays().find(|(field, _)| prefix.strip_suffix('/') == Some(&***field)) {
            self.pend_records(index, &Arc::clone(field), &mut listing)?;
        }
        Ok(listing)
    }

    fn pend_records(&self, index: &ParquetIndex, field: &Arc<str>, listing: &mut Listing) -> Result<(), StorageError> {
        for n in 0..index.layout.record_count(field) {
            let id = RecordId { field: Arc::clone(field), index: n };
            let fetch = self
                .record_fetch(index, id, true)
                .map_err(|cause| StorageError::Other(format!("cannot list {field:?}: {cause}")))?;
            listing.pending.push(fetch);
        }
        Ok(())
    }

    /// Add the chunk keys that exist in the loaded records to `listing`.
    pub(crate) fn add_loaded_records(
        &self,
        listing: &mut Listing,
        loaded: Result<Vec<(RecordId, Arc<Record>)>, String>,
    ) -> Result<(), StorageError> {
        let loaded = loaded.map_err(|cause| StorageError::Other(format!("cannot list the store: {cause}")))?;
        let super::Index::Parquet(index) = &self.index else { return Ok(()) };
        for (id, record) in loaded {
            for row in 0..record.len() {
                if record.row(row) != Row::Missing
                    && let Some(key) = index.layout.chunk_key(&id, row as u64)
                {
                    listing.keys.push(key);
                }
            }
        }
        Ok(())
    }
}

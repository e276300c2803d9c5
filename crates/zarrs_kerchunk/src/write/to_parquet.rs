//! Writing a parquet reference root from any [`ReferenceSource`]: the output
//! layout from the source's metadata, then each record file in grid order.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use futures::StreamExt;
use futures::stream::BoxStream;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use serde_json::Value as Json;

use kerchunk::parquet::{ParquetLayout, RecordEncoder, RecordId};
use kerchunk::zarr::{lenient, metadata};
use kerchunk::{Lookup, OwnedReference, ParquetWriteOptions, ReferenceSource, SourceError, Walk, WriteError};

use crate::store::IoRuntime;

/// Write the references of `source` as a parquet reference root at
/// `root` in `store`, in fsspec's `LazyReferenceMapper` layout:
/// `.zmetadata` (written last, so a partial root does not open) and
/// `<array>/refs.<n>.parq`. Records whose chunks are all missing get no
/// file, as fsspec does. Returns the number of chunk references written.
/// Blocks until done, reading and writing on the process's shared I/O runtime.
///
/// A parquet source is read through its record cache, so the cache's
/// bound ([`RecordCacheOptions`](crate::RecordCacheOptions)) is the
/// memory a conversion holds; the source's keys are then walked once more
/// to check that each one has a place in the output.
///
/// ```
/// use zarrs_kerchunk::kerchunk::ParquetWriteOptions;
/// use zarrs_kerchunk::{ReferenceStore, object_store, write_parquet};
/// # let location = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/nc4_deflate_shuffle/refs.json");
/// let source = ReferenceStore::open(location)?;
/// let out = object_store::memory::InMemory::new();
/// let options = ParquetWriteOptions::default().with_record_size(1000);
/// let written = write_parquet(source.source().as_ref(), &out, &"refs.parq".into(), &options)?;
/// assert!(written > 0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// [`WriteError`] if a key fits no array's chunk grid, a reference has a
/// `null` URL, metadata is not inline JSON, the source cannot be read, or
/// the output cannot be written.
pub fn write_parquet(
    source: &dyn ReferenceSource,
    store: &dyn ObjectStore,
    root: &ObjectPath,
    options: &ParquetWriteOptions,
) -> Result<u64, WriteError> {
    let runtime = IoRuntime::default();
    let written = runtime.block_on_here(write(source, store, root, options, &runtime, false, None));
    Ok(written.map_err(|e| WriteError::Read(SourceError::Runtime(e.into())))??.references)
}

/// [`write_parquet`] for async code: record files are encoded on tokio's
/// blocking pool, never on the executor.
///
/// # Errors
/// As [`write_parquet`].
pub async fn write_parquet_async(
    source: &dyn ReferenceSource,
    store: &dyn ObjectStore,
    root: &ObjectPath,
    options: &ParquetWriteOptions,
) -> Result<u64, WriteError> {
    Ok(write(source, store, root, options, &IoRuntime::default(), true, None).await?.references)
}

/// What [`update_parquet`](super::update_parquet) did: the references the root now holds, and the record files it
/// wrote, kept as they were, and removed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ParquetUpdate {
    /// The chunk references the root holds now.
    pub references: u64,
    /// Record files written, new or changed.
    pub records_written: u64,
    /// Record files left as they were: every row the same.
    pub records_kept: u64,
    /// Record files removed: every row of theirs is now missing.
    pub records_removed: u64,
}

/// The root an update rewrites: its layout, the references it holds, and the record files it has.
pub(super) struct Previous<'a> {
    pub(super) source: &'a dyn ReferenceSource,
    pub(super) layout: ParquetLayout,
    pub(super) occupied: Occupied,
}

impl Previous<'_> {
    /// Whether record `id` has `rows` rows here too (the record size is the same; a grid grown
    /// along its first dimension keeps its whole records, and [`holds`](Self::holds) checks
    /// each row's chunk key).
    fn spans(&self, id: &RecordId, rows: u64) -> bool {
        let total: u64 =
            self.layout.arrays().find(|(field, _)| **field == id.field).map_or(0, |(_, g)| g.iter().product());
        let record_size = self.layout.record_size();
        total.saturating_sub(id.index.saturating_mul(record_size)).min(record_size) == rows
    }

    /// Whether row `row` of record `id`, chunk `key`, holds `reference` here.
    async fn holds(
        &self,
        id: &RecordId,
        row: u64,
        key: &str,
        reference: Option<&OwnedReference>,
        runtime: &IoRuntime,
    ) -> Result<bool, WriteError> {
        if self.layout.chunk_key(id, row).as_deref() != Some(key) {
            return Ok(false);
        }
        Ok(lookup(self.source, key, runtime).await?.as_ref() == reference)
    }

    /// Whether record `id` has a file here.
    fn has_file(&self, id: &RecordId) -> bool {
        self.occupied.get(&id.field).is_some_and(|records| records.contains(&id.index))
    }
}

pub(super) async fn write(
    source: &dyn ReferenceSource,
    store: &dyn ObjectStore,
    root: &ObjectPath,
    options: &ParquetWriteOptions,
    runtime: &IoRuntime,
    off_the_executor: bool,
    previous: Option<&Previous<'_>>,
) -> Result<ParquetUpdate, WriteError> {
    let record_size = options.record_size();
    let layout = output_layout(source, record_size).await?;
    let put = |file: String, bytes: bytes::Bytes| async move {
        let path = ObjectPath::from(format!("{root}/{file}"));
        store
            .put(&path, PutPayload::from(bytes))
            .await
            .map_err(|source| WriteError::Put { location: path.to_string(), source: source.into() })
    };
    let mut rows = if source.holds_only_dotted_chunk_keys() {
        let order = layout.arrays().enumerate().map(|(i, (field, _))| (Arc::clone(field), i)).collect();
        Rows::Walk(Walked { references: source.walk(Walk::All), next: None, order })
    } else {
        Rows::Lookup { source, runtime, occupied: occupied_records(source, &layout).await? }
    };
    let delete = |file: String| async move {
        let path = ObjectPath::from(format!("{root}/{file}"));
        match store.delete(&path).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(source) => Err(WriteError::Put { location: path.to_string(), source: source.into() }),
        }
    };
    let mut encoder = RecordEncoder::new(options);
    let mut update = ParquetUpdate::default();
    for (field, grid) in layout.arrays() {
        let total: u64 = grid.iter().product();
        let mut visited = BTreeSet::new();
        // Only records holding a reference are visited: a grid may have
        // more positions than could ever be looped over.
        let mut next_record = 0;
        while let Some(n) = rows.first_record_from(&layout, field, next_record).await? {
            next_record = n + 1;
            visited.insert(n);
            let id = RecordId { field: Arc::clone(field), index: n };
            let span = n * record_size..((n + 1) * record_size).min(total);
            // Whether every row so far is what the root being updated holds.
            let mut unchanged = previous.is_some_and(|p| p.spans(&id, span.end - span.start));
            for row in 0..span.end - span.start {
                let key = || layout.chunk_key(&id, row).unwrap_or_default();
                let found = rows.at(&layout, &id, row, key).await?;
                if let Some(previous) = previous.filter(|_| unchanged) {
                    unchanged = previous.holds(&id, row, &key(), found.as_ref(), runtime).await?;
                }
                update.references += u64::from(found.is_some());
                encoder.push(key, found.as_ref().map(OwnedReference::as_reference))?;
            }
            let file = id.file();
            if unchanged {
                encoder.clear();
                update.records_kept += u64::from(previous.is_some_and(|p| p.has_file(&id)));
                continue;
            }
            let finished = if off_the_executor && tokio::runtime::Handle::try_current().is_ok() {
                let mut moved = std::mem::replace(&mut encoder, RecordEncoder::new(options));
                let (emptied, result) = tokio::task::spawn_blocking(move || {
                    let result = moved.finish();
                    (moved, result)
                })
                .await
                .map_err(|e| WriteError::Task(e.into()))?;
                encoder = emptied;
                result
            } else {
                encoder.finish()
            };
            let file_bytes = finished.map_err(|source| WriteError::Encode { location: file.clone(), source })?;
            if let Some(bytes) = file_bytes {
                put(file, bytes).await?;
                update.records_written += 1;
            } else if previous.is_some_and(|p| p.has_file(&id)) {
                delete(file).await?;
                update.records_removed += 1;
            }
            if let Some(progress) = options.progress() {
                progress.report(update.references);
            }
        }
        // The records of the root being updated that hold nothing now.
        if let Some(gone) = previous.and_then(|p| p.occupied.get(field)) {
            for &index in gone.difference(&visited) {
                delete(RecordId { field: Arc::clone(field), index }.file()).await?;
                update.records_removed += 1;
            }
        }
    }
    // The records of arrays the root being updated has and the source does not.
    for (field, records) in previous.map(|p| &p.occupied).into_iter().flatten() {
        if layout.arrays().all(|(kept, _)| kept != field) {
            for &index in records {
                delete(RecordId { field: Arc::clone(field), index }.file()).await?;
                update.records_removed += 1;
            }
        }
    }
    put(".zmetadata".into(), layout.zmetadata().into()).await?;
    Ok(update)
}

/// Where the writer finds the reference of each position of the output grid.
enum Rows<'a> {
    /// Asked of the source, key by key (a JSON set answers from memory),
    /// in the records known to hold a reference.
    Lookup { source: &'a dyn ReferenceSource, runtime: &'a IoRuntime, occupied: Occupied },
    /// Taken from the source's walk.
    Walk(Walked<'a>),
}

impl Rows<'_> {
    /// The first record of `field`'s, from record `from` on, that may hold
    /// a reference; `None` once none can.
    async fn first_record_from(
        &mut self,
        layout: &ParquetLayout,
        field: &Arc<str>,
        from: u64,
    ) -> Result<Option<u64>, WriteError> {
        if from >= layout.record_count(field) {
            return Ok(None);
        }
        match self {
            Self::Lookup { occupied, .. } => {
                Ok(occupied.get(field).and_then(|records| records.range(from..).next().copied()))
            }
            Self::Walk(walked) => walked.first_record_from(layout, field, from).await,
        }
    }

    /// The reference at row `row` of record `id`, whose key `key` gives.
    async fn at(
        &mut self,
        layout: &ParquetLayout,
        id: &RecordId,
        row: u64,
        key: impl Fn() -> String,
    ) -> Result<Option<OwnedReference>, WriteError> {
        match self {
            Self::Lookup { source, runtime, .. } => lookup(*source, &key(), runtime).await,
            Self::Walk(walked) => walked.at(layout, id, row).await,
        }
    }
}

/// Where a chunk comes in the output: its array's place, its record, its row.
type Place = (Option<usize>, u64, u64);

/// A source's walk, which visits chunks in the output's order (a parquet
/// root: arrays sorted, each in grid order), merged position by position.
struct Walked<'a> {
    references: BoxStream<'a, Result<(String, OwnedReference), SourceError>>,
    /// The next chunk of the walk: its record, row and reference.
    next: Option<(RecordId, u64, OwnedReference)>,
    /// Each array's place in the output's order.
    order: HashMap<Arc<str>, usize>,
}

impl Walked<'_> {
    fn place(&self, id: &RecordId, row: u64) -> Place {
        (self.order.get(&id.field).copied(), id.index, row)
    }

    /// The place of the walk's next chunk, read from the source if need be.
    async fn next_place(&mut self, layout: &ParquetLayout) -> Result<Option<Place>, WriteError> {
        if self.next.is_none() {
            while let Some(item) = self.references.next().await {
                let (chunk_key, reference) = item?;
                if chunk_key == ".zmetadata" || metadata::is_metadata_key(&chunk_key) {
                    continue;
                }
                let Some((chunk_id, chunk_row)) = layout.locate(&chunk_key) else {
                    let reason = "it is not a chunk inside any array's grid".into();
                    return Err(WriteError::Unrepresentable { key: chunk_key, reason });
                };
                self.next = Some((chunk_id, chunk_row as u64, reference));
                break;
            }
        }
        Ok(self.next.as_ref().map(|(id, row, _)| self.place(id, *row)))
    }

    /// See [`Rows::first_record_from`].
    async fn first_record_from(
        &mut self,
        layout: &ParquetLayout,
        field: &Arc<str>,
        from: u64,
    ) -> Result<Option<u64>, WriteError> {
        let here = self.order.get(field).copied();
        Ok(match self.next_place(layout).await? {
            None => None,
            Some((array, record, _)) if array == here => Some(record.max(from)),
            // A later array's chunk: this one has no more.
            Some((array, ..)) if array > here => None,
            // Out of order: `at` reports it.
            Some(_) => Some(from),
        })
    }

    /// See [`Rows::at`].
    async fn at(
        &mut self,
        layout: &ParquetLayout,
        id: &RecordId,
        row: u64,
    ) -> Result<Option<OwnedReference>, WriteError> {
        let Some(next) = self.next_place(layout).await? else { return Ok(None) };
        match next.cmp(&self.place(id, row)) {
            Ordering::Equal => Ok(self.next.take().map(|(_, _, reference)| reference)),
            Ordering::Greater => Ok(None),
            Ordering::Less => {
                let reason =
                    "the source walked its chunks out of grid order, so it cannot be written in one pass".into();
                let key =
                    self.next.as_ref().and_then(|(chunk_id, chunk_row, _)| layout.chunk_key(chunk_id, *chunk_row));
                Err(WriteError::Unrepresentable { key: key.unwrap_or_default(), reason })
            }
        }
    }
}

/// What `key` holds, after the source's read if it needs one.
async fn lookup(
    source: &dyn ReferenceSource,
    key: &str,
    runtime: &IoRuntime,
) -> Result<Option<OwnedReference>, WriteError> {
    match source.lookup(key)? {
        Lookup::Ready(found) => Ok(found),
        // Pending reads are spawned, so that they run on the runtime's threads
        // whatever executor drives the writer.
        Lookup::Pending(pending) => {
            let done = match tokio::runtime::Handle::try_current() {
                Ok(handle) => handle.spawn(pending).await.map_err(|e| WriteError::Task(e.into()))?,
                Err(_) => runtime.block_on(pending).map_err(|e| SourceError::Runtime(e.into()))?,
            };
            Ok(done?)
        }
    }
}

/// The parquet layout of the output: the source's arrays at `record_size` rows per file.
async fn output_layout(source: &dyn ReferenceSource, record_size: u64) -> Result<ParquetLayout, WriteError> {
    // A Zarr v3 set (files of uneven length combined, on rectilinear grids): its `zarr.json`
    // documents are its metadata, wherever the walk gives them (only this crate reads such a
    // root: fsspec's layout finds each array's grid in its `.zarray`).
    let v3 = matches!(source.lookup("zarr.json")?, Lookup::Ready(Some(_)));
    let mut objects = serde_json::Map::new();
    let mut metadata = source.walk(if v3 { Walk::All } else { Walk::Metadata });
    while let Some(item) = metadata.next().await {
        let (key, reference) = item?;
        if key == ".zmetadata" || (v3 && !is_node(&key)) {
            continue;
        }
        let unrepresentable = |reason: String| WriteError::Unrepresentable { key: key.clone(), reason };

        let OwnedReference::Inline(text) = reference else {
            return Err(unrepresentable("metadata that is a reference to a file cannot go into .zmetadata".into()));
        };
        let object = lenient::parse_json_lenient(&text).map_err(|e| unrepresentable(format!("not JSON: {e}")))?;
        objects.insert(key, object);
    }
    let sorted: BTreeMap<String, Json> = objects.into_iter().collect();
    ParquetLayout::from_metadata(&sorted.into_iter().collect(), record_size, ".zmetadata")
        .map_err(|e| WriteError::Unrepresentable { key: ".zmetadata".into(), reason: e.to_string() })
}

/// Whether `key` is a Zarr v3 node's `zarr.json`.
fn is_node(key: &str) -> bool {
    key == "zarr.json" || key.ends_with("/zarr.json")
}

/// The records of each array that hold at least one reference.
pub(super) type Occupied = HashMap<Arc<str>, BTreeSet<u64>>;

/// The records that hold a reference, found by walking the source's keys;
/// every key must be metadata or a chunk of some array, or the parquet root
/// would silently lose it. Bounded by the source's references, not its grids.
async fn occupied_records(source: &dyn ReferenceSource, layout: &ParquetLayout) -> Result<Occupied, WriteError> {
    let mut occupied = Occupied::new();
    let mut references = source.walk(Walk::All);
    while let Some(item) = references.next().await {
        let (key, _) = item?;
        if key == ".zmetadata" || metadata::is_metadata_key(&key) || is_node(&key) {
            continue;
        }
        let Some((id, _)) = layout.locate(&key) else {
            let reason = "it is not a chunk inside any array's grid, and the parquet layout holds only those";
            return Err(WriteError::Unrepresentable { key, reason: reason.into() });
        };
        occupied.entry(id.field).or_default().insert(id.index);
    }
    Ok(occupied)
}

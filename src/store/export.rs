//! Writing a store's references out: any set a store opens (JSON, or a
//! parquet root) as kerchunk JSON or as a parquet root. Sources are read a
//! record at a time and outputs written a record at a time, so memory stays
//! bounded by a few records beyond what the source itself holds.

use std::io::Write;
use std::sync::Arc;

use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use serde_json::Value as Json;

use super::{AsyncReferenceStore, Core, Index, ParquetIndex};
use crate::error::WriteError;
use crate::metadata;
use crate::model::{Reference, ReferenceSet};
use crate::parquet::{ParquetLayout, Record, RecordId, Row};
use crate::parse::lenient;
use crate::write::json::JsonWriter;
use crate::write::parquet::RecordEncoder;
use crate::write::{Entry, JsonWriteOptions, ParquetWriteOptions};

/// Called with the number of references written so far, after each record or
/// batch, so that long conversions can show progress.
pub type Progress<'a> = &'a mut (dyn FnMut(u64) + Send);

impl AsyncReferenceStore {
    /// Write this store's references as kerchunk JSON to `out`: version 0 or
    /// version 1 (templates and `gen` expanded), compact, optionally zstd-compressed.
    /// Returns the number of references written.
    ///
    /// A JSON set is written in [`ReferenceSet::iter`] order (keys outside
    /// chunk grids sorted, then each array's chunks in grid order); a parquet
    /// root as its metadata, then each array's chunks in grid order, one
    /// record file at a time.
    ///
    /// # Errors
    /// [`WriteError`] if a record file cannot be read or `out` cannot be written.
    pub async fn write_json<W: Write + Send>(
        &self,
        out: W,
        options: JsonWriteOptions,
        progress: Progress<'_>,
    ) -> Result<u64, WriteError> {
        match options.zstd_level {
            None => self.core.write_json(out, options, progress).await,
            Some(level) => {
                let compressed = zstd::Encoder::new(out, level).map_err(output_failed)?.auto_finish();
                self.core.write_json(compressed, options, progress).await
            }
        }
    }

    /// Write this store's references as a parquet reference root at `root` in
    /// `store`, in fsspec's `LazyReferenceMapper` layout: `.zmetadata` (written
    /// last, so a partial root does not open) and `<array>/refs.<n>.parq`.
    /// Records whose chunks are all missing get no file, as fsspec does.
    /// Returns the number of chunk references written.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new()?.block_on(async {
    /// use zarrs_kerchunk::{AsyncReferenceStore, ParquetWriteOptions, object_store};
    /// # let location = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/nc4_deflate_shuffle/refs.json");
    /// let source = AsyncReferenceStore::open(location).await?;
    /// let out = object_store::memory::InMemory::new();
    /// let options = ParquetWriteOptions::default().with_record_size(1000);
    /// let written = source.write_parquet(&out, &"refs.parq".into(), options, &mut |_| {}).await?;
    /// assert!(written > 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # })?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`WriteError`] if a key fits no array's chunk grid, a reference has a
    /// `null` URL, metadata is not inline JSON, a record file cannot be read,
    /// or the output cannot be written.
    pub async fn write_parquet(
        &self,
        store: &dyn ObjectStore,
        root: &ObjectPath,
        options: ParquetWriteOptions,
        progress: Progress<'_>,
    ) -> Result<u64, WriteError> {
        self.core.write_parquet(store, root, options, progress).await
    }
}

/// A JSON reference's borrowed form for the writers.
fn entry<'a>(refs: &'a ReferenceSet, reference: Reference<'a>) -> Entry<'a> {
    match reference {
        Reference::Inline(bytes) => Entry::Inline(bytes),
        Reference::Whole(url) => Entry::Whole(refs.url(url)),
        Reference::Range { url, offset, length } => Entry::Range { url: refs.url(url), offset, length },
    }
}

/// A parquet row's borrowed form for the writers.
fn row_entry(row: Row<'_>) -> Option<Entry<'_>> {
    match row {
        Row::Missing => None,
        Row::Inline(bytes) => Some(Entry::Inline(bytes)),
        Row::Whole(path) => Some(Entry::Whole(Some(path))),
        Row::Range { path, offset, size } => Some(Entry::Range { url: Some(path), offset, length: size }),
    }
}

/// A failed write to the JSON output.
#[allow(clippy::needless_pass_by_value)] // the shape `map_err` takes
fn output_failed(e: std::io::Error) -> WriteError {
    WriteError::Write { location: "the JSON output".into(), reason: e.to_string() }
}

/// How often progress is reported for in-memory sources.
const PROGRESS_EVERY: u64 = 100_000;

impl Core {
    async fn write_json<W: Write + Send>(
        &self,
        out: W,
        options: JsonWriteOptions,
        progress: Progress<'_>,
    ) -> Result<u64, WriteError> {
        let mut writer = JsonWriter::new(out, options.version).map_err(output_failed)?;
        let mut written = 0;
        match &self.index {
            Index::Json(refs) => {
                for (key, reference) in refs.iter() {
                    writer.entry(&key, entry(refs, reference)).map_err(output_failed)?;
                    written += 1;
                    if written % PROGRESS_EVERY == 0 {
                        progress(written);
                    }
                }
            }
            Index::Parquet(index) => {
                for key in index.layout.metadata_keys() {
                    let document = index.layout.metadata(key).expect("a listed key");
                    writer.entry(key, Entry::Inline(document)).map_err(output_failed)?;
                    written += 1;
                }
                let fields: Vec<Arc<str>> = index.layout.arrays().map(|(field, _)| Arc::clone(field)).collect();
                for field in fields {
                    for n in 0..index.layout.record_count(&field) {
                        let id = RecordId { field: Arc::clone(&field), index: n };
                        let record = self.load_record(index, id.clone()).await?;
                        for row in 0..record.len() {
                            let (Some(entry), Some(key)) =
                                (row_entry(record.row(row)), index.layout.chunk_key(&id, row as u64))
                            else {
                                continue;
                            };
                            writer.entry(&key, entry).map_err(output_failed)?;
                            written += 1;
                        }
                        progress(written);
                    }
                }
            }
        }
        writer.finish().map_err(output_failed)?;
        progress(written);
        Ok(written)
    }

    async fn write_parquet(
        &self,
        store: &dyn ObjectStore,
        root: &ObjectPath,
        options: ParquetWriteOptions,
        progress: Progress<'_>,
    ) -> Result<u64, WriteError> {
        let layout = self.output_layout(options.record_size)?;
        let put = |file: String, bytes: bytes::Bytes| async move {
            let path = ObjectPath::from(format!("{root}/{file}"));
            store
                .put(&path, PutPayload::from(bytes))
                .await
                .map_err(|e| WriteError::Write { location: path.to_string(), reason: crate::error::error_chain(&e) })
        };
        let mut encoder = RecordEncoder::new(options);
        let mut written = 0;
        // The source record in use, for a parquet source.
        let mut current: Option<(RecordId, Arc<Record>)> = None;
        for (field, grid) in layout.arrays() {
            let total: u64 = grid.iter().product();
            for n in 0..layout.record_count(field) {
                let id = RecordId { field: Arc::clone(field), index: n };
                for linear in n * options.record_size..((n + 1) * options.record_size).min(total) {
                    let row = linear - n * options.record_size;
                    let key = || layout.chunk_key(&id, row).unwrap_or_default();
                    let pushed = match &self.index {
                        Index::Json(refs) => {
                            let found = refs.get(&key()).map(|r| entry(refs, r));
                            written += u64::from(found.is_some());
                            encoder.push(found)
                        }
                        Index::Parquet(source) => {
                            let source_size = source.layout.record_size();
                            let wanted = RecordId { field: Arc::clone(field), index: linear / source_size };
                            if current.as_ref().is_none_or(|(loaded, _)| *loaded != wanted) {
                                current = Some((wanted.clone(), self.load_record(source, wanted).await?));
                            }
                            let record = &current.as_ref().expect("just loaded").1;
                            #[allow(clippy::cast_possible_truncation)] // a row index below the record size
                            let found = row_entry(record.row((linear % source_size) as usize));
                            written += u64::from(found.is_some());
                            encoder.push(found)
                        }
                    };
                    pushed.map_err(|reason| WriteError::Unrepresentable { key: key(), reason })?;
                }
                let file = id.file();
                if let Some(bytes) =
                    encoder.finish().map_err(|reason| WriteError::Write { location: file.clone(), reason })?
                {
                    put(file, bytes).await?;
                }
                progress(written);
            }
        }
        put(".zmetadata".into(), layout.zmetadata().into()).await?;
        Ok(written)
    }

    /// The parquet layout of the output: the source's arrays at `record_size` rows per file.
    fn output_layout(&self, record_size: u64) -> Result<ParquetLayout, WriteError> {
        let objects = match &self.index {
            Index::Parquet(index) => index.layout.metadata_objects(),
            Index::Json(refs) => json_metadata(refs)?,
        };
        let layout = ParquetLayout::from_metadata(&objects, record_size, ".zmetadata")
            .map_err(|e| WriteError::Unrepresentable { key: ".zmetadata".into(), reason: e.to_string() })?;
        if let Index::Json(refs) = &self.index {
            // Every other key must be a chunk of some array, or the parquet root would silently lose it.
            let stray = refs
                .iter()
                .map(|(key, _)| key)
                .find(|key| *key != ".zmetadata" && !metadata::is_metadata_key(key) && layout.locate(key).is_none());
            if let Some(key) = stray {
                let reason = "it is not a chunk inside any array's grid, and the parquet layout holds only those";
                return Err(WriteError::Unrepresentable { key: key.into_owned(), reason: reason.into() });
            }
        }
        Ok(layout)
    }

    async fn load_record(&self, index: &ParquetIndex, id: RecordId) -> Result<Arc<Record>, WriteError> {
        let field = Arc::clone(&id.field);
        let failed = |cause: String| {
            WriteError::Read(zarrs_storage::StorageError::Other(format!("cannot read array {field:?}: {cause}")))
        };
        self.record_fetch(index, id, false).map_err(failed)?.load().await.map_err(failed)
    }
}

/// The metadata keys of a JSON set as `.zmetadata` objects; they must be inline JSON.
fn json_metadata(refs: &ReferenceSet) -> Result<serde_json::Map<String, Json>, WriteError> {
    let mut objects = serde_json::Map::new();
    for (key, reference) in refs.iter().filter(|(key, _)| metadata::is_metadata_key(key)) {
        let unrepresentable = |reason: String| WriteError::Unrepresentable { key: key.to_string(), reason };
        let Reference::Inline(text) = reference else {
            return Err(unrepresentable("metadata that is a reference to a file cannot go into .zmetadata".into()));
        };
        let object = lenient::parse_json_lenient(text).map_err(|e| unrepresentable(format!("not JSON: {e}")))?;
        objects.insert(key.into_owned(), object);
    }
    Ok(objects)
}

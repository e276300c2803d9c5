//! The writers: walk a [`ReferenceSource`] and write what it holds.

use std::io::Write;

use futures::StreamExt;

use super::json::{JsonWriter, Output};
use super::{JsonWriteOptions, Progress};
use crate::error::{SourceError, WriteError};
use crate::model::{OwnedReference, ReferenceSource, Walk};
use crate::store::IoRuntime;

/// How many references the async JSON writer hands to its blocking writer at once.
const BATCH: usize = 4096;

/// How often progress is reported while walking, in references.
const PROGRESS_EVERY: u64 = 100_000;

/// Write the references of `source` as kerchunk JSON to `out`: version 0 or
/// version 1 (templates and `gen` expanded), compact, optionally
/// zstd-compressed. Returns the number of references written.
///
/// A JSON set is written in [`ReferenceSet::iter`](crate::ReferenceSet::iter)
/// order with its metadata keys first; a parquet root as its metadata, then
/// each array's chunks in grid order, one record file at a time. A source
/// that reads (a remote parquet root) reads on the process's shared I/O
/// runtime; this function blocks until done.
///
/// ```
/// use zarrs_kerchunk::{JsonVersion, JsonWriteOptions, ReferenceStore, write_json};
/// # let location = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/nc4_deflate_shuffle/refs.json");
/// let store = ReferenceStore::open(location)?;
/// let mut out = Vec::new();
/// let written = write_json(store.source().as_ref(), &mut out, &JsonWriteOptions::default().with_version(JsonVersion::V0))?;
/// assert!(written > 0 && out.starts_with(b"{"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// [`WriteError`] if the source cannot be read or `out` cannot be written.
pub fn write_json(
    source: &dyn ReferenceSource,
    out: impl Write,
    options: &JsonWriteOptions,
) -> Result<u64, WriteError> {
    let mut writer = JsonWriter::new(Output::new(out, options.zstd_level).map_err(output_failed)?, options.version)
        .map_err(output_failed)?;
    let progress = options.progress.as_ref();
    let walked = IoRuntime::default()
        .block_on_here(async {
            let mut references = source.walk(Walk::All);
            while let Some(item) = references.next().await {
                let (key, reference) = item?;
                writer.entry(&key, reference.as_reference()).map_err(output_failed)?;
                if writer.written() % PROGRESS_EVERY == 0 {
                    Progress::report(progress, writer.written());
                }
            }
            Ok::<_, WriteError>(())
        })
        .map_err(|e| WriteError::Read(SourceError::Runtime(e)))?;
    walked?;
    let written = writer.finish().map_err(output_failed)?;
    Progress::report(progress, written);
    Ok(written)
}

/// [`write_json`] for async code: the source is walked on the caller's
/// executor, and the blocking work (writing to `out`, compressing) runs on
/// tokio's blocking pool, a batch of references at a time. Returns the number
/// of references written, and `out`.
///
/// # Errors
/// [`WriteError`] if the source cannot be read or `out` cannot be written.
///
/// # Panics
/// If called outside a tokio runtime.
pub async fn write_json_async<W: Write + Send + 'static>(
    source: &dyn ReferenceSource,
    out: W,
    options: &JsonWriteOptions,
) -> Result<(u64, W), WriteError> {
    let (sender, mut receiver) = tokio::sync::mpsc::channel::<Vec<(String, OwnedReference)>>(2);
    let (version, zstd_level, progress) = (options.version, options.zstd_level, options.progress.clone());
    let blocking = tokio::task::spawn_blocking(move || {
        let mut writer = JsonWriter::new(Output::new(out, zstd_level)?, version)?;
        while let Some(batch) = receiver.blocking_recv() {
            for (key, reference) in batch {
                writer.entry(&key, reference.as_reference())?;
            }
            Progress::report(progress.as_ref(), writer.written());
        }
        writer.finish_into()
    });
    let mut references = source.walk(Walk::All);
    let mut batch = Vec::with_capacity(BATCH);
    let mut walked = Ok(());
    while let Some(item) = references.next().await {
        match item {
            Ok(item) => batch.push(item),
            Err(error) => {
                walked = Err(WriteError::Read(error));
                break;
            }
        }
        // A send fails only when the writer stopped; its error is reported below.
        if batch.len() == BATCH && sender.send(std::mem::replace(&mut batch, Vec::with_capacity(BATCH))).await.is_err()
        {
            break;
        }
    }
    if walked.is_ok() && !batch.is_empty() {
        let _ = sender.send(batch).await;
    }
    drop(sender);
    let written = blocking.await.map_err(WriteError::Task)?.map_err(output_failed);
    walked?;
    written
}

/// A failed write to the JSON output.
fn output_failed(source: std::io::Error) -> WriteError {
    WriteError::Io { location: "the JSON output".into(), source }
}

#[cfg(feature = "parquet")]
pub use parquet_root::{write_parquet, write_parquet_async};

#[cfg(feature = "parquet")]
mod parquet_root {
    use std::collections::BTreeMap;

    use futures::StreamExt;
    use object_store::path::Path as ObjectPath;
    use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
    use serde_json::Value as Json;

    use super::super::parquet::RecordEncoder;
    use super::super::{ParquetWriteOptions, Progress};
    use crate::error::{SourceError, WriteError};
    use crate::model::{Lookup, OwnedReference, ReferenceSource, Walk};
    use crate::parse::parquet::{ParquetLayout, RecordId};
    use crate::store::IoRuntime;
    use crate::zarr::{lenient, metadata};

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
    /// use zarrs_kerchunk::{ParquetWriteOptions, ReferenceStore, object_store, write_parquet};
    /// # let location = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/nc4_deflate_shuffle/refs.json");
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
        let written = runtime.block_on_here(write(source, store, root, options, &runtime, false));
        written.map_err(|e| WriteError::Read(SourceError::Runtime(e)))?
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
        write(source, store, root, options, &IoRuntime::default(), true).await
    }

    async fn write(
        source: &dyn ReferenceSource,
        store: &dyn ObjectStore,
        root: &ObjectPath,
        options: &ParquetWriteOptions,
        runtime: &IoRuntime,
        off_the_executor: bool,
    ) -> Result<u64, WriteError> {
        let encoding = options.encoding;
        let layout = output_layout(source, encoding.record_size).await?;
        check_every_key_has_a_place(source, &layout).await?;
        let put = |file: String, bytes: bytes::Bytes| async move {
            let path = ObjectPath::from(format!("{root}/{file}"));
            store
                .put(&path, PutPayload::from(bytes))
                .await
                .map_err(|source| WriteError::ObjectStore { location: path.to_string(), source })
        };
        let mut encoder = RecordEncoder::new(encoding);
        let mut written = 0;
        for (field, grid) in layout.arrays() {
            let total: u64 = grid.iter().product();
            for n in 0..layout.record_count(field) {
                let id = RecordId { field: std::sync::Arc::clone(field), index: n };
                let rows = n * encoding.record_size..((n + 1) * encoding.record_size).min(total);
                for row in 0..rows.end - rows.start {
                    let key = || layout.chunk_key(&id, row).unwrap_or_default();
                    let found = lookup(source, &key(), runtime).await?;
                    written += u64::from(found.is_some());
                    encoder.push(key, found.as_ref().map(OwnedReference::as_reference))?;
                }
                let file = id.file();
                let finished = if off_the_executor && tokio::runtime::Handle::try_current().is_ok() {
                    let mut moved = std::mem::replace(&mut encoder, RecordEncoder::new(encoding));
                    let (emptied, result) = tokio::task::spawn_blocking(move || {
                        let result = moved.finish();
                        (moved, result)
                    })
                    .await
                    .map_err(WriteError::Task)?;
                    encoder = emptied;
                    result
                } else {
                    encoder.finish()
                };
                let file_bytes = finished.map_err(|source| WriteError::Encode { location: file.clone(), source })?;
                if let Some(bytes) = file_bytes {
                    put(file, bytes).await?;
                }
                Progress::report(options.progress.as_ref(), written);
            }
        }
        put(".zmetadata".into(), layout.zmetadata().into()).await?;
        Ok(written)
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
                    Ok(handle) => handle.spawn(pending).await.map_err(WriteError::Task)?,
                    Err(_) => runtime.block_on(pending).map_err(SourceError::Runtime)?,
                };
                Ok(done?)
            }
        }
    }

    /// The parquet layout of the output: the source's arrays at `record_size` rows per file.
    async fn output_layout(source: &dyn ReferenceSource, record_size: u64) -> Result<ParquetLayout, WriteError> {
        let mut objects = serde_json::Map::new();
        let mut metadata = source.walk(Walk::Metadata);
        while let Some(item) = metadata.next().await {
            let (key, reference) = item?;
            if key == ".zmetadata" {
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

    /// Every key must be metadata or a chunk of some array, or the parquet root would silently lose it.
    async fn check_every_key_has_a_place(
        source: &dyn ReferenceSource,
        layout: &ParquetLayout,
    ) -> Result<(), WriteError> {
        let mut references = source.walk(Walk::All);
        while let Some(item) = references.next().await {
            let (key, _) = item?;
            if key != ".zmetadata" && !metadata::is_metadata_key(&key) && layout.locate(&key).is_none() {
                let reason = "it is not a chunk inside any array's grid, and the parquet layout holds only those";
                return Err(WriteError::Unrepresentable { key, reason: reason.into() });
            }
        }
        Ok(())
    }
}

//! Writing kerchunk JSON from any [`ReferenceSource`], sync or async.

use std::io::Write;

use futures::StreamExt;

use kerchunk::{
    JsonVersion, JsonWriteOptions, JsonWriter, OwnedReference, ReferenceSource, SharedUrls, SourceError, Walk,
    WriteError,
};

use crate::store::IoRuntime;

/// How many references the async JSON writer hands to its blocking writer at once.
const BATCH: usize = 4096;

/// Write the references of `source` as kerchunk JSON to `out`: version 0 or
/// version 1 (templates and `gen` expanded), compact, optionally
/// zstd-compressed. Returns the number of references written.
///
/// A JSON set is written in [`ReferenceSet::iter`](kerchunk::ReferenceSet::iter)
/// order with its metadata keys first; a parquet root as its metadata, then
/// each array's chunks in grid order, one record file at a time. A source
/// that reads (a remote parquet root) reads on the process's shared I/O
/// runtime; this function blocks until done.
///
/// ```
/// use zarrs_kerchunk::kerchunk::{JsonVersion, JsonWriteOptions};
/// use zarrs_kerchunk::{ReferenceStore, write_json};
/// # let location = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/nc4_deflate_shuffle/refs.json");
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
    let runtime = IoRuntime::default();
    let templates = runtime
        .block_on_here(templates(source, options))
        .map_err(|e| WriteError::Read(SourceError::Runtime(e.into())))??;
    let mut writer = JsonWriter::with_templates(out, options, templates).map_err(output_failed)?;
    let walked = runtime
        .block_on_here(async {
            let mut references = source.walk(Walk::All);
            while let Some(item) = references.next().await {
                let (key, reference) = item?;
                writer.entry(&key, reference.as_reference()).map_err(output_failed)?;
            }
            Ok::<_, WriteError>(())
        })
        .map_err(|e| WriteError::Read(SourceError::Runtime(e.into())))?;
    walked?;
    Ok(writer.finish().map_err(output_failed)?.0)
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
    let templates = templates(source, options).await?;
    let (sender, mut receiver) = tokio::sync::mpsc::channel::<Vec<(String, OwnedReference)>>(2);
    let options = options.clone();
    let blocking = tokio::task::spawn_blocking(move || {
        let mut writer = JsonWriter::with_templates(out, &options, templates)?;
        while let Some(batch) = receiver.blocking_recv() {
            for (key, reference) in batch {
                writer.entry(&key, reference.as_reference())?;
            }
        }
        writer.finish()
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
    let written = blocking.await.map_err(|e| WriteError::Task(e.into()))?.map_err(output_failed);
    walked?;
    written
}

/// The URLs to write as templates, if `options` ask for them: those several
/// references of `source` share. A source not in memory is walked once more
/// for them (a parquet root's records are read twice).
async fn templates(source: &dyn ReferenceSource, options: &JsonWriteOptions) -> Result<Vec<String>, WriteError> {
    if !options.url_templates() || options.version() != JsonVersion::V1 {
        return Ok(Vec::new());
    }
    if let Some(set) = source.in_memory() {
        return Ok(set.shared_urls());
    }
    let mut urls = SharedUrls::default();
    let mut references = source.walk(Walk::All);
    while let Some(item) = references.next().await {
        urls.add(&item.map_err(WriteError::Read)?.1.as_reference());
    }
    Ok(urls.shared())
}

/// A failed write to the JSON output.
fn output_failed(source: std::io::Error) -> WriteError {
    WriteError::Io { location: "the JSON output".into(), source }
}

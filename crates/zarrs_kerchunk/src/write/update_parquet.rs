//! Rewriting a parquet reference root in place: the root's layout and record files found,
//! then `to_parquet::write`'s loop told what the root holds, so that it writes only the records that change.

use std::sync::Arc;

use futures::StreamExt;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt};

use kerchunk::parquet::ParquetLayout;
use kerchunk::{BoxError, ParquetWriteOptions, ReferenceSource, SourceError, WriteError};

use super::to_parquet::{Occupied, ParquetUpdate, Previous, write};
use crate::store::IoRuntime;

/// Rewrite the parquet root at `root` in `store`, which holds `previous` now, so that it holds
/// `source`: only the record files whose rows change are written (or removed, when all their
/// rows go), then `.zmetadata`. A daily append along a dimension that comes first in its arrays
/// (time, as a rule) writes the new records and the last partial one, whatever the root's size.
///
/// The root keeps its record size (from its `.zmetadata`; `options`' is used only where the
/// root has none, and then every record is written). `previous` must be what the root holds:
/// the references of a record that compare equal are not written again. A record file is
/// replaced whole by one put, and `.zmetadata` comes last, so until then a reader sees the old
/// set, with at most rows past its grid's end in the last record it had. Blocks until done.
///
/// ```
/// use zarrs_kerchunk::kerchunk::{ParquetWriteOptions, ReferenceSetBuilder};
/// use zarrs_kerchunk::{object_store, update_parquet, write_parquet};
/// let zarray = |n: u64| format!(r#"{{"shape":[{n}],"chunks":[1],"dtype":"<f8","compressor":null,"fill_value":null,"filters":null,"order":"C","zarr_format":2}}"#);
/// let set = |n: u64| {
///     let mut builder = ReferenceSetBuilder::new();
///     builder.insert_inline(".zgroup", br#"{"zarr_format":2}"#);
///     builder.insert_inline("t/.zarray", zarray(n).as_bytes());
///     for i in 0..n {
///         builder.insert_range(&format!("t/{i}"), Some(&format!("day{i}.nc")), 8, 8);
///     }
///     builder.build()
/// };
/// let out = object_store::memory::InMemory::new();
/// let options = ParquetWriteOptions::default().with_record_size(10);
/// write_parquet(&set(25), &out, &"refs.parq".into(), &options)?;
/// // Two more days: records 0 and 1 are as they were, record 2 gains two rows.
/// let update = update_parquet(&set(27), &set(25), &out, &"refs.parq".into(), &options)?;
/// assert_eq!((update.records_written, update.records_kept), (1, 2));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// As [`write_parquet`](crate::write_parquet); [`WriteError::Read`] if the root's `.zmetadata`
/// cannot be read or parsed or its files listed; [`WriteError::Put`] if a record file cannot be
/// removed.
pub fn update_parquet(
    source: &dyn ReferenceSource,
    previous: &dyn ReferenceSource,
    store: &dyn ObjectStore,
    root: &ObjectPath,
    options: &ParquetWriteOptions,
) -> Result<ParquetUpdate, WriteError> {
    let runtime = IoRuntime::default();
    let updated = runtime.block_on_here(async {
        let Some(layout) = previous_layout(store, root).await? else {
            return write(source, store, root, options, &runtime, false, None).await;
        };
        let options = options.clone().with_record_size(layout.record_size());
        let occupied = record_files(store, root, &layout).await?;
        let previous = Previous { source: previous, layout, occupied };
        write(source, store, root, &options, &runtime, false, Some(&previous)).await
    });
    updated.map_err(|e| WriteError::Read(SourceError::Runtime(e.into())))?
}

/// The layout of the root at `root`, if it has a `.zmetadata`.
async fn previous_layout(store: &dyn ObjectStore, root: &ObjectPath) -> Result<Option<ParquetLayout>, WriteError> {
    let path = ObjectPath::from(format!("{root}/.zmetadata"));
    let failed = |source: BoxError| {
        WriteError::Read(SourceError::Fetch { what: "parquet metadata", location: path.to_string(), source })
    };
    let bytes = match store.get(&path).await {
        Ok(got) => got.bytes().await.map_err(|e| failed(e.into()))?,
        Err(object_store::Error::NotFound { .. }) => return Ok(None),
        Err(e) => return Err(failed(e.into())),
    };
    ParquetLayout::parse(&bytes, path.as_ref()).map(Some).map_err(|e| failed(e.into()))
}

/// The record files under `root` of the arrays `layout` has: those an update may keep or remove.
async fn record_files(
    store: &dyn ObjectStore,
    root: &ObjectPath,
    layout: &ParquetLayout,
) -> Result<Occupied, WriteError> {
    let mut occupied = Occupied::new();
    let mut listing = store.list(Some(root));
    while let Some(item) = listing.next().await {
        let meta = item.map_err(|source| {
            WriteError::Read(SourceError::Fetch {
                what: "the listing of",
                location: root.to_string(),
                source: source.into(),
            })
        })?;
        let Some(relative) = meta.location.prefix_match(root) else { continue };
        let relative: Vec<_> = relative.map(|part| part.as_ref().to_owned()).collect();
        let Some((name, folders)) = relative.split_last() else { continue };
        let index = name.strip_prefix("refs.").and_then(|n| n.strip_suffix(".parq")).and_then(|n| n.parse().ok());
        if let (Some(index), Some((field, _))) =
            (index, layout.arrays().find(|(field, _)| ***field == *folders.join("/")))
        {
            occupied.entry(Arc::clone(field)).or_default().insert(index);
        }
    }
    Ok(occupied)
}

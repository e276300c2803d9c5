//! The chunk keys behind a region of an array, for prefetching it: laid on
//! the array's chunk grid, so no zarrs type is needed.

use std::ops::Range;

use bytes::Bytes;
use kerchunk::ReferenceSource;
use kerchunk::zarr::{ChunkGrid, GridError};
use zarrs_storage::{StorageError, StoreKey};

/// The `.zarray` key of the array at the zarrs node path `array` (`/temp` or `temp`).
pub(crate) fn zarray_key(array: &str) -> Result<StoreKey, StorageError> {
    let path = array.trim_matches('/');
    let key = if path.is_empty() { ".zarray".to_owned() } else { format!("{path}/.zarray") };
    StoreKey::new(key).map_err(|e| StorageError::Other(format!("{array:?} is not an array path: {e}")))
}

/// The grid of `array` as `source` knows it, if it can tell without a read.
pub(crate) fn known_grid(source: &dyn ReferenceSource, array: &str) -> Option<Result<ChunkGrid, GridError>> {
    source.chunk_grid(array.trim_matches('/'))
}

/// The grid of `array` from its `.zarray` as a store read it (`None`: it has none).
pub(crate) fn read_grid(zarray: Option<Bytes>) -> Option<Result<ChunkGrid, GridError>> {
    zarray.map(|document| ChunkGrid::from_zarray_document(&document))
}

/// The keys of the chunks of `array` that hold part of `region`, in C order,
/// on its grid (`None`: it has no `.zarray`).
pub(crate) fn chunk_keys(
    array: &str,
    grid: Option<Result<ChunkGrid, GridError>>,
    region: &[Range<u64>],
) -> Result<Vec<StoreKey>, StorageError> {
    let failed = |cause: String| StorageError::Other(format!("cannot prefetch a region of array {array:?}: {cause}"));
    let grid = grid.ok_or_else(|| failed("it has no .zarray".into()))?.map_err(|e| failed(format!(".zarray: {e}")))?;
    let path = array.trim_matches('/');
    grid.chunk_names_in(region)
        .map_err(|e| failed(e.to_string()))?
        .into_iter()
        .map(|name| {
            let key = if path.is_empty() { name } else { format!("{path}/{name}") };
            StoreKey::new(key).map_err(|e| failed(e.to_string()))
        })
        .collect()
}

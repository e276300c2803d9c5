//! The chunk keys behind a region of an array, for prefetching it: read from
//! the array's `.zarray`, so no zarrs type is needed.

use std::ops::Range;

use bytes::Bytes;
use zarrs_storage::{StorageError, StoreKey};

use kerchunk::zarr::grid::ChunkGrid;
use kerchunk::zarr::lenient;

/// The `.zarray` key of the array at the zarrs node path `array` (`/temp` or `temp`).
pub(crate) fn zarray_key(array: &str) -> Result<StoreKey, StorageError> {
    let path = array.trim_matches('/');
    let key = if path.is_empty() { ".zarray".to_owned() } else { format!("{path}/.zarray") };
    StoreKey::new(key).map_err(|e| StorageError::Other(format!("{array:?} is not an array path: {e}")))
}

/// The keys of the chunks of `array` that hold part of `region`, in C order.
pub(crate) fn chunk_keys(
    array: &str,
    zarray: Option<Bytes>,
    region: &[Range<u64>],
) -> Result<Vec<StoreKey>, StorageError> {
    let failed = |cause: String| StorageError::Other(format!("cannot prefetch a region of array {array:?}: {cause}"));
    let zarray = zarray.ok_or_else(|| failed("it has no .zarray".into()))?;
    let zarray = lenient::parse_json_lenient(&zarray).map_err(|e| failed(format!(".zarray is not JSON: {e}")))?;
    let grid = ChunkGrid::from_zarray(&zarray).map_err(|e| failed(format!(".zarray: {e}")))?;
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

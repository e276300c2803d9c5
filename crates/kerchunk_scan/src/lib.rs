//! Make kerchunk references from NetCDF files, in pure Rust: no Python, no
//! netCDF or HDF5 C library.
//!
//! [`scan_netcdf3`] reads the header of a NetCDF-3 file (classic, 64-bit
//! offset or CDF-5), in a store of any kind `object_store` reaches, and
//! gives the [`ReferenceSet`] kerchunk's `NetCDF3ToZarr` would write for it:
//! one array per variable, a fixed variable as one chunk (a byte range of the
//! file), a record variable as a chunk per record. Chunk data is never read,
//! except that of arrays smaller than
//! [`ScanOptions::with_inline_threshold`], which are held in the references.
//! Write the set with the `kerchunk` crate's writers, or read it at once
//! with `zarrs_kerchunk`.
//!
//! ```
//! use std::sync::Arc;
//! use kerchunk_scan::{ScanOptions, scan_netcdf3};
//! use object_store::{ObjectStore, local::LocalFileSystem, path::Path};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let folder = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/data");
//! let store: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(folder).unwrap());
//! let scan = scan_netcdf3(&store, &Path::from("classic.nc"), "classic.nc", &ScanOptions::default()).await.unwrap();
//! let references = scan.references;
//! assert!(references.get("a/.zarray").is_some() && references.get("a/0.0").is_some());
//! println!("{} references from {} requests ({} bytes)", references.len(), scan.stats.requests, scan.stats.bytes);
//! # });
//! ```
//!
//! | Format | Scanned | As kerchunk 0.2.10 |
//! |---|---|---|
//! | NetCDF-3 classic (CDF-1), 64-bit offset (CDF-2) | yes | same offsets and lengths |
//! | NetCDF-3 CDF-5 (64-bit data) | yes | kerchunk cannot read it |
//! | NetCDF-4 / HDF5 | not yet | |
//!
//! Where the references differ from kerchunk's on purpose:
//! - numeric attributes are JSON numbers (kerchunk writes numpy's text of
//!   them, `"7"` or `"[  0 100]"`, except `scale_factor` and `add_offset`);
//! - the fill value is `_FillValue`, and `missing_value` stays an attribute
//!   (kerchunk makes `missing_value` the fill value and drops both), so that
//!   xarray masks both, as CF says;
//! - a global attribute named `filename` is kept (kerchunk drops it);
//! - a single small record variable keeps the file's record count (kerchunk
//!   divides by the unpadded size and makes references past the file's end);
//! - a file written while streaming (record count `0xFFFFFFFF`) has as many
//!   records as fit in the file;
//! - arrays under the inline threshold are held as raw bytes with no
//!   compressor (kerchunk writes them again through zarr, as blosc frames).
//!
//! [`combine`] joins many files' references along one dimension, as
//! kerchunk's `MultiZarrToZarr(concat_dims=[dim])` with every other array in
//! `identical_dims`: the chunk keys and ranges of concatenated arrays are
//! kerchunk's. It differs on purpose where kerchunk loses or invents data:
//! two files that start at the same coordinate value are an error (kerchunk
//! merges them and one file's chunks overwrite the other's); an array
//! without the dimension is taken from the first file (kerchunk gives it the
//! dimension, with chunks missing between files, unless it is listed in
//! `identical_dims`); the coordinate keeps its stored dtype (kerchunk
//! converts `>f8` to `<f8`); shapes are checked, not only chunks.
//!
//! | Combining | |
//! |---|---|
//! | along one dimension, others identical | yes |
//! | several dimensions, `var`, selectors (`attr:`, regex, `cf:`) | no |

mod combine;
mod error;
mod netcdf3;
mod options;
mod read;
mod zarr;

use std::sync::Arc;

use object_store::ObjectStore;
use object_store::path::Path;

pub use error::ScanError;
pub use kerchunk::ReferenceSet;
pub use options::ScanOptions;
pub use read::ReadStats;

/// What a scan made, and what it read to make it.
#[derive(Debug)]
#[non_exhaustive]
pub struct Scan {
    /// The references.
    pub references: ReferenceSet,
    /// The requests made and the bytes read.
    pub stats: ReadStats,
}

/// Scan the NetCDF-3 file at `path` in `store` into references that name
/// it `url` (what a reader will resolve: an absolute URL, or a path relative
/// to where the references are written).
///
/// # Errors
/// [`ScanError`] naming `url`: the file cannot be read, is not NetCDF-3, has
/// a malformed or truncated header, or describes data past its end.
pub async fn scan_netcdf3(
    store: &Arc<dyn ObjectStore>,
    path: &Path,
    url: &str,
    options: &ScanOptions,
) -> Result<Scan, ScanError> {
    let mut reader = read::BlockReader::open(store, path, url, options.block_bytes).await?;
    let references = netcdf3::scan(&mut reader, url, options).await?;
    Ok(Scan { references, stats: reader.stats() })
}

/// Combine the references of many files into one set along `dimension`, as
/// kerchunk's `MultiZarrToZarr(concat_dims=[dimension])` does when every
/// other array is the same in each file (its `identical_dims`):
///
/// - files are ordered by their first coordinate value, and the coordinate
///   becomes one inline array of every file's values, in that order;
/// - each array with the dimension is concatenated along it: its chunk keys
///   renumbered, its references kept (URLs as each file's scan wrote them);
/// - every other array, and the groups' metadata, come from the first file.
///
/// Each input is `(name, references)`, the name used in errors; each must
/// hold its coordinate inline (scan it with
/// [`ScanOptions::with_inlined_variables`]).
///
/// # Errors
/// [`ScanError::Combine`] naming the file and the array: a coordinate
/// missing or not inline, two files starting at the same coordinate value,
/// an array whose dtype, chunks, fill value, codecs or shape (beyond the
/// dimension) differ from the first file's, or a file whose length along the
/// dimension is not a multiple of the chunk length (but the last).
pub fn combine(inputs: Vec<(String, ReferenceSet)>, dimension: &str) -> Result<ReferenceSet, ScanError> {
    let inputs = inputs.into_iter().map(|(name, references)| combine::Input { name, references }).collect();
    combine::combine(inputs, dimension)
}

//! Make kerchunk references from NetCDF, HDF5, GRIB and TIFF files, in pure
//! Rust: no Python, no netCDF, HDF5, eccodes, GDAL or PROJ C library.
//!
//! [`scan`] reads a file's first bytes and scans it as NetCDF-3, HDF5
//! (NetCDF-4 is HDF5), GRIB or TIFF.
//!
//! [`scan_netcdf3`] reads the header of a NetCDF-3 file (classic, 64-bit
//! offset or CDF-5), in a store of any kind `object_store` reaches, and
//! gives the [`ReferenceSet`] kerchunk's `NetCDF3ToZarr` would write for it:
//! one array per variable, a fixed variable as one chunk (a byte range of the
//! file), a record variable as a chunk per record. Chunk data is never read,
//! except that of arrays smaller than
//! [`ScanOptions::with_inline_threshold`], which are held in the references.
//! Write the set with the `kerchunk` crate's writers, or read it at once
//! with `zarrs_kerchunk`. To scan through a disk cache (a file scanned again
//! then costs one `HEAD`), pass a store wrapped by
//! `object_store_disk_cache::DiskCache::wrap`, as the command line's `--cache` does.
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
//! | NetCDF-4 / HDF5 ([`scan_hdf5`]) | yes | same keys, offsets, lengths, filters |
//! | GRIB2 ([`scan_grib`]) | product templates 4.0, 4.1, 4.2, 4.5, 4.8, 4.9, 4.11, 4.12, 4.40-4.43; regular, rotated, Lambert, polar stereographic and equal-area grids | `grib_tree`'s groups and byte ranges; names from eccodes 2.50's tables (below) |
//! | GRIB1 ([`scan_grib`]) | time range indicators 0, 1, 2–5 and 10 on regular latitude/longitude grids; others left out, named | kerchunk mis-splits GRIB1 (one bogus reference) and hangs on bytes after the last message |
//! | DMR++ sidecars ([`scan_dmrpp`]) | OPeNDAP's `GRANULE.dmrpp`: the HDF5 file's references from the sidecar alone, its header unread | kerchunk has no DMR++ reader; VirtualiZarr's parser (`DMRPPParser`) ignores `byteOrder`, `fletcher32` and compact data |
//! | TIFF, GeoTIFF, COG ([`scan_tiff`]) | classic and BigTIFF, both byte orders; tiles and strips; every compression and predictor tifffile references; overviews | `tiff_to_zarr`'s chunk ranges, compressors, filters and GeoKeys, in rioxarray's layout (below) |
//!
//! GRIB2 in detail: each message's sections 1 to 5 are read (one read per
//! message header, with the reader's blocks), never its data. Names,
//! parameters and levels come from eccodes' own definition files, written
//! into tables by `src/grib/tables/make.py`, and evaluated as eccodes
//! evaluates its concepts: 634 parameters written by eccodes from their
//! `paramId` are named exactly as eccodes names them. The references take
//! `grib_tree`'s hierarchy (`t2m/instant/heightAboveGround/t2m`), each
//! variable an array over `time`, `step` and the level (where it takes
//! several values) with one chunk per message, and differ from kerchunk's on
//! purpose where kerchunk is wrong: ensemble members are a `number`
//! dimension (kerchunk keeps one member and drops the rest); levels are
//! eccodes' `level:float` (1.5 m, not 2); `step` counts the unit the
//! messages count it in and says so (kerchunk writes minutes labelled
//! hours); 0-d coordinates are at `name/0` (kerchunk's `name/` is never
//! read); the data's fill value is NaN (kerchunk's `null` reads
//! uninitialised memory where no message is); `time` and `step` are 1-D,
//! `valid_time` 2-D. A local parameter no table names is called
//! `var{discipline}_{category}_{number}`. Probability forecasts of one
//! variable that differ only by their limits (NBM's thresholds) have no
//! dimension of their own yet: the first is kept, the others named in
//! [`Scan::skipped`]. An inventory beside the file
//! (NOAA's `FILE.idx`, ECMWF's `.index`) says where the messages are, so
//! that every header is fetched at once rather than one message after the
//! other (each listed message checked against the file;
//! [`ScanOptions::with_grib_inventory`]). With NOAA's, messages whose lines
//! differ only in their level's numbers (`TMP:500 mb`, `TMP:850 mb`) share
//! one header read, their levels taken from their lines: one request per
//! distinct variable, the inventory trusted for those levels
//! ([`ScanOptions::with_grib_levels_from_inventory`]). [`combine_grib`] makes several GRIB
//! files one tree by their messages' own coordinates. GRIB1 messages are
//! named from eccodes' GRIB1 tables the same way. Not yet: reduced and
//! Gaussian grids, alternating row scanning, the other GRIB2 product
//! templates, GRIB1's monthly means and projected grids (each left out and
//! named in [`Scan::skipped`]).
//!
//! TIFF in detail: only the directories are read (a COG's header comes in
//! the first read), every count and offset checked against the file and
//! [`ScanOptions::with_max_header_bytes`]. The full-resolution image is
//! `band_data` at the root, over `band`, `y` and `x` (or `y`, `x`, `band`
//! where a pixel's samples are stored together: zarr v2 cannot transpose
//! them), one chunk per tile or strip, with the compressor and predictor
//! filter under the codec ids tifffile writes (decoded by
//! `zarrs_kerchunk_codecs`); each overview is the same in a group
//! `overview_N` (tifffile's level N). Beside it, what rioxarray reads of the
//! file: `x` and `y` at pixel centres (from the geotransform, a point
//! raster's shifted as GDAL shifts it; none where the grid is rotated),
//! `band` from 1, and `spatial_ref` with `crs_wkt` (EPSG's WKT 1 from the
//! `crs-definitions` table, no PROJ), `spatial_ref`, `GeoTransform` and
//! `proj:code`, named by `grid_mapping` on the data. Where the references
//! differ from `tiff_to_zarr`'s on purpose:
//! - the layout above: kerchunk writes a single image as a root array
//!   (which xarray cannot open) and a pyramid as arrays `0`, `1`..., with
//!   dimensions `Y`, `X`, `S` and no coordinates or CRS;
//! - a one-band image has a `band` axis of 1 (kerchunk's is 2-D), so its
//!   chunk keys start `0.` and its predictor filter's `shape` has a 1 first;
//! - the fill value is the file's nodata (as the data's type holds it: a
//!   float32 nodata of `-3.4e38` is `-3.3999999521443642e38`), and none
//!   where it has none (kerchunk's 0 makes xarray mask every real zero);
//! - GDAL's per-band metadata is the data array's, one value per band where
//!   they differ (kerchunk keeps the last band's at the root); a scale and
//!   offset shared by the bands are also `scale_factor` and `add_offset`,
//!   and the raster type is `AREA_OR_POINT`, as rioxarray has them; GDAL's
//!   metadata text is unescaped twice, as GDAL writes and reads it (kerchunk
//!   leaves `&amp;` where the file means `&`);
//! - the root's `multiscales` lists every level with its scale and corner;
//! - a TIFF's masks and further images (not overviews) are left out and
//!   named in [`Scan::skipped`] (kerchunk takes tifffile's first series).
//!
//! Strips that do not divide the image's rows (the last one short, which a
//! zarr chunk cannot be), 1-, 4- or 12-bit samples and compressions tifffile
//! does not reference (CCITT, old JPEG) are not scanned, as tifffile
//! refuses them. Tiles are never held inline.
//!
//! HDF5 in detail: superblocks 0 to 3; object headers 1 and 2; old-style
//! (symbol table) and new-style (compact and dense link) groups; compact,
//! contiguous and chunked layouts, with every chunk index (B-tree v1 and
//! v2, fixed and extensible arrays, single chunk, implicit); filters
//! deflate, shuffle, fletcher32, blosc and zstd as zarr filters; integers,
//! floats (`f2` included) of either byte order, h5py's bool and complex,
//! enums (as their integers), fixed-length strings, variable-length strings
//! (held in the references, as kerchunk does); fill values and
//! `_ARRAY_DIMENSIONS` by kerchunk's rules (dimension scales by path,
//! `phony_dim_<axis>` without one).
//!
//! Where HDF5 references differ from kerchunk's on purpose:
//! - compact datasets are always held in the references (kerchunk loses
//!   their data above its threshold, and writes no chunk);
//! - filters keep the pipeline's order (kerchunk puts shuffle first, which
//!   misreads a deflate-then-shuffle pipeline), and a filter HDF5 skipped on
//!   every chunk is left out (kerchunk may hold such chunks decoded);
//! - fletcher32 is numcodecs' `fletcher32` filter, so such chunks are
//!   referenced and checked (kerchunk cannot reference them);
//! - an array whose chunks were stored with different filters is left out
//!   or held decoded when small (kerchunk re-encodes the odd chunks);
//! - a `_FillValue` on fixed-length strings is the fill's bytes (kerchunk
//!   encodes it twice);
//! - N-dimensional attributes are nested JSON lists, complex ones text
//!   (kerchunk writes Python's text of both); `f4` attributes are written in
//!   their shortest form (`0.1`, where kerchunk writes `0.10000000149011612`);
//! - an array held decoded (a filter zarr lacks, under the threshold) is one
//!   chunk and keeps its fill value (kerchunk uses the HDF5 chunks and a null
//!   fill);
//! - datasets reached through other hard links and through soft links are
//!   written under each name, as kerchunk's
//!   `translate(preserve_linked_dsets=True)` writes them (its default leaves
//!   them out); soft links to groups and external links are not followed.
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
//! Many files' references are combined into one set by the `kerchunk_combine` crate (scanned
//! files, or sets made by anyone).
//!
//! [`subchunk`] splits an uncompressed array's chunks (a contiguous dataset,
//! a NetCDF-3 variable: one range each) into smaller ranges along its first
//! dimension, as kerchunk's `utils.subchunk` does when asked, so that a
//! reader of a part reads only that part.

mod dmrpp;
mod error;
mod grib;
mod hdf5;
mod netcdf3;
mod options;
mod read;
mod subchunk;
mod tiff;
mod zarr;

use std::sync::Arc;

use object_store::ObjectStore;
use object_store::path::Path;

pub use error::ScanError;
pub use grib::{GribMessage, IndexEntry, grib_messages, parse_ecmwf_index, parse_noaa_idx};
pub use kerchunk::ReferenceSet;
pub use options::{DmrppSidecars, ParserThread, ScanOptions, Skipped, UnsupportedArrays};
pub use read::ReadStats;
pub use subchunk::{SubchunkError, subchunk};

/// What a scan made, and what it read to make it.
#[derive(Debug)]
#[non_exhaustive]
pub struct Scan {
    /// The references.
    pub references: ReferenceSet,
    /// The requests made and the bytes read.
    pub stats: ReadStats,
    /// What was left out, and why: arrays references cannot express
    /// (under [`UnsupportedArrays::Skip`]) and attributes JSON cannot.
    pub skipped: Vec<Skipped>,
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
    let reader = read::BlockReader::open(store, path, url, (options.block_bytes, options.first_read_bytes)).await?;
    netcdf3_from(reader, url, options).await
}

/// Scans the GRIB file at `path` (GRIB2 or GRIB1; named `url` in the
/// references) into references in kerchunk's `grib_tree` hierarchy: a group
/// per variable, step type and type of level, each variable an array over
/// time, step, level and ensemble member with one chunk per message, read
/// through the `grib` codec of `zarrs_kerchunk_codecs`.
///
/// ```
/// use std::sync::Arc;
/// use kerchunk_scan::{ScanOptions, scan_grib};
/// use object_store::{ObjectStore, local::LocalFileSystem, path::Path};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let folder = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/data");
/// let store: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(folder).unwrap());
/// let file = "hrrr_like.grib2"; // NCEP's tables on a Lambert grid, 15 messages
/// let scan = scan_grib(&store, &Path::from(file), file, &ScanOptions::default()).await.unwrap();
/// // Temperature on three pressure levels at two steps: one array, a chunk per message.
/// let references = scan.references;
/// assert!(references.get("t/instant/isobaricInhPa/t/.zarray").is_some());
/// assert!(references.get("t/instant/isobaricInhPa/t/0.1.2.0.0").is_some()); // step 1, 850 hPa
/// println!("{} references from {} requests", references.len(), scan.stats.requests);
/// # });
/// ```
///
/// # Errors
/// [`ScanError::Read`] if the file cannot be read; [`ScanError::Grib`]
/// naming the message (by its offset) whose sections are malformed, or, with
/// [`UnsupportedArrays::Fail`], a message this scanner does not read yet (a
/// product or grid template not scanned, a step in months); a file none of
/// whose messages could be scanned; an inventory beside the file that
/// disagrees with it.
pub async fn scan_grib(
    store: &Arc<dyn ObjectStore>,
    path: &Path,
    url: &str,
    options: &ScanOptions,
) -> Result<Scan, ScanError> {
    let reader = read::BlockReader::open(store, path, url, (options.block_bytes, options.first_read_bytes)).await?;
    grib_from(reader, url, options).await
}

/// Several GRIB files' references (each named, as [`scan_grib`] made them)
/// made one tree, as kerchunk's `grib_tree` makes one of many files: every
/// message goes where its member, time, step and level put it, so a forecast
/// run's files become one `step` axis, several runs one `time` axis and an
/// ensemble's files one `number` axis, with no dimension to name. A message
/// whose coordinates another already has is left out, the first kept, and
/// named in [`Scan::skipped`].
///
/// # Errors
/// [`ScanError::Grib`] naming an input that is no GRIB tree of this crate's
/// (no `GRIB_edition` attribute, a coordinate missing).
pub fn combine_grib(inputs: &[(String, ReferenceSet)]) -> Result<Scan, ScanError> {
    let (references, skipped) = grib::combine(inputs)?;
    Ok(Scan { references, stats: ReadStats::default(), skipped })
}

/// Scans the TIFF, GeoTIFF or COG at `path` (classic or BigTIFF, either
/// byte order; named `url` in the references) into a dataset rioxarray
/// reads as it reads the file: `band_data` over `band`, `y` and `x` (or `y`,
/// `x`, `band` where a pixel's samples are stored together), one chunk per
/// tile or strip with the codec ids tifffile writes (decoded by
/// `zarrs_kerchunk_codecs`), `x` and `y` at pixel centres, and a
/// `spatial_ref` with the CRS (its WKT from the EPSG code, and the code);
/// each overview in a group `overview_N` of the same layout.
///
/// Only the directories are read: a COG's header in the first read, and one
/// more for a JPEG tile's first bytes where tifffile reads them too.
///
/// ```
/// use std::sync::Arc;
/// use kerchunk_scan::{ScanOptions, scan_tiff};
/// use object_store::{ObjectStore, local::LocalFileSystem, path::Path};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let folder = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/data");
/// let store: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(folder).unwrap());
/// let file = "cog_utm.tif"; // 2 bands by pixel, UTM zone 33N, tiles of 32, two overviews
/// let scan = scan_tiff(&store, &Path::from(file), file, &ScanOptions::default()).await.unwrap();
/// let references = scan.references;
/// assert!(references.get("band_data/1.2.0").is_some()); // (y, x, band): tile row 1, column 2
/// assert!(references.get("overview_1/band_data/.zarray").is_some());
/// assert!(references.get("spatial_ref/.zattrs").is_some());
/// println!("{} references from {} requests", references.len(), scan.stats.requests);
/// # });
/// ```
///
/// # Errors
/// [`ScanError::Read`] if the file cannot be read; [`ScanError::Tiff`] for
/// a header or directory that is malformed (a loop of directories, a tile
/// past the file's end, tables that disagree with the image's size) or a
/// full-resolution image references cannot express (a compression tifffile
/// does not reference, 1-bit or 12-bit samples, strips that do not divide
/// the image); [`ScanError::HeaderTooLarge`] for directories past
/// [`ScanOptions::with_max_header_bytes`].
pub async fn scan_tiff(
    store: &Arc<dyn ObjectStore>,
    path: &Path,
    url: &str,
    options: &ScanOptions,
) -> Result<Scan, ScanError> {
    let reader = read::BlockReader::open(store, path, url, (options.block_bytes, options.first_read_bytes)).await?;
    tiff_from(reader, url, options).await
}

async fn tiff_from(mut reader: read::BlockReader<'_>, url: &str, options: &ScanOptions) -> Result<Scan, ScanError> {
    let (references, skipped) = tiff::scan(&mut reader, url, options).await?;
    Ok(Scan { references, stats: reader.stats(), skipped })
}

async fn grib_from(mut reader: read::BlockReader<'_>, url: &str, options: &ScanOptions) -> Result<Scan, ScanError> {
    let (references, skipped) = grib::scan(&mut reader, url, options).await?;
    Ok(Scan { references, stats: reader.stats(), skipped })
}

async fn netcdf3_from(mut reader: read::BlockReader<'_>, url: &str, options: &ScanOptions) -> Result<Scan, ScanError> {
    let references = netcdf3::scan(&mut reader, url, options).await?;
    Ok(Scan { references, stats: reader.stats(), skipped: Vec::new() })
}

/// Scan the HDF5 or NetCDF-4 file at `path` in `store` into references
/// that name it `url`, as kerchunk's `SingleHdf5ToZarr` would: a zarr group
/// per HDF5 group, an array per dataset, a reference per allocated chunk.
/// Only metadata is read (and the chunks under the inline threshold), in
/// blocks, on a blocking thread of the current Tokio runtime.
///
/// Arrays references cannot express are left out and listed in
/// [`Scan::skipped`], or fail the scan (see
/// [`ScanOptions::with_unsupported_arrays`]).
///
/// # Errors
/// [`ScanError`] naming `url`: the file cannot be read, is not HDF5, its
/// superblock or group structure is malformed, its metadata passes
/// [`ScanOptions::with_max_header_bytes`], it makes more references than
/// allowed, or (with [`UnsupportedArrays::Fail`]) an array cannot be
/// expressed. Called outside a Tokio runtime, [`ScanError::Read`].
pub async fn scan_hdf5(
    store: &Arc<dyn ObjectStore>,
    path: &Path,
    url: &str,
    options: &ScanOptions,
) -> Result<Scan, ScanError> {
    let reader = read::BlockReader::open(store, path, url, (options.block_bytes, options.first_read_bytes)).await?;
    hdf5_from(reader, store, path, url, options).await
}

async fn hdf5_from(
    reader: read::BlockReader<'_>,
    store: &Arc<dyn ObjectStore>,
    path: &Path,
    url: &str,
    options: &ScanOptions,
) -> Result<Scan, ScanError> {
    let runtime = tokio::runtime::Handle::try_current().map_err(|e| ScanError::Read {
        url: url.to_owned(),
        source: object_store::Error::Generic { store: "scan_hdf5", source: Box::new(e) },
    })?;
    // The parser reads synchronously: it runs where blocking is allowed (see `ParserThread`).
    let in_place = options.parser_thread == ParserThread::CallingThread
        && runtime.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread;
    let storage = Arc::new(hdf5::storage::StoreStorage::new(
        Arc::clone(store),
        path.clone(),
        url.to_owned(),
        runtime,
        reader.into_parts(),
        (options.max_header_bytes, options.read_ahead_bytes),
    ));
    let (task_storage, task_url, task_options) = (Arc::clone(&storage), url.to_owned(), options.clone());
    let parse = move || {
        // The parser is hardened, but a file is untrusted input: a panic
        // it was not meant to have becomes this file's error.
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| hdf5::scan(&task_storage, &task_url, &task_options)))
    };
    let scanned =
        if in_place { Ok(tokio::task::block_in_place(parse)) } else { tokio::task::spawn_blocking(parse).await };
    let panicked = |message: String| ScanError::Hdf5Panic { url: url.to_owned(), message };
    let (references, skipped) = match scanned {
        Ok(Ok(result)) => result?,
        Ok(Err(panic)) => return Err(panicked(panic_message(panic.as_ref()))),
        Err(join) => return Err(panicked(join.to_string())),
    };
    Ok(Scan { references, stats: storage.stats(), skipped })
}

/// Scans the DMR++ sidecar at `path` (OPeNDAP Hyrax's `GRANULE.dmrpp`, named `url`) into
/// references to the HDF5 or NetCDF-4 file it describes, as [`scan_hdf5`] would make them from
/// the file, without reading the file's header: the sidecar holds the file's metadata and its
/// whole chunk index. The data file is the sidecar's `dmrpp:href` where that is a URL, else the
/// sidecar's own URL without `.dmrpp` (the file beside it). Chunks under the inline threshold
/// are read from the file beside the sidecar (in the same store) and held; those of a file
/// elsewhere are referenced.
///
/// ```
/// use std::sync::Arc;
/// use kerchunk_scan::{ScanOptions, scan_dmrpp};
/// use object_store::{ObjectStore, local::LocalFileSystem, path::Path};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let folder = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/data");
/// let store: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(folder).unwrap());
/// let sidecar = "chunked_gzipped_twoD.h5.dmrpp"; // bes's test pair, beside its HDF5 file
/// let scan = scan_dmrpp(&store, &Path::from(sidecar), sidecar, &ScanOptions::default()).await.unwrap();
/// let references = scan.references;
/// assert!(references.get("d_4_gzipped_chunks/1.1").is_some());
/// println!("{} references from {} requests", references.len(), scan.stats.requests);
/// # });
/// ```
///
/// # Errors
/// [`ScanError::Read`] if the sidecar (or a chunk to hold) cannot be read;
/// [`ScanError::Dmrpp`] for a sidecar that is not DMR++ XML or names no data file it can be
/// resolved to; [`ScanError::HeaderTooLarge`] for one over
/// [`ScanOptions::with_max_header_bytes`]; [`ScanError::Variable`] for a variable references
/// cannot express, under [`UnsupportedArrays::Fail`].
pub async fn scan_dmrpp(
    store: &Arc<dyn ObjectStore>,
    path: &Path,
    url: &str,
    options: &ScanOptions,
) -> Result<Scan, ScanError> {
    let reader = read::BlockReader::open(store, path, url, (options.block_bytes, options.first_read_bytes)).await?;
    dmrpp_from(reader, store, url, options).await
}

async fn dmrpp_from(
    mut reader: read::BlockReader<'_>,
    store: &Arc<dyn ObjectStore>,
    url: &str,
    options: &ScanOptions,
) -> Result<Scan, ScanError> {
    let size = reader.size();
    if size > options.max_header_bytes {
        return Err(ScanError::HeaderTooLarge { url: url.to_owned(), limit: options.max_header_bytes });
    }
    let document = reader.read(0..size).await?;
    let described = dmrpp::describe(&document, url, options)?;
    let mut stats = reader.stats();
    // The file beside the sidecar is in its store: its small chunks are read and held.
    let beside = url.strip_suffix(".dmrpp") == Some(described.data_url.as_str());
    let data_path = reader.path().as_ref().strip_suffix(".dmrpp").map(Path::from);
    let wanted = !described.to_inline.is_empty() || !described.to_decode.is_empty();
    let (references, skipped) = match data_path.filter(|_| beside && wanted) {
        Some(data_path) => {
            let data_url = described.data_url.clone();
            // The small chunks, then each chunk of the arrays held whole.
            let ranges: Vec<std::ops::Range<u64>> = described
                .to_inline
                .iter()
                .map(|(_, offset, length)| *offset..offset + length)
                .chain(described.to_decode.iter().flat_map(|w| w.chunks.iter().map(|(_, o, l)| *o..o + l)))
                .collect();
            let fetched = read::fetch_exact_ranges(store, &data_path, &data_url, &ranges, |_| false).await?;
            let mut fetched: Vec<bytes::Bytes> = fetched.into_iter().flatten().collect();
            stats.requests += fetched.len() as u64;
            stats.bytes += fetched.iter().map(|b| b.len() as u64).sum::<u64>();
            let mut wholes = fetched.split_off(described.to_inline.len());
            let mut decoded = Vec::with_capacity(described.to_decode.len());
            for whole in &described.to_decode {
                let rest = wholes.split_off(whole.chunks.len());
                let bytes = whole.assemble(&wholes).map_err(|reason| ScanError::Variable {
                    url: data_url.clone(),
                    variable: whole.variable().to_owned(),
                    reason,
                })?;
                decoded.push(bytes);
                wholes = rest;
            }
            described.finish(Some((&fetched, &decoded)))
        }
        None if described.to_decode.is_empty() => described.finish(None),
        None => {
            let whole = &described.to_decode[0];
            return Err(ScanError::Variable {
                url: url.to_owned(),
                variable: whole.variable().to_owned(),
                reason: format!(
                    "held whole to combine, it is read from the data file, {}, which is not beside the sidecar \
                     in its store",
                    described.data_url
                ),
            });
        }
    };
    Ok(Scan { references, stats, skipped })
}

/// Scan a NetCDF-3, NetCDF-4, HDF5, GRIB or TIFF file, or a DMR++ sidecar, whichever it is (by
/// its first bytes), with [`scan_netcdf3`], [`scan_hdf5`], [`scan_grib`], [`scan_tiff`] or
/// [`scan_dmrpp`]; or, as [`ScanOptions::with_dmrpp_sidecars`] asks, the file's sidecar
/// (`FILE.dmrpp` beside it) in its place.
///
/// # Errors
/// As those; [`ScanError::UnknownFormat`] for a file that is none of them; under
/// [`DmrppSidecars::Only`], [`ScanError::Dmrpp`] for a file without a sidecar.
pub async fn scan(
    store: &Arc<dyn ObjectStore>,
    path: &Path,
    url: &str,
    options: &ScanOptions,
) -> Result<Scan, ScanError> {
    let blocks = (options.block_bytes, options.first_read_bytes);
    // The file's DMR++ sidecar, where asked for and there is one, in place of its header.
    let mut looked = 0;
    if options.dmrpp != DmrppSidecars::Never && path.extension() != Some("dmrpp") {
        let (sidecar, sidecar_url) = (Path::from(format!("{path}.dmrpp")), format!("{url}.dmrpp"));
        if let Some(reader) = read::BlockReader::open_if_exists(store, &sidecar, &sidecar_url, blocks).await? {
            return dmrpp_from(reader, store, &sidecar_url, options).await;
        }
        if options.dmrpp == DmrppSidecars::Only {
            return Err(ScanError::Dmrpp {
                url: sidecar_url,
                reason: "there is none beside the file, and only sidecars are read (DmrppSidecars::Only)".to_owned(),
            });
        }
        looked = 1;
    }
    // The first block tells the format, and either scanner goes on from it.
    let mut reader = read::BlockReader::open(store, path, url, blocks).await?;
    reader.count_requests(looked);
    // Within the first block, which the reader holds already.
    let first = reader.read(0..reader.size().min(512)).await?;
    if first.starts_with(b"CDF") {
        return netcdf3_from(reader, url, options).await;
    }
    if first.starts_with(b"GRIB") {
        return grib_from(reader, url, options).await;
    }
    if tiff::is_tiff(&first) {
        return tiff_from(reader, url, options).await;
    }
    if dmrpp::is_dmrpp(&first) {
        return dmrpp_from(reader, store, url, options).await;
    }
    hdf5_from(reader, store, path, url, options).await.map_err(|error| match error {
        ScanError::Hdf5 { source: hdf5_reader::error::Error::InvalidMagic, .. } => ScanError::UnknownFormat {
            url: url.to_owned(),
            reason: format!("it starts with {:?}", String::from_utf8_lossy(&first[..first.len().min(4)])),
        },
        other => other,
    })
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned())
}

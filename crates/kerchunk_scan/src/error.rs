//! Why a file could not be scanned: each error names the file.

/// Why a file could not be scanned into references.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ScanError {
    /// The file could not be read from its store.
    #[error("cannot read {url}: {source}")]
    Read {
        /// The file, as its references will name it.
        url: String,
        /// The store's error.
        #[source]
        source: object_store::Error,
    },
    /// The store answered a ranged read with another number of bytes.
    #[error("{url}: asked for bytes {}..{} and the store returned {got} bytes", .range.start, .range.end)]
    ShortRead {
        /// The file.
        url: String,
        /// The bytes asked for.
        range: std::ops::Range<u64>,
        /// How many came back.
        got: u64,
    },
    /// The file is not of a format this crate scans.
    #[error("{url} is not a NetCDF-3 file: {reason}")]
    NotNetcdf3 {
        /// The file.
        url: String,
        /// What its first bytes are instead.
        reason: String,
    },
    /// The file's header is malformed or truncated.
    #[error("{url}: malformed NetCDF-3 header: {source}")]
    Header {
        /// The file.
        url: String,
        /// The header parser's error.
        #[source]
        source: netcdf_reader::Error,
    },
    /// The file is not of a format this crate scans (NetCDF-3, HDF5, GRIB, TIFF).
    #[error("{url} is neither NetCDF-3, HDF5 (NetCDF-4), GRIB nor TIFF: {reason}")]
    UnknownFormat {
        /// The file.
        url: String,
        /// What its first bytes are instead.
        reason: String,
    },
    /// A GRIB file's message, or its index (`.idx`, `.index`), is malformed;
    /// or, under [`UnsupportedArrays::Fail`](crate::UnsupportedArrays::Fail),
    /// a message is in a form not scanned yet (the reason says which).
    #[error("{url}: {reason}")]
    Grib {
        /// The file, or its index.
        url: String,
        /// What is wrong, and where.
        reason: String,
    },
    /// A TIFF's header or directories are malformed (a loop, a table past
    /// the file's end, counts that disagree with the image's size), or,
    /// under [`UnsupportedArrays::Fail`](crate::UnsupportedArrays::Fail), an
    /// image is in a form references cannot express (the reason says which).
    #[error("{url}: {reason}")]
    Tiff {
        /// The file.
        url: String,
        /// What is wrong, and where.
        reason: String,
    },
    /// The HDF5 (NetCDF-4) file is malformed, truncated, or uses a feature
    /// the parser lacks, where the whole file depends on it (the superblock,
    /// a group).
    #[error("{url}: cannot read the HDF5 structure: {source}")]
    Hdf5 {
        /// The file.
        url: String,
        /// The HDF5 parser's error.
        #[source]
        source: hdf5_reader::error::Error,
    },
    /// The HDF5 parser failed on the file in a way it should have reported
    /// as an error (a bug in it, found by this file), caught here.
    #[error("{url}: the HDF5 parser failed on this file: {message}")]
    Hdf5Panic {
        /// The file.
        url: String,
        /// The parser's message.
        message: String,
    },
    /// The header (NetCDF-3) or the metadata (HDF5) is longer than
    /// [`ScanOptions::with_max_header_bytes`](crate::ScanOptions::with_max_header_bytes) allows.
    #[error("{url}: the metadata is longer than the limit of {limit} bytes (ScanOptions::with_max_header_bytes)")]
    HeaderTooLarge {
        /// The file.
        url: String,
        /// The limit.
        limit: u64,
    },
    /// A DMR++ sidecar is not DMR++ XML, or names no data file it can be resolved to.
    #[error("{url}: not a DMR++ sidecar this crate reads: {reason}")]
    Dmrpp {
        /// The sidecar.
        url: String,
        /// What is wrong.
        reason: String,
    },
    /// The header describes data the file cannot hold: a variable past the
    /// file's end, a size past `u64::MAX`, a type references cannot express.
    #[error("{url}: variable {variable:?}: {reason}")]
    Variable {
        /// The file.
        url: String,
        /// The variable.
        variable: String,
        /// What is wrong.
        reason: String,
    },
}

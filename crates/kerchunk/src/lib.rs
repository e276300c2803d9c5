//! The [kerchunk](https://fsspec.github.io/kerchunk/) reference format, with
//! no I/O runtime: the model, the JSON (version 0 and 1) and parquet
//! parsers, and the writers.
//!
//! A reference set maps every key of a Zarr version 2 hierarchy to inline
//! bytes or to a byte range of some other file (NetCDF, HDF5, GRIB, raw).
//! This crate parses kerchunk JSON (plain, gzip or zstd; templates and `gen`
//! expanded in a sandbox, every cost bounded by [`Limits`]) into a compact
//! [`ReferenceSet`], decodes fsspec's parquet layout (feature `parquet`),
//! and writes both. It reads bytes and [`std::io::Read`] and writes to
//! [`std::io::Write`]; it depends on no async runtime, object store or Zarr
//! implementation. [`zarrs_kerchunk`](https://docs.rs/zarrs_kerchunk) serves
//! the sets it parses as [zarrs](https://docs.rs/zarrs) stores.
//!
//! ```
//! use kerchunk::{ParseOptions, Reference, ReferenceSet};
//! let doc = br#"{"version": 1, "templates": {"u": "s3://bucket/file.nc"},
//!               "refs": {".zgroup": {"zarr_format": 2}, "x/0": ["{{u}}", 100, 8]}}"#;
//! let set = ReferenceSet::from_json(doc, &ParseOptions::default())?;
//! assert_eq!(set.get("x/0"), Some(Reference::Range { url: Some("s3://bucket/file.nc"), offset: 100, length: 8 }));
//! # Ok::<(), kerchunk::ParseError>(())
//! ```
//!
//! A [`ReferenceSource`] answers what each key points to: a [`ReferenceSet`]
//! in memory, or any source that must read first (the store crate's parquet
//! root); writers and stores hold a `dyn ReferenceSource`.
//!
//! # Features
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `parquet` | no | fsspec's parquet layout: [`parquet`] (layout, record files decoded and encoded); brings in arrow and parquet |
//!
//! # Compatibility
//!
//! | `kerchunk` | kerchunk (Python) | fsspec references spec |
//! |---|---|---|
//! | 0.1 | 0.2 | version 0 and 1 |

#![cfg_attr(docsrs, feature(doc_cfg))]

mod error;
mod model;
mod parse;
mod write;
pub mod zarr;

/// fsspec's parquet reference layout: the `.zmetadata` of a root, its record
/// files decoded into rows, and record files encoded.
#[cfg(feature = "parquet")]
#[cfg_attr(docsrs, doc(cfg(feature = "parquet")))]
pub mod parquet {
    pub use crate::parse::parquet::{ParquetLayout, Record, RecordId, Row};
    pub use crate::write::parquet::RecordEncoder;
}

#[cfg(feature = "parquet")]
pub use error::RecordError;
pub use error::{BoxError, ParseError, SourceError, WriteError, error_chain};
pub use model::{
    Listing, Lookup, OwnedReference, PendingKeys, PendingReference, Reference, ReferenceSet, ReferenceSetBuilder,
    ReferenceSource, Walk,
};
pub use parse::{Limits, MalformedReferences, ParseOptions};
pub use write::{JsonVersion, JsonWriteOptions, JsonWriter, Progress, SharedUrls, inline_json_string};
#[cfg(feature = "parquet")]
pub use write::{ParquetWriteOptions, PathEncoding};

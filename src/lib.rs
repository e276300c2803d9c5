//! Open [kerchunk](https://fsspec.github.io/kerchunk/) reference sets as
//! [`zarrs`](https://docs.rs/zarrs) stores.
//!
//! A reference set maps every key of a Zarr version 2 hierarchy to inline
//! bytes or to a byte range of some other file (NetCDF, HDF5, GRIB, raw). This
//! crate reads kerchunk JSON (version 0 and 1, plain, gzip or zstd) and fsspec's
//! parquet layout, and serves the hierarchy through zarrs' storage traits,
//! sync ([`ReferenceStore`]) and async ([`AsyncReferenceStore`]), reading the
//! referenced bytes through [`object_store`].
//!
//! ```
//! use std::sync::Arc;
//! use zarrs::array::Array;
//! use zarrs_kerchunk::ReferenceStore;
//!
//! # let location = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/data/sample.json");
//! let store = Arc::new(ReferenceStore::open(location)?); // a path or a URL
//! let air = Array::open(store, "/air")?;
//! let values: ndarray::ArrayD<f32> = air.retrieve_array_subset(&[0..1, 0..9, 0..12])?;
//! assert_eq!(values.shape(), [1, 9, 12]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Options (object stores per URL prefix, an [`ObjectStoreRegistry`](object_store::registry::ObjectStoreRegistry),
//! `object_store` configuration keys, a tokio runtime, a target for `null`
//! URLs, template overrides) go through [`ReferenceStoreBuilder`].
//!
//! # Layers
//!
//! A [`ReferenceSource`] answers what each key points to: a
//! [`ReferenceSet`] parsed from JSON, held in 20 bytes a chunk, or a parquet
//! root whose record files are loaded on demand. The stores plan each read
//! from the source's answer, resolve its URL under the access policy, and
//! read it with checked, optionally coalesced reads. The writers
//! ([`write_json`], `write_parquet`) walk any source.
//!
//! # What it guarantees
//!
//! - A key with no reference reads as missing (the fill value); a reference
//!   whose target cannot be read is an error naming the key, the URL and the
//!   cause, never a fill value.
//! - A target that answers with fewer or more bytes than referenced is an
//!   error, never a short or zero-filled chunk; a local read is checked
//!   against the file's length before anything is allocated for it.
//! - Malformed documents and references are errors naming the key; bad input
//!   never panics.
//! - A reference set read from a remote location may not read local files,
//!   however the URL is spelled, unless
//!   [`ReferenceStoreBuilder::allow_local_files_from_remote_references`] allows it.
//! - With [`ReferenceStoreBuilder::with_allowed_prefixes`], references read
//!   only targets under the listed folders; a remote reference set may not
//!   name URLs with whitespace or control characters.
//! - One document's cost is bounded by [`Limits`]: its size after
//!   decompression, the references and text `gen` and templates produce, and
//!   the template work of the whole document.
//! - Remote reads give up in tens of seconds: 5 s to connect, 10 s without a
//!   byte, 60 s per request, at most 3 retries within 30 s, unless configured
//!   otherwise ([`ReferenceStoreBuilder::with_timeout`], `with_retry`).
//! - Every read from an object store, whichever store serves it, ends within
//!   a deadline (2 minutes; [`ReferenceStoreBuilder::with_read_deadline`]).
//! - The first ETag seen for a target is pinned: a target rewritten while it
//!   is being read is [`ReadError::Changed`], never bytes of two versions.
//! - Created object stores read only the `AWS_*`, `GOOGLE_*` and `AZURE_*`
//!   environment variables.
//! - Sync calls may be made from async code (a tokio runtime's thread).
//! - With [`ReferenceStoreBuilder::with_pins`], a target that changed since
//!   it was pinned is [`ReadError::Stale`], never other bytes; see [`inspect`].
//!
//! # Features
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `parquet` | yes | fsspec's parquet reference layout, read and written (arrow and parquet) |
//! | `http` | yes | `http(s)://` targets and reference files |
//! | `aws` | yes | `s3://` targets |
//! | `gcp` | yes | `gs://` targets |
//! | `azure` | yes | `az://`, `abfs://` targets |
//! | `zlib-codec` | yes | [`codec::register_zlib_codec`]: zarrs' zlib codec replaced by one that inflates each chunk in one call (brings in zarrs) |
//! | `libdeflate` | yes | that codec inflates with libdeflate (C, compiled from bundled source) instead of zlib-rs (pure Rust): about a quarter faster |
//! | `cli` | no | the `zarrs-kerchunk` command line (`info`, `stats`, `cat`, `audit`, `pin`, `convert`, `plot`) |
//!
//! # Compatibility
//!
//! | `zarrs_kerchunk` | `zarrs` | `zarrs_storage` | `object_store` |
//! |---|---|---|---|
//! | 0.1 | 0.23 | 0.4 | 0.14 |

#[cfg(feature = "zlib-codec")]
pub mod codec;
mod error;
mod fetch;
pub mod inspect;
mod model;
mod open;
mod parse;
mod resolve;
mod sources;
mod store;
mod write;
mod zarr;

#[cfg(feature = "parquet")]
pub use error::RecordError;
pub use error::{InspectError, ReadError, ReferenceError, ResolveError, SourceError, WriteError};
pub use model::{
    Listing, Lookup, OwnedReference, PendingKeys, PendingReference, Reference, ReferenceSet, ReferenceSetBuilder,
    ReferenceSource, Walk,
};
pub use open::{DEFAULT_READ_AHEAD, ReferenceStoreBuilder};
pub use parse::{Limits, ParseOptions};
pub use resolve::{Pin, Pins, PinsError, StoreRegistry};
#[cfg(feature = "parquet")]
pub use sources::parquet::RecordCacheOptions;
pub use store::{AsyncReferenceStore, ReferenceStore};
pub use write::{JsonVersion, JsonWriteOptions, Progress, write_json, write_json_async};
#[cfg(feature = "parquet")]
pub use write::{ParquetWriteOptions, PathEncoding, write_parquet, write_parquet_async};

pub use object_store;

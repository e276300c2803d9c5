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
//! The format (the model, the parsers, the writers' options) is the
//! [`kerchunk`] crate, re-exported here. Its
//! [`ReferenceSource`](kerchunk::ReferenceSource) answers what each key
//! points to: a [`ReferenceSet`](kerchunk::ReferenceSet) parsed from JSON,
//! held in 20 bytes a chunk, or a parquet root whose record files are loaded
//! on demand. The stores plan each read from the source's answer, resolve
//! its URL under the access policy, and read it with checked, optionally
//! coalesced reads. The writers ([`write_json`], `write_parquet`) walk any
//! source. Statistics, audits, pins and the command line are in
//! `zarrs_kerchunk_tools`; a zlib codec that inflates a chunk in one call is
//! `zarrs_zlib_sized`.
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
//! - One document's cost is bounded by [`Limits`](kerchunk::Limits): its size after
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
//!   it was pinned is [`ReadError::Stale`], never other bytes; pins are made
//!   by `zarrs_kerchunk_tools`' `pin`.
//!
//! # Features
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `http` | yes | `http(s)://` targets and reference files |
//! | `parquet` | no | fsspec's parquet reference layout, read and written (arrow and parquet) |
//! | `aws` | no | `s3://` targets |
//! | `gcp` | no | `gs://` targets |
//! | `azure` | no | `az://`, `abfs://` targets |
//!
//! The default build brings in neither zarrs nor arrow. It compiles two C libraries: aws-lc
//! (rustls' cryptography, which HTTPS needs, through `object_store`'s `http`) and zstd (the
//! compressed documents `kerchunk` reads and writes); without default features, zstd alone.
//!
//! # Compatibility
//!
//! | `zarrs_kerchunk` | `kerchunk` | `zarrs` | `zarrs_storage` | `object_store` |
//! |---|---|---|---|---|
//! | 0.1 | 0.1 | 0.23 | 0.4 | 0.14 |

#![cfg_attr(docsrs, feature(doc_cfg))]

mod error;
mod fetch;
mod open;
mod resolve;
mod sources;
mod store;
mod write;

pub use error::{OpenError, ReadError, ResolveError};
/// The disk cache remote reads may go through ([`ReferenceStoreBuilder::with_cache`]).
pub use object_store_disk_cache::{CacheError, CacheStats, DEFAULT_MAX_BYTES as DEFAULT_CACHE_BYTES, DiskCache};
pub use open::{DEFAULT_READ_AHEAD, ReferenceStoreBuilder};
#[cfg(all(feature = "aws", feature = "http"))]
pub use resolve::S3CredentialsEndpoint;
#[cfg(feature = "http")]
pub use resolve::{EARTHDATA_HOSTS, HttpCredentials, HttpCredentialsError};
pub use resolve::{Pin, Pins, PinsError, StoreRegistry};
#[cfg(feature = "parquet")]
pub use sources::parquet::RecordCacheOptions;
pub use store::{AsyncReferenceStore, MetadataView, ReferenceStore, Target};
#[cfg(feature = "parquet")]
pub use write::{ParquetUpdate, update_parquet, write_parquet, write_parquet_async};
pub use write::{write_json, write_json_async};

/// The reference format: the model, the parsers, the writers' options.
pub use kerchunk;
/// The object stores targets are read from.
pub use object_store;

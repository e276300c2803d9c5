//! Kerchunk reference sets written into [icechunk] repositories as virtual
//! chunks: every Zarr v2 array becomes Zarr v3, every range reference a
//! virtual chunk reference to the same bytes, in one commit.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use kerchunk_icechunk::{ExportOptions, IcechunkLocation, export};
//! use zarrs_kerchunk::AsyncReferenceStore;
//!
//! let references = AsyncReferenceStore::open("combined.json").await?;
//! let location = IcechunkLocation::parse("icechunk://repo").expect("a repository's location");
//! let repository = location.open_or_create().await?;
//! let options = ExportOptions::default().with_message("the 2020 run");
//! let exported = export(&references, &repository, "repo", &options).await?;
//! println!("{} virtual chunks, containers {:?}", exported.virtual_chunks, exported.containers);
//! # Ok(()) }
//! ```
//!
//! What changes on the way (see [`metadata`] for the metadata):
//!
//! | kerchunk | icechunk |
//! |---|---|
//! | `.zgroup`, `.zarray`, `.zattrs` (Zarr v2) | `zarr.json` (Zarr v3), `_ARRAY_DIMENSIONS` as `dimension_names` |
//! | `null` fill value | NaN for floats, `false` for booleans, 0 otherwise (as `VirtualiZarr`) |
//! | codecs `zstd`, `gzip`, `blosc` | v3's codecs of those names |
//! | any other codec `ID` | `numcodecs.ID`, as zarr-python names it |
//! | `[url, offset, length]` | a virtual chunk reference, `url` resolved as the store resolves it |
//! | `[url]` (a whole file) | a virtual chunk reference of the file's length (from its pin, or one request) |
//! | `[url, 0, 0]` (an empty chunk) | an error naming the key: icechunk stores no chunk of no bytes, and a missing chunk would read as the fill value |
//! | inline values | chunks in the repository (icechunk inlines small ones in its manifest) |
//! | pins (`zarrs-kerchunk pin`) | checksums: the ETag, else the last-modified time (whole seconds, rounded up) |
//! | each target's folder, host or bucket | a virtual chunk container in the repository's config |
//!
//! Readers authorise each container when they open the repository
//! (icechunk-python's `authorize_virtual_chunk_access`). Variable-length
//! strings and objects, and structured types, are not written yet: they are
//! an error naming the array.
//!
//! Needs Rust 1.95 (icechunk 2.3's), above the rest of the workspace's 1.91.

mod chunks;
mod containers;
mod error;
mod export;
mod location;
pub mod metadata;

pub use error::{ExportError, MetadataError};
pub use export::{ExportOptions, Exported, export};
pub use location::IcechunkLocation;

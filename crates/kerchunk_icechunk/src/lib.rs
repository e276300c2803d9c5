//! Kerchunk reference sets written into [icechunk] repositories as virtual
//! chunks: every Zarr v2 array becomes Zarr v3 (a set that is Zarr v3 already,
//! files of uneven length combined on rectilinear grids, keeps its metadata),
//! every range reference a virtual chunk reference to the same bytes, in one
//! commit ([`export`]); and
//! a repository's snapshot read back as references ([`import`]): Zarr v3
//! metadata as v2, virtual chunks as range references, stored chunks as
//! inline values or ranges of the repository's own `chunks/` files.
//!
//! ```
//! use kerchunk_icechunk::{ExportOptions, IcechunkLocation, export, import, version_of};
//! use zarrs_kerchunk::AsyncReferenceStore;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
//! # let refs = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/nc4_deflate_shuffle/refs.json");
//! # let folder = tempfile::tempdir()?;
//! # let repo = format!("icechunk://{}", folder.path().display());
//! let references = AsyncReferenceStore::open(refs).await?;
//! let location = IcechunkLocation::parse(&repo).expect("a repository's location");
//! let repository = location.open_or_create().await?;
//! let options = ExportOptions::default().with_message("the 2020 run");
//! let exported = export(&references, &repository, &location.storage, &options).await?;
//! assert_eq!((exported.arrays, exported.virtual_chunks), (5, 45));
//!
//! // And back: the branch's snapshot as references, every key of the original.
//! let version = version_of(&repository, "main", &location.storage).await?;
//! let set = import(&repository, &version, &location.storage, &location.storage_url()?).await?;
//! assert_eq!(set.len(), references.source().in_memory().expect("a JSON set").len());
//! # Ok(()) }
//! ```
//!
//! What changes on the way (see [`kerchunk_v3::array_v3`] for the metadata):
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
//! Big sets: icechunk holds every reference of a session until the commit
//! (a few hundred bytes each), and builds each manifest whole as it
//! commits. An array of more than [`MANIFEST_SPLIT`] chunks is written in
//! manifests of at most that many, along its outer axes
//! ([`ExportOptions::with_manifest_split`]; a repository whose configuration
//! splits manifests is split its way); and
//! [`ExportOptions::with_commit_every`] commits in parts, on a working branch
//! that the branch is then moved to, so that memory is that of a part, not
//! of the set.
//!
//! Readers authorise each container when they open the repository
//! (icechunk-python's `authorize_virtual_chunk_access`). Variable-length
//! strings and objects, and structured types, are not written yet: they are
//! an error naming the array.
//!
//! Repositories are local folders (`icechunk://PATH`), prefixes of S3
//! buckets (`icechunk+s3://bucket/prefix`, feature `aws`), of Google Cloud
//! Storage buckets (`icechunk+gs://bucket/prefix`, feature `gcp`) or of Azure
//! containers (`icechunk+az://container/prefix`, feature `azure`), configured
//! with `object_store`'s keys through [`IcechunkLocation::with_options`]
//! (`aws_region`, `google_service_account`, `azure_storage_account_name`, ...).
//!
//! Needs Rust 1.95 (icechunk 2.3's), above the rest of the workspace's 1.91.

#[cfg(feature = "azure")]
mod azure;
mod chunks;
mod commits;
mod containers;
mod error;
mod export;
#[cfg(feature = "gcp")]
mod gcs;
mod import;
mod location;
mod nodes;
#[cfg(feature = "aws")]
mod s3;
mod splits;

pub use error::{ExportError, ImportError, MetadataError, RepositoryError};
pub use export::{ExportOptions, Exported, MANIFEST_SPLIT, export};
pub use import::{import, version_of};
pub use location::IcechunkLocation;

//! Tools over [`zarrs_kerchunk`] stores: what a reference set points at,
//! without reading its chunks ([`inspect`]: statistics, audits of its
//! targets, pins), and the `zarrs-kerchunk` command line (feature `cli`, on
//! by default: `cargo install zarrs_kerchunk_tools`).
//!
//! ```
//! use zarrs_kerchunk::ReferenceStore;
//! use zarrs_kerchunk_tools::inspect::{AuditOptions, audit, stats};
//!
//! # let location = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/nc4_deflate_shuffle/refs.json");
//! let store = ReferenceStore::open(location)?;
//! let stats = stats(&store)?;
//! assert_eq!(stats.arrays.iter().find(|a| a.path == "temp").unwrap().missing_chunks, Some(0));
//! let audit = audit(&store, &AuditOptions::default())?;
//! assert!(audit.is_ok(), "{audit}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Features
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `cli` | yes | the `zarrs-kerchunk` binary (`info`, `stats`, `cat`, `plot`, `audit`, `pin`, `convert`, `scan`), with every store and the parquet layout, and `zarrs_zlib_sized` with libdeflate to decode |
//! | `write` | with `cli` | [`output`]: references written to a path or URL, JSON or a parquet root by its name |
//! | `scan` | with `cli` | [`make`]: references made from NetCDF and HDF5 files (patterns, many files combined); [`encodings`]: a combined set's packing and fill values audited against each target's own |
//! | `combine` | with `cli` | `make::combine_sets`: reference sets that exist combined, their coordinates decoded by zarrs |
//! | `icechunk` | with `cli` | [`icechunk`]: references written into an icechunk repository as virtual chunks, and a repository opened as references (`kerchunk_icechunk`; icechunk 2.3, Rust 1.95); local files and HTTP |
//! | `icechunk-remote` | with `cli` | `icechunk`'s virtual chunk containers for targets in S3, GCS and Azure |
//!
//! # Compatibility
//!
//! | `zarrs_kerchunk_tools` | `zarrs_kerchunk` | `kerchunk` | `zarrs` |
//! |---|---|---|---|
//! | 0.1 | 0.1 | 0.1 | 0.23 |

#[cfg(feature = "credentials")]
pub mod credentials;
#[cfg(feature = "scan")]
pub mod encodings;
#[cfg(feature = "icechunk")]
pub mod icechunk;
pub mod inspect;
#[cfg(feature = "scan")]
pub mod make;
#[cfg(feature = "write")]
pub mod output;

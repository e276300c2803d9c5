//! What a reference set points at, without reading its chunks: [`stats`]
//! of its references per array and per target, an [`audit`] of its targets
//! (one metadata request each), and [`pin`]s that make later reads of
//! changed targets fail. All work over any store, JSON or parquet (a
//! parquet root's records are walked one at a time), sync or async.
//!
//! ```
//! use zarrs_kerchunk::ReferenceStore;
//! use zarrs_kerchunk::inspect::{AuditOptions, audit, stats};
//!
//! # let location = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/nc4_deflate_shuffle/refs.json");
//! let store = ReferenceStore::open(location)?;
//! let stats = stats(&store)?;
//! assert_eq!(stats.arrays.iter().find(|a| a.path == "temp").unwrap().missing_chunks, Some(0));
//! let audit = audit(&store, &AuditOptions::default())?;
//! assert!(audit.is_ok(), "{audit}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod audit;
mod stats;
mod tally;

pub use audit::{Audit, AuditOptions, AuditProgress, TargetAudit, TargetStatus, audit, audit_async, pin, pin_async};
pub use stats::{ArrayStats, ReferenceCounts, Stats, TargetStats, stats, stats_async};

//! What a reference set points at, without reading its chunks: [`stats`]
//! of its references per array and per target, an [`audit`] of its targets
//! (one metadata request each), and [`pin`]s that make later reads of
//! changed targets fail. All work over any store, JSON or parquet (a
//! parquet root's records are walked one at a time), sync or async.
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

mod audit;
mod stats;
mod tally;

pub use audit::{
    Audit, AuditOptions, AuditProgress, MalformedKey, TargetAudit, TargetStatus, audit, audit_async, pin, pin_async,
};
pub use stats::{ArrayStats, ReferenceCounts, Stats, TargetStats, stats, stats_async};

/// Why [`stats`], [`audit`] or [`pin`] could not finish. A target that is
/// missing, short or changed is not an error: the audit reports it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InspectError {
    /// The references could not be walked.
    #[error("cannot walk the references: {0}")]
    Source(#[from] kerchunk::SourceError),
    /// A metadata document could not be read.
    #[error("{0}")]
    Storage(#[from] zarrs_storage::StorageError),
    /// The I/O runtime failed.
    #[error("{0}")]
    Runtime(#[from] zarrs_kerchunk::ReadError),
}

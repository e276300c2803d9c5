//! Writing reference sets from any [`ReferenceSource`](kerchunk::ReferenceSource),
//! sync or async: kerchunk JSON into a [`Write`](std::io::Write), and
//! fsspec's parquet layout into an object store.
//!
//! The format crate writes a reference or a record file at a time; this
//! module walks sources that must read first (a remote parquet root) on the
//! store's runtime. Sources are walked one reference at a time and outputs
//! written a record at a time, so memory stays bounded by a few records
//! beyond what the source itself holds. The async functions do their
//! blocking work (writing, compressing, encoding parquet) on tokio's
//! blocking pool, never on the executor.

mod to_json;
#[cfg(feature = "parquet")]
mod to_parquet;
#[cfg(feature = "parquet")]
mod update_parquet;

pub use to_json::{write_json, write_json_async};
#[cfg(feature = "parquet")]
pub use to_parquet::{ParquetUpdate, write_parquet, write_parquet_async};
#[cfg(feature = "parquet")]
pub use update_parquet::update_parquet;
